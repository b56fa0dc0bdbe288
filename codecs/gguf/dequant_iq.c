/* Dequantization of ggml's lattice i-quants, super-blocks of 256 elements
 * (dequant.h): iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s iq1_s iq1_m. Groups of 8
 * (or 4) elements are an index into a grid of small levels
 * (dequant_grids.h), times a group scale, with signs or a shift; each value
 * is computed with the operations of ggml's reference dequantize_row_* in
 * the same order. */
#include <stdint.h>

#include "bytes.h"
#include "dequant.h"
#include "dequant_grids.h"

#define QK_K 256

/* The 8 signs of a group from 7 stored bits (ggml's ksigns_iq2xs): bit j
 * for element j < 7, and element 7's chosen so that the number of minus
 * signs is even. */
static inline unsigned signs7(unsigned s)
{
	return s | (unsigned)__builtin_parity(s) << 7;
}

/* y[j] = dl * grid[j], negated where bit j of signs is set. ggml writes
 * dl * grid[j] * (bit ? -1.f : 1.f), which gcc compiles to a negation of
 * the product (a NaN's sign flips too, as the reference values show);
 * written as the negation, the bits do not depend on how this file is
 * optimized. */
static inline void signed_run(float *y, float dl, const uint8_t *grid, unsigned signs, int n)
{
	for (int j = 0; j < n; j++) {
		float v = dl * (float)grid[j];
		y[j] = (signs >> j) & 1 ? -v : v;
	}
}

/* iq2_xxs: d, then per 32 elements 8 bytes: 4 grid indices (one a group
 * of 8) and 32 bits of 4 x 7 sign bits and a 4-bit scale. */
void mfs_dq_iq2_xxs(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 66) {
		const float d = mfs_dq_half(src);
		for (int ib = 0; ib < QK_K / 32; ib++) {
			const uint8_t *q = src + 2 + 8 * ib;
			uint32_t aux = mfs_le32(q + 4);
			const float db = d * (0.5f + (float)(aux >> 28)) * 0.25f;
			for (int l = 0; l < 4; l++, out += 8) {
				unsigned s = signs7((aux >> 7 * l) & 127);
				signed_run(out, db, iq2xxs_grid[q[l]], s, 8);
			}
		}
	}
}

/* The two group scales of 32 elements of iq2_xs and iq2_s, from the two
 * nibbles of sc. */
static inline void iq2_scales(float d, uint8_t sc, float db[2])
{
	db[0] = d * (0.5f + (float)(sc & 0xf)) * 0.25f;
	db[1] = d * (0.5f + (float)(sc >> 4)) * 0.25f;
}

/* iq2_xs: d, 32 16-bit words (9-bit grid index, 7 sign bits), 8 bytes of
 * two 4-bit scales (one per 16 elements). */
void mfs_dq_iq2_xs(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 74) {
		const float d = mfs_dq_half(src);
		const uint8_t *scales = src + 66;
		for (int ib = 0; ib < QK_K / 32; ib++) {
			float db[2];
			iq2_scales(d, scales[ib], db);
			for (int l = 0; l < 4; l++, out += 8) {
				uint16_t q = mfs_le16(src + 2 + 2 * (4 * ib + l));
				signed_run(out, db[l / 2], iq2xs_grid[q & 511], signs7(q >> 9), 8);
			}
		}
	}
}

/* iq2_s: d, 32 bytes of grid index low bits, 32 sign bytes, 8 bytes of
 * index high bits (2 per group), 8 bytes of two 4-bit scales. */
void mfs_dq_iq2_s(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 82) {
		const float d = mfs_dq_half(src);
		const uint8_t *qs = src + 2, *signs = src + 34, *qh = src + 66, *scales = src + 74;
		for (int ib = 0; ib < QK_K / 32; ib++, qs += 4, signs += 4) {
			float db[2];
			iq2_scales(d, scales[ib], db);
			for (int l = 0; l < 4; l++, out += 8) {
				unsigned idx = qs[l] | ((unsigned)(qh[ib] << (8 - 2 * l)) & 0x300);
				signed_run(out, db[l / 2], iq2s_grid[idx], signs[l], 8);
			}
		}
	}
}

/* iq3_xxs: d, 64 bytes of grid indices (one per 4 elements), then per 32
 * elements 32 bits of 4 x 7 sign bits and a 4-bit scale. */
void mfs_dq_iq3_xxs(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 98) {
		const float d = mfs_dq_half(src);
		const uint8_t *qs = src + 2;
		for (int ib = 0; ib < QK_K / 32; ib++, qs += 8) {
			uint32_t aux = mfs_le32(src + 66 + 4 * ib);
			const float db = d * (0.5f + (float)(aux >> 28)) * 0.5f;
			for (int l = 0; l < 4; l++, out += 8) {
				unsigned s = signs7((aux >> 7 * l) & 127);
				signed_run(out, db, iq3xxs_grid[qs[2 * l]], s, 4);
				signed_run(out + 4, db, iq3xxs_grid[qs[2 * l + 1]], s >> 4, 4);
			}
		}
	}
}

