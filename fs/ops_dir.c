/* Directory operations that change names: mkdir, rmdir, unlink, symlink,
 * link, mknod, rename (listing is ops_list.c). SOURCE directories pass
 * through; model directories hold views and editor scratch files. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "caller.h"
#include "commit.h"
#include "model_fs.h"
#include "ops.h"
#include "pending.h"
#include "scratch.h"

static void reply_new_entry(fuse_req_t req, struct inode *parent, const char *name)
{
	int err;
	struct inode *c = child_lookup(parent, name, &err);
	if (!c)
		return reply_err(req, err);
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

/* The parent for a change of names, checked: a SOURCE directory (and the
 * name is not ours) or a model directory. */
static struct inode *parent_for_change(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fsstate *fs = req_fs(req);
	struct inode *p = inode_get(fs, ino);
	if (!p) {
		reply_err(req, ESTALE);
		return NULL;
	}
	int err = 0;
	if (fs->o.ro)
		err = EROFS;
	else if (p->kind == I_SDIR && mfs_private_name(name))
		err = EPERM;
	else if (p->kind == I_SDIR && !p->parent && strcmp(name, ".modelfs") == 0)
		err = EPERM;
	else if (p->kind != I_SDIR && !is_model_dir(p))
		err = EPERM;
	if (err) {
		inode_put(p);
		reply_err(req, err);
		return NULL;
	}
	return p;
}

void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct inode *p = parent_for_change(req, parent, name);
	if (!p)
		return;
	if (p->kind != I_SDIR) {
		inode_put(p);
		return reply_err(req, EPERM);
	}
	int e = caller_enter(req);
	if (e == 0) {
		e = mkdirat(dir_fd(p), name, caller_mode(req, mode)) < 0 ? -errno : 0;
		caller_leave();
	}
	if (e < 0) {
		inode_put(p);
		return reply_err(req, -e);
	}
	reply_new_entry(req, p, name);
	inode_put(p);
}

void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct inode *p = parent_for_change(req, parent, name);
	if (!p)
		return;
	if (p->kind != I_SDIR) {
		inode_put(p);
		return reply_err(req, EPERM);
	}
	int e = caller_enter(req);
	if (e == 0) {
		e = symlinkat(link, dir_fd(p), name) < 0 ? -errno : 0;
		caller_leave();
	}
	if (e < 0) {
		inode_put(p);
		return reply_err(req, -e);
	}
	reply_new_entry(req, p, name);
	inode_put(p);
}

void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	struct inode *p = parent_for_change(req, parent, name);
	if (!p)
		return;
	int r = 0;
	if (p->kind == I_SDIR) {
		r = -caller_enter(req);
		if (r == 0) {
			r = mknodat(dir_fd(p), name, caller_mode(req, mode), rdev) < 0 ? errno : 0;
			caller_leave();
		}
	} else if (S_ISREG(mode)) {
		const struct fuse_ctx *ctx = fuse_req_ctx(req);
		struct inode *s = scratch_create(p, name, caller_mode(req, mode), ctx->uid, ctx->gid, &r);
		if (s)
			inode_put(s);
	} else {
		r = EPERM;
	}
	if (r) {
		inode_put(p);
		return reply_err(req, r);
	}
	reply_new_entry(req, p, name);
	inode_put(p);
}

void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	struct fsstate *fs = req_fs(req);
	struct inode *i = inode_get(fs, ino);
	struct inode *p = i ? parent_for_change(req, newparent, newname) : NULL;
	if (!i)
		return reply_err(req, ESTALE);
	if (!p) {
		inode_put(i);
		return;
	}
	if ((i->kind != I_SFILE && i->kind != I_SLINK) || p->kind != I_SDIR) {
		inode_put(i);
		inode_put(p);
		return reply_err(req, EPERM);
	}
	/* flags 0: a link is linked itself, never what it points to */
	int e = caller_enter(req);
	if (e == 0) {
		e = linkat(dir_fd(i->parent), i->name, dir_fd(p), newname, 0) < 0 ? -errno : 0;
		caller_leave();
	}
	if (e < 0) {
		inode_put(i);
		inode_put(p);
		return reply_err(req, -e);
	}
	inode_put(i);
	reply_new_entry(req, p, newname);
	inode_put(p);
}

