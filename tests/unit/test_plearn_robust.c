/* Unit tests of the PLearn codec on damaged and unusual input: mutated
 * corpus files, deep nesting, pointer cycles and forward references,
 * unterminated strings and brackets, huge declared sizes, explicit TVec/TMat
 * storage, top-level vectors, malformed .pmat and .amat headers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_plearn.h"

extern const struct mfs_codec mfs_codec_plearn;

static struct mfs_model *open_str(const char *s, const char *name)
{
	return topen_mem(s, strlen(s), name, NULL, 0);
}

/* Opening with the PLearn codec fails with EINVAL and a message. */
static void open_fails(const char *s, size_t n, const char *name)
{
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, s, n, name, NULL, 0, &mfs_codec_plearn, &err);
	if (r == 0) {
		mfs_model_free(m);
		fail_msg("\"%.60s\" (%s) opened", s, name);
	}
	if (r != -EINVAL || !err.msg[0])
		fail_msg("\"%.60s\" (%s): %d (%s), expected EINVAL with a message", s, name, r, err.msg);
}

static void open_fails_str(const char *s, const char *name)
{
	open_fails(s, strlen(s), name);
}

static void test_mutations(void **state)
{
	(void)state;
	for (size_t i = 0; i < plt_ncorpus; i++)
		tmutate(plt_corpus[i], 300);
}

static void test_nesting(void **state)
{
	(void)state;
	size_t n = 5000;
	char *s = malloc(n + 16);
	memcpy(s, "A(\nx = ", 7);
	memset(s + 7, '[', n);
	s[7 + n] = '\0';
	open_fails(s, 7 + n, "deep.psave");
	/* 300 objects inside each other */
	size_t len = 0;
	char *o = malloc(300 * 8 + 300 * 2 + 16);
	for (int i = 0; i < 300; i++)
		len += (size_t)sprintf(o + len, "A( x = ");
	for (int i = 0; i < 300; i++)
		len += (size_t)sprintf(o + len, ")");
	open_fails(o, len, "deep.psave");
	/* 100 levels are fine */
	len = 0;
	for (int i = 0; i < 100; i++)
		len += (size_t)sprintf(o + len, "A( x = ");
	len += (size_t)sprintf(o + len, "1 ");
	for (int i = 0; i < 100; i++)
		len += (size_t)sprintf(o + len, ")");
	struct mfs_model *m = topen_mem(o, len, "ok.psave", NULL, 0);
	assert_true(twalk(m) > 200);
	tclose(m);
	free(o);
	free(s);
}

static void test_pointers(void **state)
{
	(void)state;
	/* A cycle: the object refers to itself. */
	struct mfs_model *m = open_str("*1 ->A(\nself = *1 ;\ny = 2 )\n", "c.psave");
	char t[256];
	assert_true(mfs_link_target(m, tnode(m, "self"), t, sizeof(t)) >= 0);
	assert_string_equal(t, ".");
	twalk(m);
	tclose(m);
	/* A reference before its definition, and one to nothing. */
	m = open_str("A(\nx = *2 ;\ny = *2 ->B( v = 1 ) ;\nz = *9 ;\nw = [ *2 ] )\n", "f.psave");
	assert_true(mfs_link_target(m, tnode(m, "x"), t, sizeof(t)) >= 0);
	assert_string_equal(t, "y");
	tcheck(m, "y/v", "1\n");
	tcheck(m, "z", "*9\n");
	assert_true(mfs_link_target(m, tnode(m, "w/0"), t, sizeof(t)) >= 0);
	assert_string_equal(t, "../y");
	tclose(m);
	/* A definition hidden in a text value cannot be linked to. */
	m = open_str("A(\nx = { \"k\" : *3 ->B() } ;\ny = *3 )\n", "h.psave");
	tcheck(m, "x", "{ \"k\" : *3 ->B() }\n");
	tcheck(m, "y", "*3\n");
	tclose(m);
	/* The seed's spelling without blanks */
	m = open_str("*1->A(\nx = *2->B() ;\ny = *2 )", "s.psave");
	tcheck(m, "x/class", "B\n");
	tclose(m);
	open_fails_str("A( x = * )", "p.psave");
	open_fails_str("A( x = *1 -B() )", "p.psave");
	open_fails_str("A( x = *99999999999 )", "p.psave");
}

