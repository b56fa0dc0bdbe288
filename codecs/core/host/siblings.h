/* The names of a source's directory, read in one pass and hashed, so that a
 * codec asking about many files beside its source (an index of 200,000
 * shards) costs one listing, not a system call per name. */
#ifndef MFS_SIBLINGS_H
#define MFS_SIBLINGS_H

#include <stddef.h>
#include <stdint.h>

struct mfs_siblings;

/* The entries of the directory dirfd (kept open by the caller): 0, or
 * -errno (ENOMEM also when they would take more than max bytes). *bytes:
 * what the listing holds. */
int mfs_siblings_read(struct mfs_siblings **out, int dirfd, size_t max, size_t *bytes);
/* The d_type (DT_REG, DT_LNK, ..., DT_UNKNOWN where the file system does
 * not say) of name in the listing, or -1 when it is not there. */
int mfs_siblings_type(const struct mfs_siblings *s, const char *name);
void mfs_siblings_free(struct mfs_siblings *s);

#endif
