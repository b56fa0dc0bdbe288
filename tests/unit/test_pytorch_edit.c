/* Unit tests of the PyTorch codec's edits (patches applied in memory and
 * the result opened again): tensor elements in place, through strided
 * views and tied weights, with the record's CRC-32 in both zip headers;
 * scalars and strings written into the pickle, in place or by a rewrite
 * that keeps every other record's bytes and 64-byte alignment; a string
 * shared through the memo edited at one place only; protocol 4's frames;
 * the legacy stream; a new shape through data.npy (the record and the
 * pickle's size, stride and numel); refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "helpers.h"
#include "pickle.h"
#include "pt_repr.h"
#include "pt_value.h"

/* Write text to path of the sample, expect a change, reopen the result. */
static struct mfs_model *edited(const char *rel, const char *path, const char *text,
				uint8_t **file, size_t *flen)
{
	struct mfs_model *m = topen(rel);
	struct mfs_err err = {0};
	int r = twrite(m, path, text, strlen(text), file, flen, &err);
	if (r != 0)
		fail_msg("%s %s: %d %s", rel, path, r, err.msg);
	tclose(m);
	return topen_mem(*file, *flen, "x.pt", NULL, 0);
}

/* Every stored record's CRC-32 matches its data, in the local header and
 * the central directory (and its data descriptor); each record's data starts at a multiple of 64. */
static void zip_ok(const uint8_t *b, size_t n)
{
	size_t eocd = n - 22;
	assert_memory_equal(b + eocd, "PK\x05\x06", 4);
	uint32_t cd = mfs_le32(b + eocd + 16), count = mfs_le16(b + eocd + 10);
	for (uint32_t i = 0; i < count; i++) {
		assert_memory_equal(b + cd, "PK\x01\x02", 4);
		uint32_t crc = mfs_le32(b + cd + 16), size = mfs_le32(b + cd + 20);
		uint32_t lh = mfs_le32(b + cd + 42);
		size_t nl = mfs_le16(b + cd + 28), el = mfs_le16(b + cd + 30), cl = mfs_le16(b + cd + 32);
		size_t data = lh + 30 + mfs_le16(b + lh + 26) + mfs_le16(b + lh + 28);
		uint16_t flags = mfs_le16(b + lh + 6);
		if (!(flags & 8) || mfs_le32(b + lh + 14))
			assert_int_equal(mfs_le32(b + lh + 14), crc);
		if (flags & 8) {  /* the data descriptor's, after its signature if any */
			const uint8_t *dd = b + data + size;
			assert_int_equal(mfs_le32(dd + (memcmp(dd, "PK\x07\x08", 4) ? 0 : 4)), crc);
		}
		assert_int_equal(crc32(0, b + data, size), crc);
		assert_int_equal(data % 64, 0);
		cd += 46 + nl + el + cl;
	}
}

struct text_case {
	const char *path, *text, *want;
};

/* Each case written to the sample afresh: its file then shows want, the
 * file at other (and the int key 7) what it did, the zip is sound, and
 * every file written back unchanged changes nothing. */
static void run_cases(const char *rel, const struct text_case *c, size_t nc, const char *other,
		      const char *other_want)
{
	for (size_t i = 0; i < nc; i++) {
		uint8_t *f;
		size_t n;
		struct mfs_model *m = edited(rel, c[i].path, c[i].text, &f, &n);
		tcheck(m, c[i].path, c[i].want);
		tcheck(m, other, other_want);
		tcheck(m, "7", "int key\n");
		zip_ok(f, n);
		trewrite_all(m);
		tclose(m);
		free(f);
	}
}

