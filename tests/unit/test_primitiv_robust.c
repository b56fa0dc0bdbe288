/* Unit tests of the primitiv codec on hostile and generated input: mutated
 * and truncated corpus files, hand-made bad headers and counts, lenient
 * integer forms, names that need escaping, deep keys, and a model of 100k
 * parameters (open time printed, lookups checked).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <msgpack.h>

#include "helpers.h"

extern const struct mfs_codec mfs_codec_primitiv;

static const char *const corpus[] = {
	"adadelta_default.optimizer", "adagrad_default.optimizer", "adam_custom.optimizer",
	"bin_boundaries.model", "custom_subclass_map16.optimizer", "deep_nesting_17.model",
	"edge_names.model", "empty.model", "mlp_adam_2steps.model", "mlp_adam_2steps.optimizer",
	"mlp_adam_2steps_saved_without_stats.model", "mlp_init_nostats.model",
	"mlp_sgd_3steps.model", "momentumsgd_default.optimizer", "param_2x3_nostats.param",
	"param_adam_2x3.param", "param_adam_2x3_saved_without_stats.param",
	"param_custom_stats.param", "param_interior_ones.param", "param_momentumsgd_vec3.param",
	"param_scalar.param", "rmsprop_default.optimizer", "sgd_3steps.optimizer",
	"sgd_default.optimizer", "shape_2x3.shape", "shape_8d.shape", "shape_batch4.shape",
	"shape_scalar.shape", "shape_trailing_ones.shape", "tensor_2x2x2.tensor",
	"tensor_2x3.tensor", "tensor_bin16_100x3.tensor", "tensor_bin32_128x128.tensor",
	"tensor_scalar.tensor", "tensor_special_values.tensor", "tensor_vec3_batch2.tensor",
	"tied_weights.model",
};
#define NCORPUS (sizeof(corpus) / sizeof(corpus[0]))

/* ---- a small writer (msgpack-c), for files made by the tests -------------- */

struct wb {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

static void wb_init(struct wb *w, uint32_t type)
{
	msgpack_sbuffer_init(&w->sb);
	msgpack_packer_init(&w->pk, &w->sb, msgpack_sbuffer_write);
	msgpack_pack_fix_uint32(&w->pk, 0);
	msgpack_pack_fix_uint32(&w->pk, 1);
	msgpack_pack_fix_uint32(&w->pk, type);
}

static void wb_raw(struct wb *w, const void *b, size_t n)
{
	msgpack_sbuffer_write(&w->sb, b, n);
}

static void wb_u32(struct wb *w, uint32_t v)
{
	msgpack_pack_fix_uint32(&w->pk, v);
}

static void wb_str(struct wb *w, const char *s, size_t n)
{
	msgpack_pack_str_with_body(&w->pk, s, n);
}

/* A Tensor of dims[0..nd) and batch, values v0, v0 + 1, ... */
static void wb_tensor(struct wb *w, const uint32_t *dims, uint32_t nd, uint32_t batch, float v0)
{
	uint64_t n = batch;
	msgpack_pack_array(&w->pk, nd);
	for (uint32_t i = 0; i < nd; i++) {
		wb_u32(w, dims[i]);
		n *= dims[i];
	}
	wb_u32(w, batch);
	msgpack_pack_bin(&w->pk, (size_t)n * 4);
	for (uint64_t i = 0; i < n; i++) {
		float v = v0 + (float)i;
		msgpack_pack_bin_body(&w->pk, &v, 4);
	}
}

/* A Parameter with a [2] value and no stats. */
static void wb_param2(struct wb *w, float v0)
{
	static const uint32_t two[] = {2};
	wb_tensor(w, two, 1, 1, v0);
	wb_u32(w, 0);
}

static struct mfs_model *wb_open(struct wb *w, const char *name)
{
	struct mfs_model *m = topen_mem(w->sb.data, w->sb.size, name, NULL, 0);
	msgpack_sbuffer_destroy(&w->sb);
	return m;
}

/* Opening the bytes must fail with a message containing want (if given). */
static void expect_bad(const void *buf, size_t len, const char *want)
{
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, buf, len, "bad.model", NULL, 0, &mfs_codec_primitiv, &err);
	if (r == 0) {
		mfs_model_free(m);
		fail_msg("a bad file (%zu bytes) opened; expected \"%s\"", len, want ? want : "");
	}
	if (!err.msg[0])
		fail_msg("a bad file failed (%d) without a message", r);
	if (want && !strstr(err.msg, want))
		fail_msg("message \"%s\" does not say \"%s\"", err.msg, want);
}

