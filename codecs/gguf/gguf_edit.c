/* Edits of a GGUF file: tensor bytes and same-size scalars are patched in
 * place; a string or array of another length replaces its bytes in the
 * key-value section and the padding before the data section is recomputed,
 * so the data section starts at the next multiple of the alignment and the
 * tensor offsets (relative to it) stay. When the data section does not move,
 * the whole tail from the value to the data section is one span of the same
 * length (patched in place under the journal); else the file is rewritten. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "gguf.h"
#include "json.h"
#include "numtext.h"

/* Replace [off, off + len) of the key-value section by data[0, dlen) and
 * realign the data section. */
static int kv_replace(const struct mfs_model *m, const struct gguf_file *f, struct mfs_patch *p,
		      uint64_t off, uint64_t len, const uint8_t *data, uint64_t dlen,
		      struct mfs_err *err)
{
	if (dlen == len || (f->n_tensors == 0 && m->size < f->data))
		return mfs_patch_put(p, off, len, data, dlen) < 0
			       ? mfs_error(err, ENOMEM, "out of memory") : 0;
	uint64_t a = f->alignment, ti_end = f->ti_end - len + dlen;
	uint64_t data_new = (ti_end + a - 1) / a * a, pad = data_new - ti_end;
	if (data_new == f->data) {
		/* The data section stays: one span of the same length. */
		uint8_t *b = mfs_patch_alloc(p, off, f->data - off, f->data - off);
		if (!b)
			return mfs_error(err, ENOMEM, "out of memory");
		memcpy(b, data, dlen);
		memcpy(b + dlen, m->base + off + len, f->ti_end - off - len);
		memset(b + dlen + (f->ti_end - off - len), 0, pad);
		return 0;
	}
	uint8_t *z = mfs_patch_alloc(p, f->ti_end, f->data - f->ti_end, pad);
	if (!z || mfs_patch_put(p, off, len, data, dlen) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	memset(z, 0, pad);
	return 0;
}

static int edit_scalar(const struct mfs_model *m, const struct gguf_kv *kv, const char *s,
		       size_t n, struct mfs_patch *p, struct mfs_err *err)
{
	uint8_t v[8];
	unsigned size = mfs_gguf_vt_size(kv->type);
	if (kv->type == GGUF_BOOL) {
		if ((n == 4 && memcmp(s, "true", 4) == 0) || (n == 1 && s[0] == '1'))
			v[0] = 1;
		else if ((n == 5 && memcmp(s, "false", 5) == 0) || (n == 1 && s[0] == '0'))
			v[0] = 0;
		else {
			char q[MFS_QUOTE_MAX];
			return mfs_error(err, EINVAL, "%s is not a bool (write true or false)",
					 mfs_quote(q, s, n));
		}
	} else {
		enum mfs_dtype dt = (enum mfs_dtype)mfs_gguf_vt_dtype(kv->type);
		int r = mfs_parse_elem(dt, s, n, v);
		if (r < 0)
			return mfs_value_error(err, r, dt, s, n, "value 1, line 1");
	}
	(void)m;
	return mfs_patch_put(p, kv->val, size, v, size) < 0 ? mfs_error(err, ENOMEM, "out of memory")
							   : 0;
}

static int edit_string(const struct mfs_model *m, const struct gguf_file *f,
		       const struct gguf_kv *kv, const char *s, size_t n, struct mfs_patch *p,
		       struct mfs_err *err)
{
	uint8_t *b = mfs_patch_keep(p, 8 + n);
	if (!b)
		return mfs_error(err, ENOMEM, "out of memory");
	mfs_put_le64(b, n);
	memcpy(b + 8, s, n);
	return kv_replace(m, f, p, kv->val, kv->end - kv->val, b, 8 + n, err);
}

/* One JSON string literal per line (an empty text is an empty array). */
static int parse_lines(const char *s, size_t n, struct mfs_buf *out, uint64_t *count,
		       struct mfs_err *err)
{
	uint64_t line = 0;
	size_t pos = 0;
	*count = 0;
	while (pos < n) {
		const char *nl = memchr(s + pos, '\n', n - pos);
		size_t len = nl ? (size_t)(nl - (s + pos)) : n - pos;
		line++;
		struct mfs_json j;
		int r = mfs_json_parse_bytes(&j, s + pos, len);
		if (r < 0 || j.v[0].type != MFS_JSON_STR) {
			char q[MFS_QUOTE_MAX];
			mfs_error(err, EINVAL, "line %llu: %s is not a JSON string literal%s%s",
				  (unsigned long long)line, mfs_quote(q, s + pos, len),
				  r < 0 ? ": " : "", r < 0 ? j.err : "");
			mfs_json_free(&j);
			return -EINVAL;
		}
		uint8_t len8[8];
		mfs_put_le64(len8, mfs_json_textlen(&j, 0));
		r = mfs_buf_add(out, len8, 8);
		if (r == 0)
			r = mfs_buf_add(out, mfs_json_text(&j, 0), mfs_json_textlen(&j, 0));
		mfs_json_free(&j);
		if (r < 0)
			return mfs_error(err, ENOMEM, "out of memory");
		(*count)++;
		pos += len + 1;
	}
	return 0;
}

/* The bytes [*val, *end) of the array value a node or tensor tagged tag
 * shows: a key's value, or an array inside an array of arrays. */
static void array_span(const struct mfs_model *m, const struct gguf_file *f, uint64_t tag,
		       uint64_t *val, uint64_t *end)
{
	uint64_t i = GGUF_TAG_INDEX(tag);
	if (GGUF_TAG_KIND(tag) == GGUF_TAG_NESTED) {
		*val = i;
		*end = i + mfs_gguf_value_len(m->base, i, GGUF_ARR);
	} else {
		*val = f->kv[i].val;
		*end = f->kv[i].end;
	}
}

static int edit_strings(const struct mfs_model *m, const struct gguf_file *f, uint64_t tag,
			const char *s, size_t n, struct mfs_patch *p, struct mfs_err *err)
{
	struct mfs_buf b = {0};
	uint64_t count;
	uint8_t head[12] = {0};
	int r = mfs_buf_add(&b, head, 12);
	if (r < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	r = parse_lines(s, n, &b, &count, err);
	if (r == 0) {
		mfs_put_le32(b.p, GGUF_STR);
		mfs_put_le64(b.p + 4, count);
		uint8_t *kept = mfs_patch_keep(p, b.len);
		if (!kept)
			r = mfs_error(err, ENOMEM, "out of memory");
		else {
			memcpy(kept, b.p, b.len);
			uint64_t val, end;
			array_span(m, f, tag, &val, &end);
			r = kv_replace(m, f, p, val, end - val, kept, b.len, err);
		}
	}
	mfs_buf_free(&b);
	return r;
}

static int edit_text(struct mfs_model *m, const struct gguf_file *f, const struct mfs_edit *e,
		     struct mfs_patch *p, struct mfs_err *err)
{
	uint64_t tag = m->nodes[e->node].tag;
	uint64_t i = GGUF_TAG_INDEX(tag);
	if (GGUF_TAG_KIND(tag) == GGUF_TAG_QDATA) {
		const struct gguf_tinfo *ti = &f->ti[i];
		if (e->len != ti->nbytes)
			return mfs_error(err, EINVAL,
					 "expected %llu bytes of blocks, got %zu (the size cannot change)",
					 (unsigned long long)ti->nbytes, e->len);
		uint64_t off = f->data + ti->rel, a = 0, b = e->len;
		const uint8_t *old = m->base + off, *nw = (const uint8_t *)e->text;
		while (a < b && old[a] == nw[a])
			a++;
		while (b > a && old[b - 1] == nw[b - 1])
			b--;
		if (a == b)
			return 0;
		return mfs_patch_ref(p, off + a, b - a, nw + a, b - a) < 0
			       ? mfs_error(err, ENOMEM, "out of memory") : 0;
	}
	if (GGUF_TAG_KIND(tag) == GGUF_TAG_NESTED)
		return edit_strings(m, f, tag, e->text, e->len, p, err);
	if (GGUF_TAG_KIND(tag) != GGUF_TAG_KV)
		return mfs_error(err, EACCES, "read-only");
	const struct gguf_kv *kv = &f->kv[i];
	if (kv->type == GGUF_STR)
		return edit_string(m, f, kv, e->text, e->len, p, err);
	if (kv->type == GGUF_ARR)
		return edit_strings(m, f, tag, e->text, e->len, p, err);
	return edit_scalar(m, kv, e->text, e->len, p, err);
}

/* A metadata array of numbers given a new length: its element type, count
 * and elements (the runs cover every element). */
static int resize_array(struct mfs_model *m, const struct gguf_file *f,
			const struct mfs_tensor *t, const struct mfs_edit *e, struct mfs_patch *p,
			struct mfs_err *err)
{
	if (e->ndim != 1 || e->dtype != t->dtype)
		return mfs_error(err, EINVAL, "a metadata array stays 1-D and of its type");
	uint64_t n = e->dims[0], bytes = n * t->esize;
	uint8_t *b = mfs_patch_keep(p, 12 + bytes);
	if (!b)
		return mfs_error(err, ENOMEM, "out of memory");
	uint64_t val, end;
	array_span(m, f, t->tag, &val, &end);
	memcpy(b, m->base + val, 4);
	mfs_put_le64(b + 4, n);
	uint64_t at = 12;
	for (size_t r = 0; r < e->nruns; r++) {
		uint64_t rb = e->runs[r].count * t->esize;
		if (at + rb > 12 + bytes)
			return mfs_error(err, EINVAL, "internal error: runs beyond the new shape");
		memcpy(b + at, e->runs[r].bytes, rb);
		at += rb;
	}
	return kv_replace(m, f, p, val, end - val, b, 12 + bytes, err);
}

int mfs_gguf_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		  struct mfs_err *err)
{
	const struct gguf_file *f = m->priv;
	if (e->kind == MFS_E_TEXT)
		return edit_text(m, f, e, p, err);
	if (e->kind != MFS_E_TENSOR)
		return mfs_error(err, EINVAL, "internal error: unexpected edit");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (t->ops)
		return mfs_error(err, EACCES, "the values of %s blocks are read-only (write `data`)",
				 t->tname);
	if (!e->reshape)
		return mfs_patch_raw_runs(p, t, e, err);
	if (GGUF_TAG_KIND(t->tag) != GGUF_TAG_KV && GGUF_TAG_KIND(t->tag) != GGUF_TAG_NESTED)
		return mfs_error(err, EINVAL, "a tensor's shape cannot change");
	return resize_array(m, f, t, e, p, err);
}