static void test_tensor_in_place(void **state)
{
	(void)state;
	uint8_t *f;
	size_t n, on;
	uint8_t *orig = tload(tdata("pytorch/views.pt"), &on);
	struct mfs_model *m = edited("pytorch/views.pt", "every2/values.txt", "9 8\n7 6\n5 4\n", &f, &n);
	assert_int_equal(n, on);
	tcheck(m, "every2/values.txt", "9 8\n7 6\n5 4\n");
	tcheck(m, "base/values.txt", "9 1 8 3\n7 5 6 7\n5 9 4 11\n");
	tcheck(m, "t/values.txt", "9 7 5\n1 5 9\n8 6 4\n3 7 11\n");
	zip_ok(f, n);
	tclose(m);
	free(f);
	/* Column-major: the transpose's element [0, 1] is base's [1, 0]. */
	m = edited("pytorch/views.pt", "t/values.txt", "0 40 8\n1 5 9\n2 6 10\n3 7 11\n", &f, &n);
	tcheck(m, "base/values.txt", "0 1 2 3\n40 5 6 7\n8 9 10 11\n");
	tcheck(m, "row1/values.txt", "40\n5\n6\n7\n");
	zip_ok(f, n);
	tclose(m);
	free(f);
	/* Tied weights: one storage. */
	m = edited("pytorch/hf_tied.bin", "lm_head/weight/values.txt", "1 2 3\n4 5 6\n7 8 9\n10 11 12\n",
		   &f, &n);
	tcheck(m, "model/embed_tokens/weight/values.txt", "1 2 3\n4 5 6\n7 8 9\n10 11 12\n");
	zip_ok(f, n);
	tclose(m);
	free(f);
	free(orig);
	/* The legacy stream, in place. */
	m = edited("pytorch/legacy.pt", "wt/values.txt", "1 2\n3 4\n5 6\n", &f, &n);
	tcheck(m, "w/values.txt", "1 3 5\n2 4 6\n");
	tclose(m);
	free(f);
}

static void test_refusals(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/views.pt");
	struct mfs_err err = {0};
	uint8_t *f = NULL;
	size_t n;
	assert_int_equal(twrite(m, "expand/values.txt", "1 1 1\n1 1 1\n", 12, &f, &n, &err), -EACCES);
	tclose(m);
	m = topen("pytorch/scalars.pt");
	mfs_err_clear(&err);
	assert_int_equal(twrite(m, "int", "1.5\n", 4, &f, &n, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "is not an int"));
	mfs_err_clear(&err);
	assert_int_equal(twrite(m, "float", "1e999\n", 6, &f, &n, &err), -ERANGE);
	mfs_err_clear(&err);
	assert_int_equal(twrite(m, "true", "yes\n", 4, &f, &n, &err), -EINVAL);
	mfs_err_clear(&err);
	assert_int_equal(twrite(m, "str", "\xff\n", 2, &f, &n, &err), -EINVAL);
	mfs_err_clear(&err);
	assert_true(twrite(m, "none", "1\n", 2, &f, &n, &err) < 0);
	static const char *const bad[] = {"[2]", "(1,", "(1 2)", "('a)", "(1,) x", "(b'\xe9',)",
					  "(1e999,)", "(1.5.2,)", "(\"\\q\",)"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		mfs_err_clear(&err);
		int r = twrite(m, "tuple", bad[i], strlen(bad[i]), &f, &n, &err);
		if (r != -EINVAL && r != -ERANGE)
			fail_msg("%s: %d", bad[i], r);
		assert_true(err.msg[0] != '\0');
	}
	tclose(m);
	/* A list whose string another place takes from the memo. */
	m = topen("pytorch/shared.pt");
	mfs_err_clear(&err);
	assert_int_equal(twrite(m, "first", "['x', 1]\n", 9, &f, &n, &err), -EACCES);
	tclose(m);
}

static void test_literals(void **state)
{
	(void)state;
	static const struct text_case cases[] = {
		{"tuple", "(2, 'x', None)", "(2, 'x', None)\n"},
		{"tuple", " ( 7 , ) ", "(7,)\n"},
		{"list", "[5]", "[5]\n"},
		{"list", "[]", "[]\n"},
		{"empty", "(1, 2, 3, 4)", "(1, 2, 3, 4)\n"},
		{"nested", "[[3], ('b\\n\\u00e9', True, b'\\x01', -2.5, [])]",
		 "[[3], ('b\\n\xc3\xa9', True, b'\\x01', -2.5, [])]\n"},
		{"nested", "[(1), \"it's\", 12345678901234567890]", "[1, \"it's\", 12345678901234567890]\n"},
	};
	run_cases("pytorch/scalars.pt", cases, sizeof(cases) / sizeof(cases[0]), "str", "h\xc3\xa9llo\n");
	uint8_t *f;
	size_t n;
	struct mfs_model *m = edited("pytorch/optim.pt", "param_groups/0/betas", "(0.5, 0.25)", &f, &n);
	tcheck(m, "param_groups/0/betas", "(0.5, 0.25)\n");
	tcheck(m, "param_groups/0/params", "[0]\n");
	tcheck(m, "state/0/exp_avg/values.txt", "0.05\n-0.1\n");
	tclose(m);
	free(f);
	/* The list holding a string that a later place takes from the memo
	 * is refused above; one whose string is itself a GET is not. */
	m = edited("pytorch/shared.pt", "again", "tog", &f, &n);
	tcheck(m, "first", "['tag', 1]\n");
	tcheck(m, "again", "tog\n");
	tclose(m);
	free(f);
}

