/* Listing directories: readdir and readdirplus, served from a snapshot of
 * each directory's entries (offsets index it), and the kernel's own cache
 * of listings (no OPENDIR: directories are opened by the kernel alone, and
 * their listings kept until we invalidate them).
 *
 * readdirplus answers every entry with its inode and attributes in the same
 * reply (what ls -l and find then need costs no further request), built
 * from the snapshot directly: a model directory's snapshot holds the
 * generation it lists and its node ids, so an entry costs no lookup of the
 * model; a SOURCE directory's files are classified from their first bytes
 * (fsmodel.c), without indexing them. The snapshot itself: listing.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "attr.h"
#include "buf.h"
#include "commit.h"
#include "listing.h"
#include "model_fs.h"
#include "ops.h"
#include "scratch.h"
#include "source.h"

static int reserve(struct listing *l, size_t more)
{
	return MFS_ARRAY_RESERVE(l->v, l->n, l->cap, more, 16);
}

/* An entry named by the model (the name lives as long as l->r). */
static int add_node(struct listing *l, const char *name, mfs_id id, unsigned char type)
{
	if (reserve(l, 1) < 0)
		return -ENOMEM;
	l->v[l->n++] = (struct dent){name, id, type};
	return 0;
}

/* An entry whose name we keep (its offset in names until finish()). */
static int add_name(struct listing *l, const char *name, unsigned char type)
{
	size_t len = strlen(name) + 1;
	if (reserve(l, 1) < 0)
		return -ENOMEM;
	size_t at = l->names.len;
	if (mfs_buf_add(&l->names, name, len) < 0)
		return -ENOMEM;
	l->v[l->n++] = (struct dent){(const char *)(uintptr_t)at, MFS_NONE, type};
	return 0;
}

static void finish(struct listing *l)
{
	for (size_t k = 0; k < l->n; k++)
		if (l->v[k].id == MFS_NONE)
			l->v[k].name = l->names.p + (uintptr_t)l->v[k].name;
}

static int list_source(struct inode *d, struct listing *l)
{
	int fd = openat(dir_fd(d), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *dp = fdopendir(fd);
	if (!dp) {
		close(fd);
		return -errno;
	}
	int r = 0;
	if (!d->parent)
		r = add_name(l, ".modelfs", DT_DIR);
	struct dirent *e;
	while (r == 0 && (e = readdir(dp)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    mfs_private_name(e->d_name))
			continue;
		if (!d->parent && strcmp(e->d_name, ".modelfs") == 0)
			continue;  /* ours shadows it */
		if (src_hidden(fd, e->d_name))
			continue;  /* the mount point itself */
		r = add_name(l, e->d_name, e->d_type);
	}
	closedir(dp);
	return r;
}

static int list_model(struct inode *d, struct listing *l)
{
	struct mfs_err err = {0};
	struct mref *r = fsmodel_current(d->fm, &err);
	if (!r) {
		/* A file listed as a model that turned out not to parse: it is
		 * a plain file now (logged, and the kernel told), and what was
		 * opened as its directory reads as empty, like a directory
		 * removed while open. */
		return err.code == ESTALE ? 0 : -(err.code ? err.code : EIO);
	}
	l->r = r;
	l->gen = r->gen;
	mfs_id id = vnode_resolve(d, r);
	if (id == MFS_NONE)
		return -ENOENT;
	const struct mfs_model *m = r->m;
	int ret = reserve(l, m->nodes[id].nchild);
	for (mfs_id c = m->nodes[id].first; c != MFS_NONE && ret == 0; c = m->nodes[c].next) {
		const struct mfs_node *n = &m->nodes[c];
		ret = add_node(l, n->name, c, n->kind == MFS_K_DIR ? DT_DIR
					     : n->kind == MFS_K_LINK ? DT_LNK : DT_REG);
	}
	size_t ns;
	char **names = scratch_list(d, &ns);
	for (size_t k = 0; k < ns; k++) {
		if (ret == 0)
			ret = add_name(l, names[k], DT_REG);
		free(names[k]);
	}
	free(names);
	return ret;
}

static uint64_t model_gen(struct inode *d)
{
	if (!is_model_dir(d))
		return 0;
	pthread_mutex_lock(&d->fm->lock);
	uint64_t gen = d->fm->gen;
	pthread_mutex_unlock(&d->fm->lock);
	return gen;
}

/* The listing of d that readdir at offset off serves (+1 ref): built at
 * offset 0, kept while the directory is unchanged. */
static struct listing *dir_listing(struct inode *d, off_t off, int *err)
{
	uint64_t gen = model_gen(d);
	pthread_mutex_lock(&d->lock);
	struct listing *l = d->snap;
	if (l && (off == 0 || d->snap_gen != gen))
		l = NULL;  /* a new pass over the directory, or a new generation */
	if (l) {
		atomic_fetch_add(&l->refs, 1);
		pthread_mutex_unlock(&d->lock);
		return l;
	}
	pthread_mutex_unlock(&d->lock);
	l = calloc(1, sizeof(*l));
	int r = l ? 0 : -ENOMEM;
	if (l)
		atomic_init(&l->refs, 1);
	if (r == 0) {
		switch (d->kind) {
		case I_SDIR:
			watch_dir(d);
			r = list_source(d, l);
			break;
		case I_MODEL:
			/* Opening a model re-checks its source (an outside change
			 * shows even before its inotify event arrives). */
			fsmodel_check(d->fm);
			r = list_model(d, l);
			break;
		case I_VDIR:
			r = list_model(d, l);
			break;
		case I_META:
			r = add_name(l, "errors", DT_REG);
			break;
		default:
			r = -ENOTDIR;
		}
	}
	if (r < 0) {
		listing_put(l);
		*err = -r;
		return NULL;
	}
	finish(l);
	pthread_mutex_lock(&d->lock);
	struct listing *old = d->snap;
	d->snap = l;
	d->snap_gen = l->r ? l->gen : gen;
	atomic_fetch_add(&l->refs, 1);
	pthread_mutex_unlock(&d->lock);
	listing_put(old);
	return l;
}

/* A pass over d read its end: its snapshot is not needed any more. */
static void dir_done(struct inode *d, struct listing *l)
{
	pthread_mutex_lock(&d->lock);
	bool mine = d->snap == l;
	if (mine)
		d->snap = NULL;
	pthread_mutex_unlock(&d->lock);
	if (mine)
		listing_put(l);
}

/* With FUSE_CAP_NO_OPENDIR_SUPPORT the kernel opens directories itself and
 * caches their listings (no OPENDIR and RELEASEDIR per directory): readdir
 * is then served from each directory's snapshot. */
void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fsstate *fs = req_fs(req);
	struct inode *d = inode_get(fs, ino);
	if (!d)
		return reply_err(req, ESTALE);
	bool dir = d->kind == I_SDIR || d->kind == I_META || is_model_dir(d);
	inode_put(d);
	if (!dir)
		return reply_err(req, ENOTDIR);
	if (fs->no_opendir)
		return reply_err(req, ENOSYS);
	fi->fh = 0;
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	reply_err(req, 0);
}

