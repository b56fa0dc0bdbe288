/* Dequantization of ggml's 4-bit types whose nibbles index a table of 16
 * values (dequant.h): iq4_nl and iq4_xs (ggml's non-linear levels, half
 * scales), mxfp4 (e2m1 values, an e8m0 power-of-two scale per 32) and
 * nvfp4 (e2m1 values, a ue4m3 scale per 16), each value computed with the
 * operations of ggml's reference dequantize_row_* in the same order. */
#include <stdint.h>
#include <string.h>

#include "bytes.h"
#include "dequant.h"

/* ggml's kvalues_iq4nl (ggml-common.h), transcribed. */
static const int8_t iq4nl_values[16] = {
	-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113,
};

/* e2m1 (1 sign, 2 exponent, 1 mantissa bit) values doubled, so that they
 * are integers, as ggml's kvalues_mxfp4 holds them: magnitude m is m for
 * m < 2 (0 and the subnormal 0.5), else (2 + mantissa) << (exponent - 1);
 * bit 3 is the sign. */
#define E2M1_MAG(m) ((m) < 2 ? (m) : ((2 + ((m) & 1)) << ((m) >> 1)) / 2)
#define E2M1(i) (int8_t)((i) & 8 ? -E2M1_MAG((i) & 7) : E2M1_MAG((i) & 7))
static const int8_t fp4_values[16] = {
	E2M1(0), E2M1(1), E2M1(2), E2M1(3), E2M1(4), E2M1(5), E2M1(6), E2M1(7),
	E2M1(8), E2M1(9), E2M1(10), E2M1(11), E2M1(12), E2M1(13), E2M1(14), E2M1(15),
};

static float f32_bits(uint32_t b)
{
	float v;
	memcpy(&v, &b, sizeof(v));
	return v;
}

/* An e8m0 scale halved (ggml's GGML_E8M0_TO_FP32_HALF): 2^(e - 128), the
 * two smallest as subnormals; e = 255 is 2^127, not NaN. */
static float e8m0_half(uint8_t e)
{
	return f32_bits(e < 2 ? 0x00200000u << e : (uint32_t)(e - 1) << 23);
}

/* A ue4m3 scale halved (ggml's ggml_ue4m3_to_fp32): exponent bits 3-6
 * (bias 7), mantissa bits 0-2, bit 7 ignored; 0x7f (and 0) is 0. The
 * value is exact: M * 2^E with M < 16. */
static float ue4m3_half(uint8_t x)
{
	if (x == 0x7f)
		return 0.0f;
	int exp = (x >> 3) & 0xf, man = x & 7;
	int m = exp ? 8 + man : man, e = exp ? exp - 11 : -10;
	return (float)m * f32_bits((uint32_t)(127 + e) << 23);
}

/* n values from n / 2 bytes of nibbles: low nibbles first, then high
 * ones, each d * values[q] (ggml writes level * d for the fp4 types: the
 * same bits, as a product's operands only matter when both are NaN, and a
 * level never is). */
static inline void nibbles_dq(float *y, float d, const uint8_t *qs, int n,
			      const int8_t *values)
{
	for (int j = 0; j < n / 2; j++) {
		y[j] = d * (float)values[qs[j] & 0xf];
		y[j + n / 2] = d * (float)values[qs[j] >> 4];
	}
}

/* iq4_nl: d, 16 bytes of nibbles; x = d * level. */
void mfs_dq_iq4_nl(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 18, out += 32)
		nibbles_dq(out, mfs_dq_half(src), src + 2, 32, iq4nl_values);
}

/* iq4_xs: d, 16-bit high scale bits (2 per 32 elements), 4 bytes of low
 * scale nibbles, 128 bytes of nibbles; x = d * (scale - 32) * level. */
void mfs_dq_iq4_xs(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 136) {
		const float d = mfs_dq_half(src);
		unsigned sh = mfs_le16(src + 2);
		for (int ib = 0; ib < 8; ib++, out += 32) {
			int lo = (src[4 + ib / 2] >> 4 * (ib % 2)) & 0xf;
			int ls = lo | (int)(((sh >> 2 * ib) & 3) << 4);
			nibbles_dq(out, d * (float)(ls - 32), src + 8 + 16 * ib, 32, iq4nl_values);
		}
	}
}

/* mxfp4: an e8m0 exponent, 16 bytes of e2m1 nibbles; x = level * 2^(e-128). */
void mfs_dq_mxfp4(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 17, out += 32)
		nibbles_dq(out, e8m0_half(src[0]), src + 1, 32, fp4_values);
}

/* nvfp4: 4 ue4m3 scales (one per 16 elements), 32 bytes of e2m1 nibbles
 * (8 per 16 elements, low nibbles first). */
void mfs_dq_nvfp4(const uint8_t *src, float *out, uint64_t nb)
{
	for (uint64_t i = 0; i < nb; i++, src += 36)
		for (int s = 0; s < 4; s++, out += 16)
			nibbles_dq(out, ue4m3_half(src[s]), src + 4 + 8 * s, 16, fp4_values);
}
