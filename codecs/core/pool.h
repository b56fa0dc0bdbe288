/* A small pool of worker threads (one per CPU) for rendering ahead, and
 * passes fanned out over threads started for them. */
#ifndef MFS_POOL_H
#define MFS_POOL_H

#include <stddef.h>

/* Run fn(arg) on a worker thread. Returns 0, or -errno if no worker could
 * take it (then the caller does the work itself). */
int mfs_pool_submit(void (*fn)(void *arg), void *arg);
/* CPUs this process may run on (its affinity: a cpuset, taskset), at least 1. */
unsigned mfs_ncpu(void);
/* Number of workers the pool runs (mfs_ncpu(), at most 16). */
unsigned mfs_pool_size(void);
/* Run fn on n threads, each with its own argument: args is an array of n
 * items of size bytes. Item 0 runs on the calling thread, after the others
 * are started; the call returns when all are done. Returns how many ran,
 * from 1 (threads that cannot be started are left out: fn must take its work
 * from a queue shared by all, so that the others do it). */
unsigned mfs_fan_out(unsigned n, void *(*fn)(void *arg), void *args, size_t size);

#endif