static void expect_bad_wb(struct wb *w, const char *want)
{
	expect_bad(w->sb.data, w->sb.size, want);
	msgpack_sbuffer_destroy(&w->sb);
}

/* ---- tests ------------------------------------------------------------------- */

static void test_bid(void **state)
{
	(void)state;
	static const uint8_t good[15] = {0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce, 0, 0, 3, 0};
	uint8_t h[15];
	assert_ptr_equal(mfs_probe(good, 15, 15, "x.bin"), &mfs_codec_primitiv);
	assert_int_equal(mfs_codec_primitiv.bid(good, 14, 14, "x.model"), 0);
	for (uint32_t t = 0; t <= 0x400; t += 0x100) {
		memcpy(h, good, 15);
		h[13] = (uint8_t)(t >> 8);
		assert_true(mfs_codec_primitiv.bid(h, 15, 15, "x") > 0);
	}
	memcpy(h, good, 15);
	h[13] = 5;  /* 0x500 */
	assert_int_equal(mfs_codec_primitiv.bid(h, 15, 15, "x.model"), 0);
	memcpy(h, good, 15);
	h[14] = 1;  /* 0x301 */
	assert_int_equal(mfs_codec_primitiv.bid(h, 15, 15, "x.model"), 0);
	memcpy(h, good, 15);
	h[9] = 2;   /* version 0.2 */
	assert_int_equal(mfs_codec_primitiv.bid(h, 15, 15, "x.model"), 0);
	memcpy(h, good, 15);
	h[0] = 0x00;  /* version as fixint: not what primitiv writes */
	assert_int_equal(mfs_codec_primitiv.bid(h, 15, 15, "x.model"), 0);
	/* open checks the header again when the codec is forced */
	expect_bad(h, 15, "header");
	expect_bad(good, 3, "header");
}

static void test_mutate(void **state)
{
	(void)state;
	size_t total = 0;
	for (size_t i = 0; i < NCORPUS; i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "primitiv/%s", corpus[i]);
		total += tmutate(rel, 300);
	}
	print_message("[ info ] %zu of %zu mutated files opened (the rest refused cleanly)\n",
		      total, NCORPUS * 300);
}

/* Every proper prefix of a file is refused with a message. */
static void test_truncated(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCORPUS; i++) {
		char rel[256];
		size_t len;
		snprintf(rel, sizeof(rel), "primitiv/%s", corpus[i]);
		uint8_t *buf = tload(tdata(rel), &len);
		size_t step = len > 4096 ? len / 512 : 1;
		for (size_t n = 0; n < len; n += step) {
			uint8_t *copy = malloc(n + 1);
			memcpy(copy, buf, n);
			expect_bad(copy, n, NULL);
			free(copy);
		}
		free(buf);
	}
}

static void test_bad_counts(void **state)
{
	(void)state;
	struct wb w;
	static const uint32_t two[] = {2};

	/* A count far beyond the bytes left. */
	wb_init(&w, 0x300);
	wb_u32(&w, 0xffffffff);
	expect_bad_wb(&w, "0 left");

	/* dd 93 01 02 03: an array32 of ~2.5e9 elements (msgpack-c would
	 * allocate ~64 GiB for it). */
	wb_init(&w, 0x200);
	wb_raw(&w, "\xdd\x93\x01\x02\x03", 5);
	expect_bad_wb(&w, "elements need at least");

	wb_init(&w, 0x300);
	wb_u32(&w, 1);
	wb_raw(&w, "\xdd\x93\x01\x02\x03", 5);
	expect_bad_wb(&w, "parameter 1 of 1");

	/* A bin32 declaring 4 GiB. */
	wb_init(&w, 0x100);
	msgpack_pack_array(&w.pk, 1);
	wb_u32(&w, 2);
	wb_u32(&w, 1);
	wb_raw(&w, "\xc6\xff\xff\xff\xff\0\0\0\0", 9);
	expect_bad_wb(&w, "declares 4294967295 bytes");

	/* A str32 key declaring 4 GiB. */
	wb_init(&w, 0x200);
	wb_tensor(&w, two, 1, 1, 0);
	wb_u32(&w, 1);
	wb_raw(&w, "\xdb\xff\xff\xff\xf0", 5);
	expect_bad_wb(&w, "stat 1 of 1");

	/* Maps. */
	wb_init(&w, 0x400);
	wb_raw(&w, "\xdf\xff\xff\xff\xff", 5);
	expect_bad_wb(&w, "entries need");

	/* The bin does not hold the shape's elements. */
	wb_init(&w, 0x100);
	msgpack_pack_array(&w.pk, 1);
	wb_u32(&w, 3);
	wb_u32(&w, 1);
	msgpack_pack_bin_with_body(&w.pk, "12345678", 8);
	expect_bad_wb(&w, "needs 3 elements");

	/* A shape whose element count overflows 64 bits. */
	wb_init(&w, 0x100);
	msgpack_pack_array(&w.pk, 8);
	for (int i = 0; i < 8; i++)
		wb_u32(&w, 0xffffffff);
	wb_u32(&w, 0xffffffff);
	msgpack_pack_bin_with_body(&w.pk, "1234", 4);
	expect_bad_wb(&w, "(8 dims, batch 4294967295) overflows");

	/* Stats count beyond the file. */
	wb_init(&w, 0x200);
	wb_tensor(&w, two, 1, 1, 0);
	wb_u32(&w, 5);
	wb_str(&w, "a", 1);
	wb_tensor(&w, two, 1, 1, 0);
	expect_bad_wb(&w, "stat 2 of 5");

	/* Bytes after the end. */
	wb_init(&w, 0x200);
	wb_param2(&w, 0);
	wb_raw(&w, "\0", 1);
	expect_bad_wb(&w, "1 unexpected bytes");
}

