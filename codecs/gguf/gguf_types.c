/* The ggml tensor types (ggml.h's enum ggml_type, ggml.c's type traits):
 * elements per block and bytes per block of each type id, so that the raw
 * bytes of every type can be shown, and which ones are dequantized. */
#include <stddef.h>

#include "bytes.h"
#include "dtype.h"
#include "gguf.h"

#define PLAIN(n, size, dt) {n, 1, size, dt, NULL}
#define QUANT(n, blck, bytes, fn) {n, blck, bytes, 0, fn}

static const struct ggml_type_info types[] = {
	[0] = PLAIN("float32", 4, MFS_DT_F32),
	[1] = PLAIN("float16", 2, MFS_DT_F16),
	[2] = QUANT("q4_0", 32, 18, mfs_dq_q4_0),
	[3] = QUANT("q4_1", 32, 20, mfs_dq_q4_1),
	/* 4 and 5 (q4_2, q4_3) were removed from ggml */
	[6] = QUANT("q5_0", 32, 22, mfs_dq_q5_0),
	[7] = QUANT("q5_1", 32, 24, mfs_dq_q5_1),
	[8] = QUANT("q8_0", 32, 34, mfs_dq_q8_0),
	[9] = QUANT("q8_1", 32, 36, NULL),  /* ggml has no dequantizer for it */
	[10] = QUANT("q2_k", 256, 84, mfs_dq_q2_k),
	[11] = QUANT("q3_k", 256, 110, mfs_dq_q3_k),
	[12] = QUANT("q4_k", 256, 144, mfs_dq_q4_k),
	[13] = QUANT("q5_k", 256, 176, mfs_dq_q5_k),
	[14] = QUANT("q6_k", 256, 210, mfs_dq_q6_k),
	[15] = QUANT("q8_k", 256, 292, mfs_dq_q8_k),
	[16] = QUANT("iq2_xxs", 256, 66, mfs_dq_iq2_xxs),
	[17] = QUANT("iq2_xs", 256, 74, mfs_dq_iq2_xs),
	[18] = QUANT("iq3_xxs", 256, 98, mfs_dq_iq3_xxs),
	[19] = QUANT("iq1_s", 256, 50, mfs_dq_iq1_s),
	[20] = QUANT("iq4_nl", 32, 18, mfs_dq_iq4_nl),
	[21] = QUANT("iq3_s", 256, 110, mfs_dq_iq3_s),
	[22] = QUANT("iq2_s", 256, 82, mfs_dq_iq2_s),
	[23] = QUANT("iq4_xs", 256, 136, mfs_dq_iq4_xs),
	[24] = PLAIN("int8", 1, MFS_DT_I8),
	[25] = PLAIN("int16", 2, MFS_DT_I16),
	[26] = PLAIN("int32", 4, MFS_DT_I32),
	[27] = PLAIN("int64", 8, MFS_DT_I64),
	[28] = PLAIN("float64", 8, MFS_DT_F64),
	[29] = QUANT("iq1_m", 256, 56, mfs_dq_iq1_m),
	[30] = PLAIN("bfloat16", 2, MFS_DT_BF16),
	/* 31-33 (q4_0_4_4, q4_0_4_8, q4_0_8_8) are no longer in GGUF files */
	[34] = QUANT("tq1_0", 256, 54, mfs_dq_tq1_0),
	[35] = QUANT("tq2_0", 256, 66, mfs_dq_tq2_0),
	/* 36-38 (iq4_nl_4_4, ...) likewise */
	[39] = QUANT("mxfp4", 32, 17, mfs_dq_mxfp4),
	[40] = QUANT("nvfp4", 64, 36, mfs_dq_nvfp4),
	[41] = QUANT("q1_0", 128, 18, mfs_dq_q1_0),
	[42] = QUANT("q2_0", 64, 18, mfs_dq_q2_0),
};

const struct ggml_type_info *mfs_ggml_type(uint32_t id)
{
	if (id >= sizeof(types) / sizeof(types[0]) || !types[id].name)
		return NULL;
	return &types[id];
}

/* The bytes one value of type vt at pos takes (the file was checked by the
 * parser, so this only walks). */
uint64_t mfs_gguf_value_len(const uint8_t *base, uint64_t pos, uint32_t vt)
{
	if (vt == GGUF_STR)
		return 8 + mfs_le64(base + pos);
	if (vt != GGUF_ARR)
		return mfs_gguf_vt_size(vt);
	uint32_t et = mfs_le32(base + pos);
	uint64_t n = mfs_le64(base + pos + 4), at = pos + 12;
	if (et != GGUF_STR && et != GGUF_ARR)
		return 12 + n * mfs_gguf_vt_size(et);
	for (uint64_t i = 0; i < n; i++)
		at += mfs_gguf_value_len(base, at, et);
	return at - pos;
}
