/* Unit tests of the GGUF codec, reading: files written here per the public
 * specification with every value type, nested and string arrays, a 100k
 * token array, every ggml tensor type, alignments 32 and 64; the tree and
 * index they give; and the dequantizers against blocks whose values are
 * worked out by hand, plus whole-block properties on random blocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "gguf.h"
#include "numtext.h"
#include "test_gguf.h"

static struct mfs_model *open_gw(struct gw *w)
{
	size_t len;
	uint8_t *b = gw_finish(w, &len);
	struct mfs_model *m = topen_mem(b, len, "t.gguf", NULL, 0);
	free(b);
	return m;
}

static void scalar(struct gw *w, const char *key, uint32_t vt, const void *v, size_t n)
{
	gw_key(w, key, vt);
	gw_bytes(w, v, n);
}

static void every_value_type(void **state)
{
	(void)state;
	struct gw w;
	gw_init(&w, 32);
	uint8_t u8 = 200;
	int8_t i8 = -5;
	uint16_t u16 = 65535;
	int16_t i16 = -32768;
	uint32_t u32 = 4000000000u;
	int32_t i32 = -7;
	float f32 = 0.1f;
	uint8_t bl = 1, bf = 0;
	uint64_t u64 = UINT64_MAX;
	int64_t i64 = INT64_MIN;
	double f64 = 1e-300;
	scalar(&w, "u8", 0, &u8, 1);
	scalar(&w, "i8", 1, &i8, 1);
	scalar(&w, "u16", 2, &u16, 2);
	scalar(&w, "i16", 3, &i16, 2);
	scalar(&w, "u32", 4, &u32, 4);
	scalar(&w, "i32", 5, &i32, 4);
	scalar(&w, "f32", 6, &f32, 4);
	scalar(&w, "bt", 7, &bl, 1);
	scalar(&w, "bf", 7, &bf, 1);
	gw_kv_str(&w, "general.name", "a \"quoted\"\nname");
	scalar(&w, "u64", 10, &u64, 8);
	scalar(&w, "i64", 11, &i64, 8);
	scalar(&w, "f64", 12, &f64, 8);
	/* array of int16 */
	gw_key(&w, "arr.i16", 9);
	gw_u32(&w, 3);
	gw_u64(&w, 3);
	int16_t a[3] = {1, -2, 300};
	gw_bytes(&w, a, sizeof(a));
	/* array of bool */
	gw_key(&w, "arr.bool", 9);
	gw_u32(&w, 7);
	gw_u64(&w, 2);
	gw_bytes(&w, "\1\0", 2);
	/* array of strings */
	gw_key(&w, "arr.str", 9);
	gw_u32(&w, 8);
	gw_u64(&w, 4);
	gw_str(&w, "a", 1);
	gw_str(&w, "\n", 1);
	gw_str(&w, "\"q\"\\", 4);
	gw_str(&w, "", 0);
	/* array of arrays: [[1.5], [], ["x"]] */
	gw_key(&w, "arr.nested", 9);
	gw_u32(&w, 9);
	gw_u64(&w, 3);
	gw_u32(&w, 6);
	gw_u64(&w, 1);
	float one5 = 1.5f;
	gw_bytes(&w, &one5, 4);
	gw_u32(&w, 4);
	gw_u64(&w, 0);
	gw_u32(&w, 8);
	gw_u64(&w, 1);
	gw_str(&w, "x", 1);
	struct mfs_model *m = open_gw(&w);
	tcheck(m, "version", "3\n");
	tcheck(m, "alignment", "32\n");
	tcheck(m, "metadata/u8", "200\n");
	tcheck(m, "metadata/i8", "-5\n");
	tcheck(m, "metadata/u16", "65535\n");
	tcheck(m, "metadata/i16", "-32768\n");
	tcheck(m, "metadata/u32", "4000000000\n");
	tcheck(m, "metadata/i32", "-7\n");
	tcheck(m, "metadata/f32", "0.1\n");
	tcheck(m, "metadata/bt", "true\n");
	tcheck(m, "metadata/bf", "false\n");
	tcheck(m, "metadata/general.name", "a \"quoted\"\nname\n");
	tcheck(m, "metadata/u64", "18446744073709551615\n");
	tcheck(m, "metadata/i64", "-9223372036854775808\n");
	tcheck(m, "metadata/f64", "1e-300\n");
	tcheck(m, "metadata/arr.i16/dtype", "int16\n");
	tcheck(m, "metadata/arr.i16/shape", "3\n");
	tcheck(m, "metadata/arr.i16/values.txt", "1\n-2\n300\n");
	tcheck(m, "metadata/arr.bool/dtype", "bool\n");
	tcheck(m, "metadata/arr.str", "\"a\"\n\"\\n\"\n\"\\\"q\\\"\\\\\"\n\"\"\n");
	tcheck(m, "metadata/arr.nested/0/values.txt", "1.5\n");
	tcheck(m, "metadata/arr.nested/1/shape", "0\n");
	tcheck(m, "metadata/arr.nested/2", "\"x\"\n");
	char *l = tlist(m, "metadata");
	assert_string_equal(l, "u8 i8 u16 i16 u32 i32 f32 bt bf general.name u64 i64 f64 arr.i16 "
			       "arr.bool arr.str arr.nested");
	free(l);
	twalk(m);
	tclose(m);
}

