/* Zip edits as patches (edit.h): a stored member's CRC-32 brought up to
 * date from the changed bytes alone, in its local header, central
 * directory entry and data descriptor; a member's data replaced, with its
 * sizes and CRC-32 where the member keeps them and the directory after it,
 * whose offsets follow the member's new length. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "zip.h"

/* The CRC-32 of the member's data after the same-size spans p->spans[from,
 * p->n) that fall in it: each changes it by the CRC difference of its old
 * and new bytes, shifted by the bytes that follow it (CRC-32 is affine in
 * its input, and crc32_combine(v, 0, n) is v shifted by n zero bytes). */
static uint32_t patched_crc(const uint8_t *base, const struct mfs_zip_member *zm,
			    const struct mfs_patch *p, size_t from)
{
	uint32_t crc = zm->crc;
	uint64_t end = zm->data_off + zm->csize;
	for (size_t k = from; k < p->n; k++) {
		const struct mfs_span *s = &p->spans[k];
		uint32_t d = 0;
		for (uint64_t o = 0; o < s->len;) {
			uInt n = (uInt)(s->len - o < (1u << 30) ? s->len - o : (1u << 30));
			uint32_t a = (uint32_t)crc32(0, base + s->off + o, n);
			uint32_t b = (uint32_t)crc32(0, s->data + o, n);
			/* Pieces of the difference combine like pieces of data. */
			d = (uint32_t)crc32_combine(d, a ^ b, n);
			o += n;
		}
		crc ^= (uint32_t)crc32_combine(d, 0, (z_off_t)(end - s->off - s->len));
	}
	return crc;
}

/* The member's new CRC-32 everywhere it is written: the central directory,
 * the local header (unless a data descriptor holds it alone), the data
 * descriptor. */
