/* DAPHNE .dbdf matrices: telling the dialect by the exact file size, walking
 * the spec dialect's blocks, and checking every block (positions, overlaps,
 * sparse indices) before the tree is built. Nothing is decoded here. */
#include <errno.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "daphne.h"

static int nofit(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int nofit(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
	return 0;
}

/* base + a * b, saturated at UINT64_MAX (no file is that large). */
static uint64_t size_of(uint64_t base, uint64_t a, uint64_t b)
{
	uint64_t n, s;
	if (!mfs_mul_ok(a, b, &n) || !mfs_add_ok(base, n, &s))
		return UINT64_MAX;
	return s;
}

/* ---- DAPHNE (>= 0.2) and DAPHNE 0.1: one block at (0, 0) --------------- */

/* The fixed prefix both DAPHNE dialects write before a block's body. */
static int daphne_prefix(struct mfs_model *m, struct daphne_file *d, uint64_t need,
			 struct daphne_block *b, char *why, size_t wn)
{
	const uint8_t *p = m->base;
	if (m->size < need)
		return nofit(why, wn, "needs at least %llu bytes", (unsigned long long)need);
	const struct daphne_vt *vt = daphne_vt(DAPHNE_DAPHNE, p[DAPHNE_HEAD]);
	if (!vt)
		return nofit(why, wn, "value type %u is not one of its codes 0-9", p[DAPHNE_HEAD]);
	uint64_t rx = mfs_le64(p + 19), cx = mfs_le64(p + 27);
	if (rx || cx)
		return nofit(why, wn, "block at (%llu, %llu), it writes (0, 0)",
			     (unsigned long long)rx, (unsigned long long)cx);
	memset(b, 0, sizeof(*b));
	b->at = 19;
	b->head = 35;
	b->rows = mfs_le32(p + 35);
	b->cols = mfs_le32(p + 39);
	b->bt = p[43];
	b->vt = p[44];
	if (b->vt != p[DAPHNE_HEAD])
		return nofit(why, wn, "block value type %u differs from the header's %u", b->vt,
			     p[DAPHNE_HEAD]);
	if (b->rows != d->rows || b->cols != d->cols)
		return nofit(why, wn, "a %u x %u block in a %llu x %llu matrix", b->rows, b->cols,
			     (unsigned long long)d->rows, (unsigned long long)d->cols);
	d->vt = b->vt;
	d->dtype = b->dtype = vt->dtype;
	d->esize = b->esize = vt->size;
	return 1;
}

static int try_daphne(struct mfs_model *m, struct daphne_file *d, struct daphne_block *b, char *why,
		      size_t wn)
{
	bool csr = d->dt == DAPHNE_CSR;
	int r = daphne_prefix(m, d, csr ? DAPHNE_CSR_PREFIX : DAPHNE_DENSE_PREFIX, b, why, wn);
	if (r <= 0)
		return r;
	uint64_t need;
	if (b->bt != (csr ? DAPHNE_B_CSR : DAPHNE_B_DENSE))
		return nofit(why, wn, "block type %u, it writes %u", b->bt, csr ? 2 : 1);
	if (!csr) {
		need = size_of(DAPHNE_DENSE_PREFIX, (uint64_t)b->rows * b->cols, b->esize);
		if (need != m->size)
			return nofit(why, wn, "a %u x %u %s matrix needs %s%llu bytes", b->rows, b->cols,
				     mfs_dtype_info((enum mfs_dtype)b->dtype)->name,
				     need == UINT64_MAX ? "more than " : "", (unsigned long long)need);
		b->data = DAPHNE_DENSE_PREFIX;
		b->nnz = (uint64_t)b->rows * b->cols;
		b->end = m->size;
		return 1;
	}
	if (mfs_dtype_info((enum mfs_dtype)b->dtype)->kind == MFS_DK_OPAQUE)
		return nofit(why, wn, "a CSR matrix of %s values", daphne_vt(DAPHNE_DAPHNE, b->vt)->name);
	uint64_t nnz = mfs_le64(m->base + 45);
	need = size_of(size_of(DAPHNE_CSR_PREFIX, nnz, 8u + b->esize), (uint64_t)b->rows + 1, 8);
	if (need != m->size)
		return nofit(why, wn, "%llu nonzeros need %s%llu bytes", (unsigned long long)nnz,
			     need == UINT64_MAX ? "more than " : "", (unsigned long long)need);
	b->nnz = nnz;
	b->data = DAPHNE_CSR_PREFIX;
	b->cidx = b->data + 8 * ((uint64_t)b->rows + 1);
	b->vals = b->cidx + 8 * nnz;
	b->ixsize = 8;
	b->end = m->size;
	return 1;
}

/* DAPHNE's row offsets, rebased to 0 when written: checked, then kept. */
static int daphne_rowoffsets(struct mfs_model *m, struct daphne_block *b, struct mfs_err *err)
{
	uint64_t *re = mfs_model_alloc(m, ((size_t)b->rows + 1) * sizeof(*re));
	if (!re)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint64_t r = 0; r <= b->rows; r++) {
		re[r] = mfs_le64(m->base + b->data + 8 * r);
		if (r == 0 && re[0] != 0)
			return mfs_error(err, EINVAL, "CSR row offsets start at %llu, not 0",
					 (unsigned long long)re[0]);
		if (r && re[r] < re[r - 1])
			return mfs_error(err, EINVAL,
					 "CSR row offsets out of order: row %llu starts at %llu, after %llu",
					 (unsigned long long)r, (unsigned long long)re[r],
					 (unsigned long long)re[r - 1]);
		if (re[r] > b->nnz)
			return mfs_error(err, EINVAL,
					 "CSR row offset %llu of row %llu is beyond the %llu nonzeros",
					 (unsigned long long)re[r], (unsigned long long)r,
					 (unsigned long long)b->nnz);
	}
	if (re[b->rows] != b->nnz)
		return mfs_error(err, EINVAL, "CSR row offsets end at %llu, but nnz is %llu",
				 (unsigned long long)re[b->rows], (unsigned long long)b->nnz);
	b->rowent = re;
	return 0;
}

