/* Views: size, read and zero-copy segments of every file node, dispatched by
 * view kind. Every path runs inside mfs_guarded (the source is a mapping). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "model_impl.h"
#include "numtext.h"
#include "view_impl.h"

/* Eagerly sized text views: up to this many elements (a few ms of work). */
#define CHEAP_ELEMS (1u << 20)

static size_t shape_text(const struct mfs_tensor *t, char *buf, size_t size)
{
	size_t n = 0;
	for (uint32_t i = 0; i < t->ndim && n + 24 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%s%llu", i ? " " : "",
				      (unsigned long long)t->dims[i]);
	buf[n++] = '\n';
	return n;
}

static size_t dtype_text(const struct mfs_tensor *t, char *buf, size_t size)
{
	int n = snprintf(buf, size, "%s\n", mfs_tensor_dtype_name(t));
	return n < 0 ? 0 : ((size_t)n < size ? (size_t)n : size - 1);
}

size_t mfs_tensor_shape_text(const struct mfs_tensor *t, char *buf, size_t size)
{
	return shape_text(t, buf, size);
}

static uint64_t data_size(const struct mfs_tensor *t)
{
	return t->nelem * t->esize;
}

/* Bytes of data.npy's elements: float32 for the small floats. */
static uint64_t npy_data_size(const struct mfs_tensor *t)
{
	if (mfs_npy_widened(t))
		return t->nelem * 4;
	return data_size(t);
}

/* The chunked text object behind a node, or NULL for other views. */
static struct mfs_chunked *chunked_of(struct mfs_model *m, const struct mfs_node *n,
				      struct mfs_err *err, int *r)
{
	*r = 0;
	if (n->view == MFS_V_CSV) {
		struct mfs_chunked *c = mfs_frame_cache(m, n->u.frame, err);
		if (!c)
			*r = -ENOMEM;
		return c;
	}
	if (n->view != MFS_V_VALUES && n->view != MFS_V_MTX)
		return NULL;
	struct mfs_tcache *tc = mfs_tcache_get(m, &m->tensors[n->u.tensor], err);
	if (!tc) {
		*r = -ENOMEM;
		return NULL;
	}
	return n->view == MFS_V_VALUES ? &tc->values : &tc->mtx;
}

struct size_call {
	struct mfs_model *m;
	mfs_id id;
	uint64_t *size;
	struct mfs_err *err;
};

static int size_fn(void *arg)
{
	struct size_call *c = arg;
	struct mfs_model *m = c->m;
	const struct mfs_node *n = &m->nodes[c->id];
	const struct mfs_tensor *t = mfs_node_tensor(m, c->id);
	char buf[1024];
	int r;
	switch (n->view) {
	case MFS_V_TEXT:
		*c->size = n->u.text.len;
		return 0;
	case MFS_V_RAW:
		*c->size = n->u.raw.len;
		return 0;
	case MFS_V_SHAPE:
		*c->size = shape_text(t, buf, sizeof(buf));
		return 0;
	case MFS_V_DTYPE:
		*c->size = dtype_text(t, buf, sizeof(buf));
		return 0;
	case MFS_V_DATA:
		*c->size = data_size(t);
		return 0;
	case MFS_V_NPY: {
		struct mfs_tcache *tc = mfs_tcache_get(m, t, c->err);
		if (!tc)
			return -ENOMEM;
		*c->size = tc->npy_head_len + npy_data_size(t);
		return 0;
	}
	default: {
		struct mfs_chunked *ch = chunked_of(m, n, c->err, &r);
		if (!ch)
			return r < 0 ? r : mfs_error(c->err, EISDIR, "not a file");
		return mfs_chunked_size(m, ch, c->size, c->err);
	}
	}
}

int mfs_view_size(struct mfs_model *m, mfs_id id, uint64_t *size, struct mfs_err *err)
{
	if (id >= m->nnodes || m->nodes[id].kind != MFS_K_FILE)
		return mfs_error(err, EISDIR, "not a file");
	struct size_call c = {m, id, size, err};
	return mfs_guarded(size_fn, &c, err);
}

/* Whether a view's size is known (set under its lock by whichever thread
 * sized it). */
static bool chunked_sized(struct mfs_chunked *c)
{
	pthread_mutex_lock(&c->lock);
	bool sized = c->sized;
	pthread_mutex_unlock(&c->lock);
	return sized;
}

