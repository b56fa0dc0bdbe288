/* Writes to views and their commit (see pending.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pending.h"

static int base_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	struct pending *p = ctx;
	struct mfs_err err = {0};
	size_t done = 0;
	while (done < len) {
		ssize_t n = mfs_view_read(p->base->m, p->node, off + done, len - done,
					  (char *)buf + done, p->rc, &err);
		if (n <= 0)
			return -EIO;
		done += (size_t)n;
	}
	return 0;
}

void pending_free(struct pending *p)
{
	if (!p)
		return;
	wbuf_free(p->buf);
	mfs_check_reset(&p->check);
	mfs_rcache_free(p->rc);
	mref_put(p->base);
	free(p);
}

/* Point p at the current content of vi's view. */
static int attach_base(struct inode *vi, struct pending *p)
{
	struct fsstate *fs = vi->fs;
	struct mfs_err e = {0};
	struct mref *r = fsmodel_current(vi->fm, &e);
	if (!r)
		return -(e.code ? e.code : EIO);
	mfs_id node = vnode_resolve(vi, r);
	uint64_t size = 0;
	int err = node == MFS_NONE ? -ENOENT : 0;
	if (!err && mfs_view_size(r->m, node, &size, &e) < 0)
		err = -(e.code ? e.code : EIO);
	struct wbuf *b = err ? NULL : wbuf_new(size, base_read, p, fs->o.max_buffer);
	if (!err && !b)
		err = -ENOMEM;
	if (err) {
		mref_put(r);
		return err;
	}
	wbuf_free(p->buf);
	mref_put(p->base);
	p->buf = b;
	p->base = r;
	p->node = node;
	p->dirty = p->truncated = false;
	mfs_check_reset(&p->check);
	p->told = size;
	return 0;
}

/* Whether p's content is over the model's current generation (a kept
 * truncation that a commit has overtaken since is dropped). */
static bool is_current(struct inode *vi, const struct pending *p)
{
	pthread_mutex_lock(&vi->fm->lock);
	bool cur = !vi->fm->stale && vi->fm->cur == p->base;
	pthread_mutex_unlock(&vi->fm->lock);
	return cur;
}

/* The buffer kept on vi, no longer kept. */
static struct pending *unkeep(struct inode *vi)
{
	struct fsstate *fs = vi->fs;
	struct pending *p = vi->pend;
	if (p) {
		vi->pend = NULL;
		pthread_mutex_lock(&fs->lock);
		vi->refs--;  /* the caller holds another reference */
		pthread_mutex_unlock(&fs->lock);
	}
	return p;
}

void pending_keep(struct inode *vi, struct pending *p)
{
	struct fsstate *fs = vi->fs;
	pending_free(unkeep(vi));
	if (!p)
		return;
	/* Held in the table meanwhile: a FORGET (after drop_caches, say)
	 * must not lose a truncation waiting for its writer. */
	pthread_mutex_lock(&fs->lock);
	vi->refs++;
	pthread_mutex_unlock(&fs->lock);
	vi->pend = p;
}

struct pending *pending_take(struct inode *vi, int *err)
{
	struct pending *p = unkeep(vi);
	if (p && is_current(vi, p))
		return p;
	pending_free(p);
	p = calloc(1, sizeof(*p));
	if (p && (p->rc = mfs_rcache_new()) != NULL)
		fsmodel_hold_reads(vi->fm, p->rc);
	if (!p || !p->rc) {
		if (p)
			free(p);
		*err = ENOMEM;
		return NULL;
	}
	int r = attach_base(vi, p);
	if (r < 0) {
		pending_free(p);
		*err = -r;
		return NULL;
	}
	return p;
}

int pending_reset(struct inode *vi, struct pending *p)
{
	return attach_base(vi, p);
}

int pending_refuse(struct inode *vi, struct fh *fh, const struct mfs_err *err)
{
	/* Logged once: later writes, flushes and fsyncs of fh return the
	 * same error without a line of their own. */
	log_error(vi, NULL, err->code, err->msg);
	fh->failed = err->code ? err->code : EIO;
	pending_reset(vi, fh->w);
	return -fh->failed;
}

/* Whether the bytes p->check saw are still there (none changed since). */
static bool check_holds(struct pending *p)
{
	return wbuf_dirty_from(p->buf) >= p->check.off;
}

int pending_check(struct inode *vi, struct fh *fh)
{
	struct pending *p = fh->w;
	if (!check_holds(p))
		mfs_check_reset(&p->check);  /* rewrote checked bytes: start over */
	wbuf_clean(p->buf);
	uint64_t size = wbuf_size(p->buf);
	if (size <= p->check.off || size - p->check.off > (16u << 20))
		return 0;  /* nothing new, or a huge unchecked piece: the commit checks */
	size_t len = (size_t)(size - p->check.off);
	/* Sequential writes: the new bytes are in place in the last extent. */
	const char *text = wbuf_peek(p->buf, p->check.off, len);
	char *copy = NULL;
	if (!text) {
		copy = malloc(len);
		if (!copy || wbuf_read(p->buf, p->check.off, len, copy) != (ssize_t)len) {
			free(copy);
			return 0;
		}
		text = copy;
	}
	struct mfs_err err = {0};
	int r = mfs_view_check_prefix(p->base->m, p->node, text, len, &p->check, &err);
	if (r < 0)
		r = pending_refuse(vi, fh, &err);
	free(copy);
	return r;
}

/* Keep a copy of fh's truncation (no writes since) on vi for the next
 * writer; best effort. */
static void park_truncation(struct inode *vi, struct fh *fh)
{
	int e = 0;
	pthread_mutex_lock(&vi->lock);
	struct pending *q = pending_take(vi, &e);
	if (q && wbuf_truncate(q->buf, wbuf_size(fh->w->buf)) < 0) {
		pending_free(q);
		q = NULL;
	}
	if (q) {
		q->truncated = true;
		pending_keep(vi, q);
		fh->parked = true;
	}
	pthread_mutex_unlock(&vi->lock);
}

int pending_commit(struct inode *vi, struct fh *fh)
{
	struct pending *p = fh->w;
	if (fh->failed)
		return -fh->failed;
	/* `echo v > f` flushes the empty, truncated file before writing: that
	 * neither commits nor fails. A truncation closed without writes
	 * (`truncate -s 0 f`, then `echo v >> f`) is kept for the next writer
	 * now: the kernel sends RELEASE later, and the next open may come
	 * first. */
	if (!p || !p->dirty) {
		if (p && p->truncated && !fh->parked)
			park_truncation(vi, fh);
		return 0;
	}
	if (fh->parked) {
		/* Written after the truncation it kept: that is superseded. */
		pthread_mutex_lock(&vi->lock);
		pending_keep(vi, NULL);
		pthread_mutex_unlock(&vi->lock);
		fh->parked = false;
	}
	struct mfs_content c;
	wbuf_content(p->buf, &c);
	/* The values checked at each write are not parsed again. */
	if (check_holds(p))
		c.checked = &p->check;
	struct mfs_err err = {0};
	int r = fsmodel_commit(vi->fm, vi, &c, 1, &err);
	if (r < 0)
		return pending_refuse(vi, fh, &err);
	/* Later writes of this file go over what is now committed. */
	pending_reset(vi, p);
	return 0;
}

void pending_release(struct inode *vi, struct fh *fh)
{
	(void)vi;  /* a truncation was kept at the flush before */
	pending_free(fh->w);
	fh->w = NULL;
}
