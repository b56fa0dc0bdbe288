/* A new shape through data.npy, for a row-major tensor that alone covers
 * its whole storage in a zip: the storage's record gets the new elements,
 * and the pickle the new size and stride tuples and the persistent id's
 * element count (only those opcodes replaced); both records are written
 * again, every later record keeping its 64-byte alignment. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pt_value.h"
#include "pytorch.h"

/* Whether tuple v is plain ints written in one run of opcodes (as torch
 * writes sizes and strides), none of them or the tuple taken from the memo
 * elsewhere (replacing them would change those places too): MARK or the
 * first int, the ints one after the
 * other, then the tuple opcode. */
static bool plain_tuple(const struct pk *pk, uint32_t v)
{
	if (v == PK_NIL || pk->v[v].kind != PK_TUPLE || (pk->v[v].flags & (PK_F_GOT | PK_F_SHARED)))
		return false;
	const struct pk_val *t = &pk->v[v];
	uint64_t at = t->off + (t->op == 't' ? 1 : 0);
	if (!t->n)
		return t->op == ')' && t->len == 1;
	for (uint32_t c = t->head; c != PK_NIL; c = pk->c[c].next) {
		const struct pk_val *x = &pk->v[pk->c[c].v];
		if (x->kind != PK_INT || (x->flags & (PK_F_GOT | PK_F_SHARED)) || x->off != at)
			return false;
		at += x->len;
	}
	return at + 1 == t->off + t->len;
}

/* The persistent id's numel of view w (a plain int), or PK_NIL. */
static uint32_t numel_of(const struct pk *pk, const struct pt_view *w)
{
	uint32_t pid = pt_elem(pk, &pk->v[w->args], 0);
	uint32_t id = pk->v[pid].a;
	uint32_t n = pt_elem(pk, &pk->v[id], 4);
	if (n == PK_NIL || pk->v[n].kind != PK_INT || (pk->v[n].flags & (PK_F_GOT | PK_F_SHARED)))
		return PK_NIL;
	return n;
}

bool pt_reshapable(const struct pt *pt, const struct mfs_tensor *t)
{
	const struct pk *pk = &pt->pk;
	const struct pt_view *w = &pt->views[t->tag];
	const struct pt_storage *st = &pt->st[w->storage];
	const struct pk_val *args = &pk->v[w->args];
	return !pt->legacy && !t->ops && t->order == MFS_ROW_MAJOR && !w->overlap && !w->offset &&
	       st->ntensors == 1 && t->nelem * st->esize == st->bytes && st->dtype != MFS_DT_OPAQUE &&
	       plain_tuple(pk, pt_elem(pk, args, 2)) && plain_tuple(pk, pt_elem(pk, args, 3)) &&
	       numel_of(pk, w) != PK_NIL;
}

/* A tuple of ints as opcodes: EMPTY_TUPLE, TUPLE1-3 after the ints, or
 * MARK, the ints, TUPLE. */
static int tuple_ops(struct mfs_buf *b, const uint64_t *x, uint32_t n)
{
	static const uint8_t short_tuple[] = {')', 0x85, 0x86, 0x87};
	int r = n > 3 ? mfs_buf_add(b, "(", 1) : 0;
	for (uint32_t i = 0; i < n && r == 0; i++)
		r = pt_int_opcode(b, x[i]);
	if (r == 0)
		r = mfs_buf_add(b, n > 3 ? (const uint8_t *)"t" : short_tuple + n, 1);
	return r;
}

/* The new elements, from the edit's runs (which give every one in order). */
struct elems {
	const struct mfs_run *runs;
	size_t nruns, at;
	uint32_t esize;
	uint64_t size;
};

static int elems_read(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err)
{
	struct elems *el = ctx;
	if (off > el->size || n > el->size - off)
		return mfs_error(err, EIO, "internal error: a read beyond the new elements");
	if (el->at >= el->nruns || el->runs[el->at].first * el->esize > off)
		el->at = 0;  /* asked from the start again */
	while (n) {
		const struct mfs_run *r = &el->runs[el->at];
		uint64_t b0 = r->first * el->esize, b1 = b0 + r->count * el->esize;
		if (off >= b1) {
			el->at++;
			continue;
		}
		uint64_t k = b1 - off < n ? b1 - off : n;
		memcpy(out, (const uint8_t *)r->bytes + (off - b0), (size_t)k);
		out += k;
		off += k;
		n -= k;
	}
	return 0;
}

