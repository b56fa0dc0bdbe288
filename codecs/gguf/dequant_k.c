/* Dequantization of ggml's k-quants, super-blocks of 256 elements
 * (dequant.h): q2_k q3_k q4_k q5_k q6_k and q8_k, with the operations of
 * ggml's reference dequantize_row_* in the same order. */
#include <stdint.h>
#include <string.h>

#include "bytes.h"
#include "dequant.h"

#define QK_K 256  /* elements per super-block */

/* q2_k: scales[16] (low nibble scale, high nibble min), qs[64], d, dmin.
 * Each 128 values take 32 bytes of qs, 2 bits per value at shifts 0, 2, 4,
 * 6; each group of 16 values has its own scale byte. */
void mfs_dq_q2_k(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 84) {
		const uint8_t *scales = src, *q = src + 16;
		const float d = mfs_dq_half(src + 80), min = mfs_dq_half(src + 82);
		int is = 0;
		for (int n = 0; n < QK_K; n += 128, q += 32) {
			for (int shift = 0; shift < 8; shift += 2) {
				for (int half16 = 0; half16 < 32; half16 += 16) {
					uint8_t sc = scales[is++];
					const float dl = d * (float)(sc & 0xF);
					const float ml = min * (float)(sc >> 4);
					for (int l = 0; l < 16; l++) {
						float a = dl * (float)((q[l + half16] >> shift) & 3);
						*out++ = a - ml;
					}
				}
			}
		}
	}
}

/* The 16 six-bit scales of a q3_k block, unpacked from 12 bytes: the low 4
 * bits of scale k are nibble k of bytes 0-7, the high 2 bits come from
 * bytes 8-11; each is then offset by -32. */
static void q3_scales(const uint8_t *s, int *sc)
{
	for (int k = 0; k < 16; k++) {
		int lo = k < 8 ? s[k] & 0xF : s[k - 8] >> 4;
		int hi = (s[8 + (k & 3)] >> (2 * (k >> 2))) & 3;
		sc[k] = (lo | (hi << 4)) - 32;
	}
}

/* q3_k: hmask[32], qs[64], scales[12], d. x = d * scale * (q - 4 * !hbit). */
void mfs_dq_q3_k(const uint8_t *src, float *out, uint64_t nb)
{
	int sc[16];
	for (uint64_t i = 0; i < nb; i++, src += 110) {
		const uint8_t *hm = src, *q = src + 32;
		const float d_all = mfs_dq_half(src + 108);
		q3_scales(src + 96, sc);
		int is = 0;
		uint8_t m = 1;
		for (int n = 0; n < QK_K; n += 128, q += 32) {
			for (int shift = 0; shift < 8; shift += 2, m = (uint8_t)(m << 1)) {
				for (int h = 0; h < 32; h += 16) {
					const float dl = d_all * (float)sc[is++];
					for (int l = 0; l < 16; l++) {
						int v = ((q[l + h] >> shift) & 3) - ((hm[l + h] & m) ? 0 : 4);
						*out++ = dl * (float)v;
					}
				}
			}
		}
	}
}

/* Scale and min j (0-7) of a q4_k/q5_k block from its 12 scale bytes. */
static void scale_min_k4(int j, const uint8_t *q, uint8_t *d, uint8_t *m)
{
	if (j < 4) {
		*d = q[j] & 63;
		*m = q[j + 4] & 63;
	} else {
		*d = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
		*m = (uint8_t)((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
	}
}

/* q4_k and q5_k: d, dmin, scales[12], (q5: qh[32]), qs[128]; each 64 values
 * use 32 bytes of qs (low nibbles, then high nibbles) with two (scale, min)
 * pairs; x = d * sc * q - dmin * m. qh (NULL for q4_k) adds 16 per bit. */
static void dq_k4(const uint8_t *blk, const uint8_t *qh, const uint8_t *ql, float *out)
{
	const float d = mfs_dq_half(blk), min = mfs_dq_half(blk + 2);
	const uint8_t *scales = blk + 4;
	uint8_t sc, m, u1 = 1, u2 = 2;
	for (int j = 0, is = 0; j < QK_K; j += 64, is += 2, ql += 32) {
		scale_min_k4(is, scales, &sc, &m);
		const float d1 = d * (float)sc, m1 = min * (float)m;
		scale_min_k4(is + 1, scales, &sc, &m);
		const float d2 = d * (float)sc, m2 = min * (float)m;
		for (int l = 0; l < 32; l++) {
			int v = (ql[l] & 0xF) + (qh && (qh[l] & u1) ? 16 : 0);
			float a = d1 * (float)v;
			*out++ = a - m1;
		}
		for (int l = 0; l < 32; l++) {
			int v = (ql[l] >> 4) + (qh && (qh[l] & u2) ? 16 : 0);
			float a = d2 * (float)v;
			*out++ = a - m2;
		}
		u1 = (uint8_t)(u1 << 2);
		u2 = (uint8_t)(u2 << 2);
	}
}

void mfs_dq_q4_k(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 144, out += QK_K)
		dq_k4(src, NULL, src + 16, out);
}

void mfs_dq_q5_k(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 176, out += QK_K)
		dq_k4(src, src + 16, src + 48, out);
}

/* q6_k: ql[128], qh[64], scales[16] (int8), d. Each 128 values use 64 bytes
 * of ql, 32 of qh and 8 scales; x = d * scale * (q - 32), computed as
 * (d * scale) * q like ggml. */
void mfs_dq_q6_k(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 210) {
		const uint8_t *ql = src, *qh = src + 128;
		const int8_t *sc = (const int8_t *)(src + 192);
		const float d = mfs_dq_half(src + 208);
		for (int n = 0; n < QK_K; n += 128, out += 128, ql += 64, qh += 32, sc += 8) {
			for (int l = 0; l < 32; l++) {
				int is = l / 16;
				int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
				int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
				int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
				int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
				out[l] = d * (float)sc[is] * (float)q1;
				out[l + 32] = d * (float)sc[is + 2] * (float)q2;
				out[l + 64] = d * (float)sc[is + 4] * (float)q3;
				out[l + 96] = d * (float)sc[is + 6] * (float)q4;
			}
		}
	}
}

/* q8_k: d (a float32), 256 signed bytes, 16 int16 sums (not needed here);
 * x = d * q. */
void mfs_dq_q8_k(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 292, out += QK_K) {
		float d;
		memcpy(&d, src, sizeof(d));
		for (int j = 0; j < QK_K; j++)
			out[j] = d * (float)(int8_t)src[4 + j];
	}
}
