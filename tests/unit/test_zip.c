/* Unit tests of codecs/core/zip/: mfs_zip_replace giving a stored member
 * new content of another length, with and without alignment: the record
 * after it keeps its data 64-byte aligned through its 0x4246 padding field
 * (as torch.save writes records) when asked, keeps its bytes otherwise, and
 * the archive read again holds the new content with its CRC-32; a
 * deflated member read through the inflate cursors (zip_flate.h, whichever
 * library the build inflates with) in reads of every size and order, and
 * refused when its CRC-32, its sizes or its stream are wrong. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "helpers.h"
#include "zip.h"

#define ALIGN 64u

/* A record of a member at the end of buf (*len bytes so far): method,
 * its data (n bytes), its uncompressed size and CRC-32; its data padded to
 * ALIGN by a 0x4246 field when pad; its central entry at the end of cd
 * (*cdl). */
static void add_raw(uint8_t *buf, size_t *len, uint8_t *cd, size_t *cdl, const char *name,
		    uint16_t method, const uint8_t *data, uint32_t n, uint32_t usize, uint32_t crc,
		    int pad)
{
	size_t nl = strlen(name), at = *len;
	uint16_t xl = 0;
	if (pad)
		xl = (uint16_t)(4 + (ALIGN - (at + 30 + nl + 4) % ALIGN) % ALIGN);
	uint8_t *h = buf + at;
	memset(h, 0, 30);
	mfs_put_le32(h, 0x04034b50u);
	mfs_put_le16(h + 4, 20);
	mfs_put_le16(h + 8, method);
	mfs_put_le32(h + 14, crc);
	mfs_put_le32(h + 18, n);
	mfs_put_le32(h + 22, usize);
	mfs_put_le16(h + 26, (uint16_t)nl);
	mfs_put_le16(h + 28, xl);
	memcpy(h + 30, name, nl);
	if (pad) {
		mfs_put_le16(h + 30 + nl, MFS_ZIP_PAD_ID);
		mfs_put_le16(h + 32 + nl, (uint16_t)(xl - 4));
		memset(h + 34 + nl, 'Z', xl - 4u);
	}
	memcpy(h + 30 + nl + xl, data, n);
	*len = at + 30 + nl + xl + n;
	uint8_t *c = cd + *cdl;
	memset(c, 0, 46);
	mfs_put_le32(c, 0x02014b50u);
	mfs_put_le16(c + 4, 20);
	mfs_put_le16(c + 6, 20);
	mfs_put_le16(c + 10, method);
	mfs_put_le32(c + 16, crc);
	mfs_put_le32(c + 20, n);
	mfs_put_le32(c + 24, usize);
	mfs_put_le16(c + 28, (uint16_t)nl);
	mfs_put_le32(c + 42, (uint32_t)at);
	memcpy(c + 46, name, nl);
	*cdl += 46 + nl;
}

static void add(uint8_t *buf, size_t *len, uint8_t *cd, size_t *cdl, const char *name,
		const uint8_t *data, uint16_t n, int pad)
{
	add_raw(buf, len, cd, cdl, name, 0, data, n, n, (uint32_t)crc32(0, data, n), pad);
}

/* The end of central directory record after cd (cdl bytes at *len) of n
 * entries: the archive's size. */
static size_t end_record(uint8_t *buf, size_t len, const uint8_t *cd, size_t cdl, uint16_t n)
{
	memcpy(buf + len, cd, cdl);
	uint8_t *e = buf + len + cdl;
	memset(e, 0, 22);
	mfs_put_le32(e, 0x06054b50u);
	mfs_put_le16(e + 8, n);
	mfs_put_le16(e + 10, n);
	mfs_put_le32(e + 12, (uint32_t)cdl);
	mfs_put_le32(e + 16, (uint32_t)len);
	return len + cdl + 22;
}

/* An archive of members a (10 bytes) and b (ALIGN bytes, padded). */
static size_t archive(uint8_t *buf, const uint8_t *bdata)
{
	uint8_t cd[512];
	size_t len = 0, cdl = 0;
	const uint8_t a[10] = "0123456789";
	add(buf, &len, cd, &cdl, "t/data/0", a, sizeof(a), 1);
	add(buf, &len, cd, &cdl, "t/data/1", bdata, ALIGN, 1);
	return end_record(buf, len, cd, cdl, 2);
}

