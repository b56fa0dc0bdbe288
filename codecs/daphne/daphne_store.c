/* DAPHNE .dbdf storage: the values of the whole matrix, of a block or of a
 * frame column read from the indexed blocks (dense, CSR, COO, empty; any
 * layout) and where a value is stored. */
#include <errno.h>
#include <string.h>

#include "bisect.h"
#include "bytes.h"
#include "daphne.h"

bool daphne_is_zero(uint8_t dt, const void *v)
{
	if (dt == MFS_DT_F32) {
		float f;
		memcpy(&f, v, 4);
		return f == 0;
	}
	if (dt == MFS_DT_F64) {
		double f;
		memcpy(&f, v, 8);
		return f == 0;
	}
	static const uint8_t zero[32];
	unsigned n = mfs_dtype_info((enum mfs_dtype)dt)->size;
	return memcmp(v, zero, n ? n : 1) == 0;
}

/* ---- where values are ---------------------------------------------------- */

struct row_key {
	const uint64_t *starts;
	uint64_t k;
};

static bool starts_at_or_before(const void *ctx, uint64_t i)
{
	const struct row_key *rk = ctx;
	return rk->starts[i] <= rk->k;
}

/* The last of starts[0, n) (ascending) at or before k, 0 if none. */
static uint64_t last_at_or_before(const uint64_t *starts, uint64_t n, uint64_t k)
{
	struct row_key rk = {starts, k};
	uint64_t i = mfs_partition(n, starts_at_or_before, &rk);
	return i ? i - 1 : 0;
}

/* The row of CSR entry k: the last row starting at or before k. */
static uint64_t csr_row(const struct daphne_block *b, uint64_t k)
{
	return last_at_or_before(b->rowent, b->rows, k);
}

/* Entry k of CSR row r: its value's offset and its column. */
static uint64_t csr_at(const struct mfs_model *m, const struct daphne_block *b, uint64_t r,
		       uint64_t k, uint64_t *col)
{
	if (!b->cntsize) {
		*col = mfs_le64(m->base + b->cidx + 8 * k);
		return b->vals + k * b->esize;
	}
	uint64_t off = b->data + b->cntsize * (r + 1) + k * (b->ixsize + (uint64_t)b->esize);
	*col = b->ixsize == 4 ? mfs_le32(m->base + off) : mfs_le64(m->base + off);
	return off + b->ixsize;
}

uint64_t daphne_entry(const struct mfs_model *m, const struct daphne_block *b, uint64_t k,
		      uint64_t *row, uint64_t *col)
{
	switch (b->bt) {
	case DAPHNE_B_DENSE:
		*row = k / b->cols;
		*col = k % b->cols;
		return b->data + k * b->esize;
	case DAPHNE_B_CSR:
		*row = csr_row(b, k);
		return csr_at(m, b, *row, k, col);
	case DAPHNE_B_COO: {
		unsigned ix = b->nocol ? 4 : 8;
		uint64_t off = b->data + k * (ix + (uint64_t)b->esize);
		*row = mfs_le32(m->base + off);
		*col = b->nocol ? 0 : mfs_le32(m->base + off + 4);
		return off + ix;
	}
	default:
		*row = *col = UINT64_MAX;
		return UINT64_MAX;
	}
}

struct csr_key {
	const struct mfs_model *m;
	const struct daphne_block *b;
	uint64_t row, col, lo;
};

/* Entry lo + i of row k->row has a column below k->col. */
static bool csr_below(const void *ctx, uint64_t i)
{
	const struct csr_key *k = ctx;
	uint64_t c;
	csr_at(k->m, k->b, k->row, k->lo + i, &c);
	return c < k->col;
}

struct coo_key {
	const struct daphne_block *b;
	uint64_t key;
};

static bool coo_below(const void *ctx, uint64_t i)
{
	const struct coo_key *k = ctx;
	return k->b->cpos[i] < k->key;
}

/* First COO position >= key. */
static uint64_t coo_lower(const struct daphne_block *b, uint64_t key)
{
	struct coo_key k = {b, key};
	return mfs_partition(b->nnz, coo_below, &k);
}

static uint64_t coo_value(const struct daphne_block *b, uint64_t e)
{
	unsigned ix = b->nocol ? 4 : 8;
	return b->data + e * (ix + (uint64_t)b->esize) + ix;
}

