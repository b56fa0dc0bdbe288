/* Writes to a view that are not committed yet, shared by every handle open
 * on that view (shells open, duplicate and close descriptors around one
 * write; `truncate` and a later write are separate opens). */
#ifndef MFS_PENDING_H
#define MFS_PENDING_H

#include "fs.h"
#include "model_fs.h"
#include "wbuf.h"

struct pending {
	struct wbuf *buf;
	struct mref *base;        /* generation whose view content lies under the writes */
	mfs_id node;              /* the view in that generation */
	struct mfs_rcache *rc;    /* reading the base */
	bool dirty;               /* bytes written since the last commit */
	bool truncated;           /* truncated (O_TRUNC, ftruncate) since then */
	int nopen;                /* write handles open on it */
	struct mfs_check check;   /* what was written, checked so far (view.h) */
	uint64_t fail_epoch;      /* bumped when a change is refused */
	int fail_err;             /* ... with this errno */
};

/* An open file of the mount. */
struct fh {
	struct mref *ref;         /* I_VNODE: generation it was opened in */
	mfs_id node;
	struct mfs_rcache *rc;
	bool writer;
	bool wrote;               /* I_SFILE: written (it may have become a model) */
	uint64_t epoch;           /* pending fail_epoch when opened */
	int failed;               /* a refused change this handle saw (errno) */
	int fd;                   /* I_SFILE: the source file */
	char *snap;               /* I_ERRORS: content when opened */
	size_t snap_len;
	void *dir;                /* directories: listing state */
};

/* The pending writes of view inode vi (created over generation r when
 * there are none). Caller holds vi->lock. */
struct pending *pending_get(struct inode *vi, struct mref *r, mfs_id node, int *err);
void pending_free(struct pending *p);
/* After a write at off: check what is complete so far, so that a bad value
 * fails the write itself. On failure the change is refused as a commit
 * would be. Caller holds vi->lock. Returns 0 or -errno. */
int pending_check(struct inode *vi, struct fh *fh, uint64_t off);
/* Commit what is pending (flush, fsync, release, rename over a view).
 * Caller holds vi->lock. Returns 0 or -errno (logged). */
int pending_commit(struct inode *vi, struct fh *fh);

#endif
