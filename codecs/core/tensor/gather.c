/* Gathers (edit.h): new values held in the opposite order to the tensor's
 * storage, brought to storage order a block at a time where a diff or a
 * commit needs them. Storage is the row-major order of g->dims; g->in holds
 * the row-major order of the reversed dims, so the storage element with
 * index (i0, ..., in-1) is at offset sum(ik * prod(dims[0..k-1])) of in. */
#include <string.h>

#include "gather.h"
#include "tensor.h"

void mfs_gather_init(struct mfs_gather *g, const void *in, unsigned esize, uint32_t ndim,
		     const uint64_t *dims, bool reversed)
{
	g->in = in;
	g->esize = esize;
	g->ndim = ndim;
	for (uint32_t k = 0; k < ndim; k++)
		g->dims[k] = reversed ? dims[ndim - 1 - k] : dims[k];
}

/* 2-D: storage is the b x a transpose of in, a row-major a x b matrix. Its
 * rows are in's columns: a cut first row, whole rows by the tiled
 * transpose, a cut last row. */
static void gather2(const struct mfs_gather *g, uint64_t first, uint64_t n, uint8_t *out)
{
	unsigned es = g->esize;
	uint64_t a = g->dims[1], b = g->dims[0];
	uint64_t s = first, end = first + n;
	while (s < end) {
		uint64_t i = s / a, j = s % a;
		uint64_t whole = j == 0 ? (end - s) / a : 0;
		if (whole) {
			/* out[(i' - i) * a + j'] = in[j' * b + i'] for rows i' of storage */
			mfs_transpose(g->in + i * es, b, out, a, a, whole, es);
			out += whole * a * es;
			s += whole * a;
			continue;
		}
		uint64_t j1 = end - s < a - j ? j + (end - s) : a;
		mfs_transpose(g->in + (j * b + i) * es, b, out, 1, j1 - j, 1, es);
		out += (j1 - j) * es;
		s += j1 - j;
	}
}

/* Any rank: an odometer over the storage index keeping the offset in in. */
static void gather_nd(const struct mfs_gather *g, uint64_t first, uint64_t n, uint8_t *out)
{
	unsigned es = g->esize;
	uint32_t nd = g->ndim;
	uint64_t idx[MFS_GATHER_MAX_DIMS], stride[MFS_GATHER_MAX_DIMS], st = 1, at = 0, r = first;
	for (uint32_t k = 0; k < nd; k++) {
		stride[k] = st;
		st *= g->dims[k];
	}
	for (uint32_t k = nd; k-- > 0;) {
		idx[k] = r % g->dims[k];
		r /= g->dims[k];
		at += idx[k] * stride[k];
	}
	for (uint64_t i = 0; i < n; i++) {
		memcpy(out + i * es, g->in + at * es, es);
		for (uint32_t k = nd; k-- > 0;) {
			if (++idx[k] < g->dims[k]) {
				at += stride[k];
				break;
			}
			at -= (idx[k] - 1) * stride[k];
			idx[k] = 0;
		}
	}
}

void mfs_gather_elems(const struct mfs_gather *g, uint64_t first, uint64_t n, uint8_t *out)
{
	if (n == 0)
		return;
	if (g->ndim == 2)
		gather2(g, first, n, out);
	else
		gather_nd(g, first, n, out);
}

void mfs_gather_bytes(const struct mfs_gather *g, uint64_t off, uint64_t len, uint8_t *out)
{
	unsigned es = g->esize;
	uint8_t one[64];
	if (len == 0 || es == 0 || es > sizeof(one))
		return;
	/* A cut first element, whole elements in place, a cut last element. */
	uint64_t e = off / es, cut = off % es;
	if (cut) {
		mfs_gather_elems(g, e, 1, one);
		uint64_t k = es - cut < len ? es - cut : len;
		memcpy(out, one + cut, (size_t)k);
		out += k;
		len -= k;
		e++;
	}
	uint64_t whole = len / es;
	mfs_gather_elems(g, e, whole, out);
	out += whole * es;
	len -= whole * es;
	if (len) {
		mfs_gather_elems(g, e + whole, 1, one);
		memcpy(out, one, (size_t)len);
	}
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
