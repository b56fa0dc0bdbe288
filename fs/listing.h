/* A directory's listing snapshot: its entries, shared by the readers of
 * the directory (counted) and kept from the first read of a pass to its
 * end (ops_list.c builds and serves it). Held by the directory's inode
 * (d->snap) and dropped when the directory changes through us. */
#ifndef MFS_FS_LISTING_H
#define MFS_FS_LISTING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "fs.h"

struct dent {
	const char *name;     /* into the listed model, or into names */
	mfs_id id;            /* the model node; MFS_NONE for names of our own */
	unsigned char type;   /* DT_* */
};

struct listing {
	struct dent *v;
	size_t n, cap;
	struct mfs_buf names; /* names of our own (source entries, scratch files) */
	struct mref *r;       /* model directories: the generation listed */
	uint64_t gen;
	atomic_int refs;
};

#endif
