/* What stat shows for every kind of inode, and the entry replies built
 * from it (timeouts long for what cannot change behind our back). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "model_fs.h"
#include "pending.h"
#include "scratch.h"

/* The block size of what is not a model's file. glibc sizes a directory
 * stream's buffer by it (at least 32 KiB), and the kernel allocates a buffer
 * of that size for each READDIRPLUS; 1 MiB made that a vmalloc of 256 pages
 * per request, the bulk of a listing's time. */
#define DIR_BLKSIZE 4096

/* Source-derived permission bits for what a model shows (writable: the
 * node takes writes and the mount is not read-only). */
static mode_t file_mode(const struct stat *src, bool writable)
{
	mode_t m = src->st_mode & 0444;
	if (writable)
		m |= src->st_mode & 0222;
	return m;
}

static mode_t dir_mode(const struct stat *src, bool ro)
{
	mode_t m = src->st_mode & 0777;
	m |= (m & 0444) >> 2;  /* readable means searchable */
	if (ro)
		m &= ~(mode_t)0222;
	return m;
}

/* A model directory: what stat shows comes from the source file alone, so
 * that it is the same before the file is indexed (a listing shows files
 * that codecs bid on without parsing them) and after. Its link count is 1,
 * "not counted" (as find and fts read it); its size is the file's. */
static int attr_model(struct inode *i, struct stat *st)
{
	struct fsstate *fs = i->fs;
	pthread_mutex_lock(&fs->lock);
	bool stale = i->stale;
	pthread_mutex_unlock(&fs->lock);
	if (stale)
		return -ESTALE;  /* it turned into a plain file: look it up again */
	if (!i->fm)
		return -EIO;  /* out of memory when it was looked up */
	struct stat src;
	pthread_mutex_lock(&i->fm->lock);
	src = i->fm->st;
	pthread_mutex_unlock(&i->fm->lock);
	st->st_mode = S_IFDIR | dir_mode(&src, fs->o.ro);
	st->st_nlink = 1;
	st->st_size = src.st_size;
	st->st_uid = src.st_uid;
	st->st_gid = src.st_gid;
	st->st_dev = src.st_dev;
	st->st_mtim = st->st_ctim = st->st_atim = inode_mtime(i);
	return 0;
}

int attr_node(struct inode *i, struct mref *r, mfs_id id, const struct stat *src,
	      struct stat *st)
{
	struct fsstate *fs = i->fs;
	memset(st, 0, sizeof(*st));
	st->st_ino = i->ino;
	st->st_blksize = DIR_BLKSIZE;
	const struct mfs_node *n = &r->m->nodes[id];
	st->st_uid = src->st_uid;
	st->st_gid = src->st_gid;
	st->st_dev = src->st_dev;
	st->st_mtim = st->st_ctim = st->st_atim = inode_mtime(i);
	if (n->kind == MFS_K_DIR) {
		st->st_mode = S_IFDIR | dir_mode(src, fs->o.ro);
		st->st_nlink = 2 + n->ndirs;
		st->st_size = n->nchild;
	} else if (n->kind == MFS_K_LINK) {
		char t[4096];
		int l = mfs_link_target(r->m, id, t, sizeof(t));
		st->st_mode = S_IFLNK | 0777;
		st->st_nlink = 1;
		st->st_size = l > 0 ? l : 0;
	} else {
		st->st_mode = S_IFREG | file_mode(src, (n->flags & MFS_NF_WRITABLE) && !fs->o.ro);
		st->st_nlink = 1;
		/* The size cat, Python and others read by: text views are read
		 * past the page cache, one round trip per read, and a request can
		 * be 1 MiB. */
		st->st_blksize = 1 << 20;
		/* The committed size, whatever writers hold: the kernel keeps one
		 * size per inode, and readers go by it (writers append where
		 * their own writes end, see op_write). */
		uint64_t size = 0;
		struct mfs_err err = {0};
		/* The size pass renders the source: not under an in-place commit. */
		if (i->fm)
			pthread_rwlock_rdlock(&i->fm->rw);
		int sr = mfs_view_size(r->m, id, &size, &err);
		if (i->fm)
			pthread_rwlock_unlock(&i->fm->rw);
		if (sr < 0)
			return -(err.code ? err.code : EIO);
		st->st_size = (off_t)size;
		st->st_blocks = (blkcnt_t)((size + 511) / 512);
	}
	return 0;
}