struct src {
	const uint8_t *bytes;
};

static int src_read(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err)
{
	(void)err;
	memcpy(out, ((struct src *)ctx)->bytes + off, (size_t)n);
	return 0;
}

/* Member 0 given 37 new bytes, with alignment align: the new archive. */
static void replace(uint32_t align)
{
	uint8_t buf[2048], bdata[ALIGN], fresh[37];
	for (unsigned k = 0; k < ALIGN; k++)
		bdata[k] = (uint8_t)(k * 7 + 1);
	for (unsigned k = 0; k < sizeof(fresh); k++)
		fresh[k] = (uint8_t)(200 - k);
	size_t size = archive(buf, bdata);
	struct mfs_err err = {0};
	struct mfs_zip z;
	assert_int_equal(mfs_zip_read(buf, size, &z, &err), 0);
	assert_int_equal(z.mem[1].data_off % ALIGN, 0);
	struct src s = {fresh};
	struct mfs_zip_put put = {.member = 0, .src = {sizeof(fresh), src_read, &s}};
	struct mfs_patch p;
	mfs_patch_init(&p);
	assert_int_equal(mfs_zip_replace(&p, buf, size, &z, &put, 1, align, &err), 0);
	assert_int_equal(mfs_patch_sort(&p, &err), 0);
	uint64_t nsize = mfs_patch_new_size(&p, size);
	uint8_t *out = malloc((size_t)nsize);
	assert_non_null(out);
	assert_int_equal(mfs_patch_read(&p, buf, size, 0, nsize, out), 0);
	mfs_patch_free(&p);
	struct mfs_zip y;
	assert_int_equal(mfs_zip_read(out, nsize, &y, &err), 0);
	assert_int_equal(y.n, 2);
	assert_int_equal(y.mem[0].usize, sizeof(fresh));
	assert_int_equal(y.mem[0].crc, (uint32_t)crc32(0, fresh, sizeof(fresh)));
	assert_memory_equal(out + y.mem[0].data_off, fresh, sizeof(fresh));
	assert_memory_equal(out + y.mem[1].data_off, bdata, ALIGN);
	if (align) {
		assert_int_equal(y.mem[1].data_off % ALIGN, 0);
	} else {  /* the record is moved, its bytes kept */
		uint64_t lhl = z.mem[1].data_off - z.mem[1].local_off;
		assert_int_equal(y.mem[1].data_off - y.mem[1].local_off, lhl);
		assert_memory_equal(out + y.mem[1].local_off, buf + z.mem[1].local_off, lhl);
	}
	mfs_zip_free(&y);
	mfs_zip_free(&z);
	free(out);
}

static void replace_aligned(void **state)
{
	(void)state;
	replace(ALIGN);
}

static void replace_kept(void **state)
{
	(void)state;
	replace(0);
}

/* ---- a deflated member read through the archive's inflate cursors ---- */

#define DN 300000u              /* the member's content */

/* An archive of one deflated member whose compressed bytes are c (cn),
 * declaring usize and crc, into buf: its size. */
static size_t deflated_archive(uint8_t *buf, const uint8_t *c, uint32_t cn, uint32_t usize,
			       uint32_t crc)
{
	uint8_t cd[256];
	size_t len = 0, cdl = 0;
	add_raw(buf, &len, cd, &cdl, "a.npy", 8, c, cn, usize, crc, 0);
	return end_record(buf, len, cd, cdl, 1);
}

/* The member's content read whole, in reads of step bytes: 0 or the
 * first error (its message in err). */
static int read_all(const uint8_t *buf, size_t size, uint64_t step, uint8_t *out,
		    struct mfs_err *err)
{
	struct mfs_zip z;
	assert_int_equal(mfs_zip_read(buf, size, &z, err), 0);
	struct mfs_zip_reader *r;
	assert_int_equal(mfs_zip_reader_new(&r, buf, &z), 0);
	int rc = 0;
	for (uint64_t off = 0; rc == 0 && off < z.mem[0].usize; off += step) {
		uint64_t n = z.mem[0].usize - off < step ? z.mem[0].usize - off : step;
		rc = mfs_zip_read_member(r, 0, off, n, out + off, err);
	}
	mfs_zip_reader_free(r);
	mfs_zip_free(&z);
	return rc;
}

