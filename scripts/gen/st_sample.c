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
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "buf.h"
#include "bytes.h"
#include "json.h"
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

static int add(struct mfs_buf *b, const char *s)
{
	return mfs_buf_add(b, s, strlen(s));
}

static int add_u64(struct mfs_buf *b, uint64_t v)
{
	char num[24];
	snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	return add(b, num);
}

/* The JSON text in b (keys in any order) with every object's keys sorted,
 * compact, into out. 0 or -1. */
static int sorted(const struct mfs_buf *b, struct mfs_buf *out)
{
	struct mfs_json in = {0};
	int r = mfs_json_parse(&in, b->p, b->len) < 0 || mfs_json_dump_sorted(&in, 0, out) < 0 ? -1 : 0;
	mfs_json_free(&in);
	return r;
}

static int cannot(const char *path, const char *why)
{
	fprintf(stderr, "modelfs-gen: cannot write %s: %s\n", path, why);
	return 1;
}

/* One shard: tensors t[0..n) (their data in this order), metadata
 * {"format":"pt"}. */
static int write_shard(const char *dir, const char *file, const struct st_tensor *t, size_t n,
		       uint64_t *data_len)
{
	struct mfs_buf b = {0}, h = {0};
	uint64_t off = 0;
	int bad = add(&b, "{\"__metadata__\":{\"format\":\"pt\"}");
	for (size_t k = 0; k < n; k++) {
		bad |= add(&b, ",") | mfs_json_put_string(&b, t[k].name, strlen(t[k].name)) |
		       add(&b, ":{\"dtype\":") | mfs_json_put_string(&b, t[k].dtype, strlen(t[k].dtype)) |
		       add(&b, ",\"shape\":[");
		for (unsigned d = 0; d < t[k].ndim; d++)
			bad |= add(&b, d ? "," : "") | add_u64(&b, t[k].dims[d]);
		bad |= add(&b, "],\"data_offsets\":[") | add_u64(&b, off) | add(&b, ",") |
		       add_u64(&b, off + t[k].len) | add(&b, "]}");
		off += t[k].len;
	}
	bad |= add(&b, "}");
	bad |= bad ? -1 : sorted(&b, &h);
	while (!bad && h.len % 8)
		bad |= add(&h, " ");
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	FILE *f = bad ? NULL : fopen(path, "wb");
	int r = 0;
	if (!f) {
		r = cannot(path, bad ? "out of memory" : strerror(errno));
	} else {
		uint8_t len8[8];
		mfs_put_le64(len8, h.len);
		fwrite(len8, 1, 8, f);
		fwrite(h.p, 1, h.len, f);
		for (size_t k = 0; k < n; k++)
			fwrite(t[k].data, 1, t[k].len, f);
		if (fclose(f) != 0)
			r = cannot(path, strerror(errno));
	}
	mfs_buf_free(&b);
	mfs_buf_free(&h);
	*data_len += off;
	return r;
}

/* A weight_map entry: a tensor and its shard. */
struct entry {
	const char *name, *shard;
};

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct entry *)a)->name, ((const struct entry *)b)->name);
}

/* The index: total_size and weight_map (sorted by tensor name), indented
 * by two spaces. */
static int write_index(const char *dir, uint64_t total, const struct st_tensor *t1, size_t n1,
		       const struct st_tensor *t2, size_t n2)
{
	struct mfs_buf out = {0};
	struct entry *e = calloc(n1 + n2, sizeof(*e));
	int bad = e ? 0 : -1;
	for (size_t k = 0; e && k < n1 + n2; k++)
		e[k] = k < n1 ? (struct entry){t1[k].name, SHARD1} : (struct entry){t2[k - n1].name, SHARD2};
	if (e)
		qsort(e, n1 + n2, sizeof(*e), cmp_entry);
	bad |= add(&out, "{\n  \"metadata\": {\n    \"total_size\": ") | add_u64(&out, total) |
	       add(&out, "\n  },\n  \"weight_map\": {\n");
	for (size_t k = 0; !bad && k < n1 + n2; k++)
		bad |= add(&out, "    ") | mfs_json_put_string(&out, e[k].name, strlen(e[k].name)) |
		       add(&out, ": \"") | add(&out, e[k].shard) |
		       add(&out, k + 1 < n1 + n2 ? "\",\n" : "\"\n");
	bad |= add(&out, "  }\n}\n");
	free(e);
	char path[4096];
	snprintf(path, sizeof(path), "%s/model.safetensors.index.json", dir);
	FILE *f = bad ? NULL : fopen(path, "w");
	int r = 0;
	if (!f)
		r = cannot(path, bad ? "out of memory" : strerror(errno));
	else if ((fwrite(out.p, 1, out.len, f) != out.len) | (fclose(f) != 0))
		r = cannot(path, strerror(errno));
	mfs_buf_free(&out);
	return r;
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
