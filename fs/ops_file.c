/* File operations: open, create, read, write, flush, release, fsync, for
 * SOURCE files (passthrough, spliced), views (rendered, or spliced where a
 * view is a range of the source) and scratch files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <dirent.h>

#include "attr.h"
#include "caller.h"
#include "commit.h"
#include "model_fs.h"
#include "ops.h"
#include "handle.h"
#include "pending.h"
#include "scratch.h"
#include "source.h"
#include "store.h"
#include "warm.h"

/* The open file of a request, held until handle_put. */
static struct fh *fh_of(struct fuse_file_info *fi)
{
	return handle_get(fi->fh);
}

static int open_view(struct inode *i, struct fuse_file_info *fi, struct fh *h)
{
	struct fsstate *fs = i->fs;
	struct mfs_err err = {0};
	/* Counted before it takes a generation: a commit either sees it (and
	 * rewrites the source beside, leaving this generation's file intact)
	 * or finishes its in-place patch and the new generation first. */
	inode_ref(i);
	h->held = i;
	h->counted = i->fm;
	atomic_fetch_add(&i->fm->open_views, 1);
	pthread_rwlock_rdlock(&i->fm->rw);
	pthread_rwlock_unlock(&i->fm->rw);
	fsmodel_check(i->fm);
	struct mref *r = fsmodel_current(i->fm, &err);
	if (!r)
		return -(err.code ? err.code : EIO);
	mfs_id id = vnode_resolve(i, r);
	if (id == MFS_NONE) {
		mref_put(r);
		return -ENOENT;
	}
	h->ref = r;
	h->node = id;
	h->rc = mfs_rcache_new();
	if (!h->rc)
		return -ENOMEM;
	fsmodel_hold_reads(i->fm, h->rc);
	int acc = fi->flags & O_ACCMODE;
	if (acc != O_RDONLY) {
		if (fs->o.ro)
			return -EROFS;
		if (store_blob(i->fm->inode))
			return store_refuse(i->fm->inode);
		if (!(r->m->nodes[id].flags & MFS_NF_WRITABLE))
			return -EACCES;
		if (faccessat(dir_fd(i->fm->inode->parent), i->fm->inode->name, W_OK, AT_EACCESS) < 0)
			return -EACCES;  /* a read-only source: its views are read-only */
		pthread_mutex_lock(&i->lock);
		int e = 0;
		h->w = pending_take(i, &e);  /* O_TRUNC comes as a setattr (op_init) */
		pthread_mutex_unlock(&i->lock);
		if (!h->w)
			return -e;
		/* Writes stay out of the page cache, which readers share: they see
		 * committed content only; this file reads its own writes from us. */
		fi->direct_io = 1;
		fi->keep_cache = 1;  /* the pages readers of the committed content use */
		h->append = fi->flags & O_APPEND;
		return 0;
	}
	/* Text views are rendered at each read anyway: read them past the page
	 * cache, so that a reader sees exactly the committed content whatever
	 * size a writer made the kernel believe. */
	uint8_t v = r->m->nodes[id].view;
	if (v != MFS_V_DATA && v != MFS_V_NPY && v != MFS_V_RAW) {
		fi->direct_io = 1;
		return 0;
	}
	/* Raw views (data, data.npy) keep the page cache (re-reads, mmap), which
	 * the kernel keeps one per inode: it serves one generation at a time.
	 * Files of that generation share it, kept across opens; a file of
	 * another generation while those are open reads past it (else each
	 * would fill pages the other reads: a read mixing two commits). The
	 * first file of a new generation drops the old pages (keep_cache 0),
	 * in its open after our reply: until it reads, others read past the
	 * cache too. */
	pthread_mutex_lock(&i->lock);
	if (!i->cache_first && (i->cache_users == 0 || i->cache_gen == r->gen)) {
		fi->keep_cache = i->cache_gen == r->gen;
		if (!fi->keep_cache)
			i->cache_first = h;
		i->cache_gen = r->gen;
		i->cache_users++;
		h->cached = true;
	} else {
		fi->direct_io = 1;
	}
	pthread_mutex_unlock(&i->lock);
	if (mfs_view_size_cheap(r->m, id) && mfs_view_size(r->m, id, &h->size, &err) < 0)
		h->size = 0;
	return 0;
}

