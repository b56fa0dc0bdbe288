/* values.txt text to element values: the tokenizer, and the one parse of
 * each value, either early (mfs_view_check_prefix, at each write: the values
 * are kept in the check state) or at the commit (what no check saw). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bigbuf.h"
#include "bytes.h"
#include "numtext.h"
#include "pool.h"
#include "view_impl.h"

/* Blanks (space, tab, CR, LF) and commas separate values. */
static const uint8_t is_sep[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [','] = 1};

#define SEP(c) (is_sep[(unsigned char)(c)])

bool mfs_next_token(struct mfs_tokens *t, const char **tok, size_t *n)
{
	const char *s = t->s;
	size_t i = t->pos, len = t->len;
	while (i < len && SEP(s[i]))
		i++;
	if (i == len) {
		t->pos = i;
		return false;
	}
	size_t st = i;
	while (i < len && !SEP(s[i]))
		i++;
	*tok = s + st;
	*n = i - st;
	t->pos = i;
	return true;
}

/* Where logical element i of t is, for a message: "value 3, line 1", or
 * "value 3 at [0, 2], line 1" (the index as NumPy's, from 0). */
static const char *value_where(char out[160], const struct mfs_tensor *t, uint64_t i,
			       uint64_t line)
{
	int k = snprintf(out, 160, "value %llu", (unsigned long long)i + 1);
	if (t->ndim >= 2 && i < t->nelem && t->ndim <= 8) {
		uint64_t idx[8], rest = i;
		for (uint32_t d = t->ndim; d-- > 0;) {
			idx[d] = t->dims[d] ? rest % t->dims[d] : 0;
			rest = t->dims[d] ? rest / t->dims[d] : 0;
		}
		k += snprintf(out + k, (size_t)(160 - k), " at [");
		for (uint32_t d = 0; d < t->ndim && k < 120; d++)
			k += snprintf(out + k, (size_t)(160 - k), "%s%llu", d ? ", " : "",
				      (unsigned long long)idx[d]);
		k += snprintf(out + k, (size_t)(160 - k), "]");
	}
	snprintf(out + k, (size_t)(160 - k), ", line %llu", (unsigned long long)line);
	return out;
}

/* "expected 24 values for shape 2 3 4, got 23" and what to do instead; line:
 * where the first value too many is (0: the count is final). */
static int count_error(struct mfs_err *err, const struct mfs_tensor *t, uint64_t got,
		       uint64_t line)
{
	char sh[MFS_SHAPE_TEXT], at[64] = "";
	bool hint = t->flags & MFS_TF_RESHAPE;
	if (line)
		snprintf(at, sizeof(at), "value %llu is on line %llu%s", (unsigned long long)got,
			 (unsigned long long)line, hint ? "; " : "");
	return mfs_error(err, EINVAL, "expected %llu value%s for shape %s, got %s%llu%s%s%s%s",
			 (unsigned long long)t->nelem, t->nelem == 1 ? "" : "s",
			 mfs_shape_text(sh, t->ndim, t->dims), line ? "at least " : "",
			 (unsigned long long)got, line || hint ? " (" : "", at,
			 hint ? "the shape changes through data.npy only" : "", line || hint ? ")" : "");
}

/* A parse in progress: values [0, count) are at vals, which has room for
 * limit (the tensor's nelem, or less for a part of a parallel parse). */
struct piece {
	const struct mfs_tensor *t;
	uint8_t *vals;
	uint64_t limit;
	uint64_t count;     /* values so far (beyond limit: counted only) */
	uint64_t lines;     /* newlines so far */
	bool stop_over;     /* a value beyond limit is refused at once (early check) */
};

/* Parse the values of [p, e), which ends at a separator or at the end of the
 * text. dt is a constant where this is inlined: one loop per float type. */
static inline __attribute__((always_inline)) int
parse_loop(struct piece *pc, enum mfs_dtype dt, const char *p, const char *e, struct mfs_err *err)
{
	const struct mfs_tensor *t = pc->t;
	unsigned es = t->esize;
	uint64_t count = pc->count, lines = pc->lines, limit = pc->limit;
	uint8_t *vals = pc->vals;
	int r = 0;
	for (;;) {
		while (p < e && SEP(*p)) {
			lines += *p == '\n';
			p++;
		}
		if (p == e)
			break;
		const char *q = NULL;
		if (dt == MFS_DT_F32 && count < limit) {
			/* The common case in bulk; then one value as below. */
			uint64_t nl;
			size_t max = limit - count > SIZE_MAX ? SIZE_MAX : (size_t)(limit - count);
			size_t got = mfs_parse_f32_run(p, e, is_sep, vals + count * 4, max, &p, &nl);
			count += got;
			lines += nl;
			if (got)
				continue;
		}
		if (count >= limit) {
			if (pc->stop_over) {
				r = count_error(err, t, count + 1, lines + 1);
				break;
			}
		} else if (dt == MFS_DT_F32) {
			float v;
			uint32_t u;
			if ((q = mfs_parse_f32_prefix(p, e, &v)) != NULL) {
				memcpy(&u, &v, 4);
				mfs_put_le32(vals + count * 4, u);
			}
		} else if (dt == MFS_DT_F64) {
			double v;
			uint64_t u;
			if ((q = mfs_parse_f64_prefix(p, e, &v)) != NULL) {
				memcpy(&u, &v, 8);
				mfs_put_le64(vals + count * 8, u);
			}
		}
		if (!q || (q < e && !SEP(*q))) {
			/* Anything else: the whole token, for the exact answer. */
			q = p;
			while (q < e && !SEP(*q))
				q++;
			int pr = count < limit ? mfs_parse_elem(dt, p, (size_t)(q - p), vals + count * es)
					       : 0;
			if (pr < 0) {
				char where[160];
				value_where(where, t, count, lines + 1);
				r = mfs_value_error(err, pr, dt, p, (size_t)(q - p), where);
				break;
			}
		}
		count++;
		p = q;
	}
	pc->count = count;
	pc->lines = lines;
	return r;
}

