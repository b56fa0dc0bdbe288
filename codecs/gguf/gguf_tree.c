/* The tree of a GGUF file (docs/layout.md "GGUF"): version, alignment,
 * metadata/<key> (scalars as text, strings as their bytes, arrays as 1-D
 * tensors, JSON string lines or directories of elements), tensors/ by
 * dotted name with GGUF's dims reversed, and index. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "dotted.h"
#include "gguf.h"
#include "json.h"
#include "numtext.h"

/* A scalar value at p as its text ("true"/"false" for bool); returns the
 * length (out holds 64 bytes). */
size_t mfs_gguf_scalar_text(uint32_t vt, const uint8_t *p, char *out)
{
	if (vt == GGUF_BOOL) {
		const char *s = *p ? "true" : "false";
		memcpy(out, s, strlen(s));
		return strlen(s);
	}
	return mfs_fmt_elem(out, (enum mfs_dtype)mfs_gguf_vt_dtype(vt), p);
}

/* Strings of an array as one JSON string literal per line (the last line's
 * newline is added by mfs_add_text): no lines, an empty file, for an empty
 * array (a lone newline would be a line that is no literal). */
static mfs_id add_strings(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
			  uint64_t pos, uint64_t n, unsigned flags, bool *oom)
{
	struct mfs_buf b = {0};
	int r = 0;
	for (uint64_t i = 0; i < n && r == 0; i++) {
		uint64_t sl = mfs_le64(m->base + pos);
		r = mfs_json_put_string(&b, (const char *)m->base + pos + 8, (size_t)sl);
		if (r == 0 && i + 1 < n)
			r = mfs_buf_add(&b, "\n", 1);
		pos += 8 + sl;
	}
	mfs_id id = MFS_NONE;
	if (r < 0)
		*oom = true;
	else
		id = mfs_add_text(m, parent, name, len, b.p ? b.p : "", b.len, flags);
	if (id != MFS_NONE && n == 0)
		m->nodes[id].u.text.len = 0;
	mfs_buf_free(&b);
	return id;
}

/* An array value at pos (its element type field), writable when flags
 * say so; the arrays inside an array of arrays are tagged with their own
 * position (GGUF_TAG_NESTED), which their edits replace. */
static mfs_id add_array(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
			uint64_t pos, unsigned flags, bool *oom)
{
	uint32_t et = mfs_le32(m->base + pos);
	uint64_t n = mfs_le64(m->base + pos + 4), at = pos + 12;
	if (et == GGUF_STR)
		return add_strings(m, parent, name, len, at, n, flags ? MFS_NF_WRITABLE : 0, oom);
	if (et != GGUF_ARR) {
		struct mfs_tensor t = {
			.dtype = mfs_gguf_vt_dtype(et),
			.ndim = 1,
			.dims = &n,
			.off = at,
			.flags = flags ? MFS_TF_WRITABLE | MFS_TF_RESHAPE : 0,
		};
		return mfs_add_tensor(m, parent, name, len, &t);
	}
	mfs_id dir = mfs_add_dir(m, parent, name, len);
	for (uint64_t i = 0; i < n && dir != MFS_NONE; i++) {
		char num[24];
		int nl = snprintf(num, sizeof(num), "%llu", (unsigned long long)i);
		mfs_id c = add_array(m, dir, num, (size_t)nl, at, flags, oom);
		mfs_set_tag(m, c, GGUF_TAG(GGUF_TAG_NESTED, at));
		if (c != MFS_NONE && m->nodes[c].kind == MFS_K_DIR && mfs_node_tensor(m, c))
			m->tensors[m->nodes[c].u.tensor].tag = GGUF_TAG(GGUF_TAG_NESTED, at);
		at += mfs_gguf_value_len(m->base, at, GGUF_ARR);
	}
	return dir;
}

static void add_metadata(struct mfs_model *m, const struct gguf_file *f, mfs_id dir, bool *oom)
{
	for (uint64_t i = 0; i < f->n_kv; i++) {
		const struct gguf_kv *kv = &f->kv[i];
		const char *key = (const char *)m->base + kv->key;
		size_t kl = (size_t)kv->key_len;
		bool ro = kl == 17 && memcmp(key, "general.alignment", 17) == 0;
		unsigned wr = ro ? 0 : MFS_NF_WRITABLE;
		mfs_id id;
		if (kv->type == GGUF_STR) {
			id = mfs_add_text(m, dir, key, kl, (const char *)m->base + kv->val + 8,
					  (size_t)mfs_le64(m->base + kv->val), wr);
		} else if (kv->type == GGUF_ARR) {
			id = add_array(m, dir, key, kl, kv->val, wr, oom);
		} else {
			char buf[64];
			size_t n = mfs_gguf_scalar_text(kv->type, m->base + kv->val, buf);
			id = mfs_add_text(m, dir, key, kl, buf, n, wr);
		}
		mfs_set_tag(m, id, GGUF_TAG(GGUF_TAG_KV, i));
		if (id != MFS_NONE && m->nodes[id].kind == MFS_K_DIR && mfs_node_tensor(m, id))
			m->tensors[m->nodes[id].u.tensor].tag = GGUF_TAG(GGUF_TAG_KV, i);
	}
}

