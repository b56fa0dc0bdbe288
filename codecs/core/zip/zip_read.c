/* The structure of a zip archive (PKWARE APPNOTE 6.3): the end of central
 * directory record (and the zip64 locator and record), the central
 * directory, each member's local header and data descriptor. Every offset
 * and size is checked against the file before use; members may not overlap
 * each other or the central directory. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "zip.h"

#define SIG_LOCAL 0x04034b50u
#define SIG_CENTRAL 0x02014b50u
#define SIG_EOCD 0x06054b50u
#define SIG_Z64 0x06064b50u
#define SIG_Z64LOC 0x07064b50u
#define SIG_DESCRIPTOR 0x08074b50u
#define EOCD_LEN 22u
#define CENTRAL_LEN 46u
#define LOCAL_LEN 30u

/* The end record: the last EOCD signature whose comment reaches exactly
 * the end of the file. */
static int find_eocd(const uint8_t *b, uint64_t size, uint64_t *at, struct mfs_err *err)
{
	if (size < EOCD_LEN)
		return mfs_error(err, EINVAL, "truncated: a zip archive needs %u bytes, the file has %llu",
				 EOCD_LEN, (unsigned long long)size);
	uint64_t lo = size > EOCD_LEN + 65535 ? size - EOCD_LEN - 65535 : 0;
	for (uint64_t o = size - EOCD_LEN + 1; o-- > lo;) {
		if (mfs_le32(b + o) == SIG_EOCD && o + EOCD_LEN + mfs_le16(b + o + 20) == size) {
			*at = o;
			return 0;
		}
	}
	return mfs_error(err, EINVAL, "no zip end of central directory record in the last %llu bytes",
			 (unsigned long long)(size - lo));
}

/* The zip64 record, when the locator sits just before the end record. */
static int read_z64(const uint8_t *b, struct mfs_zip *a, uint64_t *count,
		    struct mfs_err *err)
{
	a->z64_off = a->z64loc_off = UINT64_MAX;
	if (a->eocd_off < 20 || mfs_le32(b + a->eocd_off - 20) != SIG_Z64LOC)
		return 0;
	uint64_t loc = a->eocd_off - 20;
	uint64_t z = mfs_le64(b + loc + 8);
	if (mfs_le32(b + loc + 4) != 0 || mfs_le32(b + loc + 16) > 1)
		return mfs_error(err, EINVAL, "multi-disk zip archives are not supported");
	if (z > loc || loc - z < 56 || mfs_le32(b + z) != SIG_Z64)
		return mfs_error(err, EINVAL, "the zip64 locator at byte %llu points to byte %llu, where no zip64 end record is",
				 (unsigned long long)loc, (unsigned long long)z);
	uint64_t rec = mfs_le64(b + z + 4);
	if (rec < 44 || rec > loc - z - 12)
		return mfs_error(err, EINVAL, "the zip64 end record at byte %llu says %llu bytes, %llu are there",
				 (unsigned long long)z, (unsigned long long)rec,
				 (unsigned long long)(loc - z - 12));
	if (mfs_le32(b + z + 16) != 0 || mfs_le32(b + z + 20) != 0)
		return mfs_error(err, EINVAL, "multi-disk zip archives are not supported");
	*count = mfs_le64(b + z + 32);
	a->cd_size = mfs_le64(b + z + 40);
	a->cd_off = mfs_le64(b + z + 48);
	a->z64_off = z;
	a->z64loc_off = loc;
	return 0;
}

/* The zip64 extra field of an entry at x[0, xlen): the 8-byte values of the
 * fields that are 0xFFFFFFFF, in the order usize, csize, offset. Records
 * where each one is (its source offset), or fails on a short field. */
static int zip64_extra(const uint8_t *b, uint64_t x, uint32_t xlen, bool want[3],
		       uint64_t val[3], uint64_t where[3], struct mfs_err *err)
{
	uint64_t end = x + xlen;
	while (x + 4 <= end) {
		uint16_t id = mfs_le16(b + x), n = mfs_le16(b + x + 2);
		if (n > end - x - 4)
			return mfs_error(err, EINVAL, "a zip extra field at byte %llu says %u bytes, %llu are left",
					 (unsigned long long)x, n, (unsigned long long)(end - x - 4));
		if (id == 1) {
			uint64_t p = x + 4, q = p + n;
			for (int k = 0; k < 3; k++) {
				if (!want[k])
					continue;
				if (q - p < 8)
					return mfs_error(err, EINVAL, "the zip64 extra field at byte %llu is too short",
							 (unsigned long long)x);
				val[k] = mfs_le64(b + p);
				where[k] = p;
				want[k] = false;
				p += 8;
			}
		}
		x += 4 + (uint64_t)n;
	}
	for (int k = 0; k < 3; k++)
		if (want[k])
			return mfs_error(err, EINVAL, "a zip entry at byte %llu has a 32-bit field 0xFFFFFFFF and no zip64 value for it",
					 (unsigned long long)(end - xlen));
	return 0;
}

