/* Creating and stopping a runtime (runtime.h). */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "runtime_impl.h"

/* The default budget: a sixteenth of the memory, at most 1 GiB. */
static uint64_t default_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	uint64_t b = pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 16 : 0;
	return b > (1ull << 30) ? 1ull << 30 : b;
}

/* The default index budget: a quarter of the memory. */
static uint64_t default_index_budget(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	return pages > 0 && psize > 0 ? (uint64_t)pages * (uint64_t)psize / 4 : MFS_INDEX_UNLIMITED;
}

int mfs_runtime_new(struct mfs_runtime **out, const struct mfs_runtime_opts *o,
		    struct mfs_err *err)
{
	struct mfs_runtime *rt = calloc(1, sizeof(*rt));
	if (!rt)
		return mfs_error(err, ENOMEM, "out of memory");
	pthread_mutex_init(&rt->workers.lock, NULL);
	pthread_cond_init(&rt->workers.cond, NULL);
	pthread_mutex_init(&rt->tc.lock, NULL);
	pthread_cond_init(&rt->tc.kept_cond, NULL);
	uint64_t budget = o ? o->text_cache : MFS_TEXT_CACHE_DEFAULT;
	atomic_init(&rt->tc.budget, budget == MFS_TEXT_CACHE_DEFAULT ? default_budget() : budget);
	atomic_init(&rt->tc.idle_s, o && o->idle_s ? o->idle_s : 20);
	atomic_init(&rt->tc.kept_bytes, 0);
	uint64_t ib = o ? o->max_index : MFS_INDEX_DEFAULT;
	rt->index_budget = ib == MFS_INDEX_DEFAULT ? default_index_budget() : ib;
	atomic_init(&rt->index_used, 0);
	*out = rt;
	return 0;
}

/* Stop and join the reaper that view_keep.c started (reaper_stop also
 * keeps a new one from starting). */
static void text_cache_stop(struct mfs_text_cache *tc)
{
	pthread_mutex_lock(&tc->lock);
	bool started = tc->reaper_started;
	tc->reaper_stop = true;
	pthread_cond_signal(&tc->kept_cond);
	pthread_mutex_unlock(&tc->lock);
	if (started)
		pthread_join(tc->reaper, NULL);
	pthread_mutex_lock(&tc->lock);
	tc->reaper_started = false;
	pthread_mutex_unlock(&tc->lock);
}

void mfs_runtime_free(struct mfs_runtime *rt)
{
	if (!rt)
		return;
	mfs_workers_stop(&rt->workers);
	text_cache_stop(&rt->tc);
	pthread_mutex_destroy(&rt->workers.lock);
	pthread_cond_destroy(&rt->workers.cond);
	pthread_mutex_destroy(&rt->tc.lock);
	pthread_cond_destroy(&rt->tc.kept_cond);
	free(rt);
}

uint64_t mfs_index_used(const struct mfs_runtime *rt)
{
	return atomic_load(&rt->index_used);
}

uint64_t mfs_index_budget(const struct mfs_runtime *rt)
{
	return rt->index_budget;
}

void mfs_text_cache_idle(struct mfs_runtime *rt, unsigned seconds)
{
	atomic_store(&rt->tc.idle_s, seconds ? seconds : 1);
	pthread_cond_signal(&rt->tc.kept_cond);
}

void mfs_text_cache_set(struct mfs_runtime *rt, uint64_t bytes)
{
	atomic_store(&rt->tc.budget, bytes);
}

uint64_t mfs_text_cache_used(const struct mfs_runtime *rt)
{
	return atomic_load(&rt->tc.kept_bytes);
}