/* Open i for a handle; fd: i's source file already open (create), or -1.
 * The handle takes fd, on failure too. */
static int file_open_fd(struct inode *i, struct fuse_file_info *fi, int fd)
{
	struct fh *h = fh_new();
	if (!h) {
		if (fd >= 0)
			close(fd);
		return -ENOMEM;
	}
	h->fd = fd;
	int r = 0;
	switch (i->kind) {
	case I_SFILE: {
		int flags = fi->flags & ~(O_CREAT | O_EXCL | O_NOCTTY);
		if (h->fd < 0)
			h->fd = src_open(dir_fd(i->parent), i->name, flags, 0);
		if (h->fd < 0) {
			r = h->fd;
			h->fd = -1;
		}
		fi->keep_cache = (fi->flags & O_ACCMODE) == O_RDONLY;
		break;
	}
	case I_VNODE:
		r = open_view(i, fi, h);
		break;
	case I_SCRATCH:
		pthread_mutex_lock(&i->lock);
		if (!i->scr)
			r = -ENOENT;
		pthread_mutex_unlock(&i->lock);
		fi->direct_io = 1;  /* small, private, and changed under many names */
		break;
	case I_ERRORS:
		if ((fi->flags & O_ACCMODE) != O_RDONLY)
			r = -EACCES;
		h->snap = errors_snapshot(&h->snap_len);
		fi->direct_io = 1;
		break;
	default:
		r = -EISDIR;
	}
	if (r < 0) {
		fh_destroy(h);
		return r;
	}
	/* A file opened for reading has nothing to flush: no FLUSH round trip
	 * at each close (and none for warm.c's own reads of the mount, which
	 * would wait on this process from inside close(2)). */
	if ((fi->flags & O_ACCMODE) == O_RDONLY)
		fi->noflush = 1;
	uint64_t size = h->size, gen = h->ref ? h->ref->gen : 0;
	fi->fh = handle_add(h);
	if (!fi->fh) {
		fh_destroy(h);
		return -ENOMEM;
	}
	if (size && fi->keep_cache)
		warm_on_open(i, gen, size, fi->fh);
	return 0;
}

int file_open(struct inode *i, struct fuse_file_info *fi)
{
	return file_open_fd(i, fi, -1);
}

