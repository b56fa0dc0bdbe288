/* Symbolic links of SOURCE resolved beneath it (links.h). The daemon runs
 * as root over files other users plant: a link is followed only while
 * every step stays inside SOURCE, so what it opens is always a file of
 * SOURCE (an absolute target, ".." above SOURCE or the mount point's
 * directory refuse it). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs.h"
#include "links.h"
#include "model_fs.h"
#include "source.h"

#define HOPS_MAX 40    /* links followed in one resolution, as the kernel's */
#define DEPTH_MAX 256  /* directories open at once in the walk */

static atomic_bool walk_only;  /* the kernel has no openat2, or a test says so */

void link_walk_only(bool on)
{
	atomic_store(&walk_only, on);
}

/* dir's path from SOURCE's root ("" for the root) followed by "/name". */
static int entry_path(struct inode *dir, const char *name, char *buf, size_t size)
{
	struct fsstate *fs = dir->fs;
	pthread_mutex_lock(&fs->lock);
	int n = inode_path(dir, buf, size);
	pthread_mutex_unlock(&fs->lock);
	if (n < 0)
		return n;
	int m = snprintf(buf + n, size - (size_t)n, "%s%s", n ? "/" : "", name);
	return m < 0 || (size_t)m >= size - (size_t)n ? -ENAMETOOLONG : 0;
}

#ifdef SYS_openat2
static int resolve_openat2(int root, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
			   (src_mount_inside() ? RESOLVE_NO_XDEV : 0),
	};
	long fd = syscall(SYS_openat2, root, path, &how, sizeof(how));
	if (fd >= 0)
		return (int)fd;
	if (errno == ENOSYS)
		atomic_store(&walk_only, true);
	return -errno;
}
#endif

/* The walk's state: the directories from SOURCE down to where it is, and
 * the components left (each link's target put in front of them). */
struct walk {
	int fds[DEPTH_MAX];
	int depth;             /* fds[0] is SOURCE's root, never closed */
	char rest[2 * PATH_MAX];
	size_t pos;            /* the next component starts at rest + pos */
	int hops;
};

static void walk_free(struct walk *w)
{
	for (int d = 1; d <= w->depth; d++)
		close(w->fds[d]);
}

/* The next component into comp; false when none is left. */
static bool next_comp(struct walk *w, char comp[NAME_MAX + 1], int *err)
{
	while (w->rest[w->pos] == '/')
		w->pos++;
	if (!w->rest[w->pos])
		return false;
	size_t n = strcspn(w->rest + w->pos, "/");
	if (n > NAME_MAX) {
		*err = -ENAMETOOLONG;
		return false;
	}
	memcpy(comp, w->rest + w->pos, n);
	comp[n] = '\0';
	w->pos += n;
	return true;
}

static bool last_comp(const struct walk *w)
{
	return w->rest[w->pos + strspn(w->rest + w->pos, "/")] == '\0';
}

/* The link fd (O_PATH) is followed: its target goes before the rest. */
static int splice_link(struct walk *w, int fd)
{
	if (++w->hops > HOPS_MAX)
		return -ELOOP;
	char t[PATH_MAX];
	ssize_t n = readlinkat(fd, "", t, sizeof(t) - 1);
	if (n < 0)
		return -errno;
	t[n] = '\0';
	if (t[0] == '/')
		return -EXDEV;
	size_t left = strlen(w->rest + w->pos);
	if ((size_t)n + 1 + left + 1 > sizeof(w->rest))
		return -ENAMETOOLONG;
	memmove(w->rest + n + 1, w->rest + w->pos, left + 1);
	memcpy(w->rest, t, (size_t)n);
	w->rest[n] = '/';
	w->pos = 0;
	return 0;
}

/* One component: up, down into a directory, a link spliced in, or the
 * last one's descriptor (> 0 into *out). */
static int walk_step(struct walk *w, const char *comp, int *out)
{
	if (strcmp(comp, ".") == 0)
		return 0;
	if (strcmp(comp, "..") == 0) {
		if (w->depth == 0)
			return -EXDEV;
		close(w->fds[w->depth--]);
		return 0;
	}
	int top = w->fds[w->depth];
	if (src_hidden(top, comp))
		return -EXDEV;  /* the mount point: it would reach this mount */
	int fd = openat(top, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int r = fstat(fd, &st) < 0 ? -errno : 0;
	if (r == 0 && S_ISLNK(st.st_mode)) {
		r = splice_link(w, fd);
		close(fd);
		return r;
	}
	if (r == 0 && last_comp(w)) {
		*out = fd;
		return 0;
	}
	if (r == 0 && !S_ISDIR(st.st_mode))
		r = -ENOTDIR;
	if (r == 0 && w->depth + 1 >= DEPTH_MAX)
		r = -ENAMETOOLONG;
	if (r < 0) {
		close(fd);
		return r;
	}
	w->fds[++w->depth] = fd;
	return 0;
}

static int resolve_walk(int root, const char *path)
{
	struct walk *w = malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fds[0] = root;
	w->depth = 0;
	w->pos = 0;
	w->hops = 0;
	snprintf(w->rest, sizeof(w->rest), "%s", path);
	char comp[NAME_MAX + 1];
	int err = 0, out = -1;
	while (err == 0 && out < 0 && next_comp(w, comp, &err))
		err = walk_step(w, comp, &out);
	if (err == 0 && out < 0)
		err = -EISDIR;  /* it ends at a directory (or SOURCE itself) */
	walk_free(w);
	free(w);
	if (err < 0 && out >= 0)
		close(out);
	return err < 0 ? err : out;
}

int link_resolve(struct inode *dir, const char *name)
{
	struct fsstate *fs = dir->fs;
	char path[PATH_MAX];
	int r = entry_path(dir, name, path, sizeof(path));
	if (r < 0)
		return r;
#ifdef SYS_openat2
	if (!atomic_load(&walk_only)) {
		r = resolve_openat2(fs->root_fd, path);
		if (r != -ENOSYS)
			return r;
	}
#endif
	return resolve_walk(fs->root_fd, path);
}

int link_source_stat(struct inode *dir, const char *name, struct stat *st, bool *link)
{
	int dfd = dir_fd(dir);
	*link = false;
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(st->st_mode))
		return 0;
	*link = true;
	int fd = link_resolve(dir, name);
	if (fd < 0)
		return fd;
	int r = fstat(fd, st) < 0 ? -errno : 0;
	close(fd);
	if (r == 0 && !S_ISREG(st->st_mode))
		r = -EINVAL;
	return r;
}

int link_source_open(void *ctx, int dirfd, const char *name)
{
	struct inode *dir = ctx;
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISLNK(st.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		return fd < 0 ? -errno : fd;
	}
	int pfd = link_resolve(dir, name);
	if (pfd < 0)
		return pfd;
	/* Opened for reading only once known to be a regular file (a device
	 * or FIFO inside SOURCE is never opened). */
	int r = fstat(pfd, &st) < 0 ? -errno : 0;
	if (r == 0 && !S_ISREG(st.st_mode))
		r = -EINVAL;
	if (r == 0)
		r = src_reopen(pfd, O_RDONLY | O_NONBLOCK);
	close(pfd);
	return r;
}
