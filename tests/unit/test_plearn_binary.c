/* Unit tests of the PLearn codec on plearn_binary files. No real one exists,
 * so the tests build them from PLearn's PStream
 * code, little- and big-endian: binary scalars, pointer ids, 1-D and 2-D
 * sequences of each element type, generic sequences of objects, explicit
 * TVec/TMat storage; ascii class names, separators and strings. */
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

/* Offsets of some values in the built file, for the edit checks. */
struct layout {
	size_t weights;   /* first element of the 3 x 2 double matrix */
	size_t flags;     /* first '0'/'1' byte */
	size_t seed;      /* type code of the int scalar */
	size_t storage;   /* first element of the 6-double storage */
	size_t ints;      /* first element of the int32 sequence */
};

static const double weights[6] = {1.5, -2.25, 3e-300, 4.0, 0.1, 1e22};
static const double store[6] = {10, 11, 12, 13, 14, 15};

static void build(struct pb *p, struct layout *l)
{
	pb_def(p, 1);
	pb_str(p, "LinReg(\ninclude_bias = 1;\nweight_decay = ");
	pb_double(p, 1e-6);
	pb_str(p, ";\nseed = ");
	l->seed = p->n;
	pb_int(p, 1827);
	pb_str(p, ";\nbig = ");
	pb_i64(p, -5);
	pb_str(p, ";\nname = \"a \\\"b\\\"\" ;\nweights = ");
	pb_mat(p, 0x10, 3, 2);
	l->weights = p->n;
	pb_f64s(p, weights, 6);
	pb_str(p, ";\nresid = ");
	pb_seq(p, 0x10, 2);
	pb_f64s(p, weights, 2);
	pb_str(p, ";\nints = ");
	pb_seq(p, 0x07, 3);
	l->ints = p->n;
	pb_i32s(p, (const int32_t[]){-1, 0, 2147483647}, 3);
	pb_str(p, ";\nflags = ");
	pb_seq(p, 0x30, 3);
	l->flags = p->n;
	pb_str(p, "101;\nfloats = ");
	pb_seq(p, 0x0E, 2);
	for (int i = 0; i < 2; i++) {
		float f = i ? 0.1f : -3.5f;
		uint32_t bits;
		memcpy(&bits, &f, 4);
		uint8_t b[4];
		p->be ? mfs_put_be32(b, bits) : mfs_put_le32(b, bits);
		pb_raw(p, b, 4);
	}
	pb_str(p, ";\nempty = TVec(");
	pb_int(p, 0);
	pb_int(p, 0);
	pb_str(p, "*0 )\n;\nsub = ");
	pb_def(p, 2);
	pb_str(p, "Sub(\nx = ");
	pb_int(p, 5);
	pb_str(p, " )\n;\nagain = ");
	pb_ref(p, 2);
	pb_str(p, ";\nmodules = ");
	pb_seq(p, 0xFF, 2);
	pb_def(p, 3);
	pb_str(p, "M(\n)\n");
	pb_ref(p, 2);
	pb_str(p, ";\nrandom_gen = *0 ;\nstv = TVec(");
	pb_int(p, 2);
	pb_int(p, 1);
	pb_def(p, 4);
	pb_seq(p, 0x10, 6);
	l->storage = p->n;
	pb_f64s(p, store, 6);
	pb_str(p, ")\n;\nsmat = TMat(");
	pb_int(p, 2);
	pb_int(p, 2);
	pb_int(p, 3);
	pb_int(p, 0);
	pb_ref(p, 4);
	pb_str(p, ")\n;\nlast = ");
	pb_float(p, 2.5f);
	pb_str(p, "  )\n");
}

static struct mfs_model *open_built(bool be, struct pb *p, struct layout *l)
{
	memset(p, 0, sizeof(*p));
	p->be = be;
	build(p, l);
	return topen_mem(p->b, p->n, "bin.psave", NULL, 0);
}

