/* matrix.mtx: a sparse tensor's stored entries as MatrixMarket coordinate
 * text (1-based), and writing it back with the same sparsity pattern. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "numtext.h"
#include "view_impl.h"

static const char *field(const struct mfs_tensor *t)
{
	switch (mfs_dtype_info((enum mfs_dtype)t->dtype)->kind) {
	case MFS_DK_FLOAT:
		return "real";
	case MFS_DK_COMPLEX:
		return "complex";
	default:
		return "integer";
	}
}

size_t mfs_mtx_head(const struct mfs_tensor *t, char *h, size_t size)
{
	uint64_t rows = t->ndim > 0 ? t->dims[0] : 1, cols = t->ndim > 1 ? t->dims[1] : 1;
	int n = snprintf(h, size, "%%%%MatrixMarket matrix coordinate %s general\n%llu %llu %llu\n",
			 field(t), (unsigned long long)rows, (unsigned long long)cols,
			 (unsigned long long)t->nnz);
	return n < 0 ? 0 : (size_t)n;
}

/* A complex value in MatrixMarket is "re im". */
static size_t fmt_value(const struct mfs_tensor *t, const uint8_t *v, char *o)
{
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)t->dtype);
	if (di->kind != MFS_DK_COMPLEX)
		return mfs_fmt_elem(o, (enum mfs_dtype)t->dtype, v);
	const struct mfs_dtype_info *pi = mfs_dtype_info((enum mfs_dtype)di->part);
	size_t n = pi->fmt(o, v);
	o[n++] = ' ';
	return n + pi->fmt(o + n, v + pi->size);
}

int mfs_mtx_render(struct mfs_model *m, const void *tensor, uint64_t k,
		   struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err)
{
	(void)scratch;
	const struct mfs_tensor *t = tensor;
	uint64_t first = k * MFS_CHUNK_ELEMS;
	uint64_t count = t->nnz - first < MFS_CHUNK_ELEMS ? t->nnz - first : MFS_CHUNK_ELEMS;
	uint64_t *rows = malloc((size_t)count * sizeof(uint64_t) + 1);
	uint64_t *cols = malloc((size_t)count * sizeof(uint64_t) + 1);
	uint8_t *vals = malloc((size_t)(count * t->esize) + 1);
	int r = -ENOMEM;
	if (!rows || !cols || !vals || mfs_buf_reserve(out, (size_t)count * (2 * MFS_NUM_MAX + 44)) < 0) {
		mfs_error(err, ENOMEM, "out of memory");
		goto out;
	}
	r = t->ops->entries(m, t, first, count, rows, cols, vals, err);
	if (r < 0)
		goto out;
	char *o = out->p + out->len;
	for (uint64_t i = 0; i < count; i++) {
		o += mfs_fmt_u64(o, rows[i] + 1);
		*o++ = ' ';
		o += mfs_fmt_u64(o, cols[i] + 1);
		*o++ = ' ';
		o += fmt_value(t, vals + i * t->esize, o);
		*o++ = '\n';
	}
	out->len = (size_t)(o - out->p);
out:
	free(rows);
	free(cols);
	free(vals);
	return r;
}

struct pos {
	uint64_t r, c, i;
};

static int cmp_pos(const void *a, const void *b)
{
	const struct pos *x = a, *y = b;
	if (x->r != y->r)
		return x->r < y->r ? -1 : 1;
	if (x->c != y->c)
		return x->c < y->c ? -1 : 1;
	return 0;
}

static bool next_line(const char **p, const char *end, const char **ls, const char **le)
{
	if (*p >= end)
		return false;
	*ls = *p;
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	*le = nl ? nl : end;
	*p = nl ? nl + 1 : end;
	return true;
}

static int parse_value(const struct mfs_tensor *t, struct mfs_tokens *tk, uint8_t *v,
		       uint64_t line, struct mfs_err *err)
{
	const char *tok;
	size_t n;
	bool cplx = t->dtype == MFS_DT_C64 || t->dtype == MFS_DT_C128;
	for (int part = 0; part < (cplx ? 2 : 1); part++) {
		if (!mfs_next_token(tk, &tok, &n))
			return mfs_error(err, EINVAL, "line %llu: expected \"row column value\", found no %s",
					 (unsigned long long)line, part ? "imaginary part" : "value");
		int r;
		if (t->dtype == MFS_DT_C64) {
			float f;
			r = mfs_parse_f32(tok, n, &f);
			memcpy(v + 4 * part, &f, 4);
		} else if (t->dtype == MFS_DT_C128) {
			double d;
			r = mfs_parse_f64(tok, n, &d);
			memcpy(v + 8 * part, &d, 8);
		} else {
			r = mfs_parse_elem((enum mfs_dtype)t->dtype, tok, n, v);
		}
		if (r < 0) {
			char where[32];
			snprintf(where, sizeof(where), "line %llu", (unsigned long long)line);
			return mfs_value_error(err, r, (enum mfs_dtype)t->dtype, tok, n, where);
		}
	}
	return 0;
}

