/* Reading tensor elements in logical (row-major) or storage order, from raw
 * storage (swapped if big-endian, transposed if column-major) or through a
 * codec's custom storage ops. Called inside mfs_guarded(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "model_impl.h"
#include "view_impl.h"

int mfs_tensor_read_storage(const struct mfs_model *m, const struct mfs_tensor *t,
			    uint64_t first, uint64_t count, void *out, struct mfs_err *err)
{
	if (first > t->nelem || count > t->nelem - first)
		return mfs_error(err, EINVAL, "internal error: elements beyond the tensor");
	if (!count)
		return 0;
	if (t->ops) {
		if (!t->ops->read)
			return mfs_error(err, EIO, "tensor storage cannot be read");
		return t->ops->read(m, t, first, count, out, err);
	}
	memcpy(out, m->base + t->off + first * t->esize, (size_t)(count * t->esize));
	if (t->swap)
		mfs_swap_elems(out, count * t->esize / t->swap, t->swap);
	return 0;
}

uint64_t mfs_tensor_storage_index(const struct mfs_tensor *t, uint64_t r)
{
	if (t->order == MFS_ROW_MAJOR || t->ndim < 2)
		return r;
	/* Column-major: the multi-index of r (row-major), each index times the
	 * product of the dimensions before its own (any rank: no index array). */
	uint64_t s = 0, after = 1;  /* product of the dimensions after i */
	for (uint32_t i = t->ndim; i-- > 0;) {
		uint64_t d = t->dims[i];
		if (!d)
			return 0;
		uint64_t upto = after * d;  /* divides nelem, the product of all */
		s += (r / after) % d * (t->nelem / upto);
		after = upto;
	}
	return s;
}

int mfs_tensor_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err)
{
	if (first > t->nelem || count > t->nelem - first)
		return mfs_error(err, EINVAL, "internal error: elements beyond the tensor");
	if (t->order == MFS_ROW_MAJOR || t->ndim < 2)
		return mfs_tensor_read_storage(m, t, first, count, out, err);
	if (!count)
		return 0;
	unsigned es = t->esize;
	uint8_t *o = out;
	if (t->ops)  /* custom column-major storage: read in order, by bands */
		return mfs_colstream_gather(m, t, first, count, o, err);
	const uint8_t *src = m->base + t->off;
	/* Column-major storage of (d0, ..., dn-1) read in row-major order:
	 * bands of rows for 2-D, a gather (the reversed dims' order) else. */
	if (t->ndim == 2) {
		mfs_colmajor_gather(m, t, first, count, o);
	} else {
		struct mfs_gather g;
		mfs_gather_init(&g, src, es, t->ndim, t->dims, false);
		mfs_gather_elems(&g, first, count, o);
	}
	if (t->swap)
		mfs_swap_elems(out, count * es / t->swap, t->swap);
	return 0;
}

void mfs_reorder(const uint64_t *dims, uint32_t ndim, unsigned es, const void *in, void *out,
		 bool to_col)
{
	uint64_t n = 1;
	for (uint32_t k = 0; k < ndim; k++)
		n *= dims[k];
	if (ndim < 2 || n == 0) {
		memcpy(out, in, (size_t)(n * es));
		return;
	}
	/* out is the storage order of a gather over in: row-major over the
	 * reversed dims when it is column-major. */
	struct mfs_gather g;
	mfs_gather_init(&g, in, es, ndim, dims, to_col);
	mfs_gather_elems(&g, 0, n, out);
}
