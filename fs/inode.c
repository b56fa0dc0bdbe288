/* The inode table. Inode numbers are a hash of (parent, name, class), so they
 * stay the same while a file is unchanged, even after the kernel forgets an
 * entry and looks it up again (passthrough_ll keeps one entry per inode the
 * kernel knows; so do we, keyed by number). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "fs.h"
#include "model_fs.h"

static unsigned kind_class(enum ikind k)
{
	switch (k) {
	case I_SDIR:
	case I_MODEL:
	case I_META:
	case I_VDIR:
		return 1;  /* directories */
	case I_SLINK:
	case I_VLINK:
		return 2;
	default:
		return 3;  /* files */
	}
}

struct timespec inode_mtime(struct inode *i)
{
	pthread_mutex_lock(&i->rlock);
	struct timespec t = i->mtime;
	pthread_mutex_unlock(&i->rlock);
	return t;
}

void inode_set_mtime(struct inode *i, struct timespec t)
{
	pthread_mutex_lock(&i->rlock);
	i->mtime = t;
	pthread_mutex_unlock(&i->rlock);
}

int inode_table_init(struct fsstate *fs)
{
	pthread_mutex_init(&fs->lock, NULL);
	fs->nbuckets = 1 << 16;
	fs->table = calloc(fs->nbuckets, sizeof(*fs->table));
	return fs->table ? 0 : -ENOMEM;
}

static size_t bucket(const struct fsstate *fs, fuse_ino_t ino)
{
	return (size_t)(mfs_hash64(&ino, sizeof(ino), 0) & (fs->nbuckets - 1));
}

void inode_insert_root(struct fsstate *fs, struct inode *root)
{
	root->fs = fs;
	size_t b = bucket(fs, root->ino);
	root->hnext = fs->table[b];
	fs->table[b] = root;
	fs->ninodes++;
}

static struct inode *find_locked(const struct fsstate *fs, fuse_ino_t ino)
{
	for (struct inode *i = fs->table[bucket(fs, ino)]; i; i = i->hnext)
		if (i->ino == ino)
			return i;
	return NULL;
}

static void grow_locked(struct fsstate *fs)
{
	size_t nb = fs->nbuckets * 2;
	struct inode **t = calloc(nb, sizeof(*t));
	if (!t)
		return;  /* longer chains, still correct */
	for (size_t b = 0; b < fs->nbuckets; b++) {
		struct inode *i = fs->table[b];
		while (i) {
			struct inode *n = i->hnext;
			size_t nbk = (size_t)(mfs_hash64(&i->ino, sizeof(i->ino), 0) & (nb - 1));
			i->hnext = t[nbk];
			t[nbk] = i;
			i = n;
		}
	}
	free(fs->table);
	fs->table = t;
	fs->nbuckets = nb;
}

int dir_fd(struct inode *dir)
{
	struct fsstate *fs = dir->fs;
	return dir->parent ? dir->fd : fs->root_fd;
}