bool mfs_view_size_cheap(const struct mfs_model *m, mfs_id id)
{
	if (id >= m->nnodes)
		return true;
	const struct mfs_node *n = &m->nodes[id];
	switch (n->view) {
	case MFS_V_VALUES:
	case MFS_V_MTX: {
		const struct mfs_tensor *t = &m->tensors[n->u.tensor];
		/* caches are published under cache_lock */
		pthread_mutex_lock(&m->impl->cache_lock);
		struct mfs_tcache *tc = t->cache;
		pthread_mutex_unlock(&m->impl->cache_lock);
		if (tc && chunked_sized(n->view == MFS_V_VALUES ? &tc->values : &tc->mtx))
			return true;
		return (n->view == MFS_V_VALUES ? t->nelem : t->nnz) <= CHEAP_ELEMS;
	}
	case MFS_V_CSV: {
		const struct mfs_frame *f = &m->frames[n->u.frame];
		pthread_mutex_lock(&m->impl->cache_lock);
		struct mfs_chunked *c = f->csv;
		pthread_mutex_unlock(&m->impl->cache_lock);
		if (c && chunked_sized(c))
			return true;
		return f->nrows * (f->ncols ? f->ncols : 1) <= CHEAP_ELEMS;
	}
	default:
		return true;
	}
}

static ssize_t copy_out(const void *src, uint64_t size, uint64_t off, size_t len, void *buf)
{
	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	memcpy(buf, (const char *)src + off, len);
	return (ssize_t)len;
}

/* Bytes [off, off + len) of the storage-order little-endian element bytes. */
static ssize_t read_data(struct mfs_model *m, const struct mfs_tensor *t, uint64_t off,
			 size_t len, uint8_t *buf, struct mfs_err *err)
{
	uint64_t size = data_size(t);
	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	if (!t->ops && !t->swap)
		return copy_out(m->base + t->off, size, off, len, buf);
	unsigned es = t->esize;
	if (es == 0)
		return 0;
	uint64_t e0 = off / es, e1 = (off + len + es - 1) / es;
	/* Whole elements straight into buf; the partial ones at the edges
	 * through a small bounce buffer. */
	uint8_t one[64];
	size_t done = 0;
	uint64_t e = e0;
	while (done < len) {
		uint64_t skip = e == e0 ? off - e0 * es : 0;
		if (skip == 0 && len - done >= es) {
			uint64_t whole = (len - done) / es;
			if (whole > e1 - e)
				whole = e1 - e;
			int r = mfs_tensor_read_storage(m, t, e, whole, buf + done, err);
			if (r < 0)
				return r;
			done += (size_t)(whole * es);
			e += whole;
			continue;
		}
		int r = mfs_tensor_read_storage(m, t, e, 1, one, err);
		if (r < 0)
			return r;
		size_t n = es - (size_t)skip;
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, one + skip, n);
		done += n;
		e++;
	}
	return (ssize_t)done;
}

/* Bytes [off, off + len) of data.npy's elements: read_data's, or for the
 * small floats, those values widened to float32, a block at a time. */
static ssize_t read_npy_data(struct mfs_model *m, const struct mfs_tensor *t, uint64_t off,
			     size_t len, uint8_t *buf, struct mfs_err *err)
{
	enum mfs_mini mini = mfs_npy_widened(t);
	if (!mini)
		return read_data(m, t, off, len, buf, err);
	uint64_t size = npy_data_size(t);
	if (off >= size)
		return 0;
	if (len > size - off)
		len = (size_t)(size - off);
	enum { BLOCK = 2048 };
	uint8_t raw[BLOCK * 2];
	uint32_t wide[BLOCK];
	size_t done = 0;
	while (done < len) {
		uint64_t at = off + done, e = at / 4;
		uint64_t n = (at + (len - done) + 3) / 4 - e;
		if (n > BLOCK)
			n = BLOCK;
		ssize_t r = read_data(m, t, e * t->esize, (size_t)(n * t->esize), raw, err);
		if (r < 0)
			return r;
		mfs_mini_widen(mini, raw, wide, (size_t)n);
		size_t skip = (size_t)(at - e * 4), k = (size_t)n * 4 - skip;
		if (k > len - done)
			k = len - done;
		memcpy(buf + done, (const uint8_t *)wide + skip, k);
		done += k;
	}
	return (ssize_t)done;
}

struct read_call {
	struct mfs_model *m;
	mfs_id id;
	uint64_t off;
	size_t len;
	void *buf;
	struct mfs_rcache *rc;
	struct mfs_err *err;
	ssize_t ret;
};

