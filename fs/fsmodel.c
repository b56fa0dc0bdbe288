/* Models in the mount: parse on lookup, reparse when the source changes,
 * commit edits and swap generations (see model_fs.h). */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "commit.h"
#include "links.h"
#include "model_fs.h"
#include "pending.h"
#include "share.h"
#include "source.h"
#include "store.h"
#include "verdict.h"

struct mref *mref_hold(struct mref *r)
{
	if (r)
		atomic_fetch_add(&r->refs, 1);
	return r;
}

void mref_put(struct mref *r)
{
	if (!r || !(r->shared ? share_release(r) : atomic_fetch_sub(&r->refs, 1) == 1))
		return;
	mfs_model_free(r->m);
	free(r);
}

/* r becomes or stops being a model's current generation. */
static void users_add(struct mref *r, int n)
{
	if (r)
		atomic_fetch_add(&r->users, n);
}

static bool same_stat(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The sidecar's stat (st_ino 0 when there is none); suffix: the codec's
 * sidecar suffix, or NULL. A sidecar that is a link is read through it, as
 * the model is (links.h). */
static void side_stat(struct inode *dir, const char *name, const char *suffix, struct stat *out)
{
	memset(out, 0, sizeof(*out));
	if (!suffix)
		return;
	char p[600];
	bool link;
	snprintf(p, sizeof(p), "%s%s", name, suffix);
	if (link_source_stat(dir, p, out, &link) < 0 || !S_ISREG(out->st_mode))
		memset(out, 0, sizeof(*out));
}

static bool same_side(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* ---- failures are reported once per version of a file ------------------- */

static bool failed_before(fuse_ino_t dir, const char *name, const struct stat *st)
{
	return verdict_get(dir, name, st, NULL) == VERDICT_PLAIN;
}

/* A file did not parse at version st: remember it, and log why once
 * (ENOTSUP, "not a model after all", silently). */
static void report_failure(struct inode *dir, const char *name, const struct stat *st,
			   const struct mfs_err *err)
{
	if (verdict_set(dir->ino, name, st, VERDICT_PLAIN, NULL) != VERDICT_PLAIN &&
	    err->code != ENOTSUP)
		log_error(dir, name, err->code, err->msg);
}

/* ---- parsing ---------------------------------------------------------------- */

static const struct mfs_codec *probe(struct inode *dir, const char *name, const struct stat *st);
static void log_notes(struct inode *dir, const char *name, const struct mfs_model *m);

/* Parse name; st is what the caller saw just before: if the file changed
 * since, st is spoiled so that the next access parses it again. */
static struct mref *parse(struct inode *dir, const char *name, struct stat *st,
			  struct stat *side, struct mfs_err *err)
{
	struct fsstate *fs = dir->fs;
	int dfd = dir_fd(dir);
	if (!fs->o.ro) {
		/* A commit cut short by a crash is rolled back before anyone
		 * reads; a journal a commit holds is left to it, and one that
		 * is not ours (or fails a check) is reported and left alone. */
		struct mfs_err rerr = {0};
		int rr = mfs_recover_file(dfd, name, &rerr);
		if (rr == MFS_JOURNAL_LEFT || (rr < 0 && rerr.code != EBUSY))
			log_error(dir, name, rerr.code, rerr.msg);
	} else {
		int ab = mfs_journal_abandoned(dfd, name, err);
		if (ab == MFS_JOURNAL_LEFT) {
			log_error(dir, name, err->code, err->msg);
			mfs_err_clear(err);
		} else if (ab != 0) {
			/* Read-only: the file may be half patched, and is not
			 * ours to roll back. */
			if (err->code != EBUSY)
				mfs_error(err, EIO, "an interrupted commit left a journal: a writable"
					  " mount must recover the file first");
			return NULL;
		}
	}
	/* The file's other name (a link and the file it leads to) may have
	 * parsed this version already, read the same way. */
	const struct mfs_codec *codec = probe(dir, name, st);
	struct mref *ref = codec ? share_find(st, codec, name) : NULL;
	if (ref) {
		log_msg(LOG_DEBUG, "%s: the model parsed for another name of its file", name);
		log_notes(dir, name, ref->m);
		side_stat(dir, name, ref->m->codec->sidecar, side);
		return ref;
	}
	/* A link is parsed as the file it leads to beneath SOURCE, under the
	 * link's name, its siblings looked up from the link's directory. */
	struct mfs_model *m;
	struct mfs_opener op = {link_source_open, dir};
	int r = mfs_model_open_with(&m, fs->rt, dfd, name, &op, err);
	if (r < 0)
		return NULL;
	log_msg(LOG_DEBUG, "%s: parsed", name);
	log_notes(dir, name, m);
	if (m->ino != (uint64_t)st->st_ino || m->size != (uint64_t)st->st_size)
		st->st_mtim.tv_nsec = -1;
	ref = calloc(1, sizeof(*ref));
	if (!ref) {
		mfs_model_free(m);
		mfs_error(err, ENOMEM, "out of memory");
		return NULL;
	}
	static _Atomic uint64_t next_gen = 1;
	ref->m = m;
	ref->gen = next_gen++;
	atomic_init(&ref->refs, 1);
	share_offer(ref, st, name);
	side_stat(dir, name, m->codec->sidecar, side);
	return ref;
}

/* The problems m's open got past, as an errors line of name. */
static void log_notes(struct inode *dir, const char *name, const struct mfs_model *m)
{
	if (m->note[0] && m->more_notes) {
		char msg[MFS_ERRMSG_MAX + 64];
		snprintf(msg, sizeof(msg), "%s (and %u more)", m->note,
			 (unsigned)m->more_notes);
		log_error(dir, name, EINVAL, msg);
	} else if (m->note[0]) {
		log_error(dir, name, EINVAL, m->note);
	}
}

static struct fsmodel *fm_of(struct inode *mi)
{
	struct fsstate *fs = mi->fs;
	pthread_mutex_lock(&fs->lock);
	struct fsmodel *fm = mi->fm;
	pthread_mutex_unlock(&fs->lock);
	return fm;
}

/* mi's model, created (not parsed yet) if it has none; NULL when out of
 * memory. */
static struct fsmodel *fm_get(struct inode *mi, const struct stat *st)
{
	struct fsstate *fs = mi->fs;
	struct fsmodel *fm = fm_of(mi);
	if (fm)
		return fm;
	struct fsmodel *nf = calloc(1, sizeof(*nf));
	if (!nf)
		return NULL;
	nf->inode = mi;
	nf->st = *st;
	nf->stale = true;
	pthread_mutex_init(&nf->lock, NULL);
	pthread_mutex_init(&nf->commit, NULL);
	/* Readers first (glibc's default, said): a worker rendering for a
	 * reader takes it as reader too while a commit waits to write. */
	pthread_rwlockattr_t ra;
	pthread_rwlockattr_init(&ra);
	pthread_rwlockattr_setkind_np(&ra, PTHREAD_RWLOCK_PREFER_READER_NP);
	pthread_rwlock_init(&nf->rw, &ra);
	pthread_rwlockattr_destroy(&ra);
	/* Published under the table lock (the inotify thread looks at it
	 * there); of two first lookups, the first one wins. */
	pthread_mutex_lock(&fs->lock);
	fm = mi->fm;
	if (!fm)
		fm = mi->fm = nf;
	pthread_mutex_unlock(&fs->lock);
	if (fm != nf) {
		pthread_mutex_destroy(&nf->lock);
		pthread_mutex_destroy(&nf->commit);
		pthread_rwlock_destroy(&nf->rw);
		free(nf);
	} else {
		inode_set_mtime(mi, st->st_mtim);
	}
	return fm;
}

static void attach(struct inode *mi, struct mref *ref, const struct stat *st,
		   const struct stat *side)
{
	struct fsmodel *fm = fm_get(mi, st);
	if (!fm) {
		mref_put(ref);
		return;
	}
	pthread_mutex_lock(&fm->lock);
	struct mref *old = fm->cur;
	fm->gen = ref->gen;
	fm->cur = ref;
	users_add(ref, 1);
	users_add(old, -1);
	fm->st = *st;
	fm->side_st = *side;
	fm->sidecar = ref->m->codec->sidecar;
	fm->stale = false;
	pthread_mutex_unlock(&fm->lock);
	mref_put(old);
}

/* A file that a codec bids on, not indexed yet: shown as a model directory
 * of that version until its contents are first needed. */
static int bid(struct inode *mi, const struct stat *st, const char *sidecar,
	       const struct stat *side)
{
	struct fsmodel *fm = fm_get(mi, st);
	if (!fm)
		return -ENOMEM;
	pthread_mutex_lock(&fm->lock);
	fm->st = *st;
	fm->side_st = *side;
	fm->sidecar = sidecar;
	fm->stale = true;
	pthread_mutex_unlock(&fm->lock);
	inode_set_mtime(mi, st->st_mtim);
	return 0;
}

/* The codec that bids on a file's name and first bytes (a link's name and
 * its target's bytes), or NULL. */
static const struct mfs_codec *probe(struct inode *dir, const char *name, const struct stat *st)
{
	int fd = link_source_open(dir, dir_fd(dir), name);
	if (fd < 0)
		return NULL;
	uint8_t head[MFS_HEAD_MAX];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	close(fd);
	return n < 0 ? NULL : mfs_probe(head, (size_t)n, (uint64_t)st->st_size, name);
}

enum fm_state {
	FM_CHANGED,   /* the model describes another version of the file */
	FM_BID,       /* this version, a candidate not indexed yet */
	FM_PARSED,    /* this version, indexed */
};

static enum fm_state fm_state(struct fsmodel *fm, struct inode *dir, const char *name,
			      const struct stat *st)
{
	pthread_mutex_lock(&fm->lock);
	struct stat fst = fm->st, fside = fm->side_st;
	const char *suffix = fm->sidecar;
	bool parsed = fm->cur && !fm->stale;
	pthread_mutex_unlock(&fm->lock);
	if (!same_stat(&fst, st))
		return FM_CHANGED;
	struct stat side;
	side_stat(dir, name, suffix, &side);
	if (!same_side(&side, &fside))
		return FM_CHANGED;
	return parsed ? FM_PARSED : FM_BID;
}

/* Whether this version of name is a model that indexes (the codecs' bids
 * decide, then the index is built and dropped), with its codec's sidecar
 * suffix; when it is not, the verdict is recorded and a failure other than
 * "not a model" logged. */
static bool validate(struct inode *dir, const char *name, const struct stat *st,
		     const char **sidecar)
{
	struct mfs_err err = {0};
	struct stat pst = *st, side;
	struct mref *ref = parse(dir, name, &pst, &side, &err);
	if (!ref) {
		report_failure(dir, name, &pst, &err);
		return false;
	}
	*sidecar = ref->m->codec->sidecar;
	mref_put(ref);
	return true;
}

/* A regular file: a model or a plain file. What listings said of it
 * holds (a candidate they showed was indexed then, and is indexed again
 * when its contents are first read); a name no listing has shown is indexed
 * now when index (a lookup), else bid on from its name and first bytes and checked
 * by indexing it once (a listing). st: the file's stat (a link's target's);
 * plain: the kind it is shown as when it is no model (I_SFILE, I_SLINK). */
static struct inode *source_file(struct inode *dir, const char *name, const struct stat *st,
				 bool index, enum ikind plain, int *err_out)
{
	struct inode *mi = inode_find_child(dir, name, I_MODEL);
	struct fsmodel *fm = mi ? fm_of(mi) : NULL;
	if (fm && fm_state(fm, dir, name, st) != FM_CHANGED)
		return mi;  /* indexed, or shown by a listing: as it was */
	const char *sidecar = NULL;
	bool candidate = verdict_get(dir->ino, name, st, &sidecar) == VERDICT_CANDIDATE;
	if (!candidate && !index) {
		/* A listing: the codecs' bids on the name and first bytes
		 * decide (a name with a format's extension always bids), and a
		 * model is indexed once and dropped (no descriptor or map kept
		 * per listed file): one that does not parse is a plain file from
		 * this very listing on, with its errors line. It is indexed again
		 * when its contents are first needed. */
		if (!validate(dir, name, st, &sidecar)) {
			if (mi)
				inode_put(mi);
			return inode_child(dir, name, plain);
		}
		verdict_set(dir->ino, name, st, VERDICT_CANDIDATE, sidecar);
		candidate = true;
	}
	bool known = mi != NULL;
	if (!mi && !(mi = inode_child(dir, name, I_MODEL))) {
		*err_out = ENOMEM;
		return NULL;
	}
	struct stat side;
	if (candidate) {
		side_stat(dir, name, sidecar, &side);
		if (bid(mi, st, sidecar, &side) < 0) {
			inode_put(mi);
			*err_out = ENOMEM;
			return NULL;
		}
		return mi;
	}
	struct mfs_err err = {0};
	struct stat pst = *st;
	/* Not while a commit of ours patches it: after it, its generation. */
	struct fsmodel *busy = fm_of(mi);
	if (busy)
		pthread_mutex_lock(&busy->commit);
	struct mref *ref = parse(dir, name, &pst, &side, &err);
	if (ref)
		attach(mi, ref, &pst, &side);
	if (busy)
		pthread_mutex_unlock(&busy->commit);
	if (ref)
		return mi;
	inode_put(mi);
	report_failure(dir, name, &pst, &err);
	if (known)
		notify_inval_inode(dir->ino);  /* its listing may show a directory */
	return inode_child(dir, name, plain);
}

/* A link: a model when it leads beneath SOURCE to a file that is one
 * (recognised by the link's name and the file's bytes; st then becomes the
 * file's stat), else the link it is. */
static struct inode *source_link(struct inode *dir, const char *name, struct stat *st,
				 bool listing, int *err_out)
{
	struct stat tst;
	bool link;
	if (link_source_stat(dir, name, &tst, &link) < 0 || failed_before(dir->ino, name, &tst))
		return inode_child(dir, name, I_SLINK);
	struct inode *i = source_file(dir, name, &tst, !listing, I_SLINK, err_out);
	if (i && i->kind == I_MODEL)
		*st = tst;
	return i;
}

struct inode *source_child(struct inode *dir, const char *name, struct stat *st, bool listing,
			   int *err_out)
{
	int dfd = dir_fd(dir);
	if (src_hidden(dfd, name)) {
		*err_out = ENOENT;
		return NULL;
	}
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0) {
		*err_out = errno;
		return NULL;
	}
	*err_out = 0;
	if (S_ISDIR(st->st_mode)) {
		struct inode *d = inode_child(dir, name, I_SDIR);
		if (d) {
			/* Held open (O_PATH) so that it is reached without walking
			 * names, as passthrough_ll does; never through a link. */
			pthread_mutex_lock(&d->lock);
			if (d->fd < 0)
				d->fd = openat(dfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			int fd = d->fd;
			pthread_mutex_unlock(&d->lock);
			if (fd < 0) {
				*err_out = errno;
				inode_put(d);
				return NULL;
			}
		}
		return d;
	}
	if (S_ISLNK(st->st_mode))
		return source_link(dir, name, st, listing, err_out);
	if (!S_ISREG(st->st_mode) || failed_before(dir->ino, name, st))
		return inode_child(dir, name, I_SFILE);
	return source_file(dir, name, st, !listing, I_SFILE, err_out);
}

unsigned source_dtype(struct inode *dir, const char *name, unsigned char d_type)
{
	if (d_type != DT_REG && d_type != DT_LNK && d_type != DT_UNKNOWN)
		return d_type;
	struct stat st;
	bool link;
	int r = link_source_stat(dir, name, &st, &link);
	if (r < 0)
		return link ? DT_LNK : DT_UNKNOWN;
	unsigned plain = link ? DT_LNK : DT_REG;
	if (!S_ISREG(st.st_mode))
		return (st.st_mode & S_IFMT) >> 12;
	if (failed_before(dir->ino, name, &st))
		return plain;
	struct inode *mi = inode_find_child(dir, name, I_MODEL);
	if (mi) {
		struct fsmodel *fm = fm_of(mi);
		bool fresh = fm && fm_state(fm, dir, name, &st) == FM_PARSED;
		inode_put(mi);
		if (fresh)
			return DT_DIR;
	}
	/* A model until it is parsed, which may fail: the type is not known
	 * yet (tools then stat it, and the lookup parses it). */
	return probe(dir, name, &st) ? DT_UNKNOWN : plain;
}

/* ---- generations ------------------------------------------------------------ */

struct mref *fsmodel_current(struct fsmodel *fm, struct mfs_err *err)
{
	struct fsstate *fs = fm->inode->fs;
	pthread_mutex_lock(&fm->lock);
	bool stale = fm->stale;
	struct mref *r = stale ? NULL : mref_hold(fm->cur);
	pthread_mutex_unlock(&fm->lock);
	if (r)
		return r;
	/* Reparse the changed source (one thread at a time does it). */
	pthread_mutex_lock(&fm->commit);
	pthread_mutex_lock(&fm->lock);
	if (!fm->stale) {
		r = mref_hold(fm->cur);
		pthread_mutex_unlock(&fm->lock);
		pthread_mutex_unlock(&fm->commit);
		return r;
	}
	pthread_mutex_unlock(&fm->lock);
	struct inode *mi = fm->inode;
	struct stat st, side;
	fuse_ino_t pino = 0;
	char name[NAME_MAX + 1];
	r = NULL;
	bool link;
	int sr = link_source_stat(mi->parent, mi->name, &st, &link);
	bool gone = sr < 0;
	if (gone)
		mfs_error(err, -sr, link ? "the link leads to no model file beneath the mounted directory"
				       : "the source file is gone");
	else if (failed_before(mi->parent->ino, mi->name, &st))
		mfs_error(err, EINVAL, "this version of the file does not parse");
	else if ((r = parse(mi->parent, mi->name, &st, &side, err)) != NULL) {
		/* Ours before it is published: a lookup may attach a newer parse
		 * and drop this one meanwhile. */
		mref_hold(r);
		attach(mi, r, &st, &side);
	}
	if (r) {
		inode_set_mtime(mi, st.st_mtim);
	} else {
		/* It does not parse (any more, or it only looked like a model
		 * when listed): the entry becomes a plain file. The kernel
		 * forgets the directory it was shown as, and the listing of its
		 * parent (whose type said directory). */
		if (!gone)
			report_failure(mi->parent, mi->name, &st, err);
		/* For the request at hand: a path walk that gets ESTALE is done
		 * again with fresh lookups, which find the plain file. */
		err->code = ESTALE;
		pthread_mutex_lock(&fs->lock);
		mi->stale = true;
		pino = mi->parent->ino;
		snprintf(name, sizeof(name), "%s", mi->name);
		pthread_mutex_unlock(&fs->lock);
	}
	pthread_mutex_unlock(&fm->commit);
	if (!r) {
		/* Gone from the kernel's caches before this request is answered
		 * (so that a stat right after it sees the plain file), unless
		 * the kernel waits for this very request meanwhile. */
		notify_inval_entry_wait(pino, name, 100);
		notify_inval_inode(pino);
	}
	return r;
}

mfs_id vnode_resolve(struct inode *i, struct mref *r)
{
	if (i->kind == I_MODEL)
		return MFS_ROOT;
	if (!is_vnode(i))
		return MFS_NONE;
	pthread_mutex_lock(&i->rlock);
	if (i->gen == r->gen) {
		mfs_id id = i->node;
		pthread_mutex_unlock(&i->rlock);
		return id;
	}
	pthread_mutex_unlock(&i->rlock);
	mfs_id pid = vnode_resolve(i->parent, r);
	mfs_id id = pid == MFS_NONE ? MFS_NONE : mfs_lookup(r->m, pid, i->name);
	pthread_mutex_lock(&i->rlock);
	i->gen = r->gen;
	i->node = id;
	pthread_mutex_unlock(&i->rlock);
	return id;
}

/* After a change, every inode of the model drops its cached content. */
static void inval_one(struct inode *i, void *arg)
{
	(void)arg;
	notify_inval_inode(i->ino);
}

static void bump_mtime(struct inode *i, void *arg)
{
	const struct timespec *t = arg;
	inode_set_mtime(i, *t);
}

/* A long rewrite's progress, to the log (mfs_commit_opts.progress). */
static void log_progress(void *ctx, const char *name, uint64_t done, uint64_t total)
{
	(void)ctx;
	log_msg(LOG_INFO, "%s: rewriting, %llu of %llu MiB written (%d%%)", name,
		(unsigned long long)(done >> 20), (unsigned long long)(total >> 20),
		total ? (int)(done * 100 / total) : 100);
}

/* Where a commit of mi writes: a model shown through a link gets a new
 * file in the link's place (o->link_target: *target), and the file the
 * link leads to (a shared blob) is left as it is. */
static int commit_place(struct inode *mi, struct stat *target, struct mfs_commit_opts *o,
			bool *link, struct mfs_err *err)
{
	int r = link_source_stat(mi->parent, mi->name, target, link);
	if (r < 0)
		return mfs_error(err, -r, "%s: %s", mi->name, strerror(-r));
	if (*link)
		o->link_target = target;
	return 0;
}

/* After a commit of view vi (node of generation r): the new generation,
 * parsed from what is now on disk, and the new mtime on the edited node,
 * its tensor's views and the model; a file that no longer parses leaves
 * the model stale, with its line in the log. */
static void committed(struct fsmodel *fm, struct inode *vi, struct mref *r, mfs_id node)
{
	struct inode *mi = fm->inode;
	struct stat st, side;
	struct mfs_err perr = {0};
	struct mref *nr = NULL;
	bool link;
	if (link_source_stat(mi->parent, mi->name, &st, &link) == 0)
		nr = parse(mi->parent, mi->name, &st, &side, &perr);
	if (!nr) {
		pthread_mutex_lock(&fm->lock);
		fm->stale = true;
		pthread_mutex_unlock(&fm->lock);
		log_error(vi, NULL, perr.code, perr.msg);
		return;
	}
	attach(mi, nr, &st, &side);
	/* Only the edited node and its tensor's views show a new mtime. */
	struct timespec now = st.st_mtim;
	const struct mfs_tensor *t = mfs_node_tensor(r->m, node);
	mfs_id top = t ? t->dir : node;
	struct inode *ti = vi;
	while (ti && is_vnode(ti) && vnode_resolve(ti, r) != top)
		ti = ti->parent;
	if (ti && is_vnode(ti)) {
		inode_set_mtime(ti, now);
		inode_foreach_in(ti, bump_mtime, &now);
	}
	inode_set_mtime(vi, now);
	inode_set_mtime(mi, now);
}

/* Whether a same-size patch may go in place: only when no other open file
 * reads this source (own: the committer's own), as one reading an older
 * generation must not see it change (it reads its whole content, old,
 * from the file a rewrite leaves). Then fm->rw is held for writing until
 * the commit is done; else o->no_inplace is set. */
static bool hold_inplace(struct fsmodel *fm, int own, struct mfs_commit_opts *o)
{
	pthread_rwlock_wrlock(&fm->rw);
	if (atomic_load(&fm->open_views) <= own)
		return true;
	pthread_rwlock_unlock(&fm->rw);
	o->no_inplace = 1;
	return false;
}

/* The generation to edit: r, or a newer one another commit made meanwhile
 * (held, r put). Called with fm->commit held. */
static struct mref *latest(struct fsmodel *fm, struct mref *r)
{
	pthread_mutex_lock(&fm->lock);
	if (fm->cur != r && fm->cur) {
		mref_put(r);
		r = mref_hold(fm->cur);
	}
	pthread_mutex_unlock(&fm->lock);
	return r;
}

int fsmodel_commit(struct fsmodel *fm, struct inode *vi, const struct mfs_content *c, int own,
		   struct mfs_err *err)
{
	struct fsstate *fs = vi->fs;
	if (fs->o.ro)
		return mfs_error(err, EROFS, "read-only mount");
	if (store_blob(fm->inode))
		return mfs_error(err, EROFS, "%s", store_blob_msg);
	struct mref *r = fsmodel_current(fm, err);
	if (!r)
		return -err->code;
	struct stat target;
	bool link;
	pthread_mutex_lock(&fm->commit);
	r = latest(fm, r);
	struct inode *mi = fm->inode;
	int ret;
	mfs_id node = vnode_resolve(vi, r);
	struct mfs_patch p;
	mfs_patch_init(&p);
	p.limit = fs->o.max_buffer;  /* what the edit may hold besides what was written */
	if (node == MFS_NONE) {
		ret = mfs_error(err, ENOENT, "the file is gone from the model");
		goto out;
	}
	ret = mfs_view_write(r->m, node, c, &p, err);
	if (ret != 0)
		goto out;
	int dfd = dir_open(mi->parent);
	if (dfd < 0) {
		ret = mfs_error(err, errno, "cannot open the directory: %s", strerror(errno));
		goto out;
	}
	struct mfs_commit_opts o = {.no_inplace = fs->o.no_inplace, .no_fsync = fs->o.no_fsync,
				    .progress = log_progress, .progress_min = fs->o.progress,
				    .progress_step = fs->o.progress / 4, .name = mi->name};
	ret = commit_place(mi, &target, &o, &link, err);
	if (ret < 0) {
		close(dfd);
		goto out;
	}
	/* Never in place under another name's readers: a generation that other
	 * names show too is read without this model's lock. */
	bool shared = atomic_load(&r->users) > 1;
	if (shared)
		o.no_inplace = 1;
	bool inplace = !o.no_inplace && !link && mfs_patch_same_size(&p) && p.n &&
		       hold_inplace(fm, own, &o);
	ret = mfs_commit(dfd, r->m, &p, &o, err);
	if (ret == 0)
		committed(fm, vi, r, node);
	/* An opener waits for the new generation (see open_view). */
	if (inplace)
		pthread_rwlock_unlock(&fm->rw);
	if (ret == 0)
		inode_foreach_model(fm, inval_one, NULL);
	if (ret == 0 && shared)
		share_check_others(fm, r, fsmodel_check);
	close(dfd);
out:
	pthread_mutex_unlock(&fm->commit);
	mfs_patch_free(&p);
	mref_put(r);
	return ret;
}

static void rw_hold(void *rw)
{
	pthread_rwlock_rdlock(rw);
}

static void rw_release(void *rw)
{
	pthread_rwlock_unlock(rw);
}

void fsmodel_hold_reads(struct fsmodel *fm, struct mfs_rcache *rc)
{
	mfs_rcache_hold(rc, rw_hold, rw_release, &fm->rw);
}

void fsmodel_check(struct fsmodel *fm)
{
	struct inode *mi = fm->inode;
	struct stat st, side;
	bool changed, gone = false;
	struct mref *drop = NULL;
	bool link;
	/* The stats come first: they resolve names beneath the parent, which
	 * takes the table lock, and that comes before a model's lock. */
	pthread_mutex_lock(&fm->lock);
	const char *sidecar = fm->sidecar;  /* a codec's constant suffix */
	pthread_mutex_unlock(&fm->lock);
	bool missing = link_source_stat(mi->parent, mi->name, &st, &link) < 0;
	if (!missing)
		side_stat(mi->parent, mi->name, sidecar, &side);
	pthread_mutex_lock(&fm->lock);
	if (missing) {
		changed = gone = true;
	} else {
		changed = !same_stat(&st, &fm->st) || !same_side(&side, &fm->side_st);
		gone = st.st_ino != fm->st.st_ino || st.st_dev != fm->st.st_dev;
	}
	if (changed)
		fm->stale = true;
	if (gone) {
		/* The file it maps is gone (unlinked or replaced): the next
		 * access parses whatever has the name now, and the old mapping
		 * and descriptor go when their last reader closes, not with the
		 * model inode (which the kernel may keep for long). */
		drop = fm->cur;
		fm->cur = NULL;
		users_add(drop, -1);
	}
	pthread_mutex_unlock(&fm->lock);
	mref_put(drop);
	log_msg(LOG_DEBUG, "source check %s: %s", mi->name, changed ? "changed" : "same");
	if (!changed)
		return;
	notify_inval_entry(mi->parent->ino, mi->name);
	inode_foreach_model(fm, inval_one, NULL);
}

void fsmodel_inode_gone(struct inode *i)
{
	struct fsmodel *fm = i->fm;
	if (i->kind != I_MODEL || !fm)
		return;
	users_add(fm->cur, -1);
	mref_put(fm->cur);
	pthread_mutex_destroy(&fm->lock);
	pthread_mutex_destroy(&fm->commit);
	pthread_rwlock_destroy(&fm->rw);
	free(fm);
}
