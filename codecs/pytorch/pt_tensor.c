/* Tensors of a torch.save file: torch._utils._rebuild_tensor_v2(storage,
 * storage_offset, size, stride, ...) (through _rebuild_parameter and
 * _rebuild_from_type_v2), checked to stay inside the storage. One that is
 * a row- or column-major span of its storage is raw storage to the core
 * (`data` shows it); any other is read element by element through its
 * strides, and one whose elements overlap (a stride of 0) is read-only. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "pytorch.h"

/* Rebuild functions wrapped around a tensor, at most this deep. */
#define WRAP_MAX 8

uint32_t pt_tensor_call(const struct pk *pk, uint32_t v)
{
	for (unsigned d = 0; d < WRAP_MAX && v != PK_NIL; d++) {
		const struct pk_val *c = &pk->v[v];
		if (c->kind != PK_CALL || c->b == PK_NIL || pk->v[c->b].kind != PK_TUPLE)
			return PK_NIL;
		const struct pk_val *args = &pk->v[c->b];
		if (pk_is_global(pk, c->a, "torch._utils", "_rebuild_tensor_v2") ||
		    pk_is_global(pk, c->a, "torch._utils", "_rebuild_tensor"))
			return args->n >= 4 ? c->b : PK_NIL;
		if (pk_is_global(pk, c->a, "torch._utils", "_rebuild_parameter") ||
		    pk_is_global(pk, c->a, "torch._utils", "_rebuild_parameter_with_state")) {
			v = args->n ? pt_elem(pk, args, 0) : PK_NIL;
			continue;
		}
		/* _rebuild_from_type_v2(func, new_type, args, state): func(*args) */
		if (pk_is_global(pk, c->a, "torch._tensor", "_rebuild_from_type_v2") && args->n >= 3) {
			uint32_t a = pt_elem(pk, args, 2);
			if (pk_is_global(pk, pt_elem(pk, args, 0), "torch._utils", "_rebuild_tensor_v2") &&
			    pk->v[a].kind == PK_TUPLE && pk->v[a].n >= 4)
				return a;
			v = PK_NIL;
			continue;
		}
		return PK_NIL;
	}
	return PK_NIL;
}

/* A non-negative int value. */
static bool uint_of(const struct pk *pk, uint32_t v, uint64_t *out)
{
	if (v == PK_NIL || pk->v[v].kind != PK_INT || pk->v[v].u.i < 0)
		return false;
	*out = (uint64_t)pk->v[v].u.i;
	return true;
}

/* A tuple or list of non-negative ints (torch.Size(...) too) into w. */
static int int_tuple(const struct pk *pk, uint32_t v, uint64_t *out, uint32_t *n, uint32_t max,
		     const char *what, struct mfs_err *err)
{
	if (v != PK_NIL && pk->v[v].kind == PK_CALL && pk_is_global(pk, pk->v[v].a, "torch", "Size") &&
	    pk->v[pk->v[v].b].kind == PK_TUPLE && pk->v[pk->v[v].b].n == 1)
		v = pt_elem(pk, &pk->v[pk->v[v].b], 0);
	if (v == PK_NIL || (pk->v[v].kind != PK_TUPLE && pk->v[v].kind != PK_LIST))
		return mfs_error(err, EINVAL, "a tensor's %s is not a tuple", what);
	const struct pk_val *t = &pk->v[v];
	if (t->n > max)
		return mfs_error(err, EINVAL, "a tensor's %s has %u entries, more than %u", what, t->n, max);
	uint32_t i = 0;
	for (uint32_t c = t->head; c != PK_NIL; c = pk->c[c].next, i++)
		if (!uint_of(pk, pk->c[c].v, &out[i]))
			return mfs_error(err, EINVAL, "a tensor's %s holds something other than a non-negative int", what);
	*n = i;
	return 0;
}

/* Whether the dims of size > 1 have the strides of one span, taken from
 * the last dimension (row-major) or the first (column-major). */
