/* Zip edits as patches (edit.h): a stored member's CRC-32 brought up to
 * date from the changed bytes alone, in its local header, central
 * directory entry and data descriptor; members given new content (made by
 * zip_stream.c), with their sizes and CRC-32 where each keeps them and the
 * offsets of every record after them moved (their padding resized to keep
 * their data aligned, when asked), and the end records. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "zip_impl.h"

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

/* The local header at d (a copy of member zm's) given the new CRC-32 and
 * sizes, where it keeps them. */
static int put_local(const struct mfs_zip_member *zm, uint8_t *d, const struct zip_new *nw,
		     struct mfs_err *err)
{
	int r = 0;
	if (mfs_zip_lh_crc(zm))
		mfs_put_le32(d + 14, nw->crc);
	if (!(zm->flags & 8) || zm->lh_sizes) {
		r = put_field(d, zm->local_off, zm->lh_csize_at, 18, nw->clen, err);
		if (r == 0)
			r = put_field(d, zm->local_off, zm->lh_usize_at, 22, nw->usize, err);
	}
	return r;
}

/* Member zm's data descriptor (dd_len != 0) given the new CRC-32 and
 * sizes, as a span of p. */
static int put_descriptor(struct mfs_patch *p, const uint8_t *base,
			  const struct mfs_zip_member *zm, const struct zip_new *nw,
			  struct mfs_err *err)
{
	uint64_t at = zm->data_off + zm->csize;
	uint8_t *dd = mfs_patch_alloc(p, at, zm->dd_len, zm->dd_len);
	if (!dd)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(dd, base + at, zm->dd_len);
	uint8_t *c = dd + (mfs_zip_dd_crc_at(zm) - at);
	mfs_put_le32(c, nw->crc);
	if (zm->dd_len >= 20) {  /* 8-byte sizes */
		mfs_put_le64(c + 4, nw->clen);
		mfs_put_le64(c + 12, nw->usize);
	} else if (nw->clen >= 0xFFFFFFFFu || nw->usize >= 0xFFFFFFFFu) {
		return mfs_error(err, EFBIG, "the member's data descriptor has no room for %llu bytes",
				 (unsigned long long)nw->usize);
	} else {
		mfs_put_le32(c + 4, (uint32_t)nw->clen);
		mfs_put_le32(c + 8, (uint32_t)nw->usize);
	}
	return 0;
}

/* Where member x's local header has an MFS_ZIP_PAD_ID field: its offset in
 * the header (0: none) and its length. */
static uint64_t pad_field(const uint8_t *base, const struct mfs_zip_member *x, uint32_t *len)
{
	const uint8_t *h = base + x->local_off;
	uint64_t q = 30 + (uint64_t)mfs_le16(h + 26), end = q + mfs_le16(h + 28);
	while (end - q >= 4 && mfs_le16(h + q + 2) <= end - q - 4) {
		if (mfs_le16(h + q) == MFS_ZIP_PAD_ID) {
			*len = mfs_le16(h + q + 2);
			return q;
		}
		q += 4 + (uint64_t)mfs_le16(h + q + 2);
	}
	return 0;
}

/* Member x's local header at new_local: its padding field resized so that
 * its data starts at a multiple of align as it did (when it did and has
 * one), with the new CRC-32 and sizes when nw is set; a span of p when it
 * changes. *change: how much longer it gets (modulo 2^64). */
