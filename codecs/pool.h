/* A small pool of worker threads (one per CPU) for rendering ahead. */
#ifndef MFS_POOL_H
#define MFS_POOL_H

/* Run fn(arg) on a worker thread. Returns 0, or -errno if no worker could
 * take it (then the caller does the work itself). */
int mfs_pool_submit(void (*fn)(void *arg), void *arg);
/* Number of workers the pool runs (the machine's CPUs, at most 16). */
unsigned mfs_pool_size(void);

#endif