static void token_array_100k(void **state)
{
	(void)state;
	struct gw w;
	gw_init(&w, 32);
	gw_key(&w, "tokenizer.ggml.tokens", 9);
	gw_u32(&w, 8);
	gw_u64(&w, 100000);
	size_t expect = 0;
	for (int i = 0; i < 100000; i++) {
		char t[16];
		int n = snprintf(t, sizeof(t), "t%d", i);
		gw_str(&w, t, (size_t)n);
		expect += (size_t)n + 3;
	}
	struct mfs_model *m = open_gw(&w);
	size_t len;
	char *s = tread(m, "metadata/tokenizer.ggml.tokens", &len);
	assert_int_equal(len, expect);
	assert_memory_equal(s, "\"t0\"\n\"t1\"\n", 10);
	assert_memory_equal(s + len - 9, "\"t99999\"\n", 9);
	free(s);
	tclose(m);
}

struct ttype {
	uint32_t id;
	const char *name;
	uint32_t blck, bytes;
};

/* Every ggml type id that GGUF files hold, with its block size and bytes
 * (ggml.c's type traits). */
static const struct ttype all_types[] = {
	{0, "float32", 1, 4}, {1, "float16", 1, 2}, {2, "q4_0", 32, 18}, {3, "q4_1", 32, 20},
	{6, "q5_0", 32, 22}, {7, "q5_1", 32, 24}, {8, "q8_0", 32, 34}, {9, "q8_1", 32, 36},
	{10, "q2_k", 256, 84}, {11, "q3_k", 256, 110}, {12, "q4_k", 256, 144},
	{13, "q5_k", 256, 176}, {14, "q6_k", 256, 210}, {15, "q8_k", 256, 292},
	{16, "iq2_xxs", 256, 66}, {17, "iq2_xs", 256, 74}, {18, "iq3_xxs", 256, 98},
	{19, "iq1_s", 256, 50}, {20, "iq4_nl", 32, 18}, {21, "iq3_s", 256, 110},
	{22, "iq2_s", 256, 82}, {23, "iq4_xs", 256, 136}, {24, "int8", 1, 1},
	{25, "int16", 1, 2}, {26, "int32", 1, 4}, {27, "int64", 1, 8}, {28, "float64", 1, 8},
	{29, "iq1_m", 256, 56}, {30, "bfloat16", 1, 2}, {34, "tq1_0", 256, 54},
	{35, "tq2_0", 256, 66}, {39, "mxfp4", 32, 17}, {40, "nvfp4", 64, 36},
	{41, "q1_0", 128, 18}, {42, "q2_0", 64, 18},
};
#define NTYPES (sizeof(all_types) / sizeof(all_types[0]))

