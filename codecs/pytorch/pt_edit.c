/* Edits of a torch.save file as patches. Tensor elements go into their
 * storage in place, each where the view's strides put it (a zip record's
 * CRC-32 follows in its local header, central directory and data
 * descriptor: core/zip/). A scalar or string is written into the pickle by
 * replacing only its opcode's bytes (pt_value.c makes them); the pickle
 * is then patched in place when its length stays, else written again (in
 * a zip, as the data.pkl record, every later record moved with its 64-byte
 * alignment kept). A new shape is pt_reshape.c's. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pt_repr.h"
#include "pt_value.h"
#include "pytorch.h"

/* A strided view's runs of elements, each element where its strides put
 * it (consecutive ones as one span). */
static int strided_runs(struct mfs_patch *p, const struct pt *pt, const struct mfs_tensor *t,
			const struct mfs_edit *e, struct mfs_err *err)
{
	const struct pt_view *w = &pt->views[t->tag];
	const struct pt_storage *st = &pt->st[w->storage];
	uint32_t es = st->esize;
	for (size_t k = 0; k < e->nruns; k++) {
		const struct mfs_run *r = &e->runs[k];
		if (r->first > t->nelem || r->count > t->nelem - r->first || !r->bytes)
			return mfs_error(err, EINVAL, "internal error: run beyond the tensor");
		const uint8_t *b = r->bytes;
		for (uint64_t i = 0; i < r->count;) {
			uint64_t at = pt_view_index(w, r->first + i), n = 1;
			while (i + n < r->count && pt_view_index(w, r->first + i + n) == at + n)
				n++;
			if (mfs_patch_ref(p, st->off + at * es, n * es, b + i * es, n * es) < 0)
				return mfs_error(err, ENOMEM, "out of memory");
			i += n;
		}
	}
	return 0;
}

static int edit_tensor(struct mfs_model *m, const struct pt *pt, const struct mfs_edit *e,
		       struct mfs_patch *p, struct mfs_err *err)
{
	if (e->tensor >= m->ntensors)
		return mfs_error(err, EINVAL, "internal error: no such tensor");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	const struct pt_view *w = &pt->views[t->tag];
	const struct pt_storage *st = &pt->st[w->storage];
	if (!(t->flags & MFS_TF_WRITABLE) && !w->overlap)
		return mfs_error(err, EACCES, "an inert object's tensor: read-only");
	if (w->overlap)
		return mfs_error(err, EACCES, "the tensor's elements overlap in its storage (a stride of 0): read-only");
	if (e->reshape)
		return pt_reshape(m, pt, t, e, p, err);
	const struct mfs_zip_member *zm = st->member == UINT32_MAX ? NULL : &pt->zip.mem[st->member];
	int r = zm ? mfs_zip_writable(zm, err) : 0;
	if (r < 0)
		return r;
	size_t from = p->n;
	r = t->ops ? strided_runs(p, pt, t, e, err) : mfs_patch_raw_runs(p, t, e, err);
	if (r < 0 || !zm)
		return r;
	return mfs_zip_patch_crc(p, m->base, zm, from, err);
}

/* Bytes [off, off + n) of a new data.pkl (ctx: its buffer). */
/* The pickle's new bytes nb[0, nn) into the file: in place where its
 * length stays (only the bytes that differ), else rewritten. */
static int put_pickle(struct mfs_model *m, const struct pt *pt, const uint8_t *nb, uint64_t nn,
		      struct mfs_patch *p, struct mfs_err *err)
{
	const uint8_t *old = pt->pk.p;
	uint64_t on = pt->pk.size;
	const struct mfs_zip_member *zm = pt->legacy ? NULL : &pt->zip.mem[pt->pkl_member];
	int r = zm ? mfs_zip_writable(zm, err) : 0;
	if (r < 0)
		return r;
	if (nn == on && pt->pkl_off != UINT64_MAX) {
		uint64_t a = 0, b = on;
		while (a < on && old[a] == nb[a])
			a++;
		while (b > a && old[b - 1] == nb[b - 1])
			b--;
		if (a == b)
			return 0;
		size_t from = p->n;
		if (mfs_patch_put(p, pt->pkl_off + a, b - a, nb + a, b - a) < 0)
			return mfs_error(err, ENOMEM, "out of memory");
		return zm ? mfs_zip_patch_crc(p, m->base, zm, from, err) : 0;
	}
	if (pt->legacy)
		return mfs_patch_put(p, pt->pkl_off, on, nb, nn) < 0
		       ? mfs_error(err, ENOMEM, "out of memory") : 0;
	uint8_t *keep = mfs_patch_keep(p, nn ? nn : 1);
	if (!keep)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(keep, nb, (size_t)nn);
	struct mfs_zip_put put = {.member = pt->pkl_member, .src = {nn, mfs_zip_mem_read, keep}};
	return mfs_zip_replace(p, m->base, m->size, &pt->zip, &put, 1, 64, err);
}

static int edit_value(struct mfs_model *m, const struct pt *pt, const struct mfs_edit *e,
		      struct mfs_patch *p, struct mfs_err *err)
{
	if (e->node >= m->nnodes || !(m->nodes[e->node].flags & MFS_NF_WRITABLE))
		return mfs_error(err, EACCES, "read-only");
	uint32_t v = (uint32_t)m->nodes[e->node].tag;
	if (v >= pt->pk.nv)
		return mfs_error(err, EINVAL, "internal error: no such value");
	uint8_t *nb = NULL;
	uint64_t nn = 0;
	int r = pt_bytes_call(&pt->pk, v) != PK_NIL
		? pt_bytes_rewrite(&pt->pk, v, e->text, e->len, &nb, &nn, err)
		: pt_value_rewrite(&pt->pk, v, e->text, e->len, &nb, &nn, err);
	if (r == 0)
		r = put_pickle(m, pt, nb, nn, p, err);
	free(nb);
	return r;
}

int pt_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
	    struct mfs_err *err)
{
	const struct pt *pt = m->priv;
	if (e->kind == MFS_E_TENSOR)
		return edit_tensor(m, pt, e, p, err);
	if (e->kind == MFS_E_TEXT)
		return edit_value(m, pt, e, p, err);
	return mfs_error(err, EACCES, "read-only");
}
