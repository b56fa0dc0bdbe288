/* DAPHNE .dbdf edits as patches in the dialect the file came in: values in
 * place in whichever block stores them (exactly in the block's own value
 * type), a dense matrix with a new shape, and the .meta sidecar in step. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "daphne.h"
#include "numtext.h"

/* Consecutive value writes merged into spans. */
struct spans {
	struct mfs_patch *p;
	uint64_t off;
	struct mfs_buf b;
};

struct ed {
	struct mfs_model *m;
	struct daphne_file *d;
	const struct mfs_tensor *t;
	struct mfs_patch *p;
	struct mfs_err *err;
	struct spans s;
	bool track;        /* count the change in nonzero values (.meta numNonZeros) */
	int64_t nzdelta;
};

static int sp_flush(struct spans *s)
{
	if (s->b.len && mfs_patch_put(s->p, s->off, s->b.len, s->b.p, s->b.len) < 0)
		return -ENOMEM;
	s->b.len = 0;
	return 0;
}

static int sp_put(struct spans *s, uint64_t off, const void *v, size_t n)
{
	if (s->b.len && off != s->off + s->b.len && sp_flush(s) < 0)
		return -ENOMEM;
	if (!s->b.len)
		s->off = off;
	return mfs_buf_add(&s->b, v, n);
}

static void track(struct ed *x, uint8_t dt, const void *old, const void *new_)
{
	if (x->track)
		x->nzdelta += (int64_t)!daphne_is_zero(dt, new_) - (int64_t)!daphne_is_zero(dt, old);
}

/* Value v (the tensor's dtype) into a block of dtype bdt at off. */
static int put_value(struct ed *x, uint64_t off, uint8_t bdt, const uint8_t *v, uint32_t k,
		     uint64_t row, uint64_t col)
{
	uint8_t tmp[16];
	const uint8_t *w = v;
	if (bdt != x->t->dtype) {
		if (!mfs_dtype_convert(bdt, tmp, x->t->dtype, v)) {
			char num[MFS_NUM_MAX + 1];
			size_t n = mfs_fmt_elem(num, (enum mfs_dtype)x->t->dtype, v);
			return mfs_error(x->err, ERANGE,
					 "%.*s at (%llu, %llu) is not a %s value, the type block %u stores",
					 (int)n, num, (unsigned long long)row, (unsigned long long)col,
					 mfs_dtype_info((enum mfs_dtype)bdt)->name, k);
		}
		w = tmp;
	}
	unsigned es = mfs_dtype_info((enum mfs_dtype)bdt)->size;
	track(x, bdt, x->m->base + off, w);
	if (sp_put(&x->s, off, w, es) < 0)
		return mfs_error(x->err, ENOMEM, "out of memory");
	return 0;
}

static int not_stored(struct ed *x, const struct daphne_block *b, uint64_t row, uint64_t col)
{
	const struct daphne_file *d = x->d;
	if (!b)
		return mfs_error(x->err, EINVAL,
				 "(%llu, %llu) lies in no block of the file: it can only be 0",
				 (unsigned long long)row, (unsigned long long)col);
	uint32_t k = (uint32_t)(b - d->blocks);
	if (b->bt == DAPHNE_B_EMPTY)
		return mfs_error(x->err, EINVAL,
				 "(%llu, %llu) lies in empty block %u, which stores nothing: it can only be 0",
				 (unsigned long long)row, (unsigned long long)col, k);
	return mfs_error(x->err, EINVAL,
			 "(%llu, %llu) is not an entry of sparse block %u (the sparsity pattern cannot change)",
			 (unsigned long long)row, (unsigned long long)col, k);
}

/* DAPHNE frame column j: each run rewrites the records it spans, with only
 * the column's values changed. */
