/* Operations on names and attributes: lookup, forget, getattr, setattr,
 * readlink, statfs. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/statvfs.h>
#include <syslog.h>
#include <unistd.h>

#include "attr.h"
#include "caller.h"
#include "commit.h"
#include "model_fs.h"
#include "handle.h"
#include "ops.h"
#include "pending.h"
#include "scratch.h"
#include "source.h"

void reply_err(fuse_req_t req, int err)
{
	fuse_reply_err(req, err);
}

bool is_model_dir(const struct inode *i)
{
	return i->kind == I_MODEL || i->kind == I_VDIR;
}

void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct fsstate *fs = userdata;
	/* Data goes to the kernel by splice where a view is a range of the
	 * source (as passthrough_hp does). No FUSE_CAP_ATOMIC_O_TRUNC: with it
	 * the kernel sets a truncating opener's inode size to 0 itself, and
	 * readers of the committed content sharing that inode read short;
	 * without it a truncating open is followed by a setattr of size 0,
	 * whose reply (the committed size, for views) is the size the kernel
	 * keeps. The caller's umask comes with each creation, unapplied
	 * (caller.h). */
	unsigned want[] = {FUSE_CAP_SPLICE_WRITE, FUSE_CAP_SPLICE_MOVE, FUSE_CAP_READDIRPLUS,
			   FUSE_CAP_PARALLEL_DIROPS, FUSE_CAP_CACHE_SYMLINKS, FUSE_CAP_ASYNC_READ,
			   FUSE_CAP_NO_OPENDIR_SUPPORT, FUSE_CAP_DONT_MASK};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (conn->capable & want[k])
			conn->want |= want[k];
	/* Requests are small: reading them by splice costs syscalls and saves
	 * nothing (it pays only for large writes). */
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	fs->no_opendir = conn->want & FUSE_CAP_NO_OPENDIR_SUPPORT;
	/* readdirplus always, not only when the kernel guesses a stat follows */
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
	conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;  /* on by default in libfuse */
	if (conn->max_readahead < (1u << 20))
		conn->max_readahead = 1u << 20;
}

struct inode *vnode_child(struct inode *parent, struct mref *r, mfs_id id)
{
	uint8_t k = r->m->nodes[id].kind;
	struct inode *c = inode_child(parent, r->m->nodes[id].name,
				      k == MFS_K_DIR ? I_VDIR : k == MFS_K_LINK ? I_VLINK : I_VNODE);
	if (!c)
		return NULL;
	pthread_mutex_lock(&c->lock);
	if (!c->fm) {
		c->fm = parent->fm;
		inode_set_mtime(c, inode_mtime(parent->fm->inode));
	}
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_lock(&c->rlock);
	c->gen = r->gen;
	c->node = id;
	pthread_mutex_unlock(&c->rlock);
	return c;
}

/* A child of a model directory: a node of the model, or a scratch file. */
static struct inode *model_child(struct inode *parent, const char *name, int *err)
{
	struct mfs_err e = {0};
	struct mref *r = fsmodel_current(parent->fm, &e);
	if (!r) {
		/* ESTALE when the model turned out not to parse: the path walk
		 * is done again and finds a plain file. */
		*err = e.code ? e.code : EIO;
		return NULL;
	}
	mfs_id pid = vnode_resolve(parent, r);
	mfs_id id = pid == MFS_NONE ? MFS_NONE : mfs_lookup(r->m, pid, name);
	struct inode *c = NULL;
	if (id != MFS_NONE) {
		c = vnode_child(parent, r, id);
		if (!c)
			*err = ENOMEM;
	} else {
		c = scratch_find(parent, name);
		if (!c)
			*err = ENOENT;
	}
	mref_put(r);
	return c;
}

