/* Worker threads for rendering ahead (see pool.h): started on first use,
 * one per CPU, living as long as the process; and threads started for one
 * pass and joined at its end (mfs_fan_out, and mfs_parallel_for over it). */
#include <errno.h>
#include <stdbool.h>
#include <sched.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "guard.h"
#include "pool.h"

struct job {
	void (*fn)(void *);
	void *arg;
	struct job *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct job *head, *tail;
static unsigned nthreads;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!head)
			pthread_cond_wait(&cond, &lock);
		struct job *j = head;
		head = j->next;
		if (!head)
			tail = NULL;
		pthread_mutex_unlock(&lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&lock);
	}
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

static void start(void)
{
	unsigned n = mfs_ncpu(), want = n > MFS_THREADS_MAX ? MFS_THREADS_MAX : n;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (unsigned i = 0; i < want; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, NULL) == 0)
			nthreads++;
	}
	pthread_attr_destroy(&attr);
}

unsigned mfs_pool_size(void)
{
	pthread_once(&once, start);
	return nthreads;
}

int mfs_pool_submit(void (*fn)(void *arg), void *arg)
{
	if (mfs_pool_size() == 0)
		return -EAGAIN;
	struct job *j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	pthread_mutex_lock(&lock);
	if (tail)
		tail->next = j;
	else
		head = j;
	tail = j;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	return 0;
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
