/* .npz edits as patches: a stored member's values in place, with its CRC-32
 * brought up to date (core/zip/); any other change (a deflated member, a
 * new shape) gives the member new content, which the zip room compresses
 * a window at a time: the member's old content with the changed elements
 * written over it, or the new array straight from what was written. */
#include <errno.h>
#include <string.h>

#include "numpy.h"

/* The edit's runs of elements as byte runs of member content, kept by p
 * (their bytes are the edit's, which outlive it). */
static int byte_runs(struct mfs_patch *p, const struct mfs_npy_head *h,
		     const struct mfs_tensor *t, const struct mfs_edit *e,
		     struct mfs_zip_put *put, struct mfs_err *err)
{
	struct mfs_zip_run *runs = mfs_patch_keep(p, (e->nruns ? e->nruns : 1) * sizeof(*runs));
	if (!runs)
		return mfs_error(err, ENOMEM, "out of memory");
	for (size_t k = 0; k < e->nruns; k++) {
		const struct mfs_run *r = &e->runs[k];
		if (r->first > t->nelem || r->count > t->nelem - r->first || !r->bytes)
			return mfs_error(err, EINVAL, "internal error: run beyond the tensor");
		runs[k] = (struct mfs_zip_run){h->data_off + r->first * t->esize, r->count * t->esize,
					       r->bytes};
	}
	put->runs = runs;
	put->nruns = e->nruns;
	put->swap = h->swap;
	return 0;
}

int npz_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
	     struct mfs_err *err)
{
	const struct npz *z = m->priv;
	if (e->kind != MFS_E_TENSOR || e->tensor >= m->ntensors)
		return mfs_error(err, EACCES, "read-only");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	uint32_t i = (uint32_t)t->tag;
	const struct mfs_zip_member *zm = &z->zip.mem[i];
	const struct mfs_npy_head *h = &z->heads[i];
	int r = mfs_zip_writable(zm, err);
	if (r < 0)
		return r;
	if (zm->method == 0 && !e->reshape) {
		size_t from = p->n;
		r = mfs_patch_raw_runs(p, t, e, err);
		return r < 0 ? r : mfs_zip_patch_crc(p, m->base, zm, from, err);
	}
	struct mfs_zip_put put = {.member = i};
	if (e->reshape) {
		struct npy_new *nw = mfs_patch_keep(p, sizeof(*nw));
		if (!nw)
			return mfs_error(err, ENOMEM, "out of memory");
		r = npy_new_make(nw, p, h, t, e, err);
		put.src = (struct mfs_zip_src){nw->size, npy_new_read, nw};
	} else {
		r = byte_runs(p, h, t, e, &put, err);
	}
	return r < 0 ? r : mfs_zip_replace(p, m->base, m->size, &z->zip, &put, 1, 0, err);
}