static void test_scalars(void **state)
{
	(void)state;
	uint8_t *f;
	size_t n, on;
	uint8_t *orig = tload(tdata("pytorch/optim.pt"), &on);
	/* The same length: in place. */
	struct mfs_model *m = edited("pytorch/optim.pt", "param_groups/0/lr", "0.5", &f, &n);
	assert_int_equal(n, on);
	tcheck(m, "param_groups/0/lr", "0.5\n");
	tcheck(m, "param_groups/0/eps", "1e-08\n");
	zip_ok(f, n);
	tclose(m);
	free(f);
	free(orig);
	static const struct text_case cases[] = {
		{"int", "-5", "-5\n"},
		{"int", "70000", "70000\n"},
		{"int", "3000000000", "3000000000\n"},
		{"int", "-12345678901234567890123", "-12345678901234567890123\n"},
		{"big", "1", "1\n"},
		{"neg", "128", "128\n"},
		{"true", "False", "False\n"},
		{"float", "-inf", "-inf\n"},
		{"float", " 2.5e-300 ", "2.5e-300\n"},
		{"tiny", "7", "7.0\n"},
		{"str", "a longer string than before, \xe4\xb8\xad", "a longer string than before, \xe4\xb8\xad\n"},
		{"str", "", "\n"},
		{"bytes", "two\nlines\n", "two\nlines\n"},  /* bytes alone: the newline kept */
		{"bytes", "", ""},
		{"bytes", "\xff\x80\xe9", "\xff\x80\xe9"},  /* Latin-1, not UTF-8 */
		{"index~1", "renamed", "renamed\n"},
		{"a/b", "2", "2\n"},
	};
	run_cases("pytorch/scalars.pt", cases, sizeof(cases) / sizeof(cases[0]), "nested",
		  "[[1, 2], (3.5, 'a')]\n");
}

static void test_shared_and_frames(void **state)
{
	(void)state;
	static const char *const files[] = {"pytorch/shared.pt", "pytorch/proto4.pt"};
	for (size_t i = 0; i < 2; i++) {
		uint8_t *f;
		size_t n;
		struct mfs_model *m = edited(files[i], "mode", "maximum", &f, &n);
		tcheck(m, "mode", "maximum\n");
		tcheck(m, "other", "min\n");
		tcheck(m, "min", "1.5\n");
		tcheck(m, "w/values.txt", "0\n1\n2\n");
		zip_ok(f, n);
		tclose(m);
		free(f);
		m = edited(files[i], "other", "x", &f, &n);
		tcheck(m, "mode", "min\n");
		tcheck(m, "other", "x\n");
		tcheck(m, "min", "1.5\n");
		tclose(m);
		free(f);
	}
}

/* A .npy v1.0 of float32 values of shape dims (a dict literal's shape). */
static uint8_t *npy_f32(const char *shape, const float *v, size_t n, size_t *len)
{
	char dict[128];
	int dl = snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
	size_t hl = ((size_t)dl + 11 + 63) / 64 * 64 - 10;
	uint8_t *b = malloc(10 + hl + n * 4);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	mfs_put_le16(b + 8, (uint16_t)hl);
	memset(b + 10, ' ', hl);
	memcpy(b + 10, dict, (size_t)dl);
	b[10 + hl - 1] = '\n';
	memcpy(b + 10 + hl, v, n * 4);
	*len = 10 + hl + n * 4;
	return b;
}