static int column_records(struct ed *x, uint32_t j, const struct mfs_edit *e)
{
	const struct daphne_file *d = x->d;
	unsigned es = d->csize[j];
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *r = &e->runs[i];
		if (!r->count)
			continue;
		uint64_t off = d->recs + r->first * d->recsize + d->coloff[j];
		uint64_t len = (r->count - 1) * d->recsize + es;
		uint8_t *buf = mfs_patch_alloc(x->p, off, len, len);
		if (!buf)
			return mfs_error(x->err, ENOMEM, "out of memory");
		memcpy(buf, x->m->base + off, (size_t)len);
		for (uint64_t k = 0; k < r->count; k++)
			memcpy(buf + k * d->recsize, (const uint8_t *)r->bytes + k * es, es);
	}
	return 0;
}

/* Elements of a tensor read through the blocks (the whole matrix, a frame
 * column, a sparse or empty block): each goes where it is stored; a nonzero
 * where nothing is stored cannot be written. */
static int elements(struct ed *x, const struct mfs_edit *e)
{
	const struct daphne_file *d = x->d;
	const struct mfs_tensor *t = x->t;
	unsigned kind = DAPHNE_TAG_KIND(t->tag);
	uint32_t ti = DAPHNE_TAG_INDEX(t->tag);
	if (kind == DAPHNE_T_COLUMN && d->coloff)
		return column_records(x, ti, e);
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *run = &e->runs[i];
		for (uint64_t n = 0; n < run->count; n++) {
			uint64_t idx = run->first + n, row, col, off;
			const uint8_t *v = (const uint8_t *)run->bytes + n * t->esize;
			const struct daphne_block *b;
			if (kind == DAPHNE_T_BLOCK) {
				b = &d->blocks[ti];
				row = idx / b->cols;
				col = idx % b->cols;
			} else {
				row = kind == DAPHNE_T_ROOT ? idx / d->cols : idx;
				col = kind == DAPHNE_T_ROOT ? idx % d->cols : ti;
				b = daphne_find_block(d, row, col);
			}
			uint64_t br = kind == DAPHNE_T_BLOCK || !b ? row : row - b->rx;
			uint64_t bc = kind == DAPHNE_T_BLOCK || !b ? col : col - b->cx;
			if (!b || !daphne_block_locate(x->m, b, br, bc, &off)) {
				if (daphne_is_zero(t->dtype, v))
					continue;
				return not_stored(x, b, row, col);
			}
			int r = put_value(x, off, b->dtype, v, (uint32_t)(b - d->blocks), row, col);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* Stored entries of a sparse tensor (a block, or the whole CSR matrix). */
static int entries(struct ed *x, const struct mfs_edit *e)
{
	const struct daphne_file *d = x->d;
	const struct mfs_tensor *t = x->t;
	bool whole = DAPHNE_TAG_KIND(t->tag) == DAPHNE_T_ROOT;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *run = &e->runs[i];
		if (run->first > t->nnz || run->count > t->nnz - run->first)
			return mfs_error(x->err, EINVAL, "internal error: entries beyond the tensor");
		uint32_t k = whole ? daphne_entry_block(d, run->first) : DAPHNE_TAG_INDEX(t->tag);
		for (uint64_t n = 0; n < run->count; n++) {
			uint64_t ent = run->first + n, row, col;
			if (whole)
				while (k + 1 < d->nblocks && ent >= d->nzpre[k + 1])
					k++;
			const struct daphne_block *b = &d->blocks[k];
			uint64_t off = daphne_entry(x->m, b, whole ? ent - d->nzpre[k] : ent, &row, &col);
			if (row >= b->rows || col >= b->cols)
				return mfs_error(x->err, EIO, "the file changed since it was indexed");
			int r = put_value(x, off, b->dtype, (const uint8_t *)run->bytes + n * t->esize, k,
					  row + (whole ? b->rx : 0), col + (whole ? b->cx : 0));
			if (r < 0)
				return r;
		}
	}
	return 0;
}

static int raw_runs(struct ed *x, const struct mfs_edit *e)
{
	const struct mfs_tensor *t = x->t;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *r = &e->runs[i];
		if (r->first > t->nelem || r->count > t->nelem - r->first)
			return mfs_error(x->err, EINVAL, "internal error: run beyond the tensor");
		uint64_t bytes = r->count * t->esize, off = t->off + r->first * t->esize;
		for (uint64_t k = 0; x->track && k < r->count; k++)
			track(x, t->dtype, x->m->base + off + k * t->esize,
			      (const uint8_t *)r->bytes + k * t->esize);
		if (mfs_patch_ref(x->p, off, bytes, r->bytes, bytes) < 0)
			return mfs_error(x->err, ENOMEM, "out of memory");
	}
	return 0;
}

