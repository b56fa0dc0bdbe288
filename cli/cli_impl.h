/* Shared parts of the subcommands (cli.c, cli_set.c, cli_tree.c): arguments, opening
 * a model file, resolving a path inside it, and the error lines. */
#ifndef MFS_CLI_IMPL_H
#define MFS_CLI_IMPL_H

#include <stdbool.h>
#include <sys/stat.h>

#include "codec.h"
#include "model.h"

/* Exit statuses */
#define CLI_OK 0
#define CLI_ERR 1
#define CLI_USAGE 2

/* ---- Arguments ----------------------------------------------------------
 * Options may come before, between or after the operands; `--` ends them
 * (for a PATH that starts with '-'). An argument that is a number ("-1",
 * "-0.5", "-inf") is an operand, not options. */
struct cli_opt {
	char key;               /* index in cli_args.flag/arg; 0 ends a table */
	bool is_short;          /* accepted as -KEY */
	const char *long_name;  /* accepted as --LONG (NULL: none) */
	bool has_arg;
};

#define CLI_MAX_POS 8
struct cli_args {
	const char *pos[CLI_MAX_POS];  /* operands */
	int npos;
	bool help;
	bool flag[128];                /* options given, by key */
	const char *arg[128];          /* their arguments, by key */
};

struct cli_cmd {
	const char *name;
	const char *synopsis;          /* after "modelfs " */
	const char *summary;           /* one line, for `modelfs --help` */
	const char *help;              /* the rest of `modelfs NAME --help` */
	const struct cli_opt *opts;    /* terminated by a zero entry */
	int min_pos, max_pos;
	int (*run)(const struct cli_cmd *cmd, const struct cli_args *a);
};

/* ---- A model file ------------------------------------------------------- */
struct cli_model {
	const char *file;     /* as given (error lines use it) */
	char *real;           /* the file it names, when it is a symbolic link */
	char *dir;            /* its directory */
	const char *base;     /* its name in dir */
	int dirfd;
	struct stat st;       /* the source (modes for ls -l) */
	struct mfs_model *m;
	struct mfs_runtime *rt;  /* m's workers and kept text */
};

/* Open FILE: follow a symbolic link, roll back an interrupted commit (as the
 * mount does before parsing), parse. write: the directory opened for
 * commits, the file must be writable. Returns 0, or CLI_ERR after printing
 * the error line. */
int cli_open(struct cli_model *cm, const char *file, bool write);
void cli_close(struct cli_model *cm);
/* cli_open, then resolve path in the model (following links) into *id;
 * want_file: it must be a file. Failures are reported (CLI_ERR). */
int cli_open_node(struct cli_model *cm, const char *file, const char *path, bool write,
		  bool want_file, mfs_id *id);

/* PATH as shown in error lines: components joined by '/', without empty
 * and "." components; "" for the model directory. Caller frees. */
char *cli_norm_path(const char *path);
/* Resolve a normalized path in the model, following links (the last
 * component too when follow_last). MFS_NONE with err set when absent. */
mfs_id cli_resolve(const struct mfs_model *m, const char *path, bool follow_last,
		   struct mfs_err *err);

/* "modelfs: FILE/PATH: message" on stderr (message: err's, else strerror);
 * returns CLI_ERR. path may be NULL or "". */
int cli_fail(const char *file, const char *path, const struct mfs_err *err);
int cli_failf(const char *file, const char *path, int code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* "modelfs NAME: message; usage: modelfs SYNOPSIS" on stderr; returns
 * CLI_USAGE. */
int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Flush stdout; an output error is reported as FILE/PATH's. */
int cli_finish_output(const char *file, const char *path);

/* cli_set.c */
int cli_set(const struct cli_cmd *cmd, const struct cli_args *a);
/* cli_tree.c */
int cli_tree(const struct cli_cmd *cmd, const struct cli_args *a);
int cli_stats(const struct cli_cmd *cmd, const struct cli_args *a);

#endif
