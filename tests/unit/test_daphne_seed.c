/* DAPHNE codec over files the tests build themselves (no software writes them
 * now): the spec dialect (every value type and block type, several blocks,
 * converted blocks, frames) and DAPHNE 0.1's CSR layout; reads, writes, bad files. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "test_daphne.h"

/* ---- building blocks ----------------------------------------------------- */

static void blk_dense(struct db *d, uint64_t rx, uint64_t cx, uint32_t r, uint32_t c, uint8_t vt,
		      const double *v, size_t *voff)
{
	db_block(d, rx, cx, r, c, 1);
	db_u8(d, vt);
	if (voff)
		*voff = d->n;
	for (uint64_t i = 0; i < (uint64_t)r * c; i++)
		db_spec_value(d, vt, v[i]);
}

/* Spec CSR: per row a u32 count, then (u32 column, value) pairs. */
static void blk_csr(struct db *d, uint64_t rx, uint64_t cx, uint32_t r, uint32_t c, uint8_t vt,
		    const uint32_t *cnt, const uint32_t *cols, const double *v, size_t *voff)
{
	uint64_t nnz = 0;
	for (uint32_t i = 0; i < r; i++)
		nnz += cnt[i];
	db_block(d, rx, cx, r, c, 2);
	db_u8(d, vt);
	db_u64(d, nnz);
	size_t k = 0;
	for (uint32_t i = 0; i < r; i++) {
		db_u32(d, cnt[i]);
		for (uint32_t j = 0; j < cnt[i]; j++, k++) {
			db_u32(d, cols[k]);
			if (voff)
				voff[k] = d->n;
			db_spec_value(d, vt, v[k]);
		}
	}
}

/* Spec COO: u32 count, then (u32 row[, u32 column], value); no column in a
 * 1-column block. */
static void blk_coo(struct db *d, uint64_t rx, uint64_t cx, uint32_t r, uint32_t c, uint8_t vt,
		    uint32_t nnz, const uint32_t *rows, const uint32_t *cols, const double *v,
		    size_t *voff)
{
	db_block(d, rx, cx, r, c, 3);
	db_u8(d, vt);
	db_u32(d, nnz);
	for (uint32_t k = 0; k < nnz; k++) {
		db_u32(d, rows[k]);
		if (c != 1)
			db_u32(d, cols[k]);
		if (voff)
			voff[k] = d->n;
		db_spec_value(d, vt, v[k]);
	}
}

static void refused(const struct db *d, const char *want)
{
	struct mfs_err err;
	dopen_fail(d->b, d->n, "bad.dbdf", &err);
	if (!strstr(err.msg, want))
		fail_msg("expected \"%s\", got: %s", want, err.msg);
}

/* ---- every value type ---------------------------------------------------- */

static const struct {
	uint8_t vt;
	const char *dtype;
	double v[6];
	const char *text;
} vts[] = {
	{1, "uint8", {0, 1, 2, 200, 254, 255}, "0 1 2\n200 254 255\n"},
	{2, "uint16", {0, 1, 2, 1000, 65534, 65535}, "0 1 2\n1000 65534 65535\n"},
	{3, "uint32", {0, 1, 2, 100000, 4294967294.0, 4294967295.0},
	 "0 1 2\n100000 4294967294 4294967295\n"},
	{4, "uint64", {0, 1, 2, 1099511627776.0, 1e19, 3},
	 "0 1 2\n1099511627776 10000000000000000000 3\n"},
	{5, "int8", {-128, -1, 0, 1, 100, 127}, "-128 -1 0\n1 100 127\n"},
	{6, "int16", {-32768, -1, 0, 1, 1000, 32767}, "-32768 -1 0\n1 1000 32767\n"},
	{7, "int32", {-2147483648.0, -1, 0, 1, 100000, 2147483647.0},
	 "-2147483648 -1 0\n1 100000 2147483647\n"},
	{8, "int64", {-9223372036854775808.0, -1, 0, 1, 1099511627776.0, 4611686018427387904.0},
	 "-9223372036854775808 -1 0\n1 1099511627776 4611686018427387904\n"},
	{9, "float32", {0, 1.5, -2.25, 0.1, 1e30, -0.0}, "0 1.5 -2.25\n0.1 1e+30 -0\n"},
	{10, "float64", {0, 1.5, -2.25, 0.1, 1e300, -0.0}, "0 1.5 -2.25\n0.1 1e+300 -0\n"},
};
#define NVTS (sizeof(vts) / sizeof(vts[0]))

static void test_value_types_dense(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVTS; i++) {
		struct db d = {0};
		size_t voff;
		db_header(&d, 1, 2, 3);
		db_u8(&d, vts[i].vt);
		blk_dense(&d, 0, 0, 2, 3, vts[i].vt, vts[i].v, &voff);
		assert_int_equal(voff, 45);
		const char *meta = "{\"numCols\":3,\"numRows\":2,\"valueType\":\"x\"}";
		struct mfs_model *m = dopen(&d, "v.dbdf", meta);
		char dt[32];
		snprintf(dt, sizeof(dt), "%s\n", vts[i].dtype);
		tcheck(m, "dialect", "spec\n");
		tcheck(m, "dtype", dt);
		tcheck(m, "shape", "2 3\n");
		tcheck(m, "values.txt", vts[i].text);
		tcheck(m, "blocks/0/values.txt", vts[i].text);
		tcheck(m, "blocks/0/type", "dense\n");
		char *l = tlist(m, "");
		assert_string_equal(l, "shape dtype values.txt data data.npy header dialect blocks");
		free(l);
		twalk(m);
		trewrite_all(m);
		daphne_reencode_all(m);
		/* a value, then a new shape, in the spec's layout */
		struct mfs_err err = {0};
		uint8_t *out;
		size_t outlen, len, sl;
		char txt[128];
		snprintf(txt, sizeof(txt), "1%s", strchr(vts[i].text, ' '));
		assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
		daphne_same_outside(d.b, out, d.n, 45, db_spec_size(vts[i].vt));
		free(out);
		char *npy = tread(m, "data.npy", &len);
		memcpy(strstr(npy + 10, "(2, 3)"), "(3, 2)", 6);
		assert_int_equal(twrite(m, "data.npy", npy, len, &out, &outlen, &err), 0);
		free(npy);
		assert_int_equal(mfs_le64(out + 2), 3);
		assert_int_equal(mfs_le32(out + 35), 3);
		assert_int_equal(mfs_le32(out + 39), 2);
		assert_string_equal((const char *)tlast_sidecar(&sl),
				    "{\"numCols\":2,\"numRows\":3,\"valueType\":\"x\"}");
		struct mfs_model *n = topen_mem(out, outlen, "v.dbdf", NULL, 0);
		tcheck(n, "dialect", "spec\n");
		tcheck(n, "shape", "3 2\n");
		tclose(n);
		free(out);
		tclose(m);
		tmutate_mem(d.b, d.n, "v.dbdf", 100);
		free(d.b);
	}
}

