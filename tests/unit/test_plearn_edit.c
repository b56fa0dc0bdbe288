/* Unit tests of the PLearn codec, writing: numbers edited through values.txt,
 * data and data.npy land in their own tokens in the file's style where it
 * round-trips (%.18g; integers as integers), else as the shortest round-trip
 * decimal (never %.15g, which loses digits), option text is re-parsed and replaces its
 * span only, .pmat reshapes carry the header along, bad input is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "test_plearn.h"

#define LINREG "plearn/psave/learners/LinearRegressor.final_learner.psave"
#define PARZEN "plearn/psave/learners/ParzenWindow.final_learner.psave"

/* Write s to path; the only change must be `from` (found in the file)
 * becoming `to`. Returns the reopened model. */
static struct mfs_model *edit_one(struct mfs_model *m, const char *path, const char *s,
				  const char *from, const char *to)
{
	size_t outlen;
	uint8_t *out = plt_write_str(m, path, s, &outlen);
	size_t off = plt_find(m->base, (size_t)m->size, from);
	if (outlen < off + strlen(to) || memcmp(out + off, to, strlen(to)) != 0)
		fail_msg("writing %s of %s: expected \"%s\" at offset %zu, got \"%.*s\"", path, m->name,
			 to, off, (int)strlen(to), out + off);
	tsame_outside(m->base, (size_t)m->size, out, outlen, off, strlen(from), strlen(to));
	struct mfs_model *n = topen_mem(out, outlen, m->name, NULL, 0);
	free(out);
	return n;
}

static void test_values_style18(void **state)
{
	(void)state;
	struct mfs_model *m = topen(LINREG);
	/* One element: only its token changes, separators stay. */
	struct mfs_model *n = edit_one(m, "weights/values.txt",
				       "5.673646409480401 9.88961990926601\n"
				       "0.1 17.900656890875144\n"
				       "99.76151962528407 47.687964753081914\n",
				       "10.7829822118754173 ", "0.100000000000000006 ");
	tcheck(n, "weights/values.txt", "5.673646409480401 9.88961990926601\n"
					"0.1 17.900656890875144\n"
					"99.76151962528407 47.687964753081914\n");
	tclose(n);
	/* Neighbours changed together: one span, the tab between them kept. */
	size_t outlen;
	uint8_t *out = plt_write_str(m, "weights/values.txt",
				     "1 2\n10.782982211875417 17.900656890875144\n"
				     "99.76151962528407 47.687964753081914\n", &outlen);
	size_t off = plt_find(m->base, (size_t)m->size, "5.67364640948040133 \t9.88961990926600976 ");
	assert_memory_equal(out + off, "1 \t2 \t\n10.7829822118754173", 25);
	tsame_outside(m->base, (size_t)m->size, out, outlen, off, 40, 4);
	free(out);
	/* Special values as PLearn writes them. */
	n = edit_one(m, "resid_variance/values.txt", "nan\n-inf\n",
		     "22.6711187811828125 458.169739725178715", "nan -inf");
	tcheck(n, "resid_variance/values.txt", "nan\n-inf\n");
	tclose(n);
	tclose(m);
}