void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	struct inode *i = inode_get(fs, ino);
	if (!i)
		return reply_err(req, ESTALE);
	if (fs->o.ro && (fi->flags & O_ACCMODE) != O_RDONLY) {
		inode_put(i);
		return reply_err(req, EROFS);
	}
	/* A file of SOURCE is opened as the caller: the kernel under SOURCE
	 * checks their rights on the file the name now holds. */
	bool as_caller = i->kind == I_SFILE;
	int r = as_caller ? caller_enter(req) : 0;
	if (r == 0)
		r = file_open(i, fi);
	if (as_caller)
		caller_leave();
	if (r == 0 && i->kind == I_VNODE && (fi->flags & O_ACCMODE) != O_RDONLY) {
		pthread_mutex_lock(&i->lock);
		i->writers[i->writers_next++ % 4] = (struct writer_open){
			.tid = fuse_req_ctx(req)->pid, .fh = fi->fh};
		pthread_mutex_unlock(&i->lock);
	}
	inode_put(i);
	if (r < 0)
		return reply_err(req, -r);
	fuse_reply_open(req, fi);
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	struct inode *p = inode_get(fs, parent);
	if (!p)
		return reply_err(req, ESTALE);
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int err = 0, fd = -1;
	struct inode *c = NULL;
	if (fs->o.ro) {
		err = EROFS;
	} else if (p->kind == I_SDIR) {
		if (mfs_private_name(name) || (!p->parent && strcmp(name, ".modelfs") == 0)) {
			err = EPERM;
		} else if ((err = -caller_enter(req)) == 0) {
			/* Created as the caller, never through a link put under the
			 * name (ELOOP); the file opened here is the one served. */
			fd = src_open(dir_fd(p), name, fi->flags | O_CREAT, caller_mode(req, mode));
			caller_leave();
			if (fd < 0)
				err = -fd;
			else
				c = child_lookup(p, name, &err);
		}
	} else if (is_model_dir(p)) {
		/* An existing view opens as it is; any other name is a scratch
		 * file (an editor's swap, backup or temporary file). */
		c = child_lookup(p, name, &err);
		if (c && (fi->flags & O_EXCL)) {
			err = EEXIST;
		} else if (!c && err == ENOENT) {
			err = 0;
			c = scratch_create(p, name, caller_mode(req, mode), ctx->uid, ctx->gid, &err);
		}
	} else {
		err = EPERM;
	}
	inode_put(p);
	if (!c || err) {
		if (fd >= 0)
			close(fd);
		if (c)
			inode_put(c);
		return reply_err(req, err ? err : EIO);
	}
	if (fd >= 0 && c->kind != I_SFILE) {
		close(fd);  /* a model: served through its views */
		fd = -1;
	}
	int r = file_open_fd(c, fi, fd);
	struct fuse_entry_param e;
	if (r == 0)
		r = entry_of(c, &e);
	if (r < 0) {
		inode_put(c);
		return reply_err(req, -r);
	}
	if (c->kind == I_SFILE) {
		struct fh *h = fh_of(fi);
		h->wrote = true;
		handle_put(h);
	}
	inode_lookup_ref(c);
	inode_put(c);
	fuse_reply_create(req, &e, fi);
}

/* Kept text of a view, straight from where it is kept to the reader. */
static void send_iov(void *req, const struct iovec *iov, int count)
{
	fuse_reply_iov(req, iov, count);
}

static void read_view(fuse_req_t req, struct inode *i, struct fh *h, size_t size, off_t off)
{
	if (h->cached) {
		pthread_mutex_lock(&i->lock);
		if (i->cache_first == h)
			i->cache_first = NULL;  /* its open dropped the older pages */
		pthread_mutex_unlock(&i->lock);
	}
	pthread_mutex_lock(&h->wlock);
	if (h->w) {
		/* A file open for writing reads what it wrote. */
		char *buf = malloc(size ? size : 1);
		ssize_t n = buf ? wbuf_read(h->w->buf, (uint64_t)off, size, buf) : -ENOMEM;
		pthread_mutex_unlock(&h->wlock);
		if (n < 0)
			reply_err(req, (int)-n);
		else
			fuse_reply_buf(req, buf, (size_t)n);
		free(buf);
		return;
	}
	pthread_mutex_unlock(&h->wlock);
	struct fsmodel *fm = i->fm;
	pthread_rwlock_rdlock(&fm->rw);
	struct mfs_vseg seg;
	if (mfs_view_segments(h->ref->m, h->node, (uint64_t)off, size, &seg)) {
		/* A range of the source (after an in-memory header): splice. */
		struct fuse_bufvec *bv = malloc(sizeof(*bv) + sizeof(struct fuse_buf));
		if (!bv) {
			pthread_rwlock_unlock(&fm->rw);
			return reply_err(req, ENOMEM);
		}
		*bv = (struct fuse_bufvec)FUSE_BUFVEC_INIT(0);
		size_t k = 0;
		if (seg.mem_len) {
			bv->buf[k] = (struct fuse_buf){.size = seg.mem_len, .mem = (void *)seg.mem};
			k++;
		}
		if (seg.src_len) {
			bv->buf[k] = (struct fuse_buf){.size = seg.src_len,
						       .flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK,
						       .fd = h->ref->m->fd,
						       .pos = (off_t)seg.src_off};
			k++;
		}
		bv->count = k;
		if (k == 0) {
			bv->count = 1;
			bv->buf[0] = (struct fuse_buf){.size = 0, .mem = NULL};
		}
		fuse_reply_data(req, bv, FUSE_BUF_SPLICE_MOVE);
		pthread_rwlock_unlock(&fm->rw);
		free(bv);
		/* read to its end: a second open may warm it (warm.h) */
		if (h->size && (uint64_t)off + seg.mem_len + seg.src_len >= h->size) {
			pthread_mutex_lock(&i->lock);
			i->read_gen = h->ref->gen;
			pthread_mutex_unlock(&i->lock);
		}
		return;
	}
	if (mfs_view_send_kept(h->ref->m, h->node, (uint64_t)off, size, send_iov, req)) {
		pthread_rwlock_unlock(&fm->rw);
		return;
	}
	char *buf = malloc(size ? size : 1);
	if (!buf) {
		pthread_rwlock_unlock(&fm->rw);
		return reply_err(req, ENOMEM);
	}
	struct mfs_err err = {0};
	ssize_t n = mfs_view_read(h->ref->m, h->node, (uint64_t)off, size, buf, h->rc, &err);
	pthread_rwlock_unlock(&fm->rw);
	if (n < 0) {
		log_error(i, NULL, err.code, err.msg);
		reply_err(req, err.code ? err.code : EIO);
	} else {
		fuse_reply_buf(req, buf, (size_t)n);
	}
	free(buf);
}

