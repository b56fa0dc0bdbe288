/* Reading tensor elements in logical (row-major) order: storage order as it
 * is, or column-major storage transposed (bands of rows for 2-D raw
 * matrices, bands over the stream for custom storage, a gather else),
 * swapped if big-endian. Called inside mfs_guarded(). */
#include <errno.h>

#include "bytes.h"
#include "tensor.h"

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
