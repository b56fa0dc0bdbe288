/* Unit tests of the TenniS codec, writing: unchanged views and re-encoded
 * tensors give the file back byte for byte; every kind of edit changes only
 * the bytes it owns (and shifts what follows); bad input is refused. */
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

static struct mfs_model *open_corpus(const char *rel)
{
	char path[256];
	snprintf(path, sizeof(path), "tennis/%s", rel);
	return topen(path);
}

/* Write content to path and expect a change; returns the new file. */
static uint8_t *write_ok(struct mfs_model *m, const char *path, const void *content, size_t len,
			 size_t *outlen)
{
	uint8_t *out = NULL;
	struct mfs_err err = {0};
	int r = twrite(m, path, content, len, &out, outlen, &err);
	if (r != 0)
		fail_msg("write %s of %s: %d (%s)", path, m->name, r, err.msg);
	return out;
}

static uint8_t *write_str(struct mfs_model *m, const char *path, const char *s, size_t *outlen)
{
	return write_ok(m, path, s, strlen(s), outlen);
}

static void write_fails(struct mfs_model *m, const char *path, const char *content, int code)
{
	uint8_t *out = NULL;
	size_t outlen;
	struct mfs_err err = {0};
	int r = twrite(m, path, content, strlen(content), &out, &outlen, &err);
	if (r != code)
		fail_msg("write \"%s\" to %s: %d (%s), expected %d", content, path, r, err.msg, code);
	assert_true(err.msg[0] != '\0');
	free(out);
}

/* A .npy v1.0 file of the given descr and shape around data. */
static uint8_t *make_npy(const char *descr, const char *shape, const void *data, size_t len,
			 size_t *outlen)
{
	char dict[256];
	int dl = snprintf(dict, sizeof(dict), "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
			  descr, shape);
	size_t hl = ((size_t)dl + 11 + 63) / 64 * 64 - 10;  /* header incl. '\n', 64-aligned */
	uint8_t *b = malloc(10 + hl + len);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = (uint8_t)hl;
	b[9] = (uint8_t)(hl >> 8);
	memset(b + 10, ' ', hl);
	memcpy(b + 10, dict, (size_t)dl);
	b[10 + hl - 1] = '\n';
	if (len)
		memcpy(b + 10 + hl, data, len);
	*outlen = 10 + hl + len;
	return b;
}

/* ---- unchanged ------------------------------------------------------------ */

static void test_unchanged(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		struct mfs_model *m = open_corpus(corpus[i]);
		assert_true(trewrite_all(m) > 10);
		assert_true(tennis_reencode_all(m) > 5);
		tclose(m);
	}
}

/* ---- values.txt ----------------------------------------------------------- */

static void test_values_float32(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("convnet_small.tsm");
	size_t len;
	uint8_t *out = write_str(m, "nodes/1/params/value/values.txt", "1\n2.5\n-3\n0.1\n", &len);
	tsame_outside(m->base, m->size, out, len, 788, 16, 16);
	static const float want[4] = {1, 2.5f, -3, 0.1f};
	assert_memory_equal(out + 788, want, 16);
	struct mfs_model *m2 = topen_mem(out, len, "convnet_small.tsm", NULL, 0);
	tcheck(m2, "nodes/1/params/value/values.txt", "1\n2.5\n-3\n0.1\n");
	tclose(m2);
	free(out);

	/* Numbers may be separated by any blank or commas. */
	out = write_str(m, "nodes/2/params/padding/values.txt", "0,0 0 0\t1 2 3 4", &len);
	tsame_outside(m->base, m->size, out, len, 961 + 16, 16, 16);
	free(out);

	write_fails(m, "nodes/1/params/value/values.txt", "1 2 3\n", -EINVAL);
	write_fails(m, "nodes/1/params/value/values.txt", "1 2 3 x\n", -EINVAL);
	write_fails(m, "nodes/1/params/value/values.txt", "1 2 3 1e39\n", -ERANGE);
	write_fails(m, "nodes/2/params/padding_value/values.txt", "1.5\n", -EINVAL);
	tclose(m);
}

