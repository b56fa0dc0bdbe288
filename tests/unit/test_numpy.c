/* Unit tests of the NumPy codec: .npy headers parsed strictly (versions,
 * byte orders, Fortran order, dtypes shown or passed through, malformed
 * ones refused); the samples NumPy wrote (tests/data/numpy) read as
 * expected; edits as patches: .npy values in place, a new shape; .npz
 * stored members with their CRC-32 in both headers; deflated members
 * written again; zip structures that lie refused; a source that shrinks
 * under a deflated member's reads fails them (EIO), again and again. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "bytes.h"
#include "guard.h"
#include "helpers.h"
#include "runtime.h"

/* A .npy v1.0 file of a header dict (as given) and data. */
static uint8_t *npy_file(const char *dict, const void *data, size_t len, size_t *outlen)
{
	size_t dl = strlen(dict);
	size_t hl = (dl + 11 + 63) / 64 * 64 - 10;
	uint8_t *b = malloc(10 + hl + len + 1);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	mfs_put_le16(b + 8, (uint16_t)hl);
	memset(b + 10, ' ', hl);
	memcpy(b + 10, dict, dl);
	b[10 + hl - 1] = '\n';
	memcpy(b + 10 + hl, data, len);
	*outlen = 10 + hl + len;
	return b;
}

static int open_npy(const char *dict, const void *data, size_t len, struct mfs_err *err)
{
	size_t n;
	uint8_t *b = npy_file(dict, data, len, &n);
	struct mfs_model *m = NULL;
	int r = mfs_model_open_mem(&m, b, n, "x.npy", NULL, 0, NULL, err);
	mfs_model_free(m);
	free(b);
	return r;
}

static void test_samples(void **state)
{
	(void)state;
	struct mfs_model *m = topen("numpy/f32.npy");
	tcheck(m, "shape", "2 3\n");
	tcheck(m, "dtype", "float32\n");
	tcheck(m, "values.txt", "0.1 -2.5 3\n1e-08 inf -0\n");
	tcheck(m, "header", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n");
	twalk(m);
	tclose(m);
	m = topen("numpy/big_endian.npy");
	tcheck(m, "values.txt", "1.5 -2.25\n1e+300 7\n");
	twalk(m);
	tclose(m);
	m = topen("numpy/big_c16.npy");
	tcheck(m, "values.txt", "1+2j\n3-4j\n");
	tclose(m);
	m = topen("numpy/fortran.npy");
	tcheck(m, "values.txt", "0 1 2 3\n4 5 6 7\n8 9 10 11\n");
	tclose(m);
	m = topen("numpy/v3.npy");
	tcheck(m, "dtype", "complex64\n");
	tclose(m);
	m = topen("numpy/scalar.npy");
	tcheck(m, "shape", "\n");
	tcheck(m, "values.txt", "3.25\n");
	tclose(m);
	struct mfs_err err = {0};
	assert_int_equal(topen_fail("numpy/strings.npy", &err), -ENOTSUP);
	assert_int_equal(topen_fail("numpy/structured.npy", &err), -ENOTSUP);
	assert_int_equal(topen_fail("numpy/object.npy", &err), -ENOTSUP);
}

static void test_headers(void **state)
{
	(void)state;
	struct mfs_err err = {0};
	uint8_t d[16] = {0};
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), }", d, 6, &err), 0);
	assert_int_equal(open_npy("{\"shape\": (3, ), \"descr\": \">u2\", \"fortran_order\": True}", d, 6, &err), 0);
	assert_int_equal(open_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (), }", d, 8, &err), 0);
	/* Refused: a key twice, a missing or extra key, (3) is not a tuple,
	 * truncated data, words that are not literals. */
	assert_int_equal(open_npy("{'descr': '<i2', 'descr': '<i2', 'fortran_order': False, 'shape': (3,)}", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'shape': (3,)}", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,), 'x': 1}", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3)}", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,)}", d, 4, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "truncated"));
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': maybe, 'shape': (3,)}", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3,)} junk", d, 6, &err), -EINVAL);
	/* Python 2's longs, as NumPy there wrote shapes (numpy.load reads
	 * them); only directly after the digits, and only L */
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (1L, 3L), }", d, 6, &err), 0);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3L,), }", d, 6, &err), 0);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3l,), }", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (3LL,), }", d, 6, &err), -EINVAL);
	assert_int_equal(open_npy("{'descr': '<i2', 'fortran_order': False, 'shape': (L,), }", d, 6, &err), -EINVAL);
	/* Not shown: datetime, strings */
	assert_int_equal(open_npy("{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (1,)}", d, 8, &err), -ENOTSUP);
	assert_int_equal(open_npy("{'descr': '|S4', 'fortran_order': False, 'shape': (1,)}", d, 4, &err), -ENOTSUP);
}