static int set_sidecar(struct ed *x, const struct daphne_meta_set *set)
{
	uint8_t *out;
	size_t len;
	int r = daphne_meta_rewrite(x->m->sidecar, x->m->sidecar_len, set, &out, &len, x->err);
	if (r < 0)
		return r;
	r = mfs_patch_set_sidecar(x->p, out, len);
	free(out);
	return r < 0 ? mfs_error(x->err, ENOMEM, "out of memory") : 0;
}

/* Nonzero values the file stores now (for numNonZeros of a dense matrix). */
static uint64_t count_nonzero(const struct mfs_model *m, const struct daphne_file *d)
{
	uint64_t n = 0;
	for (uint32_t k = 0; k < d->nblocks; k++) {
		const struct daphne_block *b = &d->blocks[k];
		for (uint64_t e = 0; e < b->nnz; e++) {
			uint64_t row, col, off = daphne_entry(m, b, e, &row, &col);
			n += !daphne_is_zero(b->dtype, m->base + off);
		}
	}
	return n;
}

/* The whole matrix again with a new shape: the header's and the block's
 * dimensions and all values, one block of the same type (the only layout
 * that can be reshaped). */
static int reshape(struct ed *x, const struct mfs_edit *e)
{
	const struct mfs_tensor *t = x->t;
	const struct daphne_file *d = x->d;
	const struct daphne_block *b = &d->blocks[0];
	char sh[MFS_SHAPE_TEXT];
	if (e->dtype != t->dtype)
		return mfs_error(x->err, EINVAL, "the array is %s, expected %s (the matrix keeps its value type)",
				 mfs_dtype_info(e->dtype)->name,
				 mfs_dtype_info((enum mfs_dtype)t->dtype)->name);
	if (e->ndim != 2)
		return mfs_error(x->err, EINVAL, "the array has shape %s, expected 2 dimensions (a DAPHNE matrix)",
				 mfs_shape_text(sh, e->ndim, e->dims));
	uint64_t R = e->dims[0], C = e->dims[1], n, bytes;
	if (R > UINT32_MAX || C > UINT32_MAX)
		return mfs_error(x->err, EINVAL, "%llu x %llu: a block holds at most %u rows and columns",
				 (unsigned long long)R, (unsigned long long)C, UINT32_MAX);
	if (!mfs_mul_ok(R, C, &n) || !mfs_mul_ok(n, t->esize, &bytes))
		return mfs_error(x->err, EINVAL, "%llu x %llu elements overflow", (unsigned long long)R,
				 (unsigned long long)C);
	uint8_t *h = mfs_patch_alloc(x->p, 2, 16, 16);
	uint8_t *bh = mfs_patch_alloc(x->p, b->head, 8, 8);
	if (!h || !bh)
		return mfs_error(x->err, ENOMEM, "out of memory");
	mfs_put_le64(h, R);
	mfs_put_le64(h + 8, C);
	mfs_put_le32(bh, (uint32_t)R);
	mfs_put_le32(bh + 4, (uint32_t)C);
	uint64_t old = t->nelem * t->esize;
	const uint8_t *body;
	if (e->nruns == 1 && e->runs[0].first == 0 && e->runs[0].count == n) {
		body = e->runs[0].bytes;
		if (mfs_patch_ref(x->p, b->data, old, body, bytes) < 0)
			return mfs_error(x->err, ENOMEM, "out of memory");
	} else {
		uint8_t *nb = mfs_patch_alloc(x->p, b->data, old, bytes);
		if (!nb)
			return mfs_error(x->err, ENOMEM, "out of memory");
		uint64_t covered = 0;
		for (size_t i = 0; i < e->nruns; i++) {
			const struct mfs_run *r = &e->runs[i];
			if (r->first > n || r->count > n - r->first)
				return mfs_error(x->err, EINVAL, "internal error: run beyond the tensor");
			memcpy(nb + r->first * t->esize, r->bytes, (size_t)(r->count * t->esize));
			covered += r->count;
		}
		if (covered != n)
			return mfs_error(x->err, EINVAL, "internal error: a new shape without every value");
		body = nb;
	}
	if (!x->m->has_sidecar)
		return 0;
	struct daphne_meta_set set = {.set_rows = true, .set_cols = true, .rows = R, .cols = C};
	if (daphne_meta_has(x->m->sidecar, x->m->sidecar_len, "numNonZeros")) {
		set.set_nnz = true;
		for (uint64_t i = 0; i < n; i++)
			set.nnz += !daphne_is_zero(t->dtype, body + i * t->esize);
	}
	return set_sidecar(x, &set);
}