/* One central directory entry at *o (advanced past it). */
static int read_central(const uint8_t *b, uint64_t *o, uint64_t end, struct mfs_zip_member *z,
			struct mfs_err *err)
{
	uint64_t c = *o;
	if (end - c < CENTRAL_LEN || mfs_le32(b + c) != SIG_CENTRAL)
		return mfs_error(err, EINVAL, "expected a zip central directory entry at byte %llu",
				 (unsigned long long)c);
	uint32_t nl = mfs_le16(b + c + 28), xl = mfs_le16(b + c + 30), cl = mfs_le16(b + c + 32);
	if ((uint64_t)nl + xl + cl > end - c - CENTRAL_LEN)
		return mfs_error(err, EINVAL, "the zip central directory entry at byte %llu runs past the directory",
				 (unsigned long long)c);
	memset(z, 0, sizeof(*z));
	z->cd_off = c;
	z->flags = mfs_le16(b + c + 8);
	z->method = mfs_le16(b + c + 10);
	z->crc = mfs_le32(b + c + 16);
	z->csize = mfs_le32(b + c + 20);
	z->usize = mfs_le32(b + c + 24);
	z->local_off = mfs_le32(b + c + 42);
	z->name = (const char *)b + c + CENTRAL_LEN;
	z->name_len = nl;
	bool want[3] = {z->usize == 0xFFFFFFFFu, z->csize == 0xFFFFFFFFu,
			z->local_off == 0xFFFFFFFFu};
	uint64_t val[3] = {0}, where[3] = {0};
	int r = zip64_extra(b, c + CENTRAL_LEN + nl, xl, want, val, where, err);
	if (r < 0)
		return r;
	if (z->usize == 0xFFFFFFFFu)
		z->usize = val[0], z->cd_usize_at = where[0];
	if (z->csize == 0xFFFFFFFFu)
		z->csize = val[1], z->cd_csize_at = where[1];
	if (z->local_off == 0xFFFFFFFFu)
		z->local_off = val[2], z->cd_off_at = where[2];
	*o = c + CENTRAL_LEN + nl + xl + cl;
	return 0;
}

/* The member's local header: its name must be the central one, and its data
 * must end before limit. */
static int read_local(const uint8_t *b, uint64_t limit, struct mfs_zip_member *z,
		      struct mfs_err *err)
{
	uint64_t l = z->local_off;
	if (l > limit || limit - l < LOCAL_LEN || mfs_le32(b + l) != SIG_LOCAL)
		return mfs_error(err, EINVAL, "expected the zip local header of a member at byte %llu",
				 (unsigned long long)l);
	uint32_t nl = mfs_le16(b + l + 26), xl = mfs_le16(b + l + 28);
	if ((uint64_t)nl + xl > limit - l - LOCAL_LEN)
		return mfs_error(err, EINVAL, "the zip local header at byte %llu runs into what follows",
				 (unsigned long long)l);
	if (nl != z->name_len || memcmp(b + l + LOCAL_LEN, z->name, nl) != 0)
		return mfs_error(err, EINVAL, "the zip local header at byte %llu names another member than its central directory entry",
				 (unsigned long long)l);
	z->data_off = l + LOCAL_LEN + nl + xl;
	if (z->csize > limit - z->data_off)
		return mfs_error(err, EINVAL, "truncated: a zip member says %llu bytes at byte %llu, %llu are there",
				 (unsigned long long)z->csize, (unsigned long long)z->data_off,
				 (unsigned long long)(limit - z->data_off));
	if (z->flags & 8) {
		/* The data descriptor after the data: its signature (optional),
		 * then the CRC-32 the central directory has, then the sizes in 8
		 * bytes each (zip64) or 4. Found whole, the member can be
		 * patched or written again. */
		uint64_t dd = z->data_off + z->csize, at = 0;
		if (limit - dd >= 8 && mfs_le32(b + dd) == SIG_DESCRIPTOR && mfs_le32(b + dd + 4) == z->crc)
			at = dd + 4;
		else if (limit - dd >= 4 && mfs_le32(b + dd) == z->crc)
			at = dd;
		if (at && limit - at >= 20 && mfs_le64(b + at + 4) == z->csize &&
		    mfs_le64(b + at + 12) == z->usize)
			z->dd_len = (uint32_t)(at + 20 - dd);
		else if (at && limit - at >= 12 && mfs_le32(b + at + 4) == z->csize &&
			 mfs_le32(b + at + 8) == z->usize)
			z->dd_len = (uint32_t)(at + 12 - dd);
		z->lh_crc = z->crc && mfs_le32(b + l + 14) == z->crc;
		z->lh_sizes = z->usize && mfs_le32(b + l + 18) == z->csize &&
			      mfs_le32(b + l + 22) == z->usize;
		return 0;  /* the local sizes are unused */
	}
	bool want[3] = {mfs_le32(b + l + 22) == 0xFFFFFFFFu, mfs_le32(b + l + 18) == 0xFFFFFFFFu,
			false};
	uint64_t val[3] = {mfs_le32(b + l + 22), mfs_le32(b + l + 18), 0}, where[3] = {0};
	int r = zip64_extra(b, l + LOCAL_LEN + nl, xl, want, val, where, err);
	if (r < 0)
		return r;
	z->lh_usize_at = where[0];
	z->lh_csize_at = where[1];
	if (val[0] != z->usize || val[1] != z->csize || mfs_le32(b + l + 14) != z->crc)
		return mfs_error(err, EINVAL, "the zip local header at byte %llu gives other sizes or CRC than the central directory",
				 (unsigned long long)l);
	return 0;
}

