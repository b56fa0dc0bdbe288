/* DAPHNE codec: edits of corpus files through every writable view (dense
 * values, data, data.npy with a new shape, CSR values and matrix.mtx, frame
 * columns), the bytes they change and the .meta sidecar kept in step. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "test_daphne.h"

#define G "daphne/generated/"

/* A .npy v1.0 file of descr and shape text ("(2, 6)") over data. */
static uint8_t *mknpy(const char *descr, const char *shape, const void *data, size_t n,
		      size_t *len)
{
	char dict[256];
	int dl = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
			  descr, shape);
	size_t hl = ((size_t)dl + 11 + 63) & ~(size_t)63;
	uint8_t *b = malloc(hl + n);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	mfs_put_le16(b + 8, (uint16_t)(hl - 10));
	memset(b + 10, ' ', hl - 10);
	memcpy(b + 10, dict, (size_t)dl);
	b[hl - 1] = '\n';
	memcpy(b + hl, data, n);
	*len = hl + n;
	return b;
}

static const char *side(size_t *len)
{
	return (const char *)tlast_sidecar(len);
}

static void test_dense_values(void **state)
{
	(void)state;
	struct mfs_model *m = topen(G "dense_f64_3x4.dbdf");
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen, sl;
	const char *txt = "0 1.5 -2.25 3\n0.1 2.5 -1e300 5e-324\n2.2250738585072014e-308 inf -inf nan\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size);
	daphne_same_outside(m->base, out, outlen, 45 + 5 * 8, 8);
	double v;
	memcpy(&v, out + 45 + 40, 8);
	assert_true(v == 2.5);
	assert_null(side(&sl));  /* nothing the .meta records changed */
	struct mfs_model *n = topen_mem(out, outlen, "x.dbdf", m->sidecar, m->sidecar_len);
	tcheck(n, "values.txt",
	       "0 1.5 -2.25 3\n0.1 2.5 -1e+300 5e-324\n2.2250738585072014e-308 inf -inf nan\n");
	tclose(n);
	free(out);
	/* the block's own view writes the same bytes */
	assert_int_equal(twrite(m, "blocks/0/values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, 45 + 5 * 8, 8);
	free(out);
	/* refused: wrong count, unparsable, out of range */
	assert_int_equal(twrite(m, "values.txt", "1 2 3", 5, &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expected 12 values"));
	assert_int_equal(twrite(m, "values.txt", "1 2 3 4 5 6 7 8 9 10 11 x", 24, &out, &outlen, &err),
			 -EINVAL);
	assert_int_equal(twrite(m, "values.txt", "1 2 3 4 5 6 7 8 9 10 11 1e999", 29, &out, &outlen,
				&err),
			 -ERANGE);
	/* header fields are read-only */
	assert_int_equal(twrite(m, "header/rows", "4\n", 2, &out, &outlen, &err), -EACCES);
	assert_int_equal(twrite(m, "dialect", "spec\n", 5, &out, &outlen, &err), -EACCES);
	tclose(m);

	m = topen(G "dense_si32_3x4.dbdf");
	size_t len;
	char *d = tread(m, "data", &len);
	int32_t x = 77;
	memcpy(d + 8, &x, 4);
	assert_int_equal(twrite(m, "data", d, len, &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, 45 + 8, 4);
	free(out);
	assert_int_equal(twrite(m, "data", d, len - 1, &out, &outlen, &err), -EINVAL);
	free(d);
	assert_int_equal(twrite(m, "values.txt", "0 0 0 0 0 0 0 0 0 0 0 2147483648", 32, &out, &outlen,
				&err),
			 -ERANGE);
	tclose(m);

	m = topen(G "dense_ui8_3x4.dbdf");
	d = tread(m, "data.npy", &len);
	d[len - 1] = 1;
	assert_int_equal(twrite(m, "data.npy", d, len, &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, 56, 1);
	assert_int_equal(out[56], 1);
	free(out);
	free(d);
	tclose(m);
}

static void test_reshape(void **state)
{
	(void)state;
	struct mfs_model *m = topen(G "dense_f64_3x4.dbdf");
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen, len, sl;
	char *npy = tread(m, "data.npy", &len);
	char *sh = strstr(npy + 10, "(3, 4)");
	memcpy(sh, "(2, 6)", 6);
	assert_int_equal(twrite(m, "data.npy", npy, len, &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size);
	assert_int_equal(mfs_le64(out + 2), 2);
	assert_int_equal(mfs_le64(out + 10), 6);
	assert_int_equal(mfs_le32(out + 35), 2);
	assert_int_equal(mfs_le32(out + 39), 6);
	assert_memory_equal(out + 45, m->base + 45, 96);
	assert_memory_equal(out + 18, m->base + 18, 17);
	assert_int_equal(out[43], 1);
	const char *s = side(&sl);
	assert_non_null(s);
	assert_string_equal(s, "{\"numCols\":6,\"numRows\":2,\"valueType\":\"f64\"}");
	struct mfs_model *n = topen_mem(out, outlen, "x.dbdf", s, sl);
	tcheck(n, "shape", "2 6\n");
	tcheck(n, "header/rows", "2\n");
	tcheck(n, "blocks/0/shape", "2 6\n");
	tcheck(n, "values.txt", "0 1.5 -2.25 3 0.1 3.141592653589793\n"
				"-1e+300 5e-324 2.2250738585072014e-308 inf -inf nan\n");
	tcheck(n, "dialect", "daphne\n");
	tclose(n);
	free(out);
	free(npy);

	/* more elements: the file grows */
	double v[16];
	for (int i = 0; i < 16; i++)
		v[i] = i * 0.5;
	uint8_t *b = mknpy("<f8", "(4, 4)", v, sizeof(v), &len);
	assert_int_equal(twrite(m, "data.npy", b, len, &out, &outlen, &err), 0);
	free(b);
	assert_int_equal(outlen, 45 + 128);
	assert_memory_equal(out + 45, v, 128);
	s = side(&sl);
	assert_string_equal(s, "{\"numCols\":4,\"numRows\":4,\"valueType\":\"f64\"}");
	n = topen_mem(out, outlen, "x.dbdf", s, sl);
	tcheck(n, "values.txt", "0 0.5 1 1.5\n2 2.5 3 3.5\n4 4.5 5 5.5\n6 6.5 7 7.5\n");
	daphne_reencode_all(n);
	tclose(n);
	free(out);

	/* refused: not 2-D, another dtype */
	b = mknpy("<f8", "(12,)", v, 96, &len);
	assert_int_equal(twrite(m, "data.npy", b, len, &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "2 dimensions"));
	free(b);
	b = mknpy("<f4", "(3, 4)", v, 48, &len);
	assert_int_equal(twrite(m, "data.npy", b, len, &out, &outlen, &err), -EINVAL);
	free(b);
	/* the block's own data.npy keeps its shape */
	b = mknpy("<f8", "(4, 4)", v, 128, &len);
	assert_int_equal(twrite(m, "blocks/0/data.npy", b, len, &out, &outlen, &err), -EINVAL);
	tclose(m);

	/* without a .meta, none is written; a 0 x 4 matrix grows */
	size_t el;
	uint8_t *e = tload(tdata(G "dense_f64_0x4.dbdf"), &el);
	m = topen_mem(e, el, "e.dbdf", NULL, 0);
	free(e);
	assert_int_equal(twrite(m, "data.npy", b, len, &out, &outlen, &err), 0);
	assert_null(side(&sl));
	assert_int_equal(outlen, 45 + 128);
	free(out);
	free(b);
	tclose(m);

	/* a CSR matrix keeps its shape */
	m = topen(G "csr_f64_6x5.dbdf");
	b = mknpy("<f8", "(5, 6)", v, 0, &len);
	assert_int_equal(twrite(m, "data.npy", b, len, &out, &outlen, &err), -EINVAL);
	free(b);
	tclose(m);
}

static void test_meta_kept(void **state)
{
	(void)state;
	size_t len, outlen, sl;
	uint8_t *buf = tload(tdata(G "dense_f64_3x4.dbdf"), &len), *out;
	struct mfs_err err = {0};
	/* numNonZeros, when the .meta has it, follows the values */
	const char *meta = "{\"numCols\":4,\"numNonZeros\":11,\"numRows\":3,\"valueType\":\"f64\"}";
	struct mfs_model *m = topen_mem(buf, len, "x.dbdf", meta, strlen(meta));
	const char *txt = "0 0 -2.25 3\n0.1 3.141592653589793 -1e300 5e-324\n"
			  "2.2250738585072014e-308 inf -inf nan\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	free(out);
	assert_string_equal(side(&sl),
			    "{\"numCols\":4,\"numNonZeros\":10,\"numRows\":3,\"valueType\":\"f64\"}");
	txt = "7 1.5 -2.25 3\n0.1 3.141592653589793 -1e300 5e-324\n"
	      "2.2250738585072014e-308 inf -inf nan\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	free(out);
	assert_string_equal(side(&sl),
			    "{\"numCols\":4,\"numNonZeros\":12,\"numRows\":3,\"valueType\":\"f64\"}");
	txt = "0 1.5 -2.25 4\n0.1 3.141592653589793 -1e300 5e-324\n"
	      "2.2250738585072014e-308 inf -inf nan\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	free(out);
	assert_null(side(&sl));  /* still 11 */
	tclose(m);

	/* a hand-written, pretty-printed .meta comes back as DAPHNE writes it:
	 * compact, keys sorted, other keys kept, strings escaped as nlohmann */
	meta = "{\n    \"valueType\": \"f64\",\n    \"numRows\": 3,\n    \"numCols\": 4,\n"
	       "    \"hdfs\": {\"isHDFS\": true, \"HDFSFilename\": \"/x\\u00e9\\u0001\\/\"},\n"
	       "    \"numNonZeros\": 11\n}\n";
	m = topen_mem(buf, len, "x.dbdf", meta, strlen(meta));
	size_t nl;
	char *npy = tread(m, "data.npy", &nl);
	memcpy(strstr(npy + 10, "(3, 4)"), "(6, 2)", 6);
	assert_int_equal(twrite(m, "data.npy", npy, nl, &out, &outlen, &err), 0);
	free(out);
	assert_string_equal(side(&sl),
			    "{\"hdfs\":{\"HDFSFilename\":\"/x\xc3\xa9\\u0001/\",\"isHDFS\":true},"
			    "\"numCols\":2,\"numNonZeros\":11,\"numRows\":6,\"valueType\":\"f64\"}");
	tclose(m);

	/* a .meta that is not JSON cannot be kept in step: a reshape is
	 * refused, values still change */
	meta = "{\"numCols\":4,";
	m = topen_mem(buf, len, "x.dbdf", meta, strlen(meta));
	assert_int_equal(twrite(m, "data.npy", npy, nl, &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, ".meta"));
	txt = "0 1.5 -2.25 4\n0.1 3.141592653589793 -1e300 5e-324\n"
	      "2.2250738585072014e-308 inf -inf nan\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	free(out);
	tclose(m);
	free(npy);
	free(buf);

	/* upstream's pretty-printed sidecars parse (labels of a frame schema) */
	static const char *const pretty[] = {
		"daphne/upstream/meta-examples/parser-tests/MetaData2.meta",
		"daphne/upstream/meta-examples/parser-tests/MetaData8.meta",
		"daphne/upstream/meta-examples/io-ref/frame_mixed-str_ref.csv.meta",
	};
	static const char *const want[] = {"foo bar baz", "a bc def", "c_si64 c_f64 c_str"};
	buf = tload(tdata("daphne/generated/unit-test-outputs/ais-f.dbdf"), &len);
	for (int i = 0; i < 3; i++) {
		size_t ml;
		uint8_t *mb = tload(tdata(pretty[i]), &ml);
		m = topen_mem(buf, len, "ais-f.dbdf", mb, ml);
		char *l = tlist(m, "columns");
		assert_string_equal(l, want[i]);
		free(l);
		tclose(m);
		free(mb);
	}
	free(buf);
}

static void test_csr_edits(void **state)
{
	(void)state;
	struct mfs_model *m = topen(G "csr_f64_6x5.dbdf");
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen, sl;
	const uint64_t vals = 53 + 8 * 7 + 8 * 6;
	const char *txt = "0 0 0 0 0\n7 0 0 0 -2\n0 0 3.25 0 0\n0 0 0 0 0\n0 4 0 5.5 6\n0 0 0 0 0\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, vals, 8);
	double v;
	memcpy(&v, out + vals, 8);
	assert_true(v == 7);
	assert_null(side(&sl));
	struct mfs_model *n = topen_mem(out, outlen, "x.dbdf", NULL, 0);
	tcheck(n, "values.txt", txt);
	tclose(n);
	free(out);
	/* matrix.mtx, entries in any order, with comments */
	const char *mtx = "%%MatrixMarket matrix coordinate real general\n% edited\n6 5 6\n"
			  "5 5 -1\n2 1 1.5\n2 5 -2\n3 3 3.25\n5 2 4\n5 4 5.5\n";
	assert_int_equal(twrite(m, "matrix.mtx", mtx, strlen(mtx), &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, vals + 5 * 8, 8);
	memcpy(&v, out + vals + 40, 8);
	assert_true(v == -1);
	free(out);
	assert_int_equal(twrite(m, "blocks/0/matrix.mtx", mtx, strlen(mtx), &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, vals + 5 * 8, 8);
	free(out);
	/* a stored entry may become 0 (it stays stored) */
	txt = "0 0 0 0 0\n0 0 0 0 -2\n0 0 3.25 0 0\n0 0 0 0 0\n0 4 0 5.5 6\n0 0 0 0 0\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, vals, 8);
	free(out);
	/* the sparsity pattern cannot change */
	txt = "1 0 0 0 0\n1.5 0 0 0 -2\n0 0 3.25 0 0\n0 0 0 0 0\n0 4 0 5.5 6\n0 0 0 0 0\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), -EINVAL);
	mtx = "%%MatrixMarket matrix coordinate real general\n6 5 6\n"
	      "1 1 1\n2 1 1.5\n2 5 -2\n3 3 3.25\n5 2 4\n5 4 5.5\n";
	assert_int_equal(twrite(m, "matrix.mtx", mtx, strlen(mtx), &out, &outlen, &err), -EINVAL);
	tclose(m);

	m = topen(G "csr_si32_4x3.dbdf");
	const uint64_t vals32 = 53 + 8 * 5 + 8 * 4;
	txt = "0 7 0\n0 0 0\n-3 0 -9\n0 0 1\n";
	assert_int_equal(twrite(m, "blocks/0/values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, vals32 + 2 * 4, 4);
	free(out);
	txt = "0 7 0\n0 0 0\n-3 0 3000000000\n0 0 1\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), -ERANGE);
	tclose(m);
}

static void test_frame_edits(void **state)
{
	(void)state;
	struct mfs_model *m = topen(G "frame_mixed_4x8.dbdf");
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen, sl;
	const char *txt = "1.5\n-2.25\n0.1\n42\n";
	assert_int_equal(twrite(m, "columns/price/values.txt", txt, strlen(txt), &out, &outlen, &err),
			 0);
	daphne_same_outside(m->base, out, outlen, 107 + 3 * 38, 8);
	assert_null(side(&sl));
	struct mfs_model *n = topen_mem(out, outlen, "f.dbdf", m->sidecar, m->sidecar_len);
	tcheck(n, "columns/price/values.txt", txt);
	tcheck(n, "columns/count/values.txt", "-1\n0\n1\n9000000000\n");
	tclose(n);
	free(out);
	/* a middle column, two rows apart: two runs */
	txt = "0\n5\n255\n6\n";
	assert_int_equal(twrite(m, "columns/flag/values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	assert_int_equal(out[107 + 38 + 16], 5);
	assert_int_equal(out[107 + 3 * 38 + 16], 6);
	out[107 + 38 + 16] = 1;
	out[107 + 3 * 38 + 16] = 7;
	assert_memory_equal(out, m->base, outlen);
	free(out);
	/* data of a column, in row order */
	size_t len;
	char *d = tread(m, "columns/id/data", &len);
	uint32_t id = 123456;
	memcpy(d + 4, &id, 4);
	assert_int_equal(twrite(m, "columns/id/data", d, len, &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, 107 + 38 + 25, 4);
	free(out);
	free(d);
	/* data.npy of a column */
	d = tread(m, "columns/t/data.npy", &len);
	d[len - 1] = 0;
	assert_int_equal(twrite(m, "columns/t/data.npy", d, len, &out, &outlen, &err), 0);
	daphne_same_outside(m->base, out, outlen, 107 + 3 * 38 + 29, 1);
	free(out);
	free(d);
	/* refused */
	assert_int_equal(twrite(m, "columns/flag/values.txt", "0\n1\n256\n7\n", 10, &out, &outlen, &err),
			 -ERANGE);
	assert_int_equal(twrite(m, "columns/count/values.txt", "1 2 3", 5, &out, &outlen, &err), -EINVAL);
	assert_int_equal(twrite(m, "columns/count/values.txt", "1 2 3 x", 7, &out, &outlen, &err),
			 -EINVAL);
	assert_int_equal(twrite(m, "frame.csv", "a\n", 2, &out, &outlen, &err), -EACCES);
	tclose(m);
}

/* A `dd conv=notrunc` write: only the extents written are new. */
static int mem_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	memcpy(buf, (const uint8_t *)ctx + off, len);
	return 0;
}

static uint8_t *partial(struct mfs_model *m, const char *path, const char *content, size_t size,
			uint64_t off, uint64_t len, size_t *outlen)
{
	struct mfs_extent ext = {off, len};
	struct mfs_content c = {.size = size, .read = mem_read, .ctx = (void *)content,
				.ext = &ext, .next = 1};
	struct mfs_patch p;
	struct mfs_err err = {0};
	mfs_patch_init(&p);
	int r = mfs_view_write(m, tnode(m, path), &c, &p, &err);
	if (r != 0)
		fail_msg("%s: partial write gave %d: %s", path, r, err.msg);
	uint8_t *out = tapply(&p, m->base, (size_t)m->size, outlen);
	mfs_patch_free(&p);
	return out;
}

static void test_partial_data(void **state)
{
	(void)state;
	struct mfs_model *m = topen(G "dense_si64_3x4.dbdf");
	size_t len, outlen;
	char *d = tread(m, "data", &len);
	d[40] = 0x55;  /* one byte of element 5 */
	uint8_t *out = partial(m, "data", d, len, 40, 1, &outlen);
	daphne_same_outside(m->base, out, outlen, 45 + 40, 1);
	assert_int_equal(out[85], 0x55);
	free(out);
	free(d);
	tclose(m);
	/* a column interleaved in the file: bytes 9..11 are in row 1 */
	m = topen(G "frame_mixed_4x8.dbdf");
	d = tread(m, "columns/count/data", &len);
	d[9] = 1;
	d[10] = 2;
	out = partial(m, "columns/count/data", d, len, 9, 2, &outlen);
	daphne_same_outside(m->base, out, outlen, 107 + 38 + 8 + 1, 2);
	free(out);
	free(d);
	tclose(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dense_values),
		cmocka_unit_test(test_reshape),
		cmocka_unit_test(test_meta_kept),
		cmocka_unit_test(test_csr_edits),
		cmocka_unit_test(test_frame_edits),
		cmocka_unit_test(test_partial_data),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
