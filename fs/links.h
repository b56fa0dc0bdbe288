/* Symbolic links of SOURCE resolved beneath it (links.c): a link whose
 * target is a model file is shown as that model's directory (docs/layout.md
 * "Links and model stores"); the daemon never leaves SOURCE to find out. */
#ifndef MFS_LINKS_H
#define MFS_LINKS_H

#include <stdbool.h>
#include <sys/stat.h>

struct inode;

/* What link name of SOURCE directory dir leads to, resolved beneath
 * SOURCE (openat2 RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS, and
 * RESOLVE_NO_XDEV when the mount point lies inside SOURCE; a walk one
 * component at a time where openat2 is missing). An O_PATH descriptor, or
 * -EXDEV (the target leaves SOURCE: absolute, or ".." above it), -ENOENT
 * (it dangles), -ELOOP (a cycle, or more than 40 links), -errno. */
int link_resolve(struct inode *dir, const char *name);
/* The source a model named name in dir reads: the entry itself, or the
 * regular file its link leads to beneath SOURCE. Fills st (the file's
 * stat) and *link (name is a link); 0, or -errno (-EINVAL: a link to
 * anything but a regular file). */
int link_source_stat(struct inode *dir, const char *name, struct stat *st, bool *link);
/* An mfs_opener's open (codec.h) for models of the SOURCE directory ctx
 * (an I_SDIR inode whose descriptor is dirfd): name opened for reading,
 * its link followed beneath SOURCE. */
int link_source_open(void *ctx, int dirfd, const char *name);
/* Tests only (-o no_openat2): resolve by the walk, as without openat2. */
void link_walk_only(bool on);

#endif
