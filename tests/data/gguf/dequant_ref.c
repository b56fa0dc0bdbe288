/* Writes dequant_ref.gguf: for every ggml type that ggml can dequantize,
 * blocks made by ggml's own quantizers and blocks of random bytes (special
 * scales: NaN, inf, subnormal, zero; grid indices that use every entry of
 * the i-quant grids), each beside the float32 values ggml's own
 * dequantize_row_* gives for them; written by ggml's own GGUF writer.
 * Not built by meson: it links ggml's base library (see MANIFEST.md).
 *
 * usage: dequant_ref OUT.gguf GGML_COMMIT */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ggml.h"
#include "gguf.h"
#include "ggml-quants.h"

#define ROW 256   /* elements per row of the quantized tensors */
#define ROWS 4

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t next(void)
{
	uint64_t z = (rng += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double uniform(void)
{
	return (double)(next() >> 11) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2.0 * log(1.0 - uniform())) * cos(2.0 * M_PI * uniform());
}

/* A finite half of moderate size and random sign. */
static uint16_t finite_half(void)
{
	return (uint16_t)(((next() & 1) << 15) | ((6 + next() % 9) << 10) | (next() & 1023));
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

/* Half scales tried alone: inf, -inf, quiet and signalling NaNs with
 * payloads and either sign, the smallest subnormal, -0, +0, the largest
 * half, a NaN of all ones. */
static const uint16_t special[] = {0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0x0001,
				   0x8000, 0x0000, 0x7BFF, 0x7D55, 0xFFFF};
#define NSPECIAL (sizeof(special) / sizeof(special[0]))
/* ... and pairs, for the types with two (d and min). */
static const uint16_t pairs[][2] = {{0x7E00, 0xFE01}, {0x7C01, 0x7E00}, {0xFE01, 0x7C00},
				    {0x7C00, 0xFC00}, {0xFC00, 0xFC00}, {0x0001, 0x8001}};
#define NPAIRS (sizeof(pairs) / sizeof(pairs[0]))

struct ty {
	enum ggml_type id;
	const char *name;
	int half[2];            /* byte offsets of half scales, -1: none */
	int grid, per_block;    /* grid entries, grid indices per block (0: none) */
	int nblocks;            /* random blocks at least */
};

static const struct ty types[] = {
	{GGML_TYPE_Q1_0, "q1_0", {0, -1}, 0, 0, 16},
	{GGML_TYPE_Q2_0, "q2_0", {0, -1}, 0, 0, 16},
	{GGML_TYPE_Q4_0, "q4_0", {0, -1}, 0, 0, 16},
	{GGML_TYPE_Q4_1, "q4_1", {0, 2}, 0, 0, 32},
	{GGML_TYPE_Q5_0, "q5_0", {0, -1}, 0, 0, 16},
	{GGML_TYPE_Q5_1, "q5_1", {0, 2}, 0, 0, 32},
	{GGML_TYPE_Q8_0, "q8_0", {0, -1}, 0, 0, 16},
	{GGML_TYPE_Q2_K, "q2_k", {80, 82}, 0, 0, 32},
	{GGML_TYPE_Q3_K, "q3_k", {108, -1}, 0, 0, 16},
	{GGML_TYPE_Q4_K, "q4_k", {0, 2}, 0, 0, 32},
	{GGML_TYPE_Q5_K, "q5_k", {0, 2}, 0, 0, 32},
	{GGML_TYPE_Q6_K, "q6_k", {208, -1}, 0, 0, 16},
	{GGML_TYPE_Q8_K, "q8_k", {-1, -1}, 0, 0, 16},
	{GGML_TYPE_IQ2_XXS, "iq2_xxs", {0, -1}, 256, 32, 16},
	{GGML_TYPE_IQ2_XS, "iq2_xs", {0, -1}, 512, 32, 16},
	{GGML_TYPE_IQ2_S, "iq2_s", {0, -1}, 1024, 32, 16},
	{GGML_TYPE_IQ3_XXS, "iq3_xxs", {0, -1}, 256, 64, 16},
	{GGML_TYPE_IQ3_S, "iq3_s", {0, -1}, 512, 64, 16},
	{GGML_TYPE_IQ1_S, "iq1_s", {0, -1}, 2048, 32, 16},
	{GGML_TYPE_IQ1_M, "iq1_m", {-1, -1}, 2048, 32, 16},
	{GGML_TYPE_IQ4_NL, "iq4_nl", {0, -1}, 0, 0, 16},
	{GGML_TYPE_IQ4_XS, "iq4_xs", {0, -1}, 0, 0, 16},
	{GGML_TYPE_TQ1_0, "tq1_0", {52, -1}, 0, 0, 16},
	{GGML_TYPE_TQ2_0, "tq2_0", {64, -1}, 0, 0, 16},
	{GGML_TYPE_MXFP4, "mxfp4", {-1, -1}, 0, 0, 256},
	{GGML_TYPE_NVFP4, "nvfp4", {-1, -1}, 0, 0, 64},
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

/* Grid index g of a block of an i-quant set to v. */
static void set_index(enum ggml_type t, uint8_t *b, int g, unsigned v)
{
	int ib = g / 4, l = g % 4;
	switch (t) {
	case GGML_TYPE_IQ2_XXS:
		b[2 + 8 * ib + l] = (uint8_t)v;
		break;
	case GGML_TYPE_IQ2_XS: {
		uint8_t *p = b + 2 + 2 * g;
		put16(p, (uint16_t)((((p[0] | p[1] << 8)) & ~511u) | v));
		break;
	}
	case GGML_TYPE_IQ2_S:
		b[2 + g] = (uint8_t)v;
		b[66 + ib] = (uint8_t)((b[66 + ib] & ~(3u << 2 * l)) | (v >> 8) << 2 * l);
		break;
	case GGML_TYPE_IQ3_XXS:
		b[2 + g] = (uint8_t)v;
		break;
	case GGML_TYPE_IQ3_S: {
		/* 8 indices per 32 elements: low bits in qs, bit 8 in bit k of qh */
		int h = g / 8, k = g % 8;
		b[2 + g] = (uint8_t)v;
		b[66 + h] = (uint8_t)((b[66 + h] & ~(1u << k)) | (v >> 8) << k);
		break;
	}
	case GGML_TYPE_IQ1_S: {
		uint8_t *qh = b + 34 + 2 * ib;
		unsigned w = (unsigned)(qh[0] | qh[1] << 8);
		w = (w & ~(7u << 3 * l)) | (v >> 8) << 3 * l;
		b[2 + g] = (uint8_t)v;
		put16(qh, (uint16_t)w);
		break;
	}
	case GGML_TYPE_IQ1_M: {
		uint8_t *qh = b + 32 + 2 * ib + l / 2;
		int sh = 4 * (l % 2);
		b[g] = (uint8_t)v;
		*qh = (uint8_t)((*qh & ~(7u << sh)) | (v >> 8) << sh);
		break;
	}
	default:
		break;
	}
}

/* The scales of random block k: special values first (alone, then in
 * pairs), then moderate finite halves. */
static void set_scales(const struct ty *t, uint8_t *b, int k)
{
	if (t->id == GGML_TYPE_Q8_K) {
		static const uint32_t f32[] = {0x7F800000, 0xFF800000, 0x7FC00000, 0x7F800001,
					       0xFFC01234, 0x00000001, 0x80000000, 0x7F7FFFFF};
		uint32_t v = k < 8 ? f32[k] : 0;
		float f = (float)(gauss() * 0.01);
		if (k < 8)
			memcpy(b, &v, 4);
		else
			memcpy(b, &f, 4);
		return;
	}
	if (t->id == GGML_TYPE_IQ1_M) {
		/* the half is the top nibbles of the four scale words */
		uint16_t h = k < (int)NSPECIAL ? special[k] : finite_half();
		for (int n = 0; n < 4; n++)
			b[49 + 2 * n] = (uint8_t)((b[49 + 2 * n] & 0x0F) | ((h >> 4 * n) & 15) << 4);
		return;
	}
	if (t->id == GGML_TYPE_MXFP4 || t->id == GGML_TYPE_NVFP4) {
		/* every exponent byte once */
		int n = t->id == GGML_TYPE_MXFP4 ? 1 : 4;
		for (int s = 0; s < n; s++)
			b[s] = (uint8_t)(k * n + s);
		return;
	}
	uint16_t h[2] = {finite_half(), finite_half()};
	if (k < (int)NSPECIAL)
		h[0] = special[k];
	else if (t->half[1] >= 0 && k < (int)(2 * NSPECIAL))
		h[1] = special[k - NSPECIAL];
	else if (t->half[1] >= 0 && k < (int)(2 * NSPECIAL + NPAIRS))
		h[0] = pairs[k - 2 * NSPECIAL][0], h[1] = pairs[k - 2 * NSPECIAL][1];
	for (int i = 0; i < 2; i++)
		if (t->half[i] >= 0)
			put16(b + t->half[i], h[i]);
}

static int random_blocks(const struct ty *t)
{
	int n = t->nblocks;
	if (t->grid && t->grid / t->per_block > n)
		n = t->grid / t->per_block;
	return n;
}

static void fill_random(const struct ty *t, uint8_t *raw, int nb, size_t bytes)
{
	for (size_t i = 0; i < nb * bytes; i++)
		raw[i] = (uint8_t)next();
	for (int k = 0; k < nb; k++) {
		uint8_t *b = raw + k * bytes;
		set_scales(t, b, k);
		for (int g = 0; t->grid && g < t->per_block; g++)
			set_index(t->id, b, g, (unsigned)((k * t->per_block + g) % t->grid));
	}
}

/* ROWS rows of ROW floats: gaussian, uniform with outliers, a smooth wave
 * with a wide range, mostly zeros with spikes and tiny values. */
static void fill_floats(float *x)
{
	for (int i = 0; i < ROW; i++) {
		x[i] = (float)gauss();
		x[ROW + i] = (float)((uniform() * 2 - 1) * (i % 61 == 0 ? 1000 : 10));
		x[2 * ROW + i] = (float)(sin(i * 0.05) * exp((i % 128) / 16.0));
		x[3 * ROW + i] = i % 37 == 0 ? (float)(gauss() * 50)
					     : (float)(gauss() * 1e-4 * (i % 3 == 0));
	}
}

static void dequant(const struct ty *t, const void *src, float *y, int64_t n)
{
	if (t->id == GGML_TYPE_Q8_K)
		dequantize_row_q8_K(src, y, n);
	else
		ggml_get_type_traits(t->id)->to_float(src, y, n);
}

static struct ggml_tensor *tensor(struct ggml_context *c, struct gguf_context *g,
				  enum ggml_type type, int64_t ne0, int64_t ne1, const char *name,
				  const char *suffix, const void *data)
{
	struct ggml_tensor *x = ggml_new_tensor_2d(c, type, ne0, ne1);
	char full[64];
	snprintf(full, sizeof(full), "%s.%s", name, suffix);
	ggml_set_name(x, full);
	memcpy(x->data, data, ggml_nbytes(x));
	gguf_add_tensor(g, x);
	return x;
}

static void add_type(struct ggml_context *c, struct gguf_context *g, const struct ty *t)
{
	const int64_t blck = ggml_blck_size(t->id);
	const size_t bytes = ggml_type_size(t->id);
	static float x[ROWS * ROW], y[ROWS * ROW], imat[ROW];
	static uint8_t q[ROWS * ROW * 2];
	fill_floats(x);
	for (int i = 0; i < ROW; i++)
		imat[i] = (float)(0.1 + 2 * uniform());
	if (t->id == GGML_TYPE_Q8_K)
		quantize_row_q8_K_ref(x, (block_q8_K *)q, ROWS * ROW);
	else
		ggml_quantize_chunk(t->id, x, q, 0, ROWS, ROW, t->name[0] == 'i' ? imat : NULL);
	dequant(t, q, y, ROWS * ROW);
	tensor(c, g, t->id, ROW, ROWS, t->name, "quant", q);
	tensor(c, g, GGML_TYPE_F32, ROW, ROWS, t->name, "quant_f32", y);

	int nb = random_blocks(t);
	uint8_t *raw = malloc(nb * bytes);
	float *v = malloc(nb * blck * sizeof(float));
	fill_random(t, raw, nb, bytes);
	dequant(t, raw, v, nb * blck);
	tensor(c, g, t->id, blck, nb, t->name, "random", raw);
	tensor(c, g, GGML_TYPE_F32, blck, nb, t->name, "random_f32", v);
	free(raw);
	free(v);
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: %s OUT.gguf GGML_COMMIT\n", argv[0]);
		return 2;
	}
	struct ggml_init_params ip = {.mem_size = 64 << 20, .mem_buffer = NULL, .no_alloc = false};
	struct ggml_context *c = ggml_init(ip);
	struct gguf_context *g = gguf_init_empty();
	gguf_set_val_str(g, "general.name", "dequant_ref");
	gguf_set_val_str(g, "dequant_ref.ggml_commit", argv[2]);
	gguf_set_val_str(g, "dequant_ref.about",
			 "<type>.quant: ggml's quantizer on 4 rows of 256 floats; <type>.random: "
			 "random blocks (special scales, every grid entry); <type>.*_f32: what "
			 "ggml's dequantize_row_<type> gives for them");
	for (size_t i = 0; i < NTYPES; i++)
		add_type(c, g, &types[i]);
	if (!gguf_write_to_file(g, argv[1], false)) {
		fprintf(stderr, "cannot write %s\n", argv[1]);
		return 1;
	}
	gguf_free(g);
	ggml_free(c);
	ggml_quantize_free();
	return 0;
}