/* The open file and inode of a request, held; NULL (and an error sent)
 * when either is gone. */
static struct inode *begin(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			   struct fh **h)
{
	struct fsstate *fs = req_fs(req);
	*h = fh_of(fi);
	struct inode *i = *h ? inode_get(fs, ino) : NULL;
	if (!i) {
		reply_err(req, *h ? ESTALE : EBADF);
		handle_put(*h);
	}
	return i;
}

static void end(struct inode *i, struct fh *h)
{
	inode_put(i);
	handle_put(h);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fh *h;
	struct inode *i = begin(req, ino, fi, &h);
	if (!i)
		return;
	switch (i->kind) {
	case I_SFILE: {
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
		bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
		bv.buf[0].fd = h->fd;
		bv.buf[0].pos = off;
		fuse_reply_data(req, &bv, FUSE_BUF_SPLICE_MOVE);
		break;
	}
	case I_VNODE:
		read_view(req, i, h, size, off);
		break;
	case I_SCRATCH: {
		char *buf = malloc(size ? size : 1);
		pthread_mutex_lock(&i->lock);
		ssize_t n = buf && i->scr ? wbuf_read(i->scr->buf, (uint64_t)off, size, buf) : -EIO;
		pthread_mutex_unlock(&i->lock);
		if (n < 0)
			reply_err(req, (int)-n);
		else
			fuse_reply_buf(req, buf, (size_t)n);
		free(buf);
		break;
	}
	case I_ERRORS:
		if ((uint64_t)off >= h->snap_len)
			fuse_reply_buf(req, NULL, 0);
		else
			fuse_reply_buf(req, h->snap + off,
				       size < h->snap_len - (size_t)off ? size : h->snap_len - (size_t)off);
		break;
	default:
		reply_err(req, EISDIR);
	}
	end(i, h);
}

