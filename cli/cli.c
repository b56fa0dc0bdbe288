/* The command line without FUSE (cli.h): dispatch, arguments, opening a
 * model file, and the subcommands ls and cat; set is in cli_set.c, tree
 * and stats in cli_tree.c. Everything a subcommand shows or changes goes through the
 * core exactly as the mount's requests do: mfs_view_size/mfs_view_read for
 * bytes, mfs_view_write + mfs_commit for changes. No libfuse here. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "cli_impl.h"
#include "commit.h"
#include "fdio.h"
#include "runtime.h"
#include "view.h"

#define CAT_CHUNK (1u << 20)    /* bytes read and written at a time */
#define MAX_LINKS 40            /* links followed while resolving one path */

/* ---- Error lines -------------------------------------------------------- */

static void vfail(const char *file, const char *path, const char *fmt, va_list ap)
{
	char msg[1024], line[8192];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(line, sizeof(line), "%s%s%s: %s", file, path && *path ? "/" : "",
		 path ? path : "", msg);
	/* One line, as in .modelfs/errors: names and messages may hold control
	 * bytes, which never break the line (fs/log.c does the same). */
	for (char *c = line; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	fprintf(stderr, "modelfs: %s\n", line);
}

int cli_failf(const char *file, const char *path, int code, const char *fmt, ...)
{
	(void)code;
	va_list ap;
	va_start(ap, fmt);
	vfail(file, path, fmt, ap);
	va_end(ap);
	return CLI_ERR;
}

int cli_fail(const char *file, const char *path, const struct mfs_err *err)
{
	/* As the mount's .modelfs/errors: the message, else the errno's text. */
	const char *what = err->msg[0] ? err->msg : strerror(err->code ? err->code : EIO);
	return cli_failf(file, path, err->code, "%s", what);
}

int cli_usage_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "modelfs %s: %s; usage: modelfs %s (modelfs %s --help)\n", cmd->name, msg,
		cmd->synopsis, cmd->name);
	return CLI_USAGE;
}

int cli_finish_output(const char *file, const char *path)
{
	if (fflush(stdout) != 0 || ferror(stdout))
		return cli_failf(file, path, errno, "cannot write the output: %s",
				 strerror(errno ? errno : EIO));
	return CLI_OK;
}

/* ---- Opening a model file ----------------------------------------------- */

