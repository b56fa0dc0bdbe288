/* Unit tests of the TenniS codec, malformed files: the corpus's three,
 * every truncation of every corpus file, random mutations, and hand-made
 * counts, sizes, codes and indices that do not fit. Each is refused with a
 * message and never crashes (run under ASan/UBSan too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_tennis.h"

static const char *const corpus[] = {
	"convnet_small.tsm",
	"dtypes_zoo.tsm",
	"packed_params.tsm",
	"edge_cases.tsm",
	"cpp_resaved/convnet_small.tsm",
	"cpp_resaved/dtypes_zoo.tsm",
	"cpp_resaved/packed_params.tsm",
	"cpp_resaved/edge_cases.tsm",
};

/* Open bytes as a .tsm and expect -EINVAL with a message containing want. */
static void refused(const uint8_t *b, size_t n, const char *want)
{
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	const struct mfs_codec *c = mfs_probe(b, n < MFS_HEAD_MAX ? n : MFS_HEAD_MAX, n, "x.tsm");
	assert_non_null(c);
	assert_string_equal(c->name, "tennis");
	int r = mfs_model_open_mem(&m, b, n, "x.tsm", NULL, 0, c, &err);
	if (r != -EINVAL || !strstr(err.msg, want))
		fail_msg("got %d \"%s\", expected -EINVAL \"...%s...\"", r, err.msg, want);
}

static void test_corpus_malformed(void **state)
{
	(void)state;
	struct mfs_err err = {0};
	assert_int_equal(topen_fail("tennis/malformed/truncated_at_1000.tsm", &err), -EINVAL);
	assert_string_equal(err.msg, "node 2 param 5: name needs 13 bytes at offset 997, 3 left");
	assert_int_equal(topen_fail("tennis/malformed/bad_dtype_99.tsm", &err), -EINVAL);
	assert_string_equal(err.msg, "node 0 param '#name': unknown dtype code 99 at offset 165");
	assert_int_equal(topen_fail("tennis/malformed/output_index_out_of_range.tsm", &err),
			 -EINVAL);
	assert_string_equal(err.msg, "module output 0 at offset 140: node index 77 is beyond the 6 nodes");
}

/* Every strict prefix of every corpus file is refused with a message. */
static void test_truncated(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		size_t len;
		uint8_t *f = tennis_load(corpus[i], &len);
		const struct mfs_codec *c = mfs_probe(f, MFS_HEAD_MAX, len, "x.tsm");
		assert_non_null(c);
		for (size_t n = 0; n < len; n++) {
			uint8_t *cut = malloc(n ? n : 1);  /* exact size: ASan sees overreads */
			assert_non_null(cut);
			memcpy(cut, f, n);
			struct mfs_model *m = NULL;
			struct mfs_err err = {0};
			int r = mfs_model_open_mem(&m, cut, n, "x.tsm", NULL, 0, c, &err);
			if (r == 0 || !err.msg[0])
				fail_msg("%s cut at %zu: %d \"%s\"", corpus[i], n, r, err.msg);
			assert_int_equal(r, -EINVAL);
			free(cut);
		}
		free(f);
	}
}

static void test_mutated(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "tennis/%s", corpus[i]);
		assert_true(tmutate(rel, 400) > 0);  /* most flips hit values */
	}
	tmutate("tennis/malformed/truncated_at_1000.tsm", 200);
	tmutate("tennis/malformed/bad_dtype_99.tsm", 200);
	tmutate("tennis/malformed/output_index_out_of_range.tsm", 200);
}

/* A small valid file, with the offsets of its fields, to corrupt. */
struct base {
	struct tb t;
	size_t node_count;     /* the u32 node count */
	size_t param_count;    /* node 0's param count */
	size_t name_len;       /* node 0 param "w": name length */
	size_t field_count;    /* its field count */
	size_t dtype;          /* its dtype byte */
	size_t ndim;           /* its dims count */
	size_t dim0;           /* its first dim */
	size_t node_input;     /* node 1's first input index */
	size_t in_count;       /* module inputs count */
	size_t out_index;      /* the first module output */
};

static void make_base(struct base *b)
{
	memset(b, 0, sizeof(*b));
	struct tb *t = &b->t;
	tb_header(t, 0);
	b->in_count = t->n;
	tb_u32(t, 1);
	tb_u32(t, 0);
	tb_u32(t, 1);
	b->out_index = t->n;
	tb_u32(t, 1);
	b->node_count = t->n;
	tb_u32(t, 2);
	/* node 0: w = float32 [2, 3] */
	b->param_count = t->n;
	tb_u32(t, 3);
	tb_str_param(t, "#op", "<const>");
	tb_str_param(t, "#name", "w0");
	b->name_len = t->n;
	tb_str(t, "w");
	b->field_count = t->n;
	tb_u32(t, 1);
	b->dtype = t->n;
	b->ndim = t->n + 1;
	b->dim0 = t->n + 5;
	static const float v[6] = {1, 2, 3, 4, 5, 6};
	uint32_t dims[2] = {2, 3};
	tb_field(t, 10, 2, dims, v, sizeof(v));
	tb_u32(t, 0);
	/* node 1: relu of node 0 */
	tb_u32(t, 2);
	tb_str_param(t, "#op", "relu");
	tb_str_param(t, "#name", "r");
	tb_u32(t, 1);
	b->node_input = t->n;
	tb_u32(t, 0);
}

static void put32(uint8_t *b, size_t off, uint32_t v)
{
	memcpy(b + off, &v, 4);
}