/* Apply a values.txt write; returns the new file. */
static uint8_t *edit(struct mfs_model *m, const char *path, const char *text, size_t *n)
{
	uint8_t *out = NULL;
	struct mfs_err err = {0};
	int r = twrite(m, path, text, strlen(text), &out, n, &err);
	if (r != 0)
		fail_msg("write %s: %d (%s)", path, r, err.msg);
	return out;
}

/* Long doubles: x87 extended numbers (NumPy on x86-64) are float128 and
 * complex256 tensors with values; IEEE binary128 under the same descr
 * (aarch64) shows its bytes only, as does any array whose first values are
 * no x87 numbers. Python 2 headers as NumPy wrote them there. */
static void test_long_double(void **state)
{
	(void)state;
	uint8_t d[64] = {0};
	/* 1.5 and -0.1 as x87, padding as NumPy leaves it (memory it held) */
	static const uint8_t x15[16] = {0, 0, 0, 0, 0, 0, 0, 0xc0, 0xff, 0x3f, 0x46, 0x3d, 0xb9, 0x7f};
	static const uint8_t xm01[16] = {0xcd, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xfb, 0xbf};
	memcpy(d, x15, 16);
	memcpy(d + 16, xm01, 16);
	size_t n;
	uint8_t *b = npy_file("{'descr': '<f16', 'fortran_order': False, 'shape': (2L,), }", d, 32, &n);
	struct mfs_model *m = topen_mem(b, n, "x.npy", NULL, 0);
	tcheck(m, "dtype", "float128\n");
	tcheck(m, "values.txt", "1.5\n-0.1\n");
	assert_int_equal(trewrite_all(m), 3);  /* values.txt, data, data.npy: the padding stays */
	uint8_t *out = edit(m, "values.txt", "1.5\n2\n", &n);
	struct mfs_model *m2 = topen_mem(out, n, "x.npy", NULL, 0);
	tcheck(m2, "values.txt", "1.5\n2\n");
	tclose(m2);
	free(out);
	tclose(m);
	free(b);
	b = npy_file("{'descr': '<c32', 'fortran_order': False, 'shape': (1,), }", d, 32, &n);
	m = topen_mem(b, n, "x.npy", NULL, 0);
	tcheck(m, "dtype", "complex256\n");
	tcheck(m, "values.txt", "1.5-0.1j\n");
	tclose(m);
	free(b);
	/* 1.5 and 3 as binary128: no values, the bytes */
	memset(d, 0, sizeof(d));
	d[13] = 0x80, d[14] = 0xff, d[15] = 0x3f;
	d[29] = 0x80, d[30] = 0x00, d[31] = 0x40;
	b = npy_file("{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }", d, 32, &n);
	m = topen_mem(b, n, "x.npy", NULL, 0);
	tcheck(m, "dtype", "float128\n");
	char *names = tlist(m, "");
	assert_string_equal(names, "shape dtype data header");
	free(names);
	size_t dn;
	char *data = tread(m, "data", &dn);
	assert_int_equal(dn, 32);
	assert_memory_equal(data, d, 32);
	free(data);
	tclose(m);
	free(b);
}

static void test_npy_edit(void **state)
{
	(void)state;
	size_t n0, n;
	uint8_t *old = tload(tdata("numpy/big_endian.npy"), &n0);
	struct mfs_model *m = topen("numpy/big_endian.npy");
	uint8_t *out = edit(m, "values.txt", "1.5 -2.25\n1e+300 8\n", &n);
	assert_int_equal(n, n0);
	assert_int_equal(mfs_be64(out + n - 8), bits64(8.0));
	assert_memory_equal(out, old, n - 8);
	free(out);
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "values.txt", "1 2 3", 5, &out, &n, &err), -EINVAL);
	tclose(m);
	free(old);
}