int cli_open(struct cli_model *cm, const char *file, bool write)
{
	memset(cm, 0, sizeof(*cm));
	cm->file = file;
	cm->dirfd = -1;
	if (!*file)
		return cli_failf(file, NULL, ENOENT, "%s", strerror(ENOENT));
	/* The mount shows a model as a directory: "x.model/" names the file. */
	size_t n = strlen(file);
	while (n > 1 && file[n - 1] == '/')
		n--;
	char *path = strndup(file, n);
	if (!path)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	cm->real = path;
	struct stat lst;
	if (lstat(path, &lst) < 0)
		return cli_failf(file, NULL, errno, "%s", strerror(errno));
	if (S_ISLNK(lst.st_mode)) {
		/* A link to a model (latest.model -> step-100.model): the file it
		 * names is read, and a commit replaces that file. */
		char *r = realpath(path, NULL);
		if (!r)
			return cli_failf(file, NULL, errno, "%s", strerror(errno));
		free(path);
		cm->real = path = r;
	}
	if (stat(path, &cm->st) < 0)
		return cli_failf(file, NULL, errno, "%s", strerror(errno));
	if (S_ISDIR(cm->st.st_mode))
		return cli_failf(file, NULL, EISDIR,
				 "a directory, not a model file (mount it: modelfs %s MOUNTPOINT)",
				 file);
	if (!S_ISREG(cm->st.st_mode))
		return cli_failf(file, NULL, EINVAL, "not a regular file");
	char *slash = strrchr(path, '/');
	if (!slash) {
		cm->dir = strdup(".");
		cm->base = path;
	} else {
		cm->dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
		cm->base = slash + 1;
	}
	if (!cm->dir)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	/* Commits fsync the directory: a real descriptor for set. */
	cm->dirfd = open(cm->dir, (write ? O_RDONLY : O_PATH) | O_DIRECTORY | O_CLOEXEC);
	if (cm->dirfd < 0)
		return cli_failf(file, NULL, errno, "cannot open its directory: %s", strerror(errno));
	/* As the mount before it parses: a commit cut short by a crash is
	 * rolled back first. A failure is reported; reading goes on (as in the
	 * mount), writing does not. */
	struct mfs_err err = {0};
	int rr = mfs_recover_file(cm->dirfd, cm->base, &err);
	if (rr < 0 || rr == MFS_JOURNAL_LEFT) {
		cli_fail(file, NULL, &err);  /* a journal left alone: told, and read on */
		if (write && rr < 0)
			return CLI_ERR;
		mfs_err_clear(&err);
	}
	/* Not rolled back (no write access, or a commit holds it): the file
	 * may be half patched, and is not read. */
	int ab = mfs_journal_abandoned(cm->dirfd, cm->base, &err);
	if (ab == MFS_JOURNAL_LEFT) {
		mfs_err_clear(&err);  /* told above */
	} else if (ab != 0) {
		if (err.code != EBUSY)
			mfs_error(&err, EIO, "an interrupted commit left a journal: recover the file"
				  " first (a writable mount, or `modelfs` run with write access)");
		return cli_fail(file, NULL, &err);
	}
	int r = mfs_model_open(&cm->m, cm->dirfd, cm->base, NULL, &err);
	if (r == -ENOTSUP)
		return cli_failf(file, NULL, ENOTSUP, "not a model file (no format recognises it)");
	if (r < 0) {
		cm->m = NULL;
		return cli_fail(file, NULL, &err);
	}
	if (mfs_runtime_new(&cm->rt, NULL, &err) < 0)
		return cli_fail(file, NULL, &err);
	mfs_model_set_runtime(cm->m, cm->rt);
	return CLI_OK;
}

int cli_open_node(struct cli_model *cm, const char *file, const char *path, bool write,
		  bool want_file, mfs_id *id)
{
	int ret = cli_open(cm, file, write);
	if (ret != CLI_OK)
		return ret;
	struct mfs_err err = {0};
	*id = cli_resolve(cm->m, path, true, &err);
	if (*id == MFS_NONE)
		return cli_fail(file, path, &err);
	if (want_file && cm->m->nodes[*id].kind != MFS_K_FILE)
		return cli_failf(file, path, EISDIR, "%s", strerror(EISDIR));
	return CLI_OK;
}

void cli_close(struct cli_model *cm)
{
	if (cm->m)
		mfs_model_free(cm->m);
	mfs_runtime_free(cm->rt);
	if (cm->dirfd >= 0)
		close(cm->dirfd);
	free(cm->dir);
	free(cm->real);
	memset(cm, 0, sizeof(*cm));
	cm->dirfd = -1;
}

/* ---- Paths inside a model ------------------------------------------------ */