struct named {
	const char *name;
	struct inode *hit[8];
	size_t n;
};

static void named_fn(struct inode *i, void *arg)
{
	struct named *a = arg;
	if (strcmp(i->name, a->name) == 0 && !i->stale && a->n < 8) {
		i->refs++;  /* under fs->lock */
		a->hit[a->n++] = i;
	}
}

/* The inodes known under parent/name (any kind), +1 ref each. */
static size_t known_children(struct inode *parent, const char *name, struct inode **out)
{
	struct named a = {name, {0}, 0};
	inode_foreach_in(parent, named_fn, &a);
	memcpy(out, a.hit, a.n * sizeof(*out));
	return a.n;
}

static void remove_source(fuse_req_t req, fuse_ino_t parent, const char *name, int flags)
{
	struct inode *p = parent_for_change(req, parent, name);
	if (!p)
		return;
	int r = 0;
	if (p->kind == I_SDIR) {
		struct inode *kids[8];
		size_t n = known_children(p, name, kids);
		bool model = false;
		for (size_t k = 0; k < n; k++) {
			model |= kids[k]->kind == I_MODEL;
			inode_put(kids[k]);
		}
		if (model && flags)
			r = EPERM;  /* a model file is removed in SOURCE, not as a directory */
		else if ((r = -caller_enter(req)) == 0) {
			r = unlinkat(dir_fd(p), name, flags) < 0 ? errno : 0;
			caller_leave();
		}
	} else if (flags) {
		r = EPERM;  /* directories of a model are part of the file */
	} else {
		struct inode *s = scratch_find(p, name);
		if (s) {
			scratch_unlink(s);
			inode_put(s);
		} else {
			int err;
			struct inode *c = child_lookup(p, name, &err);
			r = c ? EPERM : err;  /* views are part of the model */
			if (c)
				inode_put(c);
		}
	}
	inode_put(p);
	reply_err(req, r);
}

void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_source(req, parent, name, 0);
}

void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_source(req, parent, name, AT_REMOVEDIR);
}

/* Renames inside one model directory return a positive errno, or 0. */

/* sed -i, editors: scratch file src renamed over view dst writes that view. */
static int commit_scratch_over(struct inode *src, struct inode *dst)
{
	pthread_mutex_lock(&src->lock);
	struct mfs_content c;
	wbuf_content(src->scr->buf, &c);
	c.ext = NULL;
	struct mfs_err e = {0};
	int x = fsmodel_commit(dst->fm, dst, &c, 0, &e);
	pthread_mutex_unlock(&src->lock);
	if (x < 0) {
		log_error(dst, NULL, e.code, e.msg);
		return e.code ? e.code : EIO;
	}
	scratch_unlink(src);
	notify_inval_inode(dst->ino);
	return 0;
}

/* Scratch file src renamed to newname in np: over a view, a scratch file
 * (replaced) or a free name. */
static int rename_scratch(struct inode *src, struct inode *np, const char *newname,
			  unsigned flags)
{
	int r = 0, lerr = 0;
	struct inode *dst_scr = scratch_find(np, newname);
	struct inode *dst = dst_scr ? NULL : child_lookup(np, newname, &lerr);
	if (dst_scr && (flags & RENAME_NOREPLACE))
		r = EEXIST;
	else if (dst && dst->kind == I_VNODE)
		r = flags ? EINVAL : commit_scratch_over(src, dst);
	else if (dst)
		r = EISDIR;
	else
		r = -scratch_rename(src, np, newname);
	if (dst)
		inode_put(dst);
	if (dst_scr)
		inode_put(dst_scr);
	return r;
}