/* DAPHNE 0.1: CSR rows as (count u64, (col u64, value) ...), or a COO block. */
static int try_daphne01(struct mfs_model *m, struct daphne_file *d, struct daphne_block *b, char *why,
			size_t wn)
{
	if (d->dt != DAPHNE_CSR)
		return nofit(why, wn, "only its CSR layout differs");
	int r = daphne_prefix(m, d, DAPHNE_CSR_PREFIX, b, why, wn);
	if (r <= 0)
		return r;
	if (b->bt != DAPHNE_B_CSR && b->bt != DAPHNE_B_COO)
		return nofit(why, wn, "block type %u, it writes 2 (or reads 3)", b->bt);
	if (mfs_dtype_info((enum mfs_dtype)b->dtype)->kind == MFS_DK_OPAQUE)
		return nofit(why, wn, "a sparse matrix of %s values", daphne_vt(DAPHNE_DAPHNE, b->vt)->name);
	uint64_t nnz = mfs_le64(m->base + 45);
	uint64_t entry = b->bt == DAPHNE_B_CSR ? 8u + b->esize : (b->cols == 1 ? 4u : 8u) + b->esize;
	uint64_t heads = b->bt == DAPHNE_B_CSR ? 8 * (uint64_t)b->rows : 0;
	uint64_t need = size_of(DAPHNE_CSR_PREFIX + heads, nnz, entry);
	if (need != m->size)
		return nofit(why, wn, "%llu nonzeros need %s%llu bytes", (unsigned long long)nnz,
			     need == UINT64_MAX ? "more than " : "", (unsigned long long)need);
	b->nnz = nnz;
	b->data = DAPHNE_CSR_PREFIX;
	b->end = m->size;
	if (b->bt == DAPHNE_B_COO) {
		b->ixsize = 4;
		b->nocol = b->cols == 1;
		return 1;
	}
	b->ixsize = 8;
	b->cntsize = 8;
	return 1;
}

/* ---- the spec dialect: blocks to the end of the file --------------------- */

/* Rows of a spec or DAPHNE 0.1 CSR block at pos: (count, (col, value) ...)
 * each; fills rowent when given. Returns 1, or 0 with why. */