/* CRC-32 of each member and its local header agree with the central
 * directory (what zipfile.testzip checks), for stored members. */
static void check_zip(const uint8_t *b, size_t n)
{
	struct mfs_model *m = topen_mem(b, n, "x.npz", NULL, 0);
	twalk(m);
	tclose(m);
	size_t e = n - 22;
	while (mfs_le32(b + e) != 0x06054b50u)
		e--;
	uint64_t c = mfs_le32(b + e + 16);
	for (unsigned k = 0; k < mfs_le16(b + e + 10); k++) {
		uint32_t nl = mfs_le16(b + c + 28), xl = mfs_le16(b + c + 30), cl = mfs_le16(b + c + 32);
		uint64_t l = mfs_le32(b + c + 42);
		assert_int_equal(mfs_le32(b + l), 0x04034b50u);
		assert_int_equal(mfs_le32(b + l + 14), mfs_le32(b + c + 16));
		if (mfs_le16(b + c + 10) == 0) {
			uint64_t data = l + 30 + mfs_le16(b + l + 26) + mfs_le16(b + l + 28);
			uint64_t size = mfs_le32(b + c + 20);
			if (size == 0xFFFFFFFFu)  /* NumPy's zip64 local header */
				size = mfs_le64(b + l + 30 + mfs_le16(b + l + 26) + 12);
			assert_int_equal(crc32(0, b + data, (uInt)size), mfs_le32(b + c + 16));
		}
		c += 46 + nl + xl + cl;
	}
}

static void test_npz_stored_edit(void **state)
{
	(void)state;
	struct mfs_model *m = topen("numpy/stored.npz");
	tcheck(m, "tensors/model/layer/0/bias/values.txt", "0\n1\n2\n3\n4\n");
	tcheck(m, "tensors/enc/block/1/w/values.txt", "0 1 2\n3 4 5\n");
	size_t n0, n;
	uint8_t *old = tload(tdata("numpy/stored.npz"), &n0);
	uint8_t *out = edit(m, "tensors/model/layer/0/bias/values.txt", "0\n1\n2\n3.5\n4\n", &n);
	assert_int_equal(n, n0);
	check_zip(out, n);
	assert_int_not_equal(memcmp(out, old, n), 0);
	free(out);
	/* A new shape: the member grows, the directory moves */
	struct mfs_model *m2 = topen("numpy/stored.npz");
	uint8_t *o2 = edit(m2, "tensors/scalar/values.txt", "8\n", &n);
	check_zip(o2, n);
	free(o2);
	tclose(m2);
	tclose(m);
	free(old);
}

static void test_npz_deflated(void **state)
{
	(void)state;
	struct mfs_model *m = topen("numpy/compressed.npz");
	tcheck(m, "tensors/model/layer/0/bias/values.txt", "0\n1\n2\n3\n4\n");
	tcheck(m, "tensors/fort/values.txt", "0 1 2\n3 4 5\n");
	tcheck(m, "tensors/be/values.txt", "1\n-2\n");
	size_t n;
	uint8_t *out = edit(m, "tensors/be/values.txt", "1\n-3\n", &n);
	struct mfs_model *m2 = topen_mem(out, n, "x.npz", NULL, 0);
	tcheck(m2, "tensors/be/values.txt", "1\n-3\n");
	tcheck(m2, "tensors/fort/values.txt", "0 1 2\n3 4 5\n");
	twalk(m2);
	tclose(m2);
	free(out);
	tclose(m);
}

/* Broken archives: each refused with a message, or a broken member left
 * out with a note (no crash, no huge allocation). */