static void test_values_style15(void **state)
{
	(void)state;
	struct mfs_model *m = topen(PARZEN);
	size_t len;
	char *txt = tread(m, "alpha/values.txt", &len);
	char *nl = strchr(txt, '\n');
	size_t rest = len - (size_t)(nl - txt);
	char *nt = malloc(rest + 32);
	int hl = snprintf(nt, 32, "0.3333333333333333");
	memcpy(nt + hl, nl, rest);
	size_t outlen;
	uint8_t *out = plt_write(m, "alpha/values.txt", nt, (size_t)hl + rest, &outlen);
	size_t off = plt_find(m->base, (size_t)m->size, "alpha = 150 [ ") + 14;
	assert_memory_equal(m->base + off, "0.00666666666666667 ", 20);
	/* %.15g would lose a digit: the shortest round-trip decimal instead */
	assert_memory_equal(out + off, "0.3333333333333333 ", 19);
	tsame_outside(m->base, (size_t)m->size, out, outlen, off, 19, 18);
	free(out);
	free(nt);
	free(txt);
	tclose(m);

	/* The .amat written by hand: shortest round-trip; PLearn's own: %.18g. */
	m = topen("plearn/amat/linear_4x_2y.amat");
	txt = tread(m, "values.txt", &len);
	txt[0] = '7';  /* -0.67651 -> 70.67651 */
	txt[1] = '0';
	out = plt_write(m, "values.txt", txt, len, &outlen);
	off = plt_find(m->base, (size_t)m->size, "-0.67651");
	assert_memory_equal(out + off, "70.67651 ", 9);
	free(out);
	free(txt);
	tclose(m);

	m = topen("plearn/amat/linear_4x_2y.written_by_plearn.amat");
	txt = tread(m, "values.txt", &len);
	txt[0] = '7';
	txt[1] = '0';
	out = plt_write(m, "values.txt", txt, len, &outlen);
	off = plt_find(m->base, (size_t)m->size, "-0.676509999999999945");
	assert_memory_equal(out + off, "70.6765099999999933 ", 20);
	free(out);
	free(txt);
	tclose(m);
}

static void test_values_ints(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/GaussMix_diagonal.final_learner.psave");
	struct mfs_model *n = edit_one(m, "predictor_part/values.txt", "5\n-7\n",
				       "predictor_part = 2 [ 0 0 ]", "predictor_part = 2 [ 5 -7 ]");
	tcheck(n, "predictor_part/values.txt", "5\n-7\n");
	tclose(n);
	n = edit_one(m, "predictor_part/values.txt", "2.5\n0\n", "predictor_part = 2 [ 0 0 ]",
		     "predictor_part = 2 [ 2.5 0 ]");
	tclose(n);
	tclose(m);

	m = topen("plearn/amat/1d_reg.amat");
	n = edit_one(m, "values.txt", "0 3\n0.5 4\n1 5\n2 6\n3 8\n", "3    7.5", "3    8");
	tcheck(n, "values.txt", "0 3\n0.5 4\n1 5\n2 6\n3 8\n");
	tcheck(n, "header", "#size: 5 2\n#: x y     \n#sizes: 1 1 0\n\n");
	tclose(n);
	tclose(m);
}

static void test_data_and_npy(void **state)
{
	(void)state;
	struct mfs_model *m = topen(LINREG);
	/* data: element 3 (row 1, column 1) only. */
	size_t len;
	char *d = tread(m, "weights/data", &len);
	assert_int_equal(len, 48);
	double v = -2.25;
	uint64_t bits;
	memcpy(&bits, &v, 8);
	mfs_put_le64(d + 24, bits);
	size_t outlen;
	uint8_t *out = plt_write(m, "weights/data", d, len, &outlen);
	size_t off = plt_find(m->base, (size_t)m->size, "17.900656890875144 ");
	tsame_outside(m->base, (size_t)m->size, out, outlen, off, 18, 5);
	assert_memory_equal(out + off, "-2.25 \t", 7);
	free(out);
	free(d);

	/* data.npy of the same shape. */
	uint8_t npy[512];
	uint64_t dims[2] = {3, 2};
	double vals[6] = {5.67364640948040133, 9.88961990926600976, 10.7829822118754173, 17.900656890875144,
			  99.7615196252840661, 1e-300};
	size_t nl = plt_npy_f64(npy, sizeof(npy), dims, 2, vals);
	out = plt_write(m, "weights/data.npy", npy, nl, &outlen);
	off = plt_find(m->base, (size_t)m->size, "47.6879647530819142");
	tsame_outside(m->base, (size_t)m->size, out, outlen, off, 19, 24);
	assert_memory_equal(out + off, "1.00000000000000003e-300 ", 25);
	free(out);
	/* A text matrix keeps its shape. */
	uint64_t dims2[2] = {2, 3};
	nl = plt_npy_f64(npy, sizeof(npy), dims2, 2, vals);
	plt_write_fails(m, "weights/data.npy", npy, nl, -EINVAL);
	tclose(m);
}

