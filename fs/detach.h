/* Leaving the foreground once mounted, in the caller's session.
 *
 * libfuse's fuse_daemonize starts a session of its own (setsid). With the
 * scheduler's autogroups (Linux's default for tasks outside any cgroup but
 * the root one), each session is one group that the CPU is shared between:
 * a reader and the daemon serving it then sit in two groups, and every
 * request's wake-up of the daemon waits for its group's turn on a busy
 * machine. The reader and the daemon it waits for belong together: a
 * detached modelfs stays in the session it was started from (and so in its
 * autogroup), in a process group of its own, out of the terminal's
 * foreground group (job control and the terminal's signals are not for
 * it), standard input and output /dev/null, the working directory /. */
#ifndef MFS_DETACH_H
#define MFS_DETACH_H

#include <stdbool.h>

/* foreground: only the working directory changes. Else returns in a child
 * process once its parent has exited with status 0. 0, or -1 (the message
 * printed) when it cannot. */
int detach(bool foreground);

#endif