static void test_npz_bad(void **state)
{
	(void)state;
	size_t n;
	uint8_t *b = tload(tdata("numpy/compressed.npz"), &n);
	struct mfs_err err = {0};
	struct mfs_model *m = NULL;
	size_t e = n - 22;
	uint64_t cd = mfs_le32(b + e + 16);
	/* a zip bomb: the first member declares 4 GiB */
	uint8_t *c = malloc(n);
	memcpy(c, b, n);
	mfs_put_le32(c + cd + 24, 0xFFFFFFF0u);
	assert_int_equal(mfs_model_open_mem(&m, c, n, "x.npz", NULL, 0, NULL, &err), -EINVAL);
	mfs_model_free(m);
	m = NULL;
	/* the central directory beyond the file */
	memcpy(c, b, n);
	mfs_put_le32(c + e + 16, (uint32_t)n);
	assert_int_equal(mfs_model_open_mem(&m, c, n, "x.npz", NULL, 0, NULL, &err), -EINVAL);
	mfs_model_free(m);
	m = NULL;
	/* a wrong CRC: small archives are inflated whole at open; the member
	 * is left out with a note, the others shown */
	struct mfs_model *good = NULL;
	assert_int_equal(mfs_model_open_mem(&good, b, n, "x.npz", NULL, 0, NULL, &err), 0);
	memcpy(c, b, n);
	mfs_put_le32(c + cd + 16, mfs_le32(c + cd + 16) ^ 1);
	mfs_put_le32(c + mfs_le32(c + cd + 42) + 14, mfs_le32(c + cd + 16));
	assert_int_equal(mfs_model_open_mem(&m, c, n, "x.npz", NULL, 0, NULL, &err), 0);
	assert_non_null(strstr(m->note, "CRC-32"));
	assert_non_null(strstr(m->note, "not shown"));
	assert_int_equal(m->ntensors, good->ntensors - 1);
	twalk(m);
	mfs_model_free(good);
	mfs_model_free(m);
	free(c);
	free(b);
}

/* An archive with a deflated Fortran-order member of 480 KB (random, so the
 * file is mapped rather than read into memory) in a file, truncated under
 * the model: its values.txt (bands over the stream) and data fail with EIO,
 * each time, and nothing is left waiting. */
static void test_npz_shrunk(void **state)
{
	(void)state;
	static const char dict[] = "{'descr': '<f8', 'fortran_order': True, 'shape': (300, 200), }";
	uint64_t seed = 7;
	double *v = malloc(300 * 200 * sizeof(double));
	assert_non_null(v);
	for (int i = 0; i < 300 * 200; i++)
		v[i] = (double)(int64_t)trand(&seed) / 1e9;
	size_t nl, n;
	uint8_t *npy = npy_file(dict, v, 300 * 200 * sizeof(double), &nl);
	struct mfs_model *m = topen("numpy/compressed.npz");
	uint8_t *out = NULL;
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "tensors/fort/data.npy", npy, nl, &out, &n, &err), 0);
	tclose(m);
	char path[] = "/tmp/mfs-shrunk-XXXXXX.npz";
	int fd = mkstemps(path, 4);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, out, n), (ssize_t)n);
	assert_int_equal(mfs_model_open(&m, AT_FDCWD, path, NULL, &err), 0);
	mfs_model_set_runtime(m, truntime());
	mfs_guard_install();  /* in front of cmocka's own, set for each test */
	assert_int_equal(ftruncate(fd, 4096), 0);
	char buf[4096];
	static const char *const views[] = {"tensors/fort/values.txt", "tensors/fort/data"};
	for (int k = 0; k < 6; k++) {
		/* (data past what the cursor kept at open inflated ahead of
		 * the header: ISA-L decodes up to 64 KiB ahead) */
		ssize_t r = mfs_view_read(m, tnode(m, views[k % 2]), k % 2 ? 256 << 10 : 0, sizeof(buf),
					  buf, NULL, &err);
		assert_int_equal(r, -EIO);
		assert_non_null(strstr(err.msg, "shrank"));
		mfs_err_clear(&err);
	}
	mfs_model_free(m);
	close(fd);
	unlink(path);
	free(out);
	free(npy);
	free(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_samples),
		cmocka_unit_test(test_headers),
		cmocka_unit_test(test_long_double),
		cmocka_unit_test(test_npy_edit),
		cmocka_unit_test(test_npz_stored_edit),
		cmocka_unit_test(test_npz_deflated),
		cmocka_unit_test(test_npz_bad),
		cmocka_unit_test(test_npz_shrunk),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
