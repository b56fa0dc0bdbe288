/* Chunked text views: a fixed head plus chunks rendered on demand, with the
 * byte offset of every chunk learnt as chunks are rendered. The exact size
 * needs one pass over everything, spread over the machine's cores. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisect.h"
#include "guard.h"
#include "pool.h"
#include "view_impl.h"

/* Per open file: windows of consecutive chunks, rendered ahead of a
 * sequential reader by the worker pool (so that a large view streams on
 * every core), or the one chunk a random read needed. */
#define WIN_CHUNKS 16   /* chunks per window read ahead */
#define AHEAD 4         /* windows in flight or waiting ahead of the reader */

enum { W_FREE, W_BUSY, W_READY, W_FAILED };

struct win {
	uint64_t k0, n;                 /* chunks [k0, k0 + n) */
	struct mfs_buf buf;             /* their text, back to back */
	uint64_t lens[WIN_CHUNKS];
	int state;
	struct mfs_err err;
};

struct mfs_rcache {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct mfs_chunked *key;        /* the view the windows belong to */
	struct mfs_model *m;
	struct win w[AHEAD + 1];
	uint64_t next_k;                /* first chunk not scheduled ahead yet */
	uint64_t last_k;                /* chunk of the last read (sequential detection) */
	int busy;                       /* windows being rendered by workers */
	mfs_hold_fn hold, release;      /* around a worker's render (may be NULL) */
	void *hold_arg;
	struct mfs_buf scratch;         /* the renders of the reader's own thread */
};

void mfs_rcache_hold(struct mfs_rcache *rc, mfs_hold_fn hold, mfs_hold_fn release, void *arg)
{
	rc->hold = hold;
	rc->release = release;
	rc->hold_arg = arg;
}

struct mfs_rcache *mfs_rcache_new(void)
{
	struct mfs_rcache *rc = calloc(1, sizeof(*rc));
	if (rc) {
		pthread_mutex_init(&rc->lock, NULL);
		pthread_cond_init(&rc->cond, NULL);
		rc->last_k = UINT64_MAX;
	}
	return rc;
}

/* Wait for the workers; caller holds rc->lock. */
static void quiesce(struct mfs_rcache *rc)
{
	while (rc->busy)
		pthread_cond_wait(&rc->cond, &rc->lock);
}

void mfs_rcache_free(struct mfs_rcache *rc)
{
	if (!rc)
		return;
	pthread_mutex_lock(&rc->lock);
	quiesce(rc);
	pthread_mutex_unlock(&rc->lock);
	for (int i = 0; i <= AHEAD; i++)
		mfs_buf_free(&rc->w[i].buf);
	mfs_buf_free(&rc->scratch);
	pthread_mutex_destroy(&rc->lock);
	pthread_cond_destroy(&rc->cond);
	free(rc);
}

int mfs_chunked_init(struct mfs_chunked *c, const void *obj, mfs_chunk_fn render,
		     uint64_t nchunks, const char *head, size_t head_len)
{
	memset(c, 0, sizeof(*c));
	if (nchunks > (SIZE_MAX / sizeof(uint64_t)) - 1)
		return -ENOMEM;
	c->offs = malloc((size_t)(nchunks + 1) * sizeof(uint64_t));
	c->head = malloc(head_len ? head_len : 1);
	if (!c->offs || !c->head) {
		free(c->offs);
		free(c->head);
		return -ENOMEM;
	}
	memcpy(c->head, head, head_len);
	c->head_len = head_len;
	c->obj = obj;
	c->render = render;
	c->nchunks = nchunks;
	c->offs[0] = 0;
	c->known = 0;
	c->sized = nchunks == 0;
	pthread_mutex_init(&c->lock, NULL);
	pthread_mutex_init(&c->size_lock, NULL);
	return 0;
}

