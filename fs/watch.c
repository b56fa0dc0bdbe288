/* Changes to SOURCE made outside the mount (a training run saving a new
 * checkpoint): inotify on every source directory the kernel has looked
 * into; models reparse on next access and kernel caches are dropped. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

#include "codec.h"
#include "commit.h"
#include "model_fs.h"

struct wdir {
	int wd;
	struct inode *dir;   /* counted reference */
	struct wdir *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct wdir *dirs;
static pthread_t thread;
static int stop_pipe[2] = {-1, -1};

/* Not IN_DONT_FOLLOW: the path is /proc/self/fd/N, a link to the directory. */
#define EVENTS (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE | \
		IN_MODIFY | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | \
		IN_ONLYDIR)

void watch_dir(struct inode *dir)
{
	struct fsstate *fs = dir->fs;
	if (fs->inotify_fd < 0 || dir->watched)
		return;
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", dir_fd(dir));
	int wd = inotify_add_watch(fs->inotify_fd, path, EVENTS);
	if (wd < 0)
		return;  /* over the watch limit: entries still time out */
	struct wdir *w = calloc(1, sizeof(*w));
	if (!w)
		return;
	w->wd = wd;
	w->dir = inode_get(fs, dir->ino);
	dir->watched = true;
	pthread_mutex_lock(&lock);
	w->next = dirs;
	dirs = w;
	pthread_mutex_unlock(&lock);
}

struct event_arg {
	const char *name;
	size_t len;
	struct inode *models[64];   /* held (+1 ref): a FORGET may come meanwhile */
	size_t nmodels;
	fuse_ino_t files[64];
	size_t nfiles;
};

/* Which children of the directory the event concerns: the entry itself,
 * and a model whose sidecar it is (name = model name + codec suffix). */
static void match(struct inode *i, void *arg)
{
	struct event_arg *a = arg;
	size_t nl = strlen(i->name);
	bool self = strcmp(i->name, a->name) == 0;
	bool sidecar = false;
	if (!self && i->kind == I_MODEL && i->fm && a->len > nl &&
	    strncmp(a->name, i->name, nl) == 0) {
		pthread_mutex_lock(&i->fm->lock);  /* order: fs->lock, then a model's lock */
		const char *suf = i->fm->sidecar;
		pthread_mutex_unlock(&i->fm->lock);
		sidecar = suf && strcmp(a->name + nl, suf) == 0;
	}
	if (!self && !sidecar)
		return;
	if (i->kind == I_MODEL && i->fm) {
		if (a->nmodels < 64) {
			i->refs++;  /* under fs->lock, as inode_get does */
			a->models[a->nmodels++] = i;
		}
	} else if (a->nfiles < 64) {
		a->files[a->nfiles++] = i->ino;
	}
}

static void handle(struct inode *dir, const struct inotify_event *ev)
{
	if (!ev->len || mfs_private_name(ev->name))
		return;
	struct event_arg a = {.name = ev->name, .len = strlen(ev->name)};
	inode_foreach_in(dir, match, &a);
	for (size_t k = 0; k < a.nmodels; k++) {
		fsmodel_check(a.models[k]->fm);
		inode_put(a.models[k]);
	}
	for (size_t k = 0; k < a.nfiles; k++)
		notify_inval_inode(a.files[k]);
	/* New, gone or renamed names: the kernel must look them up again. */
	if (ev->mask & (IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE))
		notify_inval_entry(dir->ino, ev->name);
}

static void *run(void *arg)
{
	struct fsstate *fs = arg;
	_Alignas(struct inotify_event) char buf[64 * 1024];
	struct pollfd p[2] = {{fs->inotify_fd, POLLIN, 0}, {stop_pipe[0], POLLIN, 0}};
	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		ssize_t n = read(fs->inotify_fd, buf, sizeof(buf));
		if (n <= 0)
			continue;
		for (char *q = buf; q < buf + n;) {
			const struct inotify_event *ev = (const void *)q;
			q += sizeof(*ev) + ev->len;
			pthread_mutex_lock(&lock);
			struct inode *dir = NULL;
			for (struct wdir *w = dirs; w; w = w->next)
				if (w->wd == ev->wd)
					dir = inode_get(fs, w->dir->ino);
			pthread_mutex_unlock(&lock);
			if (dir) {
				handle(dir, ev);
				inode_put(dir);
			}
		}
	}
	return NULL;
}

int watch_start(struct fsstate *fs)
{
	fs->inotify_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
	if (fs->inotify_fd < 0 || pipe(stop_pipe) < 0)
		return -errno;
	return pthread_create(&thread, NULL, run, fs) ? -EAGAIN : 0;
}

void watch_stop(struct fsstate *fs)
{
	if (stop_pipe[1] < 0)
		return;
	ssize_t w = write(stop_pipe[1], "x", 1);
	(void)w;
	pthread_join(thread, NULL);
	pthread_mutex_lock(&lock);
	while (dirs) {
		struct wdir *d = dirs;
		dirs = d->next;
		inode_put(d->dir);
		free(d);
	}
	pthread_mutex_unlock(&lock);
	close(stop_pipe[0]);
	close(stop_pipe[1]);
	close(fs->inotify_fd);
}
