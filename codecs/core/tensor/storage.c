/* Reading tensor elements in storage order: from raw storage (swapped if
 * big-endian) or through a codec's custom storage ops. Called inside
 * mfs_guarded(). */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "tensor.h"

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
