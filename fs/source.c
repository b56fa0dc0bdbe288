/* Entries of SOURCE without following links (source.h). modelfs runs as
 * root for other users: a link planted in SOURCE under a name the kernel
 * still knows as a plain file (a negative entry, an open file renamed
 * away) must not carry a write, chmod or truncate outside SOURCE. Names
 * are single components (warm.c's paths below the mount point excepted):
 * RESOLVE_BENEATH also refuses "..", an absolute name and magic links. */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "source.h"

static atomic_bool no_openat2;  /* the kernel has no openat2 (before 5.6) */

int src_open(int dfd, const char *name, int flags, mode_t mode)
{
	flags |= O_NOFOLLOW | O_CLOEXEC;
#ifdef SYS_openat2
	if (!atomic_load_explicit(&no_openat2, memory_order_relaxed)) {
		struct open_how how = {
			.flags = (unsigned)flags,
			.mode = (flags & O_CREAT) ? mode & 07777 : 0,  /* FUSE passes S_IFREG too */
			.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
		};
		long fd = syscall(SYS_openat2, dfd, name, &how, sizeof(how));
		if (fd >= 0)
			return (int)fd;
		/* EINVAL: flags openat2 refuses and openat ignores (bits the
		 * kernel passes in FUSE open flags); openat with O_NOFOLLOW is
		 * as safe for a single component. */
		if (errno != ENOSYS && errno != EINVAL)
			return -errno;
		if (errno == ENOSYS)
			atomic_store(&no_openat2, true);
	}
#endif
	int fd = openat(dfd, name, flags, mode);
	return fd < 0 ? -errno : fd;
}

static void fd_path(int fd, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/self/fd/%d", fd);
}

int src_reopen(int fd, int flags)
{
	char p[64];
	fd_path(fd, p, sizeof(p));
	int r = open(p, flags | O_CLOEXEC);
	return r < 0 ? -errno : r;
}

int src_fchmod(int fd, mode_t mode)
{
	/* fchmod refuses O_PATH descriptors; the /proc entry is the opened
	 * file itself, not a name walked again. */
	char p[64];
	fd_path(fd, p, sizeof(p));
	return chmod(p, mode) < 0 ? -errno : 0;
}

int src_fchown(int fd, uid_t uid, gid_t gid)
{
	return fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

int src_futimens(int fd, const struct timespec ts[2])
{
	return utimensat(fd, "", ts, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
}

/* The directory that holds the mount point, and the mount point's name in
 * it; set before the mount, read only afterwards. */
static struct {
	bool on;
	dev_t dev;
	ino_t ino;
	char *name;
} hide;

int src_hide_mountpoint(const char *source, const char *mountpoint)
{
	char *mp = realpath(mountpoint, NULL);
	if (!mp)
		return -errno;
	size_t n = strlen(source);
	bool inside = strncmp(mp, source, n) == 0 && (mp[n] == '/' || n == 1) && mp[n] != '\0';
	char *slash = strrchr(mp, '/');
	if (!inside || !slash || !slash[1]) {
		free(mp);
		return 0;
	}
	struct stat st;
	*slash = '\0';
	int r = stat(slash == mp ? "/" : mp, &st) < 0 ? -errno : 0;
	if (r == 0 && !(hide.name = strdup(slash + 1)))
		r = -ENOMEM;
	if (r == 0) {
		hide.dev = st.st_dev;
		hide.ino = st.st_ino;
		hide.on = true;
	}
	free(mp);
	return r;
}

bool src_hidden(int dfd, const char *name)
{
	if (!hide.on || strcmp(name, hide.name) != 0)
		return false;
	struct stat st;
	return fstat(dfd, &st) == 0 && st.st_dev == hide.dev && st.st_ino == hide.ino;
}

bool src_mount_inside(void)
{
	return hide.on;
}
