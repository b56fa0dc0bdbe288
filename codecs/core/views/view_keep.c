/* Text kept from the size pass: one pass instead of two.
 *
 * A text view's exact size needs every number's length before the first
 * byte is read (cat asks fstat first), and reading then renders everything
 * again. For a view of a few windows or more, the size pass renders the
 * text itself, on every core, and keeps it: reads copy it out, and each
 * window is freed once a reader has read it through (the kernel's page
 * cache holds it from then on). What all views of a runtime keep is
 * bounded by its budget (runtime.h; fs/ sets it from -o text_cache); a view
 * whose text would not fit is sized the two-pass way, and a new pass drops
 * the oldest kept text of other views to make room. Text nobody read for 20
 * seconds (the size was all a stat wanted) is dropped by the runtime's
 * reaper thread, which wakes while any is kept. A model without a runtime
 * keeps nothing. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "bisect.h"
#include "guard.h"
#include "pool.h"
#include "runtime_impl.h"
#include "view_impl.h"

static uint64_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec;
}

/* Free c's kept windows. Caller holds c->lock. */
static void free_windows(struct mfs_chunked *c)
{
	if (!c->kept)
		return;
	for (uint64_t w = 0; w < c->nkept; w++) {
		if (c->kept[w]) {
			free(c->kept[w]);
			c->kept[w] = NULL;
		}
	}
	free(c->kept);
	c->kept = NULL;
	atomic_fetch_sub(&c->keep_rt->tc.kept_bytes, c->kept_len);
	c->kept_len = 0;
}

/* Take c off tc's list. Caller holds tc->lock. */
static void unlink_view(struct mfs_text_cache *tc, struct mfs_chunked *c)
{
	if (!c->keep_linked)
		return;
	if (c->keep_prev)
		c->keep_prev->keep_next = c->keep_next;
	else
		tc->oldest = c->keep_next;
	if (c->keep_next)
		c->keep_next->keep_prev = c->keep_prev;
	else
		tc->newest = c->keep_prev;
	c->keep_prev = c->keep_next = NULL;
	c->keep_linked = false;
}

void mfs_keep_drop(struct mfs_chunked *c)
{
	struct mfs_text_cache *tc = c->keep_rt ? &c->keep_rt->tc : NULL;
	if (!tc)
		return;  /* never kept */
	pthread_mutex_lock(&tc->lock);
	unlink_view(tc, c);
	pthread_mutex_unlock(&tc->lock);
	pthread_mutex_lock(&c->lock);
	free_windows(c);
	pthread_mutex_unlock(&c->lock);
}

/* Drops the text of views idle for tc->idle_s seconds; sleeps while
 * nothing is kept. */
static void *reaper(void *arg)
{
	struct mfs_text_cache *tc = arg;
	pthread_mutex_lock(&tc->lock);
	while (!tc->reaper_stop) {
		if (!tc->oldest) {
			pthread_cond_wait(&tc->kept_cond, &tc->lock);
			continue;
		}
		unsigned idle = atomic_load(&tc->idle_s);
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += idle / 4 ? idle / 4 : 1;
		pthread_cond_timedwait(&tc->kept_cond, &tc->lock, &until);
		uint64_t now = now_s();
		for (struct mfs_chunked *c = tc->oldest, *next; c; c = next) {
			next = c->keep_next;
			pthread_mutex_lock(&c->lock);
			bool stale = now - c->kept_used >= idle;
			if (stale)
				free_windows(c);
			pthread_mutex_unlock(&c->lock);
			if (stale)
				unlink_view(tc, c);
		}
	}
	pthread_mutex_unlock(&tc->lock);
	return NULL;
}

/* Claim need bytes of the budget, dropping the oldest text of other views
 * if that makes room. */
static bool claim(struct mfs_text_cache *tc, uint64_t need)
{
	pthread_mutex_lock(&tc->lock);
	uint64_t b = atomic_load(&tc->budget);
	bool ok = need <= b;
	while (ok && atomic_load(&tc->kept_bytes) + need > b && tc->oldest) {
		struct mfs_chunked *c = tc->oldest;  /* never self: sized once */
		unlink_view(tc, c);
		pthread_mutex_lock(&c->lock);
		free_windows(c);
		pthread_mutex_unlock(&c->lock);
	}
	if (ok && atomic_load(&tc->kept_bytes) + need <= b)
		atomic_fetch_add(&tc->kept_bytes, need);
	else
		ok = false;
	pthread_mutex_unlock(&tc->lock);
	return ok;
}

/* ---- the pass ---------------------------------------------------------------- */

struct kpass {
	struct mfs_model *m;
	struct mfs_chunked *c;
	char **win;                 /* text of each window */
	uint64_t *lens;             /* length of each chunk */
	uint64_t nwin;
	size_t per_win;             /* bytes to reserve for a window */
	pthread_mutex_t lock;
	uint64_t total;             /* bytes rendered */
	struct mfs_buf scratch[MFS_THREADS_MAX];  /* each thread's renderer's */
};

