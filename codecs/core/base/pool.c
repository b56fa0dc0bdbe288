/* A runtime's worker threads (see pool.h): started on first use, one per
 * CPU, living as long as the runtime; and threads started for one pass and
 * joined at its end (mfs_fan_out, and mfs_parallel_for over it). */
#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "guard.h"
#include "pool.h"
#include "runtime_impl.h"

struct mfs_job {
	void (*fn)(void *, struct mfs_buf *);
	void *arg;
	struct mfs_job *next;
};

/* Runs queued jobs until stopped with none left, lending each its scratch. */
static void *worker(void *arg)
{
	struct mfs_workers *w = arg;
	struct mfs_buf scratch = {0};
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		struct mfs_job *j = w->head;
		if (!j)
			break;
		w->head = j->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->lock);
		j->fn(j->arg, &scratch);
		free(j);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	mfs_buf_free(&scratch);
	return NULL;
}

unsigned mfs_ncpu(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (unsigned)n : 1;
}

/* Start the workers on first use. Caller holds w->lock. */
static void start(struct mfs_workers *w)
{
	unsigned n = mfs_ncpu(), want = n > MFS_THREADS_MAX ? MFS_THREADS_MAX : n;
	w->started = true;
	for (unsigned i = 0; i < want; i++) {
		if (pthread_create(&w->th[w->nthreads], NULL, worker, w) == 0)
			w->nthreads++;
	}
}

unsigned mfs_pool_size(struct mfs_runtime *rt)
{
	if (!rt)
		return 0;
	struct mfs_workers *w = &rt->workers;
	unsigned s = w->size1;  /* every read of a sequential reader asks */
	if (s)
		return s - 1;
	pthread_mutex_lock(&w->lock);
	if (!w->started && !w->stop)
		start(w);
	unsigned n = w->stop ? 0 : w->nthreads;
	w->size1 = n + 1;
	pthread_mutex_unlock(&w->lock);
	return n;
}

int mfs_pool_submit(struct mfs_runtime *rt, void (*fn)(void *arg, struct mfs_buf *scratch),
		    void *arg)
{
	if (mfs_pool_size(rt) == 0)
		return -EAGAIN;
	struct mfs_job *j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	struct mfs_workers *w = &rt->workers;
	pthread_mutex_lock(&w->lock);
	if (w->stop) {
		pthread_mutex_unlock(&w->lock);
		free(j);
		return -EAGAIN;
	}
	if (w->tail)
		w->tail->next = j;
	else
		w->head = j;
	w->tail = j;
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
	return 0;
}

void mfs_workers_stop(struct mfs_workers *w)
{
	pthread_mutex_lock(&w->lock);
	w->stop = true;
	w->size1 = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->lock);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->th[i], NULL);
	w->nthreads = 0;
}

unsigned mfs_fan_out(unsigned n, void *(*fn)(void *arg), void *args, size_t size)
{
	pthread_t th[MFS_THREADS_MAX];
	char *a = args;
	unsigned started = 1;
	if (n > MFS_THREADS_MAX)
		n = MFS_THREADS_MAX;
	for (unsigned i = 1; i < n; i++) {
		if (pthread_create(&th[i], NULL, fn, a + (size_t)i * size) != 0)
			break;
		started = i + 1;
	}
	fn(a);  /* this thread works too */
	for (unsigned i = 1; i < started; i++)
		pthread_join(th[i], NULL);
	return started;
}

unsigned mfs_pass_threads(uint64_t n)
{
	unsigned t = mfs_ncpu();
	if (t > MFS_THREADS_MAX)
		t = MFS_THREADS_MAX;
	if (t > n)
		t = (unsigned)n;
	return t ? t : 1;
}

struct pfor {
	mfs_item_fn fn;
	void *ctx;
	pthread_mutex_t lock;
	uint64_t next, to;          /* the shared counter */
	int err;                    /* the first error, and its message */
	struct mfs_err msg;
};

struct pfor_thread {
	struct pfor *p;
	unsigned t;
	struct mfs_err err;
};

static int pfor_loop(void *arg)
{
	struct pfor_thread *th = arg;
	struct pfor *p = th->p;
	for (;;) {
		pthread_mutex_lock(&p->lock);
		uint64_t i = p->next;
		bool stop = p->err || i >= p->to;
		if (!stop)
			p->next++;
		pthread_mutex_unlock(&p->lock);
		if (stop)
			return 0;
		int r = p->fn(p->ctx, th->t, i, &th->err);
		if (r < 0)
			return r;
	}
}

static void *pfor_thread(void *arg)
{
	struct pfor_thread *th = arg;
	int r = mfs_guarded(pfor_loop, th, &th->err);
	if (r < 0) {
		pthread_mutex_lock(&th->p->lock);
		if (!th->p->err) {
			th->p->err = r;
			th->p->msg = th->err;
		}
		pthread_mutex_unlock(&th->p->lock);
	}
	return NULL;
}

int mfs_parallel_for(uint64_t from, uint64_t to, unsigned max_threads, mfs_item_fn fn,
		     void *ctx, struct mfs_err *err)
{
	if (from >= to)
		return 0;
	unsigned n = mfs_pass_threads(to - from);
	if (n > max_threads)
		n = max_threads ? max_threads : 1;
	struct pfor p = {.fn = fn, .ctx = ctx, .next = from, .to = to};
	pthread_mutex_init(&p.lock, NULL);
	struct pfor_thread th[MFS_THREADS_MAX];
	for (unsigned t = 0; t < n; t++)
		th[t] = (struct pfor_thread){.p = &p, .t = t};
	mfs_fan_out(n, pfor_thread, th, sizeof(th[0]));
	pthread_mutex_destroy(&p.lock);
	if (p.err && err)
		*err = p.msg;
	return p.err;
}
