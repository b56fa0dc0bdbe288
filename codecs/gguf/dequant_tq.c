/* Dequantization of ggml's ternary types, super-blocks of 256 elements
 * of -1, 0 or 1 times a half scale (dequant.h): tq1_0 (5 trits a byte,
 * base 3 as a fixed-point fraction) and tq2_0 (2 bits each), with the
 * operations of ggml's reference dequantize_row_* in the same order. */
#include <stdint.h>

#include "dequant.h"

/* The n-th trit of a tq1_0 byte: the byte is a fraction of 256 whose
 * base-3 digits are the trits, most significant first; multiplying by 3^n
 * (mod 256) brings digit n to the top, and * 3 >> 8 reads it. */
static inline float trit(uint8_t b, unsigned pow3, float d)
{
	uint8_t q = (uint8_t)(b * pow3);
	int xi = ((uint16_t)q * 3) >> 8;
	return (float)(xi - 1) * d;
}

/* Trit n of each of len bytes, for n < ntrits, n by n. */
static float *trits(float *y, const uint8_t *q, int len, int ntrits, float d)
{
	static const uint8_t pow3[5] = {1, 3, 9, 27, 81};
	for (int n = 0; n < ntrits; n++)
		for (int m = 0; m < len; m++)
			*y++ = trit(q[m], pow3[n], d);
	return y;
}

/* tq1_0: qs[48] (elements 0-159 from bytes 0-31, 160-239 from 32-47, 5
 * trits each), qh[4] (4 trits each), d. */
void mfs_dq_tq1_0(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 54) {
		const float d = mfs_dq_half(src + 52);
		out = trits(out, src, 32, 5, d);
		out = trits(out, src + 32, 16, 5, d);
		out = trits(out, src + 48, 4, 4, d);
	}
}

/* tq2_0: qs[64] of 2-bit fields, d; each 32 bytes give 128 elements, the
 * fields at shift 0 of the 32 bytes first, then shift 2, 4, 6; x = (q - 1)
 * * d. */
void mfs_dq_tq2_0(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 66) {
		const float d = mfs_dq_half(src + 64);
		for (int j = 0; j < 64; j += 32)
			for (int l = 0; l < 4; l++)
				for (int m = 0; m < 32; m++)
					*out++ = (float)(((src[j + m] >> (2 * l)) & 3) - 1) * d;
	}
}