void mfs_chunked_destroy(struct mfs_chunked *c)
{
	if (!c->offs)
		return;
	mfs_keep_drop(c);
	pthread_mutex_destroy(&c->lock);
	pthread_mutex_destroy(&c->size_lock);
	free(c->offs);
	free(c->head);
	c->offs = NULL;
}

/* Record that chunk k has len bytes, if k's start is known. */
static void learn(struct mfs_chunked *c, uint64_t k, uint64_t len)
{
	pthread_mutex_lock(&c->lock);
	if (k == c->known) {
		c->offs[k + 1] = c->offs[k] + len;
		c->known = k + 1;
		if (c->known == c->nchunks)
			c->sized = true;
	}
	pthread_mutex_unlock(&c->lock);
}

/* ---- the full pass for the size, on several threads ---------------------- */

struct pass {
	struct mfs_model *m;
	struct mfs_chunked *c;
	uint64_t from;                          /* first chunk to measure */
	uint64_t *lens;                         /* lens[k - from] */
	struct mfs_buf bufs[MFS_THREADS_MAX];   /* rendering: each thread's text, */
	struct mfs_buf scratch[MFS_THREADS_MAX]; /* and its renderer's scratch */
	uint32_t *acc[MFS_THREADS_MAX];         /* measuring: each thread's chunk lengths */
};

/* Item i: with the view's measurer, slice i of the work, added into thread
 * t's counts; else chunk i, rendered for its length. */
static int measure_item(void *ctx, unsigned t, uint64_t i, struct mfs_err *err)
{
	struct pass *p = ctx;
	struct mfs_chunked *c = p->c;
	if (c->measure)
		return c->measure(p->m, c->obj, i, c->nparts, p->acc[t], err);
	struct mfs_buf *b = &p->bufs[t];
	b->len = 0;
	int r = c->render(p->m, c->obj, i, b, &p->scratch[t], err);
	if (r < 0)
		return r;
	p->lens[i - p->from] = b->len;
	return 0;
}

/* The lengths of chunks [p->from, nchunks) into p->lens: measured (every
 * chunk, in slices, each thread counting apart) or rendered. */
static int measure_all(struct pass *p, struct mfs_err *err)
{
	struct mfs_chunked *c = p->c;
	bool measured = c->measure != NULL;
	uint64_t from = measured ? 0 : p->from, to = measured ? c->nparts : c->nchunks;
	unsigned nthr = to - from >= (measured ? 2 : 4) ? mfs_pass_threads(to - from) : 1;
	unsigned n = nthr;
	if (measured)
		for (n = 0; n < nthr; n++)
			if (!(p->acc[n] = calloc((size_t)c->nchunks, sizeof(uint32_t))))
				break;
	int r = n ? mfs_parallel_for(from, to, n, measure_item, p, err)
		  : mfs_error(err, ENOMEM, "out of memory");
	if (measured) {
		/* threads not started left their counts at 0 */
		for (uint64_t k = 0; k < c->nchunks; k++) {
			uint64_t sum = 0;
			for (unsigned t = 0; t < n; t++)
				sum += p->acc[t][k];
			p->lens[k] = sum;
		}
		for (unsigned t = 0; t < n; t++)
			free(p->acc[t]);
	}
	for (unsigned t = 0; t < nthr; t++) {
		mfs_buf_free(&p->bufs[t]);
		mfs_buf_free(&p->scratch[t]);
	}
	return r;
}

/* Every chunk's length at once when c->zeros knows all but a few (the
 * chunks sharing a block with data): those few are rendered here. 1 when
 * sized, 0 when the full pass is needed. */
