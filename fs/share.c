/* The table of shared generations (share.h): chained by inode number, one
 * per process. A generation in it always has references: the last one is
 * dropped under the table's lock, which takes it out first, so a lookup
 * never holds a generation being freed. And the other names of a file
 * told of a commit through one of them. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "share.h"

#define BUCKETS 1024u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct mref *table[BUCKETS];

static struct mref **bucket(ino_t ino)
{
	return &table[(size_t)(ino ^ (ino >> 10)) % BUCKETS];
}

static struct share_key key_of(const struct stat *st, const struct mfs_codec *c, const char *name)
{
	struct share_key k;
	memset(&k, 0, sizeof(k));
	k.dev = st->st_dev;
	k.ino = st->st_ino;
	k.size = st->st_size;
	k.mtim = st->st_mtim;
	k.ctim = st->st_ctim;
	k.codec = c;
	k.cls = c->name_class(name);
	return k;
}

static bool same_key(const struct share_key *a, const struct share_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtim.tv_sec == b->mtim.tv_sec && a->mtim.tv_nsec == b->mtim.tv_nsec &&
	       a->ctim.tv_sec == b->ctim.tv_sec && a->ctim.tv_nsec == b->ctim.tv_nsec &&
	       a->codec == b->codec && a->cls == b->cls;
}

static struct mref *find_locked(const struct share_key *k)
{
	for (struct mref *r = *bucket(k->ino); r; r = r->share_next)
		if (same_key(&r->key, k))
			return r;
	return NULL;
}

struct mref *share_find(const struct stat *st, const struct mfs_codec *c, const char *name)
{
	if (!c->name_class)
		return NULL;
	struct share_key k = key_of(st, c, name);
	pthread_mutex_lock(&lock);
	struct mref *r = find_locked(&k);
	if (r)
		atomic_fetch_add(&r->refs, 1);
	pthread_mutex_unlock(&lock);
	return r;
}

void share_offer(struct mref *r, const struct stat *st, const char *name)
{
	const struct mfs_model *m = r->m;
	if (!m->codec->name_class || m->beside || st->st_mtim.tv_nsec < 0 ||
	    m->ino != (uint64_t)st->st_ino)
		return;
	struct share_key k = key_of(st, m->codec, name);
	pthread_mutex_lock(&lock);
	if (!find_locked(&k)) {  /* two parses of one version: the first stands */
		r->key = k;
		r->shared = true;
		struct mref **b = bucket(k.ino);
		r->share_next = *b;
		*b = r;
	}
	pthread_mutex_unlock(&lock);
}

bool share_release(struct mref *r)
{
	pthread_mutex_lock(&lock);
	bool last = atomic_fetch_sub(&r->refs, 1) == 1;
	if (last) {
		struct mref **p = bucket(r->key.ino);
		while (*p != r)
			p = &(*p)->share_next;
		*p = r->share_next;
	}
	pthread_mutex_unlock(&lock);
	return last;
}

/* The other models of the mount, each with a reference on its inode. Their
 * generations are looked at after the walk, not under the table lock:
 * the check (fsmodel_check, given by the model layer above) resolves names,
 * which takes the table lock, while it holds its model's lock. */
struct sharers {
	const struct fsmodel *self;
	struct inode **mi;
	size_t n, cap;
};

static void find_sharer(struct inode *i, void *arg)
{
	struct sharers *s = arg;
	if (i->kind != I_MODEL || !i->fm || i->fm == s->self)
		return;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		struct inode **mi = realloc(s->mi, cap * sizeof(*mi));
		if (!mi)
			return;  /* those left out see the change at their next open */
		s->mi = mi;
		s->cap = cap;
	}
	i->refs++;  /* under the table lock, as inode_ref takes it */
	s->mi[s->n++] = i;
}

void share_check_others(struct fsmodel *fm, struct mref *r, void (*check)(struct fsmodel *))
{
	struct sharers s = {.self = fm};
	inode_foreach(fm->inode->fs, find_sharer, &s);
	for (size_t k = 0; k < s.n; k++) {
		struct fsmodel *o = s.mi[k]->fm;
		pthread_mutex_lock(&o->lock);
		bool same = o->cur == r;
		pthread_mutex_unlock(&o->lock);
		if (same)
			check(o);
		inode_put(s.mi[k]);
	}
	free(s.mi);
}
