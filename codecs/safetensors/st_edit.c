/* safetensors edits as patches: tensor bytes in place; a metadata string or
 * a new shape by rewriting only the header text that changes (key order and
 * spacing kept), in place when it fits the old header length padded with
 * spaces, else with a longer header (the whole file is then rewritten by
 * the commit engine; data offsets are relative to the buffer, so only the
 * length field and the header change). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "safetensors.h"

/* One replaced span of the header text: [at, at + len) becomes the bytes
 * [toff, toff + tlen) of the edit's text buffer. */
struct repl {
	size_t at, len;
	size_t toff, tlen;
};

struct hedit {
	struct mfs_buf text;       /* replacement texts */
	struct repl *r;
	size_t n, cap;
};

static int by_at(const void *a, const void *b)
{
	const struct repl *x = a, *y = b;
	return x->at < y->at ? -1 : x->at > y->at;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The header with the replacements (sorted), trailing blanks dropped. */
static int new_header(const struct mfs_model *m, const struct st_file *f, struct hedit *x,
		      struct mfs_buf *out)
{
	const char *old = (const char *)m->base + 8;
	size_t pos = 0;
	qsort(x->r, x->n, sizeof(*x->r), by_at);
	for (size_t i = 0; i < x->n; i++) {
		if (mfs_buf_add(out, old + pos, x->r[i].at - pos) < 0 ||
		    mfs_buf_add(out, x->text.p + x->r[i].toff, x->r[i].tlen) < 0)
			return -ENOMEM;
		pos = x->r[i].at + x->r[i].len;
	}
	if (mfs_buf_add(out, old + pos, f->hlen - pos) < 0)
		return -ENOMEM;
	while (out->len && is_blank(out->p[out->len - 1]))
		out->len--;
	return 0;
}

/* Patch the header: from the first changed byte to the end of the old
 * header when the new one fits (padded with spaces), else length field and
 * header, the new length rounded up to 8 bytes as the reference writer
 * pads it. */
static int put_header(const struct mfs_model *m, const struct st_file *f, struct hedit *x,
		      struct mfs_patch *p, struct mfs_err *err)
{
	struct mfs_buf b = {0};
	if (new_header(m, f, x, &b) < 0) {
		mfs_buf_free(&b);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	size_t len = b.len, cap = len <= f->hlen ? f->hlen : (len + 7) & ~(size_t)7;
	int r = 0;
	if (cap > ST_HEADER_MAX) {
		r = mfs_error(err, EINVAL, "the new header would be %zu bytes: the format allows "
			      "at most %u", cap, ST_HEADER_MAX);
	} else if (mfs_buf_reserve(&b, cap - len) < 0) {
		r = mfs_error(err, ENOMEM, "out of memory");
	} else {
		memset(b.p + len, ' ', cap - len);
		const uint8_t *old = m->base + 8;
		if (cap == f->hlen) {
			size_t k = 0;
			while (k < cap && old[k] == (uint8_t)b.p[k])
				k++;
			if (k < cap && mfs_patch_put(p, 8 + k, cap - k, b.p + k, cap - k) < 0)
				r = mfs_error(err, ENOMEM, "out of memory");
		} else {
			uint8_t *d = mfs_patch_alloc(p, 0, 8 + f->hlen, 8 + (uint64_t)cap);
			if (!d) {
				r = mfs_error(err, ENOMEM, "out of memory");
			} else {
				mfs_put_le64(d, cap);
				memcpy(d + 8, b.p, cap);
			}
		}
	}
	mfs_buf_free(&b);
	return r;
}

/* Add a replacement of header bytes [at, at + len) by the text that
 * follows (printf-style). */
static int replace(struct hedit *x, size_t at, size_t len, const char *s, size_t n)
{
	if (MFS_ARRAY_RESERVE(x->r, x->n, x->cap, 1, 8) < 0)
		return -ENOMEM;
	x->r[x->n++] = (struct repl){at, len, x->text.len, n};
	return mfs_buf_add(&x->text, s, n);
}

static void hedit_free(struct hedit *x)
{
	mfs_buf_free(&x->text);
	free(x->r);
}

static int edit_meta(struct mfs_model *m, const struct st_file *f, const struct mfs_edit *e,
		     struct mfs_patch *p, struct mfs_err *err)
{
	const struct mfs_node *n = &m->nodes[e->node];
	if (n->view != MFS_V_TEXT || !(n->flags & MFS_NF_WRITABLE) || n->tag >= f->nmeta)
		return mfs_error(err, EINVAL, "this file is read-only");
	for (size_t i = 0; i < e->len;) {
		size_t k = mfs_utf8_char(e->text + i, e->len - i);
		if (!k)
			return mfs_error(err, EINVAL, "metadata must be UTF-8 text: byte %zu is not",
					 i);
		i += k;
	}
	if (e->len + 1 == n->u.text.len && !memcmp(e->text, n->u.text.s, e->len))
		return 0;
	const struct st_meta *me = &f->meta[n->tag];
	struct mfs_buf s = {0};
	struct hedit x = {0};
	int r = mfs_json_put_string(&s, e->text, e->len);
	if (r == 0)
		r = replace(&x, me->at, me->len, s.p, s.len);
	mfs_buf_free(&s);
	if (r < 0) {
		hedit_free(&x);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	r = put_header(m, f, &x, p, err);
	hedit_free(&x);
	return r;
}

/* A JSON array of integers ("[2,3]"). */
static int put_array(struct hedit *x, size_t at, size_t len, const uint64_t *v, uint32_t n)
{
	struct mfs_buf b = {0};
	char num[24];
	int r = mfs_buf_add(&b, "[", 1);
	for (uint32_t i = 0; i < n && r == 0; i++) {
		int k = snprintf(num, sizeof(num), "%s%" PRIu64, i ? "," : "", v[i]);
		r = mfs_buf_add(&b, num, (size_t)k);
	}
	if (r == 0)
		r = mfs_buf_add(&b, "]", 1);
	if (r == 0)
		r = replace(x, at, len, b.p, b.len);
	mfs_buf_free(&b);
	return r;
}

/* The new elements (every one, in runs) into the tensor's new bytes. */
static int put_data(const struct mfs_tensor *t, const struct mfs_edit *e, uint64_t nelem,
		    struct mfs_patch *p, struct mfs_err *err)
{
	uint64_t old = t->nelem * t->esize;
	uint8_t *d = mfs_patch_alloc(p, t->off, old, nelem * t->esize);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	return mfs_reshape_fill(d, e, nelem, t->esize, err);
}

/* A new shape: the tensor's bytes, its "shape", and the "data_offsets" of
 * it and of every tensor after it in the buffer. */
static int reshape(struct mfs_model *m, const struct st_file *f, const struct mfs_tensor *t,
		   const struct mfs_edit *e, struct mfs_patch *p, struct mfs_err *err)
{
	if (e->dtype != t->dtype)
		return mfs_error(err, EINVAL, "a %s tensor cannot become %s here",
				 mfs_dtype_info(t->dtype)->name, mfs_dtype_info(e->dtype)->name);
	uint64_t nelem = 1, bytes;
	for (uint32_t k = 0; k < e->ndim; k++)
		if (!mfs_mul_ok(nelem, e->dims[k], &nelem))
			return mfs_error(err, EINVAL, "the new shape overflows 64 bits");
	if (!mfs_mul_ok(nelem, t->esize, &bytes) || bytes > SIZE_MAX / 2)
		return mfs_error(err, EFBIG, "%" PRIu64 " elements are too many", nelem);
	const struct st_tensor *st = &f->t[t->tag];
	uint64_t old = st->end - st->begin;
	struct hedit x = {0};
	int r = put_array(&x, st->shape_at, st->shape_len, e->dims, e->ndim);
	for (uint32_t k = st->rank; k < f->ntensors && r == 0; k++) {
		const struct st_tensor *o = &f->t[f->order[k]];
		/* Later tensors move by the change of length (unsigned wrap
		 * is the intended modular arithmetic). */
		uint64_t v[2] = {o->begin + bytes - old, o->end + bytes - old};
		if (k == st->rank)
			v[0] = o->begin, v[1] = o->begin + bytes;
		if (k == st->rank || bytes != old)
			r = put_array(&x, o->offs_at, o->offs_len, v, 2);
	}
	if (r < 0) {
		hedit_free(&x);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	r = put_header(m, f, &x, p, err);
	hedit_free(&x);
	return r < 0 ? r : put_data(t, e, nelem, p, err);
}

int mfs_st_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err)
{
	const struct st_file *f = m->priv;
	if (!f)
		return mfs_error(err, EINVAL, "a sharded checkpoint's index is read-only");
	if (e->kind == MFS_E_TEXT)
		return edit_meta(m, f, e, p, err);
	if (e->kind != MFS_E_TENSOR || e->tensor >= m->ntensors)
		return mfs_error(err, EINVAL, "internal error: not a safetensors edit");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (e->reshape)
		return reshape(m, f, t, e, p, err);
	return mfs_patch_raw_runs(p, t, e, err);
}