/* CSR and COO blocks (with and without a column index) of every type. */
static void test_value_types_sparse(void **state)
{
	(void)state;
	static const uint32_t cnt[3] = {1, 0, 2}, ccols[3] = {1, 0, 2};
	static const uint32_t crow[3] = {2, 0, 2}, ccol[3] = {2, 1, 0};
	for (size_t i = 0; i < NVTS; i++) {
		uint8_t vt = vts[i].vt;
		const double v[3] = {vts[i].v[5], vts[i].v[1], vts[i].v[3]};
		char want[160], mtx[200], t1[40], t2[40], t3[40];
		struct mfs_model *m;
		/* the texts of the three values as values.txt shows them */
		struct db d = {0};
		db_header(&d, 2, 3, 3);
		db_u8(&d, vt);
		size_t voff[3];
		blk_csr(&d, 0, 0, 3, 3, vt, cnt, ccols, v, voff);
		m = dopen(&d, "c.dbdf", NULL);
		tcheck(m, "dialect", "spec\n");
		tcheck(m, "blocks/0/type", "csr\n");
		char *mx = tread(m, "matrix.mtx", NULL);
		char *p = strchr(strchr(mx, '\n') + 1, '\n') + 1;
		assert_int_equal(sscanf(p, "1 2 %39s\n3 1 %39s\n3 3 %39s", t1, t2, t3), 3);
		free(mx);
		snprintf(want, sizeof(want), "0 %s 0\n0 0 0\n%s 0 %s\n", t1, t2, t3);
		tcheck(m, "values.txt", want);
		tcheck(m, "blocks/0/values.txt", want);
		twalk(m);
		trewrite_all(m);
		daphne_reencode_all(m);
		/* the second entry through matrix.mtx */
		snprintf(mtx, sizeof(mtx), "%%%%MatrixMarket matrix coordinate %s general\n3 3 3\n"
			 "1 2 %s\n3 1 2\n3 3 %s\n", vt >= 9 ? "real" : "integer", t1, t3);
		struct mfs_err err = {0};
		uint8_t *out;
		size_t outlen;
		int r = twrite(m, "matrix.mtx", mtx, strlen(mtx), &out, &outlen, &err);
		assert_true(r == 0 || (r == 1 && strcmp(t2, "2") == 0));
		if (r == 0) {
			daphne_same_outside(d.b, out, d.n, voff[1], db_spec_size(vt));
			free(out);
		}
		tclose(m);
		tmutate_mem(d.b, d.n, "c.dbdf", 100);
		free(d.b);

		/* COO, entries not in order: matrix.mtx keeps the file's order */
		d = (struct db){0};
		db_header(&d, 2, 3, 3);
		db_u8(&d, vt);
		const double cv[3] = {v[2], v[0], v[1]};
		blk_coo(&d, 0, 0, 3, 3, vt, 3, crow, ccol, cv, voff);
		m = dopen(&d, "o.dbdf", NULL);
		tcheck(m, "blocks/0/type", "coo\n");
		tcheck(m, "values.txt", want);
		snprintf(mtx, sizeof(mtx), "%%%%MatrixMarket matrix coordinate %s general\n3 3 3\n"
			 "3 3 %s\n1 2 %s\n3 1 %s\n", vt >= 9 ? "real" : "integer", t3, t1, t2);
		tcheck(m, "matrix.mtx", mtx);
		twalk(m);
		trewrite_all(m);
		daphne_reencode_all(m);
		tclose(m);
		tmutate_mem(d.b, d.n, "o.dbdf", 100);
		free(d.b);

		/* a 1-column COO block: no column index */
		d = (struct db){0};
		db_header(&d, 2, 3, 1);
		db_u8(&d, vt);
		static const uint32_t rows1[2] = {2, 0};
		const double v1[2] = {v[2], v[0]};
		blk_coo(&d, 0, 0, 3, 1, vt, 2, rows1, NULL, v1, voff);
		assert_int_equal(d.n, 19 + 25 + 1 + 4 + 2 * (4 + db_spec_size(vt)));
		m = dopen(&d, "o1.dbdf", NULL);
		snprintf(want, sizeof(want), "%s\n0\n%s\n", t1, t3);
		tcheck(m, "values.txt", want);
		tcheck(m, "shape", "3 1\n");
		snprintf(want, sizeof(want), "0\n0\n%s\n", t3);
		r = twrite(m, "values.txt", want, strlen(want), &out, &outlen, &err);
		assert_int_equal(r, strcmp(t1, "0") == 0 ? 1 : 0);
		if (r == 0) {
			daphne_same_outside(d.b, out, d.n, voff[1], db_spec_size(vt));
			free(out);
		}
		twalk(m);
		daphne_reencode_all(m);
		tclose(m);
		tmutate_mem(d.b, d.n, "o1.dbdf", 100);
		free(d.b);
	}
}

/* ---- several blocks ------------------------------------------------------ */

/* A 6 x 6 float64 matrix of five blocks:
 *   0 dense (0,0) 2x6 = 1..12     1 CSR (2,0) 3x3: (0,1)=13 (2,0)=14 (2,2)=15
 *   2 COO (2,3) 3x2: (1,1)=16 (0,0)=17     3 COO (2,5) 3x1: (2,0)=18
 *   4 empty (5,0) 1x6 */
static const char *const multi_values =
	"1 2 3 4 5 6\n7 8 9 10 11 12\n0 13 0 17 0 0\n0 0 0 0 16 0\n14 0 15 0 0 18\n0 0 0 0 0 0\n";

