/* A runtime's worker threads (one per CPU) for rendering ahead, and
 * passes fanned out over threads started for them. */
#ifndef MFS_POOL_H
#define MFS_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"

/* The most threads one pass runs, and the pool's size at most. */
#define MFS_THREADS_MAX 16

struct mfs_runtime;

/* Run fn(arg, scratch) on one of rt's worker threads. scratch is the
 * worker's own buffer, kept from one job to the next (and freed when the
 * worker ends), for what a job needs only while it runs: a large one is
 * then not faulted in anew for every job. Returns 0, or -errno if no
 * worker could take it (rt NULL or stopping: the caller does the work). */
int mfs_pool_submit(struct mfs_runtime *rt, void (*fn)(void *arg, struct mfs_buf *scratch),
		    void *arg);
/* CPUs this process may run on (its affinity: a cpuset, taskset), at least 1. */
unsigned mfs_ncpu(void);
/* Number of workers rt runs (mfs_ncpu(), at most MFS_THREADS_MAX; 0 for
 * rt NULL). */
unsigned mfs_pool_size(struct mfs_runtime *rt);
/* Run fn on n threads, each with its own argument: args is an array of n
 * items of size bytes. Item 0 runs on the calling thread, after the others
 * are started; the call returns when all are done. Returns how many ran,
 * from 1 (threads that cannot be started are left out: fn must take its work
 * from a queue shared by all, so that the others do it). */
unsigned mfs_fan_out(unsigned n, void *(*fn)(void *arg), void *args, size_t size);

/* Threads a pass over n items may use: the CPUs this process may run on,
 * at most MFS_THREADS_MAX and n, at least 1. */
unsigned mfs_pass_threads(uint64_t n);

/* fn(ctx, t, i, err): item i, on the pass's thread t (0 is the caller's;
 * per-thread state is the caller's, indexed by t). 0 or -errno with err. */
typedef int (*mfs_item_fn)(void *ctx, unsigned t, uint64_t i, struct mfs_err *err);

/* Run fn for every item in [from, to) on min(max_threads,
 * mfs_pass_threads(to - from)) threads, each taking the next item from one
 * shared counter (threads that cannot be started leave theirs to the
 * others). Each thread's calls run under the fault guard, so a source
 * truncated under us ends the pass with -EIO. The first error stops every
 * thread before its next item and is returned (-errno, its message in err);
 * 0 when every item ran. */
int mfs_parallel_for(uint64_t from, uint64_t to, unsigned max_threads, mfs_item_fn fn,
		     void *ctx, struct mfs_err *err);

#endif
