/* .npz edits as patches: a stored member's values in place, with its CRC-32
 * brought up to date (core/zip/); any other change (a deflated member, a
 * new shape) writes the member again and the archive's directory after
 * it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "numpy.h"

static int deflate_all(const uint8_t *in, uint64_t n, struct mfs_patch *p, uint8_t **out,
		       uint64_t *olen, struct mfs_err *err)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return mfs_error(err, ENOMEM, "out of memory (deflate)");
	uint64_t bound = n + n / 1000 + 64 + (n >> 12) * 5;  /* >= deflateBound, any size */
	uint8_t *o = mfs_patch_keep(p, bound);
	if (!o) {
		deflateEnd(&zs);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	uint64_t ip = 0, op = 0;
	int zr;
	do {
		uint64_t il = n - ip < (1u << 30) ? n - ip : (1u << 30);
		uint64_t ol = bound - op < (1u << 30) ? bound - op : (1u << 30);
		zs.next_in = (Bytef *)in + ip;
		zs.avail_in = (uInt)il;
		zs.next_out = o + op;
		zs.avail_out = (uInt)ol;
		zr = deflate(&zs, ip + il == n ? Z_FINISH : Z_NO_FLUSH);
		ip += il - zs.avail_in;
		op += ol - zs.avail_out;
	} while (zr == Z_OK || (zr == Z_BUF_ERROR && op < bound));
	deflateEnd(&zs);
	if (zr != Z_STREAM_END)
		return mfs_error(err, EIO, "internal error: deflate failed (%d)", zr);
	*out = o;
	*olen = op;
	return 0;
}

/* The member's new uncompressed content: the whole array again (reshape),
 * or its old content with the runs written over it. Caller frees. */
static int new_content(const struct mfs_model *m, const struct mfs_tensor *t,
		       const struct mfs_edit *e, struct mfs_patch *p, uint8_t **out,
		       uint64_t *len, bool *owned, struct mfs_err *err)
{
	const struct npz *z = m->priv;
	uint32_t i = (uint32_t)t->tag;
	const struct mfs_npy_head *h = &z->heads[i];
	const struct mfs_zip_member *zm = &z->zip.mem[i];
	if (e->reshape) {
		*owned = false;
		return npy_rewrite(p, h, t, e, out, len, err);
	}
	if (zm->usize > SIZE_MAX / 2)
		return mfs_error(err, EFBIG, "the member is too large to compress again");
	uint8_t *b = malloc(zm->usize ? (size_t)zm->usize : 1);
	if (!b)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = npz_member_read(m, i, 0, zm->usize, b, err);
	for (size_t k = 0; r == 0 && k < e->nruns; k++) {
		const struct mfs_run *run = &e->runs[k];
		if (run->first > t->nelem || run->count > t->nelem - run->first) {
			r = mfs_error(err, EINVAL, "internal error: run beyond the tensor");
			break;
		}
		uint8_t *at = b + h->data_off + run->first * t->esize;
		memcpy(at, run->bytes, (size_t)(run->count * t->esize));
		if (h->swap)
			mfs_swap_elems(at, run->count * t->esize / h->swap, h->swap);
	}
	if (r < 0) {
		free(b);
		return r;
	}
	*out = b;
	*len = zm->usize;
	*owned = true;
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
	int r = mfs_zip_writable(zm, err);
	if (r < 0)
		return r;
	if (zm->method == 0 && !e->reshape) {
		size_t from = p->n;
		r = mfs_patch_raw_runs(p, t, e, err);
		return r < 0 ? r : mfs_zip_patch_crc(p, m->base, zm, from, err);
	}
	uint8_t *content;
	uint64_t len;
	bool owned;
	r = new_content(m, t, e, p, &content, &len, &owned, err);
	if (r < 0)
		return r;
	uint32_t crc = 0;
	for (uint64_t o = 0; o < len;) {
		uInt n = (uInt)(len - o < (1u << 30) ? len - o : (1u << 30));
		crc = (uint32_t)crc32(crc, content + o, n);
		o += n;
	}
	const uint8_t *data = content;
	uint64_t clen = len;
	uint8_t *packed = NULL;
	if (zm->method == 8 && (r = deflate_all(content, len, p, &packed, &clen, err)) == 0)
		data = packed;
	if (r == 0)
		r = mfs_zip_replace_data(p, m->base, m->size, &z->zip, i, data, clen, len, crc, err);
	if (owned)
		free(content);
	return r;
}