static void every_tensor_type_at(uint32_t align)
{
	struct gw w;
	gw_init(&w, align);
	uint8_t raw[2 * 292];
	for (size_t i = 0; i < sizeof(raw); i++)
		raw[i] = (uint8_t)(i * 7);
	for (size_t k = 0; k < NTYPES; k++) {
		const struct ttype *t = &all_types[k];
		/* halves with a small exponent, so no value is inf or nan */
		for (size_t i = 1; i < sizeof(raw); i += 2)
			raw[i] &= 0x3B;
		uint64_t ne[2] = {t->blck, 2};
		char name[64];
		snprintf(name, sizeof(name), "blk.%zu.%s", k, t->name);
		gw_tensor(&w, name, t->id, 2, ne, raw, 2 * t->bytes);
	}
	struct mfs_model *m = open_gw(&w);
	char buf[128];
	snprintf(buf, sizeof(buf), "%u\n", align);
	tcheck(m, "alignment", buf);
	const struct gguf_file *f = m->priv;
	assert_int_equal(f->data % align, 0);
	size_t len;
	char *index = tread(m, "index", &len);
	char *line = index;
	for (size_t k = 0; k < NTYPES; k++) {
		const struct ttype *t = &all_types[k];
		char path[128], expect[256];
		snprintf(path, sizeof(path), "tensors/blk/%zu/%s/dtype", k, t->name);
		snprintf(expect, sizeof(expect), "%s\n", t->name);
		tcheck(m, path, expect);
		snprintf(path, sizeof(path), "tensors/blk/%zu/%s/shape", k, t->name);
		snprintf(expect, sizeof(expect), "2 %u\n", t->blck);
		tcheck(m, path, expect);
		snprintf(path, sizeof(path), "tensors/blk/%zu/%s/data", k, t->name);
		char *d = tread(m, path, &len);
		assert_int_equal(len, 2 * t->bytes);
		free(d);
		snprintf(expect, sizeof(expect), "blk.%zu.%s\t%s\t2 %u\t%llu\t%u\n", k, t->name, t->name,
			 t->blck, (unsigned long long)(f->data + f->ti[k].rel), 2 * t->bytes);
		assert_memory_equal(line, expect, strlen(expect));
		assert_int_equal(f->ti[k].rel % align, 0);
		line = strchr(line, '\n') + 1;
		const struct ggml_type_info *ty = mfs_ggml_type(t->id);
		snprintf(path, sizeof(path), "tensors/blk/%zu/%s/values.txt", k, t->name);
		bool values = mfs_resolve(m, path) != MFS_NONE;
		assert_int_equal(values, ty->dtype || ty->dequant);
	}
	free(index);
	twalk(m);
	tclose(m);
}

static void every_tensor_type(void **state)
{
	(void)state;
	every_tensor_type_at(32);
	every_tensor_type_at(64);
}

/* ---- dequantization: blocks worked out by hand ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void dq_q4_0(void **state)
{
	(void)state;
	uint8_t b[18];
	float y[32];
	put16(b, H_1);
	memset(b + 2, 0x88, 16);   /* nibbles 8: value 0 */
	b[2] = 0x1F;               /* element 0: 15 - 8 = 7; element 16: 1 - 8 = -7 */
	mfs_dq_q4_0(b, y, 1);
	assert_true(y[0] == 7.0f && y[16] == -7.0f && y[1] == 0.0f && y[31] == 0.0f);
}

static void dq_q4_1(void **state)
{
	(void)state;
	uint8_t b[20];
	float y[32];
	put16(b, H_HALF);          /* d = 0.5 */
	put16(b + 2, H_M1);        /* m = -1 */
	memset(b + 4, 0x21, 16);   /* low 1: 0.5 - 1; high 2: 1 - 1 */
	mfs_dq_q4_1(b, y, 1);
	for (int j = 0; j < 16; j++)
		assert_true(y[j] == -0.5f && y[j + 16] == 0.0f);
}

static void dq_q5(void **state)
{
	(void)state;
	uint8_t b[24];
	float y[32];
	put16(b, H_1);
	mfs_put_le32(b + 2, 0x00010001u);   /* fifth bit of elements 0 and 16 */
	memset(b + 6, 0, 16);
	b[6] = 0x3F;
	mfs_dq_q5_0(b, y, 1);
	/* element 0: (15 | 16) - 16 = 15; element 16: (3 | 16) - 16 = 3; the
	 * rest: 0 - 16 */
	assert_true(y[0] == 15.0f && y[16] == 3.0f && y[1] == -16.0f && y[17] == -16.0f);
	put16(b, H_2);
	put16(b + 2, H_1);
	mfs_put_le32(b + 4, 0xFFFFFFFFu);
	memset(b + 8, 0xFF, 16);
	mfs_dq_q5_1(b, y, 1);   /* q = 31: 31 * 2 + 1 */
	for (int j = 0; j < 32; j++)
		assert_true(y[j] == 63.0f);
}

static void dq_q8_0(void **state)
{
	(void)state;
	uint8_t b[34];
	float y[32];
	put16(b, H_QUARTER);
	for (int j = 0; j < 32; j++)
		b[2 + j] = (uint8_t)(int8_t)(j - 16);
	mfs_dq_q8_0(b, y, 1);
	for (int j = 0; j < 32; j++)
		assert_true(y[j] == (float)(j - 16) * 0.25f);
}