static int scan_csr_rows(struct mfs_model *m, struct daphne_block *b, uint64_t pos, uint64_t *rowent,
			 uint32_t k, char *why, size_t wn)
{
	uint64_t acc = 0, entry = b->ixsize + (uint64_t)b->esize;
	for (uint64_t r = 0; r < b->rows; r++) {
		if (m->size - pos < b->cntsize)
			return nofit(why, wn, "block %u row %llu: count needs %u bytes, %llu left", k,
				     (unsigned long long)r, b->cntsize,
				     (unsigned long long)(m->size - pos));
		uint64_t cnt = b->cntsize == 4 ? mfs_le32(m->base + pos) : mfs_le64(m->base + pos);
		pos += b->cntsize;
		if (cnt > (m->size - pos) / entry)
			return nofit(why, wn, "block %u row %llu: %llu nonzeros need %llu bytes each, %llu left",
				     k, (unsigned long long)r, (unsigned long long)cnt,
				     (unsigned long long)entry, (unsigned long long)(m->size - pos));
		if (rowent)
			rowent[r] = acc;
		acc += cnt;
		pos += cnt * entry;
	}
	if (rowent)
		rowent[b->rows] = acc;
	if (acc != b->nnz)
		return nofit(why, wn, "block %u: its rows hold %llu nonzeros, its header says %llu", k,
			     (unsigned long long)acc, (unsigned long long)b->nnz);
	b->end = pos;
	return 1;
}

/* One spec block at pos: its header and extent (and rowent when given). */
static int scan_block(struct mfs_model *m, struct daphne_file *d, uint64_t pos, struct daphne_block *b,
		      uint32_t k, bool fill, char *why, size_t wn)
{
	const uint8_t *p = m->base;
	uint64_t left = m->size - pos;
	memset(b, 0, sizeof(*b));
	if (left < 16 + DAPHNE_BLOCK_HEAD)
		return nofit(why, wn, "block %u at offset %llu: its header needs 25 bytes, %llu left", k,
			     (unsigned long long)pos, (unsigned long long)left);
	b->at = pos;
	b->rx = mfs_le64(p + pos);
	b->cx = mfs_le64(p + pos + 8);
	b->head = pos + 16;
	b->rows = mfs_le32(p + pos + 16);
	b->cols = mfs_le32(p + pos + 20);
	b->bt = p[pos + 24];
	pos += 16 + DAPHNE_BLOCK_HEAD;
	left -= 16 + DAPHNE_BLOCK_HEAD;
	if (b->bt == DAPHNE_B_EMPTY) {
		b->vt = d->vt;
		b->dtype = d->dtype;
		b->esize = d->esize;
		b->data = b->end = pos;
		return 1;
	}
	if (b->bt > DAPHNE_B_COO)
		return nofit(why, wn, "block %u at offset %llu: unknown block type %u", k,
			     (unsigned long long)b->at, b->bt);
	if (left < 1)
		return nofit(why, wn, "block %u: no value type byte", k);
	b->vt = p[pos];
	const struct daphne_vt *vt = daphne_vt(DAPHNE_SPEC, b->vt);
	if (!vt)
		return nofit(why, wn, "block %u: value type %u is not one of the spec's 1-10", k, b->vt);
	b->dtype = vt->dtype;
	b->esize = vt->size;
	pos++;
	left--;
	uint64_t n;
	if (b->bt == DAPHNE_B_DENSE) {
		b->nnz = (uint64_t)b->rows * b->cols;
		if (!mfs_mul_ok(b->nnz, b->esize, &n) || n > left)
			return nofit(why, wn, "block %u: %u x %u values need %llu bytes, %llu left", k,
				     b->rows, b->cols, (unsigned long long)b->nnz * b->esize,
				     (unsigned long long)left);
		b->data = pos;
		b->end = pos + n;
		return 1;
	}
	if (b->bt == DAPHNE_B_COO) {
		if (left < 4)
			return nofit(why, wn, "block %u: no nonzero count", k);
		b->nnz = mfs_le32(p + pos);
		b->data = pos + 4;
		b->ixsize = 4;
		b->nocol = b->cols == 1;
		n = b->nnz * ((b->nocol ? 4u : 8u) + b->esize);
		if (n > left - 4)
			return nofit(why, wn, "block %u: %llu COO entries need %llu bytes, %llu left", k,
				     (unsigned long long)b->nnz, (unsigned long long)n,
				     (unsigned long long)(left - 4));
		b->end = b->data + n;
		return 1;
	}
	if (left < 8)
		return nofit(why, wn, "block %u: no nonzero count", k);
	b->nnz = mfs_le64(p + pos);
	b->data = pos + 8;
	b->ixsize = 4;
	b->cntsize = 4;
	uint64_t *re = NULL;
	if (fill) {
		re = mfs_model_alloc(m, ((size_t)b->rows + 1) * sizeof(*re));
		if (!re)
			return nofit(why, wn, "out of memory");
		b->rowent = re;
	}
	return scan_csr_rows(m, b, b->data, re, k, why, wn);
}