static void test_reshape(void **state)
{
	(void)state;
	float v[20];
	for (int i = 0; i < 20; i++)
		v[i] = (float)i;
	size_t nl, n;
	uint8_t *npy = npy_f32("(4, 5)", v, 20, &nl), *f;
	struct mfs_err err = {0};
	struct mfs_model *m = topen("pytorch/state_dict.pt");
	assert_int_equal(twrite(m, "0/weight/data.npy", npy, nl, &f, &n, &err), 0);
	tclose(m);
	m = topen_mem(f, n, "x.pt", NULL, 0);
	tcheck(m, "0/weight/shape", "4 5\n");
	tcheck(m, "0/weight/values.txt", "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n");
	tcheck(m, "0/bias/values.txt", "0.5\n-0.25\n");
	tcheck(m, "1/running_var/values.txt", "1\n1\n");
	zip_ok(f, n);
	tclose(m);
	free(f);
	free(npy);
	/* A 4-d shape (MARK ... TUPLE), then a 0-d one (EMPTY_TUPLE). */
	npy = npy_f32("(1, 2, 1, 2)", v, 4, &nl);
	m = topen("pytorch/views.pt");
	mfs_err_clear(&err);
	assert_int_equal(twrite(m, "base/data.npy", npy, nl, &f, &n, &err), -EINVAL);  /* shared */
	assert_int_equal(twrite(m, "scalar/data.npy", npy, nl, &f, &n, &err), 0);
	tclose(m);
	m = topen_mem(f, n, "x.pt", NULL, 0);
	tcheck(m, "scalar/shape", "1 2 1 2\n");
	tcheck(m, "scalar/values.txt", "0 1\n\n2 3\n");
	tcheck(m, "base/values.txt", "0 1 2 3\n4 5 6 7\n8 9 10 11\n");
	zip_ok(f, n);
	tclose(m);
	free(f);
	free(npy);
}

static void test_legacy_value(void **state)
{
	(void)state;
	uint8_t *f;
	size_t n;
	struct mfs_model *m = edited("pytorch/legacy.pt", "lr", "0.125", &f, &n);
	tcheck(m, "lr", "0.125\n");
	tcheck(m, "w/values.txt", "0 1 2\n3 4 5\n");
	tclose(m);
	free(f);
}

/* The pickle p[0, n) with the value of root dict key k (a one-letter
 * str) set to text: the repr of what it then holds. */
static char *rewritten(const char *p, size_t n, char k, const char *text)
{
	struct pk pk, pk2;
	struct mfs_err err = {0};
	assert_int_equal(pk_parse(&pk, (const uint8_t *)p, n, NULL, &err), 0);
	uint32_t v = PK_NIL;
	for (uint32_t c = pk.v[pk.root].head; c != PK_NIL; c = pk.c[pk.c[c].next].next)
		if (*pk_bytes(&pk, &pk.v[pk.c[c].v]) == (uint8_t)k)
			v = pk.c[pk.c[c].next].v;
	assert_int_not_equal(v, PK_NIL);
	uint8_t *out;
	uint64_t on;
	if (pt_value_rewrite(&pk, v, text, strlen(text), &out, &on, &err) != 0)
		fail_msg("%c: %s", k, err.msg);
	assert_int_equal(pk_parse(&pk2, out, on, NULL, &err), 0);
	struct pt_repr rp;
	pt_repr_init(&rp, pk2.nv);
	const char *s;
	size_t len;
	assert_int_equal(pt_repr(&rp, &pk2, pk2.root, &s, &len, &err), 0);
	char *r = malloc(len + 1);  /* the text is not NUL-terminated */
	assert_non_null(r);
	memcpy(r, s, len);
	r[len] = '\0';
	pt_repr_free(&rp);
	pk_free(&pk2);
	pk_free(&pk);
	free(out);
	return r;
}

/* A tuple the memo shares ({'a': t, 'b': t, 'c': t}, t = (1, 2)): the
 * place edited changes alone, the one that built it or one that took it. */
static void test_shared_tuple(void **state)
{
	(void)state;
	static const char p[] = "\x80\x02}(X\x01\x00\x00\x00" "aK\x01K\x02\x86q\x00"
				"X\x01\x00\x00\x00" "bh\x00X\x01\x00\x00\x00" "ch\x00u.";
	static const struct { char k; const char *want; } cases[] = {
		{'a', "{'a': (3,), 'b': (1, 2), 'c': (1, 2)}"},
		{'b', "{'a': (1, 2), 'b': (3,), 'c': (1, 2)}"},
		{'c', "{'a': (1, 2), 'b': (1, 2), 'c': (3,)}"},
	};
	for (size_t i = 0; i < 3; i++) {
		char *r = rewritten(p, sizeof(p) - 1, cases[i].k, "(3,)");
		assert_string_equal(r, cases[i].want);
		free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tensor_in_place),
		cmocka_unit_test(test_refusals),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_shared_and_frames),
		cmocka_unit_test(test_legacy_value),
		cmocka_unit_test(test_reshape),
		cmocka_unit_test(test_literals),
		cmocka_unit_test(test_shared_tuple),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
