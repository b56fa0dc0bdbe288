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
		   struct mfs_buf *out, struct mfs_err *err)
{
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

int mfs_mtx_write(struct mfs_model *m, mfs_id node, const struct mfs_content *c,
		  struct mfs_patch *p, struct mfs_err *err)
{
	const struct mfs_tensor *t = mfs_node_tensor(m, node);
	char *text = NULL;
	struct pos *pat = NULL;
	uint64_t *rows = NULL, *cols = NULL;
	uint8_t *vals = NULL;
	uint64_t *seen = NULL;
	char q[MFS_QUOTE_MAX];
	int r = mfs_content_load(c, &text, err);
	if (r < 0)
		return r;
	uint64_t nnz = t->nnz, R = t->dims[0], C = t->ndim > 1 ? t->dims[1] : 1;
	size_t es = t->esize;
	pat = malloc((size_t)nnz * sizeof(*pat) + 1);
	rows = malloc((size_t)nnz * sizeof(uint64_t) + 1);
	cols = malloc((size_t)nnz * sizeof(uint64_t) + 1);
	vals = malloc((size_t)nnz * es + 1);
	seen = calloc((size_t)nnz + 1, sizeof(*seen));
	if (!pat || !rows || !cols || !vals || !seen) {
		r = mfs_error(err, ENOMEM, "out of memory");
		goto out;
	}
	r = t->ops->entries(m, t, 0, nnz, rows, cols, vals, err);
	if (r < 0)
		goto out;
	for (uint64_t i = 0; i < nnz; i++)
		pat[i] = (struct pos){rows[i], cols[i], i};
	qsort(pat, (size_t)nnz, sizeof(*pat), cmp_pos);

	const char *s = text, *end = text + c->size, *ls, *le;
	uint64_t line = 0, got = 0;
	bool header = false, sizes = false;
	while (next_line(&s, end, &ls, &le)) {
		line++;
		if (!header) {
			if (le - ls < 14 || strncmp(ls, "%%MatrixMarket", 14) != 0) {
				r = mfs_error(err, EINVAL,
					      "line 1: expected \"%%%%MatrixMarket matrix coordinate ...\", found %s",
					      mfs_quote(q, ls, (size_t)(le - ls)));
				goto out;
			}
			if (!memmem(ls, (size_t)(le - ls), "coordinate", 10)) {
				r = mfs_error(err, EINVAL,
					      "line 1: expected the coordinate format (\"%%%%MatrixMarket matrix coordinate ...\"), found %s",
					      mfs_quote(q, ls, (size_t)(le - ls)));
				goto out;
			}
			header = true;
			continue;
		}
		struct mfs_tokens tk = {ls, (size_t)(le - ls), 0};
		const char *tok;
		size_t n;
		if (*ls == '%' || !mfs_next_token(&tk, &tok, &n))
			continue;  /* comment or blank line */
		uint64_t a, b, z;
		if (!sizes) {
			if (mfs_parse_u64(tok, n, UINT64_MAX, &a) < 0 || !mfs_next_token(&tk, &tok, &n) ||
			    mfs_parse_u64(tok, n, UINT64_MAX, &b) < 0 || !mfs_next_token(&tk, &tok, &n) ||
			    mfs_parse_u64(tok, n, UINT64_MAX, &z) < 0) {
				r = mfs_error(err, EINVAL, "line %llu: expected \"rows columns entries\" (%llu %llu %llu), found %s",
					      (unsigned long long)line, (unsigned long long)R,
					      (unsigned long long)C, (unsigned long long)nnz,
					      mfs_quote(q, ls, (size_t)(le - ls)));
				goto out;
			}
			if (a != R || b != C || z != nnz) {
				r = mfs_error(err, EINVAL,
					      "line %llu: the size line says %llu x %llu with %llu entries, expected %llu x %llu with %llu (the shape and the sparsity pattern cannot change)",
					      (unsigned long long)line, (unsigned long long)a,
					      (unsigned long long)b, (unsigned long long)z,
					      (unsigned long long)R, (unsigned long long)C,
					      (unsigned long long)nnz);
				goto out;
			}
			sizes = true;
			continue;
		}
		if (mfs_parse_u64(tok, n, UINT64_MAX, &a) < 0 || !mfs_next_token(&tk, &tok, &n) ||
		    mfs_parse_u64(tok, n, UINT64_MAX, &b) < 0 || a == 0 || b == 0) {
			r = mfs_error(err, EINVAL,
				      "line %llu: expected \"row column value\" with row 1 to %llu and column 1 to %llu, found %s",
				      (unsigned long long)line, (unsigned long long)R, (unsigned long long)C,
				      mfs_quote(q, ls, (size_t)(le - ls)));
			goto out;
		}
		struct pos key = {a - 1, b - 1, 0};
		struct pos *hit = bsearch(&key, pat, (size_t)nnz, sizeof(*pat), cmp_pos);
		if (!hit) {
			r = mfs_error(err, EINVAL,
				      "line %llu: (%llu, %llu) is not one of the %llu stored entries (the sparsity pattern cannot change)",
				      (unsigned long long)line, (unsigned long long)a,
				      (unsigned long long)b, (unsigned long long)nnz);
			goto out;
		}
		if (seen[hit->i]) {
			r = mfs_error(err, EINVAL, "line %llu: entry (%llu, %llu) is given twice (first on line %llu)",
				      (unsigned long long)line, (unsigned long long)a,
				      (unsigned long long)b, (unsigned long long)seen[hit->i]);
			goto out;
		}
		seen[hit->i] = line;
		r = parse_value(t, &tk, vals + hit->i * es, line, err);
		if (r < 0)
			goto out;
		got++;
	}
	if (!header || !sizes) {
		r = mfs_error(err, EINVAL, "expected a %s line, found %s",
			      header ? "\"rows columns entries\"" : "\"%%MatrixMarket matrix coordinate ...\"",
			      "the end of the text");
		goto out;
	}
	if (got != nnz) {
		uint64_t miss = 0;
		while (miss < nnz && seen[pat[miss].i])
			miss++;
		r = mfs_error(err, EINVAL, "expected %llu entries, got %llu (the first missing is (%llu, %llu))",
			      (unsigned long long)nnz, (unsigned long long)got,
			      (unsigned long long)pat[miss < nnz ? miss : 0].r + 1,
			      (unsigned long long)pat[miss < nnz ? miss : 0].c + 1);
		goto out;
	}
	r = mfs_submit_values(m, t, vals, p, err);
out:
	free(text);
	free(pat);
	free(rows);
	free(cols);
	free(vals);
	free(seen);
	return r;
}