static int dq_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		   uint64_t count, void *out, struct mfs_err *err);
static int opaque_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		       uint64_t count, void *out, struct mfs_err *err);

static const struct mfs_tensor_ops dq_ops = {.read = dq_read};
static const struct mfs_tensor_ops opaque_ops = {.read = opaque_read};

/* Elements [first, first + count) of a quantized tensor, dequantized up to
 * 4096 values at a time into an aligned buffer (out may have any alignment)
 * and copied out from the first element asked for. */
static int dq_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		   uint64_t count, void *out, struct mfs_err *err)
{
	(void)err;
	const struct gguf_file *f = m->priv;
	const struct gguf_tinfo *ti = &f->ti[t->tag];
	const struct ggml_type_info *ty = mfs_ggml_type(ti->type);
	const uint8_t *src = m->base + f->data + ti->rel;
	float tmp[4096];
	uint8_t *o = out;
	uint64_t end = first + count, per = sizeof(tmp) / sizeof(tmp[0]) / ty->blck;
	while (first < end) {
		uint64_t b = first / ty->blck, skip = first - b * ty->blck;
		uint64_t nb = (end - first + skip + ty->blck - 1) / ty->blck;
		if (nb > per)
			nb = per;
		ty->dequant(src + b * ty->bytes, tmp, nb);
		uint64_t n = nb * ty->blck - skip;
		if (n > end - first)
			n = end - first;
		memcpy(o, tmp + skip, (size_t)n * sizeof(float));
		o += n * sizeof(float);
		first += n;
	}
	return 0;
}

static int opaque_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		       uint64_t count, void *out, struct mfs_err *err)
{
	(void)m, (void)first, (void)count, (void)out;
	return mfs_error(err, ENOTSUP, "%s blocks cannot be shown as numbers", t->tname);
}

static void add_tensor(struct mfs_model *m, const struct gguf_file *f, struct mfs_dotted *d,
		       uint64_t i)
{
	const struct gguf_tinfo *ti = &f->ti[i];
	const struct ggml_type_info *ty = mfs_ggml_type(ti->type);
	uint64_t dims[GGUF_MAX_DIMS];
	for (uint32_t k = 0; k < ti->ndim; k++)
		dims[k] = ti->ne[ti->ndim - 1 - k];
	uint64_t off = f->data + ti->rel;
	struct mfs_tensor t = {.ndim = ti->ndim, .dims = dims, .off = off, .tag = i};
	if (ty->dtype) {
		t.dtype = ty->dtype;
		t.flags = MFS_TF_WRITABLE;
	} else {
		/* Quantized: `data` is a raw node of the blocks (added below);
		 * values.txt and data.npy show float32 values, read-only. */
		t.dtype = ty->dequant ? MFS_DT_F32 : MFS_DT_OPAQUE;
		t.esize = 1;
		t.tname = ty->name;
		t.flags = MFS_TF_NODATA | MFS_TF_TNAME;
		t.ops = ty->dequant ? &dq_ops : &opaque_ops;
	}
	const char *name = (const char *)m->base + ti->name;
	mfs_id dir = mfs_dotted_add(d, name, (size_t)ti->name_len, &t, off, ti->nbytes);
	if (!ty->dtype && dir != MFS_NONE) {
		mfs_id raw = mfs_add_raw(m, dir, "data", 4, off, ti->nbytes, MFS_NF_WRITABLE);
		mfs_set_tag(m, raw, GGUF_TAG(GGUF_TAG_QDATA, i));
	}
}

int mfs_gguf_tree(struct mfs_model *m, const struct gguf_file *f, struct mfs_err *err)
{
	mfs_add_textf(m, MFS_ROOT, "version", 0, "%u", f->version);
	mfs_add_textf(m, MFS_ROOT, "alignment", 0, "%u", f->alignment);
	bool oom = false;
	add_metadata(m, f, mfs_add_dir(m, MFS_ROOT, "metadata", 8), &oom);
	if (oom)
		return mfs_error(err, ENOMEM, "out of memory");
	struct mfs_dotted *d = mfs_dotted_new(m, mfs_add_dir(m, MFS_ROOT, "tensors", 7), ".");
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint64_t i = 0; i < f->n_tensors; i++)
		add_tensor(m, f, d, i);
	mfs_dotted_finish(d, MFS_ROOT);
	return 0;
}