/* The first window's call, under its own guard. */
struct kcall {
	struct kpass *p;
	struct mfs_err *err;
};

/* A window's buffer of want bytes. Large ones are whole 2 MiB blocks the
 * kernel may back with huge pages: writing the text then faults once per
 * block instead of once per 4 KiB page. The unused tail goes back when the
 * window is trimmed to its length, which is what the budget counts (the
 * rounding, under a block, lasts only while a window is rendered). */
#define HUGE_BLOCK ((size_t)2 << 20)
static int win_reserve(struct mfs_buf *b, size_t want)
{
	if (want < HUGE_BLOCK / 2 || want > SIZE_MAX - HUGE_BLOCK)
		return mfs_buf_reserve(b, want);
	size_t cap = (want + HUGE_BLOCK - 1) & ~(HUGE_BLOCK - 1);
	b->p = aligned_alloc(HUGE_BLOCK, cap);
	if (!b->p)
		return -ENOMEM;
	madvise(b->p, cap, MADV_HUGEPAGE);
	b->cap = cap;
	return 0;
}

/* Render window w into its own buffer, on the pass's thread t. */
static int render_window(struct kpass *p, unsigned t, uint64_t w, struct mfs_err *err)
{
	struct mfs_buf *scratch = &p->scratch[t];
	struct mfs_chunked *c = p->c;
	uint64_t k0 = w * MFS_KEEP_CHUNKS;
	uint64_t n = c->nchunks - k0 < MFS_KEEP_CHUNKS ? c->nchunks - k0 : MFS_KEEP_CHUNKS;
	struct mfs_buf b = {0};
	if (p->per_win && win_reserve(&b, p->per_win) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = 0;
	if (c->render_n) {
		r = c->render_n(p->m, c->obj, k0, n, &b, p->lens + k0, scratch, err);
	} else {
		for (uint64_t i = 0; i < n && r >= 0; i++) {
			size_t before = b.len;
			r = c->render(p->m, c->obj, k0 + i, &b, scratch, err);
			p->lens[k0 + i] = b.len - before;
		}
	}
	if (r < 0) {
		mfs_buf_free(&b);
		return r;
	}
	/* Give back what the estimate reserved too much (large blocks shrink
	 * in place). */
	char *q = b.len ? realloc(b.p, b.len) : NULL;
	if (q || !b.len) {
		if (!b.len)
			free(b.p);
		b.p = q;
	}
	p->win[w] = b.p;
	pthread_mutex_lock(&p->lock);
	p->total += b.len;
	pthread_mutex_unlock(&p->lock);
	return 0;
}

/* Window w, on thread t of the pass. */
static int window_item(void *ctx, unsigned t, uint64_t w, struct mfs_err *err)
{
	return render_window(ctx, t, w, err);
}

/* Window 0, on the caller's thread (a fault jumps out of this alone). */
static int first_fn(void *arg)
{
	struct kcall *kc = arg;
	return render_window(kc->p, 0, 0, kc->err);
}

int mfs_keep_pass(struct mfs_model *m, struct mfs_chunked *c, struct mfs_err *err)
{
	uint64_t nwin = (c->nchunks + MFS_KEEP_CHUNKS - 1) / MFS_KEEP_CHUNKS;
	struct mfs_text_cache *tc = m->rt ? &m->rt->tc : NULL;
	if (!tc || c->nchunks < MFS_KEEP_MIN_CHUNKS || atomic_load(&tc->budget) == 0)
		return 1;  /* small: the two passes cost little */
	struct kpass p = {.m = m, .c = c, .nwin = nwin};
	p.win = calloc((size_t)nwin, sizeof(char *));
	p.lens = malloc((size_t)c->nchunks * sizeof(uint64_t));
	if (!p.win || !p.lens) {
		free(p.win);
		free(p.lens);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	pthread_mutex_init(&p.lock, NULL);
	/* The first window tells how much the whole will take. */
	uint64_t claimed = 0;
	struct kcall first = {.p = &p, .err = err};
	int r = mfs_guarded(first_fn, &first, err);
	if (r == 0) {
		/* per chunk, from the first window's */
		uint64_t n0 = c->nchunks < MFS_KEEP_CHUNKS ? c->nchunks : MFS_KEEP_CHUNKS;
		uint64_t per_chunk = p.total / n0 + 1;
		uint64_t est = per_chunk * c->nchunks;
		p.per_win = (size_t)(p.total + p.total / 8 + 4096);
		claimed = est + est / 16 + nwin * 4096;
		if (!claim(tc, claimed)) {
			claimed = 0;
			r = 1;
		}
	}
	if (r == 0)
		r = mfs_parallel_for(1, nwin, MFS_THREADS_MAX, window_item, &p, err);
	for (unsigned t = 0; t < MFS_THREADS_MAX; t++)
		mfs_buf_free(&p.scratch[t]);
	if (r != 0) {
		for (uint64_t w = 0; w < nwin; w++)
			free(p.win[w]);
		free(p.win);
		free(p.lens);
		pthread_mutex_destroy(&p.lock);
		if (claimed)
			atomic_fetch_sub(&tc->kept_bytes, claimed);
		return r;
	}
	pthread_mutex_destroy(&p.lock);
	/* What was claimed becomes what is kept. */
	atomic_fetch_add(&tc->kept_bytes, p.total);
	atomic_fetch_sub(&tc->kept_bytes, claimed);
	pthread_mutex_lock(&c->lock);
	free_windows(c);
	c->keep_rt = m->rt;
	for (uint64_t k = 0; k < c->nchunks; k++)
		c->offs[k + 1] = c->offs[k] + p.lens[k];
	c->known = c->nchunks;
	c->sized = true;
	c->kept = p.win;
	c->nkept = nwin;
	c->kept_len = p.total;
	c->kept_used = now_s();
	pthread_mutex_unlock(&c->lock);
	free(p.lens);
	pthread_mutex_lock(&tc->lock);
	if (!tc->reaper_started && !tc->reaper_stop)
		tc->reaper_started = pthread_create(&tc->reaper, NULL, reaper, tc) == 0;
	pthread_cond_signal(&tc->kept_cond);
	unlink_view(tc, c);
	c->keep_prev = tc->newest;
	if (tc->newest)
		tc->newest->keep_next = c;
	else
		tc->oldest = c;
	tc->newest = c;
	c->keep_linked = true;
	pthread_mutex_unlock(&tc->lock);
	return 0;
}

/* ---- reading ----------------------------------------------------------------- */

size_t mfs_keep_read(struct mfs_chunked *c, uint64_t k, uint64_t body, char *buf, size_t len)
{
	uint64_t w = k / MFS_KEEP_CHUNKS;
	if (!c->kept || !c->sized || w >= c->nkept || !c->kept[w])
		return 0;
	uint64_t kend = (w + 1) * MFS_KEEP_CHUNKS;
	uint64_t ws = c->offs[w * MFS_KEEP_CHUNKS];
	uint64_t we = c->offs[kend < c->nchunks ? kend : c->nchunks];
	uint64_t n = we - body < len ? we - body : len;
	memcpy(buf, c->kept[w] + (body - ws), (size_t)n);
	c->kept_used = now_s();
	if (body + n == we) {
		/* Read through: the page cache has it now. */
		free(c->kept[w]);
		c->kept[w] = NULL;
		c->kept_len -= we - ws;
		atomic_fetch_sub(&c->keep_rt->tc.kept_bytes, we - ws);
	}
	return (size_t)n;
}

struct window_key {
	const struct mfs_chunked *c;
	uint64_t body;
};

static bool window_below(const void *ctx, uint64_t i)
{
	const struct window_key *k = ctx;
	return k->c->offs[i * MFS_KEEP_CHUNKS] <= k->body;
}

/* The window holding body offset body: the last one starting at or before
 * it. Caller holds c->lock; c is sized. */
static uint64_t window_of(const struct mfs_chunked *c, uint64_t body)
{
	struct window_key k = {c, body};
	uint64_t n = mfs_partition(c->nkept, window_below, &k);
	return n ? n - 1 : 0;
}

/* Pieces a send may take: a 1 MiB read spans two or three windows. */
#define SEND_PIECES 8

bool mfs_keep_send(struct mfs_chunked *c, uint64_t body, size_t len, mfs_send_fn send,
		   void *ctx)
{
	struct iovec iov[SEND_PIECES];
	uint64_t ends[SEND_PIECES];  /* where each piece's window ends */
	int n = 0;
	pthread_mutex_lock(&c->lock);
	uint64_t total = c->sized ? c->offs[c->nchunks] : 0;
	if (!c->kept || body >= total)
		goto not_kept;
	uint64_t end = total - body < len ? total : body + len;
	uint64_t w = window_of(c, body);
	for (uint64_t pos = body; pos < end; w++) {
		if (w >= c->nkept || !c->kept[w] || n == SEND_PIECES)
			goto not_kept;
		uint64_t kend = (w + 1) * MFS_KEEP_CHUNKS;
		uint64_t ws = c->offs[w * MFS_KEEP_CHUNKS];
		uint64_t we = c->offs[kend < c->nchunks ? kend : c->nchunks];
		uint64_t take = (we < end ? we : end) - pos;
		iov[n] = (struct iovec){c->kept[w] + (pos - ws), (size_t)take};
		ends[n++] = we;
		pos += take;
	}
	send(ctx, iov, n);
	c->kept_used = now_s();
	/* Windows read through: the page cache has them now. */
	w -= (uint64_t)n;
	for (int i = 0; i < n; i++, w++) {
		if (ends[i] > end)
			continue;
		uint64_t ws = c->offs[w * MFS_KEEP_CHUNKS];
		free(c->kept[w]);
		c->kept[w] = NULL;
		c->kept_len -= ends[i] - ws;
		atomic_fetch_sub(&c->keep_rt->tc.kept_bytes, ends[i] - ws);
	}
	pthread_mutex_unlock(&c->lock);
	return true;
not_kept:
	pthread_mutex_unlock(&c->lock);
	return false;
}