static void test_bad_shapes(void **state)
{
	(void)state;
	struct wb w;
	static const uint32_t nine[] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
	static const uint32_t zero[] = {2, 0};

	wb_init(&w, 0x000);
	msgpack_pack_array(&w.pk, 9);
	for (int i = 0; i < 9; i++)
		wb_u32(&w, nine[i]);
	wb_u32(&w, 1);
	expect_bad_wb(&w, "at most 8");

	wb_init(&w, 0x100);
	wb_tensor(&w, zero, 2, 1, 0);
	expect_bad_wb(&w, "dimension 1 is 0");

	wb_init(&w, 0x100);
	msgpack_pack_array(&w.pk, 0);
	wb_u32(&w, 0);
	msgpack_pack_bin(&w.pk, 0);
	expect_bad_wb(&w, "batch is 0");

	/* Integers: negative, beyond 32 bits, not integers at all. */
	wb_init(&w, 0x000);
	wb_raw(&w, "\x91\xd0\xff", 3);
	wb_u32(&w, 1);
	expect_bad_wb(&w, "expected an unsigned 32-bit integer, found -1");
	wb_init(&w, 0x000);
	wb_raw(&w, "\x91\xcf\0\0\0\x01\0\0\0\0", 10);
	wb_u32(&w, 1);
	expect_bad_wb(&w, "expected an unsigned 32-bit integer, found 4294967296");
	wb_init(&w, 0x000);
	wb_raw(&w, "\x91\xc1", 2);
	wb_u32(&w, 1);
	expect_bad_wb(&w, "(never used) (0xc1)");
	wb_init(&w, 0x000);
	wb_raw(&w, "\x91\xff", 2);
	wb_u32(&w, 1);
	expect_bad_wb(&w, "negative fixint");

	/* Deep msgpack nesting where a dim should be: refused at the first
	 * level, with no recursion. */
	size_t depth = 100000;
	uint8_t *deep = malloc(15 + depth + 5);
	memcpy(deep, "\xce\0\0\0\0\xce\0\0\0\x01\xce\0\0\0\0", 15);
	memset(deep + 15, 0x91, depth);
	memcpy(deep + 15 + depth, "\xce\0\0\0\x01", 5);
	expect_bad(deep, 15 + depth + 5, "expected an unsigned integer, found fixarray");
	free(deep);

	/* Optimizer values of the wrong type. */
	wb_init(&w, 0x400);
	msgpack_pack_map(&w.pk, 1);
	wb_str(&w, "Optimizer.epoch", 15);
	msgpack_pack_nil(&w.pk);
	expect_bad_wb(&w, "uint_configs 'Optimizer.epoch'");
	wb_init(&w, 0x400);
	msgpack_pack_map(&w.pk, 0);
	msgpack_pack_map(&w.pk, 1);
	wb_str(&w, "eta", 3);
	msgpack_pack_double(&w.pk, 0.5);
	expect_bad_wb(&w, "expected a float32, found float64");
	wb_init(&w, 0x400);
	msgpack_pack_map(&w.pk, 1);
	wb_raw(&w, "\x01\x01", 2);   /* an integer key */
	msgpack_pack_map(&w.pk, 0);
	expect_bad_wb(&w, "expected a string");

	/* Keys: empty, too deep, not strings. */
	wb_init(&w, 0x300);
	wb_u32(&w, 1);
	msgpack_pack_array(&w.pk, 0);
	wb_param2(&w, 0);
	expect_bad_wb(&w, "key path at byte 20 is empty");
	wb_init(&w, 0x300);
	wb_u32(&w, 1);
	msgpack_pack_array(&w.pk, 1025);
	for (int i = 0; i < 1025; i++)
		wb_str(&w, "k", 1);
	wb_param2(&w, 0);
	expect_bad_wb(&w, "more than 1024");
	wb_init(&w, 0x300);
	wb_u32(&w, 1);
	msgpack_pack_array(&w.pk, 1);
	wb_u32(&w, 7);
	wb_param2(&w, 0);
	expect_bad_wb(&w, "key path component");
}

