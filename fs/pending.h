/* Writes to views not committed yet. Every open file writes into a buffer
 * of its own (concurrent writers do not mix); a buffer that a closed file
 * left truncated and uncommitted (`truncate -s 0 f`, then `echo x >> f`) is
 * kept on the view for the next writer. */
#ifndef MFS_PENDING_H
#define MFS_PENDING_H

#include <stdatomic.h>

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
	struct mfs_check check;   /* what was written, checked and parsed so far (view.h) */
	uint64_t told;            /* size beyond which the kernel was told to drop attributes */
};

/* An open file of the mount (handle.h holds them by number). */
struct fh {
	atomic_int refs;
	struct mref *ref;         /* views: generation it was opened in */
	struct fsmodel *counted;  /* views: the model whose open_views counts it */
	struct inode *held;       /* views: their inode, held so that the model
				   * (counted, its read lock) outlives the file */
	mfs_id node;
	struct mfs_rcache *rc;
	pthread_mutex_t wlock;    /* views: guards w's content, failed, parked, and
				   * serializes this file's writes and commits (not
				   * the inode's lock: readers never wait on a commit) */
	struct pending *w;        /* views opened for writing: their writes */
	bool wrote;               /* I_SFILE: written (it may have become a model) */
	bool append;              /* opened O_APPEND: writes go at the end of its writes */
	bool cached;              /* raw views: counted in held->cache_users */
	bool parked;              /* its truncation was kept on the view at a flush */
	int failed;               /* a refused change made on this file (errno) */
	int fd;                   /* I_SFILE: the source file */
	char *snap;               /* I_ERRORS: content when opened */
	size_t snap_len;
	uint64_t size;            /* raw views: their size (0: not known); reads to it mark the view read through (warm.h) */
};

/* Writes over the current content of view inode vi: the buffer vi->pend
 * left by a closed file if there is one (taken), else a new one. Caller
 * holds vi->lock. */
struct pending *pending_take(struct inode *vi, int *err);
void pending_free(struct pending *p);
/* Keep p (or nothing) on vi for the next writer, freeing what was kept;
 * vi stays in the inode table while something is kept. Caller holds
 * vi->lock and a reference to vi. */
void pending_keep(struct inode *vi, struct pending *p);
/* Start p over from the view's current content (after a commit or a refusal). */
int pending_reset(struct inode *vi, struct pending *p);
/* After a write: check what is complete so far, so that a bad value fails
 * the write itself; the values checked are kept for the commit, which does
 * not parse them again (bytes rewritten or truncated below what was checked
 * start the check over). Returns 0 or -errno (the change is then refused:
 * logged, and the file shows the source's content again). */
int pending_check(struct inode *vi, struct fh *fh);
/* The change of fh is refused: logged (one line for the whole change), fh
 * fails from now on, and its file shows the source's content again.
 * Returns -errno. Caller holds fh->wlock. */
int pending_refuse(struct inode *vi, struct fh *fh, const struct mfs_err *err);
/* Commit the writes of fh (flush, fsync, release). Caller holds fh->wlock,
 * not vi->lock (taken here where vi's kept buffer changes). Returns 0 or
 * -errno (logged). */
int pending_commit(struct inode *vi, struct fh *fh);
/* The writes of fh are done with (an uncommitted truncation was kept on
 * vi by the flush that precedes every release). Caller holds fh->wlock. */
void pending_release(struct inode *vi, struct fh *fh);

#endif
