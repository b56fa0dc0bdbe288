/* Attributes and entry replies of every inode kind (attr.c). */
#ifndef MFS_ATTR_H
#define MFS_ATTR_H

#include "fs.h"

/* stat of inode i, and how long the kernel may keep it. */
int attr_of(struct inode *i, struct stat *st, double *timeout);
/* The entry reply for i (attributes given later for costly sizes). */
int entry_of(struct inode *i, struct fuse_entry_param *e);

struct mref;
/* stat of the model node id of generation r shown by inode i; src: the
 * source file's stat (mode and owner follow it). */
int attr_node(struct inode *i, struct mref *r, mfs_id id, const struct stat *src,
	      struct stat *st);
/* The entry reply for that node (as entry_of, without looking it up). */
int entry_node(struct inode *i, struct mref *r, mfs_id id, const struct stat *src,
	       struct fuse_entry_param *e);
/* stat of a SOURCE entry (I_SDIR, I_SFILE, I_SLINK) from the source's own. */
void attr_source(struct inode *i, const struct stat *in, struct stat *st);

#endif
