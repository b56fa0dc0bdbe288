/* The sweep of a directory's leftovers (mfs_recover_dir, commit.h): every
 * journal recovered, every temporary file of ours a commit cut short
 * removed. Each private name gives the file it belongs to (derived from
 * the name alone: "mfs-<hash>" names are matched against the directory's
 * long names); nothing in a journal names a file, and nothing found here
 * is followed: a temporary file is removed only when it is a regular file
 * with one link, owned by this process's user or by the owner of the file
 * it was to replace (a commit gives it that owner before its rename), and
 * no commit holds it. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "codec.h"
#include "commit.h"
#include "journal.h"

bool mfs_private_name(const char *name)
{
	if (name[0] != '.')
		return false;
	if (mfs_has_ext(name, MFS_JOURNAL_SUFFIX))
		return true;
	return strstr(name, MFS_TMP_MARK) != NULL;
}

/* Names of one directory: its private names, and its long names (those
 * whose journal or temporary file has a hashed name). */
struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *s, const char *name)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 16;
		char **v = realloc(s->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	if (!(s->v[s->n] = strdup(name)))
		return -ENOMEM;
	s->n++;
	return 0;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static bool lower_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* The name of the file private name e belongs to, into out ("" when none):
 * kind 'j' for a journal, 't' for a temporary file. A hashed name is the
 * long name of the directory whose own private name it is, else read as
 * it stands. */
static void owner_name(const char *e, char kind, const struct names *longs, char out[256])
{
	out[0] = '\0';
	size_t n = strlen(e), cut;
	if (kind == 'j') {
		cut = strlen(MFS_JOURNAL_SUFFIX);
	} else {
		cut = strlen(MFS_TMP_MARK) + 12;
		if (n < cut || strncmp(e + n - cut, MFS_TMP_MARK, strlen(MFS_TMP_MARK)) != 0 ||
		    !lower_hex(e + n - 12, 12))
			return;
	}
	if (e[0] != '.' || n <= cut + 1 || n - cut - 1 > 255)
		return;
	memcpy(out, e + 1, n - cut - 1);
	out[n - cut - 1] = '\0';
	if (strlen(out) != 20 || strncmp(out, "mfs-", 4) != 0 || !lower_hex(out + 4, 16))
		return;
	for (size_t i = 0; i < longs->n; i++) {
		char mine[256];
		if (kind == 'j')
			mfs_journal_name(longs->v[i], mine);
		else
			mfs_tmp_name(longs->v[i], strtoull(e + n - 12, NULL, 16), mine);
		if (strcmp(mine, e) == 0) {
			strcpy(out, longs->v[i]);
			return;
		}
	}
}

/* Removes temporary file e (of the file named owner, "" if unknown) if it
 * is ours and no commit holds it. */
static void remove_tmp(int dirfd, const char *e, const char *owner)
{
	struct stat st, os;
	if (fstatat(dirfd, e, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1)
		return;
	if (st.st_uid != geteuid() &&
	    !(owner[0] && fstatat(dirfd, owner, &os, AT_SYMLINK_NOFOLLOW) == 0 && os.st_uid == st.st_uid))
		return;
	int fd = openat(dirfd, e, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return;
	struct stat now;
	if (fstat(fd, &now) == 0 && now.st_dev == st.st_dev && now.st_ino == st.st_ino &&
	    now.st_nlink == 1 && mfs_ofd_lock(fd, true, false) == 0)
		unlinkat(dirfd, e, 0);
	close(fd);
}

/* The directory's private names and long names. */
static int list_dir(int dirfd, struct names *priv, struct names *longs, struct mfs_err *err)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		return mfs_error(err, e, "cannot list the directory: %s", strerror(e));
	}
	int r = 0;
	struct dirent *e;
	while (r == 0 && (e = readdir(d)) != NULL) {
		if (mfs_private_name(e->d_name))
			r = names_add(priv, e->d_name);
		else if (strlen(e->d_name) > 200)
			r = names_add(longs, e->d_name);
	}
	closedir(d);
	return r < 0 ? mfs_error(err, -r, "out of memory") : 0;
}

int mfs_recover_dir(int dirfd, mfs_recover_report *report, void *ctx, struct mfs_err *err)
{
	struct names priv = {0}, longs = {0};
	int r = list_dir(dirfd, &priv, &longs, err);
	size_t sl = strlen(MFS_JOURNAL_SUFFIX);
	int found = 0;
	for (size_t i = 0; r == 0 && i < priv.n; i++) {
		const char *e = priv.v[i];
		size_t n = strlen(e);
		char owner[256];
		bool journal = n > sl && strcmp(e + n - sl, MFS_JOURNAL_SUFFIX) == 0;
		owner_name(e, journal ? 'j' : 't', &longs, owner);
		if (!journal) {
			remove_tmp(dirfd, e, owner);
			continue;
		}
		struct mfs_err je = {0};
		int x = mfs_one_component(owner)
				? mfs_journal_recover(dirfd, e, owner, &je)
				: mfs_error(&je, EINVAL, "journal %s left alone: it names no file", e);
		if (x > 0 && x != MFS_JOURNAL_LEFT)
			found++;
		else if ((x == MFS_JOURNAL_LEFT || (x < 0 && je.code != EBUSY)) && report)
			report(ctx, mfs_one_component(owner) ? owner : e, &je);
	}
	names_free(&priv);
	names_free(&longs);
	return r < 0 ? r : found;
}