static int zeros_pass(struct mfs_model *m, struct mfs_chunked *c, struct mfs_err *err)
{
	uint64_t *lens = malloc((size_t)c->nchunks * sizeof(uint64_t));
	if (!lens)
		return 0;
	uint64_t unknown = c->zeros(m, c->obj, lens);
	int r = unknown <= c->nchunks / 8 ? 1 : 0;
	struct mfs_buf b = {0}, scratch = {0};
	for (uint64_t k = 0; k < c->nchunks && unknown && r > 0; k++) {
		if (lens[k] != MFS_LEN_UNKNOWN)
			continue;
		b.len = 0;
		r = c->render(m, c->obj, k, &b, &scratch, err);
		lens[k] = b.len;
		unknown--;
		r = r < 0 ? r : 1;
	}
	mfs_buf_free(&b);
	mfs_buf_free(&scratch);
	if (r > 0) {
		pthread_mutex_lock(&c->lock);
		for (uint64_t k = c->known; k < c->nchunks; k++)
			c->offs[k + 1] = c->offs[k] + lens[k];
		c->known = c->nchunks;
		c->sized = true;
		pthread_mutex_unlock(&c->lock);
	}
	free(lens);
	return r;
}

/* The pass itself, if still needed (caller holds c->size_lock). */
static int size_pass(struct mfs_model *m, struct mfs_chunked *c, struct mfs_err *err)
{
	pthread_mutex_lock(&c->lock);
	bool sized = c->sized;
	uint64_t from = c->known;
	pthread_mutex_unlock(&c->lock);
	if (!sized && c->zeros) {
		int r = zeros_pass(m, c, err);
		if (r != 0)
			return r < 0 ? r : 0;
	}
	if (!sized && from == 0) {
		int r = mfs_keep_pass(m, c, err);
		if (r < 0)
			return r;
		sized = r == 0;
	}
	if (sized)
		return 0;
	/* Measured: every chunk, in slices. Rendered: the chunks not known
	 * yet. */
	struct pass p = {.m = m, .c = c, .from = c->measure ? 0 : from};
	p.lens = malloc((size_t)(c->nchunks - p.from) * sizeof(uint64_t));
	if (!p.lens)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = measure_all(&p, err);
	if (r < 0) {
		free(p.lens);
		return r;
	}
	pthread_mutex_lock(&c->lock);
	for (uint64_t k = c->known; k < c->nchunks; k++)
		c->offs[k + 1] = c->offs[k] + p.lens[k - p.from];
	c->known = c->nchunks;
	c->sized = true;
	pthread_mutex_unlock(&c->lock);
	free(p.lens);
	return 0;
}