static void test_hand_made(void **state)
{
	(void)state;
	struct base b;
	make_base(&b);
	struct mfs_model *m = topen_mem(b.t.b, b.t.n, "b.tsm", NULL, 0);
	tcheck(m, "nodes/0/params/w/values.txt", "1 2 3\n4 5 6\n");
	tcheck(m, "nodes/1/inputs", "0\n");
	tclose(m);

	static const struct {
		size_t at;       /* offsetof(struct base, ...) */
		int add;         /* added to that offset */
		uint32_t value;  /* u32 written there (u8 for a dtype) */
		const char *msg;
	} cases[] = {
		{offsetof(struct base, in_count), 0, 0xffffffffu,
		 "module inputs: index count 4294967295 at offset 128 needs at least 17179869180 bytes"},
		{offsetof(struct base, out_index), 0, 2,
		 "module output 0 at offset 140: node index 2 is beyond the 2 nodes"},
		{offsetof(struct base, node_count), 0, 0xffffffffu,
		 "module: node count 4294967295 at offset"},
		{offsetof(struct base, node_count), 0, 3, "node 2: param count needs 4 bytes"},
		{offsetof(struct base, param_count), 0, 0x10000000u,
		 "node 0: param count 268435456 at offset"},
		{offsetof(struct base, param_count), 0, 4, "node 0 param "},
		{offsetof(struct base, name_len), 0, 0xfffffff0u,
		 "node 0 param 2: name needs 4294967280 bytes"},
		{offsetof(struct base, field_count), 0, 0x40000000u,
		 "node 0 param 'w': field count 1073741824 at offset"},
		{offsetof(struct base, dtype), 0, 33, "node 0 param 'w': unknown dtype code 33 at offset"},
		{offsetof(struct base, dtype), 0, 255, "unknown dtype code 255"},
		{offsetof(struct base, ndim), 0, 99, "node 0 param 'w': dims count 99 needs 396 bytes"},
		{offsetof(struct base, dim0), 0, 0xffffffffu,
		 "node 0 param 'w': 12884901885 float32 elements need 51539607540 bytes"},
		{offsetof(struct base, dtype), 0, 24, "complex128 elements need 96 bytes"},
		{offsetof(struct base, node_input), 0, 2,
		 "node 1 input 0 at offset"},
		{offsetof(struct base, node_input), -4, 0x20000000u,
		 "node 1 inputs: index count 536870912 at offset"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint8_t *f = malloc(b.t.n);
		assert_non_null(f);
		memcpy(f, b.t.b, b.t.n);
		size_t off = *(const size_t *)((const char *)&b + cases[i].at) + (size_t)cases[i].add;
		if (cases[i].at == offsetof(struct base, dtype))
			f[off] = (uint8_t)cases[i].value;
		else
			put32(f, off, cases[i].value);
		refused(f, b.t.n, cases[i].msg);
		free(f);
	}

	/* 33 dims (with the bytes for them): more than we support */
	uint8_t *f = calloc(1, b.t.n + 40);
	assert_non_null(f);
	memcpy(f, b.t.b, b.t.n);
	put32(f, b.ndim, 33);
	refused(f, b.t.n + 40, "node 0 param 'w': 33 dimensions, at most 32 are supported");
	/* Three dims whose product overflows 64 bits */
	memcpy(f, b.t.b, b.t.n);
	put32(f, b.ndim, 3);
	put32(f, b.dim0, 0xffffffffu);
	put32(f, b.dim0 + 4, 0xffffffffu);
	refused(f, b.t.n, "node 0 param 'w': shape at offset");
	free(f);
	/* ... unless a 0 makes it empty; void elements take no bytes at all */
	static const uint32_t zero_huge[3] = {0xffffffffu, 0, 0xffffffffu};
	static const uint32_t huge[3] = {0xffffffffu, 0xffffffffu, 1};
	for (int k = 0; k < 2; k++) {
		struct tb t = {0};
		tb_header(&t, 0);
		tb_u32(&t, 0);
		tb_u32(&t, 0);
		tb_u32(&t, 1);
		tb_u32(&t, 1);
		tb_str(&t, "w");
		tb_u32(&t, 1);
		tb_field(&t, k ? 0 : 10, 3, k ? huge : zero_huge, NULL, 0);
		tb_u32(&t, 0);
		m = topen_mem(t.b, t.n, "b.tsm", NULL, 0);
		tcheck(m, "nodes/0/params/w/shape",
		       k ? "4294967295 4294967295 1\n" : "4294967295 0 4294967295\n");
		tcheck(m, "nodes/0/params/w/dtype", k ? "void\n" : "float32\n");
		assert_true(twalk(m) > 0);
		assert_int_equal(tennis_reencode_all(m), 1);
		tclose(m);
		free(t.b);
	}

	/* Bytes after the last node are kept, as the TenniS loader ignores them. */
	tb_bytes(&b.t, "xyz", 3);
	m = topen_mem(b.t.b, b.t.n, "b.tsm", NULL, 0);
	assert_int_equal(tennis_reencode_all(m), 3 + 2);
	tclose(m);

	/* Not the code at offset 4: not a TenniS file, but one named .tsm
	 * still bids (by its name alone) and is refused with a message; under
	 * another name it is nothing's. */
	struct mfs_err err = {0};
	size_t head = b.t.n < MFS_HEAD_MAX ? b.t.n : MFS_HEAD_MAX;
	b.t.b[4] ^= 1;
	const struct mfs_codec *c = mfs_probe(b.t.b, head, b.t.n, "x.bin");
	assert_true(c == NULL || strcmp(c->name, "tennis") != 0);
	c = mfs_probe(b.t.b, head, b.t.n, "x.tsm");
	assert_string_equal(c->name, "tennis");
	assert_int_equal(mfs_model_open_mem(&m, b.t.b, b.t.n, "x.tsm", NULL, 0, c, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "expected the code 0x19910929"));
	free(b.t.b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_corpus_malformed),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_mutated),
		cmocka_unit_test(test_hand_made),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
