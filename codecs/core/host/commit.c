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
#include <dirent.h>

#include "bytes.h"
#include "codec.h"
#include "commit.h"
#include "guard.h"

#define JOURNAL_MAGIC "MFSJRNL1"
#define JOURNAL_END "MFSJEND!"
#define JOURNAL_SUFFIX ".mfs-journal"
#define TMP_MARK ".mfs-tmp."
#define COPY_CHUNK (1u << 20)

bool mfs_private_name(const char *name)
{
	if (name[0] != '.')
		return false;
	if (mfs_has_ext(name, JOURNAL_SUFFIX))
		return true;
	return strstr(name, TMP_MARK) != NULL;
}

/* ".<name>.mfs-journal", or a hashed form when name is too long. */
static void journal_name(const char *name, char out[256])
{
	size_t n = strlen(name);
	if (n + 1 + strlen(JOURNAL_SUFFIX) <= 255)
		snprintf(out, 256, ".%s%s", name, JOURNAL_SUFFIX);
	else
		snprintf(out, 256, ".mfs-%016llx%s",
			 (unsigned long long)mfs_hash64(name, n, 0x6a726e6c), JOURNAL_SUFFIX);
}

/* An open file description's lock on the whole of fd (so that even another
 * thread of this process sees it taken): exclusive or shared, waiting for
 * it or not (then -1 with errno EAGAIN or EACCES while another holds it).
 * A commit holds its temporary file's and its journal's from their creation
 * until they are renamed or removed (waiting while a recovery holds one a
 * moment); recovery leaves locked ones alone. */