static void deflated_member(void **state)
{
	(void)state;
	uint8_t *src = malloc(DN), *out = malloc(DN + 64);
	uint64_t seed = 5;
	for (unsigned k = 0; k < DN; k++) {  /* text-like: compresses, not trivially */
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		src[k] = (uint8_t)("0123456789 .-e\n"[(seed >> 33) % 15]);
	}
	uLong cap = compressBound(DN) + 64;
	uint8_t *c = malloc(cap), *buf = malloc(cap + 512);
	z_stream zs = {0};
	assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = src;
	zs.avail_in = DN;
	zs.next_out = c;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	uint32_t cn = (uint32_t)zs.total_out, crc = (uint32_t)crc32(0, src, DN);
	deflateEnd(&zs);
	struct mfs_err err = {0};
	/* whole, in reads of every size; and reads anywhere, in any order */
	size_t size = deflated_archive(buf, c, cn, DN, crc);
	static const uint64_t steps[] = {1000, 4096, 65536, 100001, DN};
	for (unsigned k = 0; k < 5; k++) {
		memset(out, 0, DN);
		assert_int_equal(read_all(buf, size, steps[k], out, &err), 0);
		assert_memory_equal(out, src, DN);
	}
	struct mfs_zip z;
	assert_int_equal(mfs_zip_read(buf, size, &z, &err), 0);
	struct mfs_zip_reader *r;
	assert_int_equal(mfs_zip_reader_new(&r, buf, &z), 0);
	for (unsigned t = 0; t < 200; t++) {
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		uint64_t off = (seed >> 20) % DN, n = 1 + (seed >> 7) % 20000;
		if (n > DN - off)
			n = DN - off;
		assert_int_equal(mfs_zip_read_member(r, 0, off, n, out, &err), 0);
		assert_memory_equal(out, src + off, n);
	}
	mfs_zip_reader_free(r);
	mfs_zip_free(&z);
	/* a wrong CRC-32, found at the end */
	size = deflated_archive(buf, c, cn, DN, crc ^ 4);
	assert_int_equal(read_all(buf, size, 65536, out, &err), -EIO);
	assert_non_null(strstr(err.msg, "CRC-32"));
	mfs_err_clear(&err);
	/* the stream cut short: its compressed bytes run out first */
	size = deflated_archive(buf, c, cn - 100, DN, crc);
	assert_int_equal(read_all(buf, size, 65536, out, &err), -EIO);
	mfs_err_clear(&err);
	/* bytes after the stream's end within the compressed size */
	uint8_t *junk = malloc(cn + 3);
	memcpy(junk, c, cn);
	memcpy(junk + cn, "xyz", 3);
	size = deflated_archive(buf, junk, cn + 3, DN, crc);
	assert_int_equal(read_all(buf, size, 65536, out, &err), -EIO);
	assert_non_null(strstr(err.msg, "ends after"));
	mfs_err_clear(&err);
	/* a stream longer, and one shorter, than the size declared */
	size = deflated_archive(buf, c, cn, DN - 1, crc);
	assert_int_equal(read_all(buf, size, 65536, out, &err), -EIO);
	assert_non_null(strstr(err.msg, "holds more"));
	mfs_err_clear(&err);
	size = deflated_archive(buf, c, cn, DN + 1, crc);
	assert_int_equal(read_all(buf, size, 65536, out, &err), -EIO);
	assert_non_null(strstr(err.msg, "declares"));
	mfs_err_clear(&err);
	/* flipped bits anywhere: an error, never other bytes with success */
	for (unsigned t = 0; t < 40; t++) {
		memcpy(junk, c, cn);
		seed = seed * 6364136223846793005u + 1442695040888963407u;
		junk[(seed >> 20) % cn] ^= (uint8_t)(1u << ((seed >> 8) % 8));
		size = deflated_archive(buf, junk, cn, DN, crc);
		int rc = read_all(buf, size, 65536, out, &err);
		assert_true(rc == -EIO || memcmp(out, src, DN) == 0);
		mfs_err_clear(&err);
	}
	free(junk);
	free(buf);
	free(c);
	free(out);
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replace_aligned),
		cmocka_unit_test(replace_kept),
		cmocka_unit_test(deflated_member),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
