/* Writing views: parse and check what a user wrote (text, .npy, data bytes),
 * diff it against the old values and hand the codec an edit (edit.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "codec.h"
#include "guard.h"
#include "numtext.h"
#include "npy_head.h"
#include "view_impl.h"

static int write_string(struct mfs_model *m, const struct mfs_tensor *t,
			const struct mfs_content *c, struct mfs_patch *p, struct mfs_err *err)
{
	char *text;
	int r = mfs_content_load(c, &text, err);
	if (r < 0)
		return r;
	/* A string: its bytes, one trailing newline dropped. */
	size_t len = (size_t)c->size;
	if (len && text[len - 1] == '\n')
		len--;
	if (len == t->nelem) {
		r = mfs_submit_logical(m, t, (uint8_t *)text, p, err);
	} else if (!(t->flags & MFS_TF_RESHAPE)) {
		r = mfs_error(err, EINVAL, "expected %llu bytes, got %zu (this string cannot change length)",
			      (unsigned long long)t->nelem, len);
	} else {
		uint64_t dims[1] = {len};
		uint8_t *kept = mfs_patch_keep(p, len);
		if (!kept) {
			r = mfs_error(err, ENOMEM, "out of memory");
		} else {
			memcpy(kept, text, len);
			r = mfs_submit_reshape(m, t, MFS_DT_CHAR8, 1, dims, kept, len, p, err);
		}
	}
	free(text);
	return r;
}

static int write_values(struct mfs_model *m, const struct mfs_tensor *t,
			const struct mfs_content *c, struct mfs_patch *p, struct mfs_err *err)
{
	if (t->dtype == MFS_DT_CHAR8)
		return write_string(m, t, c, p, err);
	/* Every value is parsed before the diff: they are held whole. */
	uint64_t bytes = t->nelem * t->esize;
	int r = mfs_patch_hold(p, bytes, "the parsed values", err);
	if (r < 0)
		return r;
	uint8_t *vals, *owned;
	r = mfs_values_parse(m->rt, t, c, &vals, &owned, err);
	if (r == 0)
		r = mfs_submit_logical(m, t, vals, p, err);
	free(owned);
	mfs_patch_release(p, bytes);
	return r;
}

static int write_data(struct mfs_model *m, const struct mfs_tensor *t,
		      const struct mfs_content *c, struct mfs_patch *p, struct mfs_err *err)
{
	unsigned es = t->esize;
	uint64_t size = t->nelem * es;
	if (c->size != size)
		return mfs_error(err, EINVAL,
				 "data must stay %llu bytes (%llu %s values), got %llu (%s)",
				 (unsigned long long)size, (unsigned long long)t->nelem,
				 mfs_dtype_info((enum mfs_dtype)t->dtype)->name, (unsigned long long)c->size,
				 (t->flags & MFS_TF_RESHAPE) ? "write data.npy to change the shape"
							     : "its size cannot change");
	if (es == 0 || size == 0)
		return 1;
	return mfs_submit_extents(m, t, c, p, err);
}

/* A written .npy whose dtype no tensor holds (strings, structured, object,
 * big-endian): refused, naming it. */
static int npy_unsupported(const char *head, size_t hl, const struct mfs_npy_head *in,
			   struct mfs_err *err)
{
	char q[MFS_QUOTE_MAX];
	if (!in->descr_len || in->descr_off + (uint64_t)in->descr_len > hl)
		return mfs_error(err, EINVAL, ".npy dtype is not supported (expected a little-endian number type: bool, int, uint, float or complex)");
	return mfs_error(err, EINVAL,
			 ".npy dtype %s is not supported (expected a little-endian number type: bool, int, uint, float or complex)",
			 mfs_quote(q, head + in->descr_off, in->descr_len));
}

/* The n float32 values at in (storage order) as t's small float type, kept
 * by p: nearest, ties to even; -ERANGE naming the first value beyond the
 * type's range. */
static int narrow_npy(const struct mfs_tensor *t, const uint8_t *in, uint64_t n,
		      struct mfs_patch *p, const uint8_t **out, struct mfs_err *err)
{
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)t->dtype);
	uint8_t *o = mfs_patch_keep(p, n * di->size + 1);
	if (!o)
		return mfs_error(err, ENOMEM, "out of memory");
	enum { BLOCK = 2048 };
	uint32_t v[BLOCK];
	for (uint64_t e = 0; e < n; e += BLOCK) {
		size_t k = n - e < BLOCK ? (size_t)(n - e) : BLOCK, bad;
		memcpy(v, in + e * 4, k * 4);
		if (mfs_mini_narrow((enum mfs_mini)di->mini, v, o + e * di->size, k, &bad) < 0) {
			float f;
			memcpy(&f, &v[bad], sizeof(f));
			return mfs_error(err, ERANGE, "element %llu of data.npy, %.9g, is beyond %s's range (%s)",
					 (unsigned long long)(e + bad), (double)f, di->name, di->range);
		}
	}
	*out = o;
	return 0;
}