static void test_values_other_types(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("dtypes_zoo.tsm");
	size_t len;
	/* float16: parsed to the nearest half, shown as the shortest text */
	uint8_t *out = write_str(m, "nodes/2/params/value/values.txt",
				 "0.1\n-0\n65504\n-inf\n1e-7\n", &len);
	tsame_outside(m->base, m->size, out, len, 453, 10, 10);
	assert_memory_equal(out + 453, "\x66\x2e\x00\x80\xff\x7b\x00\xfc\x02\x00", 10);
	struct mfs_model *m2 = topen_mem(out, len, "z.tsm", NULL, 0);
	tcheck(m2, "nodes/2/params/value/values.txt", "0.1\n-0\n65500\n-inf\n1e-07\n");
	tclose(m2);
	free(out);
	write_fails(m, "nodes/2/params/value/values.txt", "1 2 3 4 70000\n", -ERANGE);

	/* int8 */
	out = write_str(m, "nodes/13/params/value/values.txt", "5 4 3 2 1", &len);
	tsame_outside(m->base, m->size, out, len, 1554, 5, 5);
	assert_memory_equal(out + 1554, "\x05\x04\x03\x02\x01", 5);
	free(out);
	write_fails(m, "nodes/13/params/value/values.txt", "1 2 3 4 128\n", -ERANGE);
	write_fails(m, "nodes/13/params/value/values.txt", "1 2 3 4 1.5\n", -EINVAL);

	/* uint64 edge */
	out = write_str(m, "nodes/1/params/value/values.txt", "18446744073709551615 0 1\n", &len);
	tsame_outside(m->base, m->size, out, len, 341, 24, 24);
	free(out);

	/* complex64 */
	out = write_str(m, "nodes/7/params/value/values.txt", "0.5-1j\n2+0j\n", &len);
	tsame_outside(m->base, m->size, out, len, 954, 16, 16);
	static const float c[4] = {0.5f, -1, 2, 0};
	assert_memory_equal(out + 954, c, 16);
	m2 = topen_mem(out, len, "z.tsm", NULL, 0);
	tcheck(m2, "nodes/7/params/value/values.txt", "0.5-1j\n2+0j\n");
	tclose(m2);
	free(out);

	/* bool */
	out = write_str(m, "nodes/6/params/value/values.txt", "0\n1\n0\n", &len);
	tsame_outside(m->base, m->size, out, len, 861, 3, 3);
	assert_memory_equal(out + 861, "\x00\x01\x00", 3);
	free(out);
	write_fails(m, "nodes/6/params/value/values.txt", "0\n2\n0\n", -ERANGE);

	/* scalars: 0-d float64 and bool */
	out = write_str(m, "nodes/12/params/value/values.txt", "-0.125\n", &len);
	tsame_outside(m->base, m->size, out, len, 1461, 8, 8);
	static const double d = -0.125;
	assert_memory_equal(out + 1461, &d, 8);
	free(out);
	tclose(m);
}

/* ---- strings -------------------------------------------------------------- */