/* Any msgpack integer form is read; edits write primitiv's forms. */
static void test_lenient(void **state)
{
	(void)state;
	struct wb w;
	wb_init(&w, 0x200);
	/* dims [2, 3] as fixint and uint16, batch as uint8 */
	wb_raw(&w, "\x92\x02\xcd\x00\x03\xcc\x01", 7);
	msgpack_pack_bin(&w.pk, 24);
	float v[6] = {0, 1, 2, 3, 4, 5};
	msgpack_pack_bin_body(&w.pk, v, 24);
	wb_raw(&w, "\x00", 1);  /* stats count 0 as fixint */
	size_t inlen = w.sb.size;
	struct mfs_model *m = wb_open(&w, "p.param");
	tcheck(m, "value/shape", "2 3\n");
	tcheck(m, "value/values.txt", "0 2 4\n1 3 5\n");
	/* a reshape to the same shape writes primitiv's ce forms */
	const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, "value"));
	struct mfs_run run = {0, 6, v};
	struct mfs_edit e = {
		.kind = MFS_E_TENSOR, .node = t->dir, .tensor = 0, .reshape = true,
		.dtype = MFS_DT_F32, .ndim = 2, .dims = t->dims, .runs = &run, .nruns = 1,
	};
	struct mfs_patch p;
	struct mfs_err err = {0};
	mfs_patch_init(&p);
	assert_int_equal(m->codec->edit(m, &e, &p, &err), 0);
	assert_int_equal(mfs_patch_sort(&p, &err), 0);
	size_t outlen;
	uint8_t *out = tapply(&p, m->base, (size_t)m->size, &outlen);
	assert_int_equal(outlen, inlen + 9);
	assert_memory_equal(out + 15, "\x92\xce\0\0\0\x02\xce\0\0\0\x03\xce\0\0\0\x01\xc4\x18", 18);
	mfs_patch_free(&p);
	struct mfs_model *m2 = topen_mem(out, outlen, "p.param", NULL, 0);
	tcheck(m2, "value/values.txt", "0 2 4\n1 3 5\n");
	tclose(m2);
	free(out);
	tclose(m);

	/* An optimizer uint as a fixint becomes ce + 4 bytes when written. */
	wb_init(&w, 0x400);
	msgpack_pack_map(&w.pk, 1);
	wb_str(&w, "Optimizer.epoch", 15);
	wb_raw(&w, "\x05", 1);
	msgpack_pack_map(&w.pk, 0);
	inlen = w.sb.size;
	m = wb_open(&w, "o.optimizer");
	tcheck(m, "uint_configs/Optimizer.epoch", "5\n");
	assert_int_equal(twrite(m, "uint_configs/Optimizer.epoch", "6\n", 2, &out, &outlen, &err),
			 0);
	assert_int_equal(outlen, inlen + 4);
	assert_memory_equal(out + outlen - 6, "\xce\0\0\0\x06\x80", 6);
	m2 = topen_mem(out, outlen, "o.optimizer", NULL, 0);
	tcheck(m2, "uint_configs/Optimizer.epoch", "6\n");
	tclose(m2);
	free(out);
	tclose(m);
}

static void wb_key(struct wb *w, int n, ...)
{
	va_list ap;
	va_start(ap, n);
	msgpack_pack_array(&w->pk, (size_t)n);
	for (int i = 0; i < n; i++) {
		const char *s = va_arg(ap, const char *);
		wb_str(w, s, strlen(s));
	}
	va_end(ap);
}

/* Names needing escapes, duplicates, and a parameter and a sub-model that
 * share a name: all shown, in file order, never merged. */
