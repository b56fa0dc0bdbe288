/* Unit tests of the core: names, tree, views and the write pipeline, through
 * a small test codec over a synthetic format (no real format involved). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "helpers.h"
#include "runtime.h"

/* The test format: bytes "TST1" then float32 payloads at fixed offsets:
 *   8..32:  2x3 float32 row-major   (values 0.5 1.5 2.5 / 10.5 11.5 12.5)
 *  32..56:  2x3 float32 col-major   (same logical values)
 *  56..72:  2 float64 big-endian    (1.5, -0.25)
 *  72..77:  char8 "hello"
 *  80..88:  2x2 int16 row-major     (1 -2 / 300 -32768)
 * The tree also holds text nodes, names to escape, duplicates and a link. */
#define TST_SIZE 88

static int sparse_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		       uint64_t count, void *out, struct mfs_err *err);
static int sparse_entries(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			  uint64_t count, uint64_t *rows, uint64_t *cols, void *vals,
			  struct mfs_err *err);
static const struct mfs_tensor_ops sparse_ops = {sparse_read, sparse_entries};

/* A 3x3 float32 sparse matrix stored as the row-major tensor's first 3
 * values at (0,0), (1,2), (2,1). */
static const uint64_t sp_rows[3] = {0, 1, 2}, sp_cols[3] = {0, 2, 1};

static int sparse_entries(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			  uint64_t count, uint64_t *rows, uint64_t *cols, void *vals,
			  struct mfs_err *err)
{
	(void)t;
	(void)err;
	for (uint64_t i = 0; i < count; i++) {
		rows[i] = sp_rows[first + i];
		cols[i] = sp_cols[first + i];
		memcpy((uint8_t *)vals + 4 * i, m->base + 8 + 4 * (first + i), 4);
	}
	return 0;
}

static int sparse_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		       uint64_t count, void *out, struct mfs_err *err)
{
	(void)t;
	(void)err;
	memset(out, 0, (size_t)count * 4);
	for (int k = 0; k < 3; k++) {
		uint64_t idx = sp_rows[k] * 3 + sp_cols[k];
		if (idx >= first && idx < first + count)
			memcpy((uint8_t *)out + 4 * (idx - first), m->base + 8 + 4 * k, 4);
	}
	return 0;
}

static int tst_open(struct mfs_model *m, struct mfs_err *err)
{
	if (m->size != TST_SIZE)
		return mfs_error(err, EINVAL, "test file must be %d bytes", TST_SIZE);
	mfs_add_text(m, MFS_ROOT, "version", 7, "1", 1, 0);
	mfs_add_text(m, MFS_ROOT, "note", 4, "hello", 5, MFS_NF_WRITABLE);
	static const uint64_t d23[2] = {2, 3}, d2[1] = {2}, d5[1] = {5}, d22[2] = {2, 2},
			      d33[2] = {3, 3};
	struct mfs_tensor t = {.dtype = MFS_DT_F32, .ndim = 2, .dims = d23, .off = 8,
			       .flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE};
	mfs_add_tensor(m, MFS_ROOT, "rowmajor", 8, &t);
	t.off = 32;
	t.order = MFS_COL_MAJOR;
	mfs_add_tensor(m, MFS_ROOT, "colmajor", 8, &t);
	struct mfs_tensor be = {.dtype = MFS_DT_F64, .ndim = 1, .dims = d2, .off = 56, .swap = 8,
				.flags = MFS_TF_WRITABLE};
	mfs_add_tensor(m, MFS_ROOT, "bigendian", 9, &be);
	struct mfs_tensor s = {.dtype = MFS_DT_CHAR8, .ndim = 1, .dims = d5, .off = 72,
			       .flags = MFS_TF_WRITABLE};
	mfs_add_tensor(m, MFS_ROOT, "string", 6, &s);
	struct mfs_tensor i16 = {.dtype = MFS_DT_I16, .ndim = 2, .dims = d22, .off = 80,
				 .flags = MFS_TF_WRITABLE};
	mfs_add_tensor(m, MFS_ROOT, "ints", 4, &i16);
	struct mfs_tensor sp = {.dtype = MFS_DT_F32, .ndim = 2, .dims = d33, .ops = &sparse_ops,
				.nnz = 3, .flags = MFS_TF_WRITABLE | MFS_TF_SPARSE | MFS_TF_NODATA};
	mfs_add_tensor(m, MFS_ROOT, "sparse", 6, &sp);
	mfs_id names = mfs_add_dir(m, MFS_ROOT, "names", 5);
	mfs_add_dir(m, names, "", 0);
	mfs_add_dir(m, names, ".", 1);
	mfs_add_dir(m, names, "..", 2);
	mfs_add_dir(m, names, "a/b%c", 5);
	mfs_add_dir(m, names, "nul\0x", 5);
	mfs_add_dir(m, names, "dup", 3);
	mfs_add_dir(m, names, "dup", 3);
	mfs_add_dir(m, names, "dup", 3);
	char longname[300];
	memset(longname, 'y', sizeof(longname));
	mfs_add_dir(m, names, longname, sizeof(longname));
	mfs_id links = mfs_add_dir(m, MFS_ROOT, "links", 5);
	mfs_add_link(m, links, "to_rowmajor", 11, mfs_resolve(m, "rowmajor"));
	return 0;
}