static int parse_piece(struct piece *pc, const char *s, size_t len, struct mfs_err *err)
{
	switch ((enum mfs_dtype)pc->t->dtype) {
	case MFS_DT_F32:
		return parse_loop(pc, MFS_DT_F32, s, s + len, err);
	case MFS_DT_F64:
		return parse_loop(pc, MFS_DT_F64, s, s + len, err);
	default:
		return parse_loop(pc, (enum mfs_dtype)pc->t->dtype, s, s + len, err);
	}
}

/* --- Large pieces on every core ------------------------------------------- */

#define PART_MIN 16384   /* bytes of text worth handing to another thread */
#define PARTS_MAX 16

/* A large piece is cut at separators into parts. The caller parses them in
 * order, straight into its piece; workers of the pool take parts from the
 * back, each into a buffer of its own from count 0 and line 0, which the
 * caller appends when it gets there. So a busy machine costs no waiting:
 * the caller waits only for a part a worker is parsing. A worker refuses
 * anything unusual; the caller then parses that part again itself, for the
 * exact message. */
enum { PART_FREE, PART_CALLER, PART_WORKER, PART_DONE };

struct part {
	const char *s;
	size_t len;
	struct piece pc;    /* a worker's parse */
	int r;
	int state;
};

struct group {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned refs;      /* the caller and each job not finished */
	unsigned n;
	struct part parts[PARTS_MAX];
};

static void group_free(struct group *g)
{
	for (unsigned k = 0; k < g->n; k++)
		free(g->parts[k].pc.vals);
	pthread_mutex_destroy(&g->lock);
	pthread_cond_destroy(&g->cond);
	free(g);
}

/* Drop a reference; g->lock is held and released. */
static void group_put(struct group *g)
{
	bool last = --g->refs == 0;
	pthread_mutex_unlock(&g->lock);
	if (last)
		group_free(g);
}

static void worker_job(void *arg, struct mfs_buf *scratch)
{
	(void)scratch;
	struct group *g = arg;
	pthread_mutex_lock(&g->lock);
	for (;;) {
		unsigned k = g->n;
		while (k > 0 && g->parts[k - 1].state != PART_FREE)
			k--;
		if (k == 0)
			break;
		struct part *p = &g->parts[k - 1];
		p->state = PART_WORKER;
		pthread_mutex_unlock(&g->lock);
		uint64_t room = p->len / 2 + 1;  /* a value takes two bytes at least */
		p->pc.vals = malloc((size_t)(room * p->pc.t->esize));
		p->pc.limit = room;
		struct mfs_err err = {0};
		p->r = p->pc.vals ? parse_piece(&p->pc, p->s, p->len, &err) : -ENOMEM;
		pthread_mutex_lock(&g->lock);
		p->state = PART_DONE;
		pthread_cond_broadcast(&g->cond);
	}
	group_put(g);
}

/* parse_piece of [s, s + len), which ends at a separator or at the end: the
 * same values, counts, lines and first error, on several threads when it
 * is large. */