static int read_fn(void *arg)
{
	struct read_call *c = arg;
	struct mfs_model *m = c->m;
	const struct mfs_node *n = &m->nodes[c->id];
	const struct mfs_tensor *t = mfs_node_tensor(m, c->id);
	char small[1024];
	int r;
	switch (n->view) {
	case MFS_V_TEXT:
		c->ret = copy_out(n->u.text.s, n->u.text.len, c->off, c->len, c->buf);
		return 0;
	case MFS_V_RAW:
		c->ret = copy_out(m->base + n->u.raw.off, n->u.raw.len, c->off, c->len, c->buf);
		return 0;
	case MFS_V_SHAPE:
		c->ret = copy_out(small, shape_text(t, small, sizeof(small)), c->off, c->len, c->buf);
		return 0;
	case MFS_V_DTYPE:
		c->ret = copy_out(small, dtype_text(t, small, sizeof(small)), c->off, c->len, c->buf);
		return 0;
	case MFS_V_DATA:
		c->ret = read_data(m, t, c->off, c->len, c->buf, c->err);
		return c->ret < 0 ? (int)c->ret : 0;
	case MFS_V_NPY: {
		struct mfs_tcache *tc = mfs_tcache_get(m, t, c->err);
		if (!tc)
			return -ENOMEM;
		size_t done = 0;
		if (c->off < tc->npy_head_len)
			done = (size_t)copy_out(tc->npy_head, tc->npy_head_len, c->off, c->len, c->buf);
		uint64_t doff = c->off + done - tc->npy_head_len;
		ssize_t d = 0;
		if (done < c->len)
			d = read_npy_data(m, t, doff, c->len - done, (uint8_t *)c->buf + done, c->err);
		if (d < 0)
			return (int)d;
		c->ret = (ssize_t)done + d;
		return 0;
	}
	default: {
		struct mfs_chunked *ch = chunked_of(m, n, c->err, &r);
		if (!ch)
			return r < 0 ? r : mfs_error(c->err, EISDIR, "not a file");
		c->ret = mfs_chunked_read(m, ch, c->off, c->len, c->buf, c->rc, c->err);
		return c->ret < 0 ? (int)c->ret : 0;
	}
	}
}

ssize_t mfs_view_read(struct mfs_model *m, mfs_id id, uint64_t off, size_t len, void *buf,
		      struct mfs_rcache *rc, struct mfs_err *err)
{
	if (id >= m->nnodes || m->nodes[id].kind != MFS_K_FILE)
		return mfs_error(err, EISDIR, "not a file");
	struct read_call c = {m, id, off, len, buf, rc, err, 0};
	int r = mfs_guarded(read_fn, &c, err);
	return r < 0 ? r : c.ret;
}

bool mfs_view_send_kept(struct mfs_model *m, mfs_id id, uint64_t off, size_t len,
			mfs_send_fn send, void *ctx)
{
	if (id >= m->nnodes || m->nodes[id].kind != MFS_K_FILE)
		return false;
	struct mfs_err err = {0};
	int r;
	struct mfs_chunked *c = chunked_of(m, &m->nodes[id], &err, &r);
	if (!c || off < c->head_len)
		return false;
	return mfs_keep_send(c, off - c->head_len, len, send, ctx);
}

int mfs_view_segments(const struct mfs_model *m, mfs_id id, uint64_t off, uint64_t len,
		      struct mfs_vseg *seg)
{
	if (id >= m->nnodes || m->fd < 0)
		return 0;
	const struct mfs_node *n = &m->nodes[id];
	const struct mfs_tensor *t = mfs_node_tensor(m, id);
	memset(seg, 0, sizeof(*seg));
	uint64_t head = 0, base, size;
	if (n->view == MFS_V_RAW) {
		base = n->u.raw.off;
		size = n->u.raw.len;
	} else if ((n->view == MFS_V_DATA || n->view == MFS_V_NPY) && !t->ops && !t->swap &&
		   !(n->view == MFS_V_NPY && mfs_npy_widened(t))) {
		if (n->view == MFS_V_NPY) {
			/* The header is built on first use; without it, no segments. */
			if (!t->cache)
				return 0;
			head = t->cache->npy_head_len;
			seg->mem = t->cache->npy_head;
		}
		base = t->off;
		size = data_size(t);
	} else {
		return 0;
	}
	if (off >= head + size)
		return 1;  /* nothing: end of file */
	if (len > head + size - off)
		len = head + size - off;
	if (off < head) {
		seg->mem = (const char *)seg->mem + off;
		seg->mem_len = head - off < len ? head - off : len;
		len -= seg->mem_len;
		off = head;
	}
	seg->src_off = base + (off - head);
	seg->src_len = len;
	return 1;
}