struct inode *child_lookup(struct inode *parent, const char *name, int *err)
{
	*err = 0;
	switch (parent->kind) {
	case I_SDIR: {
		if (!parent->parent && strcmp(name, ".modelfs") == 0)
			return inode_child(parent, name, I_META);
		if (mfs_private_name(name)) {
			*err = ENOENT;
			return NULL;
		}
		watch_dir(parent);
		struct stat st;
		return source_child(parent, name, &st, false, err);
	}
	case I_META:
		if (strcmp(name, "errors") == 0)
			return inode_child(parent, name, I_ERRORS);
		*err = ENOENT;
		return NULL;
	case I_MODEL:
	case I_VDIR:
		return model_child(parent, name, err);
	default:
		*err = ENOTDIR;
		return NULL;
	}
}

void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fsstate *fs = req_fs(req);
	struct inode *p = inode_get(fs, parent);
	if (!p)
		return reply_err(req, ESTALE);
	int err;
	struct inode *c = child_lookup(p, name, &err);
	inode_put(p);
	if (!c) {
		if (err == ENOENT) {
			/* A negative entry, briefly: a model rewritten from outside
			 * gains names, and its reparse cannot reach the kernel's
			 * negative entries (it invalidates the names it knows). */
			struct fuse_entry_param e = {0};
			e.entry_timeout = 1.0;
			fuse_reply_entry(req, &e);
			return;
		}
		return reply_err(req, err);
	}
	struct fuse_entry_param e;
	int r = entry_of(c, &e);
	if (r < 0) {
		inode_put(c);
		return reply_err(req, -r);
	}
	inode_lookup_ref(c);
	inode_put(c);
	fuse_reply_entry(req, &e);
}

void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fsstate *fs = req_fs(req);
	struct inode *i = inode_get(fs, ino);
	if (i) {
		inode_forget(i, nlookup);
		inode_put(i);
	}
	fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fsstate *fs = req_fs(req);
	for (size_t k = 0; k < count; k++) {
		struct inode *i = inode_get(fs, forgets[k].ino);
		if (i) {
			inode_forget(i, forgets[k].nlookup);
			inode_put(i);
		}
	}
	fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	(void)fi;
	struct inode *i = inode_get(fs, ino);
	if (!i)
		return reply_err(req, ESTALE);
	struct stat st;
	double t;
	int r = attr_of(i, &st, &t);
	inode_put(i);
	if (r < 0)
		return reply_err(req, -r);
	fuse_reply_attr(req, &st, t);
}

/* The entry of a SOURCE inode, opened O_PATH without following a link:
 * a directory's own descriptor, else its name, which must still be of the
 * inode's kind (a link put under a plain file's name is ESTALE: the
 * kernel's path walks look it up again). *own: the caller closes it. */
static int source_entry(struct inode *i, struct stat *st, bool *own)
{
	*own = i->kind != I_SDIR;
	int fd = *own ? src_open(dir_fd(i->parent), i->name, O_PATH, 0) : dir_fd(i);
	if (fd < 0)
		return fd;
	bool link = false, dir = false;
	int r = fstat(fd, st) < 0 ? -errno : 0;
	if (r == 0) {
		link = S_ISLNK(st->st_mode);
		dir = S_ISDIR(st->st_mode);
	}
	if (r == 0 && (link != (i->kind == I_SLINK) || dir != (i->kind == I_SDIR)))
		r = -ESTALE;
	if (r < 0 && *own)
		close(fd);
	return r < 0 ? r : fd;
}

/* Truncate the regular file of O_PATH descriptor fd, or the handle's file. */
static int truncate_source(int fd, const struct stat *st, off_t size, struct fuse_file_info *fi)
{
	struct fh *h = fi ? handle_get(fi->fh) : NULL;
	int r;
	if (h && h->fd >= 0) {
		r = ftruncate(h->fd, size) < 0 ? -errno : 0;
	} else if (!S_ISREG(st->st_mode)) {
		r = S_ISDIR(st->st_mode) ? -EISDIR : -EINVAL;
	} else {
		int wfd = src_reopen(fd, O_WRONLY | O_NONBLOCK);
		r = wfd < 0 ? wfd : ftruncate(wfd, size) < 0 ? -errno : 0;
		if (wfd >= 0)
			close(wfd);
	}
	handle_put(h);
	return r;
}

/* chmod/chown/truncate/utimens on a source entry, on the opened entry
 * (never by a name walked again). */
