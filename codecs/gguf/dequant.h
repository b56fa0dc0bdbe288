/* ggml's quantized block formats dequantized to float32: one function per
 * type, nb blocks at src (any alignment) to nb times the block's elements
 * at out. Each computes every value with the operations of ggml's
 * reference dequantize_row_* (ggml-quants.c), in the same order and
 * precision, so the results are the same bits; blocks are read from their
 * byte layout (ggml-common.h), never through structs. By family:
 * dequant.c (one half scale a block: q1_0 q2_0 q4_0 q4_1 q5_0 q5_1 q8_0),
 * dequant_k.c (super-blocks of 256: q2_k..q6_k, q8_k), dequant_iq.c (the
 * lattice grids: iq1_s iq1_m iq2_xxs iq2_xs iq2_s iq3_xxs iq3_s),
 * dequant_nl.c (16-value tables: iq4_nl iq4_xs mxfp4 nvfp4), dequant_tq.c
 * (ternary: tq1_0 tq2_0). */
#ifndef MFS_DEQUANT_H
#define MFS_DEQUANT_H

#include <stdint.h>
#include <string.h>

#include "bytes.h"
#include "numtext.h"

/* A half-float scale as ggml's GGML_FP16_TO_FP32 gives it: exact, and a
 * NaN quieted (ggml converts by a float multiply, which quiets it). */
static inline float mfs_dq_h(uint16_t h)
{
	float v = mfs_f16_to_f32(h);
	if (v != v) {
		uint32_t b;
		memcpy(&b, &v, sizeof(b));
		b |= 0x00400000u;
		memcpy(&v, &b, sizeof(v));
	}
	return v;
}

/* The half-float scale stored at p. */
static inline float mfs_dq_half(const uint8_t *p)
{
	return mfs_dq_h(mfs_le16(p));
}

void mfs_dq_q1_0(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q2_0(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q4_0(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q4_1(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q5_0(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q5_1(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q8_0(const uint8_t *src, float *out, uint64_t nb);

void mfs_dq_q2_k(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q3_k(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q4_k(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q5_k(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q6_k(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_q8_k(const uint8_t *src, float *out, uint64_t nb);

void mfs_dq_iq1_s(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq1_m(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq2_xxs(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq2_xs(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq2_s(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq3_xxs(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq3_s(const uint8_t *src, float *out, uint64_t nb);

void mfs_dq_iq4_nl(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_iq4_xs(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_mxfp4(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_nvfp4(const uint8_t *src, float *out, uint64_t nb);

void mfs_dq_tq1_0(const uint8_t *src, float *out, uint64_t nb);
void mfs_dq_tq2_0(const uint8_t *src, float *out, uint64_t nb);

#endif