static void test_read(void **state)
{
	(void)state;
	for (int be = 0; be < 2; be++) {
		struct pb p;
		struct layout l;
		struct mfs_model *m = open_built(be, &p, &l);
		char *list = tlist(m, "");
		assert_string_equal(list, "class include_bias weight_decay seed big name weights resid ints "
				    "flags floats empty sub again modules random_gen stv smat last encoding");
		free(list);
		tcheck(m, "encoding", "binary\n");
		tcheck(m, "class", "LinReg\n");
		tcheck(m, "include_bias", "1\n");
		tcheck(m, "weight_decay", "1e-06\n");
		tcheck(m, "seed", "1827\n");
		tcheck(m, "big", "-5\n");
		tcheck(m, "name", "\"a \\\"b\\\"\"\n");
		tcheck(m, "weights/shape", "3 2\n");
		tcheck(m, "weights/dtype", "float64\n");
		tcheck(m, "weights/values.txt", "1.5 -2.25\n3e-300 4\n0.1 1e+22\n");
		tcheck(m, "resid/values.txt", "1.5\n-2.25\n");
		tcheck(m, "ints/dtype", "int32\n");
		tcheck(m, "ints/values.txt", "-1\n0\n2147483647\n");
		tcheck(m, "flags/dtype", "bool\n");
		tcheck(m, "flags/values.txt", "1\n0\n1\n");
		tcheck(m, "floats/dtype", "float32\n");
		tcheck(m, "floats/values.txt", "-3.5\n0.1\n");
		tcheck(m, "empty/shape", "0\n");
		tcheck(m, "sub/class", "Sub\n");
		tcheck(m, "sub/x", "5\n");
		char t[256];
		assert_true(mfs_link_target(m, tnode(m, "again"), t, sizeof(t)) >= 0);
		assert_string_equal(t, "sub");
		tcheck(m, "modules/0/class", "M\n");
		assert_true(mfs_link_target(m, tnode(m, "modules/1"), t, sizeof(t)) >= 0);
		assert_string_equal(t, "../sub");
		tcheck(m, "random_gen", "*0\n");
		tcheck(m, "stv/shape", "2\n");
		tcheck(m, "stv/values.txt", "11\n12\n");
		tcheck(m, "smat/shape", "2 2\n");
		tcheck(m, "smat/values.txt", "10 11\n13 14\n");
		tcheck(m, "last", "2.5\n");
		/* data is little-endian whatever the file's order. */
		size_t len;
		char *d = tread(m, "weights/data", &len);
		assert_int_equal(len, 48);
		assert_memory_equal(d, weights, 48);
		free(d);
		assert_true(twalk(m) > 10);
		trewrite_all(m);
		plt_reencode_all(m);
		tclose(m);
		free(p.b);
	}
}

static void test_write(void **state)
{
	(void)state;
	for (int be = 0; be < 2; be++) {
		struct pb p;
		struct layout l;
		struct mfs_model *m = open_built(be, &p, &l);
		size_t outlen;
		/* One double of the matrix: 8 bytes in the file's order. */
		uint8_t *out = plt_write_str(m, "weights/values.txt", "1.5 -2.25\n3e-300 4\n0.1 -7\n", &outlen);
		tsame_outside(p.b, p.n, out, outlen, l.weights + 5 * 8, 8, 8);
		double v = -7;
		uint64_t bits;
		memcpy(&bits, &v, 8);
		assert_int_equal(be ? mfs_be64(out + l.weights + 40) : mfs_le64(out + l.weights + 40), bits);
		struct mfs_model *n = topen_mem(out, outlen, "bin.psave", NULL, 0);
		tcheck(n, "weights/values.txt", "1.5 -2.25\n3e-300 4\n0.1 -7\n");
		tclose(n);
		free(out);
		/* bools stay characters */
		out = plt_write_str(m, "flags/values.txt", "0\n0\n1\n", &outlen);
		tsame_outside(p.b, p.n, out, outlen, l.flags, 1, 1);
		assert_int_equal(out[l.flags], '0');
		free(out);
		/* int32 elements */
		out = plt_write_str(m, "ints/values.txt", "-1\n7\n2147483647\n", &outlen);
		tsame_outside(p.b, p.n, out, outlen, l.ints + 4, 4, 4);
		assert_int_equal(be ? mfs_be32(out + l.ints + 4) : mfs_le32(out + l.ints + 4), 7);
		free(out);
		plt_write_fails(m, "ints/values.txt", "-1\n7\n2147483648\n", 17, -ERANGE);
		/* strided TMat over a shared storage: element (1, 1) is storage[4] */
		out = plt_write_str(m, "smat/values.txt", "10 11\n13 99\n", &outlen);
		tsame_outside(p.b, p.n, out, outlen, l.storage + 4 * 8, 8, 8);
		n = topen_mem(out, outlen, "bin.psave", NULL, 0);
		tcheck(n, "smat/values.txt", "10 11\n13 99\n");
		tcheck(n, "stv/values.txt", "11\n12\n");
		tclose(n);
		free(out);
		out = plt_write_str(m, "stv/values.txt", "11\n-12\n", &outlen);
		tsame_outside(p.b, p.n, out, outlen, l.storage + 2 * 8, 8, 8);
		free(out);
		/* A binary scalar keeps its type code and byte order. */
		out = plt_write_str(m, "seed", "2000\n", &outlen);
		tsame_outside(p.b, p.n, out, outlen, l.seed + 1, 4, 4);
		assert_int_equal(out[l.seed], be ? 0x08 : 0x07);
		assert_int_equal(be ? mfs_be32(out + l.seed + 1) : mfs_le32(out + l.seed + 1), 2000);
		n = topen_mem(out, outlen, "bin.psave", NULL, 0);
		tcheck(n, "seed", "2000\n");
		tclose(n);
		free(out);
		plt_write_same(m, "seed", "1827");
		plt_write_fails(m, "seed", "3000000000", 10, -ERANGE);
		plt_write_fails(m, "seed", "1.5", 3, -EINVAL);
		plt_write_fails(m, "seed", "abc", 3, -EINVAL);
		plt_write_fails(m, "last", "1e39", 4, -ERANGE);
		out = plt_write_str(m, "weight_decay", "0.5", &outlen);
		n = topen_mem(out, outlen, "bin.psave", NULL, 0);
		tcheck(n, "weight_decay", "0.5\n");
		tclose(n);
		free(out);
		/* Text values stay PLearn text. */
		out = plt_write_str(m, "name", "\"xyz\"", &outlen);
		n = topen_mem(out, outlen, "bin.psave", NULL, 0);
		tcheck(n, "name", "\"xyz\"\n");
		tcheck(n, "encoding", "binary\n");
		tclose(n);
		free(out);
		tclose(m);
		free(p.b);
	}
}

