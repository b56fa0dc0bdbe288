/* What a runtime holds (runtime.h), for the files that run it: pool.c (the
 * workers and their queue), view_keep.c (kept text and its reaper) and
 * runtime.c (creating and stopping both). */
#ifndef MFS_RUNTIME_IMPL_H
#define MFS_RUNTIME_IMPL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "pool.h"
#include "runtime.h"

struct mfs_job;
struct mfs_chunked;

struct mfs_workers {
	pthread_mutex_t lock;
	pthread_cond_t cond;        /* a job queued, or stop */
	struct mfs_job *head, *tail;
	pthread_t th[MFS_THREADS_MAX];
	unsigned nthreads;
	bool started, stop;
	_Atomic unsigned size1;     /* nthreads + 1 once started, 1 once stopped, 0
				       before: mfs_pool_size reads it without the lock */
};

struct mfs_text_cache {
	pthread_mutex_t lock;       /* the list below and the reaper's state */
	struct mfs_chunked *oldest, *newest;  /* views holding kept text */
	_Atomic uint64_t kept_bytes;          /* what they hold, all together */
	_Atomic uint64_t budget;
	_Atomic unsigned idle_s;    /* seconds unread before kept text is dropped */
	pthread_cond_t kept_cond;   /* something kept, or stop */
	bool reaper_started, reaper_stop;
	pthread_t reaper;
};

struct mfs_runtime {
	struct mfs_workers workers;
	struct mfs_text_cache tc;
	_Atomic uint64_t index_used;  /* what the models' indexes hold (model_budget.c) */
	uint64_t index_budget;
};

/* pool.c: stop and join the workers, after the jobs queued. */
void mfs_workers_stop(struct mfs_workers *w);

#endif
