/* DAPHNE codec: malformed files are refused with a message, never a crash:
 * sizes that fit no dialect, counts beyond the file, CSR offsets and column
 * indices out of order or range, random mutations of every corpus file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "test_daphne.h"

#define G "daphne/generated/"
#define U "daphne/generated/unit-test-outputs/"

static uint8_t *load(const char *rel, size_t *len)
{
	return tload(tdata(rel), len);
}

/* Open buf as name; must fail with EINVAL (or code) and a message holding
 * want. */
static void refused(const uint8_t *buf, size_t len, int code, const char *want)
{
	struct mfs_err err;
	int r = dopen_fail(buf, len, "bad.dbdf", &err);
	if (r != -code || !strstr(err.msg, want))
		fail_msg("expected -%d with \"%s\", got %d: %s", code, want, r, err.msg);
}

static void test_headers(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = load(G "dense_f64_3x4.dbdf", &len);
	refused(b, 10, EINVAL, "header needs 18 bytes");
	refused(b, 100, EINVAL, "the file has 100 bytes and fits no dialect: DAPHNE: a 3 x 4 float64 matrix needs 141 bytes; spec: ");
	refused(b, len - 1, EINVAL, "fits no dialect");
	uint8_t *c = malloc(len + 8);
	memcpy(c, b, len);
	memset(c + len, 0, 8);
	refused(c, len + 8, EINVAL, "DAPHNE: a 3 x 4 float64 matrix needs 141 bytes");
	memcpy(c, b, len);
	c[0] = 2;
	refused(c, len, EINVAL, "version byte is 2");
	c[0] = 1;
	c[1] = 4;
	refused(c, len, EINVAL, "scalar");
	c[1] = 9;
	refused(c, len, EINVAL, "data type byte is 9, expected 1 (dense), 2 (CSR) or 3 (frame)");
	c[1] = 1;
	/* rows * cols overflows */
	mfs_put_le64(c + 2, 1ull << 40);
	mfs_put_le64(c + 10, 1ull << 40);
	refused(c, len, EINVAL, "overflow");
	/* header and block disagree */
	memcpy(c, b, len);
	mfs_put_le64(c + 2, 4);
	refused(c, len, EINVAL, "a 3 x 4 block in a 4 x 4 matrix");
	/* a block not at (0, 0) */
	memcpy(c, b, len);
	c[19] = 1;
	refused(c, len, EINVAL, "it writes (0, 0)");
	/* unknown value type */
	memcpy(c, b, len);
	c[18] = c[44] = 12;
	refused(c, len, EINVAL, "value type 12");
	/* The extension decides; a .dbdf that cannot be read is reported. */
	assert_null(mfs_probe(b, len, len, "x.bin"));
	assert_non_null(mfs_probe(b, 3, 3, "x.dbdf"));
	assert_string_equal(mfs_probe(c, 0, 0, "x.dbdf")->name, "daphne");
	free(c);
	free(b);
}