/* The content of view v written into scratch file s, 1 MiB at a time. */
static int copy_view(struct inode *v, struct inode *s)
{
	struct mfs_err e = {0};
	struct mref *ref = fsmodel_current(v->fm, &e);
	mfs_id id = ref ? vnode_resolve(v, ref) : MFS_NONE;
	struct stat st;
	double t;
	if (attr_of(v, &st, &t) == 0)
		s->scr->mode = st.st_mode;
	char *buf = malloc(1 << 20);
	uint64_t off = 0;
	int r = 0;
	for (;;) {
		ssize_t n = id == MFS_NONE || !buf ? -EIO
				  : mfs_view_read(ref->m, id, off, 1 << 20, buf, NULL, &e);
		if (n <= 0) {
			r = n < 0 ? EIO : 0;
			break;
		}
		pthread_mutex_lock(&s->lock);
		int w = scratch_write(s, off, buf, (size_t)n);
		pthread_mutex_unlock(&s->lock);
		if (w < 0) {
			r = -w;
			break;
		}
		off += (uint64_t)n;
	}
	free(buf);
	mref_put(ref);
	return r;
}

/* A view renamed away (an editor's backup): its content becomes a scratch
 * file of the new name; the view itself stays. */
static int rename_view(fuse_req_t req, struct inode *p, const char *name, struct inode *np,
		       const char *newname, unsigned flags)
{
	int r = 0, lerr = 0;
	struct inode *v = child_lookup(p, name, &lerr), *dstv;
	if (!v)
		return lerr;
	if (v->kind != I_VNODE || flags) {
		r = v->kind == I_VNODE ? EINVAL : EPERM;
	} else if ((dstv = child_lookup(np, newname, &lerr)) != NULL) {
		r = EPERM;  /* over another view */
		inode_put(dstv);
	} else {
		const struct fuse_ctx *ctx = fuse_req_ctx(req);  /* the caller's, as a new file */
		struct inode *s = scratch_create(np, newname, 0600, ctx->uid, ctx->gid, &r);
		if (s) {
			r = copy_view(v, s);
			if (r)
				scratch_unlink(s);
			inode_put(s);
			/* The kernel moved its entry; both names are looked up again. */
			notify_inval_entry(p->ino, name);
			notify_inval_entry(np->ino, newname);
		}
	}
	inode_put(v);
	return r;
}

static int rename_in_model(fuse_req_t req, struct inode *p, const char *name, struct inode *np,
			   const char *newname, unsigned flags)
{
	if (p->fm != np->fm)
		return EXDEV;
	struct inode *src = scratch_find(p, name);
	if (!src)
		return rename_view(req, p, name, np, newname, flags);
	int r = rename_scratch(src, np, newname, flags);
	inode_put(src);
	return r;
}

static void renamed_source(struct inode *p, const char *name, struct inode *np,
			   const char *newname)
{
	struct inode *kids[8];
	size_t n = known_children(np, newname, kids);
	for (size_t k = 0; k < n; k++) {
		kids[k]->stale = true;  /* replaced */
		inode_put(kids[k]);
	}
	n = known_children(p, name, kids);
	for (size_t k = 0; k < n; k++) {
		inode_rename(kids[k], np, newname);
		inode_put(kids[k]);
	}
}

void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags)
{
	struct inode *p = parent_for_change(req, parent, name);
	if (!p)
		return;
	struct inode *np = parent_for_change(req, newparent, newname);
	if (!np) {
		inode_put(p);
		return;
	}
	int r = 0;
	if (p->kind == I_SDIR && np->kind == I_SDIR) {
		r = -caller_enter(req);
		if (r == 0) {
			r = renameat2(dir_fd(p), name, dir_fd(np), newname, flags) < 0 ? errno : 0;
			caller_leave();
		}
		if (r == 0)
			renamed_source(p, name, np, newname);
	} else if (is_model_dir(p) && is_model_dir(np)) {
		r = rename_in_model(req, p, name, np, newname, flags);
	} else {
		r = EXDEV;
	}
	inode_put(p);
	inode_put(np);
	reply_err(req, r);
}
