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
#include "commit.h"
#include "model_fs.h"
#include "handle.h"
#include "ops.h"
#include "pending.h"
#include "scratch.h"

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
	(void)userdata;
	/* Data goes to the kernel by splice where a view is a range of the
	 * source (as passthrough_hp does); O_TRUNC comes with open, so a
	 * truncating open needs no separate setattr. */
	unsigned want[] = {FUSE_CAP_SPLICE_WRITE, FUSE_CAP_SPLICE_MOVE, FUSE_CAP_ATOMIC_O_TRUNC,
			   FUSE_CAP_READDIRPLUS, FUSE_CAP_PARALLEL_DIROPS, FUSE_CAP_CACHE_SYMLINKS,
			   FUSE_CAP_ASYNC_READ, FUSE_CAP_NO_OPENDIR_SUPPORT};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (conn->capable & want[k])
			conn->want |= want[k];
	/* Requests are small: reading them by splice costs syscalls and saves
	 * nothing (it pays only for large writes). */
	conn->want &= ~(unsigned)FUSE_CAP_SPLICE_READ;
	fs.no_opendir = conn->want & FUSE_CAP_NO_OPENDIR_SUPPORT;
	/* readdirplus always, not only when the kernel guesses a stat follows */
	conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
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
	struct inode *p = inode_get(parent);
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
	struct inode *i = inode_get(ino);
	if (i) {
		inode_forget(i, nlookup);
		inode_put(i);
	}
	fuse_reply_none(req);
}

void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	for (size_t k = 0; k < count; k++) {
		struct inode *i = inode_get(forgets[k].ino);
		if (i) {
			inode_forget(i, forgets[k].nlookup);
			inode_put(i);
		}
	}
	fuse_reply_none(req);
}

void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct inode *i = inode_get(ino);
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

/* chmod/chown/truncate/utimens on a source entry. */
static int setattr_source(struct inode *i, struct stat *a, int to_set, struct fuse_file_info *fi)
{
	int dfd = i->parent ? dir_fd(i->parent) : -1;
	char self[64];
	const char *name = i->name;
	if (!i->parent) {
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fs.root_fd);
		name = self;
		dfd = AT_FDCWD;
	}
	if (fs.o.ro)
		return -EROFS;
	if ((to_set & FUSE_SET_ATTR_MODE) && i->kind != I_SLINK &&
	    fchmodat(dfd, name, a->st_mode & 07777, 0) < 0)
		return -errno;
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t u = (to_set & FUSE_SET_ATTR_UID) ? a->st_uid : (uid_t)-1;
		gid_t g = (to_set & FUSE_SET_ATTR_GID) ? a->st_gid : (gid_t)-1;
		if (fchownat(dfd, name, u, g, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		struct fh *h = fi ? handle_get(fi->fh) : NULL;
		int fd = h && h->fd >= 0 ? h->fd : openat(dfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
		int r = fd < 0 ? -1 : ftruncate(fd, a->st_size);
		int e = errno;
		if (fd >= 0 && !(h && h->fd >= 0))
			close(fd);
		handle_put(h);
		if (r < 0)
			return -e;
	}
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec ts[2] = {{0, UTIME_OMIT}, {0, UTIME_OMIT}};
		if (to_set & FUSE_SET_ATTR_ATIME_NOW)
			ts[0].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_ATIME)
			ts[0] = a->st_atim;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW)
			ts[1].tv_nsec = UTIME_NOW;
		else if (to_set & FUSE_SET_ATTR_MTIME)
			ts[1] = a->st_mtim;
		if (utimensat(dfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return -errno;
	}
	return 0;
}

/* Truncating a view: the writes of that open file (ftruncate), or those
 * kept for the next writer (truncate(2) by name), start from the truncated
 * content. */
static int setattr_view(struct inode *i, struct stat *a, int to_set, struct fuse_file_info *fi)
{
	if (!(to_set & FUSE_SET_ATTR_SIZE))
		return 0;  /* mode, owner and times of views follow the source */
	if (fs.o.ro)
		return -EROFS;
	struct mfs_err err = {0};
	struct mref *r = fsmodel_current(i->fm, &err);
	if (!r)
		return -(err.code ? err.code : EIO);
	mfs_id id = vnode_resolve(i, r);
	bool writable = id != MFS_NONE && (r->m->nodes[id].flags & MFS_NF_WRITABLE);
	mref_put(r);
	if (id == MFS_NONE)
		return -ENOENT;
	if (!writable)
		return -EACCES;
	struct fh *h = fi ? handle_get(fi->fh) : NULL;
	pthread_mutex_lock(&i->lock);
	int e = 0;
	struct pending *p = h && h->w ? h->w : (i->pend ? i->pend : pending_take(i, &e));
	if (p) {
		e = -wbuf_truncate(p->buf, (uint64_t)a->st_size);
		if (!e)
			p->truncated = true;
		if (!(h && h->w) && i->pend != p) {
			if (e)
				pending_free(p);
			else
				pending_keep(i, p);  /* kept for the next writer */
		}
	}
	pthread_mutex_unlock(&i->lock);
	handle_put(h);
	return p && !e ? 0 : -e;
}

void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi)
{
	struct inode *i = inode_get(ino);
	if (!i)
		return reply_err(req, ESTALE);
	int r = 0;
	switch (i->kind) {
	case I_SDIR:
	case I_SFILE:
	case I_SLINK:
		r = setattr_source(i, attr, to_set, fi);
		break;
	case I_VNODE:
		r = setattr_view(i, attr, to_set, fi);
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
	struct inode *i = inode_get(ino);
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
	(void)ino;
	struct statvfs sv;
	if (fstatvfs(fs.root_fd, &sv) < 0)
		return reply_err(req, errno);
	fuse_reply_statfs(req, &sv);
}
