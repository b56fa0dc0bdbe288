/* PLearn matrices: .pmat (a 64-byte ascii header, then the raw row-major
 * values) and .amat (a text matrix with optional '#' header lines). The
 * model directory is the matrix's tensor directory plus `header`. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "plearn.h"

#define PMAT_HEADER 64

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* Next blank-separated word of the header [*q, end). */
static size_t hword(const char *h, size_t end, size_t *q, const char **w)
{
	while (*q < end && (h[*q] == ' ' || h[*q] == '\t' || h[*q] == '\n' || h[*q] == '\r'))
		(*q)++;
	*w = h + *q;
	size_t s = *q;
	while (*q < end && h[*q] != ' ' && h[*q] != '\t' && h[*q] != '\n' && h[*q] != '\r' &&
	       h[*q] != '\0')
		(*q)++;
	return *q - s;
}

static bool hword_is(const char *w, size_t l, const char *s)
{
	return l == strlen(s) && !memcmp(w, s, l);
}

/* A length or width: digits, at most INT32_MAX (PLearn keeps an int). */
static int hsize(const char *w, size_t l, uint64_t *out)
{
	uint64_t v = 0;
	if (!l || l > 10)
		return -1;
	for (size_t i = 0; i < l; i++) {
		if (w[i] < '0' || w[i] > '9')
			return -1;
		v = v * 10 + (uint64_t)(w[i] - '0');
	}
	if (v > INT32_MAX)
		return -1;
	*out = v;
	return 0;
}

int plearn_pmat_open(struct mfs_model *m, struct plearn_model *pm, struct mfs_err *err)
{
	if (m->size < PMAT_HEADER)
		return mfs_error(err, EINVAL, "truncated: the .pmat header needs 64 bytes, the file has %llu",
				 ull(m->size));
	char h[PMAT_HEADER];
	memcpy(h, m->base, PMAT_HEADER);
	char q1[MFS_QUOTE_MAX], q2[MFS_QUOTE_MAX];
	if (h[PMAT_HEADER - 1] != '\n')
		return mfs_error(err, EINVAL, "byte 63 of the .pmat header is %s, expected a newline",
				 mfs_quote(q1, h + PMAT_HEADER - 1, 1));
	size_t q = 0, l[5];
	const char *w[5];
	for (int i = 0; i < 5; i++)
		l[i] = hword(h, PMAT_HEADER - 1, &q, &w[i]);
	uint64_t rows, cols;
	if (!hword_is(w[0], l[0], "MATRIX"))
		return mfs_error(err, EINVAL, "the .pmat header starts with %s, expected \"MATRIX\"",
				 mfs_quote(q1, w[0], l[0]));
	if (hsize(w[1], l[1], &rows) < 0 || hsize(w[2], l[2], &cols) < 0)
		return mfs_error(err, EINVAL,
				 ".pmat header: length %s and width %s, expected two sizes (0 to 2147483647)",
				 mfs_quote(q1, w[1], l[1]), mfs_quote(q2, w[2], l[2]));
	bool dbl = hword_is(w[3], l[3], "DOUBLE"), be = hword_is(w[4], l[4], "BIG_ENDIAN");
	if (!dbl && !hword_is(w[3], l[3], "FLOAT"))
		return mfs_error(err, EINVAL, ".pmat header: element type %s, expected DOUBLE or FLOAT",
				 mfs_quote(q1, w[3], l[3]));
	if (!be && !hword_is(w[4], l[4], "LITTLE_ENDIAN"))
		return mfs_error(err, EINVAL,
				 ".pmat header: byte order %s, expected LITTLE_ENDIAN or BIG_ENDIAN",
				 mfs_quote(q1, w[4], l[4]));
	unsigned es = dbl ? 8 : 4;
	uint64_t bytes;
	if (!mfs_mul_ok(rows * cols, es, &bytes) || bytes > m->size - PMAT_HEADER)
		return mfs_error(err, EINVAL,
				 "truncated: the header says %llu x %llu %s values, %llu bytes of data at byte 64, the file has %llu",
				 ull(rows), ull(cols), dbl ? "float64" : "float32", ull(rows * cols * es),
				 ull(m->size));
	uint64_t dims[2] = {rows, cols};
	struct plearn_tens pt = {PLEARN_T_RAW, (uint8_t)es, be, PMAT_HEADER, cols ? cols : 1, cols ? cols : 1};
	struct mfs_tensor t = {0};
	t.dtype = dbl ? MFS_DT_F64 : MFS_DT_F32;
	t.order = MFS_ROW_MAJOR;
	t.swap = be ? (uint8_t)es : 0;
	t.flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE;
	t.ndim = 2;
	t.dims = dims;
	t.off = PMAT_HEADER;
	t.tag = plearn_add_tens(pm, &pt);
	if (!t.tag)
		return mfs_error(err, ENOMEM, "out of memory");
	mfs_attach_tensor(m, MFS_ROOT, &t);
	mfs_add_raw(m, MFS_ROOT, "header", 6, 0, PMAT_HEADER, 0);
	return 0;
}