/* A matrix.mtx being written, checked line by line against the stored
 * sparsity pattern. */
struct mtx_in {
	const struct mfs_tensor *t;
	uint64_t nnz, R, C;
	struct pos *pat;      /* the stored entries, sorted by (row, column) */
	uint8_t *vals;        /* their new values, in the order the file keeps them */
	uint64_t *seen;       /* the line that gave each entry; 0: none yet */
	uint64_t line, got;   /* the current line (1-based); entries given */
	bool header, sizes;   /* the banner and the size line were read */
	struct mfs_err *err;
};

/* The stored pattern, sorted; vals and seen sized for it. */
static int mtx_pattern(struct mfs_model *m, struct mtx_in *w)
{
	uint64_t nnz = w->nnz;
	uint64_t *rows = malloc((size_t)nnz * sizeof(uint64_t) + 1);
	uint64_t *cols = malloc((size_t)nnz * sizeof(uint64_t) + 1);
	w->pat = malloc((size_t)nnz * sizeof(*w->pat) + 1);
	w->vals = malloc((size_t)nnz * w->t->esize + 1);
	w->seen = calloc((size_t)nnz + 1, sizeof(*w->seen));
	int r = 0;
	if (!rows || !cols || !w->pat || !w->vals || !w->seen)
		r = mfs_error(w->err, ENOMEM, "out of memory");
	else
		r = w->t->ops->entries(m, w->t, 0, nnz, rows, cols, w->vals, w->err);
	if (r == 0) {
		for (uint64_t i = 0; i < nnz; i++)
			w->pat[i] = (struct pos){rows[i], cols[i], i};
		qsort(w->pat, (size_t)nnz, sizeof(*w->pat), cmp_pos);
	}
	free(rows);
	free(cols);
	return r;
}

/* Line 1: the MatrixMarket banner of the coordinate format. */
static int mtx_banner(struct mtx_in *w, const char *ls, const char *le)
{
	char q[MFS_QUOTE_MAX];
	if (le - ls < 14 || strncmp(ls, "%%MatrixMarket", 14) != 0)
		return mfs_error(w->err, EINVAL,
				 "line 1: expected \"%%%%MatrixMarket matrix coordinate ...\", found %s",
				 mfs_quote(q, ls, (size_t)(le - ls)));
	if (!memmem(ls, (size_t)(le - ls), "coordinate", 10))
		return mfs_error(w->err, EINVAL,
				 "line 1: expected the coordinate format (\"%%%%MatrixMarket matrix coordinate ...\"), found %s",
				 mfs_quote(q, ls, (size_t)(le - ls)));
	w->header = true;
	return 0;
}

/* The size line: the shape and entry count, which cannot change. tok is
 * its first token. */
static int mtx_sizes(struct mtx_in *w, struct mfs_tokens *tk, const char *tok, size_t n,
		     const char *ls, const char *le)
{
	char q[MFS_QUOTE_MAX];
	uint64_t a, b, z;
	if (mfs_parse_u64(tok, n, UINT64_MAX, &a) < 0 || !mfs_next_token(tk, &tok, &n) ||
	    mfs_parse_u64(tok, n, UINT64_MAX, &b) < 0 || !mfs_next_token(tk, &tok, &n) ||
	    mfs_parse_u64(tok, n, UINT64_MAX, &z) < 0)
		return mfs_error(w->err, EINVAL, "line %llu: expected \"rows columns entries\" (%llu %llu %llu), found %s",
				 (unsigned long long)w->line, (unsigned long long)w->R,
				 (unsigned long long)w->C, (unsigned long long)w->nnz,
				 mfs_quote(q, ls, (size_t)(le - ls)));
	if (a != w->R || b != w->C || z != w->nnz)
		return mfs_error(w->err, EINVAL,
				 "line %llu: the size line says %llu x %llu with %llu entries, expected %llu x %llu with %llu (the shape and the sparsity pattern cannot change)",
				 (unsigned long long)w->line, (unsigned long long)a,
				 (unsigned long long)b, (unsigned long long)z,
				 (unsigned long long)w->R, (unsigned long long)w->C,
				 (unsigned long long)w->nnz);
	w->sizes = true;
	return 0;
}