static int parse_parallel(struct mfs_runtime *rt, struct piece *pc, const char *s, size_t len,
			  struct mfs_err *err)
{
	unsigned workers = mfs_pool_size(rt), n = (unsigned)(len / PART_MIN);
	if (n > PARTS_MAX)
		n = PARTS_MAX;
	if (workers < 2 || n < 2)
		return parse_piece(pc, s, len, err);
	struct group *g = calloc(1, sizeof(*g));
	if (!g)
		return parse_piece(pc, s, len, err);
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	g->refs = 1;
	g->n = n;
	size_t at = 0;
	for (unsigned k = 0; k < n; k++) {
		/* Part k ends at a separator near (k + 1) * len / n. */
		size_t end = k + 1 == n ? len : (size_t)((uint64_t)len * (k + 1) / n);
		if (end < at)
			end = at;
		while (end < len && !SEP(s[end]))
			end++;
		g->parts[k] = (struct part){s + at, end - at, {pc->t, NULL, 0, 0, 0, true}, 0,
					    k ? PART_FREE : PART_CALLER};
		at = end;
	}
	/* One job per worker but the caller's own core. */
	for (unsigned w = 1; w < workers; w++) {
		pthread_mutex_lock(&g->lock);
		g->refs++;
		pthread_mutex_unlock(&g->lock);
		if (mfs_pool_submit(rt, worker_job, g) < 0) {
			pthread_mutex_lock(&g->lock);
			g->refs--;
			pthread_mutex_unlock(&g->lock);
			break;
		}
	}
	unsigned es = pc->t->esize;
	int r = 0;
	for (unsigned k = 0; k < n; k++) {
		struct part *p = &g->parts[k];
		pthread_mutex_lock(&g->lock);
		if (p->state == PART_FREE)
			p->state = PART_CALLER;
		while (p->state == PART_WORKER)
			pthread_cond_wait(&g->cond, &g->lock);  /* it reads s: wait even after an error */
		pthread_mutex_unlock(&g->lock);
		if (r < 0)
			continue;
		if (p->state == PART_CALLER || p->r < 0 || pc->count > pc->limit ||
		    p->pc.count > pc->limit - pc->count) {
			r = parse_piece(pc, p->s, p->len, err);
		} else {
			memcpy(pc->vals + pc->count * es, p->pc.vals, (size_t)(p->pc.count * es));
			pc->count += p->pc.count;
			pc->lines += p->pc.lines;
		}
	}
	pthread_mutex_lock(&g->lock);
	group_put(g);
	return r;
}

void mfs_check_reset(struct mfs_check *st)
{
	mfs_big_free(st->vals, st->cap);
	*st = (struct mfs_check){0};
}

/* Room at st->vals for want values (at most t's nelem). */
static bool reserve(struct mfs_check *st, const struct mfs_tensor *t, uint64_t want)
{
	if (want > t->nelem)
		want = t->nelem;
	uint64_t need = want * t->esize;
	if (need <= st->cap)
		return true;
	uint64_t cap = st->cap ? st->cap : 65536;
	while (cap < need)
		cap *= 2;
	if (cap > t->nelem * t->esize)
		cap = t->nelem * t->esize;
	if (cap > SIZE_MAX)
		return false;
	uint8_t *v = mfs_big_resize(st->vals, st->cap, (size_t)cap);  /* no copy when large */
	if (!v)
		return false;
	st->vals = v;
	st->cap = (size_t)cap;
	return true;
}

int mfs_values_check(struct mfs_runtime *rt, const struct mfs_tensor *t, const char *text,
		     size_t len, struct mfs_check *st, struct mfs_err *err)
{
	/* Only values followed by a separator are complete. */
	size_t end = len;
	while (end > 0 && !SEP(text[end - 1]))
		end--;
	if (end == 0)
		return 0;
	if (st->off == 0) {
		st->dtype = t->dtype;
		st->nelem = t->nelem;
	}
	/* A value takes two bytes at least, its separator included. */
	if (st->dtype != t->dtype || st->nelem != t->nelem ||
	    !reserve(st, t, st->count + end / 2 + 1)) {
		mfs_check_reset(st);  /* not the values of this tensor: the commit parses */
		return 0;
	}
	struct piece pc = {t, st->vals, t->nelem, st->count, st->lines, true};
	int r = parse_parallel(rt, &pc, text, end, err);
	if (r < 0)
		return r;
	st->off += end;
	st->count = pc.count;
	st->lines = pc.lines;
	return 0;
}

int mfs_values_parse(struct mfs_runtime *rt, const struct mfs_tensor *t,
		     const struct mfs_content *c, uint8_t **vals, uint8_t **owned,
		     struct mfs_err *err)
{
	struct mfs_check *st = c->checked;
	bool reuse = st && st->off && st->off <= c->size && st->dtype == t->dtype &&
		     st->nelem == t->nelem && st->count <= t->nelem && reserve(st, t, t->nelem) &&
		     st->vals;  /* (none for a tensor of no elements) */
	uint64_t from = reuse ? st->off : 0;
	uint8_t *v = reuse ? st->vals : malloc((size_t)(t->nelem * t->esize) + 1);
	*owned = reuse ? NULL : v;
	if (!v)
		return mfs_error(err, ENOMEM, "out of memory");
	/* What no check saw, in place when it can be. */
	size_t len = (size_t)(c->size - from);
	const char *text = len && c->peek ? c->peek(c->ctx, from, len) : NULL;
	char *copy = NULL;
	if (len && !text) {
		copy = malloc(len);
		if (!copy)
			return mfs_error(err, ENOMEM, "out of memory");
		if (c->read(c->ctx, from, len, copy) < 0) {
			free(copy);
			return mfs_error(err, EIO, "cannot read the written content");
		}
		text = copy;
	}
	struct piece pc = {t, v, t->nelem, reuse ? st->count : 0, reuse ? st->lines : 0, false};
	int r = len ? parse_parallel(rt, &pc, text, len, err) : 0;
	free(copy);
	if (r == 0 && pc.count != t->nelem)
		r = count_error(err, t, pc.count, 0);
	*vals = v;
	return r;
}