int daphne_walk_blocks(struct mfs_model *m, struct daphne_file *d, uint64_t pos, char *why,
		       size_t whylen, struct mfs_err *err)
{
	/* Two passes: count (and check the extents), then keep; so nothing is
	 * allocated for a file that turns out not to fit. */
	struct daphne_block b;
	uint64_t n = 0, at = pos;
	while (at < m->size) {
		int r = scan_block(m, d, at, &b, (uint32_t)(n < UINT32_MAX ? n : UINT32_MAX), false,
				   why, whylen);
		if (r <= 0)
			return r;
		at = b.end;
		n++;
	}
	if (n > DAPHNE_MAX_BLOCKS)
		return mfs_error(err, EFBIG, "%llu blocks: at most %u are supported",
				 (unsigned long long)n, DAPHNE_MAX_BLOCKS);
	d->blocks = mfs_model_alloc(m, (size_t)(n ? n : 1) * sizeof(*d->blocks));
	if (!d->blocks)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint32_t k = 0; k < n; k++) {
		if (scan_block(m, d, pos, &d->blocks[k], k, true, why, whylen) <= 0)
			return mfs_error(err, ENOMEM, "%s", why);
		pos = d->blocks[k].end;
	}
	d->nblocks = (uint32_t)n;
	return 1;
}

static int try_spec(struct mfs_model *m, struct daphne_file *d, char *why, size_t wn,
		    struct mfs_err *err)
{
	if (m->size < DAPHNE_HEAD + 1)
		return nofit(why, wn, "needs at least 19 bytes");
	const struct daphne_vt *vt = daphne_vt(DAPHNE_SPEC, m->base[DAPHNE_HEAD]);
	if (!vt)
		return nofit(why, wn, "value type %u is not one of its codes 1-10", m->base[DAPHNE_HEAD]);
	d->vt = m->base[DAPHNE_HEAD];
	d->dtype = vt->dtype;
	d->esize = vt->size;
	return daphne_walk_blocks(m, d, DAPHNE_HEAD + 1, why, wn, err);
}

/* ---- checks shared by every dialect -------------------------------------- */

static int check_csr(const struct mfs_model *m, const struct daphne_block *b, uint32_t k,
		     struct mfs_err *err)
{
	for (uint64_t r = 0; r < b->rows; r++) {
		uint64_t prev = 0;
		for (uint64_t e = b->rowent[r]; e < b->rowent[r + 1]; e++) {
			uint64_t row, col;
			daphne_entry(m, b, e, &row, &col);
			if (col >= b->cols)
				return mfs_error(err, EINVAL,
						 "block %u row %llu: column index %llu is beyond its %u columns",
						 k, (unsigned long long)r, (unsigned long long)col, b->cols);
			if (e > b->rowent[r] && col <= prev)
				return mfs_error(err, EINVAL,
						 "block %u row %llu: column indices out of order (%llu after %llu)",
						 k, (unsigned long long)r, (unsigned long long)col,
						 (unsigned long long)prev);
			prev = col;
		}
	}
	return 0;
}

struct keyed {
	uint64_t key;
	uint32_t idx;
};