static void test_names(void **state)
{
	(void)state;
	struct wb w;
	wb_init(&w, 0x300);
	wb_u32(&w, 9);
	wb_key(&w, 1, "a");
	wb_param2(&w, 0);
	wb_key(&w, 2, "a", "w");
	wb_param2(&w, 10);
	wb_key(&w, 2, "a", "w");
	wb_param2(&w, 20);
	wb_key(&w, 2, "a", "w");
	wb_param2(&w, 30);
	wb_key(&w, 1, "");
	wb_param2(&w, 40);
	wb_key(&w, 1, ".");
	wb_param2(&w, 50);
	wb_key(&w, 2, "x/y", "z");
	wb_param2(&w, 60);
	wb_key(&w, 1, "%");
	wb_param2(&w, 70);
	wb_key(&w, 2, "a", "v");
	wb_param2(&w, 80);
	struct mfs_model *m = wb_open(&w, "n.model");
	char *l = tlist(m, "params");
	assert_string_equal(l, "a a~1 % %2E x%2Fy %25");
	free(l);
	l = tlist(m, "params/a~1");
	assert_string_equal(l, "w w~1 w~2 v");
	free(l);
	tcheck(m, "params/a/value/values.txt", "0\n1\n");
	tcheck(m, "params/a~1/w~2/value/values.txt", "30\n31\n");
	tcheck(m, "params/a~1/v/value/values.txt", "80\n81\n");
	tcheck(m, "params/x%2Fy/z/value/values.txt", "60\n61\n");
	tcheck(m, "params/%25/value/values.txt", "70\n71\n");
	twalk(m);
	tclose(m);

	/* Optimizer keys too. */
	wb_init(&w, 0x400);
	msgpack_pack_map(&w.pk, 2);
	wb_str(&w, "a/b", 3);
	wb_u32(&w, 1);
	wb_str(&w, "a/b", 3);
	wb_u32(&w, 2);
	msgpack_pack_map(&w.pk, 1);
	wb_str(&w, "..", 2);
	msgpack_pack_float(&w.pk, 1.5f);
	m = wb_open(&w, "o.optimizer");
	l = tlist(m, "uint_configs");
	assert_string_equal(l, "a%2Fb a%2Fb~1");
	free(l);
	tcheck(m, "uint_configs/a%2Fb~1", "2\n");
	tcheck(m, "float_configs/%2E%2E", "1.5\n");
	tclose(m);
}

/* A key path of 1000 components is a tree 1000 levels deep. */
static void test_deep_key(void **state)
{
	(void)state;
	struct wb w;
	wb_init(&w, 0x300);
	wb_u32(&w, 1);
	msgpack_pack_array(&w.pk, 1000);
	for (int i = 0; i < 1000; i++)
		wb_str(&w, "k", 1);
	wb_param2(&w, 5);
	struct mfs_model *m = wb_open(&w, "d.model");
	char *path = malloc(3000), *p = path;
	p += sprintf(p, "params");
	for (int i = 0; i < 1000; i++)
		p += sprintf(p, "/k");
	sprintf(p, "/value/values.txt");
	tcheck(m, path, "5\n6\n");
	free(path);
	tclose(m);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* 100k small parameters in 100 sub-models: open must stay fast (no
 * quadratic step); the time is printed, not asserted. */
static void test_many_params(void **state)
{
	(void)state;
	enum { N = 100000, G = 100 };
	struct wb w;
	wb_init(&w, 0x300);
	wb_u32(&w, N);
	for (int i = 0; i < N; i++) {
		char g[16], k[16];
		snprintf(g, sizeof(g), "g%d", i % G);
		snprintf(k, sizeof(k), "p%d", i);
		wb_key(&w, 2, g, k);
		wb_param2(&w, (float)i);
	}
	size_t size = w.sb.size;
	uint8_t *buf = (uint8_t *)msgpack_sbuffer_release(&w.sb);
	double t0 = now();
	struct mfs_model *m;
	struct mfs_err err = {0};
	assert_int_equal(mfs_model_open_mem(&m, buf, size, "big.model", NULL, 0, NULL, &err), 0);
	double t1 = now();
	print_message("[ info ] %d parameters (%zu bytes, %u nodes) opened in %.3f s\n", N, size,
		      m->nnodes, t1 - t0);
	assert_int_equal(m->ntensors, N);
	tcheck(m, "params/g42/p12342/value/values.txt", "12342\n12343\n");
	tcheck(m, "params/g0/p0/value/shape", "2\n");
	tcheck(m, "params/g99/p99999/value/values.txt", "99999\n100000\n");
	assert_int_equal(m->nodes[tnode(m, "params")].nchild, G);
	assert_int_equal(m->nodes[tnode(m, "params/g7")].nchild, N / G);
	mfs_model_free(m);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bid),
		cmocka_unit_test(test_bad_counts),
		cmocka_unit_test(test_bad_shapes),
		cmocka_unit_test(test_lenient),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_deep_key),
		cmocka_unit_test(test_many_params),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mutate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