static int setattr_source(struct inode *i, struct stat *a, int to_set, struct fuse_file_info *fi)
{
	struct fsstate *fs = i->fs;
	if (fs->o.ro)
		return -EROFS;
	struct stat st;
	bool own;
	int fd = source_entry(i, &st, &own);
	if (fd < 0)
		return fd;
	int r = 0;
	if ((to_set & FUSE_SET_ATTR_MODE) && i->kind != I_SLINK)
		r = src_fchmod(fd, a->st_mode & 07777);
	if (r == 0 && (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID))) {
		uid_t u = (to_set & FUSE_SET_ATTR_UID) ? a->st_uid : (uid_t)-1;
		gid_t g = (to_set & FUSE_SET_ATTR_GID) ? a->st_gid : (gid_t)-1;
		r = src_fchown(fd, u, g);
	}
	if (r == 0 && (to_set & FUSE_SET_ATTR_SIZE))
		r = truncate_source(fd, &st, a->st_size, fi);
	if (r == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME))) {
		struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			ts[0] = a->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			ts[1] = a->st_mtim;
		r = src_futimens(fd, ts);
	}
	if (own)
		close(fd);
	return r;
}

/* A view of fixed size (data: the element bytes) holds exactly its size:
 * truncating it to anything but 0 (rewriting it whole) or that size would
 * only be refused at close, or not at all when no write follows; refused
 * here, with its line in the errors. */
static int fixed_size_check(struct inode *i, struct mref *r, mfs_id id, uint64_t to)
{
	uint64_t size = 0;
	struct mfs_err err = {0};
	if (r->m->nodes[id].view != MFS_V_DATA || !to || mfs_view_size(r->m, id, &size, &err) < 0 ||
	    to == size)
		return 0;
	char msg[160];
	snprintf(msg, sizeof(msg),
		 "truncate to %llu bytes refused: the view holds exactly %llu bytes "
		 "(truncate to 0 and write them all)",
		 (unsigned long long)to, (unsigned long long)size);
	log_error(i, NULL, EINVAL, msg);
	return -EINVAL;
}

/* Truncating a view: the writes of that open file (ftruncate), or those
 * kept for the next writer (truncate(2) by name), start from the truncated
 * content. */
/* The file that thread tid opened for writing on view i and has not written
 * yet (the one its open(O_TRUNC) truncates), +1 reference, or NULL. */
static struct fh *truncating_writer(struct inode *i, pid_t tid)
{
	uint64_t id = 0;
	pthread_mutex_lock(&i->lock);
	for (unsigned k = 0; k < 4; k++) {
		unsigned j = (i->writers_next - 1 - k) % 4;
		if (i->writers[j].fh && i->writers[j].tid == tid) {
			id = i->writers[j].fh;
			i->writers[j].fh = 0;
			break;
		}
	}
	pthread_mutex_unlock(&i->lock);
	struct fh *h = id ? handle_get(id) : NULL;
	if (h && h->held != i) {
		handle_put(h);
		h = NULL;
	}
	return h;
}

