/* A new shape for a .npy array (a .npy file or an .npz member): its new
 * header, and its elements read straight from the edit's runs (the
 * written data.npy), byte-swapped on the way when the array is big-endian,
 * without a copy of the array. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "numpy.h"

int npy_new_make(struct npy_new *nw, struct mfs_patch *p, const struct mfs_npy_head *h,
		 const struct mfs_tensor *t, const struct mfs_edit *e, struct mfs_err *err)
{
	if (e->dtype != t->dtype)
		return mfs_error(err, EINVAL, "the dtype cannot change (%s, got %s)",
				 mfs_dtype_info(t->dtype)->name, mfs_dtype_info(e->dtype)->name);
	if (e->ndim > MFS_NPY_MAX_DIMS)
		return mfs_error(err, EINVAL, "%u dimensions: at most %u are supported", e->ndim,
				 MFS_NPY_MAX_DIMS);
	uint64_t n = 1, bytes;
	for (uint32_t i = 0; i < e->ndim; i++)
		if (!mfs_mul_ok(n, e->dims[i], &n))
			return mfs_error(err, EINVAL, "the new shape overflows 64 bits");
	if (!mfs_mul_ok(n, t->esize, &bytes) || bytes > SIZE_MAX / 2)
		return mfs_error(err, EFBIG, "%llu elements are too many", (unsigned long long)n);
	uint64_t next = 0;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *r = &e->runs[i];
		if (r->first != next || r->count > n - next || !r->bytes)
			return mfs_error(err, EINVAL, "internal error: a reshape must give every element");
		next += r->count;
	}
	if (next != n)
		return mfs_error(err, EINVAL, "internal error: a reshape gave %llu of %llu elements",
				 (unsigned long long)next, (unsigned long long)n);
	uint8_t head[1024];
	size_t hl = mfs_npy_write_header(h->major, t->dtype, h->bigendian, t->order == MFS_COL_MAJOR,
				     e->ndim, e->dims, head, sizeof(head));
	if (!hl)
		return mfs_error(err, EINVAL, "the new shape does not fit in a .npy header");
	/* The runs array is the edit's (its bytes outlive the patch). */
	uint8_t *hd = mfs_patch_keep(p, hl);
	struct mfs_run *runs = mfs_patch_keep(p, (e->nruns ? e->nruns : 1) * sizeof(*runs));
	if (!hd || !runs)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(hd, head, hl);
	memcpy(runs, e->runs, e->nruns * sizeof(*runs));
	*nw = (struct npy_new){hd, hl, runs, e->nruns, t->esize, h->swap, hl + bytes, 0};
	return 0;
}

/* Bytes [off, off + n) of the elements, from run nw->at on. */
static void elems(struct npy_new *nw, uint64_t off, uint64_t n, uint8_t *out)
{
	if (nw->at >= nw->nruns || off < nw->runs[nw->at].first * nw->esize)
		nw->at = 0;  /* read again from the start */
	while (n) {
		const struct mfs_run *r = &nw->runs[nw->at];
		uint64_t start = r->first * nw->esize, len = r->count * nw->esize;
		if (off >= start + len) {
			nw->at++;
			continue;
		}
		uint64_t k = off - start, m = len - k < n ? len - k : n;
		if (nw->swap)
			mfs_copy_swapped(out, r->bytes, k, m, nw->swap);
		else
			memcpy(out, (const uint8_t *)r->bytes + k, (size_t)m);
		out += m;
		off += m;
		n -= m;
	}
}

int npy_new_read(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err)
{
	struct npy_new *nw = ctx;
	if (off > nw->size || n > nw->size - off)
		return mfs_error(err, EIO, "internal error: a read beyond the new array");
	if (off < nw->hl) {
		uint64_t m = nw->hl - off < n ? nw->hl - off : n;
		memcpy(out, nw->head + off, (size_t)m);
		out += m;
		off += m;
		n -= m;
	}
	if (n)
		elems(nw, off - nw->hl, n, out);
	return 0;
}

/* The elements of a new array as a generated span (a big-endian .npy:
 * swapped as the commit writes them). */
struct elem_gen {
	struct mfs_gen g;       /* first: the patch's */
	struct npy_new *nw;
};

static int elem_gen_read(struct mfs_gen *g, uint64_t from, uint64_t n, uint8_t *out,
			 struct mfs_err *err)
{
	struct npy_new *nw = ((struct elem_gen *)g)->nw;
	return npy_new_read(nw, nw->hl + from, n, out, err);
}

int npy_new_elems(struct mfs_patch *p, struct npy_new *nw, uint64_t off, uint64_t len,
		  struct mfs_err *err)
{
	uint64_t bytes = nw->size - nw->hl;
	int r;
	if (!nw->swap && nw->nruns <= 1) {
		r = bytes || len ? mfs_patch_ref(p, off, len, nw->nruns ? nw->runs[0].bytes : NULL,
						 bytes)
				 : 0;
	} else {
		struct elem_gen *g = mfs_patch_keep(p, sizeof(*g));
		if (!g)
			return mfs_error(err, ENOMEM, "out of memory");
		*g = (struct elem_gen){.g = {.read = elem_gen_read}, .nw = nw};
		r = mfs_patch_generated(p, off, len, &g->g, bytes);
	}
	return r < 0 ? mfs_error(err, ENOMEM, "out of memory") : 0;
}