int daphne_block_locate(const struct mfs_model *m, const struct daphne_block *b, uint64_t row,
			uint64_t col, uint64_t *off)
{
	switch (b->bt) {
	case DAPHNE_B_DENSE:
		*off = b->data + (row * b->cols + col) * b->esize;
		return 1;
	case DAPHNE_B_CSR: {
		/* Column indices are increasing within a row (checked). */
		struct csr_key k = {m, b, row, col, b->rowent[row]};
		uint64_t n = b->rowent[row + 1] - k.lo;
		uint64_t i = k.lo + mfs_partition(n, csr_below, &k), c;
		if (i == k.lo + n)
			return 0;
		uint64_t o = csr_at(m, b, row, i, &c);
		if (c != col)
			return 0;
		*off = o;
		return 1;
	}
	case DAPHNE_B_COO: {
		uint64_t key = row * b->cols + col, i = coo_lower(b, key);
		if (i < b->nnz && b->cpos[i] == key) {
			*off = coo_value(b, b->cent[i]);
			return 1;
		}
		return 0;
	}
	default:
		return 0;
	}
}

struct byrow_key {
	const struct daphne_file *d;
	uint64_t r;
};

static bool byrow_below(const void *ctx, uint64_t i)
{
	const struct byrow_key *k = ctx;
	return k->d->blocks[k->d->byrow[i]].rx <= k->r;
}

/* Index in byrow of the first block starting below row r + 1. */
static uint32_t byrow_end(const struct daphne_file *d, uint64_t r)
{
	struct byrow_key k = {d, r};
	return (uint32_t)mfs_partition(d->nbyrow, byrow_below, &k);
}

const struct daphne_block *daphne_find_block(const struct daphne_file *d, uint64_t row, uint64_t col)
{
	for (uint32_t i = byrow_end(d, row); i-- > 0;) {
		const struct daphne_block *b = &d->blocks[d->byrow[i]];
		if (b->rx + d->maxrows <= row)
			break;
		if (row < b->rx + b->rows && col >= b->cx && col < b->cx + b->cols)
			return b;
	}
	return NULL;
}

uint32_t daphne_entry_block(const struct daphne_file *d, uint64_t e)
{
	return (uint32_t)last_at_or_before(d->nzpre, d->nblocks, e);
}

/* ---- reading a window of values ------------------------------------------ */

/* Elements [first, first + count) of a row-major window: the object's rows,
 * and `width` of its columns from wc0 (all of them for the matrix, one for a
 * frame column), as values of dtype. */
struct win {
	const struct mfs_model *m;
	uint64_t first, count, width, wc0;
	uint8_t dtype, es;
	uint8_t *out;
};

static void win_put(struct win *w, uint64_t row, uint64_t col, uint8_t dt, const uint8_t *v)
{
	uint64_t g = row * w->width + (col - w->wc0);
	if (g < w->first || g - w->first >= w->count)
		return;
	uint8_t *o = w->out + (g - w->first) * w->es;
	if (dt == w->dtype)
		memcpy(o, v, w->es);
	else
		mfs_dtype_convert(w->dtype, o, dt, v);
}

/* The stored values of block b, placed at (prow, pcol), in window rows
 * [r0, r1]. */
static int win_block(struct win *w, const struct daphne_block *b, uint64_t prow, uint64_t pcol,
		     uint64_t r0, uint64_t r1, struct mfs_err *err)
{
	uint64_t rend = r1 + 1 < prow + b->rows ? r1 + 1 : prow + b->rows;
	uint64_t cend = w->wc0 + w->width < pcol + b->cols ? w->wc0 + w->width : pcol + b->cols;
	uint64_t ra = (r0 > prow ? r0 : prow) - prow, rb = rend - prow;
	uint64_t ca = (w->wc0 > pcol ? w->wc0 : pcol) - pcol, cb = cend - pcol;
	if (rend <= prow || cend <= pcol || ra >= rb || ca >= cb)
		return 0;
	const uint8_t *base = w->m->base;
	uint64_t end = w->first + w->count;
	for (uint64_t r = ra; r < rb; r++) {
		/* Only the columns whose window index is in [first, end). */
		uint64_t g0 = (prow + r) * w->width + (pcol + ca - w->wc0);
		if (g0 >= end)
			break;
		uint64_t lo = ca, hi = cb;
		if (g0 < w->first)
			lo = w->first - g0 >= cb - ca ? cb : ca + (w->first - g0);
		if (end - g0 < cb - ca)
			hi = ca + (end - g0);
		switch (b->bt) {
		case DAPHNE_B_DENSE:
			for (uint64_t c = lo; c < hi; c++)
				win_put(w, prow + r, pcol + c, b->dtype,
					base + b->data + (r * b->cols + c) * b->esize);
			break;
		case DAPHNE_B_CSR:
			for (uint64_t k = b->rowent[r]; k < b->rowent[r + 1]; k++) {
				uint64_t c, off = csr_at(w->m, b, r, k, &c);
				if (c >= lo && c < hi)
					win_put(w, prow + r, pcol + c, b->dtype, base + off);
			}
			break;
		case DAPHNE_B_COO: {
			uint64_t key = r * b->cols;
			for (uint64_t i = coo_lower(b, key + lo); i < b->nnz && b->cpos[i] < key + hi; i++)
				win_put(w, prow + r, pcol + b->cpos[i] - key, b->dtype,
					base + coo_value(b, b->cent[i]));
			break;
		}
		default:
			break;
		}
	}
	(void)err;
	return 0;
}