static void build_multi(struct db *d, uint8_t dt, size_t off[5])
{
	double dv[12];
	for (int i = 0; i < 12; i++)
		dv[i] = i + 1;
	static const uint32_t cnt[3] = {1, 0, 2}, ccols[3] = {1, 0, 2};
	static const double cv[3] = {13, 14, 15};
	static const uint32_t orow[2] = {1, 0}, ocol[2] = {1, 0};
	static const double ov[2] = {16, 17};
	static const uint32_t orow1[1] = {2};
	static const double ov1[1] = {18};
	size_t csr[3], coo[2];
	db_header(d, dt, 6, 6);
	db_u8(d, 10);
	blk_dense(d, 0, 0, 2, 6, 10, dv, &off[0]);
	blk_csr(d, 2, 0, 3, 3, 10, cnt, ccols, cv, csr);
	blk_coo(d, 2, 3, 3, 2, 10, 2, orow, ocol, ov, coo);
	blk_coo(d, 2, 5, 3, 1, 10, 1, orow1, NULL, ov1, &off[3]);
	db_block(d, 5, 0, 1, 6, 0);
	off[1] = csr[0];
	off[2] = coo[0];
	off[4] = d->n;
}

static void test_multi_block(void **state)
{
	(void)state;
	struct db d = {0};
	size_t off[5];
	build_multi(&d, 1, off);
	struct mfs_model *m = dopen(&d, "multi.dbdf", NULL);
	tcheck(m, "dialect", "spec\n");
	tcheck(m, "header/type", "dense\n");
	tcheck(m, "shape", "6 6\n");
	tcheck(m, "values.txt", multi_values);
	char *l = tlist(m, "");
	assert_string_equal(l, "shape dtype values.txt data.npy header dialect blocks");
	free(l);
	l = tlist(m, "blocks");
	assert_string_equal(l, "0 1 2 3 4");
	free(l);
	static const char *const types[] = {"dense\n", "csr\n", "coo\n", "coo\n", "empty\n"};
	static const char *const pos[][2] = {{"0\n", "0\n"}, {"2\n", "0\n"}, {"2\n", "3\n"},
					     {"2\n", "5\n"}, {"5\n", "0\n"}};
	for (int k = 0; k < 5; k++) {
		char p[64];
		snprintf(p, sizeof(p), "blocks/%d/type", k);
		tcheck(m, p, types[k]);
		snprintf(p, sizeof(p), "blocks/%d/row", k);
		tcheck(m, p, pos[k][0]);
		snprintf(p, sizeof(p), "blocks/%d/col", k);
		tcheck(m, p, pos[k][1]);
	}
	tcheck(m, "blocks/0/values.txt", "1 2 3 4 5 6\n7 8 9 10 11 12\n");
	tcheck(m, "blocks/1/values.txt", "0 13 0\n0 0 0\n14 0 15\n");
	tcheck(m, "blocks/1/matrix.mtx",
	       "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 2 13\n3 1 14\n3 3 15\n");
	tcheck(m, "blocks/2/matrix.mtx",
	       "%%MatrixMarket matrix coordinate real general\n3 2 2\n2 2 16\n1 1 17\n");
	tcheck(m, "blocks/3/matrix.mtx", "%%MatrixMarket matrix coordinate real general\n3 1 1\n3 1 18\n");
	tcheck(m, "blocks/4/values.txt", "0 0 0 0 0 0\n");
	l = tlist(m, "blocks/4");
	assert_string_equal(l, "row col type shape dtype values.txt data.npy");
	free(l);
	assert_false(m->nodes[tnode(m, "blocks/4/values.txt")].flags & MFS_NF_WRITABLE);
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);

	/* one value in each kind of block, through the whole matrix */
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	const char *txt = "101 2 3 4 5 6\n7 8 9 10 11 12\n0 113 0 17 0 0\n0 0 0 0 116 0\n"
			  "14 0 15 0 0 118\n0 0 0 0 0 0\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	assert_int_equal(outlen, d.n);
	size_t at[4] = {off[0], off[1], off[2], off[3]};
	double want[4] = {101, 113, 116, 118};
	for (int k = 0; k < 4; k++) {
		double v;
		memcpy(&v, out + at[k], 8);
		assert_true(v == want[k]);
		memcpy(out + at[k], d.b + at[k], 8);
	}
	assert_memory_equal(out, d.b, d.n);
	free(out);
	/* nothing is stored there: a nonzero is refused */
	txt = "1 2 3 4 5 6\n7 8 9 10 11 12\n0 13 0 17 0 0\n0 0 0 0 16 0\n14 0 15 0 0 18\n0 0 1 0 0 0\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "(5, 2) lies in empty block 4"));
	txt = "1 2 3 4 5 6\n7 8 9 10 11 12\n1 13 0 17 0 0\n0 0 0 0 16 0\n14 0 15 0 0 18\n0 0 0 0 0 0\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "(2, 0) is not an entry of sparse block 1"));
	/* the blocks' own views */
	txt = "17 0\n0 -16\n0 0\n";
	assert_int_equal(twrite(m, "blocks/2/values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	daphne_same_outside(d.b, out, d.n, off[2], 8);
	free(out);
	tclose(m);
	tmutate_mem(d.b, d.n, "multi.dbdf", 300);

	/* the same blocks in a CSR matrix: its entries are every stored value */
	free(d.b);
	d = (struct db){0};
	build_multi(&d, 2, off);
	m = dopen(&d, "multi.dbdf", NULL);
	tcheck(m, "header/type", "csr\n");
	tcheck(m, "values.txt", multi_values);
	l = tlist(m, "");
	assert_string_equal(l, "shape dtype values.txt data.npy matrix.mtx header dialect blocks");
	free(l);
	char *mx = tread(m, "matrix.mtx", NULL);
	assert_non_null(strstr(mx, "general\n6 6 18\n1 1 1\n1 2 2\n"));
	assert_non_null(strstr(mx, "\n2 6 12\n3 2 13\n5 1 14\n5 3 15\n4 5 16\n3 4 17\n5 6 18\n"));
	free(mx);
	const char *mtx = "%%MatrixMarket matrix coordinate real general\n6 6 18\n"
			  "1 1 1\n1 2 2\n1 3 3\n1 4 4\n1 5 5\n1 6 6\n2 1 7\n2 2 8\n2 3 9\n2 4 10\n"
			  "2 5 11\n2 6 12\n3 2 13\n5 1 14\n5 3 15\n4 5 16\n3 4 -17\n5 6 18\n";
	assert_int_equal(twrite(m, "matrix.mtx", mtx, strlen(mtx), &out, &outlen, &err), 0);
	daphne_same_outside(d.b, out, d.n, off[2] + 16, 8);
	free(out);
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	tclose(m);
	tmutate_mem(d.b, d.n, "multi.dbdf", 300);
	free(d.b);

	/* uncovered cells are zeros; a nonzero there is refused */
	d = (struct db){0};
	static const double two[2] = {1, 2};
	db_header(&d, 1, 3, 3);
	db_u8(&d, 10);
	blk_dense(&d, 1, 1, 1, 2, 10, two, NULL);
	m = dopen(&d, "gap.dbdf", NULL);
	tcheck(m, "values.txt", "0 0 0\n0 1 2\n0 0 0\n");
	assert_int_equal(twrite(m, "values.txt", "1 0 0 0 1 2 0 0 0", 17, &out, &outlen, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "(0, 0) lies in no block"));
	tclose(m);
	free(d.b);

	/* no block at all: a matrix of zeros */
	d = (struct db){0};
	db_header(&d, 1, 2, 2);
	db_u8(&d, 7);
	m = dopen(&d, "zero.dbdf", NULL);
	tcheck(m, "values.txt", "0 0\n0 0\n");
	tcheck(m, "dtype", "int32\n");
	l = tlist(m, "blocks");
	assert_string_equal(l, "");
	free(l);
	tclose(m);
	free(d.b);
}

/* Blocks stored in another value type than the matrix's. */
static void test_block_types(void **state)
{
	(void)state;
	struct db d = {0};
	static const double a[2] = {7, 255}, b[2] = {-3, 1000};
	size_t oa, ob;
	db_header(&d, 1, 2, 2);
	db_u8(&d, 10);
	blk_dense(&d, 0, 0, 1, 2, 1, a, &oa);
	blk_dense(&d, 1, 0, 1, 2, 6, b, &ob);
	struct mfs_model *m = dopen(&d, "t.dbdf", NULL);
	tcheck(m, "dtype", "float64\n");
	tcheck(m, "values.txt", "7 255\n-3 1000\n");
	tcheck(m, "blocks/0/dtype", "uint8\n");
	tcheck(m, "blocks/1/dtype", "int16\n");
	tcheck(m, "blocks/1/values.txt", "-3 1000\n");
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	assert_int_equal(twrite(m, "values.txt", "8 255 -3 -1000", 14, &out, &outlen, &err), 0);
	assert_int_equal(out[oa], 8);
	assert_int_equal((int16_t)mfs_le16(out + ob + 2), -1000);
	out[oa] = 7;
	memcpy(out + ob + 2, d.b + ob + 2, 2);
	assert_memory_equal(out, d.b, d.n);
	free(out);
	assert_int_equal(twrite(m, "values.txt", "7 256 -3 1000", 13, &out, &outlen, &err), -ERANGE);
	assert_non_null(strstr(err.msg, "256 at (0, 1) is not a uint8 value"));
	assert_int_equal(twrite(m, "values.txt", "7 254.5 -3 1000", 15, &out, &outlen, &err), -ERANGE);
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	tclose(m);
	tmutate_mem(d.b, d.n, "t.dbdf", 200);
	free(d.b);
	/* a stored value the matrix's type cannot hold: refused */
	d = (struct db){0};
	db_header(&d, 1, 1, 2);
	db_u8(&d, 1);
	blk_dense(&d, 0, 0, 1, 2, 6, b, NULL);
	refused(&d, "block 0: its int16 value at (0, 0) is not a uint8 value");
	free(d.b);
	d = (struct db){0};
	static const double big[1] = {16777217};
	db_header(&d, 1, 1, 1);
	db_u8(&d, 9);
	blk_dense(&d, 0, 0, 1, 1, 3, big, NULL);
	refused(&d, "is not a float32 value");
	free(d.b);
}

/* ---- frames -------------------------------------------------------------- */

/* 4 rows, columns a (f64), bb (i32), ccc (u8):
 *   0 dense (0,0) 4x1: 1.5 2.5 3.5 4.5     1 dense (0,1) 2x1: -1 -2
 *   2 COO (2,1) 2x1: (1,0)=-4              3 CSR (0,2) 4x1: (0,0)=9 (2,0)=8 */
static void build_frame(struct db *d, uint8_t bb_vt, size_t *coo_off)
{
	static const double a[4] = {1.5, 2.5, 3.5, 4.5}, bb[2] = {-1, -2}, c4[1] = {-4},
			    cv[2] = {9, 8};
	static const uint32_t crow[1] = {1}, cnt[4] = {1, 0, 1, 0}, ccols[2] = {0, 0};
	db_header(d, 3, 4, 3);
	db_u8(d, 10);
	db_u8(d, 7);
	db_u8(d, 1);
	db_u16(d, 1);
	db_bytes(d, "a", 1);
	db_u16(d, 2);
	db_bytes(d, "bb", 2);
	db_u16(d, 3);
	db_bytes(d, "ccc", 3);
	blk_dense(d, 0, 0, 4, 1, 10, a, NULL);
	blk_dense(d, 0, 1, 2, 1, bb_vt, bb, NULL);
	blk_coo(d, 2, 1, 2, 1, 7, 1, crow, NULL, c4, coo_off);
	blk_csr(d, 0, 2, 4, 1, 1, cnt, ccols, cv, NULL);
}

static void test_frame(void **state)
{
	(void)state;
	struct db d = {0};
	size_t coo;
	build_frame(&d, 7, &coo);
	struct mfs_model *m = dopen(&d, "f.dbdf", NULL);
	tcheck(m, "dialect", "spec\n");
	tcheck(m, "header/type", "frame\n");
	char *l = tlist(m, "");
	assert_string_equal(l, "header dialect columns frame.csv blocks");
	free(l);
	l = tlist(m, "columns");
	assert_string_equal(l, "a bb ccc");
	free(l);
	tcheck(m, "columns/a/values.txt", "1.5\n2.5\n3.5\n4.5\n");
	tcheck(m, "columns/bb/values.txt", "-1\n-2\n0\n-4\n");
	tcheck(m, "columns/bb/dtype", "int32\n");
	tcheck(m, "columns/ccc/values.txt", "9\n0\n8\n0\n");
	tcheck(m, "columns/ccc/dtype", "uint8\n");
	tcheck(m, "frame.csv", "a,bb,ccc\n1.5,-1,9\n2.5,-2,0\n3.5,0,8\n4.5,-4,0\n");
	tcheck(m, "blocks/2/type", "coo\n");
	tcheck(m, "blocks/3/type", "csr\n");
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	assert_int_equal(twrite(m, "columns/bb/values.txt", "-1\n-2\n0\n-5\n", 11, &out, &outlen, &err), 0);
	daphne_same_outside(d.b, out, d.n, coo, 4);
	assert_int_equal((int32_t)mfs_le32(out + coo), -5);
	free(out);
	assert_int_equal(twrite(m, "columns/bb/values.txt", "-1\n-2\n7\n-4\n", 11, &out, &outlen, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "(2, 1) is not an entry of sparse block 2"));
	tclose(m);
	/* labels from the .meta win */
	const char *meta = "{\"numCols\":3,\"numRows\":4,\"schema\":[{\"label\":\"x\",\"valueType\":\"f64\"},"
			   "{\"label\":\"y\",\"valueType\":\"si32\"},{\"valueType\":\"ui8\"}]}";
	m = dopen(&d, "f.dbdf", meta);
	l = tlist(m, "columns");
	assert_string_equal(l, "x y ccc");
	free(l);
	tclose(m);
	tmutate_mem(d.b, d.n, "f.dbdf", 300);
	free(d.b);
	/* a block's value type must be its columns' */
	d = (struct db){0};
	build_frame(&d, 10, &coo);
	refused(&d, "block 1 holds float64 values, but column 1 is int32");
	free(d.b);
}

/* ---- DAPHNE 0.1 ---------------------------------------------------------- */

/* The DAPHNE 0.1 CSR layout of csr_si32_4x3: per row a u64 count and
 * (u64 column, value) pairs. */
static void build_v01(struct db *d, const uint64_t cnt[4], const uint64_t cols[4])
{
	static const int32_t v[4] = {7, -3, 9, 1};
	db_header(d, 2, 4, 3);
	db_u8(d, 1);
	db_u64(d, 0);
	db_u64(d, 0);
	db_u32(d, 4);
	db_u32(d, 3);
	db_u8(d, 2);
	db_u8(d, 1);
	db_u64(d, 4);
	size_t k = 0;
	for (int r = 0; r < 4; r++) {
		db_u64(d, cnt[r]);
		for (uint64_t j = 0; j < cnt[r]; j++, k++) {
			db_u64(d, cols[k]);
			db_bytes(d, &v[k], 4);
		}
	}
}

static void test_daphne01(void **state)
{
	(void)state;
	static const uint64_t cnt[4] = {1, 0, 2, 1}, cols[4] = {1, 0, 2, 2};
	struct db d = {0};
	build_v01(&d, cnt, cols);
	assert_int_equal(d.n, 53 + 4 * 8 + 4 * 12);
	struct mfs_model *m = dopen(&d, "old.dbdf", NULL);
	tcheck(m, "dialect", "daphne-0.1\n");
	tcheck(m, "values.txt", "0 7 0\n0 0 0\n-3 0 9\n0 0 1\n");
	tcheck(m, "matrix.mtx", "%%MatrixMarket matrix coordinate integer general\n4 3 4\n"
				"1 2 7\n3 1 -3\n3 3 9\n4 3 1\n");
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	const char *txt = "0 7 0\n0 0 0\n-3 0 10\n0 0 1\n";
	assert_int_equal(twrite(m, "values.txt", txt, strlen(txt), &out, &outlen, &err), 0);
	/* row 2's second entry: after 3 counts and 2 entries, and its column */
	size_t at = 53 + 3 * 8 + 2 * 12 + 8;
	daphne_same_outside(d.b, out, d.n, at, 4);
	assert_int_equal(mfs_le32(out + at), 10);
	free(out);
	tclose(m);
	tmutate_mem(d.b, d.n, "old.dbdf", 300);
	free(d.b);
	/* counts that add up but put columns out of order */
	static const uint64_t cnt2[4] = {2, 0, 1, 1};
	d = (struct db){0};
	build_v01(&d, cnt2, cols);
	refused(&d, "column indices out of order (0 after 1)");
	free(d.b);
	static const uint64_t cols2[4] = {1, 0, 3, 2};
	d = (struct db){0};
	build_v01(&d, cnt, cols2);
	refused(&d, "column index 3 is beyond its 3 columns");
	free(d.b);
	/* DAPHNE 0.1 could also read a COO block (nnz u64, u32 indices) */
	d = (struct db){0};
	db_header(&d, 2, 3, 3);
	db_u8(&d, 7);
	db_u64(&d, 0);
	db_u64(&d, 0);
	db_u32(&d, 3);
	db_u32(&d, 3);
	db_u8(&d, 3);
	db_u8(&d, 7);
	db_u64(&d, 2);
	db_u32(&d, 2);
	db_u32(&d, 1);
	double x = 0.5;
	db_bytes(&d, &x, 8);
	db_u32(&d, 0);
	db_u32(&d, 2);
	x = -1;
	db_bytes(&d, &x, 8);
	m = dopen(&d, "coo.dbdf", NULL);
	tcheck(m, "dialect", "daphne-0.1\n");
	tcheck(m, "values.txt", "0 0 -1\n0 0 0\n0 0.5 0\n");
	tcheck(m, "blocks/0/type", "coo\n");
	daphne_reencode_all(m);
	tclose(m);
	tmutate_mem(d.b, d.n, "coo.dbdf", 200);
	free(d.b);
}

/* ---- hyper-sparse matrices: entries only --------------------------------- */

/* Three float64 entries of a sparse matrix far too large to show densely:
 * row 0 column 7 = 1.5, row 1 (or 2) last column = -2, last row column 0 = 3. */
static const double hyper_v[3] = {1.5, -2, 3};

/* A sparse matrix (one block) beyond DAPHNE_DENSE_FLOOR: shape, dtype and
 * matrix.mtx (1-based, file order) only, for the matrix and its block;
 * edited through matrix.mtx (the value of entry 1 becomes 0.25, at `at`),
 * and the result re-opens the same way. */
static void check_hyper(const struct db *d, const char *dialect, const char *shape,
			const char *mtx, const char *bmtx, const char *edited, const char *reread,
			size_t at)
{
	struct mfs_model *m = dopen(d, "hyper.dbdf", NULL);
	tcheck(m, "dialect", dialect);
	tcheck(m, "header/type", "csr\n");
	tcheck(m, "shape", shape);
	tcheck(m, "dtype", "float64\n");
	tcheck(m, "matrix.mtx", mtx);
	tcheck(m, "blocks/0/type", "csr\n");
	tcheck(m, "blocks/0/matrix.mtx", bmtx);
	char *l = tlist(m, "");
	assert_string_equal(l, "shape dtype matrix.mtx header dialect blocks");
	free(l);
	l = tlist(m, "blocks/0");
	assert_string_equal(l, "row col type shape dtype matrix.mtx");
	free(l);
	const struct mfs_tensor *t = mfs_node_tensor(m, MFS_ROOT);
	assert_int_equal(t->flags & (MFS_TF_SPARSE | MFS_TF_NODENSE), MFS_TF_SPARSE | MFS_TF_NODENSE);
	assert_int_equal(t->nnz, 3);
	assert_true(m->nodes[tnode(m, "matrix.mtx")].flags & MFS_NF_WRITABLE);
	assert_true(m->nodes[tnode(m, "blocks/0/matrix.mtx")].flags & MFS_NF_WRITABLE);
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	assert_int_equal(twrite(m, "matrix.mtx", edited, strlen(edited), &out, &outlen, &err), 0);
	daphne_same_outside(d->b, out, d->n, at, 8);
	double v;
	memcpy(&v, out + at, 8);
	assert_true(v == 0.25);
	struct mfs_model *n = topen_mem(out, outlen, "hyper.dbdf", NULL, 0);
	tcheck(n, "matrix.mtx", reread);
	l = tlist(n, "");
	assert_string_equal(l, "shape dtype matrix.mtx header dialect blocks");
	free(l);
	daphne_reencode_all(n);
	tclose(n);
	free(out);
	/* the same through the block's own matrix.mtx */
	char *bm = tread(m, "blocks/0/matrix.mtx", NULL);
	char *neg = strstr(bm, " -2\n");
	assert_non_null(neg);
	char bedit[512];
	snprintf(bedit, sizeof(bedit), "%.*s 0.25\n%s", (int)(neg - bm), bm, neg + 4);
	free(bm);
	assert_int_equal(twrite(m, "blocks/0/matrix.mtx", bedit, strlen(bedit), &out, &outlen, &err),
			 0);
	daphne_same_outside(d->b, out, d->n, at, 8);
	free(out);
	tclose(m);
	tmutate_mem(d->b, d->n, "hyper.dbdf", 300);
}

static void test_hyper_sparse(void **state)
{
	(void)state;
	const uint64_t big = 1ull << 40, wide = 1ull << 20;
	/* Spec: a 2^40 x 2^20 matrix (2^40 x 2^40 would have more elements
	 * than a uint64 counts), one 5 x 2^20 CSR block at (2^39, 0). */
	static const uint32_t cnt[5] = {1, 0, 1, 0, 1}, cols[3] = {7, (1u << 20) - 1, 0};
	struct db d = {0};
	size_t voff[3];
	db_header(&d, 2, big, wide);
	db_u8(&d, 10);
	blk_csr(&d, big / 2, 0, 5, (uint32_t)wide, 10, cnt, cols, hyper_v, voff);
	check_hyper(&d, "spec\n", "1099511627776 1048576\n",
		    "%%MatrixMarket matrix coordinate real general\n1099511627776 1048576 3\n"
		    "549755813889 8 1.5\n549755813891 1048576 -2\n549755813893 1 3\n",
		    "%%MatrixMarket matrix coordinate real general\n5 1048576 3\n"
		    "1 8 1.5\n3 1048576 -2\n5 1 3\n",
		    /* any order */
		    "%%MatrixMarket matrix coordinate real general\n1099511627776 1048576 3\n"
		    "549755813893 1 3\n549755813891 1048576 0.25\n549755813889 8 1.5\n",
		    "%%MatrixMarket matrix coordinate real general\n1099511627776 1048576 3\n"
		    "549755813889 8 1.5\n549755813891 1048576 0.25\n549755813893 1 3\n",
		    voff[1]);
	/* the sparsity pattern still cannot change */
	struct mfs_model *m = dopen(&d, "hyper.dbdf", NULL);
	const char *moved = "%%MatrixMarket matrix coordinate real general\n1099511627776 1048576 3\n"
			    "549755813889 8 1.5\n549755813891 1048575 -2\n549755813893 1 3\n";
	struct mfs_err err = {0};
	uint8_t *out;
	size_t outlen;
	assert_int_equal(twrite(m, "matrix.mtx", moved, strlen(moved), &out, &outlen, &err), -EINVAL);
	tclose(m);
	free(d.b);

	/* DAPHNE: 3 x (2^32 - 1), row offsets, column indices, values */
	const uint32_t dc = UINT32_MAX;
	const char *dmtx = "%%MatrixMarket matrix coordinate real general\n3 4294967295 3\n"
			   "1 8 1.5\n2 4294967295 -2\n3 1 3\n";
	const char *dedit = "%%MatrixMarket matrix coordinate real general\n3 4294967295 3\n"
			    "1 8 1.5\n2 4294967295 0.25\n3 1 3\n";
	d = (struct db){0};
	db_header(&d, 2, 3, dc);
	db_u8(&d, 7);
	db_u64(&d, 0);
	db_u64(&d, 0);
	db_u32(&d, 3);
	db_u32(&d, dc);
	db_u8(&d, 2);
	db_u8(&d, 7);
	db_u64(&d, 3);
	for (uint64_t r = 0; r <= 3; r++)
		db_u64(&d, r);
	db_u64(&d, 7);
	db_u64(&d, dc - 1);
	db_u64(&d, 0);
	db_bytes(&d, hyper_v, sizeof(hyper_v));
	assert_int_equal(d.n, 53 + 4 * 8 + 3 * 16);
	check_hyper(&d, "daphne\n", "3 4294967295\n", dmtx, dmtx, dedit, dedit,
		    53 + 4 * 8 + 3 * 8 + 8);
	free(d.b);

	/* DAPHNE 0.1: the same rows as (count, (column, value) ...) */
	d = (struct db){0};
	db_header(&d, 2, 3, dc);
	db_u8(&d, 7);
	db_u64(&d, 0);
	db_u64(&d, 0);
	db_u32(&d, 3);
	db_u32(&d, dc);
	db_u8(&d, 2);
	db_u8(&d, 7);
	db_u64(&d, 3);
	const uint64_t c01[3] = {7, dc - 1, 0};
	for (int r = 0; r < 3; r++) {
		db_u64(&d, 1);
		db_u64(&d, c01[r]);
		db_bytes(&d, &hyper_v[r], 8);
	}
	check_hyper(&d, "daphne-0.1\n", "3 4294967295\n", dmtx, dmtx, dedit, dedit,
		    53 + 24 + 8 + 8);
	free(d.b);

	/* Spec, mixed blocks: a dense block keeps its views; a huge COO block
	 * and a huge empty block show their entries only (the empty one none,
	 * read-only). */
	static const double two[2] = {4, 5}, six[1] = {6};
	static const uint32_t orow[1] = {UINT32_MAX - 1}, ocol[1] = {(1u << 20) - 1};
	size_t doff, ooff;
	d = (struct db){0};
	db_header(&d, 2, big, wide);
	db_u8(&d, 10);
	blk_dense(&d, 0, 0, 1, 2, 10, two, &doff);
	blk_coo(&d, big / 2, 0, UINT32_MAX, (uint32_t)wide, 10, 1, orow, ocol, six, &ooff);
	db_block(&d, big / 2 + UINT32_MAX, 0, UINT32_MAX, (uint32_t)wide, 0);
	m = dopen(&d, "mixed.dbdf", NULL);
	char *l;
	tcheck(m, "matrix.mtx", "%%MatrixMarket matrix coordinate real general\n1099511627776 1048576 3\n"
				"1 1 4\n1 2 5\n554050781183 1048576 6\n");
	l = tlist(m, "");
	assert_string_equal(l, "shape dtype matrix.mtx header dialect blocks");
	free(l);
	l = tlist(m, "blocks/0");
	assert_string_equal(l, "row col type shape dtype values.txt data data.npy");
	free(l);
	tcheck(m, "blocks/0/values.txt", "4 5\n");
	for (int k = 1; k <= 2; k++) {
		char p[32];
		snprintf(p, sizeof(p), "blocks/%d", k);
		l = tlist(m, p);
		assert_string_equal(l, "row col type shape dtype matrix.mtx");
		free(l);
	}
	tcheck(m, "blocks/1/type", "coo\n");
	tcheck(m, "blocks/1/shape", "4294967295 1048576\n");
	tcheck(m, "blocks/1/matrix.mtx", "%%MatrixMarket matrix coordinate real general\n"
					 "4294967295 1048576 1\n4294967295 1048576 6\n");
	tcheck(m, "blocks/2/type", "empty\n");
	tcheck(m, "blocks/2/matrix.mtx", "%%MatrixMarket matrix coordinate real general\n"
					 "4294967295 1048576 0\n");
	assert_false(m->nodes[tnode(m, "blocks/2/matrix.mtx")].flags & MFS_NF_WRITABLE);
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	const char *mx = "%%MatrixMarket matrix coordinate real general\n1099511627776 1048576 3\n"
			 "1 1 4\n1 2 -5\n554050781183 1048576 0.5\n";
	assert_int_equal(twrite(m, "matrix.mtx", mx, strlen(mx), &out, &outlen, &err), 0);
	struct mfs_model *n = topen_mem(out, outlen, "mixed.dbdf", NULL, 0);
	tcheck(n, "matrix.mtx", mx);
	tclose(n);
	double v;
	memcpy(&v, out + doff + 8, 8);
	assert_true(v == -5);
	memcpy(&v, out + ooff, 8);
	assert_true(v == 0.5);
	free(out);
	assert_int_equal(twrite(m, "blocks/0/values.txt", "4 9\n", 4, &out, &outlen, &err), 0);
	daphne_same_outside(d.b, out, d.n, doff + 8, 8);
	free(out);
	tclose(m);
	tmutate_mem(d.b, d.n, "mixed.dbdf", 300);
	free(d.b);

	/* a CSR matrix of no stored value at all */
	d = (struct db){0};
	db_header(&d, 2, 1ull << 30, 1ull << 30);
	db_u8(&d, 10);
	m = dopen(&d, "none.dbdf", NULL);
	tcheck(m, "matrix.mtx", "%%MatrixMarket matrix coordinate real general\n"
				"1073741824 1073741824 0\n");
	l = tlist(m, "");
	assert_string_equal(l, "shape dtype matrix.mtx header dialect blocks");
	free(l);
	twalk(m);
	tclose(m);
	free(d.b);

	/* still refused: a dense matrix (test_bad), a frame (its columns and
	 * frame.csv are dense), sizes in bytes that overflow */
	d = (struct db){0};
	db_header(&d, 3, big, 1);
	db_u8(&d, 10);
	db_u16(&d, 1);
	db_u8(&d, 'a');
	refused(&d, "more than the 4194304 that its dense views may show");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 2, big, 1ull << 22);
	db_u8(&d, 10);
	refused(&d, "1099511627776 x 4194304 values of 8 bytes: their size overflows");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 2, UINT32_MAX, UINT32_MAX);
	db_u8(&d, 1);
	blk_coo(&d, 0, 0, UINT32_MAX, UINT32_MAX, 10, 0, NULL, NULL, NULL, NULL);
	refused(&d, "block 0: 4294967295 x 4294967295 values of 8 bytes: their size overflows");
	free(d.b);
}

