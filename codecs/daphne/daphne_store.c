/* DAPHNE .dbdf storage: the values of the whole matrix, of a block or of a
 * frame column read from the indexed blocks (dense, CSR, COO, empty; any
 * layout), where a value is stored, and value type conversion. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "bisect.h"
#include "bytes.h"
#include "daphne.h"

/* ---- value conversion ---------------------------------------------------- */

enum num_kind { NUM_S, NUM_U, NUM_F };

struct num {
	enum num_kind kind;
	int64_t i;
	uint64_t u;
	double f;
};

static struct num load(uint8_t dt, const void *p)
{
	struct num v = {NUM_S, 0, 0, 0};
	switch (dt) {
	case MFS_DT_I8: { int8_t x; memcpy(&x, p, 1); v.i = x; break; }
	case MFS_DT_I16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
	case MFS_DT_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
	case MFS_DT_I64: { int64_t x; memcpy(&x, p, 8); v.i = x; break; }
	case MFS_DT_U8: { uint8_t x; memcpy(&x, p, 1); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_U16: { uint16_t x; memcpy(&x, p, 2); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_U32: { uint32_t x; memcpy(&x, p, 4); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_U64: { uint64_t x; memcpy(&x, p, 8); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_F32: { float x; memcpy(&x, p, 4); v.kind = NUM_F; v.f = x; break; }
	case MFS_DT_F64: { double x; memcpy(&x, p, 8); v.kind = NUM_F; v.f = x; break; }
	default: break;
	}
	return v;
}

#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0

/* v as an int64 in [lo, hi]; false (and the nearest bound, or 0 for NaN)
 * when it is not exactly one. */
static bool to_signed(struct num v, int64_t lo, int64_t hi, int64_t *out)
{
	switch (v.kind) {
	case NUM_S:
		*out = v.i < lo ? lo : v.i > hi ? hi : v.i;
		return v.i >= lo && v.i <= hi;
	case NUM_U:
		*out = v.u > (uint64_t)hi ? hi : (int64_t)v.u;
		return v.u <= (uint64_t)hi;
	default:
		if (isnan(v.f)) {
			*out = 0;
			return false;
		}
		if (v.f < -TWO63 || v.f >= TWO63) {
			*out = v.f < 0 ? lo : hi;
			return false;
		}
		int64_t x = (int64_t)v.f;
		*out = x < lo ? lo : x > hi ? hi : x;
		return (double)x == v.f && x >= lo && x <= hi;
	}
}

static bool to_unsigned(struct num v, uint64_t hi, uint64_t *out)
{
	switch (v.kind) {
	case NUM_S:
		*out = v.i < 0 ? 0 : (uint64_t)v.i > hi ? hi : (uint64_t)v.i;
		return v.i >= 0 && (uint64_t)v.i <= hi;
	case NUM_U:
		*out = v.u > hi ? hi : v.u;
		return v.u <= hi;
	default:
		if (isnan(v.f) || v.f < 0 || v.f >= TWO64) {
			*out = isnan(v.f) || v.f < 0 ? 0 : hi;
			return v.f == 0;  /* -0 */
		}
		uint64_t x = (uint64_t)v.f;
		*out = x > hi ? hi : x;
		return (double)x == v.f && x <= hi;
	}
}

/* Whether the double d is exactly the value v. */
static bool same_value(double d, struct num v)
{
	switch (v.kind) {
	case NUM_S:
		return d >= -TWO63 && d < TWO63 && (int64_t)d == v.i;
	case NUM_U:
		return d >= 0 && d < TWO64 && (uint64_t)d == v.u;
	default:
		return d == v.f || (isnan(d) && isnan(v.f));
	}
}

bool dbdf_convert(uint8_t dst_dt, void *dst, uint8_t src_dt, const void *src)
{
	struct num v = load(src_dt, src);
	int64_t s = 0;
	uint64_t u = 0;
	bool ok, sig = true;
	unsigned n = mfs_dtype_info((enum mfs_dtype)dst_dt)->size;
	switch (dst_dt) {
	case MFS_DT_I8: ok = to_signed(v, INT8_MIN, INT8_MAX, &s); break;
	case MFS_DT_I16: ok = to_signed(v, INT16_MIN, INT16_MAX, &s); break;
	case MFS_DT_I32: ok = to_signed(v, INT32_MIN, INT32_MAX, &s); break;
	case MFS_DT_I64: ok = to_signed(v, INT64_MIN, INT64_MAX, &s); break;
	case MFS_DT_U8: ok = to_unsigned(v, UINT8_MAX, &u), sig = false; break;
	case MFS_DT_U16: ok = to_unsigned(v, UINT16_MAX, &u), sig = false; break;
	case MFS_DT_U32: ok = to_unsigned(v, UINT32_MAX, &u), sig = false; break;
	case MFS_DT_U64: ok = to_unsigned(v, UINT64_MAX, &u), sig = false; break;
	case MFS_DT_F64: {
		double d = v.kind == NUM_S ? (double)v.i : v.kind == NUM_U ? (double)v.u : v.f;
		memcpy(dst, &d, 8);
		return same_value(d, v);
	}
	case MFS_DT_F32: {
		double d = v.kind == NUM_S ? (double)v.i : v.kind == NUM_U ? (double)v.u : v.f;
		float f;
		if (isfinite(d) && fabs(d) > FLT_MAX)
			f = d < 0 ? -INFINITY : INFINITY;  /* out of range: no undefined cast */
		else
			f = (float)d;
		memcpy(dst, &f, 4);
		return same_value((double)f, v);
	}
	default:
		return false;
	}
	/* In range now: the low bytes are the value (little-endian). */
	if (sig)
		memcpy(dst, &s, n);
	else
		memcpy(dst, &u, n);
	return ok;
}

bool dbdf_is_zero(uint8_t dt, const void *v)
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

/* The row of CSR entry k: the last row starting at or before k. */
static uint64_t csr_row(const struct dbdf_block *b, uint64_t k)
{
	uint64_t lo = 0, hi = b->rows ? b->rows - 1 : 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (b->rowent[mid] <= k)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* Entry k of CSR row r: its value's offset and its column. */
static uint64_t csr_at(const struct mfs_model *m, const struct dbdf_block *b, uint64_t r,
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

uint64_t dbdf_entry(const struct mfs_model *m, const struct dbdf_block *b, uint64_t k,
		    uint64_t *row, uint64_t *col)
{
	switch (b->bt) {
	case DBDF_B_DENSE:
		*row = k / b->cols;
		*col = k % b->cols;
		return b->data + k * b->esize;
	case DBDF_B_CSR:
		*row = csr_row(b, k);
		return csr_at(m, b, *row, k, col);
	case DBDF_B_COO: {
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
	const struct dbdf_block *b;
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
	const struct dbdf_block *b;
	uint64_t key;
};

static bool coo_below(const void *ctx, uint64_t i)
{
	const struct coo_key *k = ctx;
	return k->b->cpos[i] < k->key;
}

/* First COO position >= key. */
static uint64_t coo_lower(const struct dbdf_block *b, uint64_t key)
{
	struct coo_key k = {b, key};
	return mfs_partition(b->nnz, coo_below, &k);
}

static uint64_t coo_value(const struct dbdf_block *b, uint64_t e)
{
	unsigned ix = b->nocol ? 4 : 8;
	return b->data + e * (ix + (uint64_t)b->esize) + ix;
}

int dbdf_block_locate(const struct mfs_model *m, const struct dbdf_block *b, uint64_t row,
		      uint64_t col, uint64_t *off)
{
	switch (b->bt) {
	case DBDF_B_DENSE:
		*off = b->data + (row * b->cols + col) * b->esize;
		return 1;
	case DBDF_B_CSR: {
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
	case DBDF_B_COO: {
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
	const struct dbdf *d;
	uint64_t r;
};

static bool byrow_below(const void *ctx, uint64_t i)
{
	const struct byrow_key *k = ctx;
	return k->d->blocks[k->d->byrow[i]].rx <= k->r;
}

/* Index in byrow of the first block starting below row r + 1. */
static uint32_t byrow_end(const struct dbdf *d, uint64_t r)
{
	struct byrow_key k = {d, r};
	return (uint32_t)mfs_partition(d->nbyrow, byrow_below, &k);
}

const struct dbdf_block *dbdf_find_block(const struct dbdf *d, uint64_t row, uint64_t col)
{
	for (uint32_t i = byrow_end(d, row); i-- > 0;) {
		const struct dbdf_block *b = &d->blocks[d->byrow[i]];
		if (b->rx + d->maxrows <= row)
			break;
		if (row < b->rx + b->rows && col >= b->cx && col < b->cx + b->cols)
			return b;
	}
	return NULL;
}

uint32_t dbdf_entry_block(const struct dbdf *d, uint64_t e)
{
	uint32_t lo = 0, hi = d->nblocks ? d->nblocks - 1 : 0;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo + 1) / 2;
		if (d->nzpre[mid] <= e)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
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
		dbdf_convert(w->dtype, o, dt, v);
}

/* The stored values of block b, placed at (prow, pcol), in window rows
 * [r0, r1]. */
static int win_block(struct win *w, const struct dbdf_block *b, uint64_t prow, uint64_t pcol,
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
		case DBDF_B_DENSE:
			for (uint64_t c = lo; c < hi; c++)
				win_put(w, prow + r, pcol + c, b->dtype,
					base + b->data + (r * b->cols + c) * b->esize);
			break;
		case DBDF_B_CSR:
			for (uint64_t k = b->rowent[r]; k < b->rowent[r + 1]; k++) {
				uint64_t c, off = csr_at(w->m, b, r, k, &c);
				if (c >= lo && c < hi)
					win_put(w, prow + r, pcol + c, b->dtype, base + off);
			}
			break;
		case DBDF_B_COO: {
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

static int read_window(const struct mfs_model *m, const struct dbdf *d, uint64_t wc0,
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
		const struct dbdf_block *b = &d->blocks[d->byrow[i]];
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
	const struct dbdf *d = m->priv;
	uint32_t i = DBDF_TAG_INDEX(t->tag);
	/* No view reads a tensor without a dense form (it has none): never
	 * render one. */
	if (t->flags & MFS_TF_NODENSE)
		return mfs_error(err, EIO,
				 "internal error: a dense read of a tensor shown by its entries only");
	switch (DBDF_TAG_KIND(t->tag)) {
	case DBDF_T_ROOT:
		return read_window(m, d, 0, d->cols, d->dtype, first, count, out, err);
	case DBDF_T_BLOCK: {
		const struct dbdf_block *b = &d->blocks[i];
		struct win w = {m, first, count, b->cols, 0, b->dtype, b->esize, out};
		memset(out, 0, (size_t)(count * b->esize));
		if (!count || !b->cols)
			return 0;
		return win_block(&w, b, 0, 0, first / b->cols, (first + count - 1) / b->cols, err);
	}
	case DBDF_T_COLUMN:
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
	const struct dbdf *d = m->priv;
	uint8_t *v = vals;
	unsigned es = t->esize;
	if (DBDF_TAG_KIND(t->tag) == DBDF_T_BLOCK) {
		const struct dbdf_block *b = &d->blocks[DBDF_TAG_INDEX(t->tag)];
		for (uint64_t i = 0; i < count; i++) {
			uint64_t off = dbdf_entry(m, b, first + i, &rows[i], &cols[i]);
			if (rows[i] >= b->rows || cols[i] >= b->cols)
				return changed(err);
			memcpy(v + i * es, m->base + off, es);
		}
		return 0;
	}
	/* The whole matrix: every block's stored values in file order. */
	uint32_t k = count ? dbdf_entry_block(d, first) : 0;
	for (uint64_t i = 0; i < count; i++) {
		uint64_t e = first + i;
		while (k + 1 < d->nblocks && e >= d->nzpre[k + 1])
			k++;
		const struct dbdf_block *b = &d->blocks[k];
		uint64_t off = dbdf_entry(m, b, e - d->nzpre[k], &rows[i], &cols[i]);
		if (rows[i] >= b->rows || cols[i] >= b->cols)
			return changed(err);
		rows[i] += b->rx;
		cols[i] += b->cx;
		if (b->dtype == d->dtype)
			memcpy(v + i * es, m->base + off, es);
		else
			dbdf_convert(d->dtype, v + i * es, b->dtype, m->base + off);
	}
	return 0;
}

const struct mfs_tensor_ops dbdf_ops = {
	.read = ops_read,
	.entries = ops_entries,
};