static int read_window(const struct mfs_model *m, const struct daphne_file *d, uint64_t wc0,
		       uint64_t width, uint8_t dtype, uint64_t first, uint64_t count, void *out,
		       struct mfs_err *err)
{
	struct win w = {m, first, count, width, wc0, dtype,
			mfs_dtype_info((enum mfs_dtype)dtype)->size, out};
	memset(out, 0, (size_t)(count * w.es));
	if (!count || !width)
		return 0;
	uint64_t r0 = first / width, r1 = (first + count - 1) / width;
	for (uint32_t i = byrow_end(d, r1); i-- > 0;) {
		const struct daphne_block *b = &d->blocks[d->byrow[i]];
		if (b->rx + d->maxrows <= r0)
			break;  /* sorted by rx: no later block reaches r0 */
		int r = win_block(&w, b, b->rx, b->cx, r0, r1, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- the storage ops ------------------------------------------------------ */

static int changed(struct mfs_err *err)
{
	return mfs_error(err, EIO, "the file changed since it was indexed");
}

static int ops_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		    uint64_t count, void *out, struct mfs_err *err)
{
	const struct daphne_file *d = m->priv;
	uint32_t i = DAPHNE_TAG_INDEX(t->tag);
	/* No view reads a tensor without a dense form (it has none): never
	 * render one. */
	if (t->flags & MFS_TF_NODENSE)
		return mfs_error(err, EIO,
				 "internal error: a dense read of a tensor shown by its entries only");
	switch (DAPHNE_TAG_KIND(t->tag)) {
	case DAPHNE_T_ROOT:
		return read_window(m, d, 0, d->cols, d->dtype, first, count, out, err);
	case DAPHNE_T_BLOCK: {
		const struct daphne_block *b = &d->blocks[i];
		struct win w = {m, first, count, b->cols, 0, b->dtype, b->esize, out};
		memset(out, 0, (size_t)(count * b->esize));
		if (!count || !b->cols)
			return 0;
		return win_block(&w, b, 0, 0, first / b->cols, (first + count - 1) / b->cols, err);
	}
	case DAPHNE_T_COLUMN:
		if (d->coloff) {
			/* DAPHNE: row-interleaved packed records */
			unsigned es = d->csize[i];
			uint64_t off = d->recs + first * d->recsize + d->coloff[i];
			for (uint64_t k = 0; k < count; k++, off += d->recsize)
				memcpy((uint8_t *)out + k * es, m->base + off, es);
			return 0;
		}
		return read_window(m, d, i, 1, d->cdtype[i], first, count, out, err);
	default:
		return changed(err);
	}
}

static int ops_entries(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		       uint64_t count, uint64_t *rows, uint64_t *cols, void *vals,
		       struct mfs_err *err)
{
	const struct daphne_file *d = m->priv;
	uint8_t *v = vals;
	unsigned es = t->esize;
	if (DAPHNE_TAG_KIND(t->tag) == DAPHNE_T_BLOCK) {
		const struct daphne_block *b = &d->blocks[DAPHNE_TAG_INDEX(t->tag)];
		for (uint64_t i = 0; i < count; i++) {
			uint64_t off = daphne_entry(m, b, first + i, &rows[i], &cols[i]);
			if (rows[i] >= b->rows || cols[i] >= b->cols)
				return changed(err);
			memcpy(v + i * es, m->base + off, es);
		}
		return 0;
	}
	/* The whole matrix: every block's stored values in file order. */
	uint32_t k = count ? daphne_entry_block(d, first) : 0;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t e = first + i;
		while (k + 1 < d->nblocks && e >= d->nzpre[k + 1])
			k++;
		const struct daphne_block *b = &d->blocks[k];
		uint64_t off = daphne_entry(m, b, e - d->nzpre[k], &rows[i], &cols[i]);
		if (rows[i] >= b->rows || cols[i] >= b->cols)
			return changed(err);
		rows[i] += b->rx;
		cols[i] += b->cx;
		if (b->dtype == d->dtype)
			memcpy(v + i * es, m->base + off, es);
		else
			mfs_dtype_convert(d->dtype, v + i * es, b->dtype, m->base + off);
	}
	return 0;
}

const struct mfs_tensor_ops daphne_ops = {
	.read = ops_read,
	.entries = ops_entries,
};
