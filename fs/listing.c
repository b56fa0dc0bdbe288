/* Listing snapshots released: the last reader's reference frees one, and
 * a directory that changed through us drops its own (listing.h). */
#include <stdlib.h>

#include "listing.h"
#include "model_fs.h"

void listing_put(struct listing *l)
{
	if (!l || atomic_fetch_sub(&l->refs, 1) != 1)
		return;
	mref_put(l->r);
	mfs_buf_free(&l->names);
	free(l->v);
	free(l);
}

void dir_changed(struct inode *dir)
{
	pthread_mutex_lock(&dir->lock);
	struct listing *old = dir->snap;
	dir->snap = NULL;
	pthread_mutex_unlock(&dir->lock);
	listing_put(old);
}