/* ---- bad spec files ------------------------------------------------------ */

static void test_bad(void **state)
{
	(void)state;
	static const double v4[4] = {1, 2, 3, 4};
	struct db d = {0};
	db_header(&d, 1, 3, 3);
	db_u8(&d, 10);
	blk_dense(&d, 0, 0, 2, 2, 10, v4, NULL);
	blk_dense(&d, 1, 1, 2, 2, 10, v4, NULL);
	refused(&d, "blocks 0 (2 x 2 at (0, 0)) and 1 (2 x 2 at (1, 1)) overlap");
	free(d.b);
	/* overlapping in a later row band, among disjoint ones */
	d = (struct db){0};
	db_header(&d, 1, 4, 8);
	db_u8(&d, 10);
	blk_dense(&d, 0, 0, 2, 2, 10, v4, NULL);
	blk_dense(&d, 0, 4, 2, 2, 10, v4, NULL);
	blk_dense(&d, 2, 0, 2, 2, 10, v4, NULL);
	blk_dense(&d, 1, 5, 2, 2, 10, v4, NULL);
	refused(&d, "blocks 1 (2 x 2 at (0, 4)) and 3 (2 x 2 at (1, 5)) overlap");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 1, 3, 3);
	db_u8(&d, 10);
	blk_dense(&d, 2, 2, 2, 2, 10, v4, NULL);
	refused(&d, "block 0: 2 x 2 at (2, 2) lies outside the 3 x 3 matrix");
	free(d.b);
	/* COO: the same cell twice, a cell outside */
	static const uint32_t r2[2] = {1, 1}, c2[2] = {0, 0}, r3[2] = {0, 3};
	d = (struct db){0};
	db_header(&d, 2, 3, 3);
	db_u8(&d, 10);
	blk_coo(&d, 0, 0, 3, 3, 10, 2, r2, c2, v4, NULL);
	refused(&d, "COO entries 0 and 1 are both at (1, 0)");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 2, 3, 3);
	db_u8(&d, 10);
	blk_coo(&d, 0, 0, 3, 3, 10, 2, r3, c2, v4, NULL);
	refused(&d, "COO entry 1: (3, 0) is outside the 3 x 3 block");
	free(d.b);
	/* CSR: columns out of order, beyond the block, counts not adding up */
	static const uint32_t cnt[2] = {2, 0}, unsorted[2] = {2, 1}, beyond[2] = {0, 3};
	d = (struct db){0};
	db_header(&d, 2, 2, 3);
	db_u8(&d, 10);
	blk_csr(&d, 0, 0, 2, 3, 10, cnt, unsorted, v4, NULL);
	refused(&d, "block 0 row 0: column indices out of order (1 after 2)");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 2, 2, 3);
	db_u8(&d, 10);
	blk_csr(&d, 0, 0, 2, 3, 10, cnt, beyond, v4, NULL);
	refused(&d, "column index 3 is beyond its 3 columns");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 2, 2, 3);
	db_u8(&d, 10);
	blk_csr(&d, 0, 0, 2, 3, 10, cnt, beyond, v4, NULL);
	mfs_put_le64(d.b + 45, 3);  /* #nzb */
	refused(&d, "its rows hold 2 nonzeros, its header says 3");
	free(d.b);
	/* unknown block and value types, truncation */
	d = (struct db){0};
	db_header(&d, 1, 2, 2);
	db_u8(&d, 10);
	db_block(&d, 0, 0, 2, 2, 7);
	refused(&d, "unknown block type 7");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 1, 2, 2);
	db_u8(&d, 10);
	db_block(&d, 0, 0, 2, 2, 1);
	db_u8(&d, 11);
	refused(&d, "value type 11 is not one of the spec's");
	free(d.b);
	d = (struct db){0};
	db_header(&d, 1, 2, 2);
	db_u8(&d, 10);
	blk_dense(&d, 0, 0, 2, 2, 10, v4, NULL);
	d.n -= 3;
	refused(&d, "spec: block 0: 2 x 2 values need 32 bytes, 29 left");
	free(d.b);
	/* a few bytes declaring a huge matrix of zeros */
	d = (struct db){0};
	db_header(&d, 1, 1ull << 30, 1ull << 30);
	db_u8(&d, 10);
	refused(&d, "more than the 4194304 that its dense views may show");
	free(d.b);
	/* too many blocks */
	d = (struct db){0};
	db_header(&d, 1, 1, 1);
	db_u8(&d, 10);
	for (int i = 0; i < 65537; i++)
		db_block(&d, 0, 0, 0, 0, 0);
	refused(&d, "65537 blocks: at most 65536 are supported");
	free(d.b);
}