int plearn_pmat_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		     struct mfs_err *err)
{
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (!e->reshape)
		return mfs_patch_raw_runs(p, t, e, err);
	char sh[MFS_SHAPE_TEXT];
	if (e->dtype != t->dtype)
		return mfs_error(err, EINVAL, "the array is %s, expected %s (a .pmat keeps its element type)",
				 mfs_dtype_info(e->dtype)->name,
				 mfs_dtype_info((enum mfs_dtype)t->dtype)->name);
	if (e->ndim != 2)
		return mfs_error(err, EINVAL, "the array has shape %s, expected 2 dimensions (a .pmat holds a matrix)",
				 mfs_shape_text(sh, e->ndim, e->dims));
	uint64_t rows = e->dims[0], cols = e->dims[1], n, bytes;
	if (rows > INT32_MAX || cols > INT32_MAX || !mfs_mul_ok(rows, cols, &n) ||
	    !mfs_mul_ok(n, t->esize, &bytes) || bytes > SIZE_MAX / 2)
		return mfs_error(err, EINVAL, "the array is %llu x %llu, a .pmat holds at most 2147483647 rows and columns",
				 ull(rows), ull(cols));
	if (rows != t->dims[0] || cols != t->dims[1]) {
		char h[PMAT_HEADER + 1];
		int l = snprintf(h, sizeof(h), "MATRIX %llu %llu %s %s", ull(rows), ull(cols),
				 t->dtype == MFS_DT_F64 ? "DOUBLE" : "FLOAT",
				 t->swap ? "BIG_ENDIAN" : "LITTLE_ENDIAN");
		memset(h + l, ' ', (size_t)(PMAT_HEADER - 1 - l));
		h[PMAT_HEADER - 1] = '\n';
		if (mfs_patch_put(p, 0, PMAT_HEADER, h, PMAT_HEADER) < 0)
			return mfs_error(err, ENOMEM, "out of memory");
	}
	uint8_t *d = mfs_patch_alloc(p, t->off, t->nelem * t->esize, bytes);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	memset(d, 0, (size_t)bytes);
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *r = &e->runs[i];
		if (r->first > n || r->count > n - r->first)
			return mfs_error(err, EINVAL, "internal error: run beyond the new shape");
		memcpy(d + r->first * t->esize, r->bytes, (size_t)(r->count * t->esize));
	}
	if (t->swap)
		mfs_swap_elems(d, n, t->swap);
	return 0;
}

/* ---- .amat ------------------------------------------------------------------ */

struct line {
	uint64_t start, end, next;   /* [start, end) without the newline */
};

static void line_at(const uint8_t *b, uint64_t n, uint64_t pos, struct line *ln)
{
	const uint8_t *nl = memchr(b + pos, '\n', (size_t)(n - pos));
	ln->start = pos;
	ln->end = nl ? (uint64_t)(nl - b) : n;
	ln->next = nl ? ln->end + 1 : n;
}

static bool amat_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* Blank-separated words of [q, end) up to a '#' comment: count them, and
 * note any that is not a number. */