int mfs_chunked_size(struct mfs_model *m, struct mfs_chunked *c, uint64_t *size,
		     struct mfs_err *err)
{
	pthread_mutex_lock(&c->lock);
	bool sized = c->sized;
	pthread_mutex_unlock(&c->lock);
	if (!sized) {
		/* One pass at a time: a second caller (two stats, a stat and
		 * cat's fstat) waits for the first one's result. */
		pthread_mutex_lock(&c->size_lock);
		int r = size_pass(m, c, err);
		pthread_mutex_unlock(&c->size_lock);
		if (r < 0)
			return r;
	}
	pthread_mutex_lock(&c->lock);
	*size = c->head_len + c->offs[c->nchunks];
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* ---- reading ---------------------------------------------------------------- */

struct render_job {
	struct mfs_rcache *rc;
	struct mfs_chunked *c;
	struct win *w;
	struct mfs_buf *scratch;        /* the worker's */
};

static int render_win_fn(void *arg)
{
	struct render_job *j = arg;
	struct win *w = j->w;
	w->buf.len = 0;
	if (j->c->render_n)
		return j->c->render_n(j->rc->m, j->c->obj, w->k0, w->n, &w->buf, w->lens, j->scratch,
				      &w->err);
	for (uint64_t i = 0; i < w->n; i++) {
		size_t before = w->buf.len;
		int r = j->c->render(j->rc->m, j->c->obj, w->k0 + i, &w->buf, j->scratch, &w->err);
		if (r < 0)
			return r;
		w->lens[i] = w->buf.len - before;
	}
	return 0;
}

static void render_job(void *arg, struct mfs_buf *scratch)
{
	struct render_job *j = arg;
	j->scratch = scratch;
	/* What the caller holds while it reads (the source unchanged under
	 * it), the worker holds while it renders for the reader. */
	if (j->rc->hold)
		j->rc->hold(j->rc->hold_arg);
	int r = mfs_guarded(render_win_fn, j, &j->w->err);
	if (j->rc->release)
		j->rc->release(j->rc->hold_arg);
	pthread_mutex_lock(&j->rc->lock);
	j->w->state = r < 0 ? W_FAILED : W_READY;
	j->rc->busy--;
	pthread_cond_broadcast(&j->rc->cond);
	pthread_mutex_unlock(&j->rc->lock);
	free(j);
}

/* The window holding chunk k, or NULL. Caller holds rc->lock. */
static struct win *find_win(struct mfs_rcache *rc, uint64_t k)
{
	for (int i = 0; i <= AHEAD; i++) {
		struct win *w = &rc->w[i];
		if (w->state != W_FREE && k >= w->k0 && k < w->k0 + w->n)
			return w;
	}
	return NULL;
}

/* A window slot to reuse: free, or ready and behind the reader. */
static struct win *spare_win(struct mfs_rcache *rc, uint64_t k)
{
	struct win *best = NULL;
	for (int i = 0; i <= AHEAD; i++) {
		struct win *w = &rc->w[i];
		if (w->state == W_FREE)
			return w;
		if ((w->state == W_READY || w->state == W_FAILED) && w->k0 + w->n <= k &&
		    (!best || w->k0 < best->k0))
			best = w;
	}
	if (best)
		best->state = W_FREE;
	return best;
}

/* Keep AHEAD windows in flight after chunk k. Caller holds rc->lock. */
static void read_ahead(struct mfs_rcache *rc, struct mfs_chunked *c, uint64_t k)
{
	if (rc->next_k <= k)
		rc->next_k = k + 1;
	while (rc->next_k < c->nchunks && rc->next_k < k + 1 + (uint64_t)AHEAD * WIN_CHUNKS) {
		struct win *w = spare_win(rc, k);
		struct render_job *j = w ? malloc(sizeof(*j)) : NULL;
		if (!j)
			return;
		w->k0 = rc->next_k;
		w->n = c->nchunks - w->k0 < WIN_CHUNKS ? c->nchunks - w->k0 : WIN_CHUNKS;
		w->state = W_BUSY;
		*j = (struct render_job){rc, c, w, NULL};
		rc->busy++;
		if (mfs_pool_submit(rc->m->rt, render_job, j) < 0) {
			rc->busy--;
			w->state = W_FREE;
			free(j);
			return;
		}
		rc->next_k += w->n;
	}
}

/* The text of chunk k (pointer into rc, valid under rc->lock until the next
 * call), rendered now or taken from the windows read ahead. */
static int get_chunk(struct mfs_model *m, struct mfs_chunked *c, uint64_t k,
		     struct mfs_rcache *rc, const char **text, uint64_t *len, struct mfs_err *err)
{
	if (rc->key != c || rc->m != m) {
		quiesce(rc);
		for (int i = 0; i <= AHEAD; i++)
			rc->w[i].state = W_FREE;
		rc->key = c;
		rc->m = m;
		rc->next_k = 0;
		rc->last_k = UINT64_MAX;
	}
	/* Two reads in a row make a sequential reader (one read, as from
	 * `head -c 100`, renders one chunk and touches nothing more). */
	bool sequential = rc->last_k != UINT64_MAX && (k == rc->last_k || k == rc->last_k + 1);
	rc->last_k = k;
	if (sequential && c->nchunks > WIN_CHUNKS && mfs_pool_size(m->rt) > 1)
		read_ahead(rc, c, k);
	struct win *w = find_win(rc, k);
	while (w && w->state == W_BUSY) {
		pthread_cond_wait(&rc->cond, &rc->lock);
		w = find_win(rc, k);
	}
	if (w && w->state == W_FAILED) {
		if (err)
			*err = w->err;
		w->state = W_FREE;
		return -(w->err.code ? w->err.code : EIO);
	}
	if (!w) {
		/* Not read ahead: render just this chunk, here. */
		w = spare_win(rc, k);
		if (!w) {
			/* every slot is ahead of a reader that jumped back */
			quiesce(rc);
			for (int i = 0; i <= AHEAD; i++)
				rc->w[i].state = W_FREE;
			rc->next_k = 0;
			w = &rc->w[0];
		}
		w->k0 = k;
		w->n = 1;
		w->buf.len = 0;
		int r = c->render(m, c->obj, k, &w->buf, &rc->scratch, err);
		if (r < 0)
			return r;
		w->lens[0] = w->buf.len;
		w->state = W_READY;
	}
	uint64_t pos = 0;
	for (uint64_t i = w->k0; i < k; i++)
		pos += w->lens[i - w->k0];
	/* What the reader learns about chunk lengths, in order. */
	for (uint64_t i = w->k0; i <= k; i++)
		learn(c, i, w->lens[i - w->k0]);
	*text = w->buf.p + pos;
	*len = w->lens[k - w->k0];
	return 0;
}

struct chunk_key {
	const struct mfs_chunked *c;
	uint64_t body;
};

/* Chunk i + 1 starts at or before the offset. */
static bool chunk_below(const void *ctx, uint64_t i)
{
	const struct chunk_key *k = ctx;
	return k->c->offs[i + 1] <= k->body;
}

/* The chunk of [0, known) holding body offset body: the last one starting
 * at or before it (chunk 0 starts at 0). Caller holds c->lock. */
static uint64_t chunk_of(const struct mfs_chunked *c, uint64_t known, uint64_t body)
{
	struct chunk_key k = {c, body};
	return mfs_partition(known - 1, chunk_below, &k);
}

ssize_t mfs_chunked_read(struct mfs_model *m, struct mfs_chunked *c, uint64_t off,
			 size_t len, char *buf, struct mfs_rcache *rc, struct mfs_err *err)
{
	struct mfs_rcache *local = NULL;
	if (!rc) {
		local = mfs_rcache_new();
		if (!local)
			return mfs_error(err, ENOMEM, "out of memory");
		rc = local;
	}
	size_t done = 0;
	ssize_t ret = 0;
	if (off < c->head_len) {
		size_t n = c->head_len - (size_t)off;
		if (n > len)
			n = len;
		memcpy(buf, c->head + off, n);
		done = n;
	}
	pthread_mutex_lock(&rc->lock);
	while (done < len) {
		uint64_t body = off + done - c->head_len;
		/* Find the chunk holding body: a binary search over the known
		 * offsets, or rendering forward from the last known one. */
		pthread_mutex_lock(&c->lock);
		uint64_t known = c->known;
		bool inside = known > 0 && body < c->offs[known];
		uint64_t k = inside ? chunk_of(c, known, body) : known;
		uint64_t kstart = c->offs[k];
		size_t kept = inside ? mfs_keep_read(c, k, body, buf + done, len - done) : 0;
		pthread_mutex_unlock(&c->lock);
		done += kept;
		if (kept)
			continue;
		if (k >= c->nchunks)
			break;  /* end of file */
		const char *text = NULL;
		uint64_t tlen = 0;
		int r = get_chunk(m, c, k, rc, &text, &tlen, err);
		if (r < 0) {
			ret = r;
			goto out;
		}
		if (!inside && body >= kstart + tlen)
			continue;  /* learnt k's length; look further */
		if (body - kstart >= tlen) {
			/* The chunk's text is shorter than its learnt length: the
			 * source changed under the view. Never loop on it. */
			ret = mfs_error(err, EIO, "the source changed while the view was read");
			goto out;
		}
		size_t from = (size_t)(body - kstart);
		size_t n = (size_t)tlen - from;
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, text + from, n);
		done += n;
	}
	ret = (ssize_t)done;
out:
	pthread_mutex_unlock(&rc->lock);
	if (local)
		mfs_rcache_free(local);
	return ret;
}