char *cli_norm_path(const char *path)
{
	size_t n = strlen(path);
	char *out = malloc(n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	while (*path) {
		const char *sl = strchr(path, '/');
		size_t k = sl ? (size_t)(sl - path) : strlen(path);
		if (k && !(k == 1 && path[0] == '.')) {
			if (o)
				out[o++] = '/';
			memcpy(out + o, path, k);
			o += k;
		}
		path += k + (sl ? 1 : 0);
	}
	out[o] = '\0';
	return out;
}

mfs_id cli_resolve(const struct mfs_model *m, const char *path, bool follow_last,
		   struct mfs_err *err)
{
	mfs_id id = MFS_ROOT;
	int links = 0;
	char comp[NAME_MAX + 2];
	while (*path) {
		const char *sl = strchr(path, '/');
		size_t k = sl ? (size_t)(sl - path) : strlen(path);
		const char *rest = path + k + (sl ? 1 : 0);
		if (k > NAME_MAX) {
			mfs_error(err, ENAMETOOLONG, "%s", strerror(ENAMETOOLONG));
			return MFS_NONE;
		}
		memcpy(comp, path, k);
		comp[k] = '\0';
		path = rest;
		if (k == 0 || !strcmp(comp, "."))
			continue;
		if (m->nodes[id].kind != MFS_K_DIR) {
			mfs_error(err, ENOTDIR, "%s", strerror(ENOTDIR));
			return MFS_NONE;
		}
		if (!strcmp(comp, "..")) {
			if (id == MFS_ROOT) {
				mfs_error(err, ENOENT, "outside the model");
				return MFS_NONE;
			}
			id = m->nodes[id].parent;
			continue;
		}
		mfs_id c = mfs_lookup(m, id, comp);
		if (c == MFS_NONE) {
			mfs_error(err, ENOENT, "%s", strerror(ENOENT));
			return MFS_NONE;
		}
		/* A link inside the model (by-name/conv1, a PLearn reference)
		 * leads to its target, as the kernel follows it in the mount. */
		while (m->nodes[c].kind == MFS_K_LINK && (*path || follow_last)) {
			if (++links > MAX_LINKS) {
				mfs_error(err, ELOOP, "%s", strerror(ELOOP));
				return MFS_NONE;
			}
			mfs_id t = m->nodes[c].u.link;
			if (t >= m->nnodes) {
				mfs_error(err, ENOENT, "a link to nothing");
				return MFS_NONE;
			}
			c = t;
		}
		id = c;
	}
	return id;
}

/* ---- Arguments ------------------------------------------------------------ */

/* "-1", "-0.5", "-inf": a VALUE, not options. */
static bool is_number(const char *s)
{
	if (s[1] == '.' || (s[1] >= '0' && s[1] <= '9'))
		return true;
	char *end;
	strtod(s, &end);
	return end != s && *end == '\0';
}

static int parse_args(const struct cli_cmd *cmd, int argc, char *argv[], struct cli_args *a)
{
	memset(a, 0, sizeof(*a));
	bool opts_done = false;
	for (int i = 2; i < argc; i++) {
		const char *s = argv[i];
		if (opts_done || s[0] != '-' || s[1] == '\0' || is_number(s)) {
			if (a->npos == CLI_MAX_POS)
				return cli_usage_error(cmd, "too many arguments");
			a->pos[a->npos++] = s;
			continue;
		}
		if (!strcmp(s, "--")) {
			opts_done = true;
			continue;
		}
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');
			size_t n = eq ? (size_t)(eq - name) : strlen(name);
			if (n == 4 && !strncmp(name, "help", 4) && !eq) {
				a->help = true;
				continue;
			}
			const struct cli_opt *o = cmd->opts;
			while (o && o->key && !(o->long_name && strlen(o->long_name) == n &&
						!strncmp(o->long_name, name, n)))
				o++;
			if (!o || !o->key)
				return cli_usage_error(cmd, "unknown option '%.*s'", (int)(n + 2), s);
			const char *v = NULL;
			if (o->has_arg) {
				v = eq ? eq + 1 : i + 1 < argc ? argv[++i] : NULL;
				if (!v)
					return cli_usage_error(cmd, "option '--%s' needs a value",
							       o->long_name);
			} else if (eq) {
				return cli_usage_error(cmd, "option '--%s' takes no value", o->long_name);
			}
			a->flag[(unsigned char)o->key] = true;
			a->arg[(unsigned char)o->key] = v;
			continue;
		}
		for (const char *c = s + 1; *c; c++) {
			if (*c == 'h') {
				a->help = true;
				continue;
			}
			const struct cli_opt *o = cmd->opts;
			while (o && o->key && !(o->is_short && o->key == *c))
				o++;
			if (!o || !o->key)
				return cli_usage_error(cmd, "unknown option '-%c'", *c);
			a->flag[(unsigned char)o->key] = true;
			if (o->has_arg) {
				const char *v = c[1] ? c + 1 : i + 1 < argc ? argv[++i] : NULL;
				if (!v)
					return cli_usage_error(cmd, "option '-%c' needs a value", *c);
				a->arg[(unsigned char)o->key] = v;
				break;
			}
		}
	}
	return CLI_OK;
}