static void line_words(const uint8_t *b, uint64_t q, uint64_t end, uint64_t *count, bool *strings)
{
	uint64_t c = 0;
	while (q < end) {
		while (q < end && amat_blank(b[q]))
			q++;
		if (q >= end || b[q] == '#')
			break;
		uint64_t s = q;
		while (q < end && !amat_blank(b[q]))
			q++;
		if (plearn_scan_number(b, q, s, NULL) != q - s)
			*strings = true;
		c++;
	}
	*count = c;
}

/* "#size: L W": two sizes after the colon. */
static int amat_size(const uint8_t *b, uint64_t q, uint64_t end, uint64_t *rows, uint64_t *cols,
		     struct mfs_err *err)
{
	uint64_t v[3] = {0}, k = 0;
	char qt[MFS_QUOTE_MAX];
	while (q < end) {
		while (q < end && amat_blank(b[q]))
			q++;
		if (q >= end)
			break;
		uint64_t s = q;
		while (q < end && !amat_blank(b[q]))
			q++;
		if (k < 3 && hsize((const char *)b + s, (size_t)(q - s), &v[k]) < 0)
			return mfs_error(err, EINVAL,
					 ".amat '#size:' line at offset %llu: %s is not a size (0 to 2147483647)",
					 ull(s), mfs_quote(qt, b + s, (size_t)(q - s)));
		k++;
	}
	if (k != 2)
		return mfs_error(err, EINVAL, ".amat '#size:' line has %llu sizes, expected 2 (length and width)",
				 ull(k));
	*rows = v[0];
	*cols = v[1];
	return 0;
}

/* What a pass over an .amat finds: the size its header gives, where the
 * data starts, and the data lines' values. */
struct amat {
	uint64_t rows, cols;
	bool has_size, hashes, strings;
	uint64_t data;                 /* the first byte after the header */
	uint64_t nlines, words;        /* non-blank data lines, values on them */
	uint64_t f1, f2, second;       /* values on lines 1 and 2; where line 2 starts */
};

/* Header: blank lines and '#' lines, as PLearn's loadAscii reads them; a
 * "#size: L W" line gives the size. */
static int amat_header(const uint8_t *b, uint64_t n, struct amat *a, struct mfs_err *err)
{
	uint64_t pos = 0;
	struct line ln;
	int r;
	while (pos < n) {
		line_at(b, n, pos, &ln);
		uint64_t q = ln.start;
		while (q < ln.end && amat_blank(b[q]))
			q++;
		if (q < ln.end && b[q] != '#')
			break;
		if (q < ln.end) {
			a->hashes = true;
			const uint8_t *colon = memchr(b + q, ':', (size_t)(ln.end - q));
			if (colon && colon - (b + q) == 5 && !memcmp(b + q, "#size", 5)) {
				if ((r = amat_size(b, (uint64_t)(colon - b) + 1, ln.end, &a->rows, &a->cols,
						   err)))
					return r;
				a->has_size = true;
			}
		}
		pos = ln.next;
	}
	a->data = pos;
	return 0;
}

/* The data lines: how many hold values, how many values in all, on the
 * first two, and whether any is not a number. */
static void amat_count(const uint8_t *b, uint64_t n, struct amat *a)
{
	struct line ln;
	a->second = n;
	for (uint64_t q = a->data; q < n; q = ln.next) {
		uint64_t c;
		line_at(b, n, q, &ln);
		line_words(b, ln.start, ln.end, &c, &a->strings);
		if (!c)
			continue;
		if (a->nlines == 0)
			a->f1 = c;
		else if (a->nlines == 1)
			a->f2 = c, a->second = ln.start;
		a->nlines++;
		a->words += c;
	}
}

/* The next blank-separated word from *q (not past a newline), as a size;
 * false when it is none. */
static bool amat_size_word(const uint8_t *b, uint64_t n, uint64_t *q, uint64_t *v)
{
	while (*q < n && amat_blank(b[*q]))
		(*q)++;
	uint64_t s = *q;
	while (*q < n && !amat_blank(b[*q]) && b[*q] != '\n')
		(*q)++;
	return hsize((const char *)b + s, (size_t)(*q - s), v) == 0;
}