static int cmp_keyed(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

/* COO: every entry inside the block, no position twice; the sorted
 * positions let reads find a row's entries. */
static int check_coo(struct mfs_model *m, struct daphne_block *b, uint32_t k, struct mfs_err *err)
{
	if (b->nnz > UINT32_MAX)
		return mfs_error(err, EFBIG, "block %u: %llu COO entries: at most %u are supported", k,
				 (unsigned long long)b->nnz, UINT32_MAX);
	size_t n = (size_t)b->nnz;
	struct keyed *s = mfs_model_alloc(m, (n ? n : 1) * sizeof(*s));
	b->cpos = mfs_model_alloc(m, (n ? n : 1) * sizeof(*b->cpos));
	b->cent = mfs_model_alloc(m, (n ? n : 1) * sizeof(*b->cent));
	if (!s || !b->cpos || !b->cent)
		return mfs_error(err, ENOMEM, "out of memory");
	for (size_t e = 0; e < n; e++) {
		uint64_t row, col;
		daphne_entry(m, b, e, &row, &col);
		if (row >= b->rows || col >= b->cols)
			return mfs_error(err, EINVAL,
					 "block %u COO entry %zu: (%llu, %llu) is outside the %u x %u block",
					 k, e, (unsigned long long)row, (unsigned long long)col, b->rows,
					 b->cols);
		s[e] = (struct keyed){row * b->cols + col, (uint32_t)e};
	}
	qsort(s, n, sizeof(*s), cmp_keyed);
	for (size_t i = 0; i < n; i++) {
		if (i && s[i].key == s[i - 1].key)
			return mfs_error(err, EINVAL,
					 "block %u: COO entries %u and %u are both at (%llu, %llu)", k,
					 s[i - 1].idx, s[i].idx, (unsigned long long)(s[i].key / b->cols),
					 (unsigned long long)(s[i].key % b->cols));
		b->cpos[i] = s[i].key;
		b->cent[i] = s[i].idx;
	}
	return 0;
}

/* Spec blocks may store another value type than the matrix's ("if the value
 * range permits"): every stored value must then be exactly a value of the
 * matrix's type, or the whole matrix could not show it. */
static int check_values(const struct mfs_model *m, const struct daphne_file *d,
			const struct daphne_block *b, uint32_t k, struct mfs_err *err)
{
	uint8_t tmp[16];
	for (uint64_t e = 0; e < b->nnz; e++) {
		uint64_t row, col, off = daphne_entry(m, b, e, &row, &col);
		if (!mfs_dtype_convert(d->dtype, tmp, b->dtype, m->base + off))
			return mfs_error(err, EINVAL,
					 "block %u: its %s value at (%llu, %llu) is not a %s value (the matrix's type)",
					 k, mfs_dtype_info((enum mfs_dtype)b->dtype)->name,
					 (unsigned long long)row, (unsigned long long)col,
					 mfs_dtype_info((enum mfs_dtype)d->dtype)->name);
	}
	return 0;
}

static int cmp_cols(const void *a, const void *b)
{
	const struct daphne_block *x = a, *y = b;
	/* Disjoint column ranges order themselves; overlapping ones are equal,
	 * so a search finds a stored block that overlaps the new one. */
	if (x->cx + x->cols <= y->cx)
		return -1;
	if (y->cx + y->cols <= x->cx)
		return 1;
	return 0;
}

static void no_free(void *p)
{
	(void)p;
}

/* A sweep down the rows: the blocks whose rows are current are kept in a
 * tree ordered by their (disjoint) column ranges; a new block must overlap
 * none of them. O(n log n) for any layout. */
static int check_overlaps(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err)
{
	uint32_t n = d->nbyrow;
	struct keyed *ends = mfs_model_alloc(m, (size_t)(n ? n : 1) * sizeof(*ends));
	if (!ends)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < n; i++) {
		const struct daphne_block *b = &d->blocks[d->byrow[i]];
		ends[i] = (struct keyed){b->rx + b->rows, d->byrow[i]};
	}
	qsort(ends, n, sizeof(*ends), cmp_keyed);
	void *root = NULL;
	uint32_t ei = 0;
	int r = 0;
	for (uint32_t i = 0; i < n && r == 0; i++) {
		struct daphne_block *b = &d->blocks[d->byrow[i]];
		for (; ei < n && ends[ei].key <= b->rx; ei++)
			tdelete(&d->blocks[ends[ei].idx], &root, cmp_cols);
		void *hit = tfind(b, &root, cmp_cols);
		if (hit) {
			const struct daphne_block *o = *(const struct daphne_block **)hit;
			uint32_t a = (uint32_t)(o - d->blocks), c = d->byrow[i];
			const struct daphne_block *x = &d->blocks[a < c ? a : c], *y = &d->blocks[a < c ? c : a];
			r = mfs_error(err, EINVAL,
				      "blocks %u (%u x %u at (%llu, %llu)) and %u (%u x %u at (%llu, %llu)) overlap",
				      a < c ? a : c, x->rows, x->cols, (unsigned long long)x->rx,
				      (unsigned long long)x->cx, a < c ? c : a, y->rows, y->cols,
				      (unsigned long long)y->rx, (unsigned long long)y->cx);
		} else if (!tsearch(b, &root, cmp_cols)) {
			r = mfs_error(err, ENOMEM, "out of memory");
		}
	}
	tdestroy(root, no_free);
	return r;
}