static void test_strings(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("convnet_small.tsm");
	size_t len;
	/* 'format' of conv1: dims [4] at 925, data at 929. Longer: */
	uint8_t *out = write_str(m, "nodes/2/params/format/values.txt", "NHWC_long\n", &len);
	tsame_outside(m->base, m->size, out, len, 925, 8, 13);
	assert_memory_equal(out + 920, "\x0d\x01\x00\x00\x00\x09\x00\x00\x00NHWC_long", 18);
	struct mfs_model *m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/2/params/format/values.txt", "NHWC_long\n");
	tcheck(m2, "nodes/2/params/format/shape", "9\n");
	/* What follows moved by 5 bytes and is intact. */
	tcheck(m2, "nodes/2/params/padding_value/values.txt", "0\n");
	assert_int_equal(mfs_node_tensor(m2, tnode(m2, "nodes/2/params/padding_value"))->off,
			 1019 + 5);
	tcheck(m2, "nodes/5/name", "relu1\n");
	assert_true(tennis_reencode_all(m2) > 0);
	tclose(m2);
	free(out);

	/* Shorter, and empty */
	out = write_str(m, "nodes/2/params/format/values.txt", "NC", &len);
	tsame_outside(m->base, m->size, out, len, 925, 8, 6);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/2/params/format/values.txt", "NC\n");
	tclose(m2);
	free(out);
	out = write_str(m, "nodes/2/params/format/values.txt", "\n", &len);
	tsame_outside(m->base, m->size, out, len, 925, 8, 4);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/2/params/format/shape", "0\n");
	tclose(m2);
	free(out);

	/* data.npy of a string is uint8 and may change length */
	size_t nl;
	uint8_t *npy = make_npy("|u1", "(6,)", "NCHW16", 6, &nl);
	out = write_ok(m, "nodes/2/params/format/data.npy", npy, nl, &len);
	free(npy);
	tsame_outside(m->base, m->size, out, len, 925, 8, 10);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/2/params/format/values.txt", "NCHW16\n");
	tcheck(m2, "nodes/2/params/format/dtype", "char8\n");
	tclose(m2);
	free(out);
	tclose(m);
}

static void test_op_name(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("convnet_small.tsm");
	size_t len;
	/* relu1's #name: "relu1" at 1351 (dims [5] at 1347) */
	mfs_id id = tnode(m, "nodes/5/name");
	assert_true(m->nodes[id].flags & MFS_NF_WRITABLE);
	uint8_t *out = write_str(m, "nodes/5/name", "final_relu_output\n", &len);
	assert_memory_equal(m->base + 1351, "relu1", 5);
	tsame_outside(m->base, m->size, out, len, 1347, 4 + 5, 4 + 17);
	struct mfs_model *m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/5/name", "final_relu_output\n");
	tcheck(m2, "nodes/5/params/#name/values.txt", "final_relu_output\n");
	char buf[64];
	assert_true(mfs_link_target(m2, tnode(m2, "by-name/final_relu_output"), buf,
				    sizeof(buf)) > 0);
	assert_string_equal(buf, "../nodes/5");
	tclose(m2);
	free(out);

	/* Same length: the bytes only */
	out = write_str(m, "nodes/5/op", "tanh", &len);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/5/op", "tanh\n");
	tclose(m2);
	free(out);

	out = write_str(m, "nodes/2/op", "conv2d_v2", &len);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/2/op", "conv2d_v2\n");
	tcheck(m2, "nodes/2/params/stride/values.txt", "1\n1\n1\n1\n");
	tclose(m2);
	free(out);

	/* Read-only files refuse writes. */
	write_fails(m, "nodes/5/inputs", "1\n", -EACCES);
	write_fails(m, "inputs", "3\n", -EACCES);
	write_fails(m, "header/code", "0x19910930\n", -EACCES);
	tclose(m);
}

/* ---- header --------------------------------------------------------------- */

static void test_header(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("edge_cases.tsm");
	size_t len;
	uint8_t *out = write_str(m, "header/fake", "123\n", &len);
	tsame_outside(m->base, m->size, out, len, 0, 4, 4);
	assert_memory_equal(out, "\x7b\x00\x00\x00", 4);
	free(out);
	out = write_str(m, "header/fake", "4294967295", &len);
	assert_memory_equal(out, "\xff\xff\xff\xff", 4);
	free(out);
	write_fails(m, "header/fake", "4294967296\n", -ERANGE);
	write_fails(m, "header/fake", "-1\n", -ERANGE);
	write_fails(m, "header/fake", "abc\n", -EINVAL);
	write_fails(m, "header/fake", "0x10\n", -EINVAL);
	write_fails(m, "header/fake", "\n", -EINVAL);

	char res[120];
	for (int i = 0; i < 120; i++)
		res[i] = (char)('A' + i % 26);
	out = write_ok(m, "header/reserved", res, 120, &len);
	tsame_outside(m->base, m->size, out, len, 8, 120, 120);
	assert_memory_equal(out + 8, res, 120);
	struct mfs_model *m2 = topen_mem(out, len, "e.tsm", NULL, 0);
	size_t rl;
	char *got = tread(m2, "header/reserved", &rl);
	assert_int_equal(rl, 120);
	assert_memory_equal(got, res, 120);
	free(got);
	tcheck(m2, "header/fake", "195948557\n");
	tclose(m2);
	free(out);
	uint8_t *o2 = NULL;
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "header/reserved", res, 119, &o2, &len, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "120"));
	assert_int_equal(twrite(m, "header/reserved", res, 0, &o2, &len, &err), -EINVAL);
	tclose(m);
}