/* An "old" .amat, told by rows 1 and 2 of different widths: a first line
 * "L W", then L rows of W values. Anything else is refused. */
static int amat_old_size(const uint8_t *b, uint64_t n, struct amat *a, struct mfs_err *err)
{
	uint64_t q = a->data, rows = 0, cols = 0;
	while (q < n && (amat_blank(b[q]) || b[q] == '\n'))
		q++;
	bool ok = !a->hashes && a->f1 == 2 && amat_size_word(b, n, &q, &rows);
	ok = ok && amat_size_word(b, n, &q, &cols);
	if (!ok || rows == 0 || cols == 0 || a->nlines != rows + 1 || cols != a->f2)
		return mfs_error(err, EINVAL,
				 ".amat rows 1 and 2 have %llu and %llu values: expected the same width, or a '#size: L W' line",
				 ull(a->f1), ull(a->f2));
	a->data = a->second;
	a->has_size = true;
	a->rows = rows;
	a->cols = cols;
	a->words -= 2;
	return 0;
}

/* The offset of each of the a->words values from a->data, in pm->num. */
static int amat_tokens(const uint8_t *b, uint64_t n, const struct amat *a, struct plearn_model *pm,
		       struct mfs_err *err)
{
	struct line ln;
	/* words <= n / 2, checked by counting them. */
	pm->num = malloc((size_t)(a->words ? a->words : 1) * sizeof(*pm->num));
	if (!pm->num)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint64_t q = a->data; q < n && pm->nnum < a->words;) {
		while (q < n && (amat_blank(b[q]) || b[q] == '\n'))
			q++;
		if (q < n && b[q] == '#') {
			line_at(b, n, q, &ln);
			q = ln.next;
			continue;
		}
		if (q >= n)
			break;
		pm->num[pm->nnum++] = q;
		while (q < n && !amat_blank(b[q]) && b[q] != '\n')
			q++;
	}
	return 0;
}

int plearn_amat_open(struct mfs_model *m, struct plearn_model *pm, struct mfs_err *err)
{
	const uint8_t *b = m->base;
	uint64_t n = m->size;
	struct amat a = {0};
	int r;
	if ((r = amat_header(b, n, &a, err)))
		return r;
	amat_count(b, n, &a);
	if (a.strings)
		return mfs_error(err, ENOTSUP, ".amat with string cells");
	if (!a.has_size && a.nlines >= 2 && a.f1 != a.f2 && (r = amat_old_size(b, n, &a, err)))
		return r;
	if (!a.has_size) {
		a.rows = a.nlines;
		a.cols = a.f1;
	}
	uint64_t count;
	if (!mfs_mul_ok(a.rows, a.cols, &count) || count != a.words)
		return mfs_error(err, EINVAL, ".amat size %llu x %llu needs %llu values, the file holds %llu",
				 ull(a.rows), ull(a.cols), ull(count), ull(a.words));
	if ((r = amat_tokens(b, n, &a, pm, err)))
		return r;
	pm->style = plearn_style_detect(b, n, pm->num, pm->nnum);
	if (!pm->style)
		pm->style = 18;
	uint64_t dims[2] = {a.rows, a.cols}, w = a.cols ? a.cols : 1;
	struct plearn_tens pt = {PLEARN_T_TOKENS, 8, 0, 0, w, w};
	struct mfs_tensor t = {0};
	t.dtype = MFS_DT_F64;
	t.order = MFS_ROW_MAJOR;
	t.flags = MFS_TF_WRITABLE;
	t.ndim = 2;
	t.dims = dims;
	t.ops = &plearn_tensor_ops;
	t.tag = plearn_add_tens(pm, &pt);
	if (!t.tag)
		return mfs_error(err, ENOMEM, "out of memory");
	mfs_attach_tensor(m, MFS_ROOT, &t);
	mfs_add_raw(m, MFS_ROOT, "header", 6, 0, a.data, 0);
	return 0;
}