static void dq_q2_k(void **state)
{
	(void)state;
	uint8_t b[84];
	float y[256];
	memset(b, 0x21, 16);       /* scale 1, min 2 (times dmin 0.5 = 1) */
	memset(b + 16, 0xE4, 64);  /* 2-bit fields 0, 1, 2, 3 at shifts 0, 2, 4, 6 */
	put16(b + 80, H_1);
	put16(b + 82, H_HALF);
	mfs_dq_q2_k(b, y, 1);
	/* each 32 values of a 128 share a shift: q = (e % 128) / 32, x = q - 1 */
	for (int e = 0; e < 256; e++)
		assert_true(y[e] == (float)((e % 128) / 32 - 1));
}

static void dq_q3_k(void **state)
{
	(void)state;
	uint8_t b[110];
	float y[256];
	memset(b, 0xFF, 32);       /* high bits set: nothing subtracted */
	memset(b + 32, 0x55, 64);  /* every 2-bit field 1: x = d * scale */
	memset(b + 96, 0, 12);
	b[96] = 0x05;              /* scale 0 low nibble 5 */
	b[100] = 0x70;             /* scale 12 low nibble 7 (high nibble of byte 4) */
	b[104] = 0x0F;             /* high bits: scale 0 gets 3, scale 4 gets 3 */
	put16(b + 108, H_1);
	mfs_dq_q3_k(b, y, 1);
	/* scale 0 = 5 + 48 - 32 = 21 (elements 0-15), scale 1 = -32 (16-31),
	 * scale 4 = 48 - 32 = 16 (64-79), scale 12 = 7 - 32 = -25 (192-207) */
	assert_true(y[0] == 21.0f && y[15] == 21.0f && y[16] == -32.0f);
	assert_true(y[64] == 16.0f && y[79] == 16.0f && y[80] == -32.0f);
	assert_true(y[192] == -25.0f && y[207] == -25.0f && y[208] == -32.0f);
	memset(b, 0, 32);          /* high bits clear: 4 subtracted, q = 1 - 4 */
	mfs_dq_q3_k(b, y, 1);
	assert_true(y[0] == 21.0f * -3.0f && y[16] == -32.0f * -3.0f);
}

static void k4_block(uint8_t *b)
{
	put16(b, H_1);
	put16(b + 2, H_1);
	memset(b + 4, 0, 12);
	b[4] = 0x42;   /* scale 0 = 2; its top bits (1) are scale 4's bits 4-5 */
	b[8] = 0x01;   /* min 0 = 1 */
	b[12] = 0x31;  /* scale 4 low 1 (+16 = 17), min 4 = 3 */
}

static void dq_q4_k(void **state)
{
	(void)state;
	uint8_t b[144];
	float y[256];
	k4_block(b);
	memset(b + 16, 0x21, 128);   /* low nibbles 1, high nibbles 2 */
	mfs_dq_q4_k(b, y, 1);
	/* 0-31: 2 * 1 - 1; 32-63: scale 1 = 0, min 0; 128-159: 17 * 1 - 3 */
	assert_true(y[0] == 1.0f && y[31] == 1.0f && y[32] == 0.0f && y[63] == 0.0f);
	assert_true(y[128] == 14.0f && y[159] == 14.0f);
}

static void dq_q5_k(void **state)
{
	(void)state;
	uint8_t b[176];
	float y[256];
	k4_block(b);
	memset(b + 16, 0xFF, 32);    /* every fifth bit: + 16 */
	memset(b + 48, 0x21, 128);
	mfs_dq_q5_k(b, y, 1);
	/* 0-31: 2 * 17 - 1; 128-159: 17 * 17 - 3 */
	assert_true(y[0] == 33.0f && y[31] == 33.0f && y[128] == 286.0f);
	memset(b + 16, 0x01, 32);    /* only the first group's bit */
	mfs_dq_q5_k(b, y, 1);
	assert_true(y[0] == 33.0f && y[32] == 0.0f && y[128] == 14.0f);
}

static void dq_q6_k(void **state)
{
	(void)state;
	uint8_t b[210];
	float y[256];
	memset(b, 0x21, 128);        /* ql: low 1, high 2 */
	memset(b + 128, 0, 64);      /* qh: 0 */
	memset(b + 192, 0, 16);
	b[192] = 2;                  /* scale 0 */
	b[194] = (uint8_t)-1;        /* scale 2 */
	put16(b + 208, H_1);
	mfs_dq_q6_k(b, y, 1);
	/* 0-15: 2 * (1 - 32); 32-47: -1 * (1 - 32); 64-79: scale 4 = 0 */
	assert_true(y[0] == -62.0f && y[15] == -62.0f && y[16] == 0.0f);
	assert_true(y[32] == 31.0f && y[64] == 0.0f);
	memset(b + 128, 0xFF, 64);   /* upper bits 3: q = (1 | 48) - 32 = 17 */
	mfs_dq_q6_k(b, y, 1);
	assert_true(y[0] == 34.0f && y[32] == -17.0f);
}

