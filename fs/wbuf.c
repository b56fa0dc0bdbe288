/* Write buffers as sorted, disjoint extents over the old content. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"
#include "bisect.h"
#include "buf.h"
#include "wbuf.h"

struct ext {
	uint64_t off, len;
	uint8_t *data;
	size_t cap;
};

struct wbuf {
	uint64_t size;          /* current size */
	uint64_t base_len;      /* old content visible below the extents: [0, base_len) */
	wbuf_base_fn base;
	void *ctx;
	uint64_t cap, held;
	uint64_t limit;         /* largest size: the old size or cap, whichever is larger */
	uint64_t dirty;         /* wbuf_dirty_from */
	struct ext *v;
	size_t n, vcap;
	struct mfs_extent *list;  /* for wbuf_content */
};

struct wbuf *wbuf_new(uint64_t base_size, wbuf_base_fn base, void *ctx, uint64_t cap)
{
	struct wbuf *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->size = w->base_len = base_size;
	w->base = base;
	w->ctx = ctx;
	w->cap = cap;
	w->limit = base_size > cap ? base_size : cap;
	w->dirty = UINT64_MAX;
	return w;
}

void wbuf_free(struct wbuf *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++)
		mfs_big_free(w->v[i].data, w->v[i].cap);
	free(w->v);
	free(w->list);
	free(w);
}

uint64_t wbuf_size(const struct wbuf *w)
{
	return w->size;
}

uint64_t wbuf_held(const struct wbuf *w)
{
	return w->held;
}

/* Bytes [off, off + len) of what lies under the extents. */
static int read_under(struct wbuf *w, uint64_t off, size_t len, uint8_t *buf)
{
	size_t n = 0;
	if (off < w->base_len) {
		n = (size_t)(w->base_len - off < len ? w->base_len - off : len);
		if (w->base(w->ctx, off, n, buf) < 0)
			return -EIO;
	}
	memset(buf + n, 0, len - n);  /* a file grown by truncate reads zeros */
	return 0;
}

/* The extents v[*a, *b) that touch [off, end], and the span [*mo, *me)
 * they and it cover together. */
static void touching(const struct wbuf *w, uint64_t off, uint64_t end, size_t *a, size_t *b,
		     uint64_t *mo, uint64_t *me)
{
	size_t i = 0;
	while (i < w->n && w->v[i].off + w->v[i].len < off)
		i++;
	size_t j = i;
	while (j < w->n && w->v[j].off <= end)
		j++;
	*mo = off;
	*me = end;
	if (j > i) {
		if (w->v[i].off < *mo)
			*mo = w->v[i].off;
		if (w->v[j - 1].off + w->v[j - 1].len > *me)
			*me = w->v[j - 1].off + w->v[j - 1].len;
	}
	*a = i;
	*b = j;
}

/* Extent *e (starting where the merged span does) grown to len bytes, its
 * buffer reused: sequential writes. */
static int grow_extent(struct ext *e, uint64_t len)
{
	if (e->cap < len) {
		size_t nc = e->cap ? e->cap : 4096;
		while (nc < len)
			nc = nc > SIZE_MAX / 2 ? (size_t)len : nc * 2;
		/* Large ones grow without a copy (bigbuf.h). */
		uint8_t *d = mfs_big_resize(e->data, e->cap, nc);
		if (!d)
			return -ENOMEM;
		e->data = d;
		e->cap = nc;
	}
	e->len = len;
	return 0;
}

/* A new extent *e over [mo, me), filled from the extents v[a, b) and what
 * lies under them; theirs are freed once it is. */
static int merge_extents(struct wbuf *w, size_t a, size_t b, uint64_t mo, uint64_t me,
			 struct ext *e)
{
	e->cap = (size_t)(me - mo) ? (size_t)(me - mo) : 1;
	e->data = mfs_big_alloc(e->cap);
	if (!e->data)
		return -ENOMEM;
	uint64_t pos = mo;
	for (size_t i = a; i <= b; i++) {
		uint64_t next = i < b ? w->v[i].off : me;
		if (next > pos && read_under(w, pos, (size_t)(next - pos), e->data + (pos - mo)) < 0) {
			mfs_big_free(e->data, e->cap);
			return -EIO;
		}
		if (i < b) {
			memcpy(e->data + (w->v[i].off - mo), w->v[i].data, (size_t)w->v[i].len);
			pos = w->v[i].off + w->v[i].len;
		}
	}
	for (size_t i = a; i < b; i++)
		mfs_big_free(w->v[i].data, w->v[i].cap);
	return 0;
}

/* Replace v[a, b) by e (inserted at a when b == a). */
static int replace_extents(struct wbuf *w, size_t a, size_t b, const struct ext *e)
{
	if (b == a) {
		if (MFS_ARRAY_RESERVE(w->v, w->n, w->vcap, 1, 8) < 0)
			return -ENOMEM;
		memmove(&w->v[a + 1], &w->v[a], (w->n - a) * sizeof(*w->v));
		w->n++;
	} else if (b - a > 1) {
		memmove(&w->v[a + 1], &w->v[b], (w->n - b) * sizeof(*w->v));
		w->n -= b - a - 1;
	}
	w->v[a] = *e;
	return 0;
}

