/* What each file of SOURCE was found to be, per version of the file (see
 * verdict.h): a hash table on (directory, name), never shrunk (a name costs
 * a few dozen bytes). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "verdict.h"

struct rec {
	struct rec *next;
	fuse_ino_t dir;
	uint64_t hash;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
	const char *sidecar;
	enum verdict v;
	char name[];
};

static struct rec **tab;
static size_t nbuckets, nrecs;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t hash_of(fuse_ino_t dir, const char *name)
{
	return mfs_hash64(name, strlen(name), dir * 0x9e3779b97f4a7c15ull);
}

static bool same_version(const struct rec *r, const struct stat *st)
{
	return r->dev == st->st_dev && r->ino == st->st_ino && r->size == st->st_size &&
	       r->mtim.tv_sec == st->st_mtim.tv_sec && r->mtim.tv_nsec == st->st_mtim.tv_nsec;
}

static void grow_locked(void)
{
	size_t nb = nbuckets ? nbuckets * 2 : 256;
	struct rec **t = calloc(nb, sizeof(*t));
	if (!t)
		return;  /* longer chains, still correct */
	for (size_t b = 0; b < nbuckets; b++)
		for (struct rec *r = tab[b], *n; r; r = n) {
			n = r->next;
			r->next = t[r->hash & (nb - 1)];
			t[r->hash & (nb - 1)] = r;
		}
	free(tab);
	tab = t;
	nbuckets = nb;
}

static struct rec *find_locked(fuse_ino_t dir, const char *name, uint64_t h)
{
	if (!nbuckets)
		return NULL;
	for (struct rec *r = tab[h & (nbuckets - 1)]; r; r = r->next)
		if (r->hash == h && r->dir == dir && strcmp(r->name, name) == 0)
			return r;
	return NULL;
}

enum verdict verdict_get(fuse_ino_t dir, const char *name, const struct stat *st,
			 const char **sidecar)
{
	uint64_t h = hash_of(dir, name);
	pthread_mutex_lock(&lock);
	struct rec *r = find_locked(dir, name, h);
	enum verdict v = r && same_version(r, st) ? r->v : VERDICT_NONE;
	if (sidecar)
		*sidecar = v == VERDICT_NONE ? NULL : r->sidecar;
	pthread_mutex_unlock(&lock);
	return v;
}

enum verdict verdict_set(fuse_ino_t dir, const char *name, const struct stat *st,
			 enum verdict v, const char *sidecar)
{
	uint64_t h = hash_of(dir, name);
	pthread_mutex_lock(&lock);
	struct rec *r = find_locked(dir, name, h);
	enum verdict old = r && same_version(r, st) ? r->v : VERDICT_NONE;
	if (!r) {
		if (nrecs >= nbuckets)
			grow_locked();
		size_t len = strlen(name);
		r = nbuckets ? malloc(sizeof(*r) + len + 1) : NULL;
		if (r) {
			r->dir = dir;
			r->hash = h;
			memcpy(r->name, name, len + 1);
			r->next = tab[h & (nbuckets - 1)];
			tab[h & (nbuckets - 1)] = r;
			nrecs++;
		}
	}
	if (r) {
		r->dev = st->st_dev;
		r->ino = st->st_ino;
		r->size = st->st_size;
		r->mtim = st->st_mtim;
		r->v = v;
		r->sidecar = sidecar;
	}
	pthread_mutex_unlock(&lock);
	return old;
}