int daphne_check_blocks(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err)
{
	uint32_t nb = d->nblocks;
	struct keyed *s = mfs_model_alloc(m, (size_t)(nb ? nb : 1) * sizeof(*s));
	d->byrow = mfs_model_alloc(m, (size_t)(nb ? nb : 1) * sizeof(*d->byrow));
	d->nzpre = mfs_model_alloc(m, ((size_t)nb + 1) * sizeof(*d->nzpre));
	if (!s || !d->byrow || !d->nzpre)
		return mfs_error(err, ENOMEM, "out of memory");
	uint32_t n = 0;
	uint64_t acc = 0;
	for (uint32_t k = 0; k < nb; k++) {
		struct daphne_block *b = &d->blocks[k];
		uint64_t re, ce;
		if (!mfs_add_ok(b->rx, b->rows, &re) || re > d->rows || !mfs_add_ok(b->cx, b->cols, &ce) ||
		    ce > d->cols)
			return mfs_error(err, EINVAL,
					 "block %u: %u x %u at (%llu, %llu) lies outside the %llu x %llu %s",
					 k, b->rows, b->cols, (unsigned long long)b->rx,
					 (unsigned long long)b->cx, (unsigned long long)d->rows,
					 (unsigned long long)d->cols, d->dt == DAPHNE_FRAME ? "frame" : "matrix");
		/* A block too large to show densely may still be shown (by its
		 * entries), but its size in bytes must be a number. */
		uint64_t bytes;
		if (!mfs_mul_ok((uint64_t)b->rows * b->cols, b->esize, &bytes))
			return mfs_error(err, EFBIG, "block %u: %u x %u values of %u bytes: their size overflows",
					 k, b->rows, b->cols, b->esize);
		int r = 0;
		if (b->bt == DAPHNE_B_CSR) {
			if (!b->rowent)
				r = daphne_rowoffsets(m, b, err);
			if (r == 0)
				r = check_csr(m, b, k, err);
		} else if (b->bt == DAPHNE_B_COO) {
			r = check_coo(m, b, k, err);
		}
		if (r == 0 && d->dt != DAPHNE_FRAME && b->dtype != d->dtype)
			r = check_values(m, d, b, k, err);
		if (r < 0)
			return r;
		d->nzpre[k] = acc;
		acc += b->nnz;  /* each nnz is bounded by the file's size */
		if (b->rows && b->cols) {
			s[n] = (struct keyed){b->rx, k};
			n++;
			if (b->rows > d->maxrows)
				d->maxrows = b->rows;
		}
	}
	d->nzpre[nb] = acc;
	qsort(s, n, sizeof(*s), cmp_keyed);
	for (uint32_t i = 0; i < n; i++)
		d->byrow[i] = s[i].idx;
	d->nbyrow = n;
	return check_overlaps(m, d, err);
}

static uint64_t dense_max(const struct mfs_model *m)
{
	uint64_t max;
	if (!mfs_mul_ok(m->size, DAPHNE_DENSE_PER_BYTE, &max))
		max = UINT64_MAX;
	return max < DAPHNE_DENSE_FLOOR ? DAPHNE_DENSE_FLOOR : max;
}

bool daphne_dense_fits(const struct mfs_model *m, uint64_t rows, uint64_t cols)
{
	uint64_t n;
	return mfs_mul_ok(rows, cols, &n) && n <= dense_max(m);
}

