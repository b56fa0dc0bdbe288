/* The sample sharded safetensors checkpoint committed in
 * tests/data/safetensors/tiny/ (scripts/demo and README's tour show it):
 * two shards and their index, written per the public format as the
 * reference writer emits them. Each shard: an 8-byte little-endian header
 * length, the header as compact JSON with sorted keys padded with spaces to
 * a multiple of 8, then the tensors' bytes back to back in name order. The
 * index is indented by two spaces, as `json.dumps(..., indent=2)` writes
 * it (transformers' save_pretrained). Deterministic: the same bytes on
 * every run (test_safetensors checks them against the committed ones). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "bytes.h"
#include "numtext.h"
#include "st_sample.h"

#define SHARD1 "model-00001-of-00002.safetensors"
#define SHARD2 "model-00002-of-00002.safetensors"

struct st_tensor {
	const char *name;
	const char *dtype;
	unsigned ndim;
	unsigned dims[2];
	const uint8_t *data;
	size_t len;
};

/* float32 bits rounded to bfloat16, ties to even (finite values). */
static uint16_t to_bf16(float f)
{
	uint32_t b;
	memcpy(&b, &f, 4);
	return (uint16_t)((b + 0x7FFFu + ((b >> 16) & 1u)) >> 16);
}

static int put(char *h, size_t size, size_t *n, const char *s)
{
	size_t l = strlen(s);
	if (*n + l >= size)
		return -1;
	memcpy(h + *n, s, l + 1);
	*n += l;
	return 0;
}

/* One shard: tensors t[0..n) (sorted by name), metadata {"format":"pt"}. */
static int write_shard(const char *dir, const char *file, const struct st_tensor *t, size_t n,
		       uint64_t *data_len)
{
	char h[4096], item[512];
	size_t hl = 0;
	uint64_t off = 0;
	int bad = put(h, sizeof(h), &hl, "{\"__metadata__\":{\"format\":\"pt\"}");
	for (size_t k = 0; k < n; k++) {
		char shape[64] = "";
		for (unsigned d = 0; d < t[k].ndim; d++)
			snprintf(shape + strlen(shape), sizeof(shape) - strlen(shape), "%s%u",
				 d ? "," : "", t[k].dims[d]);
		snprintf(item, sizeof(item),
			 ",\"%s\":{\"data_offsets\":[%llu,%llu],\"dtype\":\"%s\",\"shape\":[%s]}",
			 t[k].name, (unsigned long long)off, (unsigned long long)(off + t[k].len),
			 t[k].dtype, shape);
		bad |= put(h, sizeof(h), &hl, item);
		off += t[k].len;
	}
	bad |= put(h, sizeof(h), &hl, "}");
	while (hl % 8)
		bad |= put(h, sizeof(h), &hl, " ");
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = bad ? NULL : fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "modelfs-gen: cannot write %s: %s\n", path,
			bad ? "header too long" : strerror(errno));
		return 1;
	}
	uint8_t len8[8];
	mfs_put_le64(len8, hl);
	fwrite(len8, 1, 8, f);
	fwrite(h, 1, hl, f);
	for (size_t k = 0; k < n; k++)
		fwrite(t[k].data, 1, t[k].len, f);
	if (fclose(f) != 0) {
		fprintf(stderr, "modelfs-gen: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	*data_len += off;
	return 0;
}

/* The index: total_size and weight_map (sorted by tensor name). */
static int write_index(const char *dir, uint64_t total, const struct st_tensor *t1, size_t n1,
		       const struct st_tensor *t2, size_t n2)
{
	const char *names[16], *shards[16];
	size_t n = 0;
	for (size_t k = 0; k < n1; k++, n++)
		names[n] = t1[k].name, shards[n] = SHARD1;
	for (size_t k = 0; k < n2; k++, n++)
		names[n] = t2[k].name, shards[n] = SHARD2;
	for (size_t a = 1; a < n; a++)  /* insertion sort: six names */
		for (size_t b = a; b > 0 && strcmp(names[b - 1], names[b]) > 0; b--) {
			const char *x = names[b], *y = shards[b];
			names[b] = names[b - 1], shards[b] = shards[b - 1];
			names[b - 1] = x, shards[b - 1] = y;
		}
	char path[4096];
	snprintf(path, sizeof(path), "%s/model.safetensors.index.json", dir);
	FILE *f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "modelfs-gen: cannot write %s: %s\n", path, strerror(errno));
		return 1;
	}
	fprintf(f, "{\n  \"metadata\": {\n    \"total_size\": %llu\n  },\n  \"weight_map\": {\n",
		(unsigned long long)total);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "    \"%s\": \"%s\"%s\n", names[k], shards[k], k + 1 < n ? "," : "");
	fprintf(f, "  }\n}\n");
	return fclose(f) != 0;
}

int gen_st_sample(const char *dir)
{
	if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
		fprintf(stderr, "modelfs-gen: cannot create %s: %s\n", dir, strerror(errno));
		return 1;
	}
	uint8_t emb[12 * 4], q[4 * 2], scale[4], up[6 * 2];
	for (unsigned i = 0; i < 12; i++) {
		float v = (float)i / 4;  /* 0 0.25 ... 2.75 */
		uint32_t b;
		memcpy(&b, &v, 4);
		mfs_put_le32(emb + 4 * i, b);
	}
	static const float qv[4] = {1.0f, -0.5f, 0.1f, 3e38f};
	for (unsigned i = 0; i < 4; i++)
		mfs_put_le16(q + 2 * i, to_bf16(qv[i]));
	mfs_put_le32(scale, 0x3F000000u);  /* 0.5 */
	for (unsigned i = 0; i < 6; i++)  /* numpy.linspace(-1, 1, 6) as float16 */
		mfs_put_le16(up + 2 * i, mfs_f64_to_f16(i == 5 ? 1.0 : -1.0 + i * 0.4));
	static const uint8_t norm[3] = {0x38, 0x7E, 0x01};  /* float8_e4m3fn 1, 448, 2^-9 */
	static const uint8_t head[3] = {0x80, 0x00, 0x7F};  /* int8 -128 0 127 */
	/* A name under another's (q_proj.weight.scale under q_proj.weight), in
	 * the same shard: reached through that tensor's link in the index. */
	const struct st_tensor s1[] = {
		{"model.embed_tokens.weight", "F32", 2, {4, 3}, emb, sizeof(emb)},
		{"model.layers.0.self_attn.q_proj.weight", "BF16", 2, {2, 2}, q, sizeof(q)},
		{"model.layers.0.self_attn.q_proj.weight.scale", "F32", 0, {0, 0}, scale, sizeof(scale)},
	};
	const struct st_tensor s2[] = {
		{"lm_head.weight", "I8", 1, {3, 0}, head, sizeof(head)},
		{"model.layers.0.mlp.up_proj.weight", "F16", 2, {2, 3}, up, sizeof(up)},
		{"model.norm.weight", "F8_E4M3", 1, {3, 0}, norm, sizeof(norm)},
	};
	uint64_t total = 0;
	if (write_shard(dir, SHARD1, s1, 3, &total) || write_shard(dir, SHARD2, s2, 3, &total) ||
	    write_index(dir, total, s1, 3, s2, 3))
		return 1;
	printf("%s: %s, %s and model.safetensors.index.json\n", dir, SHARD1, SHARD2);
	return 0;
}