/* ---- ls ------------------------------------------------------------------- */

/* The permission bits the mount shows (fs/attr.c): from the source file's;
 * read-only files lose the write bits; readable directories are searchable. */
static void mode_string(const struct mfs_node *n, const struct stat *src, char out[11])
{
	mode_t m;
	if (n->kind == MFS_K_DIR) {
		m = src->st_mode & 0777;
		m |= (m & 0444) >> 2;
	} else if (n->kind == MFS_K_LINK) {
		m = 0777;
	} else {
		m = src->st_mode & 0444;
		if (n->flags & MFS_NF_WRITABLE)
			m |= src->st_mode & 0222;
	}
	out[0] = n->kind == MFS_K_DIR ? 'd' : n->kind == MFS_K_LINK ? 'l' : '-';
	static const char rwx[] = "rwx";
	for (int i = 0; i < 9; i++)
		out[1 + i] = m & (0400u >> i) ? rwx[i % 3] : '-';
	out[10] = '\0';
}

/* What stat shows as the size in the mount: entries of a directory, the
 * target's length for a link, the view's exact size. */
static int node_size(struct mfs_model *m, mfs_id id, uint64_t *size, struct mfs_err *err)
{
	const struct mfs_node *n = &m->nodes[id];
	if (n->kind == MFS_K_DIR) {
		*size = n->nchild;
	} else if (n->kind == MFS_K_LINK) {
		char t[4096];
		int l = mfs_link_target(m, id, t, sizeof(t));
		*size = l > 0 ? (uint64_t)l : 0;
	} else {
		return mfs_view_size(m, id, size, err);
	}
	return 0;
}

static void join(char *buf, size_t size, const char *dir, const char *name)
{
	snprintf(buf, size, "%s%s%s", dir, *dir ? "/" : "", name);
}

static int cmd_ls(const struct cli_cmd *cmd, const struct cli_args *a)
{
	(void)cmd;
	const char *file = a->pos[0];
	char *path = cli_norm_path(a->npos > 1 ? a->pos[1] : "");
	if (!path)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	struct cli_model cm;
	mfs_id id;
	int ret = cli_open_node(&cm, file, path, false, false, &id);
	if (ret != CLI_OK)
		goto out;
	struct mfs_model *m = cm.m;
	struct mfs_err err = {0};
	/* A directory lists its entries; a file names itself. */
	bool is_dir = m->nodes[id].kind == MFS_K_DIR;
	mfs_id first = is_dir ? m->nodes[id].first : id;
	bool one = !is_dir;
	bool lng = a->flag['l'], classify = a->flag['F'];
	uint64_t wmax = 0;
	char sub[8192];
	if (lng) {
		/* Sizes first, for the width of their column (a text view's size
		 * is learnt once, then kept by the model). */
		for (mfs_id c = first; c != MFS_NONE; c = one ? MFS_NONE : m->nodes[c].next) {
			uint64_t sz = 0;
			if (node_size(m, c, &sz, &err) < 0) {
				if (is_dir)
					join(sub, sizeof(sub), path, m->nodes[c].name);
				else
					snprintf(sub, sizeof(sub), "%s", path);
				ret = cli_fail(file, sub, &err);
				goto out;
			}
			if (sz > wmax)
				wmax = sz;
		}
	}
	int width = snprintf(NULL, 0, "%llu", (unsigned long long)wmax);
	for (mfs_id c = first; c != MFS_NONE; c = one ? MFS_NONE : m->nodes[c].next) {
		const struct mfs_node *n = &m->nodes[c];
		const char *name = n->name;
		if (!is_dir) {  /* as typed (it may be a link's name) */
			const char *sl = strrchr(path, '/');
			name = sl ? sl + 1 : path;
		}
		if (lng) {
			char mode[11];
			uint64_t sz = 0;
			mode_string(n, &cm.st, mode);
			node_size(m, c, &sz, &err);
			printf("%s %*llu %s", mode, width, (unsigned long long)sz, name);
			if (n->kind == MFS_K_LINK) {
				char t[4096];
				if (mfs_link_target(m, c, t, sizeof(t)) > 0)
					printf(" -> %s", t);
			}
		} else {
			fputs(name, stdout);
		}
		if (classify && n->kind == MFS_K_DIR)
			putchar('/');
		else if (classify && n->kind == MFS_K_LINK && !lng)
			putchar('@');
		putchar('\n');
	}
	ret = cli_finish_output(file, path);
out:
	cli_close(&cm);
	free(path);
	return ret;
}