int daphne_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err)
{
	struct daphne_file *d = m->priv;
	if (e->kind == MFS_E_TEXT)
		return mfs_error(err, EACCES, "%s is read-only", m->nodes[e->node].name);
	if (e->tensor >= m->ntensors)
		return mfs_error(err, EINVAL, "internal error: no such tensor");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	struct ed x = {.m = m, .d = d, .t = t, .p = p, .err = err, .s = {.p = p}};
	/* A tensor too large to show densely changes through matrix.mtx only:
	 * by its entries, never element by element. */
	if ((t->flags & MFS_TF_NODENSE) && (e->kind != MFS_E_ENTRIES || e->reshape))
		return mfs_error(err, EINVAL,
				 "this sparse matrix has no dense form: only its entries (matrix.mtx) can change");
	if (e->reshape && (t->flags & MFS_TF_RESHAPE))
		return reshape(&x, e);
	if (e->reshape) {
		bool same = e->dtype == t->dtype && e->ndim == t->ndim;
		for (uint32_t i = 0; same && i < e->ndim; i++)
			same = e->dims[i] == t->dims[i];
		char sh[MFS_SHAPE_TEXT], osh[MFS_SHAPE_TEXT];
		if (!same)
			return mfs_error(err, EINVAL,
					 "the array has shape %s, expected %s (only a dense matrix stored in one block can change its shape)",
					 mfs_shape_text(sh, e->ndim, e->dims),
					 mfs_shape_text(osh, t->ndim, t->dims));
	}
	/* A hand-written .meta may count a dense matrix's nonzeros: keep it
	 * right (DAPHNE counts the stored entries of a CSR matrix, which
	 * value edits do not change). */
	x.track = d->dt == DAPHNE_DENSE && m->has_sidecar &&
		  daphne_meta_has(m->sidecar, m->sidecar_len, "numNonZeros");
	int r;
	if (!t->ops)
		r = raw_runs(&x, e);
	else if (e->kind == MFS_E_ENTRIES)
		r = entries(&x, e);
	else
		r = elements(&x, e);
	if (r == 0 && sp_flush(&x.s) < 0)
		r = mfs_error(err, ENOMEM, "out of memory");
	mfs_buf_free(&x.s.b);
	if (r < 0 || !x.track || x.nzdelta == 0)
		return r;
	struct daphne_meta_set set = {.set_nnz = true};
	set.nnz = (uint64_t)((int64_t)count_nonzero(m, d) + x.nzdelta);
	return set_sidecar(&x, &set);
}