static int tst_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err)
{
	if (e->kind == MFS_E_TEXT)
		return mfs_error(err, EINVAL, "test codec: text is read-only");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (e->kind == MFS_E_ENTRIES) {
		for (size_t i = 0; i < e->nruns; i++)
			mfs_patch_ref(p, 8 + 4 * e->runs[i].first, 4 * e->runs[i].count,
				      e->runs[i].bytes, 4 * e->runs[i].count);
		return 0;
	}
	if (e->reshape) {
		uint64_t n = 1;
		for (uint32_t i = 0; i < e->ndim; i++)
			n *= e->dims[i];
		if (n != t->nelem || e->dtype != t->dtype)
			return mfs_error(err, EINVAL, "test codec: same size only");
		return mfs_patch_ref(p, t->off, n * t->esize, e->runs[0].bytes, n * t->esize);
	}
	return mfs_patch_raw_runs(p, t, e, err);
}

static const struct mfs_codec tst_codec = {
	.name = "test", .bid = tst1_bid, .open = tst_open, .edit = tst_edit,
};

static uint8_t tst_file[TST_SIZE];

static struct mfs_model *open_tst(void)
{
	memset(tst_file, 0, sizeof(tst_file));
	memcpy(tst_file, "TST1", 4);
	float rm[6] = {0.5f, 1.5f, 2.5f, 10.5f, 11.5f, 12.5f};
	float cm[6] = {0.5f, 10.5f, 1.5f, 11.5f, 2.5f, 12.5f};
	memcpy(tst_file + 8, rm, 24);
	memcpy(tst_file + 32, cm, 24);
	double be[2] = {1.5, -0.25};
	for (int i = 0; i < 2; i++) {
		uint64_t b;
		memcpy(&b, &be[i], 8);
		mfs_put_be64(tst_file + 56 + 8 * i, b);
	}
	memcpy(tst_file + 72, "hello", 5);
	int16_t iv[4] = {1, -2, 300, -32768};
	memcpy(tst_file + 80, iv, 8);
	struct mfs_model *m;
	struct mfs_err err = {0};
	if (mfs_model_open_mem(&m, tst_file, sizeof(tst_file), "x.tst", NULL, 0, &tst_codec, &err))
		fail_msg("open: %s", err.msg);
	return m;
}

static void test_names(void **state)
{
	(void)state;
	struct mfs_model *m = open_tst();
	char *l = tlist(m, "names");
	const char *expect_prefix = "% %2E %2E%2E a%2Fb%25c nul%00x dup dup~1 dup~2 ";
	assert_memory_equal(l, expect_prefix, strlen(expect_prefix));
	/* The 300-byte name is cut to 255 bytes with a stable suffix. */
	const char *last = strrchr(l, ' ') + 1;
	assert_int_equal(strlen(last), 255);
	assert_int_equal(last[238], '~');
	free(l);
	char root[512];
	l = tlist(m, "");
	snprintf(root, sizeof(root), "%s", l);
	assert_string_equal(root, "version note rowmajor colmajor bigendian string ints sparse names links");
	free(l);
	l = tlist(m, "rowmajor");
	assert_string_equal(l, "shape dtype values.txt data data.npy");
	free(l);
	l = tlist(m, "sparse");
	assert_string_equal(l, "shape dtype values.txt data.npy matrix.mtx");
	free(l);
	char target[256];
	assert_true(mfs_link_target(m, tnode(m, "links/to_rowmajor"), target, sizeof(target)) > 0);
	assert_string_equal(target, "../rowmajor");
	mfs_model_free(m);
}