/* ---- the files of tests/data/daphne/built (make_files.py) ---------------- */

/* Python wrote them; the C builders here must make the same bytes. */
static void same_file(const struct db *d, const char *name)
{
	char rel[128];
	size_t len;
	snprintf(rel, sizeof(rel), "daphne/built/%s", name);
	uint8_t *b = tload(tdata(rel), &len);
	assert_int_equal(len, d->n);
	assert_memory_equal(b, d->b, len);
	free(b);
	struct mfs_model *m = topen(rel);
	twalk(m);
	trewrite_all(m);
	daphne_reencode_all(m);
	tclose(m);
	tmutate(rel, 200);
}

static void test_built_files(void **state)
{
	(void)state;
	for (size_t i = 0; i < NVTS; i++) {
		struct db d = {0};
		char name[32];
		db_header(&d, 1, 2, 3);
		db_u8(&d, vts[i].vt);
		blk_dense(&d, 0, 0, 2, 3, vts[i].vt, vts[i].v, NULL);
		snprintf(name, sizeof(name), "spec_vt%u.dbdf", vts[i].vt);
		same_file(&d, name);
		free(d.b);
	}
	size_t off[5], coo;
	struct db d = {0};
	build_multi(&d, 1, off);
	same_file(&d, "spec_multi_dense.dbdf");
	free(d.b);
	d = (struct db){0};
	build_multi(&d, 2, off);
	same_file(&d, "spec_multi_csr.dbdf");
	free(d.b);
	d = (struct db){0};
	build_frame(&d, 7, &coo);
	same_file(&d, "spec_frame.dbdf");
	free(d.b);
	d = (struct db){0};
	static const double a[2] = {7, 255}, b[2] = {-3, 1000};
	db_header(&d, 1, 2, 2);
	db_u8(&d, 10);
	blk_dense(&d, 0, 0, 1, 2, 1, a, NULL);
	blk_dense(&d, 1, 0, 1, 2, 6, b, NULL);
	same_file(&d, "spec_convert.dbdf");
	free(d.b);
	static const uint64_t cnt[4] = {1, 0, 2, 1}, cols[4] = {1, 0, 2, 2};
	d = (struct db){0};
	build_v01(&d, cnt, cols);
	same_file(&d, "daphne01_csr.dbdf");
	free(d.b);
	struct mfs_model *m = topen("daphne/built/daphne01_coo.dbdf");
	tcheck(m, "dialect", "daphne-0.1\n");
	tcheck(m, "values.txt", "0 0 -1\n0 0 0\n0 0.5 0\n");
	daphne_reencode_all(m);
	tclose(m);
	tmutate("daphne/built/daphne01_coo.dbdf", 200);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_value_types_dense),
		cmocka_unit_test(test_value_types_sparse),
		cmocka_unit_test(test_multi_block),
		cmocka_unit_test(test_block_types),
		cmocka_unit_test(test_frame),
		cmocka_unit_test(test_daphne01),
		cmocka_unit_test(test_hyper_sparse),
		cmocka_unit_test(test_bad),
		cmocka_unit_test(test_built_files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