/* ---- data and data.npy ---------------------------------------------------- */

/* What a partial write (dd conv=notrunc) leaves: the old view with bytes
 * [off, off + len) replaced. */
struct part {
	const uint8_t *old;
	size_t off, len;
	const uint8_t *bytes;
};

static int part_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	const struct part *pt = ctx;
	uint8_t *b = buf;
	for (size_t i = 0; i < len; i++) {
		uint64_t o = off + i;
		b[i] = (o >= pt->off && o < pt->off + pt->len) ? pt->bytes[o - pt->off] : pt->old[o];
	}
	return 0;
}

static void test_data(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("convnet_small.tsm");
	size_t vl;
	char *view = tread(m, "nodes/0/params/value/data", &vl);
	assert_int_equal(vl, 432);
	/* 6 bytes at 10: ends of elements 2 and 3 */
	static const uint8_t nb[6] = {1, 2, 3, 4, 5, 6};
	struct part pt = {(const uint8_t *)view, 10, 6, nb};
	struct mfs_extent ext = {10, 6};
	struct mfs_content c = {.size = vl, .read = part_read, .ctx = &pt, .ext = &ext, .next = 1};
	struct mfs_patch p;
	struct mfs_err err = {0};
	mfs_patch_init(&p);
	assert_int_equal(mfs_view_write(m, tnode(m, "nodes/0/params/value/data"), &c, &p, &err), 0);
	size_t len;
	uint8_t *out = tapply(&p, m->base, (size_t)m->size, &len);
	mfs_patch_free(&p);
	tsame_outside(m->base, m->size, out, len, 255 + 10, 6, 6);
	assert_memory_equal(out + 265, nb, 6);
	free(out);
	free(view);

	/* A whole data file of the wrong size is refused. */
	uint8_t *o = NULL;
	assert_int_equal(twrite(m, "nodes/1/params/value/data", "abc", 3, &o, &len, &err),
			 -EINVAL);
	tclose(m);
}

