/* Attributes and entry replies of every inode kind (attr.c). */
#ifndef MFS_ATTR_H
#define MFS_ATTR_H

#include "fs.h"

/* stat of inode i, and how long the kernel may keep it. */
int attr_of(struct inode *i, struct stat *st, double *timeout);
/* Whether i's size is cheap to know (no large text view to render). */
bool attr_cheap(struct inode *i);
/* The entry reply for i (attributes given later for costly sizes). */
int entry_of(struct inode *i, struct fuse_entry_param *e);

#endif