int daphne_check_dense(const struct mfs_model *m, uint64_t rows, uint64_t cols,
		       struct mfs_err *err)
{
	uint64_t max = dense_max(m);
	if (!daphne_dense_fits(m, rows, cols))
		return mfs_error(err, EFBIG,
				 "%llu x %llu values in %llu bytes: more than the %llu that its dense views may show",
				 (unsigned long long)rows, (unsigned long long)cols,
				 (unsigned long long)m->size, (unsigned long long)max);
	return 0;
}

/* ---- choosing the dialect ------------------------------------------------ */

int daphne_parse_matrix(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err)
{
	char w0[96], w1[96], w2[96];
	struct daphne_block b;
	uint64_t nelem;
	if (!mfs_mul_ok(d->rows, d->cols, &nelem))
		return mfs_error(err, EINVAL, "%llu x %llu elements overflow",
				 (unsigned long long)d->rows, (unsigned long long)d->cols);
	/* The element sizes of the two value type tables never coincide, so
	 * at most one dialect fits the size, except for matrices with no
	 * stored values, where DAPHNE's own layout is taken. */
	int r = try_daphne(m, d, &b, w0, sizeof(w0));
	if (r > 0) {
		d->dialect = DAPHNE_DAPHNE;
	} else {
		r = try_daphne01(m, d, &b, w1, sizeof(w1));
		if (r > 0)
			d->dialect = DAPHNE_DAPHNE01;
	}
	if (r > 0) {
		d->blocks = mfs_model_alloc(m, sizeof(b));
		if (!d->blocks)
			return mfs_error(err, ENOMEM, "out of memory");
		d->blocks[0] = b;
		d->nblocks = 1;
		if (b.bt == DAPHNE_B_CSR && b.cntsize) {
			/* DAPHNE 0.1 rows: the size fit; the counts must too. */
			char why[96];
			b.rowent = mfs_model_alloc(m, ((size_t)b.rows + 1) * sizeof(*b.rowent));
			if (!b.rowent)
				return mfs_error(err, ENOMEM, "out of memory");
			if (!scan_csr_rows(m, &b, b.data, b.rowent, 0, why, sizeof(why)))
				return mfs_error(err, EINVAL, "DAPHNE 0.1 CSR: %s", why);
			d->blocks[0] = b;
		}
	} else {
		d->dialect = DAPHNE_SPEC;
		r = try_spec(m, d, w2, sizeof(w2), err);
		if (r < 0)
			return r;
		if (r == 0 && d->dt != DAPHNE_CSR)  /* DAPHNE 0.1 differs in sparse layouts only */
			return mfs_error(err, EINVAL,
					 "the file has %llu bytes and fits no dialect: DAPHNE: %s; spec: %s",
					 (unsigned long long)m->size, w0, w2);
		if (r == 0)
			return mfs_error(err, EINVAL,
					 "the file has %llu bytes and fits no dialect: DAPHNE: %s; DAPHNE 0.1: %s; spec: %s",
					 (unsigned long long)m->size, w0, w1, w2);
	}
	r = daphne_check_blocks(m, d, err);
	if (r < 0)
		return r;
	const struct daphne_block *b0 = &d->blocks[0];
	d->raw = d->nblocks == 1 && b0->bt == DAPHNE_B_DENSE && b0->rx == 0 && b0->cx == 0 &&
		 b0->rows == d->rows && b0->cols == d->cols && b0->dtype == d->dtype;
	uint64_t bytes;
	if (!mfs_mul_ok(nelem, d->esize, &bytes))
		return mfs_error(err, EFBIG, "%llu x %llu values of %u bytes: their size overflows",
				 (unsigned long long)d->rows, (unsigned long long)d->cols, d->esize);
	if (d->raw)
		return 0;
	/* A CSR matrix too large to show densely is shown by its entries
	 * (matrix.mtx); a dense one has no other view. */
	if (d->dt == DAPHNE_CSR) {
		d->nodense = !daphne_dense_fits(m, d->rows, d->cols);
		return 0;
	}
	return daphne_check_dense(m, d->rows, d->cols, err);
}