/* A written .npy: its header, and what it holds for tensor t. */
struct npy_in {
	struct mfs_npy_head h;
	enum mfs_dtype dt;  /* as t's dtype: CHAR8 for a string's uint8, t's own for the
			       float32 of a small float */
	bool narrow;        /* float32 to narrow back to t's small float */
	bool same_shape;
	unsigned es;        /* bytes per element as written */
	uint64_t n, bytes;  /* elements and bytes of the array */
};

/* Read and parse the header (refusing dtypes no tensor holds). */
static int npy_parse_head(const struct mfs_content *c, struct npy_in *in, struct mfs_err *err)
{
	char head[65536 + 16];
	size_t hl = c->size < sizeof(head) ? (size_t)c->size : sizeof(head);
	if (c->read(c->ctx, 0, hl, head) < 0)
		return mfs_error(err, EIO, "cannot read the written content");
	int r = mfs_npy_parse((const uint8_t *)head, hl, &in->h, err);
	if (r == -ENOTSUP && in->h.structured && in->h.dtype)
		r = 0;  /* complex32's descr, as data.npy writes it */
	if (r == -ENOTSUP || (r == 0 && in->h.bigendian))
		return npy_unsupported(head, hl, &in->h, err);
	return r;
}

/* The array's dtype as t's, and whether t may take it. */
static int npy_check_dtype(const struct mfs_tensor *t, struct npy_in *in, struct mfs_err *err)
{
	in->dt = (enum mfs_dtype)in->h.dtype;
	if (t->dtype == MFS_DT_CHAR8 && in->dt == MFS_DT_U8)
		in->dt = MFS_DT_CHAR8;
	/* The small floats' data.npy is float32: narrowed back before the diff. */
	in->narrow = in->dt == MFS_DT_F32 && mfs_npy_widened(t);
	if (in->narrow)
		in->dt = (enum mfs_dtype)t->dtype;
	if (in->dt == t->dtype)
		return 0;
	const struct mfs_dtype_info *od = mfs_dtype_info((enum mfs_dtype)t->dtype);
	const struct mfs_dtype_info *nd = mfs_dtype_info(in->h.dtype);
	if (!(t->flags & MFS_TF_RETYPE))
		return mfs_error(err, EINVAL,
				 "the array has dtype %s (%s), expected %s (%s): the dtype cannot change",
				 nd->npy, nd->name, od->npy ? od->npy : od->mini ? "<f4" : "?",
				 t->dtype == MFS_DT_CHAR8 ? "uint8, the string's bytes" : od->name);
	if (!nd->numeric || t->dtype == MFS_DT_CHAR8)
		return mfs_error(err, EINVAL,
				 "the array has dtype %s (%s), expected a numeric dtype (was %s)",
				 nd->npy, nd->name, od->name);
	return 0;
}

/* The array's shape against t's, and its size against the content's. */
static int npy_check_shape(const struct mfs_tensor *t, const struct mfs_content *c,
			   struct npy_in *in, struct mfs_err *err)
{
	const struct mfs_npy_head *h = &in->h;
	const char *name = mfs_dtype_info(h->dtype)->name;
	char sh[MFS_SHAPE_TEXT], osh[MFS_SHAPE_TEXT];
	in->same_shape = h->ndim == t->ndim;
	for (uint32_t i = 0; in->same_shape && i < h->ndim; i++)
		in->same_shape = h->dims[i] == t->dims[i];
	if (!in->same_shape && !(t->flags & MFS_TF_RESHAPE))
		return mfs_error(err, EINVAL, "the array has shape %s, expected %s (%s)",
				 mfs_shape_text(sh, h->ndim, h->dims), mfs_shape_text(osh, t->ndim, t->dims),
				 (t->flags & MFS_TF_SPARSE) ? "the sparsity pattern fixes the shape"
							    : "this format cannot change the shape");
	in->es = in->narrow ? 4 : mfs_dtype_info(in->dt)->size;
	in->n = 1;
	bool fits = true;
	for (uint32_t i = 0; fits && i < h->ndim; i++)
		fits = mfs_mul_ok(in->n, h->dims[i], &in->n);
	if (!fits || !mfs_mul_ok(in->n, in->es, &in->bytes))
		return mfs_error(err, EINVAL, "the .npy header says shape %s of %s: more than 2^64 bytes",
				 mfs_shape_text(sh, h->ndim, h->dims), name);
	if (c->size < h->data_off || c->size - h->data_off != in->bytes)
		return mfs_error(err, EINVAL,
				 "%s: the .npy header says %llu bytes of data (shape %s, %s) at byte %llu, the file has %llu",
				 c->size < h->data_off || c->size - h->data_off < in->bytes ? "truncated"
											     : "extra bytes",
				 (unsigned long long)in->bytes, mfs_shape_text(sh, h->ndim, h->dims), name,
				 (unsigned long long)h->data_off, (unsigned long long)c->size);
	return 0;
}