/* A write to a view: into this open file's own buffer. Caller holds h->wlock. */
static ssize_t write_view(struct inode *i, struct fh *h, const char *buf, size_t size, off_t off)
{
	struct fsstate *fs = i->fs;
	if (h->failed)
		return -h->failed;  /* refused already: the file shows the source again */
	if (!h->w)
		return -EBADF;
	if (h->append)
		off = (off_t)wbuf_size(h->w->buf);  /* the kernel's size is the committed one */
	ssize_t r = wbuf_write(h->w->buf, (uint64_t)off, buf, size);
	if (r == -EFBIG) {
		/* The change cannot be whole: refused, like bad content. */
		struct mfs_err err = {0};
		mfs_error(&err, EFBIG,
			  "expected at most %llu bytes in one view (-o max_buffer), got a write up to byte %llu",
			  (unsigned long long)fs->o.max_buffer, (unsigned long long)off + size);
		return pending_refuse(i, h, &err);
	}
	if (r < 0)
		return r;
	h->w->dirty = true;
	r = pending_check(i, h);
	if (r < 0)
		return r;
	/* The kernel grows its size with direct writes: have it ask again, or
	 * readers would read past the committed end. */
	uint64_t wend = (uint64_t)off + size;
	if (wend > h->w->told) {
		h->w->told = wend;
		notify_inval_inode(i->ino);
	}
	return (ssize_t)size;
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	      struct fuse_file_info *fi)
{
	struct fh *h;
	struct inode *i = begin(req, ino, fi, &h);
	if (!i)
		return;
	ssize_t r = 0;
	switch (i->kind) {
	case I_SFILE:
		r = pwrite(h->fd, buf, size, off);
		if (r < 0)
			r = -errno;
		else
			h->wrote = true;
		break;
	case I_VNODE:
		pthread_mutex_lock(&h->wlock);
		r = write_view(i, h, buf, size, off);
		pthread_mutex_unlock(&h->wlock);
		break;
	case I_SCRATCH:
		pthread_mutex_lock(&i->lock);
		r = i->scr ? scratch_write(i, (uint64_t)off, buf, size) : -ENOENT;
		if (r == 0)
			r = (ssize_t)size;
		pthread_mutex_unlock(&i->lock);
		break;
	default:
		r = -EBADF;
	}
	end(i, h);
	if (r < 0)
		return reply_err(req, (int)-r);
	fuse_reply_write(req, (size_t)r);
}

/* Commit pending writes of a view handle (flush, fsync, release). */
static int commit_handle(struct inode *i, struct fh *h)
{
	if (i->kind != I_VNODE)
		return 0;
	pthread_mutex_lock(&h->wlock);
	int r = h->w ? pending_commit(i, h) : 0;
	pthread_mutex_unlock(&h->wlock);
	return r;
}

void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	struct fh *h;
	struct inode *i = begin(req, ino, fi, &h);
	if (!i)
		return;
	int r = 0;
	if (i->kind == I_SFILE) {
		/* Report delayed write errors as close(2) would. */
		int d = dup(h->fd);
		if (d >= 0 && close(d) < 0)
			r = -errno;
		/* A file written through the mount may have become a model: drop
		 * the kernel's entry now, so that the next lookup after close(2)
		 * sees it (no lock of the parent is held during a flush). */
		if (h->wrote && i->parent &&
		    source_dtype(i->parent, i->name, DT_REG) == DT_UNKNOWN)
			fuse_lowlevel_notify_inval_entry(fs->se, i->parent->ino, i->name,
							 strlen(i->name));
	} else {
		r = commit_handle(i, h);
	}
	end(i, h);
	reply_err(req, -r);
}

void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fh *h;
	struct inode *i = begin(req, ino, fi, &h);
	if (!i)
		return;
	int r = 0;
	if (i->kind == I_SFILE)
		r = (datasync ? fdatasync(h->fd) : fsync(h->fd)) < 0 ? -errno : 0;
	else
		r = commit_handle(i, h);  /* a commit is durable when it returns */
	end(i, h);
	reply_err(req, -r);
}

void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	/* Requests of this file still being served keep it until they end. */
	struct fh *h = handle_remove(fi->fh);
	struct inode *i = h ? inode_get(fs, ino) : NULL;
	if (i && i->kind == I_VNODE) {
		pthread_mutex_lock(&h->wlock);
		if (h->w) {
			/* Last chance for writes no flush saw (errors are logged). */
			pending_commit(i, h);
			pending_release(i, h);
		}
		pthread_mutex_unlock(&h->wlock);
	}
	if (i && i->kind == I_VNODE && h->ref && i->fm) {
		/* A source removed while this file was open: its generation goes
		 * with its last reader (found here if no watch saw it go). */
		handle_put(h);
		h = NULL;
		fsmodel_check(i->fm);
	}
	if (i && i->kind == I_SFILE && h->wrote) {
		/* A file written through the mount may have become a model. */
		notify_inval_entry(i->parent->ino, i->name);
	}
	if (i)
		inode_put(i);
	handle_put(h);
	reply_err(req, 0);
}
