/* Column-major tensors in custom storage (a compressed stream, which reads
 * fast in order and slowly anywhere else) read in row-major order: by bands
 * of logical elements, each filled by one pass over the storage in order
 * and shared by a model's threads.
 *
 * Logically the tensor is a d0 x M matrix (M the product of the other
 * dims); logical element (i, L) is storage element i + d0 * q, where q is
 * the column-major index of the multi-index whose row-major index is L (for
 * 2-D, q = L). So storage comes in runs of d0 elements, one logical column
 * each. A band holds rows [a, a + nr) x columns [c0, c0 + w) of that matrix,
 * row-major, where either nr == 1 or w == M: a range of logical elements.
 * Bands sit on a fixed grid, so that threads asking for nearby elements
 * wait for the same band rather than each passing over the stream; a pass
 * also fills the band after the one asked for when a slot is free (a
 * sequential reader wants it next), which halves the passes. A band
 * is freed once as many elements were copied out of it as it holds: the
 * readers of a text view read each element once (the text is kept, or
 * rendered again from the start), and a model holds no memory after.
 *
 * A pass runs inside its own mfs_guarded(): a source that faults on the
 * way (a file truncated under the mount) fails the band, and the readers
 * waiting for it go on, instead of waiting for a band nobody fills. Called
 * inside mfs_guarded(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ahead.h"
#include "bands.h"
#include "guard.h"
#include "model_impl.h"
#include "tensor.h"

/* Where a band's elements go in a pass: rows [a, a + nr) x columns [c0,
 * c0 + w) of the d0 x M matrix, held by storage elements [s0, s1). */
struct target {
	uint64_t a, nr, c0, w;
	uint64_t s0, s1;
	uint8_t *buf;
};

/* One pass filling one band or more. */
struct pass {
	const struct mfs_model *m;
	const struct mfs_tensor *t;
	uint64_t d0;
	struct target g[MFS_NBANDS];
	unsigned ng;
	uint64_t piece_elems;
	uint8_t *piece;
	struct mfs_err *err;
};

/* The band of t holding logical element first, on the grid: logical
 * elements [*lo, *hi). */
static void band_of(const struct mfs_tensor *t, uint64_t bytes, uint64_t first, uint64_t *lo,
		    uint64_t *hi)
{
	uint64_t d0 = t->dims[0], M = t->nelem / d0, i = first / M;
	uint64_t cap = bytes / t->esize ? bytes / t->esize : 1;
	if (M <= cap) {
		uint64_t nr = cap / M, a = i / nr * nr;
		*lo = a * M;
		*hi = (a + nr < d0 ? a + nr : d0) * M;
	} else {
		uint64_t c0 = first % M / cap * cap;
		*lo = i * M + c0;
		*hi = i * M + (c0 + cap < M ? c0 + cap : M);
	}
}

/* The logical column L of storage column q: q's multi-index over the dims
 * after the first (column-major), read row-major. */
static uint64_t column_of(const struct mfs_tensor *t, uint64_t q)
{
	uint64_t L = 0;
	for (uint32_t k = 1; k < t->ndim; k++) {  /* q's digits, dims[1] first */
		L = L * t->dims[k] + q % t->dims[k];
		q /= t->dims[k];
	}
	return L;
}

/* Copy what band g holds of storage elements [s, s + n), in in. */
static void scatter(const struct pass *p, const struct target *g, uint64_t s, uint64_t n,
		    const uint8_t *in)
{
	unsigned es = p->t->esize;
	uint64_t d0 = p->d0, end = s + n;
	while (s < end) {
		uint64_t q = s / d0, i = s % d0;
		uint64_t cend = (q + 1) * d0 < end ? (q + 1) * d0 : end;
		if (p->t->ndim == 2 && i == 0 && cend == (q + 1) * d0) {
			/* Whole columns q..q+k-1 (2-D: column q is logical column
			 * q): one tiled transpose of what falls in the band. */
			uint64_t k = (end - s) / d0;
			uint64_t qa = q > g->c0 ? q : g->c0;
			uint64_t qb = q + k < g->c0 + g->w ? q + k : g->c0 + g->w;
			if (qa < qb)
				mfs_transpose(in + ((qa - q) * d0 + g->a) * es, d0,
					      g->buf + (qa - g->c0) * es, g->w, qb - qa, g->nr, es);
			in += k * d0 * es;
			s += k * d0;
			continue;
		}
		/* A column, or part of one: its rows in the band, w apart. */
		uint64_t L = column_of(p->t, q);
		uint64_t ia = i > g->a ? i : g->a;
		uint64_t ib = cend - q * d0 < g->a + g->nr ? cend - q * d0 : g->a + g->nr;
		if (L >= g->c0 && L < g->c0 + g->w && ia < ib)
			mfs_transpose(in + (ia - i) * es, 0, g->buf + ((ia - g->a) * g->w + L - g->c0) * es,
				      g->w, 1, ib - ia, es);
		in += (cend - s) * es;
		s = cend;
	}
}