/* 32 elements of iq3_s: 8 grid indices (low 8 bits in qs, the ninth in
 * the bits of qh), 4 sign bytes, one scale. */
static void iq3_s_32(float *y, float db, const uint8_t *qs, unsigned qh, const uint8_t *signs)
{
	for (int l = 0; l < 4; l++, y += 8) {
		unsigned i1 = qs[2 * l] | ((qh << (8 - 2 * l)) & 256);
		unsigned i2 = qs[2 * l + 1] | ((qh << (7 - 2 * l)) & 256);
		signed_run(y, db, iq3s_grid[i1], signs[l], 4);
		signed_run(y + 4, db, iq3s_grid[i2], (unsigned)signs[l] >> 4, 4);
	}
}

/* iq3_s: d, 64 bytes of grid index low bits, 8 bytes of ninth bits, 32
 * sign bytes, 4 bytes of two 4-bit scales (one per 32 elements); the scale
 * is d * (1 + 2 * s). */
void mfs_dq_iq3_s(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 110) {
		const float d = mfs_dq_half(src);
		const uint8_t *qs = src + 2, *qh = src + 66, *signs = src + 74, *scales = src + 106;
		for (int k = 0; k < 4; k++, out += 64) {
			const float db1 = d * (float)(1 + 2 * (scales[k] & 0xf));
			const float db2 = d * (float)(1 + 2 * (scales[k] >> 4));
			iq3_s_32(out, db1, qs + 16 * k, qh[2 * k], signs + 8 * k);
			iq3_s_32(out + 32, db2, qs + 16 * k + 8, qh[2 * k + 1], signs + 8 * k + 4);
		}
	}
}

#define IQ1_DELTA 0.125f

/* y[j] = dl * (grid[j] + delta), j < 8. */
static inline void shifted_run(float *y, float dl, const int8_t *grid, float delta)
{
	for (int j = 0; j < 8; j++)
		y[j] = dl * ((float)grid[j] + delta);
}

/* iq1_s: d, 32 bytes of grid index low bits, then per 32 elements a 16-bit
 * word: 4 x 3 index high bits, a 3-bit scale, the sign of the shift. */
void mfs_dq_iq1_s(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 50) {
		const float d = mfs_dq_half(src);
		const uint8_t *qs = src + 2;
		for (int ib = 0; ib < QK_K / 32; ib++, qs += 4) {
			unsigned qh = mfs_le16(src + 34 + 2 * ib);
			const float dl = d * (float)(2 * ((qh >> 12) & 7) + 1);
			const float delta = qh & 0x8000 ? -IQ1_DELTA : IQ1_DELTA;
			for (int l = 0; l < 4; l++, out += 8) {
				unsigned idx = qs[l] | (((qh >> 3 * l) & 7) << 8);
				shifted_run(out, dl, iq1s_grid[idx], delta);
			}
		}
	}
}

/* iq1_m: 32 bytes of grid index low bits, 16 bytes of (3 index high bits,
 * shift sign) nibbles, 8 bytes of 3-bit scales (two per 32 elements) whose
 * four top nibbles are the half-float super-block scale. */
void mfs_dq_iq1_m(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 56) {
		unsigned sc[4];
		for (int k = 0; k < 4; k++)
			sc[k] = mfs_le16(src + 48 + 2 * k);
		uint16_t h = (uint16_t)((sc[0] >> 12) | ((sc[1] >> 8) & 0x00f0) |
					((sc[2] >> 4) & 0x0f00) | (sc[3] & 0xf000));
		const float d = mfs_dq_h(h);
		const uint8_t *qs = src, *qh = src + 32;
		for (int ib = 0; ib < QK_K / 32; ib++, qs += 4, qh += 2) {
			unsigned s = sc[ib / 2] >> (6 * (ib % 2));
			const float dl1 = d * (float)(2 * (s & 7) + 1);
			const float dl2 = d * (float)(2 * ((s >> 3) & 7) + 1);
			for (int l = 0; l < 4; l++, out += 8) {
				unsigned hb = qh[l / 2] >> (4 * (l % 2));
				unsigned idx = qs[l] | ((hb & 7) << 8);
				float delta = hb & 8 ? -IQ1_DELTA : IQ1_DELTA;
				shifted_run(out, l < 2 ? dl1 : dl2, iq1s_grid[idx], delta);
			}
		}
	}
}