static void test_views(void **state)
{
	(void)state;
	struct mfs_model *m = open_tst();
	tcheck(m, "version", "1\n");
	tcheck(m, "rowmajor/shape", "2 3\n");
	tcheck(m, "rowmajor/dtype", "float32\n");
	tcheck(m, "rowmajor/values.txt", "0.5 1.5 2.5\n10.5 11.5 12.5\n");
	tcheck(m, "colmajor/values.txt", "0.5 1.5 2.5\n10.5 11.5 12.5\n");
	tcheck(m, "bigendian/values.txt", "1.5\n-0.25\n");
	tcheck(m, "string/values.txt", "hello\n");
	tcheck(m, "ints/values.txt", "1 -2\n300 -32768\n");
	tcheck(m, "sparse/values.txt", "0.5 0 0\n0 0 1.5\n0 2.5 0\n");
	tcheck(m, "sparse/matrix.mtx",
	       "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 0.5\n2 3 1.5\n3 2 2.5\n");
	/* data is little-endian storage order */
	size_t len;
	char *d = tread(m, "bigendian/data", &len);
	assert_int_equal(len, 16);
	double v;
	memcpy(&v, d + 8, 8);
	assert_true(v == -0.25);
	free(d);
	d = tread(m, "colmajor/data.npy", &len);
	/* the header is byte-identical to numpy.save's (1.24) */
	assert_int_equal(len, 128 + 24);
	assert_non_null(strstr(d + 10, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }"));
	assert_int_equal(d[127], '\n');
	assert_memory_equal(d + 128, tst_file + 32, 24);
	free(d);
	d = tread(m, "string/data.npy", &len);
	assert_non_null(strstr(d + 10, "'descr': '|u1', 'fortran_order': False, 'shape': (5,), }"));
	free(d);
	/* zero-copy segments for raw little-endian views */
	struct mfs_vseg seg;
	assert_int_equal(mfs_view_segments(m, tnode(m, "rowmajor/data"), 4, 100, &seg), 0);
	mfs_model_free(m);
}

static void test_writes(void **state)
{
	(void)state;
	struct mfs_model *m = open_tst();
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	/* the same values in another spelling change nothing */
	const char *same = "0.50, 1.5 2.5 10.5\t11.5 12.5";
	assert_int_equal(twrite(m, "rowmajor/values.txt", same, strlen(same), &out, &outlen, &err), 1);
	const char *txt = "0.5 1.5 2.5\n10.5 -7 12.5\n";
	assert_int_equal(twrite(m, "colmajor/values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	float f;
	memcpy(&f, out + 32 + 4 * 3, 4);  /* [1,1] in column-major is flat 3 */
	assert_true(f == -7.0f);
	assert_memory_equal(out, tst_file, 32 + 12);
	assert_memory_equal(out + 48, tst_file + 48, TST_SIZE - 48);
	free(out);
	/* errors */
	assert_int_equal(twrite(m, "rowmajor/values.txt", "1 2 3", 5, &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expected 6 values for shape 2 3, got 3"));
	assert_int_equal(twrite(m, "rowmajor/values.txt", "1 2 3 4 5 1e39", 14, &out, &outlen, &err),
			 -ERANGE);
	assert_string_equal(err.msg, "\"1e39\" is out of range for float32, which holds "
			    "-3.4028235e+38 to 3.4028235e+38 (value 6 at [1, 2], line 1)");
	assert_int_equal(twrite(m, "rowmajor/values.txt", "1 2 3\n4 x 6\n", 12, &out, &outlen, &err),
			 -EINVAL);
	assert_string_equal(err.msg, "\"x\" is not a number (value 5 at [1, 1], line 2)");
	assert_int_equal(twrite(m, "ints/values.txt", "1 2 3 40000", 11, &out, &outlen, &err), -ERANGE);
	assert_int_equal(twrite(m, "ints/values.txt", "1 2 3 x", 7, &out, &outlen, &err), -EINVAL);
	assert_int_equal(twrite(m, "rowmajor/shape", "1 6\n", 4, &out, &outlen, &err), -EACCES);
	assert_int_equal(twrite(m, "rowmajor/data", "abc", 3, &out, &outlen, &err), -EINVAL);
	/* big-endian storage is written back big-endian */
	assert_int_equal(twrite(m, "bigendian/values.txt", "1.5\n2\n", 6, &out, &outlen, &err), 0);
	assert_int_equal(out[64], 0x40);
	free(out);
	/* sparse: values in the pattern change; outside it they may not */
	assert_int_equal(twrite(m, "sparse/values.txt", "1 0 0 0 0 2 0 3 0", 17, &out, &outlen, &err), 0);
	memcpy(&f, out + 16, 4);  /* entry 2, (2,1) */
	assert_true(f == 3.0f);
	free(out);
	assert_int_equal(twrite(m, "sparse/values.txt", "1 1 0 0 0 2 0 3 0", 17, &out, &outlen, &err),
			 -EINVAL);
	const char *mtx = "%%MatrixMarket matrix coordinate real general\n% c\n3 3 3\n3 2 9\n1 1 0.5\n2 3 1.5\n";
	assert_int_equal(twrite(m, "sparse/matrix.mtx", mtx, strlen(mtx), &out, &outlen, &err), 0);
	memcpy(&f, out + 16, 4);
	assert_true(f == 9.0f);
	free(out);
	const char *mtx2 = "%%MatrixMarket matrix coordinate real general\n3 3 3\n3 3 9\n1 1 0.5\n2 3 1.5\n";
	assert_int_equal(twrite(m, "sparse/matrix.mtx", mtx2, strlen(mtx2), &out, &outlen, &err),
			 -EINVAL);
	mfs_model_free(m);
}

static void test_npy_write(void **state)
{
	(void)state;
	struct mfs_model *m = open_tst();
	struct mfs_err err = {0};
	size_t len;
	char *npy = tread(m, "rowmajor/data.npy", &len);
	uint8_t *out;
	size_t outlen;
	assert_int_equal(twrite(m, "rowmajor/data.npy", npy, len, &out, &outlen, &err), 1);
	/* a Fortran-ordered array of the same values is the same array */
	char *fnpy = tread(m, "colmajor/data.npy", &len);
	assert_int_equal(twrite(m, "rowmajor/data.npy", fnpy, len, &out, &outlen, &err), 1);
	/* another dtype is refused */
	memcpy(strstr(fnpy + 10, "<f4"), "<i4", 3);
	assert_int_equal(twrite(m, "rowmajor/data.npy", fnpy, len, &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "dtype"));
	free(fnpy);
	free(npy);
	mfs_model_free(m);
}

/* A large tensor with custom storage that counts what is read. */
static _Atomic uint64_t elems_read;  /* the size pass reads on several threads */

static int count_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err)
{
	(void)m;
	(void)t;
	(void)err;
	elems_read += count;
	float *o = out;
	for (uint64_t i = 0; i < count; i++) {
		float f = (float)(first + i) * 0.25f;
		memcpy(o + i, &f, 4);
	}
	return 0;
}
static const struct mfs_tensor_ops count_ops = {count_read, NULL};

static int big_open(struct mfs_model *m, struct mfs_err *err)
{
	(void)err;
	static const uint64_t dims[2] = {1000, 1000};
	struct mfs_tensor t = {.dtype = MFS_DT_F32, .ndim = 2, .dims = dims, .ops = &count_ops};
	mfs_attach_tensor(m, MFS_ROOT, &t);
	return 0;
}

static const struct mfs_codec big_codec = {.name = "big", .bid = tst1_bid, .open = big_open};

static void test_big_values(void **state)
{
	(void)state;
	struct mfs_err err = {0};
	struct mfs_model *m = topen_tst1(&big_codec, "big");
	mfs_model_set_runtime(m, truntime());  /* rendered ahead and kept, as in a mount */
	mfs_id v = tnode(m, "values.txt");
	/* head -c 100: only the first chunk is rendered, its size unknown */
	char buf[200];
	elems_read = 0;
	assert_int_equal(mfs_view_read(m, v, 0, 100, buf, NULL, &err), 100);
	assert_memory_equal(buf, "0 0.25 0.5 0.75 1 ", 18);
	assert_true(elems_read <= 4096);
	/* a read anywhere gives the same bytes as a full rendering */
	uint64_t size;
	assert_int_equal(mfs_view_size(m, v, &size, &err), 0);
	assert_true(elems_read >= 1000000);
	char *all = tread(m, "values.txt", NULL);
	assert_int_equal(strlen(all), size);
	struct mfs_rcache *rc = mfs_rcache_new();
	uint64_t seed = 1;
	for (int k = 0; k < 200; k++) {
		seed = seed * 6364136223846793005ull + 1;
		uint64_t off = (seed >> 20) % size;
		ssize_t n = mfs_view_read(m, v, off, sizeof(buf), buf, k % 2 ? rc : NULL, &err);
		assert_true(n > 0);
		assert_memory_equal(buf, all + off, (size_t)n);
	}
	mfs_rcache_free(rc);
	/* the last element ends the last line */
	assert_string_equal(all + size - 10, "249999.75\n");
	free(all);
	mfs_model_free(m);
}

/* A file named with a format's own extension bids whatever its bytes (none
 * too), and opening one that is no file of the format is refused with a
 * message: never -ENOTSUP, which would pass it through silently. */
static void test_named_bids(void **state)
{
	(void)state;
	assert_true(mfs_has_ext("a.npy", ".npy"));
	assert_true(mfs_has_ext("m.safetensors.index.json", ".safetensors.index.json"));
	assert_false(mfs_has_ext(".npy", ".npy"));  /* a dotfile: no name before it */
	assert_false(mfs_has_ext("a.npy~", ".npy"));
	assert_false(mfs_has_ext("npy", ".npy"));
	assert_false(mfs_has_ext(NULL, ".npy"));
	static const struct {
		const char *name, *codec;
	} named[] = {
		{"m.safetensors", "safetensors"}, {"m.safetensors.index.json", "safetensors"},
		{"a.npy", "numpy"}, {"a.npz", "numpy"}, {"m.gguf", "gguf"}, {"g.tsm", "tennis"},
		{"x.dbdf", "daphne"}, {"o.psave", "plearn"}, {"o.plearn", "plearn"},
		{"x.pmat", "plearn"},
	};
	static const struct {
		const char *b;
		size_t n;
	} bodies[] = {{"", 0}, {"hello", 5}, {"\0\0\0\0\0\0\0\0", 8}, {"GGU", 3}};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		for (size_t k = 0; k < sizeof(bodies) / sizeof(bodies[0]); k++) {
			const uint8_t *b = (const uint8_t *)bodies[k].b;
			size_t n = bodies[k].n;
			const struct mfs_codec *c = mfs_probe(b, n, n, named[i].name);
			assert_non_null(c);
			assert_string_equal(c->name, named[i].codec);
			struct mfs_model *m;
			struct mfs_err err = {0};
			int r = mfs_model_open_mem(&m, b, n, named[i].name, NULL, 0, NULL, &err);
			if (r != -EINVAL)
				fail_msg("%s of %zu bytes: %d %s", named[i].name, n, r, err.msg);
			assert_true(err.msg[0] != '\0');
		}
	/* No name, no bid: "hello" is nothing's, not even named ".npy" */
	assert_null(mfs_probe((const uint8_t *)"hello", 5, 5, ".npy"));
	assert_null(mfs_probe((const uint8_t *)"hello", 5, 5, "model.safetensors.part"));
	/* .amat is text: an empty one is a 0x0 matrix */
	assert_non_null(mfs_probe((const uint8_t *)"", 0, 0, "x.amat"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_writes),
		cmocka_unit_test(test_npy_write),
		cmocka_unit_test(test_big_values),
		cmocka_unit_test(test_named_bids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