static bool span_order(const struct pt_view *w, bool col)
{
	uint64_t want = 1;
	for (uint32_t k = 0; k < w->ndim; k++) {
		uint32_t i = col ? k : w->ndim - 1 - k;
		if (w->sizes[i] == 1)
			continue;
		if (w->strides[i] != want)
			return false;
		want *= w->sizes[i];
	}
	return true;
}

/* Whether no two elements share memory: with the dims of size > 1 by
 * stride, each stride passes the reach of the smaller ones (sufficient;
 * views torch makes without overlap all pass). */
static bool no_overlap(const struct pt_view *w)
{
	uint64_t reach = 0;
	uint32_t done = 0, live = 0;
	for (uint32_t i = 0; i < w->ndim; i++)
		live += w->sizes[i] > 1;
	uint64_t last = 0;
	while (done < live) {
		uint32_t best = UINT32_MAX;
		for (uint32_t i = 0; i < w->ndim; i++)  /* the next stride up (ties: first) */
			if (w->sizes[i] > 1 && (w->strides[i] > last || (w->strides[i] == last && done == 0)) &&
			    (best == UINT32_MAX || w->strides[i] < w->strides[best]))
				best = i;
		if (best == UINT32_MAX || w->strides[best] <= reach)
			return false;
		reach += (w->sizes[best] - 1) * w->strides[best];
		last = w->strides[best];
		done++;
	}
	return true;
}

/* Elements and reach of w over a storage of cap elements: 0 or -EINVAL. */
static int extent(const struct pt_view *w, uint64_t cap, uint64_t *nelem, struct mfs_err *err)
{
	uint64_t n = 1, far = w->offset;
	for (uint32_t i = 0; i < w->ndim; i++)
		if (__builtin_mul_overflow(n, w->sizes[i], &n))
			return mfs_error(err, EINVAL, "a tensor's size overflows");
	for (uint32_t i = 0; n && i < w->ndim; i++) {
		uint64_t d;
		if (__builtin_mul_overflow(w->sizes[i] - 1, w->strides[i], &d) ||
		    __builtin_add_overflow(far, d, &far))
			return mfs_error(err, EINVAL, "a tensor's strides overflow");
	}
	if (n ? far >= cap : w->offset > cap)
		return mfs_error(err, EINVAL, "a tensor reaches element %llu of a storage of %llu elements",
				 (unsigned long long)far, (unsigned long long)cap);
	*nelem = n;
	return 0;
}

