/* Patches: the spans of a source that an edit replaces (see edit.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "edit.h"

struct mfs_patch_buf {
	struct mfs_patch_buf *next;
	_Alignas(16) uint8_t data[];
};

void mfs_patch_init(struct mfs_patch *p)
{
	memset(p, 0, sizeof(*p));
}

void mfs_patch_free(struct mfs_patch *p)
{
	struct mfs_patch_buf *b = p->bufs;
	while (b) {
		struct mfs_patch_buf *n = b->next;
		free(b);
		b = n;
	}
	free(p->spans);
	free(p->sidecar);
	mfs_patch_init(p);
}

static struct mfs_span *new_span(struct mfs_patch *p)
{
	if (MFS_ARRAY_RESERVE(p->spans, p->n, p->cap, 1, 16) < 0)
		return NULL;
	struct mfs_span *s = &p->spans[p->n++];
	memset(s, 0, sizeof(*s));
	return s;
}

int mfs_patch_ref(struct mfs_patch *p, uint64_t off, uint64_t len, const void *data,
		  uint64_t dlen)
{
	struct mfs_span *s = new_span(p);
	if (!s)
		return -ENOMEM;
	s->off = off;
	s->len = len;
	s->data = data;
	s->dlen = dlen;
	return 0;
}

int mfs_patch_gathered(struct mfs_patch *p, uint64_t off, uint64_t len,
		       const struct mfs_gather *src, uint64_t src_off, uint64_t dlen)
{
	if (mfs_patch_ref(p, off, len, NULL, dlen) < 0)
		return -ENOMEM;
	p->spans[p->n - 1].src = src;
	p->spans[p->n - 1].src_off = src_off;
	return 0;
}

void mfs_span_bytes(const struct mfs_span *s, uint64_t from, uint64_t n, uint8_t *out)
{
	if (s->data)
		memcpy(out, s->data + from, (size_t)n);
	else if (n)
		mfs_gather_bytes(s->src, s->src_off + from, n, out);
}

uint8_t *mfs_patch_alloc(struct mfs_patch *p, uint64_t off, uint64_t len, uint64_t dlen)
{
	if (dlen > SIZE_MAX - sizeof(struct mfs_patch_buf))
		return NULL;
	struct mfs_patch_buf *b = malloc(sizeof(*b) + (size_t)dlen);
	if (!b)
		return NULL;
	struct mfs_span *s = new_span(p);
	if (!s) {
		free(b);
		return NULL;
	}
	s->off = off;
	s->len = len;
	s->data = b->data;
	s->dlen = dlen;
	b->next = p->bufs;
	p->bufs = b;
	return b->data;
}

void *mfs_patch_keep(struct mfs_patch *p, uint64_t size)
{
	if (size > SIZE_MAX - sizeof(struct mfs_patch_buf))
		return NULL;
	struct mfs_patch_buf *b = malloc(sizeof(*b) + (size_t)size);
	if (!b)
		return NULL;
	b->next = p->bufs;
	p->bufs = b;
	return b->data;
}

int mfs_patch_put(struct mfs_patch *p, uint64_t off, uint64_t len, const void *data,
		  uint64_t dlen)
{
	uint8_t *d = mfs_patch_alloc(p, off, len, dlen);
	if (!d)
		return -ENOMEM;
	if (dlen)
		memcpy(d, data, (size_t)dlen);
	return 0;
}

int mfs_patch_set_sidecar(struct mfs_patch *p, const void *data, size_t len)
{
	uint8_t *d = malloc(len ? len : 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, data, len);
	free(p->sidecar);
	p->sidecar = d;
	p->sidecar_len = len;
	p->has_sidecar = true;
	return 0;
}

static int cmp_span(const void *a, const void *b)
{
	const struct mfs_span *x = a, *y = b;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	/* An insertion (len 0) sorts before a replacement at the same offset. */
	return (x->len > y->len) - (x->len < y->len);
}

