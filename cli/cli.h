/* The command line without FUSE: `modelfs ls|cat|tree|set|stats FILE ...`
 * reads and edits one model file through the same views, validation and
 * commit engine as the mount. No libfuse here. */
#ifndef MFS_CLI_H
#define MFS_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* Whether a first argument names a subcommand (exactly: "ls", not "./ls"). */
bool cli_is_command(const char *arg);
/* Run the subcommand argv[1]; the exit status: 0 success, 1 an error (one
 * line on stderr), 2 a usage error. */
int cli_main(int argc, char *argv[]);
/* The subcommands' lines for `modelfs --help`. */
void cli_usage(FILE *out);

#endif
