/* Dequantization of ggml's blocks with one half-float scale (dequant.h):
 * q1_0 q2_0 q4_0 q4_1 q5_0 q5_1 q8_0, with the operations of ggml's
 * reference dequantize_row_* in the same order. */
#include <stdint.h>

#include "bytes.h"
#include "dequant.h"

#define QK 32     /* elements per block of the q4/q5/q8 formats */

/* q1_0: d, 16 bytes of bits (128 elements, bit j % 8 of byte j / 8);
 * x = d for a set bit, -d for a clear one. */
void mfs_dq_q1_0(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 18, out += 128) {
		const float d = mfs_dq_half(src), neg_d = -d;
		const uint8_t *qs = src + 2;
		for (int j = 0; j < 128; j++)
			out[j] = (qs[j / 8] >> (j % 8)) & 1 ? d : neg_d;
	}
}

/* q2_0: d, 16 bytes of 2-bit fields (64 elements, four a byte, lowest
 * first); x = (q - 1) * d. */
void mfs_dq_q2_0(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 18, out += 64) {
		const float d = mfs_dq_half(src);
		const uint8_t *qs = src + 2;
		for (int j = 0; j < 64; j++)
			out[j] = (float)(((qs[j / 4] >> (2 * (j % 4))) & 3) - 1) * d;
	}
}

/* q4_0: d, 16 bytes of nibbles; x = (q - 8) * d. Low nibbles are the first
 * half of the block, high nibbles the second. */
void mfs_dq_q4_0(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 18, out += QK) {
		const float d = mfs_dq_half(src);
		const uint8_t *qs = src + 2;
		for (int j = 0; j < QK / 2; j++) {
			out[j] = (float)((qs[j] & 0x0F) - 8) * d;
			out[j + QK / 2] = (float)((qs[j] >> 4) - 8) * d;
		}
	}
}

/* q4_1: d, m, nibbles; x = q * d + m. */
void mfs_dq_q4_1(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 20, out += QK) {
		const float d = mfs_dq_half(src), m = mfs_dq_half(src + 2);
		const uint8_t *qs = src + 4;
		for (int j = 0; j < QK / 2; j++) {
			float a = (float)(qs[j] & 0x0F) * d, b = (float)(qs[j] >> 4) * d;
			out[j] = a + m;
			out[j + QK / 2] = b + m;
		}
	}
}

/* The fifth bits of q5 blocks: bit j of qh for element j, bit j + 16 for
 * element j + 16. */
static void q5_values(const uint8_t *qh4, const uint8_t *qs, int *q)
{
	uint32_t qh = mfs_le32(qh4);
	for (int j = 0; j < QK / 2; j++) {
		q[j] = (qs[j] & 0x0F) | (int)(((qh >> j) << 4) & 0x10);
		q[j + QK / 2] = (qs[j] >> 4) | (int)((qh >> (j + 12)) & 0x10);
	}
}

/* q5_0: d, qh (32 bits), nibbles; x = (q - 16) * d. */
void mfs_dq_q5_0(const uint8_t *src, float *out, uint64_t nb)
{
	int q[QK];
	for (uint64_t i = 0; i < nb; i++, src += 22, out += QK) {
		const float d = mfs_dq_half(src);
		q5_values(src + 2, src + 6, q);
		for (int j = 0; j < QK; j++)
			out[j] = (float)(q[j] - 16) * d;
	}
}

/* q5_1: d, m, qh, nibbles; x = q * d + m. */
void mfs_dq_q5_1(const uint8_t *src, float *out, uint64_t nb)
{
	int q[QK];
	for (uint64_t i = 0; i < nb; i++, src += 24, out += QK) {
		const float d = mfs_dq_half(src), m = mfs_dq_half(src + 2);
		q5_values(src + 4, src + 8, q);
		for (int j = 0; j < QK; j++) {
			float a = (float)q[j] * d;
			out[j] = a + m;
		}
	}
}

/* q8_0: d, 32 signed bytes; x = q * d. */
void mfs_dq_q8_0(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 34, out += QK) {
		const float d = mfs_dq_half(src);
		for (int j = 0; j < QK; j++)
			out[j] = (float)(int8_t)src[2 + j] * d;
	}
}

