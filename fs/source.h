/* Entries of SOURCE, reached without ever following a symbolic link: every
 * name is one component under a directory descriptor, opened with
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS (O_NOFOLLOW where openat2 is
 * missing), and attributes are changed on the opened entry, not by name. */
#ifndef MFS_SOURCE_H
#define MFS_SOURCE_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Open name under dfd; a link as last component fails with ELOOP, unless
 * flags has O_PATH (then the link itself is opened). O_NOFOLLOW and
 * O_CLOEXEC are added. name may be a path beneath dfd: with openat2 none
 * of its components may be a link (without, only the last is checked).
 * A descriptor, or -errno. */
int src_open(int dfd, const char *name, int flags, mode_t mode);
/* Reopen an O_PATH descriptor of a regular file for I/O (flags: O_WRONLY,
 * ...), through its /proc/self/fd entry, which names the opened file
 * itself. A descriptor, or -errno. */
int src_reopen(int fd, int flags);
/* chmod of what an O_PATH descriptor refers to (never a link). 0 or -errno. */
int src_fchmod(int fd, mode_t mode);
/* chown and utimens of what an O_PATH descriptor refers to, a link
 * included (the link itself). 0 or -errno. */
int src_fchown(int fd, uid_t uid, gid_t gid);
int src_futimens(int fd, const struct timespec ts[2]);

/* The mount point, when it lies inside SOURCE: the directory it covers is
 * left out of SOURCE's listings and lookups, and of every walk, because
 * entering it would reach this mount again (requests the daemon would
 * wait on itself to serve). Call before mounting, with both paths
 * resolved; 0, or -errno when the mount point cannot be examined. */
int src_hide_mountpoint(const char *source, const char *mountpoint);
/* Whether entry name of directory dfd is the mount point left out. */
bool src_hidden(int dfd, const char *name);
/* Whether the mount point lies inside SOURCE (src_hide_mountpoint). */
bool src_mount_inside(void);

#endif