/* The array in place in the written content when it is one piece
 * (numpy.save writes sequentially): the patch points into it, which lives
 * until the commit is done. Else one copy, kept by the patch. */
static int npy_body(const struct mfs_content *c, const struct npy_in *in, struct mfs_patch *p,
		    const uint8_t **body, struct mfs_err *err)
{
	uint64_t at = in->h.data_off, bytes = in->bytes;
	*body = bytes && c->peek ? c->peek(c->ctx, at, (size_t)bytes) : NULL;
	if (*body)
		return 0;
	uint8_t *own = mfs_patch_keep(p, bytes + 1);
	if (!own)
		return mfs_error(err, ENOMEM, "out of memory");
	if (bytes && c->read(c->ctx, at, (size_t)bytes, own) < 0)
		return mfs_error(err, EIO, "cannot read the written content");
	*body = own;
	return 0;
}

/* The array in t's storage order (reordered, narrowed), diffed or given
 * as a new shape. */
static int npy_submit(struct mfs_model *m, const struct mfs_tensor *t, const struct npy_in *in,
		      const uint8_t *body, struct mfs_patch *p, struct mfs_err *err)
{
	bool want_col = t->order == MFS_COL_MAJOR;
	bool reordered = in->h.ndim > 1 && in->h.fortran != want_col;
	bool same = in->same_shape && in->dt == t->dtype;
	if (reordered && same && !in->narrow && mfs_gatherable(t))
		return mfs_submit_reordered(m, t, body, true, p, err);
	const uint8_t *st = body;
	if (reordered) {
		uint8_t *re = mfs_patch_keep(p, in->bytes + 1);
		if (!re)
			return mfs_error(err, ENOMEM, "out of memory");
		mfs_reorder(in->h.dims, in->h.ndim, in->es, body, re, want_col);
		st = re;
	}
	int r;
	if (in->narrow && (r = narrow_npy(t, st, in->n, p, &st, err)) < 0)
		return r;
	if (!same)
		return mfs_submit_reshape(m, t, in->dt, in->h.ndim, in->h.dims, st, in->n, p, err);
	/* Sparse tensors are row-major: compared densely. */
	return t->flags & MFS_TF_SPARSE ? mfs_submit_dense(m, t, st, p, err)
					: mfs_submit_values(m, t, st, true, p, err);
}

static int write_npy(struct mfs_model *m, const struct mfs_tensor *t,
		     const struct mfs_content *c, struct mfs_patch *p, struct mfs_err *err)
{
	struct npy_in in;
	const uint8_t *body;
	int r = npy_parse_head(c, &in, err);
	if (r == 0)
		r = npy_check_dtype(t, &in, err);
	if (r == 0)
		r = npy_check_shape(t, c, &in, err);
	if (r == 0)
		r = npy_body(c, &in, p, &body, err);
	return r < 0 ? r : npy_submit(m, t, &in, body, p, err);
}