static int ofd_lock(int fd, bool exclusive, bool wait)
{
	struct flock fl = {.l_type = exclusive ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET};
	return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

/* A new temporary file beside name, locked and still under its name (a
 * recovery may have removed it between its creation and the lock: then
 * another name). */
static int tmp_open(int dirfd, const char *name, char out[256], struct mfs_err *err)
{
	for (int tries = 0; tries < 100; tries++) {
		uint64_t rnd;
		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			rnd = (uint64_t)getpid() * 0x9e3779b97f4a7c15ull + (uint64_t)tries;
		snprintf(out, 256, ".%.200s%s%012llx", name, TMP_MARK,
			 (unsigned long long)(rnd & 0xffffffffffffull));
		int fd = openat(dirfd, out, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0 && errno != EEXIST)
			return mfs_error(err, errno, "cannot create a temporary file beside %s: %s", name,
					 strerror(errno));
		if (fd < 0)
			continue;
		struct stat st;
		if (ofd_lock(fd, true, true) == 0 && fstat(fd, &st) == 0 && st.st_nlink > 0)
			return fd;
		close(fd);
	}
	return mfs_error(err, EEXIST, "cannot find a free temporary name beside %s", name);
}

/* Removes the temporary file tmp unless a commit holds it. */
static void remove_tmp(int dirfd, const char *tmp)
{
	int fd = openat(dirfd, tmp, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return;
	if (ofd_lock(fd, true, false) == 0)
		unlinkat(dirfd, tmp, 0);
	close(fd);
}

static int write_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const char *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len, uint64_t off)
{
	char *p = buf;
	while (len) {
		ssize_t n = pread(fd, p, len, (off_t)off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;  /* the file shrank */
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* The new data of span s to fd at off: in place, or gathered a chunk at a
 * time through buf (COPY_CHUNK bytes). */
static int write_span(int fd, const struct mfs_span *s, uint64_t off, uint8_t *buf)
{
	if (s->data || !s->dlen)
		return write_all(fd, s->data, (size_t)s->dlen, off);
	int r = 0;
	for (uint64_t done = 0; done < s->dlen && r == 0;) {
		size_t n = s->dlen - done < COPY_CHUNK ? (size_t)(s->dlen - done) : COPY_CHUNK;
		mfs_span_bytes(s, done, n, buf);
		r = write_all(fd, buf, n, off + done);
		done += n;
	}
	return r;
}

/* Copy [off, off + len) of src to dst at doff: in-kernel when possible. */
static int copy_range(int src, uint64_t off, int dst, uint64_t doff, uint64_t len, char *buf)
{
	bool kernel = true;
	while (len) {
		size_t n = len > COPY_CHUNK * 64ull ? COPY_CHUNK * 64u : (size_t)len;
		if (kernel) {
			loff_t in = (loff_t)off, out = (loff_t)doff;
			ssize_t r = copy_file_range(src, &in, dst, &out, n, 0);
			if (r > 0) {
				off += (uint64_t)r;
				doff += (uint64_t)r;
				len -= (uint64_t)r;
				continue;
			}
			if (r == 0)
				return -EIO;
			if (errno == EINTR)
				continue;
			if (errno != EXDEV && errno != ENOSYS && errno != EINVAL && errno != EOPNOTSUPP)
				return -errno;
			kernel = false;
		}
		n = len > COPY_CHUNK ? COPY_CHUNK : (size_t)len;
		int r = read_all(src, buf, n, off);
		if (r == 0)
			r = write_all(dst, buf, n, doff);
		if (r < 0)
			return r;
		off += n;
		doff += n;
		len -= n;
	}
	return 0;
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
	pa->o->progress(pa->o->progress_ctx, pa->m->name, written, pa->total);
	pa->next = (written / pa->step + 1) * pa->step;
}

/* [src, src + len) of the old file to dst of the new, in pieces of the
 * progress step when progress is reported. */
static int copy_old(struct patched *pa, int fd, uint64_t src, uint64_t dst, uint64_t len,
		    char *buf)
{
	const struct mfs_model *m = pa->m;
	if (m->fd < 0)
		return write_all(fd, m->base + src, (size_t)len, dst);
	while (len) {
		uint64_t n = pa->step && pa->next > dst && len > pa->next - dst ? pa->next - dst : len;
		int r = copy_range(m->fd, src, fd, dst, n, buf);
		if (r < 0)
			return r;
		src += n;
		dst += n;
		len -= n;
		progress_at(pa, dst);
	}
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
		r = write_span(fd, s, dst, (uint8_t *)buf);
		dst += s->dlen;
		src = s->off + s->len;
		progress_at(pa, dst);
	}
	free(buf);
	if (r < 0 && !err->code)
		return mfs_error(err, -r, "cannot write the new file: %s", strerror(-r));
	return r;
}

struct bytes_arg {
	const uint8_t *data;
	size_t len;
};

static int fill_bytes(int fd, void *arg, struct mfs_err *err)
{
	const struct bytes_arg *b = arg;
	int r = write_all(fd, b->data, b->len, 0);
	return r < 0 ? mfs_error(err, -r, "cannot write: %s", strerror(-r)) : 0;
}

/* ---- in place, under a rollback journal ------------------------------- */

/* Appends to the journal, hashing what it writes. */
struct jout {
	int fd;
	uint64_t pos, hash;
};

static int jput(struct jout *j, const void *data, size_t len)
{
	j->hash = mfs_hash64_add(j->hash, data, len);
	int r = write_all(j->fd, data, len, j->pos);
	j->pos += len;
	return r;
}

/* The old bytes of span s into the journal, a chunk at a time. */
static int jput_old(struct jout *j, const struct mfs_model *m, const struct mfs_span *s,
		    uint8_t *buf)
{
	int r = 0;
	for (uint64_t done = 0; done < s->len && r == 0;) {
		size_t n = s->len - done < COPY_CHUNK ? (size_t)(s->len - done) : COPY_CHUNK;
		const uint8_t *src = m->base + s->off + done;
		if (m->fd >= 0) {
			r = read_all(m->fd, buf, n, s->off + done);
			src = buf;
		}
		if (r == 0)
			r = jput(j, src, n);
		done += n;
	}
	return r;
}

static int journal_write(int jfd, const char *name, const struct stat *st,
			 const struct mfs_model *m, const struct mfs_patch *p, uint8_t *buf,
			 struct mfs_err *err)
{
	/* Header, then (offset, length, old bytes) per span, then a checksum
	 * of everything before it and an end mark: a torn journal is ignored.
	 * Written as it is made: the old bytes pass through buf, one chunk. */
	size_t nl = strlen(name);
	struct jout j = {jfd, 0, mfs_hash64_start(0x6a726e6c)};
	uint8_t h[8 * 6], *o = h;
	memcpy(o, JOURNAL_MAGIC, 8), o += 8;
	mfs_put_le64(o, (uint64_t)st->st_dev), o += 8;
	mfs_put_le64(o, (uint64_t)st->st_ino), o += 8;
	mfs_put_le64(o, m->size), o += 8;
	mfs_put_le64(o, p->n), o += 8;
	mfs_put_le64(o, nl);
	int r = jput(&j, h, sizeof(h));
	if (r == 0)
		r = jput(&j, name, nl);
	for (size_t i = 0; i < p->n && r == 0; i++) {
		mfs_put_le64(h, p->spans[i].off);
		mfs_put_le64(h + 8, p->spans[i].len);
		r = jput(&j, h, 16);
		if (r == 0)
			r = jput_old(&j, m, &p->spans[i], buf);
	}
	if (r == 0) {
		mfs_put_le64(h, mfs_hash64_end(j.hash));
		memcpy(h + 8, JOURNAL_END, 8);
		r = write_all(jfd, h, 16, j.pos);
	}
	return r < 0 ? mfs_error(err, -r, "cannot write the journal: %s", strerror(-r)) : 0;
}

static int roll_back(int dirfd, const char *jn, int jfd, struct mfs_err *err);

/* A new journal, locked and still under its name. */
static int journal_create(int dirfd, const char *jn, struct mfs_err *err)
{
	for (int tries = 0; tries < 100; tries++) {
		int jfd = openat(dirfd, jn, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (jfd < 0)
			return mfs_error(err, errno, "cannot create the journal: %s", strerror(errno));
		/* A recovery may have taken the empty journal for a torn one
		 * between the two calls, and removed it: then again. */
		struct stat js;
		if (ofd_lock(jfd, true, true) == 0 && fstat(jfd, &js) == 0 && js.st_nlink > 0)
			return jfd;
		close(jfd);
	}
	return mfs_error(err, EAGAIN, "cannot create the journal: it keeps being removed");
}

/* commit_inplace with buf, a chunk of COPY_CHUNK bytes for the journal's
 * old bytes and the gathered spans' new ones. */
static int patch_journaled(int dirfd, const struct mfs_model *m, const struct mfs_patch *p,
			   const struct stat *st, const struct mfs_commit_opts *o, uint8_t *buf,
			   struct mfs_err *err)
{
	char jn[256];
	journal_name(m->name, jn);
	int r = mfs_recover_file(dirfd, m->name, err);  /* a stale one would block us */
	if (r < 0)
		return r;
	int jfd = journal_create(dirfd, jn, err);
	if (jfd < 0)
		return jfd;
	r = journal_write(jfd, m->name, st, m, p, buf, err);
	if (r == 0 && !o->no_fsync && (fsync(jfd) < 0 || fsync(dirfd) < 0))
		r = mfs_error(err, errno, "fsync of the journal: %s", strerror(errno));
	if (r < 0) {
		unlinkat(dirfd, jn, 0);
		close(jfd);
		return r;
	}
	/* From here until the journal is gone, a crash rolls back. */
	int fd = openat(dirfd, m->name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || now.st_ino != st->st_ino || now.st_dev != st->st_dev) {
		r = mfs_error(err, fd < 0 ? errno : EAGAIN, "cannot reopen %s for writing", m->name);
		if (fd >= 0)
			close(fd);
		unlinkat(dirfd, jn, 0);
		close(jfd);
		return r;
	}
	for (size_t i = 0; i < p->n && r == 0; i++) {
		int w = write_span(fd, &p->spans[i], p->spans[i].off, buf);
		if (w < 0)
			r = mfs_error(err, -w, "write: %s", strerror(-w));
	}
	if (r == 0 && !o->no_fsync && fsync(fd) < 0)
		r = mfs_error(err, errno, "fsync: %s", strerror(errno));
	close(fd);
	if (r < 0) {
		/* Put the old bytes back now rather than at the next mount. */
		struct mfs_err rerr = {0};
		roll_back(dirfd, jn, jfd, &rerr);
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
	struct stat st;
	int r = same_file(dirfd, m->name, m, &st, err);
	if (r < 0)
		return r;
	if (p->n) {
		if (!o->no_inplace && mfs_patch_same_size(p)) {
			r = commit_inplace(dirfd, m, p, &st, o, err);
		} else {
			struct patched pa = {.m = m, .p = p, .o = o};
			struct rewrite rw = {fill_patched, &pa, m->codec, &st};
			r = replace_file(dirfd, m->name, &rw, o, err);
		}
		if (r < 0)
			return r;
	}
	if (p->has_sidecar && m->codec->sidecar) {
		char side[512];
		snprintf(side, sizeof(side), "%s%s", m->name, m->codec->sidecar);
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

/* ---- recovery ------------------------------------------------------------ */

/* Whether journal jfd of len bytes is whole: magic, end mark, checksum of
 * everything before it (read a chunk at a time into buf). */
static bool journal_whole(int jfd, uint64_t len, uint8_t *buf)
{
	uint8_t tail[16];
	if (read_all(jfd, buf, 8, 0) < 0 || memcmp(buf, JOURNAL_MAGIC, 8) != 0 ||
	    read_all(jfd, tail, 16, len - 16) < 0 || memcmp(tail + 8, JOURNAL_END, 8) != 0)
		return false;
	uint64_t h = mfs_hash64_start(0x6a726e6c);
	for (uint64_t pos = 0; pos < len - 16;) {
		size_t n = len - 16 - pos < COPY_CHUNK ? (size_t)(len - 16 - pos) : COPY_CHUNK;
		if (read_all(jfd, buf, n, pos) < 0)
			return false;
		h = mfs_hash64_add(h, buf, n);
		pos += n;
	}
	return mfs_le64(tail) == mfs_hash64_end(h);
}

/* A journal nobody holds (its commit was cut short), opened and locked:
 * >= 0, -EBUSY while a commit holds it, or 0 (*out -1) when there is none. */
static int open_abandoned(int dirfd, const char *jn, bool rw, int *out, struct mfs_err *err)
{
	*out = -1;
	int jfd = openat(dirfd, jn, (rw ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW);
	if (jfd < 0)
		return errno == ENOENT ? 0 : mfs_error(err, errno, "cannot open %s", jn);
	if (ofd_lock(jfd, rw, false) < 0) {
		int e = errno;
		close(jfd);
		if (e == EAGAIN || e == EACCES)
			return mfs_error(err, EBUSY, "a commit of this file is under way");
		return mfs_error(err, e, "cannot lock %s: %s", jn, strerror(e));
	}
	struct stat js;
	if (fstat(jfd, &js) < 0 || js.st_nlink == 0) {
		close(jfd);  /* its commit ended meanwhile */
		return 0;
	}
	*out = jfd;
	return 0;
}

static int recover_journal(int dirfd, const char *jn, struct mfs_err *err)
{
	int jfd;
	int r = open_abandoned(dirfd, jn, true, &jfd, err);
	if (r < 0 || jfd < 0)
		return r;
	r = roll_back(dirfd, jn, jfd, err);
	close(jfd);
	return r;
}

int mfs_journal_abandoned(int dirfd, const char *name, struct mfs_err *err)
{
	char jn[256];
	journal_name(name, jn);
	int jfd;
	int r = open_abandoned(dirfd, jn, false, &jfd, err);
	if (r < 0 || jfd < 0)
		return r;
	close(jfd);
	return 1;
}

/* Write back the old bytes that the journal jfd (locked) holds, then remove
 * it: 1, or 0 when it was torn (its patch never started) or about another
 * file. Does not close jfd. */
static int roll_back(int dirfd, const char *jn, int jfd, struct mfs_err *err)
{
	struct stat js;
	uint8_t *buf = malloc(COPY_CHUNK);
	if (!buf)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = 0, fd = -1;
	uint8_t h[48];
	if (fstat(jfd, &js) < 0 || js.st_size < 64 || js.st_size > (1ll << 40))
		goto drop;
	uint64_t len = (uint64_t)js.st_size;
	if (!journal_whole(jfd, len, buf) || read_all(jfd, h, sizeof(h), 0) < 0)
		goto drop;  /* torn: the patch never started */
	uint64_t dev = mfs_le64(h + 8), ino = mfs_le64(h + 16), size = mfs_le64(h + 24);
	uint64_t n = mfs_le64(h + 32), nl = mfs_le64(h + 40);
	char name[256];
	if (nl > 255 || 48 + nl > len - 16 || read_all(jfd, name, (size_t)nl, 48) < 0)
		goto drop;
	name[nl] = '\0';
	fd = openat(dirfd, name, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino || (uint64_t)st.st_size != size)
		goto drop;  /* the file was replaced since: the journal is about another file */
	uint64_t q = 48 + nl, end = len - 16;
	for (uint64_t i = 0; i < n && r == 0; i++) {
		uint8_t sp[16];
		if (end - q < 16)
			break;
		if (read_all(jfd, sp, 16, q) < 0) {
			r = mfs_error(err, EIO, "cannot read the journal of %s", name);
			break;
		}
		uint64_t off = mfs_le64(sp), l = mfs_le64(sp + 8);
		q += 16;
		if (l > end - q || off > size || l > size - off)
			break;
		int w = copy_range(jfd, q, fd, off, l, (char *)buf);
		if (w < 0)
			r = mfs_error(err, -w, "cannot roll back %s: %s", name, strerror(-w));
		q += l;
	}
	if (r == 0 && fsync(fd) < 0)
		r = mfs_error(err, errno, "fsync: %s", strerror(errno));
	close(fd);
	free(buf);
	if (r < 0)
		return r;  /* keep the journal: try again later */
	unlinkat(dirfd, jn, 0);
	fsync(dirfd);
	return 1;
drop:
	if (fd >= 0)
		close(fd);
	free(buf);
	unlinkat(dirfd, jn, 0);
	return 0;
}

int mfs_recover_file(int dirfd, const char *name, struct mfs_err *err)
{
	char jn[256];
	journal_name(name, jn);
	return recover_journal(dirfd, jn, err);
}

int mfs_recover_dir(int dirfd, struct mfs_err *err)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return mfs_error(err, errno, "cannot list the directory: %s", strerror(errno));
	DIR *d = fdopendir(fd);
	if (!d) {
		close(fd);
		return mfs_error(err, errno, "cannot list the directory: %s", strerror(errno));
	}
	int r = 0, found = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (!mfs_private_name(e->d_name))
			continue;
		if (mfs_has_ext(e->d_name, JOURNAL_SUFFIX)) {
			int x = recover_journal(dirfd, e->d_name, err);
			if (x < 0)
				r = x;
			else
				found += x;
		} else {
			remove_tmp(dirfd, e->d_name);
		}
	}
	closedir(d);
	return r < 0 ? r : found;
}