/* The pickle with the view's sizes, strides and numel for dims. */
static int new_pickle(const struct pt *pt, const struct pt_view *w, const struct mfs_edit *e,
		      uint64_t nelem, struct mfs_buf *out, struct mfs_err *err)
{
	const struct pk *pk = &pt->pk;
	uint64_t *strides = malloc((e->ndim ? e->ndim : 1) * sizeof(*strides));
	struct mfs_buf sz = {0}, sd = {0}, ne = {0};
	int r = strides ? 0 : -ENOMEM;
	uint64_t acc = 1;  /* contiguous strides, as torch makes them */
	for (uint32_t i = e->ndim; r == 0 && i-- > 0;) {
		strides[i] = acc;
		acc *= e->dims[i] ? e->dims[i] : 1;
	}
	if (r == 0 && (r = tuple_ops(&sz, e->dims, e->ndim)) == 0 &&
	    (r = tuple_ops(&sd, strides, e->ndim)) == 0)
		r = pt_int_opcode(&ne, nelem);
	if (r == 0) {
		const struct pk_val *s = &pk->v[pt_elem(pk, &pk->v[w->args], 2)];
		const struct pk_val *t = &pk->v[pt_elem(pk, &pk->v[w->args], 3)];
		const struct pk_val *n = &pk->v[numel_of(pk, w)];
		struct pt_span sp[3] = {{s->off, s->len, (const uint8_t *)sz.p, sz.len},
					{t->off, t->len, (const uint8_t *)sd.p, sd.len},
					{n->off, n->len, (const uint8_t *)ne.p, ne.len}};
		r = pt_splice(pk, sp, 3, out);
	}
	free(strides);
	mfs_buf_free(&sz);
	mfs_buf_free(&sd);
	mfs_buf_free(&ne);
	return r < 0 ? mfs_error(err, ENOMEM, "out of memory") : 0;
}

int pt_reshape(struct mfs_model *m, const struct pt *pt, const struct mfs_tensor *t,
	       const struct mfs_edit *e, struct mfs_patch *p, struct mfs_err *err)
{
	const struct pt_view *w = &pt->views[t->tag];
	const struct pt_storage *st = &pt->st[w->storage];
	if (!pt_reshapable(pt, t) || e->dtype != t->dtype)
		return mfs_error(err, EINVAL, "this tensor's shape cannot change (only a row-major tensor that alone covers its storage can)");
	uint64_t nelem = 1, bytes;
	for (uint32_t i = 0; i < e->ndim; i++)
		if (__builtin_mul_overflow(nelem, e->dims[i], &nelem))
			return mfs_error(err, EINVAL, "the new shape overflows");
	if (__builtin_mul_overflow(nelem, (uint64_t)st->esize, &bytes))
		return mfs_error(err, EINVAL, "the new shape overflows");
	struct mfs_buf pkl = {0};
	int r = new_pickle(pt, w, e, nelem, &pkl, err);
	uint8_t *keep = r < 0 ? NULL : mfs_patch_keep(p, pkl.len ? pkl.len : 1);
	struct elems *el = r < 0 ? NULL : mfs_patch_keep(p, sizeof(*el));
	struct mfs_run *runs = r < 0 ? NULL : mfs_patch_keep(p, (e->nruns ? e->nruns : 1) * sizeof(*runs));
	if (r == 0 && (!keep || !el || !runs))
		r = mfs_error(err, ENOMEM, "out of memory");
	if (r < 0) {
		mfs_buf_free(&pkl);
		return r;
	}
	memcpy(keep, pkl.p, pkl.len);
	memcpy(runs, e->runs, e->nruns * sizeof(*runs));
	*el = (struct elems){runs, e->nruns, 0, st->esize, bytes};
	struct mfs_zip_put puts[2] = {
		{.member = pt->pkl_member, .src = {pkl.len, mfs_zip_mem_read, keep}},
		{.member = st->member, .src = {bytes, elems_read, el}},
	};
	mfs_buf_free(&pkl);
	if (puts[0].member > puts[1].member) {
		struct mfs_zip_put x = puts[0];
		puts[0] = puts[1];
		puts[1] = x;
	}
	return mfs_zip_replace(p, m->base, m->size, &pt->zip, puts, 2, 64, err);
}