/* An entry line: a stored position, given once, and its value. tok is its
 * first token. */
static int mtx_entry(struct mtx_in *w, struct mfs_tokens *tk, const char *tok, size_t n,
		     const char *ls, const char *le)
{
	char q[MFS_QUOTE_MAX];
	uint64_t a, b;
	if (mfs_parse_u64(tok, n, UINT64_MAX, &a) < 0 || !mfs_next_token(tk, &tok, &n) ||
	    mfs_parse_u64(tok, n, UINT64_MAX, &b) < 0 || a == 0 || b == 0)
		return mfs_error(w->err, EINVAL,
				 "line %llu: expected \"row column value\" with row 1 to %llu and column 1 to %llu, found %s",
				 (unsigned long long)w->line, (unsigned long long)w->R,
				 (unsigned long long)w->C, mfs_quote(q, ls, (size_t)(le - ls)));
	struct pos key = {a - 1, b - 1, 0};
	struct pos *hit = bsearch(&key, w->pat, (size_t)w->nnz, sizeof(*w->pat), cmp_pos);
	if (!hit)
		return mfs_error(w->err, EINVAL,
				 "line %llu: (%llu, %llu) is not one of the %llu stored entries (the sparsity pattern cannot change)",
				 (unsigned long long)w->line, (unsigned long long)a,
				 (unsigned long long)b, (unsigned long long)w->nnz);
	if (w->seen[hit->i])
		return mfs_error(w->err, EINVAL, "line %llu: entry (%llu, %llu) is given twice (first on line %llu)",
				 (unsigned long long)w->line, (unsigned long long)a,
				 (unsigned long long)b, (unsigned long long)w->seen[hit->i]);
	w->seen[hit->i] = w->line;
	w->got++;
	return parse_value(w->t, tk, w->vals + hit->i * w->t->esize, w->line, w->err);
}

/* One line [ls, le): the banner, then (comments and blank lines aside) the
 * size line, then entries. */
static int mtx_line(struct mtx_in *w, const char *ls, const char *le)
{
	w->line++;
	if (!w->header)
		return mtx_banner(w, ls, le);
	struct mfs_tokens tk = {ls, (size_t)(le - ls), 0};
	const char *tok;
	size_t n;
	if (*ls == '%' || !mfs_next_token(&tk, &tok, &n))
		return 0;  /* comment or blank line */
	if (!w->sizes)
		return mtx_sizes(w, &tk, tok, n, ls, le);
	return mtx_entry(w, &tk, tok, n, ls, le);
}

/* After the last line: every stored entry was given. */
static int mtx_complete(const struct mtx_in *w)
{
	if (!w->header || !w->sizes)
		return mfs_error(w->err, EINVAL, "expected a %s line, found %s",
				 w->header ? "\"rows columns entries\""
					   : "\"%%%%MatrixMarket matrix coordinate ...\"",
				 "the end of the text");
	if (w->got == w->nnz)
		return 0;
	uint64_t miss = 0;
	while (miss < w->nnz && w->seen[w->pat[miss].i])
		miss++;
	const struct pos *first = &w->pat[miss < w->nnz ? miss : 0];
	return mfs_error(w->err, EINVAL, "expected %llu entries, got %llu (the first missing is (%llu, %llu))",
			 (unsigned long long)w->nnz, (unsigned long long)w->got,
			 (unsigned long long)first->r + 1, (unsigned long long)first->c + 1);
}

int mfs_mtx_write(struct mfs_model *m, mfs_id node, const struct mfs_content *c,
		  struct mfs_patch *p, struct mfs_err *err)
{
	const struct mfs_tensor *t = mfs_node_tensor(m, node);
	struct mtx_in w = {.t = t, .nnz = t->nnz, .R = t->dims[0],
			   .C = t->ndim > 1 ? t->dims[1] : 1, .err = err};
	char *text = NULL;
	int r = mfs_content_load(c, &text, err);
	if (r == 0)
		r = mtx_pattern(m, &w);
	if (r == 0) {
		const char *s = text, *end = text + c->size, *ls, *le;
		while (r == 0 && next_line(&s, end, &ls, &le))
			r = mtx_line(&w, ls, le);
	}
	if (r == 0)
		r = mtx_complete(&w);
	if (r == 0)
		r = mfs_submit_values(m, t, w.vals, false, p, err);
	free(text);
	free(w.pat);
	free(w.vals);
	free(w.seen);
	return r;
}
