/* Chunked text views: a fixed head plus chunks rendered on demand, with the
 * byte offset of every chunk learnt as chunks are rendered. The exact size
 * needs one pass over everything, spread over the machine's cores. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "guard.h"
#include "view_impl.h"

struct mfs_rcache {
	const struct mfs_chunked *key;
	uint64_t k;
	struct mfs_buf buf;
};

struct mfs_rcache *mfs_rcache_new(void)
{
	return calloc(1, sizeof(struct mfs_rcache));
}

void mfs_rcache_free(struct mfs_rcache *rc)
{
	if (rc) {
		mfs_buf_free(&rc->buf);
		free(rc);
	}
}

int mfs_buf_reserve(struct mfs_buf *b, size_t extra)
{
	if (b->cap - b->len >= extra)
		return 0;
	size_t nc = b->cap ? b->cap : 4096;
	while (nc - b->len < extra) {
		if (nc > SIZE_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	char *p = realloc(b->p, nc);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = nc;
	return 0;
}

void mfs_buf_free(struct mfs_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
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
	return 0;
}

void mfs_chunked_destroy(struct mfs_chunked *c)
{
	if (!c->offs)
		return;
	pthread_mutex_destroy(&c->lock);
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
	uint64_t from, to;          /* chunks to measure */
	uint64_t *lens;             /* lens[k - from] */
	pthread_mutex_t lock;
	uint64_t next;              /* next chunk to take */
	int err;
	struct mfs_err msg;
};

struct measure_call {
	struct pass *p;
	struct mfs_buf buf;
	struct mfs_err err;
};

static int measure_fn(void *arg)
{
	struct measure_call *mc = arg;
	struct pass *p = mc->p;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		uint64_t k = p->next;
		bool stop = p->err || k >= p->to;
		if (!stop)
			p->next++;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			return 0;
		mc->buf.len = 0;
		int r = p->c->render(p->m, p->c->obj, k, &mc->buf, &mc->err);
		if (r < 0)
			return r;
		p->lens[k - p->from] = mc->buf.len;
	}
}

static void *measure_thread(void *arg)
{
	struct measure_call *mc = arg;
	int r = mfs_guarded(measure_fn, mc, &mc->err);
	if (r < 0) {
		pthread_mutex_lock(&mc->p->lock);
		if (!mc->p->err) {
			mc->p->err = r;
			mc->p->msg = mc->err;
		}
		pthread_mutex_unlock(&mc->p->lock);
	}
	mfs_buf_free(&mc->buf);
	return NULL;
}

int mfs_chunked_size(struct mfs_model *m, struct mfs_chunked *c, uint64_t *size,
		     struct mfs_err *err)
{
	pthread_mutex_lock(&c->lock);
	bool sized = c->sized;
	uint64_t from = c->known;
	pthread_mutex_unlock(&c->lock);
	if (!sized) {
		struct pass p = {.m = m, .c = c, .from = from, .to = c->nchunks, .next = from};
		p.lens = malloc((size_t)(p.to - p.from) * sizeof(uint64_t));
		if (!p.lens)
			return mfs_error(err, ENOMEM, "out of memory");
		pthread_mutex_init(&p.lock, NULL);
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		unsigned nthr = 1;
		if (p.to - p.from >= 4 && ncpu > 1)
			nthr = ncpu > 8 ? 8 : (unsigned)ncpu;
		struct measure_call calls[8];
		pthread_t th[8];
		unsigned started = 0;
		for (unsigned i = 0; i < nthr; i++) {
			calls[i] = (struct measure_call){.p = &p};
			if (i > 0 && pthread_create(&th[i], NULL, measure_thread, &calls[i]) != 0)
				break;
			started = i + 1;
		}
		measure_thread(&calls[0]);  /* this thread works too */
		for (unsigned i = 1; i < started; i++)
			pthread_join(th[i], NULL);
		pthread_mutex_destroy(&p.lock);
		if (p.err) {
			free(p.lens);
			if (err)
				*err = p.msg;
			return p.err;
		}
		pthread_mutex_lock(&c->lock);
		for (uint64_t k = c->known; k < c->nchunks; k++)
			c->offs[k + 1] = c->offs[k] + p.lens[k - from];
		c->known = c->nchunks;
		c->sized = true;
		pthread_mutex_unlock(&c->lock);
		free(p.lens);
	}
	*size = c->head_len + c->offs[c->nchunks];
	return 0;
}

/* ---- reading ---------------------------------------------------------------- */

/* Render chunk k into rc (reusing it if it already holds k). */
static int chunk(struct mfs_model *m, struct mfs_chunked *c, uint64_t k, struct mfs_rcache *rc,
		 struct mfs_err *err)
{
	if (rc->key == c && rc->k == k)
		return 0;
	rc->key = NULL;
	rc->buf.len = 0;
	int r = c->render(m, c->obj, k, &rc->buf, err);
	if (r < 0)
		return r;
	rc->key = c;
	rc->k = k;
	learn(c, k, rc->buf.len);
	return 0;
}

ssize_t mfs_chunked_read(struct mfs_model *m, struct mfs_chunked *c, uint64_t off,
			 size_t len, char *buf, struct mfs_rcache *rc, struct mfs_err *err)
{
	struct mfs_rcache local = {0};
	if (!rc)
		rc = &local;
	size_t done = 0;
	ssize_t ret = 0;
	if (off < c->head_len) {
		size_t n = c->head_len - (size_t)off;
		if (n > len)
			n = len;
		memcpy(buf, c->head + off, n);
		done = n;
	}
	while (done < len) {
		uint64_t body = off + done - c->head_len;
		/* Find the chunk holding body: a binary search over the known
		 * offsets, or rendering forward from the last known one. */
		pthread_mutex_lock(&c->lock);
		uint64_t known = c->known;
		uint64_t lo = 0, hi = known;  /* offs[lo] <= body, searching in [lo, hi) */
		bool inside = known > 0 && body < c->offs[known];
		if (inside) {
			while (hi - lo > 1) {
				uint64_t mid = lo + (hi - lo) / 2;
				if (c->offs[mid] <= body)
					lo = mid;
				else
					hi = mid;
			}
		}
		uint64_t k = inside ? lo : known;
		uint64_t kstart = c->offs[k];
		pthread_mutex_unlock(&c->lock);
		if (k >= c->nchunks)
			break;  /* end of file */
		int r = chunk(m, c, k, rc, err);
		if (r < 0) {
			ret = r;
			goto out;
		}
		if (!inside && body >= kstart + rc->buf.len)
			continue;  /* learnt k's length; look further */
		size_t from = (size_t)(body - kstart);
		size_t n = rc->buf.len - from;
		if (n > len - done)
			n = len - done;
		memcpy(buf + done, rc->buf.p + from, n);
		done += n;
	}
	ret = (ssize_t)done;
out:
	if (rc == &local)
		mfs_buf_free(&local.buf);
	return ret;
}