static int new_header(struct mfs_patch *p, const uint8_t *base, const struct mfs_zip_member *x,
		      uint32_t align, uint64_t new_local, const struct zip_new *nw,
		      uint64_t *change, struct mfs_err *err)
{
	uint64_t lhl = x->data_off - x->local_off, xl = mfs_le16(base + x->local_off + 28);
	uint32_t pad = 0, npad = 0;
	uint64_t fb = align && x->data_off % align == 0 ? pad_field(base, x, &pad) : 0;
	if (fb) {
		npad = (uint32_t)((align - (new_local + lhl - pad) % align) % align);
		if (xl - pad + npad > 0xFFFF)
			npad = pad;  /* no room: it stays as it is */
	}
	*change = (uint64_t)npad - pad;
	if (!nw && npad == pad)
		return 0;
	uint8_t *d = mfs_patch_alloc(p, x->local_off, lhl, lhl - pad + npad);
	uint8_t *h = npad == pad ? d : malloc((size_t)lhl);
	if (!d || !h) {
		if (h != d)
			free(h);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	/* The fields first, in the header as it was (a copy of its own when
	 * the padding shrinks it); then the padding. */
	memcpy(h, base + x->local_off, (size_t)lhl);
	int r = nw ? put_local(x, h, nw, err) : 0;
	if (r < 0 || npad == pad) {
		if (h != d)
			free(h);
		return r;
	}
	uint64_t after = fb + 4 + pad;
	memcpy(d, h, (size_t)(fb + 4));
	memset(d + fb + 4, 'Z', npad);
	memcpy(d + fb + 4 + npad, h + after, (size_t)(lhl - after));
	free(h);
	mfs_put_le16(d + fb + 2, (uint16_t)npad);
	mfs_put_le16(d + 28, (uint16_t)(xl - pad + npad));
	return 0;
}

/* Member x's new data: the first pass's kept bytes, or its generator. */
static int put_data(struct mfs_patch *p, const struct mfs_zip_member *x,
		    const struct zip_new *nw, struct mfs_err *err)
{
	int r = 0;
	if (nw->gen)
		r = mfs_patch_generated(p, x->data_off, x->csize, nw->gen, nw->clen);
	else if (nw->clen || x->csize)
		r = mfs_patch_ref(p, x->data_off, x->csize, nw->data, nw->clen);
	return r < 0 ? mfs_error(err, ENOMEM, "out of memory") : 0;
}

/* Member x's central directory entry in c (the copy of everything from
 * the directory on) given its new CRC-32 and sizes. */
static int put_central(uint8_t *c, const struct mfs_zip *a, const struct mfs_zip_member *x,
		       const struct zip_new *nw, struct mfs_err *err)
{
	uint64_t e = x->cd_off - a->cd_off;
	mfs_put_le32(c + e + 16, nw->crc);
	int r = put_field(c, a->cd_off, x->cd_csize_at, e + 20, nw->clen, err);
	return r < 0 ? r : put_field(c, a->cd_off, x->cd_usize_at, e + 24, nw->usize, err);
}

/* Member x given the new content put: its record, and its central
 * directory entry in c. *grow: how much longer the record gets. */
static int replace_one(struct mfs_patch *p, const uint8_t *base, uint8_t *c,
		       const struct mfs_zip *a, const struct mfs_zip_member *x,
		       const struct mfs_zip_put *put, uint32_t align, uint64_t new_local,
		       uint64_t *grow, struct mfs_err *err)
{
	struct zip_new nw;
	int r = mfs_zip_writable(x, err);
	if (r == 0)
		r = zip_compress(p, base, x, put, &nw, err);
	if (r == 0)
		r = put_data(p, x, &nw, err);
	if (r == 0)
		r = new_header(p, base, x, align, new_local, &nw, grow, err);
	if (r == 0 && (x->flags & 8))
		r = put_descriptor(p, base, x, &nw, err);
	if (r == 0)
		r = put_central(c, a, x, &nw, err);
	*grow += nw.clen - x->csize;
	return r;
}

static int by_local(const void *x, const void *y)
{
	const struct mfs_zip_member *a = *(struct mfs_zip_member *const *)x;
	const struct mfs_zip_member *b = *(struct mfs_zip_member *const *)y;
	return a->local_off < b->local_off ? -1 : a->local_off > b->local_off;
}

/* The records in file order, each with its put (or NULL). */
struct walk {
	const struct mfs_zip_member **rec;
	const struct mfs_zip_put **put;   /* by member index */
};

static int walk_init(struct walk *w, const struct mfs_zip *a, const struct mfs_zip_put *puts,
		     size_t n, struct mfs_err *err)
{
	w->rec = malloc((a->n ? a->n : 1) * sizeof(*w->rec));
	w->put = calloc(a->n ? a->n : 1, sizeof(*w->put));
	if (!w->rec || !w->put)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint32_t j = 0; j < a->n; j++)
		w->rec[j] = &a->mem[j];
	qsort(w->rec, a->n, sizeof(*w->rec), by_local);
	for (size_t k = 0; k < n; k++) {
		if (puts[k].member >= a->n || w->put[puts[k].member])
			return mfs_error(err, EINVAL, "internal error: member %u replaced twice or missing",
					 puts[k].member);
		w->put[puts[k].member] = &puts[k];
	}
	return 0;
}

/* The end records in c given the directory's move by delta. */
static int put_ends(uint8_t *c, const struct mfs_zip *a, uint64_t delta, struct mfs_err *err)
{
	uint8_t *eocd = c + (a->eocd_off - a->cd_off);
	if (a->z64_off != UINT64_MAX) {
		mfs_put_le64(c + (a->z64_off - a->cd_off) + 48, a->cd_off + delta);
		mfs_put_le64(c + (a->z64loc_off - a->cd_off) + 8, a->z64_off + delta);
	}
	if (mfs_le32(eocd + 16) != 0xFFFFFFFFu || a->z64_off == UINT64_MAX)
		return put_field(eocd, 0, 0, 16, a->cd_off + delta, err);
	return 0;
}

int mfs_zip_replace(struct mfs_patch *p, const uint8_t *base, uint64_t size,
		    const struct mfs_zip *a, const struct mfs_zip_put *puts, size_t n, uint32_t align,
		    struct mfs_err *err)
{
	struct walk w = {0};
	int r = walk_init(&w, a, puts, n, err);
	uint64_t tail = size - a->cd_off;
	uint8_t *c = r == 0 ? mfs_patch_alloc(p, a->cd_off, tail, tail) : NULL;
	if (r == 0 && !c)
		r = mfs_error(err, ENOMEM, "out of memory");
	if (c)
		memcpy(c, base + a->cd_off, (size_t)tail);
	/* Each record moves by what the ones before it grew (modulo 2^64). */
	uint64_t delta = 0;
	for (uint32_t k = 0; k < a->n && r == 0; k++) {
		const struct mfs_zip_member *x = w.rec[k];
		const struct mfs_zip_put *put = w.put[x - a->mem];
		uint64_t new_local = x->local_off + delta, grow = 0;
		if (put)
			r = replace_one(p, base, c, a, x, put, align, new_local, &grow, err);
		else if (delta && align)
			r = new_header(p, base, x, align, new_local, NULL, &grow, err);
		if (r == 0 && new_local != x->local_off)
			r = put_field(c, a->cd_off, x->cd_off_at, x->cd_off - a->cd_off + 42, new_local,
				      err);
		delta += grow;
	}
	if (r == 0)
		r = put_ends(c, a, delta, err);
	free(w.rec);
	free(w.put);
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

int mfs_zip_mem_read(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err)
{
	(void)err;
	memcpy(out, (const uint8_t *)ctx + off, (size_t)n);
	return 0;
}