static void test_syntax_errors(void **state)
{
	(void)state;
	const char *bad[] = {
		"A( x = \"abc )\n",
		"A( x = 3 [ 1 2 3 \n",
		"A( x = 1 \n",
		"A( x = { 1 : 2 \n",
		"A( x = ( 1 , 2 \n",
		"A( = 5 )\n",
		"A( x 5 )\n",
		"A( x = 5 ) B()\n",
		"A( x = ] )\n",
		"A( x = 99999999999999999999999 [ 1 ] )\n",
		"A( x = { 1 2 } )\n",
		"A( x = : 5 )\n",
		"*1 ->",
		"*1 ->7",
		"",
		"   # only a comment\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		open_fails_str(bad[i], "bad.psave");
}

static void test_sequences(void **state)
{
	(void)state;
	struct mfs_model *m = open_str(
		"A(\n"
		"specials = 5 [ nan ? -inf NaN 1e999 ] ;\n"
		"count_off = 3 [ 1 2 ] ;\n"
		"huge = 99999999999 [ 1 ] ;\n"
		"unsized = [ 1, 2; 3 ] ;\n"
		"empty = 0 [ ] ;\n"
		"mat = 2 3 [ 1 2 3 4 5 6 ] ;\n"
		"vecs = 2 [ 2 [ 1 2 ] 1 [ 3 ] ] ;\n"
		"pairs = 2 [ 1 : 2 3 : 4 ] ;\n"
		"words = 2 [ True False ] ;\n"
		"commented = 2 [ 1 # one\n 2 ] )\n", "seq.psave");
	tcheck(m, "specials/values.txt", "nan\nnan\n-inf\nnan\ninf\n");
	tcheck(m, "count_off", "3 [ 1 2 ]\n");
	tcheck(m, "huge", "99999999999 [ 1 ]\n");
	tcheck(m, "unsized/values.txt", "1\n2\n3\n");
	tcheck(m, "empty/shape", "0\n");
	tcheck(m, "mat/values.txt", "1 2 3\n4 5 6\n");
	tcheck(m, "vecs/0/values.txt", "1\n2\n");
	tcheck(m, "vecs/1/values.txt", "3\n");
	tcheck(m, "pairs", "2 [ 1 : 2 3 : 4 ]\n");
	tcheck(m, "words", "2 [ True False ]\n");
	tcheck(m, "commented/values.txt", "1\n2\n");
	trewrite_all(m);
	plt_reencode_all(m);
	tclose(m);

	/* Top-level vectors: of objects, of numbers. */
	m = open_str("[ A() B( x = 1 ) ]", "v.psave");
	char *l = tlist(m, "");
	assert_string_equal(l, "0 1 encoding");
	free(l);
	tclose(m);
	m = open_str("3 [ 1 2 3 ] ", "n.psave");
	tcheck(m, "values.txt", "1\n2\n3\n");
	tcheck(m, "encoding", "ascii\n");
	tclose(m);
}

static void test_explicit_storage(void **state)
{
	(void)state;
	const char *src =
		"A(\n"
		"v = TVec(2 1 *1 ->6 [ 1 2 3 4 5 6 ] )\n;\n"
		"w = TMat(2 2 3 0 *1 )\n;\n"
		"u = TVec(7 0 *1 )\n;\n"
		"s = TVec(2 0 *2 ->Storage(2 [ 7 8 ]) )\n;\n"
		"n = TMat(0 3 3 0 *0 )\n )\n";
	struct mfs_model *m = open_str(src, "x.psave");
	tcheck(m, "v/values.txt", "2\n3\n");
	tcheck(m, "w/values.txt", "1 2\n4 5\n");
	tcheck(m, "u", "TVec(7 0 *1 )\n");
	tcheck(m, "s/values.txt", "7\n8\n");
	tcheck(m, "n/shape", "0 3\n");
	plt_reencode_all(m);
	size_t outlen;
	uint8_t *out = plt_write_str(m, "w/values.txt", "1 2\n4 50\n", &outlen);
	assert_int_equal(outlen, strlen(src) + 1);
	assert_non_null(memmem(out, outlen, "6 [ 1 2 3 4 50 6 ]", 18));
	struct mfs_model *n = topen_mem(out, outlen, "x.psave", NULL, 0);
	tcheck(n, "v/values.txt", "2\n3\n");
	tcheck(n, "w/values.txt", "1 2\n4 50\n");
	tclose(n);
	free(out);
	tclose(m);
}

static void test_bad_matrices(void **state)
{
	(void)state;
	char hdr[128];
	open_fails_str("MATRIX 1 1 DOUBLE LITTLE_ENDIAN\n", "short.pmat");
	snprintf(hdr, sizeof(hdr), "%-64s", "MATRIX 1 1 DOUBLE LITTLE_ENDIAN");
	open_fails(hdr, 64, "nonl.pmat");
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 1 1 DOUBLE LITTLE_ENDIAN");
	open_fails(hdr, 64, "nodata.pmat");
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX -1 1 DOUBLE LITTLE_ENDIAN");
	open_fails(hdr, 64, "neg.pmat");
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 1 1 INT LITTLE_ENDIAN");
	open_fails(hdr, 64, "int.pmat");
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 1 1 DOUBLE MIDDLE_ENDIAN");
	open_fails(hdr, 64, "mid.pmat");
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 2147483647 2147483647 DOUBLE LITTLE_ENDIAN");
	open_fails(hdr, 64, "huge.pmat");
	snprintf(hdr, sizeof(hdr), "%-63s\n", "VECTOR 1 1 DOUBLE LITTLE_ENDIAN");
	open_fails(hdr, 64, "vec.pmat");
	/* An empty matrix is fine. */
	snprintf(hdr, sizeof(hdr), "%-63s\n", "MATRIX 0 3 DOUBLE LITTLE_ENDIAN");
	struct mfs_model *m = topen_mem(hdr, 64, "e.pmat", NULL, 0);
	tcheck(m, "shape", "0 3\n");
	tclose(m);

	open_fails_str("#size: 2 2\n1 2 3\n", "a.amat");
	open_fails_str("#size: x 2\n1 2\n", "a.amat");
	open_fails_str("#size: 1 2 3\n1 2\n", "a.amat");
	open_fails_str("1 2\n3 4 5\n6 7\n", "a.amat");
	m = open_str("# comment\n\n1 2\n# between rows\n3 4\n", "c.amat");
	tcheck(m, "values.txt", "1 2\n3 4\n");
	tcheck(m, "header", "# comment\n\n");
	tclose(m);
	m = open_str("", "e.amat");
	tcheck(m, "shape", "0 0\n");
	tclose(m);
	struct mfs_err err = {0};
	struct mfs_model *x = NULL;
	assert_int_equal(mfs_model_open_mem(&x, "1 a\n", 4, "s.amat", NULL, 0, NULL, &err), -ENOTSUP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mutations),
		cmocka_unit_test(test_nesting),
		cmocka_unit_test(test_pointers),
		cmocka_unit_test(test_syntax_errors),
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_explicit_storage),
		cmocka_unit_test(test_bad_matrices),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
