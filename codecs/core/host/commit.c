/* Crash-safe commits of patches to source files (see commit.h): a rollback
 * journal for same-size patches, temporary file + rename for the rest. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "codec.h"
#include "commit.h"
#include "fdio.h"
#include "journal.h"

#define COPY_CHUNK MFS_COPY_CHUNK

/* A new temporary file beside name, locked and still under its name (a
 * recovery may have removed it between its creation and the lock: then
 * another name). */
static int tmp_open(int dirfd, const char *name, char out[256], struct mfs_err *err)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t rnd;
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull + (uint64_t)tries;
		mfs_tmp_name(name, rnd, out);
		int fd = openat(dirfd, out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 && errno != EEXIST)
			return mfs_error(err, errno, "cannot create a temporary file beside %s: %s", name,
					 strerror(errno));
		if (fd < 0)
			continue;
		struct stat st;
		if (mfs_ofd_lock(fd, true, true) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0)
			return fd;
		close(fd);
	}
	return mfs_error(err, EEXIST, "cannot find a free temporary name beside %s", name);
}

/* The new data of span s to fd at off: in place, or gathered (generated:
 * a generator's error is in err) a chunk at a time through buf (COPY_CHUNK
 * bytes). */
static int write_span(int fd, const struct mfs_span *s, uint64_t off, uint8_t *buf,
		      struct mfs_err *err)
{
	if (s->data || !s->dlen)
		return mfs_write_all(fd, s->data, (size_t)s->dlen, (int64_t)off);
	int r = 0;
	for (uint64_t done = 0; done < s->dlen && r == 0;) {
		size_t n = s->dlen - done < COPY_CHUNK ? (size_t)(s->dlen - done) : COPY_CHUNK;
		r = mfs_span_read(s, done, n, buf, err);
		if (r == 0)
			r = mfs_write_all(fd, buf, n, (int64_t)(off + done));
		done += n;
	}
	return r;
}

/* The file is still the one the model was made from. */
static int same_file(int dirfd, const char *name, const struct mfs_model *m, struct stat *out,
		     struct mfs_err *err)
{
	struct stat now;
	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return mfs_error(err, errno, "%s: %s", name, strerror(errno));
	if (!m->ino)
		return mfs_error(err, EBADF, "internal error: a model held in memory has no file");
	if ((uint64_t)now.st_dev != m->dev || (uint64_t)now.st_ino != m->ino ||
	    (uint64_t)now.st_size != m->size)
		return mfs_error(err, EAGAIN, "%s changed outside the mount meanwhile; nothing written",
				 name);
	if (out)
		*out = now;
	return 0;
}

/* name is still a link to the file the model was made from (whose stat
 * the caller found by resolving it): out gets that file's stat. */
