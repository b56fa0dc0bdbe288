/* The rollback journal (journal.h): written by an in-place commit, checked
 * whole before recovery writes a byte of it back.
 *
 * Format MFSJRNL2, little-endian:
 *   header (56 bytes): magic "MFSJRNL2", device, inode and size of the file
 *     it was made for, span count, the journal's whole length, the CRC-32
 *     of those 48 bytes (4 bytes), 4 zero bytes;
 *   per span: offset, length, then the file's old bytes there;
 *   end (16 bytes): the CRC-32 of every byte before it (8 bytes), "MFSJEND2".
 * The journal names no file: it applies to the file it sits beside, whose
 * name is derived from the journal's. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "bytes.h"
#include "commit.h"
#include "fdio.h"
#include "journal.h"

#define J_MAGIC "MFSJRNL2"
#define J_OLD_MAGIC "MFSJRNL1"
#define J_END "MFSJEND2"
#define J_HEAD 56
#define J_TAIL 16
#define NAME_SEED 0x6a726e6c

/* What a look at a journal found (besides MFS_JOURNAL_LEFT and -errno). */
enum { J_NONE = 10, J_OPEN, J_DROP, J_VALID };

bool mfs_one_component(const char *name)
{
	return name[0] && strcmp(name, ".") && strcmp(name, "..") && !strchr(name, '/');
}

static unsigned long long name_hash(const char *name)
{
	return (unsigned long long)mfs_hash64(name, strlen(name), NAME_SEED);
}

void mfs_journal_name(const char *name, char out[256])
{
	if (1 + strlen(name) + strlen(MFS_JOURNAL_SUFFIX) <= 255)
		snprintf(out, 256, ".%s%s", name, MFS_JOURNAL_SUFFIX);
	else
		snprintf(out, 256, ".mfs-%016llx%s", name_hash(name), MFS_JOURNAL_SUFFIX);
}

void mfs_tmp_name(const char *name, uint64_t rnd, char out[256])
{
	unsigned long long r = (unsigned long long)(rnd & 0xffffffffffffull);
	if (1 + strlen(name) + strlen(MFS_TMP_MARK) + 12 <= 255)
		snprintf(out, 256, ".%s%s%012llx", name, MFS_TMP_MARK, r);
	else
		snprintf(out, 256, ".mfs-%016llx%s%012llx", name_hash(name), MFS_TMP_MARK, r);
}

int mfs_ofd_lock(int fd, bool exclusive, bool wait)
{
	struct flock fl = {.l_type = exclusive ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET};
	return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl);
}

/* ---- writing ---------------------------------------------------------- */

/* Appends to the journal through buf (MFS_COPY_CHUNK bytes), adding what
 * it writes to the CRC-32: a small patch's journal is one write. */
struct jout {
	int fd;
	uint64_t pos;   /* where buf goes in the journal */
	uint8_t *buf;
	size_t fill;
	uLong crc;
};

static int jflush(struct jout *j)
{
	int r = mfs_write_all(j->fd, j->buf, j->fill, (int64_t)j->pos);
	j->pos += j->fill;
	j->fill = 0;
	return r;
}