int mfs_patch_sort(struct mfs_patch *p, struct mfs_err *err)
{
	if (p->n > 1)
		qsort(p->spans, p->n, sizeof(*p->spans), cmp_span);
	for (size_t i = 1; i < p->n; i++) {
		const struct mfs_span *a = &p->spans[i - 1], *b = &p->spans[i];
		if (a->off + a->len > b->off || (a->len == 0 && b->len == 0 && a->off == b->off))
			return mfs_error(err, EINVAL, "internal error: overlapping patch spans at %llu",
					 (unsigned long long)b->off);
	}
	return 0;
}

uint64_t mfs_patch_new_size(const struct mfs_patch *p, uint64_t old_size)
{
	uint64_t size = old_size;
	for (size_t i = 0; i < p->n; i++)
		size = size - p->spans[i].len + p->spans[i].dlen;
	return size;
}

bool mfs_patch_same_size(const struct mfs_patch *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->spans[i].len != p->spans[i].dlen)
			return false;
	return true;
}

void mfs_patch_read(const struct mfs_patch *p, const uint8_t *base, uint64_t base_size,
		    uint64_t off, uint64_t len, uint8_t *out)
{
	/* Walk the new file as a sequence of kept and replaced pieces. */
	uint64_t src = 0, dst = 0;
	size_t i = 0;
	while (len) {
		uint64_t piece_len, piece_dst = dst;
		const uint8_t *piece;
		const struct mfs_span *span = NULL;
		if (i < p->n && src == p->spans[i].off) {
			span = &p->spans[i];
			piece = NULL;
			piece_len = span->dlen;
			src += span->len;
			i++;
		} else {
			uint64_t next = i < p->n ? p->spans[i].off : base_size;
			piece = base + src;
			piece_len = next - src;
			src = next;
			if (piece_len == 0 && i >= p->n)
				break;
		}
		dst += piece_len;
		if (dst <= off)
			continue;
		uint64_t from = off > piece_dst ? off - piece_dst : 0;
		uint64_t n = piece_len - from;
		if (n > len)
			n = len;
		if (span)
			mfs_span_bytes(span, from, n, out);
		else
			memcpy(out, piece + from, (size_t)n);
		out += n;
		off += n;
		len -= n;
	}
}

int mfs_patch_raw_runs(struct mfs_patch *p, const struct mfs_tensor *t,
		       const struct mfs_edit *e, struct mfs_err *err)
{
	if (t->ops || e->reshape)
		return mfs_error(err, EINVAL, "internal error: not a raw same-shape edit");
	if (e->gather && e->gather->esize != t->esize)
		return mfs_error(err, EINVAL, "internal error: a gather of another element size");
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *r = &e->runs[i];
		if (r->first > t->nelem || r->count > t->nelem - r->first)
			return mfs_error(err, EINVAL, "internal error: run beyond the tensor");
		uint64_t bytes = r->count * t->esize;
		uint64_t off = t->off + r->first * t->esize;
		if (e->gather && !t->swap) {
			if (mfs_patch_gathered(p, off, bytes, e->gather, r->first * t->esize, bytes) < 0)
				return mfs_error(err, ENOMEM, "out of memory");
			continue;
		}
		if (!t->swap) {
			if (mfs_patch_ref(p, off, bytes, r->bytes, bytes) < 0)
				return mfs_error(err, ENOMEM, "out of memory");
			continue;
		}
		uint8_t *d = mfs_patch_alloc(p, off, bytes, bytes);
		if (!d)
			return mfs_error(err, ENOMEM, "out of memory");
		if (e->gather)
			mfs_gather_elems(e->gather, r->first, r->count, d);
		else
			memcpy(d, r->bytes, (size_t)bytes);
		mfs_swap_elems(d, bytes / t->swap, t->swap);
	}
	return 0;
}

int mfs_reshape_fill(uint8_t *d, const struct mfs_edit *e, uint64_t nelem, uint32_t esize,
		     struct mfs_err *err)
{
	uint64_t next = 0;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *r = &e->runs[i];
		if (r->first != next || r->count > nelem - next)
			return mfs_error(err, EINVAL, "internal error: a reshape must give every element");
		if (r->count)
			memcpy(d + next * esize, r->bytes, (size_t)(r->count * esize));
		next += r->count;
	}
	if (next != nelem)
		return mfs_error(err, EINVAL, "internal error: a reshape gave %llu of %llu elements",
				 (unsigned long long)next, (unsigned long long)nelem);
	return 0;
}
