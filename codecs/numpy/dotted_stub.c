/* TEMPORARY stand-in for codecs/core/dotted.c (branch st): flat names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dotted.h"

struct mfs_dotted {
	struct mfs_model *m;
	mfs_id root;
	struct mfs_buf idx;
};

struct mfs_dotted *mfs_dotted_new(struct mfs_model *m, mfs_id root, const char *seps)
{
	(void)seps;
	struct mfs_dotted *d = calloc(1, sizeof(*d));
	if (d) {
		d->m = m;
		d->root = root;
	}
	return d;
}

mfs_id mfs_dotted_add(struct mfs_dotted *d, const char *name, size_t len,
		      const struct mfs_tensor *t, uint64_t off, uint64_t bytes)
{
	(void)off; (void)bytes;
	return mfs_add_tensor(d->m, d->root, name, len, t);
}

mfs_id mfs_dotted_add_link(struct mfs_dotted *d, const char *name, size_t len,
			   const char *sibling)
{
	(void)d; (void)name; (void)len; (void)sibling;
	return MFS_NONE;
}

void mfs_dotted_finish(struct mfs_dotted *d, mfs_id dir)
{
	(void)dir;
	free(d);
}