static int same_link(int dirfd, const char *name, const struct mfs_model *m,
		     const struct stat *target, struct stat *out, struct mfs_err *err)
{
	struct stat now;
	if (fstatat(dirfd, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
		return mfs_error(err, errno, "%s: %s", name, strerror(errno));
	if (!S_ISLNK(now.st_mode) || (uint64_t)target->st_dev != m->dev ||
	    (uint64_t)target->st_ino != m->ino || (uint64_t)target->st_size != m->size)
		return mfs_error(err, EAGAIN, "%s changed outside the mount meanwhile; nothing written",
				 name);
	*out = *target;
	return 0;
}

/* Replace name in dirfd by data written by fill(), atomically. */
struct rewrite {
	int (*fill)(int fd, void *arg, struct mfs_err *err);
	void *arg;
	const struct mfs_codec *validate;  /* index the new file before it replaces the old */
	const struct stat *mode_from;      /* keep mode and owner of this file */
};

static int replace_file(int dirfd, const char *name, const struct rewrite *rw,
			const struct mfs_commit_opts *o, struct mfs_err *err)
{
	char tmp[256];
	int fd = tmp_open(dirfd, name, tmp, err);
	if (fd < 0)
		return fd;
	int r = rw->fill(fd, rw->arg, err);
	if (r == 0 && rw->mode_from) {
		if (fchmod(fd, rw->mode_from->st_mode & 07777) < 0)
			r = mfs_error(err, errno, "cannot set the mode: %s", strerror(errno));
		else if (fchown(fd, rw->mode_from->st_uid, rw->mode_from->st_gid) < 0 && errno != EPERM)
			r = mfs_error(err, errno, "cannot set the owner: %s", strerror(errno));
	}
	if (r == 0 && !o->no_fsync && fsync(fd) < 0)
		r = mfs_error(err, errno, "fsync: %s", strerror(errno));
	if (r == 0 && rw->validate) {
		struct mfs_model *check;
		struct mfs_err verr = {0};
		r = mfs_model_open_as(&check, dirfd, tmp, name, rw->validate, &verr);
		if (r == 0)
			mfs_model_free(check);
		else
			r = mfs_error(err, EINVAL, "the new content does not read back (%s); nothing written",
				      verr.msg);
	}
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = mfs_error(err, errno, "rename over %s: %s", name, strerror(errno));
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	/* Closed (its lock released) only once renamed or removed. */
	if (close(fd) < 0 && r == 0)
		r = mfs_error(err, errno, "close: %s", strerror(errno));
	if (r < 0)
		return r;
	if (!o->no_fsync && fsync(dirfd) < 0)
		return mfs_error(err, errno, "fsync of the directory: %s", strerror(errno));
	return 0;
}

struct patched {
	const struct mfs_model *m;
	const struct mfs_patch *p;
	const struct mfs_commit_opts *o;
	const struct stat *st;  /* the old file's, when the commit began */
	uint64_t total;       /* the new file's size */
	uint64_t step;        /* bytes between progress calls; 0: none */
	uint64_t next;        /* the next call once this many are written */
};

/* The new file's size: the old one with every span's length changed. */
static uint64_t patched_size(const struct mfs_model *m, const struct mfs_patch *p)
{
	uint64_t n = m->size;
	for (size_t i = 0; i < p->n; i++)
		n = n - p->spans[i].len + p->spans[i].dlen;
	return n;
}

static void progress_init(struct patched *pa)
{
	const struct mfs_commit_opts *o = pa->o;
	pa->total = patched_size(pa->m, pa->p);
	pa->step = 0;
	if (o->progress && pa->total >= o->progress_min) {
		pa->step = o->progress_step > COPY_CHUNK ? o->progress_step : COPY_CHUNK;
		pa->next = pa->step;
	}
}

/* Reports when written passed the next mark (and at the end). */
static void progress_at(struct patched *pa, uint64_t written)
{
	if (!pa->step || (written < pa->next && written < pa->total))
		return;
	pa->o->progress(pa->o->progress_ctx, pa->o->name ? pa->o->name : pa->m->name, written,
			pa->total);
	pa->next = (written / pa->step + 1) * pa->step;
}

/* [src, src + len) of the old file to dst of the new, in pieces of the
 * progress step when progress is reported. */
static int copy_old(struct patched *pa, int fd, uint64_t src, uint64_t dst, uint64_t len,
		    char *buf)
{
	const struct mfs_model *m = pa->m;
	if (m->fd < 0)
		return mfs_write_all(fd, m->base + src, (size_t)len, (int64_t)dst);
	while (len) {
		uint64_t n = pa->step && pa->next > dst && len > pa->next - dst ? pa->next - dst : len;
		int r = mfs_copy_range(m->fd, src, fd, dst, n, buf);
		if (r < 0)
			return r;
		src += n;
		dst += n;
		len -= n;
		progress_at(pa, dst);
	}
	return 0;
}

/* The old file's content has not changed since the commit began (size,
 * modification and change times of the descriptor the copy read): else
 * the new file may mix its content before and after an outside write. A
 * model held in memory was copied from memory: nothing to check. */
static int unchanged(const struct patched *pa, struct mfs_err *err)
{
	struct stat now;
	const struct stat *st = pa->st;
	if (pa->m->fd < 0)
		return 0;
	if (fstat(pa->m->fd, &now) < 0)
		return mfs_error(err, errno, "%s: %s", pa->m->name, strerror(errno));
	if (now.st_size != st->st_size || now.st_mtim.tv_sec != st->st_mtim.tv_sec ||
	    now.st_mtim.tv_nsec != st->st_mtim.tv_nsec || now.st_ctim.tv_sec != st->st_ctim.tv_sec ||
	    now.st_ctim.tv_nsec != st->st_ctim.tv_nsec)
		return mfs_error(err, EAGAIN, "%s changed outside the mount during the rewrite; nothing"
				 " written", pa->m->name);
	return 0;
}

static int fill_patched(int fd, void *arg, struct mfs_err *err)
{
	struct patched *pa = arg;
	const struct mfs_patch *p = pa->p;
	char *buf = malloc(COPY_CHUNK);
	if (!buf)
		return mfs_error(err, ENOMEM, "out of memory");
	progress_init(pa);
	uint64_t src = 0, dst = 0;
	int r = 0;
	for (size_t i = 0; i <= p->n && r == 0; i++) {
		uint64_t next = i < p->n ? p->spans[i].off : pa->m->size;
		if (next > src)
			r = copy_old(pa, fd, src, dst, next - src, buf);
		dst += next - src;
		if (r || i == p->n)
			break;
		const struct mfs_span *s = &p->spans[i];
		r = write_span(fd, s, dst, (uint8_t *)buf, err);
		dst += s->dlen;
		src = s->off + s->len;
		progress_at(pa, dst);
	}
	free(buf);
	if (r < 0 && !err->code)
		return mfs_error(err, -r, "cannot write the new file: %s", strerror(-r));
	return r < 0 ? r : unchanged(pa, err);
}

struct bytes_arg {
	const uint8_t *data;
	size_t len;
};

static int fill_bytes(int fd, void *arg, struct mfs_err *err)
{
	const struct bytes_arg *b = arg;
	int r = mfs_write_all(fd, b->data, b->len, 0);
	return r < 0 ? mfs_error(err, -r, "cannot write: %s", strerror(-r)) : 0;
}

/* ---- in place, under a rollback journal ------------------------------- */

/* The journal's name holds a file already (one recovery leaves alone). */
#define JOURNAL_TAKEN (-EEXIST)

/* A new journal jn, locked and still under its name, of this process's
 * user, mode 0600 whatever the umask (recovery trusts only such), or
 * JOURNAL_TAKEN when the name holds a file already (one recovery leaves
 * alone). */
static int journal_create(int dirfd, const char *jn, struct mfs_err *err)
{
	for (int tries = 0; tries < 100; tries++) {
		int jfd = openat(dirfd, jn, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (jfd < 0 && errno == EEXIST)
			return JOURNAL_TAKEN;
		if (jfd < 0)
			return mfs_error(err, errno, "cannot create the journal: %s", strerror(errno));
		/* A recovery may have taken the empty journal for a torn one
		 * between the two calls, and removed it: then again. */
		struct stat js;
		if (fchmod(jfd, 0600) == 0 && mfs_ofd_lock(jfd, true, true) == 0 &&
		    fstat(jfd, &js) == 0 && js.st_nlink > 0)
			return jfd;
		close(jfd);
	}
	return mfs_error(err, EAGAIN, "cannot create the journal: it keeps being removed");
}

/* commit_inplace with buf, a chunk of COPY_CHUNK bytes for the journal's
 * old bytes and the gathered spans' new ones. JOURNAL_TAKEN: nothing
 * written, the journal's name is taken (the caller rewrites the file). */
static int patch_journaled(int dirfd, const struct mfs_model *m, const struct mfs_patch *p,
			   const struct stat *st, const struct mfs_commit_opts *o, uint8_t *buf,
			   struct mfs_err *err)
{
	const char *name = o->name ? o->name : m->name;
	char jn[256];
	mfs_journal_name(name, jn);
	struct mfs_err rerr = {0};
	int r = mfs_recover_file(dirfd, name, &rerr);  /* a stale one would block us */
	if (r == MFS_JOURNAL_LEFT)
		return JOURNAL_TAKEN;
	if (r < 0) {
		*err = rerr;
		return r;
	}
	int jfd = journal_create(dirfd, jn, err);
	if (jfd < 0)
		return jfd;
	r = mfs_journal_write(jfd, st, m, p, buf, err);
	if (r == 0 && !o->no_fsync && (fsync(jfd) < 0 || fsync(dirfd) < 0))
		r = mfs_error(err, errno, "fsync of the journal: %s", strerror(errno));
	if (r < 0) {
		unlinkat(dirfd, jn, 0);
		close(jfd);
		return r;
	}
	/* From here until the journal is gone, a crash rolls back. */
	int fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		r = mfs_error(err, fd < 0 ? errno : EAGAIN, "cannot reopen %s for writing", name);
		if (fd >= 0)
			close(fd);
		unlinkat(dirfd, jn, 0);
		close(jfd);
		return r;
	}
	for (size_t i = 0; i < p->n && r == 0; i++) {
		int w = write_span(fd, &p->spans[i], p->spans[i].off, buf, err);
		if (w < 0)
			r = err->code ? w : mfs_error(err, -w, "write: %s", strerror(-w));
	}
	if (r == 0 && !o->no_fsync && fsync(fd) < 0)
		r = mfs_error(err, errno, "fsync: %s", strerror(errno));
	close(fd);
	if (r < 0) {
		/* Put the old bytes back now rather than at the next mount. */
		struct mfs_err uerr = {0};
		mfs_journal_settle(dirfd, jn, jfd, name, &uerr);
		close(jfd);
		return r;
	}
	/* Removed before its lock goes: a recovery that gets the lock then
	 * finds it unlinked. */
	int u = unlinkat(dirfd, jn, 0) < 0 ? errno : 0;
	close(jfd);
	if (u)
		return mfs_error(err, u, "cannot remove the journal: %s", strerror(u));
	if (!o->no_fsync && fsync(dirfd) < 0)
		return mfs_error(err, errno, "fsync of the directory: %s", strerror(errno));
	return 0;
}

static int commit_inplace(int dirfd, const struct mfs_model *m, const struct mfs_patch *p,
			  const struct stat *st, const struct mfs_commit_opts *o,
			  struct mfs_err *err)
{
	uint8_t *buf = malloc(COPY_CHUNK);
	if (!buf)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = patch_journaled(dirfd, m, p, st, o, buf, err);
	free(buf);
	return r;
}

int mfs_commit(int dirfd, const struct mfs_model *m, const struct mfs_patch *p,
	       const struct mfs_commit_opts *opts, struct mfs_err *err)
{
	static const struct mfs_commit_opts defaults;
	const struct mfs_commit_opts *o = opts ? opts : &defaults;
	const char *name = o->name ? o->name : m->name;
	struct stat st;
	int r = o->link_target ? same_link(dirfd, name, m, o->link_target, &st, err)
			       : same_file(dirfd, name, m, &st, err);
	if (r < 0)
		return r;
	if (p->n) {
		r = JOURNAL_TAKEN;
		if (!o->no_inplace && !o->link_target && mfs_patch_same_size(p))
			r = commit_inplace(dirfd, m, p, &st, o, err);
		if (r == JOURNAL_TAKEN) {
			struct patched pa = {.m = m, .p = p, .o = o, .st = &st};
			struct rewrite rw = {fill_patched, &pa, m->codec, &st};
			r = replace_file(dirfd, name, &rw, o, err);
		}
		if (r < 0)
			return r;
	}
	if (p->has_sidecar && m->codec->sidecar) {
		char side[512];
		snprintf(side, sizeof(side), "%s%s", name, m->codec->sidecar);
		struct stat sst;
		bool have = fstatat(dirfd, side, &sst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sst.st_mode);
		struct bytes_arg b = {p->sidecar, p->sidecar_len};
		struct rewrite rw = {fill_bytes, &b, NULL, have ? &sst : &st};
		r = replace_file(dirfd, side, &rw, o, err);
		if (r < 0)
			return mfs_error_prefix(err, "the data was written but its sidecar %s was not",
						side);
	}
	return 0;
}
