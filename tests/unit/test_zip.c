/* Unit tests of codecs/core/zip/: mfs_zip_replace giving a stored member
 * new content of another length, with and without alignment: the record
 * after it keeps its data 64-byte aligned through its 0x4246 padding field
 * (as torch.save writes records) when asked, keeps its bytes otherwise, and
 * the archive read again holds the new content with its CRC-32. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "helpers.h"
#include "zip.h"

#define ALIGN 64u

/* A record of a stored member at the end of buf (*len bytes so far), its
 * data padded to ALIGN by a 0x4246 field when pad; its central entry at the
 * end of cd (*cdl). */
static void add(uint8_t *buf, size_t *len, uint8_t *cd, size_t *cdl, const char *name,
		const uint8_t *data, uint16_t n, int pad)
{
	size_t nl = strlen(name), at = *len;
	uint16_t xl = 0;
	if (pad)
		xl = (uint16_t)(4 + (ALIGN - (at + 30 + nl + 4) % ALIGN) % ALIGN);
	uint32_t crc = (uint32_t)crc32(0, data, n);
	uint8_t *h = buf + at;
	memset(h, 0, 30);
	mfs_put_le32(h, 0x04034b50u);
	mfs_put_le16(h + 4, 20);
	mfs_put_le32(h + 14, crc);
	mfs_put_le32(h + 18, n);
	mfs_put_le32(h + 22, n);
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
	mfs_put_le32(c + 16, crc);
	mfs_put_le32(c + 20, n);
	mfs_put_le32(c + 24, n);
	mfs_put_le16(c + 28, (uint16_t)nl);
	mfs_put_le32(c + 42, (uint32_t)at);
	memcpy(c + 46, name, nl);
	*cdl += 46 + nl;
}

/* An archive of members a (10 bytes) and b (ALIGN bytes, padded). */
static size_t archive(uint8_t *buf, const uint8_t *bdata)
{
	uint8_t cd[512];
	size_t len = 0, cdl = 0;
	const uint8_t a[10] = "0123456789";
	add(buf, &len, cd, &cdl, "t/data/0", a, sizeof(a), 1);
	add(buf, &len, cd, &cdl, "t/data/1", bdata, ALIGN, 1);
	memcpy(buf + len, cd, cdl);
	uint8_t *e = buf + len + cdl;
	memset(e, 0, 22);
	mfs_put_le32(e, 0x06054b50u);
	mfs_put_le16(e + 8, 2);
	mfs_put_le16(e + 10, 2);
	mfs_put_le32(e + 12, (uint32_t)cdl);
	mfs_put_le32(e + 16, (uint32_t)len);
	return len + cdl + 22;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(replace_aligned),
		cmocka_unit_test(replace_kept),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