int wbuf_write(struct wbuf *w, uint64_t off, const void *data, size_t len)
{
	if (len == 0)
		return 0;
	uint64_t end = off + len;
	/* Bounded before it grows: a commit or a read materializes the whole
	 * size, holes included, so the size is held to the limit too. */
	if (end < off || end > w->limit)
		return -EFBIG;
	if (off < w->dirty)
		w->dirty = off;
	/* The extents touching [off, end] merge into one. */
	size_t a, b;
	uint64_t mo, me;
	touching(w, off, end, &a, &b, &mo, &me);
	uint64_t merged_old = 0;
	for (size_t i = a; i < b; i++)
		merged_old += w->v[i].len;
	uint64_t held = w->held - merged_old + (me - mo);
	if (held > w->cap || me - mo > SIZE_MAX)
		return -EFBIG;
	struct ext e = {mo, me - mo, NULL, 0};
	int r;
	if (b - a == 1 && w->v[a].off == mo) {
		e = w->v[a];
		r = grow_extent(&e, me - mo);
	} else {
		r = merge_extents(w, a, b, mo, me, &e);
	}
	if (r < 0)
		return r;
	memcpy(e.data + (off - mo), data, len);
	if (replace_extents(w, a, b, &e) < 0) {
		mfs_big_free(e.data, e.cap);
		return -ENOMEM;
	}
	w->held = held;
	if (end > w->size)
		w->size = end;
	return 0;
}

int wbuf_truncate(struct wbuf *w, uint64_t size)
{
	if (size > w->limit)
		return -EFBIG;
	uint64_t from = size < w->size ? size : w->size;  /* growing adds zeros after the end */
	if (from < w->dirty)
		w->dirty = from;
	if (size < w->base_len)
		w->base_len = size;
	size_t k = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct ext *e = &w->v[i];
		if (e->off >= size) {
			w->held -= e->len;
			mfs_big_free(e->data, e->cap);
			continue;
		}
		if (e->off + e->len > size) {
			w->held -= e->off + e->len - size;
			e->len = size - e->off;
		}
		w->v[k++] = *e;
	}
	w->n = k;
	w->size = size;
	return 0;
}

ssize_t wbuf_read(struct wbuf *w, uint64_t off, size_t len, void *out)
{
	if (off >= w->size)
		return 0;
	if (len > w->size - off)
		len = (size_t)(w->size - off);
	uint8_t *buf = out;
	uint64_t pos = off, end = off + len;
	for (size_t i = 0; i < w->n && pos < end; i++) {
		const struct ext *e = &w->v[i];
		if (e->off + e->len <= pos)
			continue;
		if (e->off >= end)
			break;
		if (e->off > pos) {
			if (read_under(w, pos, (size_t)(e->off - pos), buf + (pos - off)) < 0)
				return -EIO;
			pos = e->off;
		}
		uint64_t to = e->off + e->len < end ? e->off + e->len : end;
		memcpy(buf + (pos - off), e->data + (pos - e->off), (size_t)(to - pos));
		pos = to;
	}
	if (pos < end && read_under(w, pos, (size_t)(end - pos), buf + (pos - off)) < 0)
		return -EIO;
	return (ssize_t)len;
}

static int content_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	ssize_t n = wbuf_read(ctx, off, len, buf);
	return n == (ssize_t)len ? 0 : -EIO;
}

struct ext_key {
	const struct wbuf *w;
	uint64_t off;
};

/* Extent i ends at or before the offset. */
static bool ext_below(const void *ctx, uint64_t i)
{
	const struct ext_key *k = ctx;
	return k->w->v[i].off + k->w->v[i].len <= k->off;
}

const void *wbuf_peek(struct wbuf *w, uint64_t off, size_t len)
{
	if (off > w->size || len > w->size - off)
		return NULL;
	/* The extent holding off, if any (sorted, disjoint): the first one
	 * ending after it. */
	struct ext_key k = {w, off};
	size_t lo = (size_t)mfs_partition(w->n, ext_below, &k);
	if (lo == w->n || w->v[lo].off > off || off + len > w->v[lo].off + w->v[lo].len)
		return NULL;
	return w->v[lo].data + (off - w->v[lo].off);
}

static const void *content_peek(void *ctx, uint64_t off, size_t len)
{
	return wbuf_peek(ctx, off, len);
}

uint64_t wbuf_dirty_from(const struct wbuf *w)
{
	return w->dirty;
}

void wbuf_clean(struct wbuf *w)
{
	w->dirty = UINT64_MAX;
}

void wbuf_content(struct wbuf *w, struct mfs_content *c)
{
	c->size = w->size;
	c->read = content_read;
	c->peek = content_peek;
	c->ctx = w;
	c->ext = NULL;
	c->next = 0;
	c->checked = NULL;
	/* Extents describe the change only while the old content is all there. */
	free(w->list);
	w->list = NULL;
	if (w->base_len == w->size) {
		w->list = malloc((w->n ? w->n : 1) * sizeof(*w->list));
		if (!w->list)
			return;
		for (size_t i = 0; i < w->n; i++)
			w->list[i] = (struct mfs_extent){w->v[i].off, w->v[i].len};
		c->ext = w->list;
		c->next = w->n;
	}
}