static int by_local(const void *x, const void *y)
{
	const struct mfs_zip_member *a = *(struct mfs_zip_member *const *)x;
	const struct mfs_zip_member *b = *(struct mfs_zip_member *const *)y;
	return a->local_off < b->local_off ? -1 : a->local_off > b->local_off;
}

/* Members in file order may not overlap: each one's local header starts
 * after the previous one's data. */
static int check_overlap(struct mfs_zip *a, struct mfs_err *err)
{
	struct mfs_zip_member **v = malloc((a->n ? a->n : 1) * sizeof(*v));
	if (!v)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < a->n; i++)
		v[i] = &a->mem[i];
	qsort(v, a->n, sizeof(*v), by_local);
	int r = 0;
	for (uint32_t i = 1; i < a->n && r == 0; i++)
		if (v[i]->local_off < v[i - 1]->data_off + v[i - 1]->csize)
			r = mfs_error(err, EINVAL, "zip members overlap: the one at byte %llu starts inside the one at byte %llu",
				      (unsigned long long)v[i]->local_off,
				      (unsigned long long)v[i - 1]->local_off);
	free(v);
	return r;
}

int mfs_zip_read(const uint8_t *b, uint64_t size, struct mfs_zip *a, struct mfs_err *err)
{
	memset(a, 0, sizeof(*a));
	int r = find_eocd(b, size, &a->eocd_off, err);
	if (r < 0)
		return r;
	const uint8_t *e = b + a->eocd_off;
	if (mfs_le16(e + 4) != 0 || mfs_le16(e + 6) != 0 || mfs_le16(e + 8) != mfs_le16(e + 10))
		return mfs_error(err, EINVAL, "multi-disk zip archives are not supported");
	uint64_t count = mfs_le16(e + 10);
	a->cd_size = mfs_le32(e + 12);
	a->cd_off = mfs_le32(e + 16);
	if ((r = read_z64(b, a, &count, err)) < 0)
		return r;
	uint64_t cd_limit = a->z64_off != UINT64_MAX ? a->z64_off : a->eocd_off;
	if (a->cd_off > cd_limit || a->cd_size != cd_limit - a->cd_off)
		return mfs_error(err, EINVAL, "the zip central directory says %llu bytes at byte %llu, expected it to end at byte %llu",
				 (unsigned long long)a->cd_size, (unsigned long long)a->cd_off,
				 (unsigned long long)cd_limit);
	if (count > a->cd_size / CENTRAL_LEN)
		return mfs_error(err, EINVAL, "the zip end record says %llu members, the central directory has room for %llu",
				 (unsigned long long)count, (unsigned long long)(a->cd_size / CENTRAL_LEN));
	a->mem = calloc(count ? count : 1, sizeof(*a->mem));
	if (!a->mem)
		return mfs_error(err, ENOMEM, "out of memory");
	uint64_t o = a->cd_off;
	for (a->n = 0; a->n < count; a->n++) {
		if ((r = read_central(b, &o, cd_limit, &a->mem[a->n], err)) < 0 ||
		    (r = read_local(b, a->cd_off, &a->mem[a->n], err)) < 0)
			return r;
	}
	if (o != cd_limit)
		return mfs_error(err, EINVAL, "%llu bytes after the last zip central directory entry, at byte %llu",
				 (unsigned long long)(cd_limit - o), (unsigned long long)o);
	return check_overlap(a, err);
}

void mfs_zip_free(struct mfs_zip *a)
{
	free(a->mem);
	a->mem = NULL;
	a->n = 0;
}
