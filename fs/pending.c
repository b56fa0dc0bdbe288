/* Pending writes of views and their commit (see pending.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pending.h"

struct base_ctx {
	struct pending *p;
};

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

struct pending *pending_get(struct inode *vi, struct mref *r, mfs_id node, int *err)
{
	if (vi->pend)
		return vi->pend;
	struct pending *p = calloc(1, sizeof(*p));
	if (!p) {
		*err = ENOMEM;
		return NULL;
	}
	struct mfs_err e = {0};
	uint64_t size = 0;
	if (mfs_view_size(r->m, node, &size, &e) < 0) {
		free(p);
		*err = e.code ? e.code : EIO;
		return NULL;
	}
	p->base = mref_hold(r);
	p->node = node;
	p->rc = mfs_rcache_new();
	p->buf = wbuf_new(size, base_read, p, fs.o.max_buffer);
	if (!p->buf || !p->rc) {
		pending_free(p);
		*err = ENOMEM;
		return NULL;
	}
	vi->pend = p;
	return p;
}

void pending_free(struct pending *p)
{
	if (!p)
		return;
	wbuf_free(p->buf);
	mfs_rcache_free(p->rc);
	mref_put(p->base);
	free(p);
}

/* Start over from the current content (after a commit or a refusal). */
static void reset(struct inode *vi)
{
	struct pending *p = vi->pend;
	uint64_t epoch = p->fail_epoch;
	int ferr = p->fail_err, nopen = p->nopen;
	vi->pend = NULL;
	pending_free(p);
	if (nopen == 0 && epoch == 0)
		return;
	struct mfs_err e = {0};
	struct mref *r = fsmodel_current(vi->fm, &e);
	int err = 0;
	mfs_id node = r ? vnode_resolve(vi, r) : MFS_NONE;
	struct pending *np = node != MFS_NONE ? pending_get(vi, r, node, &err) : NULL;
	if (np) {
		np->nopen = nopen;
		np->fail_epoch = epoch;
		np->fail_err = ferr;
	}
	mref_put(r);
}

/* A change is refused: every handle open now fails its next flush, and the
 * view shows the source's content again. */
static int refuse(struct inode *vi, struct fh *fh, const struct mfs_err *err)
{
	struct pending *p = vi->pend;
	log_error(vi, NULL, err->code, err->msg);
	p->fail_epoch++;
	p->fail_err = err->code ? err->code : EIO;
	if (fh) {
		fh->failed = p->fail_err;
		fh->epoch = p->fail_epoch;
	}
	p->dirty = false;
	reset(vi);
	notify_inval_inode(vi->ino);
	return -(err->code ? err->code : EIO);
}

int pending_check(struct inode *vi, struct fh *fh, uint64_t off)
{
	struct pending *p = vi->pend;
	if (!p)
		return 0;
	if (off < p->check.off)
		p->check = (struct mfs_check){0, 0};  /* rewrote checked bytes: start over */
	uint64_t size = wbuf_size(p->buf);
	if (size <= p->check.off || size - p->check.off > (16u << 20))
		return 0;  /* nothing new, or a huge unchecked piece: the commit checks */
	size_t len = (size_t)(size - p->check.off);
	char *buf = malloc(len);
	if (!buf)
		return 0;
	int r = 0;
	if (wbuf_read(p->buf, p->check.off, len, buf) == (ssize_t)len) {
		struct mfs_err err = {0};
		r = mfs_view_check_prefix(p->base->m, p->node, buf, len, &p->check, &err);
		if (r < 0)
			r = refuse(vi, fh, &err);
	}
	free(buf);
	return r;
}

int pending_commit(struct inode *vi, struct fh *fh)
{
	struct pending *p = vi->pend;
	if (fh && fh->failed)
		return -fh->failed;
	if (!p)
		return 0;
	if (fh && p->fail_epoch > fh->epoch) {
		/* A change made through another descriptor of this open file
		 * was refused: this one fails too. */
		fh->failed = p->fail_err;
		return -fh->failed;
	}
	/* `echo v > f` flushes the empty, truncated file before writing: that
	 * neither commits nor fails. */
	if (!p->dirty)
		return 0;
	struct mfs_content c;
	wbuf_content(p->buf, &c);
	struct mfs_err err = {0};
	int r = fsmodel_commit(vi->fm, vi, &c, &err);
	if (r < 0)
		return refuse(vi, fh, &err);
	p->dirty = false;
	p->truncated = false;
	reset(vi);
	return 0;
}