static void test_npy(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("convnet_small.tsm");
	size_t len, nl;
	/* bias [4] -> [2, 2]: field at 779 (dtype 10, dims 1, [4]), data at 788 */
	static const float v[4] = {1, 2, 3, 4};
	uint8_t *npy = make_npy("<f4", "(2, 2)", v, 16, &nl);
	uint8_t *out = write_ok(m, "nodes/1/params/value/data.npy", npy, nl, &len);
	free(npy);
	assert_memory_equal(m->base + 779, "\x0a\x01\x00\x00\x00\x04\x00\x00\x00", 9);
	tsame_outside(m->base, m->size, out, len, 780, 8 + 16, 12 + 16);
	assert_memory_equal(out + 779, "\x0a\x02\x00\x00\x00\x02\x00\x00\x00\x02\x00\x00\x00", 13);
	struct mfs_model *m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/1/params/value/shape", "2 2\n");
	tcheck(m2, "nodes/1/params/value/values.txt", "1 2\n3 4\n");
	tcheck(m2, "nodes/2/params/padding/values.txt", "0 0\n0 0\n1 1\n1 1\n");
	tclose(m2);
	free(out);

	/* A new dtype: float32 [4] -> int16 [3] */
	static const int16_t s[3] = {-1, 2, 300};
	npy = make_npy("<i2", "(3,)", s, 6, &nl);
	out = write_ok(m, "nodes/1/params/value/data.npy", npy, nl, &len);
	free(npy);
	tsame_outside(m->base, m->size, out, len, 779, 9 + 16, 9 + 6);
	assert_int_equal(out[779], 3);  /* INT16 */
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/1/params/value/dtype", "int16\n");
	tcheck(m2, "nodes/1/params/value/values.txt", "-1\n2\n300\n");
	assert_true(tennis_reencode_all(m2) > 0);
	tclose(m2);
	free(out);

	/* A 0-d scalar stays 0-d (dims = 0); [1] is a 1-D shape. */
	static const int64_t seven = 7;
	npy = make_npy("<i8", "()", &seven, 8, &nl);
	out = write_ok(m, "nodes/2/params/padding_value/data.npy", npy, nl, &len);
	free(npy);
	tsame_outside(m->base, m->size, out, len, 1019, 8, 8);
	free(out);
	npy = make_npy("<i8", "(1,)", &seven, 8, &nl);
	out = write_ok(m, "nodes/2/params/padding_value/data.npy", npy, nl, &len);
	free(npy);
	tsame_outside(m->base, m->size, out, len, 1015, 4 + 8, 4 + 4 + 8);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/2/params/padding_value/shape", "1\n");
	tclose(m2);
	free(out);

	/* Empty */
	npy = make_npy("<f4", "(0, 5)", NULL, 0, &nl);
	out = write_ok(m, "nodes/1/params/value/data.npy", npy, nl, &len);
	free(npy);
	m2 = topen_mem(out, len, "c.tsm", NULL, 0);
	tcheck(m2, "nodes/1/params/value/shape", "0 5\n");
	tcheck(m2, "nodes/1/params/value/values.txt", "");
	tclose(m2);
	free(out);

	/* A header that lies about the data size is refused. */
	npy = make_npy("<f4", "(2, 3)", v, 16, &nl);
	uint8_t *o = NULL;
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "nodes/1/params/value/data.npy", npy, nl, &o, &len, &err),
			 -EINVAL);
	free(npy);
	tclose(m);
}

/* A field of a multi-field pack changes alone; the field count stays. */
static void test_packed_field(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("packed_params.tsm");
	size_t len, nl;
	static const double d[3] = {1, 2, 3};
	uint8_t *npy = make_npy("<f8", "(3,)", d, 24, &nl);
	uint8_t *out = write_ok(m, "nodes/1/params/mixed/2/data.npy", npy, nl, &len);
	free(npy);
	/* mixed/2: dims [2] at 543, data at 547 */
	tsame_outside(m->base, m->size, out, len, 543, 4 + 16, 4 + 24);
	struct mfs_model *m2 = topen_mem(out, len, "p.tsm", NULL, 0);
	tcheck(m2, "nodes/1/params/mixed/2/values.txt", "1\n2\n3\n");
	tcheck(m2, "nodes/1/params/mixed/1/values.txt", "asdf\n");
	tcheck(m2, "nodes/1/params/single_field_pack/values.txt", "9\n8\n");
	tcheck(m2, "nodes/4/params/value/1/values.txt", "0.5\n");
	tclose(m2);
	free(out);

	out = write_str(m, "nodes/1/params/cell_anchors/1/values.txt", "1 2 3 4\n", &len);
	tsame_outside(m->base, m->size, out, len, 442, 16, 16);
	free(out);
	tclose(m);
}