static int setattr_view(struct inode *i, struct stat *a, int to_set, struct fuse_file_info *fi,
			pid_t tid)
{
	struct fsstate *fs = i->fs;
	if (!(to_set & FUSE_SET_ATTR_SIZE))
		return 0;  /* mode, owner and times of views follow the source */
	if (fs->o.ro)
		return -EROFS;
	struct mfs_err err = {0};
	struct mref *r = fsmodel_current(i->fm, &err);
	if (!r)
		return -(err.code ? err.code : EIO);
	mfs_id id = vnode_resolve(i, r);
	bool writable = id != MFS_NONE && (r->m->nodes[id].flags & MFS_NF_WRITABLE);
	int bad = writable ? fixed_size_check(i, r, id, (uint64_t)a->st_size) : 0;
	mref_put(r);
	if (id == MFS_NONE)
		return -ENOENT;
	if (!writable)
		return -EACCES;
	if (bad)
		return bad;
	struct fh *h = fi ? handle_get(fi->fh) : truncating_writer(i, tid);
	if (h) {
		/* The writes of that open file start from the truncation, unless
		 * it wrote already and this is a truncate(2) of its own. */
		pthread_mutex_lock(&h->wlock);
		int e = 1;
		if (h->w && (fi || !h->w->dirty)) {
			e = -wbuf_truncate(h->w->buf, (uint64_t)a->st_size);
			if (!e)
				h->w->truncated = true;
		}
		pthread_mutex_unlock(&h->wlock);
		handle_put(h);
		if (e <= 0)
			return e;
	}
	/* Kept for the next writer. */
	pthread_mutex_lock(&i->lock);
	int e = 0;
	struct pending *p = i->pend ? i->pend : pending_take(i, &e);
	if (p) {
		e = -wbuf_truncate(p->buf, (uint64_t)a->st_size);
		if (!e)
			p->truncated = true;
		if (i->pend != p) {
			if (e)
				pending_free(p);
			else
				pending_keep(i, p);
		}
	}
	pthread_mutex_unlock(&i->lock);
	return p && !e ? 0 : -e;
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	struct inode *i = inode_get(fs, ino);
	if (!i)
		return reply_err(req, ESTALE);
	int r = 0;
	switch (i->kind) {
	case I_SDIR:
	case I_SFILE:
	case I_SLINK:
		/* as the caller: the kernel under SOURCE checks their rights
		 * on the entry itself (a hard link swapped in is not theirs) */
		r = caller_enter(req);
		if (r == 0) {
			r = setattr_source(i, attr, to_set, fi);
			caller_leave();
		}
		break;
	case I_VNODE:
		r = setattr_view(i, attr, to_set, fi, fuse_req_ctx(req)->pid);
		break;
	case I_SCRATCH:
		pthread_mutex_lock(&i->lock);
		if (!i->scr) {
			r = -ENOENT;
		} else {
			if (to_set & FUSE_SET_ATTR_SIZE)
				r = scratch_truncate(i, (uint64_t)attr->st_size);
			if (to_set & FUSE_SET_ATTR_MODE)
				i->scr->mode = S_IFREG | (attr->st_mode & 07777);
			if (to_set & FUSE_SET_ATTR_UID)
				i->scr->uid = attr->st_uid;
			if (to_set & FUSE_SET_ATTR_GID)
				i->scr->gid = attr->st_gid;
			if (to_set & FUSE_SET_ATTR_MTIME)
				i->scr->mtime = attr->st_mtim;
		}
		pthread_mutex_unlock(&i->lock);
		break;
	default:
		break;  /* model directories, .modelfs: nothing to set */
	}
	if (r < 0) {
		inode_put(i);
		return reply_err(req, -r);
	}
	struct stat st;
	double t;
	r = attr_of(i, &st, &t);
	inode_put(i);
	if (r < 0)
		return reply_err(req, -r);
	fuse_reply_attr(req, &st, t);
}

void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct fsstate *fs = req_fs(req);
	struct inode *i = inode_get(fs, ino);
	if (!i)
		return reply_err(req, ESTALE);
	char buf[4097];
	int err = 0;
	if (i->kind == I_SLINK) {
		ssize_t n = readlinkat(dir_fd(i->parent), i->name, buf, sizeof(buf) - 1);
		if (n < 0)
			err = errno;
		else
			buf[n] = '\0';
	} else if (i->kind == I_VLINK) {
		struct mfs_err e = {0};
		struct mref *r = fsmodel_current(i->fm, &e);
		mfs_id id = r ? vnode_resolve(i, r) : MFS_NONE;
		if (id == MFS_NONE || mfs_link_target(r->m, id, buf, sizeof(buf)) < 0)
			err = EINVAL;
		mref_put(r);
	} else {
		err = EINVAL;
	}
	inode_put(i);
	if (err)
		return reply_err(req, err);
	fuse_reply_readlink(req, buf);
}

void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct fsstate *fs = req_fs(req);
	(void)ino;
	struct statvfs sv;
	if (fstatvfs(fs->root_fd, &sv) < 0)
		return reply_err(req, errno);
	fuse_reply_statfs(req, &sv);
}
