/* Summary statistics of tensors (see stats.h): one streaming pass, blocks
 * of elements converted to double, per-block mean and M2 merged pairwise. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "guard.h"
#include "numtext.h"
#include "stats.h"
#include "tensor.h"

#define BLOCK 1024u             /* elements converted to double at a time */
#define READ_ELEMS (64u << 10)  /* elements read from the source at a time */

bool mfs_stats_supported(enum mfs_dtype dt)
{
	return mfs_dtype_info(dt)->stats;
}

void mfs_stats_init(struct mfs_stats *s, enum mfs_dtype dt)
{
	memset(s, 0, sizeof(*s));
	s->dtype = dt;
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	s->magnitude = di->kind == MFS_DK_COMPLEX;
	s->exact = di->kind == MFS_DK_SIGNED || di->kind == MFS_DK_UNSIGNED ||
		   di->kind == MFS_DK_BOOL;
	s->is_signed = di->kind == MFS_DK_SIGNED;
	s->imin = INT64_MAX;
	s->imax = INT64_MIN;
	s->umin = UINT64_MAX;
	s->umax = 0;
	s->min = INFINITY;
	s->max = -INFINITY;
	s->mean = s->std = NAN;
}

/* Fold a block's finite values (nb of them, mean mb, M2 m2b) into s. */
static void merge(struct mfs_stats *s, uint64_t nb, double mb, double m2b)
{
	if (!nb)
		return;
	if (!s->nfin) {
		s->nfin = nb;
		s->fmean = mb;
		s->m2 = m2b;
		return;
	}
	double na = (double)s->nfin, dnb = (double)nb, n = na + dnb;
	double delta = mb - s->fmean;
	s->fmean += delta * (dnb / n);
	s->m2 += m2b + delta * delta * (na * (dnb / n));
	s->nfin += nb;
}

/* k values (NaN and infinities included) into s. */
static void add_doubles(struct mfs_stats *s, const double *v, size_t k)
{
	double sum = 0;
	uint64_t nf = 0;
	for (size_t i = 0; i < k; i++) {
		double x = v[i];
		if (isnan(x)) {
			s->nan++;
			continue;
		}
		s->n++;
		if (x < s->min)
			s->min = x;
		if (x > s->max)
			s->max = x;
		if (isinf(x)) {
			if (x > 0)
				s->posinf++;
			else
				s->neginf++;
			continue;
		}
		sum += x;
		nf++;
	}
	if (!nf)
		return;
	if (isfinite(sum)) {
		/* Two passes over the block in memory. */
		double mb = sum / (double)nf, m2b = 0;
		for (size_t i = 0; i < k; i++) {
			double x = v[i];
			if (isfinite(x)) {
				double d = x - mb;
				m2b += d * d;
			}
		}
		merge(s, nf, mb, m2b);
		return;
	}
	/* The block's sum overflowed (values near the largest double): one
	 * element at a time. */
	for (size_t i = 0; i < k; i++)
		if (isfinite(v[i]))
			merge(s, 1, v[i], 0);
}

static void exact_i(struct mfs_stats *s, int64_t x)
{
	if (x < s->imin)
		s->imin = x;
	if (x > s->imax)
		s->imax = x;
}

static void exact_u(struct mfs_stats *s, uint64_t x)
{
	if (x < s->umin)
		s->umin = x;
	if (x > s->umax)
		s->umax = x;
}

/* k integers or bools of es bytes at p as doubles into v, and into the exact
 * min/max. */
static void exact_block(struct mfs_stats *s, const uint8_t *p, size_t k, unsigned es, double *v)
{
	bool is_bool = mfs_dtype_info(s->dtype)->kind == MFS_DK_BOOL;
	for (size_t i = 0; i < k; i++, p += es) {
		uint64_t u = es == 1 ? p[0] : es == 2 ? mfs_le16(p) : es == 4 ? mfs_le32(p)
									: mfs_le64(p);
		if (s->is_signed) {
			/* Sign-extend from es bytes. */
			unsigned sh = 64 - 8 * es;
			int64_t x = (int64_t)(u << sh) >> sh;
			exact_i(s, x);
			v[i] = (double)x;
		} else {
			if (is_bool)
				u = u != 0;
			exact_u(s, u);
			v[i] = (double)u;
		}
	}
}