static void test_csr(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = load(G "csr_f64_6x5.dbdf", &len), *c = malloc(len);
	const size_t offs = 53, cidx = 53 + 7 * 8;
	/* row offsets [0,0,2,3,3,6,6], columns [0,4,2,1,3,4] */
	memcpy(c, b, len);
	mfs_put_le64(c + offs + 3 * 8, 1);
	refused(c, len, EINVAL, "row offsets out of order: row 3 starts at 1, after 2");
	memcpy(c, b, len);
	mfs_put_le64(c + offs + 5 * 8, 7);
	refused(c, len, EINVAL, "row offset 7 of row 5 is beyond the 6 nonzeros");
	memcpy(c, b, len);
	mfs_put_le64(c + offs, 1);
	mfs_put_le64(c + offs + 8, 1);
	refused(c, len, EINVAL, "start at 1");
	memcpy(c, b, len);
	mfs_put_le64(c + offs + 5 * 8, 5);
	mfs_put_le64(c + offs + 6 * 8, 5);
	refused(c, len, EINVAL, "end at 5, but nnz is 6");
	memcpy(c, b, len);
	mfs_put_le64(c + cidx, 5);
	refused(c, len, EINVAL, "column index 5 is beyond its 5 columns");
	memcpy(c, b, len);
	mfs_put_le64(c + cidx + 3 * 8, 3);
	refused(c, len, EINVAL, "column indices out of order (3 after 3)");
	memcpy(c, b, len);
	mfs_put_le64(c + 45, 1ull << 40);
	refused(c, len, EINVAL, "1099511627776 nonzeros need");
	memcpy(c, b, len);
	mfs_put_le64(c + 45, UINT64_MAX / 4);
	refused(c, len, EINVAL, "fits no dialect");
	/* block type and value type */
	memcpy(c, b, len);
	c[43] = 1;
	refused(c, len, EINVAL, "block type 1, it writes 2");
	memcpy(c, b, len);
	c[18] = c[44] = 8;
	refused(c, len, EINVAL, "fits no dialect");
	free(c);
	free(b);
}

static void test_frame(void **state)
{
	(void)state;
	size_t len;
	uint8_t *b = load(G "frame_mixed_4x8.dbdf", &len), *c = malloc(len);
	memcpy(c, b, len);
	mfs_put_le64(c + 10, 100);
	refused(c, len, EINVAL, "a frame of 100 columns needs at least 300 bytes");
	memcpy(c, b, len);
	mfs_put_le16(c + 26, 60000);
	refused(c, len, EINVAL, "column 0: a label of 60000 bytes");
	memcpy(c, b, len);
	mfs_put_le64(c + 2, 5);
	refused(c, len, EINVAL, "5 rows of 38 bytes need 297 bytes");
	memcpy(c, b, len);
	c[18] = 8;
	refused(c, len, EINVAL, "column 0 has value type 8");
	refused(b, 100, EINVAL, "fits no dialect");
	free(c);
	free(b);
}

static void test_mutations(void **state)
{
	(void)state;
	static const char *const files[] = {
		G "csr_f32_3x3_allzero.dbdf",
		G "csr_f64_6x5.dbdf",
		G "csr_f64_rows2to5_view.dbdf",
		G "csr_si32_4x3.dbdf",
		G "dense_f32_3x4.dbdf",
		G "dense_f64_0x4.dbdf",
		G "dense_f64_1x1.dbdf",
		G "dense_f64_3x4.dbdf",
		G "dense_si32_3x4.dbdf",
		G "dense_si64_3x4.dbdf",
		G "dense_si64_5x1.dbdf",
		G "dense_si8_3x4.dbdf",
		G "dense_ui32_3x4.dbdf",
		G "dense_ui64_3x4.dbdf",
		G "dense_ui8_3x4.dbdf",
		G "frame_mixed_4x8.dbdf",
		G "quirks/dense_f64_3x2_colslice_view_miswritten.dbdf",
		G "quirks/dense_str_1x2_raw_string_objects.dbdf",
		U "aig.dbdf", U "aig-csr.dbdf", U "aig-f.dbdf",
		U "aik.dbdf", U "aik-csr.dbdf", U "aik-f.dbdf",
		U "ais.dbdf", U "ais-csr.dbdf", U "ais-f.dbdf",
		U "cig.dbdf", U "cig-csr.dbdf", U "cig-f.dbdf",
		U "cps.dbdf", U "cps-csr.dbdf", U "cps-f.dbdf",
	};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		tmutate(files[i], 300);
	/* the large ones: fewer rounds, each reads megabytes */
	static const char *const big[] = {
		U "crk.dbdf", U "crk-csr.dbdf", U "crk-f.dbdf",
		U "crs.dbdf", U "crs-csr.dbdf", U "crs-f.dbdf",
		U "crg.dbdf", U "crg-csr.dbdf", U "crg-f.dbdf",
	};
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		tmutate(big[i], i < 6 ? 30 : 6);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_csr),
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_mutations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