int dir_open(struct inode *dir)
{
	return openat(dir_fd(dir), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

struct inode *inode_get(struct fsstate *fs, fuse_ino_t ino)
{
	pthread_mutex_lock(&fs->lock);
	struct inode *i = find_locked(fs, ino);
	if (i)
		i->refs++;
	pthread_mutex_unlock(&fs->lock);
	return i;
}

void inode_ref(struct inode *i)
{
	struct fsstate *fs = i->fs;
	pthread_mutex_lock(&fs->lock);
	i->refs++;
	pthread_mutex_unlock(&fs->lock);
}

static void free_inode(struct inode *i)
{
	if (i->fd >= 0)
		close(i->fd);
	if (i->fs->inode_gone)
		i->fs->inode_gone(i);
	pthread_mutex_destroy(&i->lock);
	pthread_mutex_destroy(&i->rlock);
	free(i->name);
	free(i);
}

/* Drop the entry from the table once nobody holds it. Returns the parent
 * to release next (its reference from this child), or NULL. */
static struct inode *maybe_free_locked(struct inode *i)
{
	struct fsstate *fs = i->fs;
	if (i->refs || i->nlookup || i == fs->root)
		return NULL;
	struct inode **p = &fs->table[bucket(fs, i->ino)];
	while (*p != i)
		p = &(*p)->hnext;
	*p = i->hnext;
	fs->ninodes--;
	if (i->parent) {
		if (i->sib_prev)
			i->sib_prev->sib_next = i->sib_next;
		else
			i->parent->kids = i->sib_next;
		if (i->sib_next)
			i->sib_next->sib_prev = i->sib_prev;
	}
	return i;
}

void inode_put(struct inode *i)
{
	while (i) {
		struct fsstate *fs = i->fs;
		pthread_mutex_lock(&fs->lock);
		i->refs--;
		struct inode *dead = maybe_free_locked(i);
		pthread_mutex_unlock(&fs->lock);
		if (!dead)
			return;
		struct inode *parent = dead->parent;
		free_inode(dead);
		i = parent;  /* the child's reference on its parent */
	}
}

void inode_lookup_ref(struct inode *i)
{
	struct fsstate *fs = i->fs;
	pthread_mutex_lock(&fs->lock);
	i->nlookup++;
	pthread_mutex_unlock(&fs->lock);
}

void inode_lookup_put(struct inode *i)
{
	struct fsstate *fs = i->fs;
	pthread_mutex_lock(&fs->lock);
	i->nlookup++;
	i->refs--;  /* never the last: the kernel's reference keeps it */
	pthread_mutex_unlock(&fs->lock);
}

void inode_forget(struct inode *i, uint64_t n)
{
	struct fsstate *fs = i->fs;
	pthread_mutex_lock(&fs->lock);
	i->nlookup = n > i->nlookup ? 0 : i->nlookup - n;
	i->refs++;  /* held by us until inode_put below */
	pthread_mutex_unlock(&fs->lock);
	inode_put(i);
}

fuse_ino_t inode_number(const struct inode *parent, const char *name, enum ikind kind)
{
	uint64_t h = mfs_hash64(name, strlen(name),
				parent->ino * 0x9e3779b97f4a7c15ull + kind_class(kind));
	return h < 2 ? h + 2 : h;  /* 0 and 1 are reserved */
}

struct inode *inode_child(struct inode *parent, const char *name, enum ikind kind)
{
	struct fsstate *fs = parent->fs;
	pthread_mutex_lock(&fs->lock);
	/* Probe from the hash: the same key finds its entry; a collision with
	 * another key moves on. */
	fuse_ino_t ino = inode_number(parent, name, kind);
	for (;;) {
		struct inode *i = find_locked(fs, ino);
		if (!i)
			break;
		if (i->parent == parent && kind_class(i->kind) == kind_class(kind) &&
		    strcmp(i->name, name) == 0 && !i->stale) {
			if (i->kind != kind) {
				/* Same class, other kind (a model that now fails to
				 * parse shows as a file): a new identity. */
				i->stale = true;
				ino++;
				continue;
			}
			i->refs++;
			pthread_mutex_unlock(&fs->lock);
			return i;
		}
		ino++;
		if (ino < 2)
			ino = 2;
	}
	struct inode *i = calloc(1, sizeof(*i));
	char *nm = strdup(name);
	if (!i || !nm) {
		pthread_mutex_unlock(&fs->lock);
		free(i);
		free(nm);
		return NULL;
	}
	i->ino = ino;
	i->fs = fs;
	i->parent = parent;
	parent->refs++;
	i->name = nm;
	i->kind = kind;
	i->refs = 1;
	i->fd = -1;
	i->node = MFS_NONE;
	pthread_mutex_init(&i->lock, NULL);
	pthread_mutex_init(&i->rlock, NULL);
	size_t b = bucket(fs, ino);
	i->hnext = fs->table[b];
	fs->table[b] = i;
	i->sib_next = parent->kids;
	if (parent->kids)
		parent->kids->sib_prev = i;
	parent->kids = i;
	if (++fs->ninodes > fs->nbuckets)
		grow_locked(fs);
	pthread_mutex_unlock(&fs->lock);
	return i;
}

struct inode *inode_find_child(struct inode *parent, const char *name, enum ikind kind)
{
	struct fsstate *fs = parent->fs;
	pthread_mutex_lock(&fs->lock);
	struct inode *hit = NULL;
	for (fuse_ino_t ino = inode_number(parent, name, kind);; ino++) {
		struct inode *i = find_locked(fs, ino);
		if (!i)
			break;
		if (i->parent == parent && i->kind == kind && !i->stale && strcmp(i->name, name) == 0) {
			i->refs++;
			hit = i;
			break;
		}
	}
	pthread_mutex_unlock(&fs->lock);
	return hit;
}

int inode_path(const struct inode *i, char *buf, size_t size)
{
	size_t len = 0;
	for (const struct inode *p = i; p && p->parent; p = p->parent)
		len += strlen(p->name) + (len ? 1 : 0);
	if (len + 1 > size)
		return -ENAMETOOLONG;
	buf[len] = '\0';
	size_t pos = len;
	for (const struct inode *p = i; p && p->parent; p = p->parent) {
		size_t nl = strlen(p->name);
		if (pos != len)
			buf[--pos] = '/';
		pos -= nl;
		memcpy(buf + pos, p->name, nl);
	}
	return (int)len;
}

int inode_rename(struct inode *i, struct inode *np, const char *newname)
{
	char *nm = strdup(newname);
	if (!nm)
		return -ENOMEM;
	struct fsstate *fs = i->fs;
	pthread_mutex_lock(&fs->lock);
	free(i->name);
	i->name = nm;
	struct inode *old = i->parent;
	if (old && old != np) {
		if (i->sib_prev)
			i->sib_prev->sib_next = i->sib_next;
		else
			old->kids = i->sib_next;
		if (i->sib_next)
			i->sib_next->sib_prev = i->sib_prev;
		i->sib_prev = NULL;
		i->sib_next = np->kids;
		if (np->kids)
			np->kids->sib_prev = i;
		np->kids = i;
		np->refs++;
		i->parent = np;
	} else {
		old = NULL;
	}
	pthread_mutex_unlock(&fs->lock);
	if (old)
		inode_put(old);  /* the child's reference on its former parent */
	return 0;
}

/* Depth first through the kids lists. Caller holds fs->lock. */
static void visit(struct inode *dir, void (*fn)(struct inode *, void *), void *arg)
{
	for (struct inode *k = dir->kids; k; k = k->sib_next) {
		fn(k, arg);
		if (k->kids)
			visit(k, fn, arg);
	}
}

void inode_foreach_model(struct fsmodel *fm, void (*fn)(struct inode *, void *), void *arg)
{
	/* A model's inodes are its I_MODEL inode and the ones below it. */
	struct inode *mi = fm->inode;
	struct fsstate *fs = mi->fs;
	pthread_mutex_lock(&fs->lock);
	fn(mi, arg);
	visit(mi, fn, arg);
	pthread_mutex_unlock(&fs->lock);
}

void inode_foreach(struct fsstate *fs, void (*fn)(struct inode *, void *), void *arg)
{
	pthread_mutex_lock(&fs->lock);
	for (size_t b = 0; b < fs->nbuckets; b++)
		for (struct inode *i = fs->table[b]; i; i = i->hnext)
			fn(i, arg);
	pthread_mutex_unlock(&fs->lock);
}

void inode_foreach_in(struct inode *parent, void (*fn)(struct inode *, void *), void *arg)
{
	struct fsstate *fs = parent->fs;
	pthread_mutex_lock(&fs->lock);
	for (struct inode *k = parent->kids; k; k = k->sib_next)
		fn(k, arg);
	pthread_mutex_unlock(&fs->lock);
}