static int run_pass(void *arg)
{
	const struct pass *p = arg;
	uint64_t s0 = p->g[0].s0, s1 = p->g[0].s1;
	for (unsigned k = 1; k < p->ng; k++) {
		s0 = p->g[k].s0 < s0 ? p->g[k].s0 : s0;
		s1 = p->g[k].s1 > s1 ? p->g[k].s1 : s1;
	}
	/* More than one piece: read ahead on a thread of its own, the
	 * stream's pieces inflated while the ones before are scattered. */
	struct mfs_ahead *a = s1 - s0 > p->piece_elems
				      ? mfs_ahead_start(p->m, p->t, s0, s1, p->piece_elems) : NULL;
	int r = 0;
	for (uint64_t s = s0; s < s1 && r == 0;) {
		uint64_t n = s1 - s < p->piece_elems ? s1 - s : p->piece_elems;
		const uint8_t *in = p->piece;
		if (a)
			in = mfs_ahead_next(a, &n, &r, p->err);
		else
			r = mfs_tensor_read_storage(p->m, p->t, s, n, p->piece, p->err);
		for (unsigned k = 0; r == 0 && k < p->ng; k++)
			scatter(p, &p->g[k], s, n, in);
		s += n;
	}
	mfs_ahead_stop(a);
	return r;
}

/* Band b's place in a pass over t's storage. */
static void target_of(const struct mfs_tensor *t, const struct mfs_band *b, struct target *g)
{
	uint64_t d0 = t->dims[0], M = t->nelem / d0;
	*g = (struct target){.a = b->lo / M, .c0 = b->lo % M, .s1 = t->nelem, .buf = b->buf};
	if (b->hi - b->lo > M - g->c0) {  /* whole rows */
		g->nr = (b->hi - b->lo) / M;
		g->w = M;
	} else {
		g->nr = 1;
		g->w = b->hi - b->lo;
		if (t->ndim == 2) {  /* columns [c0, c0 + w) only: one stretch of storage */
			g->s0 = g->c0 * d0;
			g->s1 = (g->c0 + g->w) * d0;
		}
	}
}

/* Fill bands b[0..n) of t in one pass. */
static int fill(const struct mfs_model *m, const struct mfs_tensor *t, struct mfs_band *const *b,
		unsigned n, uint64_t piece_bytes, struct mfs_err *err)
{
	unsigned es = t->esize;
	struct pass p = {.m = m, .t = t, .d0 = t->dims[0], .ng = n, .err = err};
	for (unsigned k = 0; k < n; k++)
		target_of(t, b[k], &p.g[k]);
	/* Pieces of whole columns when a column fits. */
	p.piece_elems = piece_bytes / es ? piece_bytes / es : 1;
	if (p.d0 <= p.piece_elems)
		p.piece_elems = p.piece_elems / p.d0 * p.d0;
	p.piece = malloc((size_t)(p.piece_elems * es));
	if (!p.piece)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = mfs_guarded(run_pass, &p, err);
	free(p.piece);
	return r;
}

/* Make v the band of t holding element first, and an unused band the one
 * after it (a sequential reader wants it next: one pass fills both):
 * filled without the lock, the waiting readers woken when done (or
 * failed). Under bs->lock. */
static int claim(const struct mfs_model *m, struct mfs_bands *bs, struct mfs_band *v,
		 const struct mfs_tensor *t, uint64_t first, struct mfs_err *err)
{
	struct mfs_band *mine[MFS_NBANDS] = {v}, *next;
	unsigned n = 1;
	uint64_t lo, hi;
	band_of(t, bs->band_bytes, first, &lo, &hi);
	if (mfs_band_take(v, t, lo, hi) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	while (n < MFS_NBANDS && hi < t->nelem && !mfs_band_find(bs, t, hi, 1, true) &&
	       (next = mfs_band_slot(bs, true))) {
		band_of(t, bs->band_bytes, hi, &lo, &hi);
		if (mfs_band_take(next, t, lo, hi) < 0)
			break;
		mine[n++] = next;
	}
	uint64_t piece_bytes = bs->piece_bytes;
	pthread_mutex_unlock(&bs->lock);
	int r = fill(m, t, mine, n, piece_bytes, err);
	pthread_mutex_lock(&bs->lock);
	for (unsigned k = 0; k < n; k++)
		mfs_band_filled(bs, mine[k], r == 0);
	pthread_cond_broadcast(&bs->done);
	return r;
}

int mfs_colstream_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			 uint64_t count, uint8_t *out, struct mfs_err *err)
{
	struct mfs_bands *bs = m->impl->sbands;
	unsigned es = t->esize;
	int r = 0;
	pthread_mutex_lock(&bs->lock);
	while (count && r == 0) {
		struct mfs_band *b = mfs_band_find(bs, t, first, 1, true);
		if (b && b->ready) {
			uint64_t n = b->hi - first < count ? b->hi - first : count;
			mfs_band_copy(bs, b, first, n, out);
			if (b->served >= b->hi - b->lo)
				mfs_band_clear(b);  /* each element is read once */
			out += n * es;
			first += n;
			count -= n;
		} else if (b || !(b = mfs_band_slot(bs, false))) {
			pthread_cond_wait(&bs->done, &bs->lock);  /* a band being filled */
		} else {
			r = claim(m, bs, b, t, first, err);
		}
	}
	pthread_mutex_unlock(&bs->lock);
	return r;
}
