/* The runtime a host lends the core: worker threads that render text ahead
 * of a reader and parse large writes, one budget of kept text for all
 * views (view_keep.c) with the thread that drops what nobody reads, and
 * one budget for what the indexes of all its models hold (their trees and
 * arenas, and what a codec holds while it opens one).
 *
 * fs/ creates one per mount (and the command line one per run) and gives it
 * to every model it opens. A model without one (tests, fuzzing, the commit
 * engine's validation) renders on the caller's thread and sizes text views
 * the two-pass way: the same bytes, only slower. */
#ifndef MFS_RUNTIME_H
#define MFS_RUNTIME_H

#include <stdint.h>

#include "error.h"

struct mfs_model;
struct mfs_runtime;

/* text_cache: the default budget, a sixteenth of the memory, at most 1 GiB. */
#define MFS_TEXT_CACHE_DEFAULT UINT64_MAX

/* max_index: the default budget, a quarter of the memory. */
#define MFS_INDEX_DEFAULT 0
#define MFS_INDEX_UNLIMITED UINT64_MAX

struct mfs_runtime_opts {
	uint64_t text_cache;  /* bytes of text all views may keep; 0: none kept */
	unsigned idle_s;      /* seconds unread before kept text is dropped; 0: 20 */
	uint64_t max_index;   /* bytes all models' indexes may hold (MFS_INDEX_DEFAULT,
				 MFS_INDEX_UNLIMITED): an open that would need more
				 fails with ENOMEM (mfs_model_open_rt) */
};

/* Threads start on first use, so a host may create this before it forks. */
int mfs_runtime_new(struct mfs_runtime **out, const struct mfs_runtime_opts *o,
		    struct mfs_err *err);
/* Stops the threads (queued work is done first) and frees rt. Every model
 * given rt must be freed before, or never be read again. NULL is a no-op. */
void mfs_runtime_free(struct mfs_runtime *rt);

/* A model is given its runtime with mfs_model_set_runtime (model.h). */

/* Bytes of text kept now by rt's views. */
uint64_t mfs_text_cache_used(const struct mfs_runtime *rt);
/* Bytes the indexes of rt's models hold now, and their budget. */
uint64_t mfs_index_used(const struct mfs_runtime *rt);
uint64_t mfs_index_budget(const struct mfs_runtime *rt);

/* Change the budget or the idle time of a running rt (tests). */
void mfs_text_cache_set(struct mfs_runtime *rt, uint64_t bytes);
void mfs_text_cache_idle(struct mfs_runtime *rt, unsigned seconds);

#endif