void mfs_stats_add(struct mfs_stats *s, const void *elems, uint64_t count)
{
	if (!mfs_stats_supported(s->dtype))
		return;
	const struct mfs_dtype_info *di = mfs_dtype_info(s->dtype);
	unsigned es = di->size;
	const uint8_t *p = elems;
	double v[BLOCK];
	s->count += count;
	while (count) {
		size_t k = count < BLOCK ? (size_t)count : BLOCK;
		if (di->widen)
			di->widen(v, p, k);
		else
			exact_block(s, p, k, es, v);
		add_doubles(s, v, k);
		p += k * es;
		count -= k;
	}
}

void mfs_stats_add_zeros(struct mfs_stats *s, uint64_t count)
{
	if (!count)
		return;
	s->count += count;
	s->n += count;
	if (s->exact) {
		exact_i(s, 0);
		exact_u(s, 0);
	}
	if (0 < s->min)
		s->min = 0;
	if (0 > s->max)
		s->max = 0;
	merge(s, count, 0, 0);
}

void mfs_stats_finish(struct mfs_stats *s)
{
	if (!s->n) {
		s->mean = s->std = s->min = s->max = NAN;
		return;
	}
	if (s->exact) {
		/* The doubles are the exact values rounded. */
		s->min = s->is_signed ? (double)s->imin : (double)s->umin;
		s->max = s->is_signed ? (double)s->imax : (double)s->umax;
	}
	if (s->posinf && s->neginf) {
		s->mean = s->std = NAN;
	} else if (s->posinf || s->neginf) {
		s->mean = s->posinf ? INFINITY : -INFINITY;
		s->std = NAN;
	} else {
		s->mean = s->fmean;
		s->std = sqrt(s->m2 / (double)s->nfin);
	}
}

struct read_call {
	struct mfs_model *m;
	const struct mfs_tensor *t;
	uint64_t first, count;
	void *out;
	uint64_t *rows, *cols;  /* entries only */
	struct mfs_err *err;
};

static int read_dense(void *arg)
{
	struct read_call *c = arg;
	return mfs_tensor_read_storage(c->m, c->t, c->first, c->count, c->out, c->err);
}

static int read_entries(void *arg)
{
	struct read_call *c = arg;
	return c->t->ops->entries(c->m, c->t, c->first, c->count, c->rows, c->cols, c->out,
				  c->err);
}

int mfs_tensor_stats(struct mfs_model *m, const struct mfs_tensor *t, struct mfs_stats *s,
		     struct mfs_err *err)
{
	enum mfs_dtype dt = (enum mfs_dtype)t->dtype;
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	if (!mfs_stats_supported(dt)) {
		const char *name = dt == MFS_DT_OPAQUE && t->tname ? t->tname : di->name;
		if (dt == MFS_DT_CHAR8)
			return mfs_error(err, EINVAL, "a %s tensor is a string, not numbers", name);
		return mfs_error(err, EINVAL, "%s elements have no numeric value", name);
	}
	if (t->esize != di->size)
		return mfs_error(err, EINVAL, "internal error: %u-byte elements of %s", t->esize,
				 di->name);
	mfs_stats_init(s, dt);
	bool entries = (t->flags & MFS_TF_NODENSE) != 0;
	if (entries && (!t->ops || !t->ops->entries || t->nnz > t->nelem))
		return mfs_error(err, EIO, "internal error: sparse tensor without entries");
	uint64_t total = entries ? t->nnz : t->nelem;
	uint64_t per = total < READ_ELEMS ? total : READ_ELEMS;
	uint8_t *buf = malloc(per ? (size_t)(per * t->esize) : 1);
	uint64_t *rc = entries ? malloc(per ? (size_t)(2 * per * sizeof(uint64_t)) : 1) : NULL;
	int r = 0;
	if (!buf || (entries && !rc)) {
		r = mfs_error(err, ENOMEM, "out of memory");
		goto out;
	}
	for (uint64_t first = 0; first < total; first += per) {
		uint64_t k = total - first < per ? total - first : per;
		struct read_call c = {m, t, first, k, buf, rc, rc ? rc + per : NULL, err};
		r = mfs_guarded(entries ? read_entries : read_dense, &c, err);
		if (r < 0)
			goto out;
		mfs_stats_add(s, buf, k);
	}
	if (entries)
		mfs_stats_add_zeros(s, t->nelem - t->nnz);
	mfs_stats_finish(s);
out:
	free(buf);
	free(rc);
	return r;
}