static int add_view(struct pt *pt, const struct pt_view *w, uint32_t *at, struct mfs_err *err)
{
	size_t cap = pt->capviews;
	if (MFS_ARRAY_RESERVE(pt->views, pt->nviews, cap, 1, 16) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	pt->capviews = (uint32_t)cap;
	pt->views[pt->nviews] = *w;
	*at = pt->nviews++;
	return 0;
}

/* Sizes and strides of the call's arguments into w (its arrays malloc'd). */
static int view_of(const struct pk *pk, const struct pk_val *args, struct pt_view *w,
		   struct mfs_err *err)
{
	uint32_t sz = pt_elem(pk, args, 2), sd = pt_elem(pk, args, 3);
	uint32_t n = pk->v[sz].kind == PK_TUPLE || pk->v[sz].kind == PK_LIST ? pk->v[sz].n : 1;
	if (n > PT_NDIM_MAX)
		return mfs_error(err, EINVAL, "a tensor of %u dimensions, more than %u", n, PT_NDIM_MAX);
	w->sizes = malloc(2 * (size_t)(n ? n : 1) * sizeof(uint64_t));
	if (!w->sizes)
		return mfs_error(err, ENOMEM, "out of memory");
	w->strides = w->sizes + n;
	uint32_t ns = 0;
	int r = int_tuple(pk, sz, w->sizes, &w->ndim, n, "size", err);
	if (r == 0)
		r = int_tuple(pk, sd, w->strides, &ns, n, "stride", err);
	if (r == 0 && ns != w->ndim)
		r = mfs_error(err, EINVAL, "a tensor of %u sizes and %u strides", w->ndim, ns);
	if (r == 0 && !uint_of(pk, pt_elem(pk, args, 1), &w->offset))
		r = mfs_error(err, EINVAL, "a tensor's storage offset is not a non-negative int");
	return r;
}

int pt_tensor(struct mfs_model *m, struct pt *pt, uint32_t v, struct mfs_tensor *t,
	      struct mfs_err *err)
{
	const struct pk *pk = &pt->pk;
	const struct pk_val *args = &pk->v[pt_tensor_call(pk, v)];
	uint32_t pid = pt_elem(pk, args, 0);
	if (pid == PK_NIL || pk->v[pid].kind != PK_PERSID)
		return mfs_error(err, EINVAL, "a tensor whose storage is not a persistent id");
	struct pt_view w = {.args = (uint32_t)(args - pk->v)};
	int r = pt_storage_of(m, pt, pid, &w.storage, err);
	if (r == 0)
		r = view_of(pk, args, &w, err);
	const struct pt_storage *st = r == 0 ? &pt->st[w.storage] : NULL;
	uint64_t nelem = 0;
	if (r == 0 && !st->placed)
		r = mfs_error(err, EINVAL, "storage %u has no bytes in the file", w.storage);
	if (r == 0)
		r = extent(&w, st->esize ? st->bytes / st->esize : 0, &nelem, err);
	if (r < 0) {
		free(w.sizes);
		return r;
	}
	bool row = span_order(&w, false), col = !row && w.ndim > 1 && span_order(&w, true);
	w.overlap = !row && !col && nelem && !no_overlap(&w);
	memset(t, 0, sizeof(*t));
	t->dtype = st->dtype;
	t->tname = st->tname;
	t->esize = st->esize;
	t->ndim = w.ndim;
	t->dims = w.sizes;
	t->order = col ? MFS_COL_MAJOR : MFS_ROW_MAJOR;
	t->flags = w.overlap ? 0 : MFS_TF_WRITABLE;
	t->off = st->off + w.offset * st->esize;
	t->storage = st->name;
	if (!row && !col) {
		t->ops = &pt_strided_ops;
		t->flags |= MFS_TF_NODATA;
	}
	pt->st[w.storage].ntensors++;
	uint32_t at = 0;
	if ((r = add_view(pt, &w, &at, err)) < 0) {
		free(w.sizes);
		return r;
	}
	t->tag = at;
	return 0;
}

uint64_t pt_view_index(const struct pt_view *w, uint64_t r)
{
	uint64_t s = w->offset;
	for (uint32_t i = w->ndim; i-- > 0;) {
		uint64_t d = w->sizes[i];
		s += (r % d) * w->strides[i];
		r /= d;
	}
	return s;
}

/* Elements [first, first + count) in logical order: a multi-index counted
 * up, the last dimension's run copied at once where its stride is 1. */
static int strided_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			uint64_t count, void *out, struct mfs_err *err)
{
	(void)err;
	const struct pt *pt = m->priv;
	const struct pt_view *w = &pt->views[t->tag];
	const struct pt_storage *st = &pt->st[w->storage];
	const uint8_t *base = m->base + st->off;
	uint8_t *o = out;
	uint32_t es = st->esize, last = w->ndim - 1;
	uint64_t idx[PT_NDIM_MAX], r = first;
	for (uint32_t i = w->ndim; i-- > 0;) {
		idx[i] = r % w->sizes[i];
		r /= w->sizes[i];
	}
	uint64_t at = pt_view_index(w, first);
	while (count) {
		uint64_t run = w->sizes[last] - idx[last];
		if (run > count)
			run = count;
		if (w->strides[last] == 1) {
			memcpy(o, base + at * es, (size_t)(run * es));
		} else {
			for (uint64_t k = 0; k < run; k++)
				memcpy(o + k * es, base + (at + k * w->strides[last]) * es, es);
		}
		o += run * es;
		count -= run;
		at += run * w->strides[last];
		idx[last] += run;
		for (uint32_t i = last; i > 0 && idx[i] == w->sizes[i]; i--) {
			at -= w->sizes[i] * w->strides[i];
			idx[i] = 0;
			idx[i - 1]++;
			at += w->strides[i - 1];
		}
	}
	return 0;
}

const struct mfs_tensor_ops pt_strided_ops = {.read = strided_read};