/* ---- cat ------------------------------------------------------------------ */

/* Source bytes [off, off + len) to stdout: by sendfile where it works,
 * else through buf. Returns 0 or -errno (with err set). */
static int copy_source(const struct mfs_model *m, uint64_t off, uint64_t len, char *buf,
		       struct mfs_err *err)
{
	bool use_sendfile = true;
	while (len) {
		size_t k = len > CAT_CHUNK ? CAT_CHUNK : (size_t)len;
		ssize_t n;
		if (use_sendfile) {
			off_t o = (off_t)off;
			n = sendfile(STDOUT_FILENO, m->fd, &o, k);
			if (n < 0 && (errno == EINVAL || errno == ENOSYS || errno == EOVERFLOW)) {
				use_sendfile = false;  /* stdout cannot take it (O_APPEND, a tty...) */
				continue;
			}
		} else {
			n = pread(m->fd, buf, k, (off_t)off);
			if (n > 0) {
				int w = mfs_write_all(STDOUT_FILENO, buf, (size_t)n, MFS_AT_POS);
				if (w < 0)
					return mfs_error(err, -w, "cannot write the output: %s",
							 strerror(-w));
			}
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return mfs_error(err, errno, "%s", strerror(errno));
		}
		if (n == 0)
			return mfs_error(err, EIO, "the file became shorter while it was read");
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int cmd_cat(const struct cli_cmd *cmd, const struct cli_args *a)
{
	(void)cmd;
	const char *file = a->pos[0];
	char *path = cli_norm_path(a->pos[1]);
	if (!path)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	struct cli_model cm;
	char *buf = NULL;
	struct mfs_rcache *rc = NULL;
	mfs_id id;
	int ret = cli_open_node(&cm, file, path, false, true, &id);
	if (ret != CLI_OK)
		goto out;
	struct mfs_model *m = cm.m;
	struct mfs_err err = {0};
	buf = malloc(CAT_CHUNK);
	rc = mfs_rcache_new();
	if (!buf || !rc) {
		ret = cli_failf(file, path, ENOMEM, "out of memory");
		goto out;
	}
	/* Raw views (data, data.npy, raw fields) are ranges of the source once
	 * their header is built, which sizing them does (cheap for them). */
	uint8_t v = m->nodes[id].view;
	uint64_t size;
	if ((v == MFS_V_DATA || v == MFS_V_NPY || v == MFS_V_RAW) &&
	    mfs_view_size(m, id, &size, &err) < 0) {
		ret = cli_fail(file, path, &err);
		goto out;
	}
	uint64_t off = 0;
	for (;;) {
		struct mfs_vseg seg;
		if (m->fd >= 0 && mfs_view_segments(m, id, off, CAT_CHUNK, &seg) == 1) {
			if (!seg.mem_len && !seg.src_len)
				break;
			int w = mfs_write_all(STDOUT_FILENO, seg.mem, (size_t)seg.mem_len, MFS_AT_POS);
			if (w < 0) {
				ret = cli_failf(file, path, -w, "cannot write the output: %s",
						strerror(-w));
				goto out;
			}
			if (copy_source(m, seg.src_off, seg.src_len, buf, &err) < 0) {
				ret = cli_fail(file, path, &err);
				goto out;
			}
			off += seg.mem_len + seg.src_len;
			continue;
		}
		ssize_t n = mfs_view_read(m, id, off, CAT_CHUNK, buf, rc, &err);
		if (n < 0) {
			ret = cli_fail(file, path, &err);
			goto out;
		}
		if (n == 0)
			break;
		int w = mfs_write_all(STDOUT_FILENO, buf, (size_t)n, MFS_AT_POS);
		if (w < 0) {
			ret = cli_failf(file, path, -w, "cannot write the output: %s", strerror(-w));
			goto out;
		}
		off += (uint64_t)n;
	}
	ret = CLI_OK;
out:
	mfs_rcache_free(rc);
	free(buf);
	cli_close(&cm);
	free(path);
	return ret;
}

/* ---- The table of subcommands --------------------------------------------- */

static const char common_help[] =
	"FILE is one model file (a symbolic link to it is followed). PATH is a path\n"
	"inside it as a mount shows it under FILE (no PATH, \"\" or \".\": the model\n"
	"directory); links inside the model (TenniS by-name/, PLearn references) are\n"
	"followed. Options may also follow the operands; -- ends them, and a number\n"
	"(-1, -inf) is an operand. Nothing needs FUSE.\n"
	"\n"
	"Exit status: 0 success; 1 an error: FILE does not parse, PATH does not exist,\n"
	"a refused write, an I/O error, reported as one line on stderr,\n"
	"  modelfs: FILE/PATH: message\n"
	"(the message a mount lists in .modelfs/errors); 2 a usage error.\n";

static const struct cli_opt ls_opts[] = {
	{'l', true, NULL, false},
	{'F', true, NULL, false},
	{0, false, NULL, false},
};
static const struct cli_opt tree_opts[] = {
	{'a', true, NULL, false},
	{'L', true, NULL, true},
	{0, false, NULL, false},
};
static const struct cli_opt set_opts[] = {
	{'I', false, "no-inplace", false},
	{0, false, NULL, false},
};

static const struct cli_cmd cmds[] = {
	{"ls", "ls [-l] [-F] FILE [PATH]", "list a directory inside FILE",
	 "Lists the entries of directory PATH, one per line, in the mount's order and\n"
	 "with its names (escaped as the mount escapes them). A PATH that is a file\n"
	 "names itself.\n"
	 "  -l   long: mode, size and name (as stat shows them in the mount; links\n"
	 "       as 'name -> target'); the exact size of a large values.txt costs\n"
	 "       one pass over its values\n"
	 "  -F   append / to directories and @ to links\n",
	 ls_opts, 1, 2, cmd_ls},
	{"cat", "cat FILE PATH", "write a view's bytes to stdout",
	 "Writes the content of file PATH (shape, dtype, values.txt, data, data.npy,\n"
	 "matrix.mtx, frame.csv, a text field...) to stdout: exactly the bytes the\n"
	 "mount serves, streamed in chunks.\n",
	 NULL, 2, 2, cmd_cat},
	{"tree", "tree [-a] [-L DEPTH] FILE [PATH]", "the tree, with shapes and dtypes",
	 "Prints the tree under PATH for people: two spaces per level, directories\n"
	 "with a trailing /, links as 'name -> target'; a tensor directory shows\n"
	 "its shape ([2,3]; [] for a scalar) and dtype in aligned columns (sparse\n"
	 "ones their stored count, frames their rows and columns) and hides its\n"
	 "views; a one-value text file shows its value (first line, cut at 40\n"
	 "characters), a raw field its size. Scripts should use ls and cat.\n"
	 "  -a        show the tensor views too\n"
	 "  -L DEPTH  descend at most DEPTH levels below PATH\n",
	 tree_opts, 1, 2, cli_tree},
	{"set", "set [--no-inplace] FILE PATH [VALUE]",
	 "commit new content (stdin or VALUE)",
	 "Replaces the content of file PATH with stdin (or with VALUE and a newline)\n"
	 "and commits it to FILE as a mount commits a closed file: the same checks\n"
	 "(count, type, range: 1e39 into float32 is refused) and the same crash-safe\n"
	 "commit (in place under a rollback journal, or a new file renamed over\n"
	 "FILE). Content that parses to the same values changes nothing on disk. A\n"
	 "refused change leaves FILE byte-identical and exits 1.\n"
	 "  --no-inplace  rewrite the whole file (as -o no_inplace)\n",
	 set_opts, 2, 3, cli_set},
	{"stats", "stats FILE PATH", "count, NaNs, min, max, mean, std",
	 "Summarises the elements of a tensor (PATH: a tensor directory or one of\n"
	 "its views) in one streaming pass, one 'key value' line each: shape,\n"
	 "dtype, count, nan, inf, min, max, mean, std (and stored, for sparse\n"
	 "tensors, which count over their dense form). NaNs are counted and left\n"
	 "out (as numpy.nanmin, nanmax, nanmean, nanstd; std with ddof 0);\n"
	 "infinities are included. Integer min and max are exact; float min and max\n"
	 "are in the dtype's shortest form; mean and std are doubles. bool counts\n"
	 "as 0/1. Complex tensors: the statistics of the magnitude |z| (a line 'of\n"
	 "|z|' says so). Strings and opaque types are refused. PATH a frame (or\n"
	 "its frame.csv): one table row per column.\n",
	 NULL, 2, 2, cli_stats},
};
#define NCMDS (sizeof(cmds) / sizeof(cmds[0]))

bool cli_is_command(const char *arg)
{
	for (size_t i = 0; i < NCMDS; i++)
		if (!strcmp(arg, cmds[i].name))
			return true;
	return false;
}

void cli_usage(FILE *out)
{
	fprintf(out, "commands on one model FILE, without FUSE: modelfs COMMAND ... (and --help):\n");
	for (size_t i = 0; i < NCMDS; i++)
		fprintf(out, "    %-37s %s\n", cmds[i].synopsis, cmds[i].summary);
	fprintf(out,
		"A first argument that is exactly a command's name selects it (to mount a\n"
		"directory named ls, write ./ls). Exit status: 0 success, 1 an error (one line\n"
		"on stderr: modelfs: FILE/PATH: message), 2 a usage error.\n");
}

int cli_main(int argc, char *argv[])
{
	const struct cli_cmd *cmd = NULL;
	for (size_t i = 0; i < NCMDS; i++)
		if (argc > 1 && !strcmp(argv[1], cmds[i].name))
			cmd = &cmds[i];
	if (!cmd) {
		fprintf(stderr, "modelfs: unknown command\n");
		return CLI_USAGE;
	}
	struct cli_args a;
	int r = parse_args(cmd, argc, argv, &a);
	if (r != CLI_OK)
		return r;
	if (a.help) {
		printf("usage: modelfs %s\n\n%s\n%s", cmd->synopsis, cmd->help, common_help);
		return cli_finish_output("modelfs", NULL);
	}
	if (a.npos < cmd->min_pos)
		return cli_usage_error(cmd, a.npos ? "missing PATH" : "missing FILE");
	if (a.npos > cmd->max_pos)
		return cli_usage_error(cmd, "too many arguments");
	if (cmd->opts == tree_opts && a.flag['L']) {
		char *end;
		errno = 0;
		long d = strtol(a.arg['L'], &end, 10);
		if (errno || end == a.arg['L'] || *end || d < 0)
			return cli_usage_error(cmd, "bad DEPTH '%s'", a.arg['L']);
	}
	return cmd->run(cmd, &a);
}