/* ---- whole-block properties on random blocks ---- */

static void random_block(uint64_t *st, uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)trand(st);
}

static void prop_simple(void **state)
{
	(void)state;
	uint64_t st = 42;
	uint8_t b[34];
	float y[32];
	for (int it = 0; it < 2000; it++) {
		random_block(&st, b, sizeof(b));
		b[1] &= 0x7B;   /* finite scales */
		float d = mfs_f16_to_f32(mfs_le16(b));
		mfs_dq_q8_0(b, y, 1);
		for (int j = 0; j < 32; j++)
			assert_true(y[j] == (float)(int8_t)b[2 + j] * d);
		mfs_dq_q4_0(b, y, 1);
		for (int j = 0; j < 16; j++)
			assert_true(y[j] == (float)((b[2 + j] & 15) - 8) * d &&
				    y[j + 16] == (float)((b[2 + j] >> 4) - 8) * d);
		b[3] &= 0x7B;
		float m = mfs_f16_to_f32(mfs_le16(b + 2));
		mfs_dq_q4_1(b, y, 1);
		for (int j = 0; j < 16; j++) {
			float lo = (float)(b[4 + j] & 15) * d, hi = (float)(b[4 + j] >> 4) * d;
			assert_true(y[j] == lo + m && y[j + 16] == hi + m);
		}
	}
}

/* q6_k: every value is (d * scale) times an integer in [-32, 31]. */
static void prop_q6_k(void **state)
{
	(void)state;
	uint64_t st = 7;
	uint8_t b[210];
	float y[256];
	for (int it = 0; it < 500; it++) {
		random_block(&st, b, sizeof(b));
		put16(b + 208, H_1);
		mfs_dq_q6_k(b, y, 1);
		for (int e = 0; e < 256; e++) {
			int sc = (int8_t)b[192 + (e / 128) * 8 + (e % 32) / 16 + 2 * ((e % 128) / 32)];
			if (sc == 0) {
				assert_true(y[e] == 0.0f);
				continue;
			}
			float q = y[e] / (float)sc;
			assert_true(q == floorf(q) && q >= -32 && q <= 31);
		}
	}
}

/* The tensor's values through the model (any window) equal the
 * dequantizer's output, and its data.npy holds the same floats. */
static void values_through_model(void **state)
{
	(void)state;
	uint64_t st = 3;
	uint8_t raw[3 * 144];
	random_block(&st, raw, sizeof(raw));
	for (int k = 0; k < 3; k++)
		put16(raw + 144 * k, H_QUARTER), put16(raw + 144 * k + 2, H_HALF);
	struct gw w;
	gw_init(&w, 32);
	uint64_t ne[2] = {256, 3};
	gw_tensor(&w, "w", 12, 2, ne, raw, sizeof(raw));
	struct mfs_model *m = open_gw(&w);
	float y[768];
	mfs_dq_q4_k(raw, y, 3);
	size_t len;
	char *npy = tread(m, "tensors/w/data.npy", &len);
	assert_int_equal(len % 64, sizeof(y) % 64);
	assert_memory_equal(npy + len - sizeof(y), y, sizeof(y));
	free(npy);
	char *txt = tread(m, "tensors/w/values.txt", &len);
	char *p = txt;
	for (int i = 0; i < 768; i++) {
		char *end;
		float v = strtof(p, &end);
		assert_true(v == y[i]);
		p = end;
	}
	free(txt);
	/* a window that starts and ends inside blocks */
	const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, "tensors/w"));
	float part[300];
	struct mfs_err err = {0};
	assert_int_equal(t->ops->read(m, t, 100, 300, part, &err), 0);
	assert_memory_equal(part, y + 100, sizeof(part));
	tclose(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_value_type),
		cmocka_unit_test(token_array_100k),
		cmocka_unit_test(every_tensor_type),
		cmocka_unit_test(dq_q4_0),
		cmocka_unit_test(dq_q4_1),
		cmocka_unit_test(dq_q5),
		cmocka_unit_test(dq_q8_0),
		cmocka_unit_test(dq_q2_k),
		cmocka_unit_test(dq_q3_k),
		cmocka_unit_test(dq_q4_k),
		cmocka_unit_test(dq_q5_k),
		cmocka_unit_test(dq_q6_k),
		cmocka_unit_test(prop_simple),
		cmocka_unit_test(prop_q6_k),
		cmocka_unit_test(values_through_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
