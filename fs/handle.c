/* Open files (see handle.h): made and freed here, and held by number in an
 * open-addressing table, with a reference count in each. */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "bytes.h"
#include "handle.h"
#include "pending.h"
#include "view.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct fh **slots;   /* NULL: empty; TOMB: removed */
static uint64_t *ids;
static size_t cap, used;
static uint64_t next_id = 1;
static struct fh tomb_fh;
#define TOMB (&tomb_fh)

struct fh *fh_new(void)
{
	struct fh *h = calloc(1, sizeof(*h));
	if (h) {
		h->fd = -1;
		pthread_mutex_init(&h->wlock, NULL);
	}
	return h;
}

void fh_destroy(struct fh *h)
{
	if (!h)
		return;
	pending_free(h->w);
	if (h->fd >= 0)
		close(h->fd);
	mfs_rcache_free(h->rc);  /* waits for its read-ahead, which uses the model */
	if (h->counted)
		atomic_fetch_sub(&h->counted->open_views, 1);
	if (h->cached) {
		pthread_mutex_lock(&h->held->lock);
		h->held->cache_users--;
		if (h->held->cache_first == h)
			h->held->cache_first = NULL;
		pthread_mutex_unlock(&h->held->lock);
	}
	mref_put(h->ref);
	free(h->snap);
	inode_put(h->held);  /* last: the model may go with it */
	pthread_mutex_destroy(&h->wlock);
	free(h);
}

static size_t slot_of(uint64_t id)
{
	return (size_t)(mfs_hash64(&id, sizeof(id), 0x68616e64) & (cap - 1));
}

static int grow(void)
{
	size_t nc = cap ? cap * 2 : 256;
	struct fh **ns = calloc(nc, sizeof(*ns));
	uint64_t *ni = calloc(nc, sizeof(*ni));
	if (!ns || !ni) {
		free(ns);
		free(ni);
		return -1;
	}
	struct fh **os = slots;
	uint64_t *oi = ids;
	size_t oc = cap;
	slots = ns;
	ids = ni;
	cap = nc;
	used = 0;
	for (size_t k = 0; k < oc; k++) {
		if (!os[k] || os[k] == TOMB)
			continue;
		size_t j = slot_of(oi[k]);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = os[k];
		ids[j] = oi[k];
		used++;
	}
	free(os);
	free(oi);
	return 0;
}

uint64_t handle_add(struct fh *h)
{
	pthread_mutex_lock(&lock);
	if ((used + 1) * 2 > cap && grow() < 0) {
		pthread_mutex_unlock(&lock);
		return 0;
	}
	uint64_t id = next_id++;
	size_t j = slot_of(id);
	while (slots[j] && slots[j] != TOMB)
		j = (j + 1) & (cap - 1);
	slots[j] = h;
	ids[j] = id;
	used++;
	atomic_store(&h->refs, 1);
	pthread_mutex_unlock(&lock);
	return id;
}

static size_t find(uint64_t id)
{
	if (!cap)
		return SIZE_MAX;
	for (size_t j = slot_of(id);; j = (j + 1) & (cap - 1)) {
		if (!slots[j])
			return SIZE_MAX;
		if (slots[j] != TOMB && ids[j] == id)
			return j;
	}
}

struct fh *handle_get(uint64_t id)
{
	pthread_mutex_lock(&lock);
	size_t j = find(id);
	struct fh *h = j == SIZE_MAX ? NULL : slots[j];
	if (h)
		atomic_fetch_add(&h->refs, 1);
	pthread_mutex_unlock(&lock);
	return h;
}

struct fh *handle_remove(uint64_t id)
{
	pthread_mutex_lock(&lock);
	size_t j = find(id);
	struct fh *h = j == SIZE_MAX ? NULL : slots[j];
	if (h)
		slots[j] = TOMB;  /* used stays: tombstones count until the next grow */
	pthread_mutex_unlock(&lock);
	return h;
}

void handle_put(struct fh *h)
{
	if (h && atomic_fetch_sub(&h->refs, 1) == 1)
		fh_destroy(h);
}
