/* Editor scratch files in model directories (see scratch.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "scratch.h"

static int no_base(void *ctx, uint64_t off, size_t len, void *buf)
{
	(void)ctx;
	(void)off;
	(void)len;
	(void)buf;
	return -EIO;
}

struct find_arg {
	const char *name;
	struct inode *hit;
};

static void find_fn(struct inode *i, void *arg)
{
	struct find_arg *a = arg;
	if (i->kind == I_SCRATCH && i->scr && i->scr->linked && !i->stale &&
	    strcmp(i->name, a->name) == 0)
		a->hit = i;
}

struct inode *scratch_find(struct inode *dir, const char *name)
{
	struct fsstate *fs = dir->fs;
	struct find_arg a = {name, NULL};
	inode_foreach_in(dir, find_fn, &a);
	if (!a.hit)
		return NULL;
	return inode_get(fs, a.hit->ino);
}

struct inode *scratch_create(struct inode *dir, const char *name, mode_t mode, uid_t uid,
			     gid_t gid, int *err)
{
	struct fsstate *fs = dir->fs;
	struct inode *si = inode_child(dir, name, I_SCRATCH);
	if (!si) {
		*err = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&si->lock);
	if (si->scr && si->scr->linked) {
		pthread_mutex_unlock(&si->lock);
		return si;  /* exists: the caller opens it */
	}
	struct scratch *s = calloc(1, sizeof(*s));
	if (s)
		s->buf = wbuf_new(0, no_base, NULL, fs->o.max_scratch);
	if (!s || !s->buf) {
		if (s)
			free(s);
		pthread_mutex_unlock(&si->lock);
		inode_put(si);
		*err = ENOMEM;
		return NULL;
	}
	scratch_free(si->fs, si->scr);
	s->mode = S_IFREG | (mode & 07777);
	s->uid = uid;
	s->gid = gid;
	clock_gettime(CLOCK_REALTIME, &s->mtime);
	s->ctime = s->mtime;
	s->linked = true;
	si->scr = s;
	si->fm = dir->fm;
	pthread_mutex_unlock(&si->lock);
	/* The name keeps the file alive even when the kernel forgets it. */
	pthread_mutex_lock(&fs->lock);
	si->refs++;
	pthread_mutex_unlock(&fs->lock);
	dir_changed(dir);
	return si;
}

int scratch_write(struct inode *si, uint64_t off, const void *data, size_t len)
{
	struct fsstate *fs = si->fs;
	struct scratch *s = si->scr;
	uint64_t before = wbuf_held(s->buf);
	uint64_t after_max = before + len;
	if (atomic_load(&fs->scratch_bytes) + (after_max - before) > fs->o.max_scratch)
		return -ENOSPC;
	int r = wbuf_write(s->buf, off, data, len);
	if (r == -EFBIG)
		r = -ENOSPC;
	if (r == 0) {
		uint64_t after = wbuf_held(s->buf);
		atomic_fetch_add(&fs->scratch_bytes, after - before);
		clock_gettime(CLOCK_REALTIME, &s->mtime);
		s->ctime = s->mtime;
	}
	return r;
}

int scratch_truncate(struct inode *si, uint64_t size)
{
	struct fsstate *fs = si->fs;
	struct scratch *s = si->scr;
	uint64_t before = wbuf_held(s->buf);
	int r = wbuf_truncate(s->buf, size);
	if (r < 0)
		return r;
	atomic_fetch_sub(&fs->scratch_bytes, before - wbuf_held(s->buf));
	clock_gettime(CLOCK_REALTIME, &s->mtime);
	s->ctime = s->mtime;
	return 0;
}

void scratch_free(struct fsstate *fs, struct scratch *s)
{
	if (!s)
		return;
	atomic_fetch_sub(&fs->scratch_bytes, wbuf_held(s->buf));
	wbuf_free(s->buf);
	free(s);
}

void scratch_unlink(struct inode *si)
{
	pthread_mutex_lock(&si->lock);
	bool was = si->scr && si->scr->linked;
	if (was)
		si->scr->linked = false;
	si->stale = true;  /* a new file of this name gets a new number */
	pthread_mutex_unlock(&si->lock);
	if (si->parent)
		dir_changed(si->parent);
	if (was)
		inode_put(si);  /* the name's reference */
}

int scratch_rename(struct inode *si, struct inode *newdir, const char *newname)
{
	/* A new inode under the new name takes over the data. */
	struct inode *ni = inode_child(newdir, newname, I_SCRATCH);
	if (!ni)
		return -ENOMEM;
	pthread_mutex_lock(&si->lock);
	struct scratch *s = si->scr;
	si->scr = NULL;
	pthread_mutex_unlock(&si->lock);
	if (!s) {
		inode_put(ni);
		return -ENOENT;
	}
	s->linked = false;
	si->stale = true;
	inode_put(si);  /* the old name's reference */
	pthread_mutex_lock(&ni->lock);
	scratch_free(ni->fs, ni->scr);
	bool had = ni->scr != NULL;
	s->linked = true;
	clock_gettime(CLOCK_REALTIME, &s->ctime);
	ni->scr = s;
	ni->fm = newdir->fm;
	ni->stale = false;
	pthread_mutex_unlock(&ni->lock);
	if (had)
		inode_put(ni);  /* the replaced file's name reference */
	dir_changed(newdir);
	/* ni keeps the reference from inode_child as the name's reference. */
	return 0;
}

void scratch_stat(struct inode *si, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	struct scratch *s = si->scr;
	st->st_ino = si->ino;
	st->st_nlink = s && s->linked ? 1 : 0;
	if (!s)
		return;
	st->st_mode = s->mode;
	st->st_uid = s->uid;
	st->st_gid = s->gid;
	st->st_size = (off_t)wbuf_size(s->buf);
	st->st_blocks = (st->st_size + 511) / 512;
	st->st_blksize = 4096;
	st->st_mtim = s->mtime;
	st->st_atim = s->mtime;
	st->st_ctim = s->ctime;
}

struct list_arg {
	char **v;
	size_t n, cap;
};

static void list_fn(struct inode *i, void *arg)
{
	struct list_arg *a = arg;
	if (i->kind != I_SCRATCH || !i->scr || !i->scr->linked || i->stale)
		return;
	if (MFS_ARRAY_RESERVE(a->v, a->n, a->cap, 1, 8) < 0)
		return;
	a->v[a->n] = strdup(i->name);
	if (a->v[a->n])
		a->n++;
}

char **scratch_list(struct inode *dir, size_t *n)
{
	struct list_arg a = {0};
	inode_foreach_in(dir, list_fn, &a);
	*n = a.n;
	return a.v;
}
