/* Unit tests of the dequantizers against ggml itself: tests/data/gguf/
 * dequant_ref.gguf holds, for every type ggml can dequantize, blocks from
 * ggml's quantizers and random blocks (NaN, inf, subnormal and zero
 * scales; every grid entry of the i-quants), each with the float32 values
 * ggml's own dequantize_row_* gives (see its MANIFEST.md). Each type's
 * dequantizer, and the data.npy and values.txt the tree shows, must give
 * those bits exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gguf.h"
#include "helpers.h"
#include "numtext.h"

#define REF "gguf/dequant_ref.gguf"

/* Every type id with a dequantizer, as the reference file names it. */
static const struct {
	uint32_t id;
	const char *name;
} dq_types[] = {
	{41, "q1_0"}, {42, "q2_0"}, {2, "q4_0"}, {3, "q4_1"}, {6, "q5_0"}, {7, "q5_1"},
	{8, "q8_0"}, {10, "q2_k"}, {11, "q3_k"}, {12, "q4_k"}, {13, "q5_k"}, {14, "q6_k"},
	{15, "q8_k"}, {16, "iq2_xxs"}, {17, "iq2_xs"}, {22, "iq2_s"}, {18, "iq3_xxs"},
	{21, "iq3_s"}, {19, "iq1_s"}, {29, "iq1_m"}, {20, "iq4_nl"}, {23, "iq4_xs"},
	{34, "tq1_0"}, {35, "tq2_0"}, {39, "mxfp4"}, {40, "nvfp4"},
};
#define NDQ (sizeof(dq_types) / sizeof(dq_types[0]))

static struct mfs_model *ref;

static int setup(void **state)
{
	(void)state;
	ref = topen(REF);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tclose(ref);
	return 0;
}

/* The raw `data` of tensor <type>.<kind> (caller frees). */
static uint8_t *tensor_data(const char *type, const char *kind, size_t *len)
{
	char path[96];
	snprintf(path, sizeof(path), "tensors/%s/%s/data", type, kind);
	return (uint8_t *)tread(ref, path, len);
}

/* Bits of two float arrays equal; the first difference is printed. */
static void same_bits(const char *what, const float *got, const float *want, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (bits32(got[i]) != bits32(want[i])) {
			print_error("%s: value %zu is %08x (%.9g), ggml gives %08x (%.9g)\n",
				    what, i, bits32(got[i]), (double)got[i], bits32(want[i]),
				    (double)want[i]);
			fail();
		}
	}
}

/* The dequantizer of one type on one tensor of the reference file. */
static void check_kind(uint32_t id, const char *type, const char *kind)
{
	const struct ggml_type_info *ty = mfs_ggml_type(id);
	assert_non_null(ty);
	assert_non_null(ty->dequant);
	assert_string_equal(ty->name, type);
	size_t nraw, nref;
	uint8_t *raw = tensor_data(type, kind, &nraw);
	char fk[32];
	snprintf(fk, sizeof(fk), "%s_f32", kind);
	float *want = (float *)tensor_data(type, fk, &nref);
	assert_int_equal(nraw % ty->bytes, 0);
	uint64_t nb = nraw / ty->bytes;
	assert_int_equal(nref, nb * ty->blck * sizeof(float));
	/* from a misaligned copy: blocks are read byte by byte */
	uint8_t *odd = malloc(nraw + 1);
	memcpy(odd + 1, raw, nraw);
	float *got = malloc(nref);
	ty->dequant(odd + 1, got, nb);
	char what[64];
	snprintf(what, sizeof(what), "%s.%s", type, kind);
	same_bits(what, got, want, nb * ty->blck);
	free(odd);
	free(got);
	free(raw);
	free(want);
}

static void ggml_blocks(void **state)
{
	(void)state;
	for (size_t i = 0; i < NDQ; i++)
		check_kind(dq_types[i].id, dq_types[i].name, "quant");
}

static void random_blocks(void **state)
{
	(void)state;
	for (size_t i = 0; i < NDQ; i++)
		check_kind(dq_types[i].id, dq_types[i].name, "random");
}

/* data.npy of every quantized tensor holds ggml's values after its header,
 * and values.txt reads back as them (a NaN as a NaN of its sign). */
static void views_show_ggml_values(void **state)
{
	(void)state;
	const char *kinds[] = {"quant", "random"};
	for (size_t i = 0; i < NDQ; i++) {
		for (int k = 0; k < 2; k++) {
			const char *type = dq_types[i].name;
			char path[96], fk[32];
			size_t nref, nnpy, ntxt;
			snprintf(fk, sizeof(fk), "%s_f32", kinds[k]);
			float *want = (float *)tensor_data(type, fk, &nref);
			snprintf(path, sizeof(path), "tensors/%s/%s/data.npy", type, kinds[k]);
			char *npy = tread(ref, path, &nnpy);
			assert_true(nnpy > nref);
			float *npv = malloc(nref);
			memcpy(npv, npy + nnpy - nref, nref);
			same_bits(path, npv, want, nref / sizeof(float));
			snprintf(path, sizeof(path), "tensors/%s/%s/values.txt", type, kinds[k]);
			char *txt = tread(ref, path, &ntxt), *p = txt;
			for (size_t e = 0; e < nref / sizeof(float); e++) {
				while (*p == ' ' || *p == '\n')
					p++;
				float w = want[e];
				char *end;
				float v = strtof(p, &end);
				assert_true(end > p);
				if (isnan(w))
					assert_true(isnan(v) && !signbit(v) == !signbit(w));
				else
					assert_int_equal(bits32(v), bits32(w));
				p = end;
			}
			while (*p == ' ' || *p == '\n')
				p++;
			assert_int_equal(*p, '\0');
			free(txt);
			free(npv);
			free(npy);
			free(want);
		}
	}
}

/* The type table has a dequantizer for exactly the types above (q8_1, for
 * which ggml has none, stays opaque), and each row's block size is ggml's. */
static void dequantizers_in_the_table(void **state)
{
	(void)state;
	size_t n = 0;
	for (uint32_t id = 0; id < 64; id++) {
		const struct ggml_type_info *ty = mfs_ggml_type(id);
		if (!ty || !ty->dequant)
			continue;
		bool listed = false;
		for (size_t i = 0; i < NDQ; i++)
			listed |= dq_types[i].id == id;
		assert_true(listed);
		n++;
	}
	assert_int_equal(n, NDQ);
	assert_null(mfs_ggml_type(9)->dequant);
}

/* ggml's half conversion quiets a signalling NaN, keeping sign and payload. */
static void half_scales(void **state)
{
	(void)state;
	uint8_t h[2];
	const struct {
		uint16_t h;
		uint32_t f;
	} cases[] = {{0x7C01, 0x7FC02000}, {0xFE01, 0xFFC02000}, {0x7E00, 0x7FC00000},
		     {0x7C00, 0x7F800000}, {0xFC00, 0xFF800000}, {0x0001, 0x33800000},
		     {0x8000, 0x80000000}, {0x3C00, 0x3F800000}};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h[0] = (uint8_t)cases[i].h;
		h[1] = (uint8_t)(cases[i].h >> 8);
		assert_int_equal(bits32(mfs_dq_half(h)), cases[i].f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ggml_blocks),
		cmocka_unit_test(random_blocks),
		cmocka_unit_test(views_show_ggml_values),
		cmocka_unit_test(dequantizers_in_the_table),
		cmocka_unit_test(half_scales),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