void attr_source(struct inode *i, const struct stat *in, struct stat *st)
{
	struct fsstate *fs = i->fs;
	*st = *in;
	if (fs->o.ro)
		st->st_mode &= ~(mode_t)0222;
	st->st_ino = i->ino;
}

int attr_of(struct inode *i, struct stat *st, double *timeout)
{
	struct fsstate *fs = i->fs;
	memset(st, 0, sizeof(*st));
	*timeout = fs->o.timeout;
	st->st_ino = i->ino;
	st->st_blksize = DIR_BLKSIZE;
	switch (i->kind) {
	case I_SDIR:
	case I_SFILE:
	case I_SLINK: {
		struct stat s;
		int r = i->parent ? fstatat(dir_fd(i->parent), i->name, &s, AT_SYMLINK_NOFOLLOW)
				  : fstat(fs->root_fd, &s);
		if (r < 0)
			return -errno;
		attr_source(i, &s, st);
		return 0;
	}
	case I_META:
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		st->st_uid = fs->uid;
		st->st_gid = fs->gid;
		return 0;
	case I_ERRORS: {
		size_t len;
		char *s = errors_snapshot(&len);
		free(s);
		st->st_mode = S_IFREG | 0444;
		st->st_nlink = 1;
		st->st_size = (off_t)len;
		st->st_uid = fs->uid;
		st->st_gid = fs->gid;
		*timeout = 0;
		return 0;
	}
	case I_SCRATCH:
		pthread_mutex_lock(&i->lock);
		scratch_stat(i, st);
		pthread_mutex_unlock(&i->lock);
		*timeout = 0;  /* scratch files change under writes of other names */
		return 0;
	case I_MODEL:
		return attr_model(i, st);
	case I_VNODE:
	case I_VDIR:
	case I_VLINK:
		break;
	}
	struct fsmodel *fm = i->fm;
	struct mfs_err err = {0};
	struct mref *r = fsmodel_current(fm, &err);
	if (!r)
		return -(err.code ? err.code : EIO);
	int ret = -ENOENT;
	mfs_id id = vnode_resolve(i, r);
	if (id != MFS_NONE) {
		struct stat src;
		pthread_mutex_lock(&fm->lock);
		src = fm->st;
		pthread_mutex_unlock(&fm->lock);
		ret = attr_node(i, r, id, &src, st);
	}
	mref_put(r);
	return ret;
}

int entry_node(struct inode *i, struct mref *r, mfs_id id, const struct stat *src,
	       struct fuse_entry_param *e)
{
	struct fsstate *fs = i->fs;
	memset(e, 0, sizeof(*e));
	e->ino = i->ino;
	e->entry_timeout = fs->o.timeout;
	if (r->m->nodes[id].kind == MFS_K_FILE && !mfs_view_size_cheap(r->m, id)) {
		/* A large text view: its exact size costs a full render, so it
		 * is given when asked for (getattr), not on lookup. Mode and
		 * owner still matter for permission checks. */
		e->attr.st_ino = i->ino;
		e->attr.st_mode = S_IFREG | file_mode(src, (r->m->nodes[id].flags & MFS_NF_WRITABLE) && !fs->o.ro);
		e->attr.st_uid = src->st_uid;
		e->attr.st_gid = src->st_gid;
		e->attr.st_nlink = 1;
		e->attr.st_mtim = e->attr.st_ctim = e->attr.st_atim = inode_mtime(i);
		e->attr_timeout = 0;
		return 0;
	}
	e->attr_timeout = fs->o.timeout;
	return attr_node(i, r, id, src, &e->attr);
}

int entry_of(struct inode *i, struct fuse_entry_param *e)
{
	struct fsstate *fs = i->fs;
	memset(e, 0, sizeof(*e));
	if (is_vnode(i)) {
		struct mfs_err err = {0};
		struct mref *r = fsmodel_current(i->fm, &err);
		if (!r)
			return -(err.code ? err.code : EIO);
		mfs_id id = vnode_resolve(i, r);
		int ret = -ENOENT;
		if (id != MFS_NONE) {
			struct stat src;
			pthread_mutex_lock(&i->fm->lock);
			src = i->fm->st;
			pthread_mutex_unlock(&i->fm->lock);
			ret = entry_node(i, r, id, &src, e);
		}
		mref_put(r);
		return ret;
	}
	double t;
	int r = attr_of(i, &e->attr, &t);
	if (r < 0)
		return r;
	e->ino = i->ino;
	e->attr_timeout = t;
	e->entry_timeout = i->kind == I_SCRATCH ? 0 : fs->o.timeout;
	return 0;
}