static int write_text(struct mfs_model *m, mfs_id id, const struct mfs_content *c,
		      struct mfs_patch *p, struct mfs_err *err)
{
	const struct mfs_node *n = &m->nodes[id];
	char *text;
	int r = mfs_content_load(c, &text, err);
	if (r < 0)
		return r;
	size_t len = (size_t)c->size;
	if (n->view == MFS_V_TEXT) {
		bool exact = n->flags & MFS_NF_EXACT;
		if (!exact && len && text[len - 1] == '\n')
			len--;
		/* A text ends in one newline, unless it is empty (no lines) or
		 * exact bytes. */
		uint64_t had = n->u.text.len && !exact ? n->u.text.len - 1 : n->u.text.len;
		if (len == had && memcmp(text, n->u.text.s, len) == 0) {
			free(text);
			return 1;
		}
	} else if (len == n->u.raw.len && memcmp(text, m->base + n->u.raw.off, len) == 0) {
		free(text);
		return 1;
	}
	char *kept = mfs_patch_keep(p, len + 1);
	if (!kept) {
		free(text);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	memcpy(kept, text, len);
	kept[len] = '\0';
	free(text);
	struct mfs_edit e = {.kind = MFS_E_TEXT, .node = id, .text = kept, .len = len};
	return mfs_submit_edit(m, &e, p, err);
}

struct write_call {
	struct mfs_model *m;
	mfs_id id;
	const struct mfs_content *c;
	struct mfs_patch *p;
	struct mfs_err *err;
};

static int write_fn(void *arg)
{
	struct write_call *w = arg;
	struct mfs_model *m = w->m;
	const struct mfs_node *n = &m->nodes[w->id];
	const struct mfs_tensor *t = mfs_node_tensor(m, w->id);
	switch (n->view) {
	case MFS_V_TEXT:
	case MFS_V_RAW:
		return write_text(m, w->id, w->c, w->p, w->err);
	case MFS_V_VALUES:
		return write_values(m, t, w->c, w->p, w->err);
	case MFS_V_DATA:
		return write_data(m, t, w->c, w->p, w->err);
	case MFS_V_NPY:
		return write_npy(m, t, w->c, w->p, w->err);
	case MFS_V_MTX:
		return mfs_mtx_write(m, w->id, w->c, w->p, w->err);
	default:
		return mfs_error(w->err, EACCES, "%s is read-only", n->name);
	}
}

int mfs_view_write(struct mfs_model *m, mfs_id id, const struct mfs_content *c,
		   struct mfs_patch *p, struct mfs_err *err)
{
	if (id >= m->nnodes || m->nodes[id].kind != MFS_K_FILE)
		return mfs_error(err, EISDIR, "not a file");
	if (!(m->nodes[id].flags & MFS_NF_WRITABLE))
		return mfs_error(err, EACCES, "%s is read-only", m->nodes[id].name);
	struct write_call w = {m, id, c, p, err};
	return mfs_patch_refusal(p, mfs_guarded(write_fn, &w, err), err);
}

struct check_call {
	struct mfs_model *m;
	mfs_id id;
	const char *text;
	size_t len;
	struct mfs_check *st;
	struct mfs_err *err;
};

static int check_fn(void *arg)
{
	struct check_call *c = arg;
	const struct mfs_node *n = &c->m->nodes[c->id];
	const struct mfs_tensor *t = mfs_node_tensor(c->m, c->id);
	if (n->view == MFS_V_VALUES && t && t->dtype != MFS_DT_CHAR8 &&
	    !(t->flags & MFS_TF_SPARSE))
		return mfs_values_check(c->m->rt, t, c->text, c->len, c->st, c->err);
	if (n->view != MFS_V_TEXT || (n->flags & MFS_NF_EXACT) || c->st->off || c->len == 0 ||
	    c->text[c->len - 1] != '\n' ||
	    memchr(c->text, '\n', c->len - 1) ||
	    (n->u.text.len && memchr(n->u.text.s, '\n', n->u.text.len - 1)))
		return 0;
	/* One complete line into a one-line file: check it as the commit will. */
	struct mfs_patch p;
	mfs_patch_init(&p);
	char *kept = malloc(c->len);
	if (!kept)
		return 0;
	memcpy(kept, c->text, c->len - 1);
	struct mfs_edit e = {.kind = MFS_E_TEXT, .node = c->id, .text = kept, .len = c->len - 1};
	int r = c->len == n->u.text.len && memcmp(kept, n->u.text.s, c->len - 1) == 0
			? 0
			: mfs_submit_edit(c->m, &e, &p, c->err);
	mfs_patch_free(&p);
	free(kept);
	return r < 0 ? r : 0;
}

int mfs_view_check_prefix(struct mfs_model *m, mfs_id id, const char *text, size_t len,
			  struct mfs_check *st, struct mfs_err *err)
{
	if (id >= m->nnodes || m->nodes[id].kind != MFS_K_FILE)
		return 0;
	struct check_call c = {m, id, text, len, st, err};
	return mfs_guarded(check_fn, &c, err);
}