/* Duplicate param names are separate tensors; complex32 is two halves. */
static void test_duplicates_complex32(void **state)
{
	(void)state;
	struct tb t = {0};
	tb_header(&t, 0);
	tb_u32(&t, 0);
	tb_u32(&t, 0);
	tb_u32(&t, 1);
	tb_u32(&t, 3);
	uint32_t one = 1, v1 = 1, v2 = 2;
	tb_str(&t, "w");
	tb_u32(&t, 1);
	tb_field(&t, 5, 0, NULL, &v1, 4);
	size_t second = t.n + 4 + 1 + 4 + 5;
	tb_str(&t, "w");
	tb_u32(&t, 1);
	tb_field(&t, 5, 0, NULL, &v2, 4);
	size_t c32 = t.n + 4 + 1 + 4 + 5 + 4;
	tb_str(&t, "c");
	tb_u32(&t, 1);
	tb_field(&t, 22, 1, &one, "\x00\x3c\x00\x00", 4);
	tb_u32(&t, 0);
	struct mfs_model *m = topen_mem(t.b, t.n, "d.tsm", NULL, 0);
	size_t len;
	uint8_t *out = write_str(m, "nodes/0/params/w~1/values.txt", "9\n", &len);
	tsame_outside(m->base, m->size, out, len, second, 4, 4);
	assert_memory_equal(out + second, "\x09\x00\x00\x00", 4);
	free(out);
	out = write_str(m, "nodes/0/params/c/values.txt", "0.5-2j\n", &len);
	tsame_outside(m->base, m->size, out, len, c32, 4, 4);
	assert_memory_equal(out + c32, "\x00\x38\x00\xc0", 4);
	struct mfs_model *m2 = topen_mem(out, len, "d.tsm", NULL, 0);
	tcheck(m2, "nodes/0/params/c/values.txt", "0.5-2j\n");
	tcheck(m2, "nodes/0/params/w/values.txt", "1\n");
	tclose(m2);
	free(out);
	tclose(m);
	free(t.b);
}

/* ---- edit() directly: what the views never send ------------------------- */

static int direct_reshape(struct mfs_model *m, const char *dir, enum mfs_dtype dt,
			  uint32_t ndim, const uint64_t *dims, const void *bytes, uint64_t n,
			  struct mfs_err *err)
{
	const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, dir));
	struct mfs_run run = {0, n, bytes};
	struct mfs_edit e = {
		.kind = MFS_E_TENSOR,
		.node = t->dir,
		.tensor = (uint32_t)(t - m->tensors),
		.reshape = true,
		.dtype = dt,
		.ndim = ndim,
		.dims = dims,
		.runs = &run,
		.nruns = n ? 1 : 0,
	};
	struct mfs_patch p;
	mfs_patch_init(&p);
	int r = m->codec->edit(m, &e, &p, err);
	mfs_patch_free(&p);
	return r;
}

static void test_refused(void **state)
{
	(void)state;
	struct mfs_model *m = open_corpus("convnet_small.tsm");
	static const uint8_t zero[64];
	struct mfs_err err = {0};
	uint64_t dims[33];
	for (int i = 0; i < 33; i++)
		dims[i] = 1;
	/* No TenniS numeric type for char16 values. */
	assert_int_equal(direct_reshape(m, "nodes/1/params/value", MFS_DT_CHAR16, 1, dims, zero, 1,
					&err), -EINVAL);
	assert_non_null(strstr(err.msg, "char16"));
	/* Dimensions are stored in 32 bits, and we read at most 32 of them. */
	uint64_t big[1] = {UINT64_C(1) << 32};
	assert_int_equal(direct_reshape(m, "nodes/1/params/value", MFS_DT_F32, 1, big, zero, 0,
					&err), -EINVAL);
	assert_int_equal(direct_reshape(m, "nodes/1/params/value", MFS_DT_F32, 33, dims, zero, 1,
					&err), -EINVAL);
	assert_int_equal(direct_reshape(m, "nodes/1/params/value", MFS_DT_F32, 32, dims, zero, 1,
					&err), 0);
	/* Runs that do not cover the new shape */
	assert_int_equal(direct_reshape(m, "nodes/1/params/value", MFS_DT_F32, 1, dims, zero, 0,
					&err), -EINVAL);
	tclose(m);

	/* npy of a non-numeric dtype into a string / a VOID tensor */
	m = open_corpus("cpp_resaved/edge_cases.tsm");
	assert_int_equal(direct_reshape(m, "nodes/6/params/value", MFS_DT_F32, 0, dims, zero, 1,
					&err), -EINVAL);
	tclose(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unchanged),
		cmocka_unit_test(test_values_float32),
		cmocka_unit_test(test_values_other_types),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_op_name),
		cmocka_unit_test(test_header),
		cmocka_unit_test(test_data),
		cmocka_unit_test(test_npy),
		cmocka_unit_test(test_packed_field),
		cmocka_unit_test(test_duplicates_complex32),
		cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