/* Every truncation of a built file fails with a message or opens cleanly. */
static void test_truncated(void **state)
{
	(void)state;
	for (int be = 0; be < 2; be++) {
		struct pb p;
		struct layout l;
		memset(&p, 0, sizeof(p));
		p.be = be;
		build(&p, &l);
		size_t opened = 0;
		for (size_t n = 0; n < p.n; n++) {
			struct mfs_model *m = NULL;
			struct mfs_err err = {0};
			int r = mfs_model_open_mem(&m, p.b, n, "bin.psave", NULL, 0, NULL, &err);
			if (r < 0) {
				if (r != -ENOTSUP && !err.msg[0])
					fail_msg("truncated at %zu: %d without a message", n, r);
				continue;
			}
			opened++;
			twalk(m);
			mfs_model_free(m);
		}
		assert_true(opened <= 2);  /* the last newline and blanks only */
		free(p.b);
	}
}

static void expect_error(const void *buf, size_t n, const char *what)
{
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, buf, n, "bad.psave", NULL, 0, NULL, &err);
	if (r == 0) {
		mfs_model_free(m);
		fail_msg("%s: opened", what);
	}
	if (r != -EINVAL || !err.msg[0])
		fail_msg("%s: %d (%s), expected EINVAL with a message", what, r, err.msg);
}

static void test_bad_binary(void **state)
{
	(void)state;
	/* A sequence header that declares 4 G doubles in 20 bytes. */
	uint8_t huge[] = "A(\nx = \x12\x10\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\xf0\x3f )\n";
	expect_error(huge, sizeof(huge) - 1, "huge 1-D length");
	uint8_t huge2[] = "A(\nx = \x14\x10\xff\xff\xff\x7f\xff\xff\xff\x7f\x00 )\n";
	expect_error(huge2, sizeof(huge2) - 1, "huge 2-D size");
	uint8_t neg[] = "A(\nx = \x14\x10\xff\xff\xff\xff\x01\x00\x00\x00 )\n";
	expect_error(neg, sizeof(neg) - 1, "negative 2-D length");
	uint8_t code[] = "A(\nx = \x1a\x00 )\n";
	expect_error(code, sizeof(code) - 1, "unknown type code");
	uint8_t et[] = "A(\nx = \x12\x42\x01\x00\x00\x00\x00 )\n";
	expect_error(et, sizeof(et) - 1, "unknown element type");
	uint8_t bools[] = "A(\nx = \x12\x30\x02\x00\x00\x00" "12 )\n";
	expect_error(bools, sizeof(bools) - 1, "bool byte not 0/1");
	uint8_t gen[] = "A(\nx = \x12\xff\xff\xff\xff\x0f" "1 )\n";
	expect_error(gen, sizeof(gen) - 1, "generic count beyond the file");
	uint8_t ptr[] = "A(\nx = *\x07\xff\xff\xff\xff->B() )\n";
	expect_error(ptr, sizeof(ptr) - 1, "negative pointer id");
	uint8_t ptrf[] = "A(\nx = *\x10\x00\x00\x00\x00\x00\x00\xf0\x3f->B() )\n";
	expect_error(ptrf, sizeof(ptrf) - 1, "double pointer id");
	uint8_t shortd[] = "A(\nx = \x10\x00\x00";
	expect_error(shortd, sizeof(shortd) - 1, "double cut short");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read),
		cmocka_unit_test(test_write),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_bad_binary),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
