/* Reading .npz members through the archive's inflate cursors (core/zip/):
 * a deflated .npy member's elements (byte-swapped when the member is
 * big-endian), and a member's bytes as they are (a file under files/). */
#include "bytes.h"
#include "numpy.h"

int npz_member_read(const struct mfs_model *m, uint32_t i, uint64_t off, uint64_t len,
		    uint8_t *out, struct mfs_err *err)
{
	const struct npz *z = m->priv;
	return mfs_zip_read_member(z->reader, i, off, len, out, err);
}

static int deflated_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			 uint64_t count, void *out, struct mfs_err *err)
{
	const struct npz *z = m->priv;
	const struct mfs_npy_head *h = &z->heads[t->tag];
	int r = npz_member_read(m, (uint32_t)t->tag, h->data_off + first * t->esize,
				count * t->esize, out, err);
	if (r == 0 && h->swap)
		mfs_swap_elems(out, count * t->esize / h->swap, h->swap);
	return r;
}

const struct mfs_tensor_ops npz_deflated_ops = {.read = deflated_read};

static int member_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		       uint64_t count, void *out, struct mfs_err *err)
{
	return npz_member_read(m, (uint32_t)t->tag, first, count, out, err);
}

const struct mfs_tensor_ops npz_member_ops = {.read = member_read};