static int jput(struct jout *j, const void *data, size_t len)
{
	const uint8_t *p = data;
	j->crc = crc32(j->crc, p, (uInt)len);
	while (len) {
		size_t k = len < MFS_COPY_CHUNK - j->fill ? len : MFS_COPY_CHUNK - j->fill;
		memcpy(j->buf + j->fill, p, k);
		j->fill += k;
		p += k;
		len -= k;
		if (j->fill == MFS_COPY_CHUNK) {
			int r = jflush(j);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* The old bytes of span s into the journal: read straight into its buffer
 * from the source's descriptor, or copied from the map. */
static int jput_old(struct jout *j, const struct mfs_model *m, const struct mfs_span *s)
{
	if (m->fd < 0)
		return jput(j, m->base + s->off, (size_t)s->len);
	for (uint64_t done = 0; done < s->len;) {
		size_t room = MFS_COPY_CHUNK - j->fill;
		size_t n = s->len - done < room ? (size_t)(s->len - done) : room;
		int r = mfs_read_all(m->fd, j->buf + j->fill, n, (int64_t)(s->off + done));
		if (r < 0)
			return r;
		j->crc = crc32(j->crc, j->buf + j->fill, (uInt)n);
		j->fill += n;
		done += n;
		if (j->fill == MFS_COPY_CHUNK && (r = jflush(j)) < 0)
			return r;
	}
	return 0;
}

int mfs_journal_write(int jfd, const struct stat *st, const struct mfs_model *m,
		      const struct mfs_patch *p, uint8_t *buf, struct mfs_err *err)
{
	uint64_t total = J_HEAD + J_TAIL;
	for (size_t i = 0; i < p->n; i++)
		total += 16 + p->spans[i].len;
	struct jout j = {jfd, 0, buf, 0, crc32(0, NULL, 0)};
	uint8_t h[J_HEAD] = {0};
	memcpy(h, J_MAGIC, 8);
	mfs_put_le64(h + 8, (uint64_t)st->st_dev);
	mfs_put_le64(h + 16, (uint64_t)st->st_ino);
	mfs_put_le64(h + 24, m->size);
	mfs_put_le64(h + 32, p->n);
	mfs_put_le64(h + 40, total);
	mfs_put_le32(h + 48, (uint32_t)crc32(crc32(0, NULL, 0), h, 48));
	int r = jput(&j, h, sizeof(h));
	for (size_t i = 0; i < p->n && r == 0; i++) {
		mfs_put_le64(h, p->spans[i].off);
		mfs_put_le64(h + 8, p->spans[i].len);
		r = jput(&j, h, 16);
		if (r == 0)
			r = jput_old(&j, m, &p->spans[i]);
	}
	if (r == 0) {
		mfs_put_le64(h, (uint64_t)j.crc);
		memcpy(h + 8, J_END, 8);
		r = jput(&j, h, J_TAIL);
	}
	if (r == 0)
		r = jflush(&j);
	return r < 0 ? mfs_error(err, -r, "cannot write the journal: %s", strerror(-r)) : 0;
}

/* ---- checking ------------------------------------------------------------ */

/* MFS_JOURNAL_LEFT, with "journal JN left alone, not applied: WHY". */
static int left(struct mfs_err *err, int code, const char *jn, const char *fmt, ...)
{
	char why[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	mfs_error(err, code, "journal %s left alone, not applied: %s", jn, why);
	return MFS_JOURNAL_LEFT;
}

static const char *kind_of(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link";
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISDIR(mode))
		return "a directory";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	return "not a regular file";
}

/* Whether st may be a journal of ours: a regular file of this process's
 * user, mode 0600, one link (a journal is made so; no other user can make
 * one so). 0 or MFS_JOURNAL_LEFT. */
static int ours(const struct stat *st, const char *jn, struct mfs_err *err)
{
	if (!S_ISREG(st->st_mode))
		return left(err, EPERM, jn, "it is %s", kind_of(st->st_mode));
	if (st->st_uid != geteuid())
		return left(err, EPERM, jn, "it is owned by uid %u, not by uid %u, this process's"
			    " (its owner's `modelfs cat` rolls it back)", (unsigned)st->st_uid,
			    (unsigned)geteuid());
	if ((st->st_mode & 07777) != 0600)
		return left(err, EPERM, jn, "it has mode %04o, not 0600", (unsigned)(st->st_mode & 07777));
	if (st->st_nlink > 1)
		return left(err, EPERM, jn, "it has %ju links, not 1", (uintmax_t)st->st_nlink);
	return 0;
}

/* Journal jn opened (read-write for a recovery) and locked into *jfd:
 * J_OPEN, J_NONE (none, or its commit ended meanwhile), MFS_JOURNAL_LEFT,
 * -EBUSY while a commit holds it, or -errno. */
static int journal_open(int dirfd, const char *jn, bool rw, int *jfd, struct mfs_err *err)
{
	*jfd = -1;
	struct stat st;
	if (fstatat(dirfd, jn, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? J_NONE
				       : mfs_error(err, errno, "cannot look at %s: %s", jn, strerror(errno));
	int t = ours(&st, jn, err);
	if (t)
		return t;
	/* O_NONBLOCK: never wait on a FIFO put there meanwhile */
	int fd = openat(dirfd, jn, (rw ? O_RDWR : O_RDONLY) | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
			O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return J_NONE;
		if (errno == ELOOP)
			return left(err, EPERM, jn, "it is a symbolic link");
		return mfs_error(err, errno, "cannot open %s: %s", jn, strerror(errno));
	}
	if (mfs_ofd_lock(fd, rw, false) < 0) {
		int e = errno;
		close(fd);
		if (e == EAGAIN || e == EACCES)
			return mfs_error(err, EBUSY, "a commit of this file is under way");
		return mfs_error(err, e, "cannot lock %s: %s", jn, strerror(e));
	}
	/* What was opened is checked, not the name looked at before. */
	if (fstat(fd, &st) < 0 || st.st_nlink == 0) {
		close(fd);  /* its commit ended meanwhile */
		return J_NONE;
	}
	if ((t = ours(&st, jn, err)) != 0) {
		close(fd);
		return t;
	}
	*jfd = fd;
	return J_OPEN;
}

/* What a whole journal says. */
struct jhead {
	uint64_t dev, ino, size, n, total;
};

/* The header and the CRC-32 of the whole of jfd (len bytes): J_VALID,
 * J_DROP when it is cut short (written by a commit killed before its
 * patch began: the patch starts once the whole journal is fsynced),
 * MFS_JOURNAL_LEFT or -errno. */
static int journal_whole(int jfd, const char *jn, uint64_t len, struct jhead *jh, uint8_t *buf,
			 struct mfs_err *err)
{
	uint8_t h[J_HEAD];
	if (len < J_HEAD)
		return J_DROP;
	int r = mfs_read_all(jfd, h, J_HEAD, 0);
	if (r < 0)
		return mfs_error(err, -r, "cannot read %s: %s", jn, strerror(-r));
	if (memcmp(h, J_OLD_MAGIC, 8) == 0)
		return left(err, EINVAL, jn, "it is in the old format (MFSJRNL1), which names its file"
			    " itself and is not trusted (remove it once the file is known to be whole)");
	if (memcmp(h, J_MAGIC, 8) != 0)
		return left(err, EINVAL, jn, "it does not start with MFSJRNL2");
	if (mfs_le32(h + 48) != (uint32_t)crc32(crc32(0, NULL, 0), h, 48))
		return left(err, EINVAL, jn, "its header does not match its CRC-32");
	*jh = (struct jhead){mfs_le64(h + 8), mfs_le64(h + 16), mfs_le64(h + 24), mfs_le64(h + 32),
			     mfs_le64(h + 40)};
	if (jh->total > len)
		return J_DROP;
	if (jh->total < len || jh->total < J_HEAD + J_TAIL)
		return left(err, EINVAL, jn, "it has %llu bytes, its header says %llu",
			    (unsigned long long)len, (unsigned long long)jh->total);
	uint8_t tail[J_TAIL];
	uint64_t end = jh->total - J_TAIL;
	if ((r = mfs_read_all(jfd, tail, J_TAIL, (int64_t)end)) < 0)
		return mfs_error(err, -r, "cannot read %s: %s", jn, strerror(-r));
	if (memcmp(tail + 8, J_END, 8) != 0)
		return left(err, EINVAL, jn, "it has no end mark");
	uLong crc = crc32(0, NULL, 0);
	for (uint64_t pos = 0; pos < end;) {
		size_t n = end - pos < MFS_COPY_CHUNK ? (size_t)(end - pos) : MFS_COPY_CHUNK;
		if ((r = mfs_read_all(jfd, buf, n, (int64_t)pos)) < 0)
			return mfs_error(err, -r, "cannot read %s: %s", jn, strerror(-r));
		crc = crc32(crc, buf, (uInt)n);
		pos += n;
	}
	if (mfs_le64(tail) != (uint64_t)crc)
		return left(err, EINVAL, jn, "its CRC-32 is %08lx, it records %08llx", (unsigned long)crc,
			    (unsigned long long)mfs_le64(tail));
	return J_VALID;
}

/* Every span within the journal and within the file's size: J_VALID,
 * MFS_JOURNAL_LEFT or -errno. */
static int journal_spans(int jfd, const char *jn, const struct jhead *jh, struct mfs_err *err)
{
	uint64_t q = J_HEAD, end = jh->total - J_TAIL;
	for (uint64_t i = 0; i < jh->n; i++) {
		uint8_t sp[16];
		if (end - q < 16)
			return left(err, EINVAL, jn, "span %llu of %llu is cut short at byte %llu",
				    (unsigned long long)i, (unsigned long long)jh->n,
				    (unsigned long long)q);
		int r = mfs_read_all(jfd, sp, 16, (int64_t)q);
		if (r < 0)
			return mfs_error(err, -r, "cannot read %s: %s", jn, strerror(-r));
		uint64_t off = mfs_le64(sp), l = mfs_le64(sp + 8);
		q += 16;
		if (l > end - q)
			return left(err, EINVAL, jn, "span %llu holds %llu bytes, %llu are left",
				    (unsigned long long)i, (unsigned long long)l,
				    (unsigned long long)(end - q));
		if (off > jh->size || l > jh->size - off)
			return left(err, EINVAL, jn, "span %llu (%llu bytes at offset %llu) ends past"
				    " the file's %llu bytes", (unsigned long long)i,
				    (unsigned long long)l, (unsigned long long)off,
				    (unsigned long long)jh->size);
		q += l;
	}
	if (q != end)
		return left(err, EINVAL, jn, "%llu bytes follow its last span",
			    (unsigned long long)(end - q));
	return J_VALID;
}

/* The file name beside the journal, checked against the journal's header
 * and, for a recovery (fd not NULL), opened for writing without following
 * a link: J_VALID, J_DROP when it is gone or another file now (replaced
 * since: the journal is about a file that no longer has the name),
 * MFS_JOURNAL_LEFT or -errno. A file with more links is rolled back too:
 * the journal's own commit patched that inode, under every name. */
static int journal_target(int dirfd, const char *jn, const char *name, const struct jhead *jh,
			  int *fd, struct mfs_err *err)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? J_DROP
				       : mfs_error(err, errno, "cannot look at the file: %s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return left(err, EPERM, jn, "the file beside it is %s", kind_of(st.st_mode));
	if ((uint64_t)st.st_dev != jh->dev || (uint64_t)st.st_ino != jh->ino)
		return J_DROP;
	if ((uint64_t)st.st_size != jh->size)
		return left(err, EINVAL, jn, "it was made for a file of %llu bytes, the file has %llu",
			    (unsigned long long)jh->size, (unsigned long long)st.st_size);
	if (!fd)
		return J_VALID;
	*fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (*fd < 0)
		return mfs_error(err, errno, "cannot open the file to roll it back: %s", strerror(errno));
	struct stat now;
	if (fstat(*fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_dev != st.st_dev ||
	    now.st_ino != st.st_ino || now.st_size != st.st_size) {
		close(*fd);
		*fd = -1;
		return mfs_error(err, EAGAIN, "the file changed while its journal was checked");
	}
	return J_VALID;
}

/* Every check of open journal jfd beside name, before a byte is written. */
static int journal_check(int dirfd, const char *jn, int jfd, const char *name, int *fd,
			 struct jhead *jh, uint8_t *buf, struct mfs_err *err)
{
	struct stat st;
	if (fstat(jfd, &st) < 0)
		return mfs_error(err, errno, "cannot look at %s: %s", jn, strerror(errno));
	int s = journal_whole(jfd, jn, (uint64_t)st.st_size, jh, buf, err);
	if (s == J_VALID)
		s = journal_spans(jfd, jn, jh, err);
	if (s == J_VALID)
		s = journal_target(dirfd, jn, name, jh, fd, err);
	return s;
}

/* The old bytes of every span back into fd, then fsync. */
static int journal_apply(int jfd, int fd, const struct jhead *jh, uint8_t *buf,
			 struct mfs_err *err)
{
	uint64_t q = J_HEAD;
	for (uint64_t i = 0; i < jh->n; i++) {
		uint8_t sp[16];
		int r = mfs_read_all(jfd, sp, 16, (int64_t)q);
		uint64_t off = mfs_le64(sp), l = mfs_le64(sp + 8);
		q += 16;
		if (r == 0)
			r = mfs_copy_range(jfd, q, fd, off, l, (char *)buf);
		if (r < 0)
			return mfs_error(err, -r, "cannot roll back: %s", strerror(-r));
		q += l;
	}
	if (fsync(fd) < 0)
		return mfs_error(err, errno, "fsync: %s", strerror(errno));
	return 0;
}

int mfs_journal_settle(int dirfd, const char *jn, int jfd, const char *name,
		       struct mfs_err *err)
{
	uint8_t *buf = malloc(MFS_COPY_CHUNK);
	if (!buf)
		return mfs_error(err, ENOMEM, "out of memory");
	struct jhead jh;
	int fd = -1;
	int s = journal_check(dirfd, jn, jfd, name, &fd, &jh, buf, err);
	if (s == J_VALID) {
		int r = journal_apply(jfd, fd, &jh, buf, err);
		close(fd);
		if (r < 0)
			s = r;  /* kept: tried again later */
	}
	free(buf);
	if (s != J_VALID && s != J_DROP)
		return s;
	/* Removed before its lock goes (the caller closes jfd): a recovery
	 * that gets the lock then finds it unlinked. */
	unlinkat(dirfd, jn, 0);
	fsync(dirfd);
	return s == J_VALID ? 1 : 0;
}

int mfs_journal_recover(int dirfd, const char *jn, const char *name, struct mfs_err *err)
{
	int jfd;
	int s = journal_open(dirfd, jn, true, &jfd, err);
	if (s != J_OPEN)
		return s == J_NONE ? 0 : s;
	s = mfs_journal_settle(dirfd, jn, jfd, name, err);
	close(jfd);
	return s;
}

int mfs_recover_file(int dirfd, const char *name, struct mfs_err *err)
{
	if (!mfs_one_component(name))
		return mfs_error(err, EINVAL, "internal error: recovery of a path, not a name");
	char jn[256];
	mfs_journal_name(name, jn);
	return mfs_journal_recover(dirfd, jn, name, err);
}

int mfs_journal_abandoned(int dirfd, const char *name, struct mfs_err *err)
{
	if (!mfs_one_component(name))
		return mfs_error(err, EINVAL, "internal error: a journal of a path, not a name");
	char jn[256];
	mfs_journal_name(name, jn);
	int jfd;
	int s = journal_open(dirfd, jn, false, &jfd, err);
	if (s != J_OPEN)
		return s == J_NONE ? 0 : s;
	uint8_t *buf = malloc(MFS_COPY_CHUNK);
	struct jhead jh;
	s = buf ? journal_check(dirfd, jn, jfd, name, NULL, &jh, buf, err)
		: mfs_error(err, ENOMEM, "out of memory");
	free(buf);
	close(jfd);
	return s == J_VALID ? 1 : s == J_DROP ? 0 : s;
}