static int put_crc(struct mfs_patch *p, const struct mfs_zip_member *zm, uint32_t crc,
		   struct mfs_err *err)
{
	uint8_t b[4];
	mfs_put_le32(b, crc);
	if ((mfs_zip_lh_crc(zm) && mfs_patch_put(p, zm->local_off + 14, 4, b, 4) < 0) ||
	    ((zm->flags & 8) && mfs_patch_put(p, mfs_zip_dd_crc_at(zm), 4, b, 4) < 0) ||
	    mfs_patch_put(p, zm->cd_off + 16, 4, b, 4) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	return 0;
}

/* A size or offset field: the 8-byte zip64 value at `at` (an offset in the
 * source, rebased to the copy at dst - base), else the 32-bit one at off32. */
static int put_field(uint8_t *dst, uint64_t base, uint64_t at, uint64_t off32, uint64_t v,
		     struct mfs_err *err)
{
	if (at) {
		mfs_put_le64(dst + (at - base), v);
		return 0;
	}
	if (v >= 0xFFFFFFFFu)
		return mfs_error(err, EFBIG, "the member would need zip64 fields this archive does not have (%llu bytes)",
				 (unsigned long long)v);
	mfs_put_le32(dst + off32, (uint32_t)v);
	return 0;
}

/* The local header at d (a copy of the member's) and the data descriptor
 * at dd (a copy too, when the member has one) given the new CRC-32 and
 * sizes: where each kept them. */
static int put_local(const struct mfs_zip_member *zm, uint8_t *d, uint8_t *dd, uint64_t clen,
		     uint64_t usize, uint32_t crc, struct mfs_err *err)
{
	int r = 0;
	if (mfs_zip_lh_crc(zm))
		mfs_put_le32(d + 14, crc);
	if (!(zm->flags & 8) || zm->lh_sizes) {
		r = put_field(d, zm->local_off, zm->lh_csize_at, 18, clen, err);
		if (r == 0)
			r = put_field(d, zm->local_off, zm->lh_usize_at, 22, usize, err);
	}
	if (r < 0 || !(zm->flags & 8))
		return r;
	uint8_t *c = dd + (mfs_zip_dd_crc_at(zm) - (zm->data_off + zm->csize));
	mfs_put_le32(c, crc);
	if (zm->dd_len >= 20) {  /* 8-byte sizes */
		mfs_put_le64(c + 4, clen);
		mfs_put_le64(c + 12, usize);
	} else if (clen >= 0xFFFFFFFFu || usize >= 0xFFFFFFFFu) {
		return mfs_error(err, EFBIG, "the member's data descriptor has no room for %llu bytes",
				 (unsigned long long)usize);
	} else {
		mfs_put_le32(c + 4, (uint32_t)clen);
		mfs_put_le32(c + 8, (uint32_t)usize);
	}
	return 0;
}

int mfs_zip_replace_data(struct mfs_patch *p, const uint8_t *base, uint64_t size,
			 const struct mfs_zip *a, uint32_t i, const uint8_t *data, uint64_t clen,
			 uint64_t usize, uint32_t crc, struct mfs_err *err)
{
	const struct mfs_zip_member *zm = &a->mem[i];
	int r = mfs_zip_writable(zm, err);
	if (r < 0)
		return r;
	uint64_t lh = zm->data_off - zm->local_off, ddl = zm->flags & 8 ? zm->dd_len : 0;
	uint8_t *d = mfs_patch_alloc(p, zm->local_off, lh + zm->csize + ddl, lh + clen + ddl);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(d, base + zm->local_off, (size_t)lh);
	memcpy(d + lh, data, (size_t)clen);
	memcpy(d + lh + clen, base + zm->data_off + zm->csize, ddl);
	r = put_local(zm, d, d + lh + clen, clen, usize, crc, err);
	if (r < 0)
		return r;
	/* The member moves nothing before it; what follows shifts by delta. */
	uint64_t delta = clen - zm->csize;  /* modulo 2^64 */
	uint64_t tail = size - a->cd_off;
	uint8_t *c = mfs_patch_alloc(p, a->cd_off, tail, tail);
	if (!c)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(c, base + a->cd_off, (size_t)tail);
	for (uint32_t j = 0; j < a->n && r == 0; j++) {
		const struct mfs_zip_member *x = &a->mem[j];
		uint8_t *e = c + (x->cd_off - a->cd_off);
		if (j == i) {
			mfs_put_le32(e + 16, crc);
			r = put_field(c, a->cd_off, x->cd_csize_at, x->cd_off - a->cd_off + 20, clen,
				      err);
			if (r == 0)
				r = put_field(c, a->cd_off, x->cd_usize_at,
					      x->cd_off - a->cd_off + 24, usize, err);
		}
		if (r == 0 && x->local_off > zm->local_off)
			r = put_field(c, a->cd_off, x->cd_off_at, x->cd_off - a->cd_off + 42,
				      x->local_off + delta, err);
	}
	if (r < 0)
		return r;
	uint8_t *eocd = c + (a->eocd_off - a->cd_off);
	if (a->z64_off != UINT64_MAX) {
		mfs_put_le64(c + (a->z64_off - a->cd_off) + 48, a->cd_off + delta);
		mfs_put_le64(c + (a->z64loc_off - a->cd_off) + 8, a->z64_off + delta);
	}
	if (mfs_le32(eocd + 16) != 0xFFFFFFFFu || a->z64_off == UINT64_MAX)
		r = put_field(eocd, 0, 0, 16, a->cd_off + delta, err);
	return r;
}

int mfs_zip_writable(const struct mfs_zip_member *zm, struct mfs_err *err)
{
	if ((zm->flags & 8) && !zm->dd_len)
		return mfs_error(err, EROFS, "the member's sizes are in a data descriptor that was not found whole after its data");
	return 0;
}

int mfs_zip_patch_crc(struct mfs_patch *p, const uint8_t *base, const struct mfs_zip_member *zm,
		      size_t from, struct mfs_err *err)
{
	int r = mfs_zip_writable(zm, err);
	return r < 0 ? r : put_crc(p, zm, patched_crc(base, zm, p, from), err);
}