static void test_values_bad(void **state)
{
	(void)state;
	struct mfs_model *m = topen(LINREG);
	const char *bad[] = {"1 2 3\n", "1 2\n3 4\n5\n", "1 2\n3 x\n5 6\n", "1 2\n3 4\n5 6\n7 8\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		plt_write_fails(m, "weights/values.txt", bad[i], strlen(bad[i]), -EINVAL);
	plt_write_fails(m, "weights/values.txt", "1 2\n3 4\n5 1e999\n", 16, -ERANGE);
	plt_write_same(m, "weights/values.txt", "5.673646409480401 9.88961990926601\n"
						"10.782982211875417 17.900656890875144\n"
						"99.76151962528407 47.687964753081914\n");
	plt_write_fails(m, "class", "Foo", 3, -EACCES);
	plt_write_fails(m, "encoding", "binary", 6, -EACCES);
	tclose(m);
}

static void test_text_options(void **state)
{
	(void)state;
	struct mfs_model *m = topen(LINREG);
	struct mfs_model *n = edit_one(m, "include_bias", "0\n", "include_bias = 1 ;", "include_bias = 0 ;");
	tcheck(n, "include_bias", "0\n");
	tclose(n);
	n = edit_one(m, "AIC", "7.5", "AIC = 6.23533365254733773 ;", "AIC = 7.5 ;");
	tcheck(n, "AIC", "7.5\n");
	tclose(n);
	n = edit_one(m, "save_trainingset_prefix", "\"a \\\"b\\\" c\"\n",
		     "save_trainingset_prefix = \"\" ;", "save_trainingset_prefix = \"a \\\"b\\\" c\" ;");
	tcheck(n, "save_trainingset_prefix", "\"a \\\"b\\\" c\"\n");
	tclose(n);
	/* The last option: its two blanks and ')' stay. */
	n = edit_one(m, "use_a_separate_random_generator_for_testing", "0",
		     "testing = 1827  )\n", "testing = 0  )\n");
	tclose(n);
	/* An object written into an option becomes a directory. */
	n = edit_one(m, "random_gen", "*7 ->PRandom(\nseed = 3 )\n", "random_gen = *0 ;",
		     "random_gen = *7 ->PRandom(\nseed = 3 ) ;");
	tcheck(n, "random_gen/class", "PRandom\n");
	tcheck(n, "random_gen/seed", "3\n");
	tclose(n);
	plt_write_same(m, "random_gen", "*0\n");
	plt_write_same(m, "AIC", "6.23533365254733773");

	/* Refused, and the file stays as it is. */
	const char *bad[] = {
		"\"unterminated", "1 ; stage = 5", ")", "Foo( x = 1", "[ 1 2", "1 # comment",
		"", "  \n", "a = b", "{ 1 : }", "*1 ->", "3 [ 1 2 3 ] ]",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		plt_write_fails(m, "AIC", bad[i], strlen(bad[i]), -EINVAL);
	tclose(m);

	m = topen("plearn/psave/learners/NNet.final_learner.psave");
	n = edit_one(m, "cost_funcs", "2 [ \"NLL\" \"mse\" ]", "cost_funcs = 1 [ \"NLL\" ] ;",
		     "cost_funcs = 2 [ \"NLL\" \"mse\" ] ;");
	tcheck(n, "cost_funcs", "2 [ \"NLL\" \"mse\" ]\n");
	tclose(n);
	tclose(m);

	/* A multi-line value, comments allowed when they end inside it. */
	m = topen("plearn/psave/testers/PTester_LinearRegressor_oldstyle.tester.psave");
	n = edit_one(m, "splitter/splits", "1  2  [ # new\n0 : 0.5 0.5 : 1 ]",
		     "1  2  [ \n0 : 0.75  \t0.75 : 1  \t\n]", "1  2  [ # new\n0 : 0.5 0.5 : 1 ]");
	tcheck(n, "splitter/splits", "1  2  [ # new\n0 : 0.5 0.5 : 1 ]\n");
	tclose(n);
	tclose(m);
}

static void test_text_in_vector(void **state)
{
	(void)state;
	/* A null element among objects is a text file of its own. */
	const char *src = "Top(\nlist = 3 [ A( x = 1 ) *0 B() ] ;\nname = w )\n";
	struct mfs_model *m = topen_mem(src, strlen(src), "t.psave", NULL, 0);
	tcheck(m, "list/1", "*0\n");
	tcheck(m, "name", "w\n");
	size_t outlen;
	uint8_t *out = plt_write_str(m, "list/1", "C()", &outlen);
	assert_int_equal(outlen, strlen(src) + 1);
	assert_memory_equal(out, "Top(\nlist = 3 [ A( x = 1 ) C() B() ] ;\nname = w )\n", outlen);
	free(out);
	tclose(m);
	/* A bare word written before a word character stays apart from it. */
	src = "Top(\nlist = 3 [ A() *0B() ] )\n";
	m = topen_mem(src, strlen(src), "t.psave", NULL, 0);
	out = plt_write_str(m, "list/1", "w", &outlen);
	assert_int_equal(outlen, strlen(src));
	assert_memory_equal(out, "Top(\nlist = 3 [ A() w B() ] )\n", outlen);
	free(out);
	tclose(m);
}

static void test_pmat_edits(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/pmat/linear_4x_2y.pmat");
	size_t len, outlen;
	char *txt = tread(m, "values.txt", &len);
	char *sp = strchr(txt, ' ');
	size_t first = (size_t)(sp - txt);
	char *nt = malloc(len + 8);
	memcpy(nt, "2.5", 3);
	memcpy(nt + 3, sp, len - first);
	uint8_t *out = plt_write(m, "values.txt", nt, 3 + len - first, &outlen);
	tsame_outside(m->base, (size_t)m->size, out, outlen, 64, 8, 8);
	double v = 2.5;
	assert_memory_equal(out + 64, &v, 8);
	free(out);
	free(nt);
	free(txt);

	/* Reshape through data.npy: 200 x 6 -> 3 x 4, the header follows. */
	uint8_t npy[1024];
	uint64_t dims[2] = {3, 4};
	double vals[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0.5};
	size_t nl = plt_npy_f64(npy, sizeof(npy), dims, 2, vals);
	out = plt_write(m, "data.npy", npy, nl, &outlen);
	assert_int_equal(outlen, 64 + 12 * 8);
	char hdr[65];
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 3 4 DOUBLE LITTLE_ENDIAN");
	assert_memory_equal(out, hdr, 64);
	assert_memory_equal(out + 64, vals, 96);
	struct mfs_model *n = topen_mem(out, outlen, "x.pmat", NULL, 0);
	tcheck(n, "shape", "3 4\n");
	tcheck(n, "values.txt", "1 2 3 4\n5 6 7 8\n9 10 11 0.5\n");
	tcheck(n, "header", hdr);
	plt_reencode_all(n);
	tclose(n);
	free(out);
	/* Same shape: the header is not touched. */
	uint64_t same[2] = {200, 6};
	double *all = calloc(1200, sizeof(double));
	memcpy(all, m->base + 64, 1200 * 8);
	all[1199] = 4;
	uint8_t *big = malloc(1200 * 8 + 256);
	nl = plt_npy_f64(big, 1200 * 8 + 256, same, 2, all);
	out = plt_write(m, "data.npy", big, nl, &outlen);
	tsame_outside(m->base, (size_t)m->size, out, outlen, 64 + 1199 * 8, 8, 8);
	free(out);
	free(big);
	free(all);
	/* 1-D is no .pmat. */
	uint64_t one[1] = {4};
	nl = plt_npy_f64(npy, sizeof(npy), one, 1, vals);
	plt_write_fails(m, "data.npy", npy, nl, -EINVAL);
	plt_write_fails(m, "header", "MATRIX 1 1 DOUBLE LITTLE_ENDIAN", 31, -EACCES);
	tclose(m);
}

/* A .pmat as an old big-endian or float writer would leave it. */
static uint8_t *make_pmat(const char *type, const char *order, size_t *len)
{
	char hdr[65];
	snprintf(hdr, sizeof(hdr), "MATRIX 2 3 %s %s", type, order);
	size_t hl = strlen(hdr);
	memset(hdr + hl, ' ', 63 - hl);
	hdr[63] = '\n';
	bool dbl = !strcmp(type, "DOUBLE"), be = !strcmp(order, "BIG_ENDIAN");
	size_t es = dbl ? 8 : 4;
	uint8_t *b = malloc(64 + 6 * es);
	memcpy(b, hdr, 64);
	for (int i = 0; i < 6; i++) {
		uint8_t *p = b + 64 + i * es;
		double v = i + 0.5;
		if (dbl) {
			uint64_t bits;
			memcpy(&bits, &v, 8);
			be ? mfs_put_be64(p, bits) : mfs_put_le64(p, bits);
		} else {
			float f = (float)v;
			uint32_t bits;
			memcpy(&bits, &f, 4);
			be ? mfs_put_be32(p, bits) : mfs_put_le32(p, bits);
		}
	}
	*len = 64 + 6 * es;
	return b;
}

static void test_pmat_orders(void **state)
{
	(void)state;
	const char *types[] = {"DOUBLE", "FLOAT"}, *orders[] = {"LITTLE_ENDIAN", "BIG_ENDIAN"};
	for (int ti = 0; ti < 2; ti++) {
		for (int oi = 0; oi < 2; oi++) {
			size_t len, outlen;
			uint8_t *b = make_pmat(types[ti], orders[oi], &len);
			struct mfs_model *m = topen_mem(b, len, "m.pmat", NULL, 0);
			tcheck(m, "shape", "2 3\n");
			tcheck(m, "dtype", ti ? "float32\n" : "float64\n");
			tcheck(m, "values.txt", "0.5 1.5 2.5\n3.5 4.5 5.5\n");
			trewrite_all(m);
			plt_reencode_all(m);
			uint8_t *out = plt_write_str(m, "values.txt", "0.5 1.5 2.5\n3.5 4.5 -1\n", &outlen);
			size_t es = ti ? 4 : 8;
			tsame_outside(b, len, out, outlen, 64 + 5 * es, es, es);
			struct mfs_model *n = topen_mem(out, outlen, "m.pmat", NULL, 0);
			tcheck(n, "values.txt", "0.5 1.5 2.5\n3.5 4.5 -1\n");
			tclose(n);
			free(out);
			tclose(m);
			free(b);
		}
	}
}

static void test_pmat_reshape_orders(void **state)
{
	(void)state;
	size_t len, outlen;
	uint8_t *b = make_pmat("DOUBLE", "BIG_ENDIAN", &len);
	struct mfs_model *m = topen_mem(b, len, "m.pmat", NULL, 0);
	uint8_t npy[512];
	uint64_t dims[2] = {1, 2};
	double vals[2] = {1.25, -3};
	size_t nl = plt_npy_f64(npy, sizeof(npy), dims, 2, vals);
	uint8_t *out = plt_write(m, "data.npy", npy, nl, &outlen);
	assert_int_equal(outlen, 64 + 16);
	char hdr[65];
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 1 2 DOUBLE BIG_ENDIAN");
	assert_memory_equal(out, hdr, 64);
	uint64_t bits;
	memcpy(&bits, &vals[0], 8);
	assert_int_equal(mfs_be64(out + 64), bits);
	struct mfs_model *n = topen_mem(out, outlen, "m.pmat", NULL, 0);
	tcheck(n, "values.txt", "1.25 -3\n");
	tclose(n);
	free(out);
	tclose(m);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_style18),
		cmocka_unit_test(test_values_style15),
		cmocka_unit_test(test_values_ints),
		cmocka_unit_test(test_data_and_npy),
		cmocka_unit_test(test_values_bad),
		cmocka_unit_test(test_text_options),
		cmocka_unit_test(test_text_in_vector),
		cmocka_unit_test(test_pmat_edits),
		cmocka_unit_test(test_pmat_orders),
		cmocka_unit_test(test_pmat_reshape_orders),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