/* The inode kind an entry of this d_type in d would get. */
static enum ikind kind_of_dtype(const struct inode *d, unsigned type)
{
	bool model = is_model_dir(d);
	switch (type) {
	case DT_DIR:
		return model ? I_VDIR : (d->kind == I_SDIR ? I_SDIR : I_META);
	case DT_LNK:
		return model ? I_VLINK : I_SLINK;
	default:
		return model ? I_VNODE : I_SFILE;
	}
}

/* The inode and entry reply of one entry of d (+1 ref), or NULL when only
 * its name can be given. src: the model's source stat (model directories). */
static struct inode *plus_entry(struct inode *d, struct listing *l, const struct dent *e,
				const struct stat *src, struct fuse_entry_param *ep)
{
	struct fsstate *fs = d->fs;
	struct inode *c;
	int err;
	if (l->r && e->id != MFS_NONE) {
		c = vnode_child(d, l->r, e->id);
		if (c && entry_node(c, l->r, e->id, src, ep) < 0) {
			inode_put(c);
			c = NULL;
		}
		return c;
	}
	if (d->kind == I_SDIR && (d->parent || strcmp(e->name, ".modelfs") != 0)) {
		struct stat st;
		c = source_child(d, e->name, &st, true, &err);
		if (c && c->kind != I_MODEL) {
			memset(ep, 0, sizeof(*ep));
			ep->ino = c->ino;
			ep->entry_timeout = ep->attr_timeout = fs->o.timeout;
			attr_source(c, &st, &ep->attr);
			return c;
		}
	} else {
		c = child_lookup(d, e->name, &err);
	}
	if (c && entry_of(c, ep) < 0) {
		inode_put(c);
		c = NULL;
	}
	return c;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct fsstate *fs = req_fs(req);
	struct inode *d = inode_get(fs, ino);
	if (!d)
		return reply_err(req, ESTALE);
	int err = 0;
	struct listing *l = dir_listing(d, off, &err);
	char *buf = l ? malloc(size) : NULL;
	if (!buf) {
		listing_put(l);
		inode_put(d);
		return reply_err(req, l ? ENOMEM : err);
	}
	struct stat src = {0};
	if (plus && l->r) {
		pthread_mutex_lock(&d->fm->lock);
		src = d->fm->st;
		pthread_mutex_unlock(&d->fm->lock);
	}
	size_t pos = 0, k;
	for (k = (size_t)off; k < l->n; k++) {
		const struct dent *e = &l->v[k];
		if (!plus) {
			/* d_ino must not be 0: readdir(3) skips such entries. */
			unsigned t = d->kind == I_SDIR ? source_dtype(d, e->name, e->type) : e->type;
			struct stat st = {.st_mode = (mode_t)t << 12};
			st.st_ino = inode_number(d, e->name, kind_of_dtype(d, t == DT_UNKNOWN ? DT_DIR : t));
			size_t need = fuse_add_direntry(req, buf + pos, size - pos, e->name, &st, (off_t)k + 1);
			if (need > size - pos)
				break;
			pos += need;
			continue;
		}
		/* Whether it fits before anything is looked up: an entry given
		 * to the kernel counts as a lookup. */
		if (fuse_add_direntry_plus(req, NULL, 0, e->name, NULL, 0) > size - pos)
			break;
		struct fuse_entry_param ep;
		struct inode *c = plus_entry(d, l, e, &src, &ep);
		if (!c) {
			memset(&ep, 0, sizeof(ep));
			ep.attr.st_mode = (mode_t)e->type << 12;
			ep.attr.st_ino = inode_number(d, e->name, kind_of_dtype(d, e->type));
		}
		pos += fuse_add_direntry_plus(req, buf + pos, size - pos, e->name, &ep, (off_t)k + 1);
		if (c)
			inode_lookup_put(c);
	}
	if (k == l->n && pos == 0)
		dir_done(d, l);
	listing_put(l);
	inode_put(d);
	fuse_reply_buf(req, buf, pos);
	free(buf);
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, false);
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)fi;
	do_readdir(req, ino, size, off, true);
}
