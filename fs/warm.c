/* Second reads of large cached views at full speed (warm.h). */
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/sendfile.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"
#include "source.h"

#define WARM_MAX 4               /* passes at once */
#define WARM_STEP (8u << 20)     /* bytes a sendfile call moves (~1 ms) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ended = PTHREAD_COND_INITIALIZER;
static fuse_ino_t running[WARM_MAX];  /* inodes being warmed; 0: a free slot (lock) */
static atomic_bool stopped;

struct warm {
	char *path;   /* the view, relative to the mount point */
	const char *mountpoint;
	uint64_t fh;  /* the reader's open file: the pass lasts as long */
	int slot;
};

/* Whether open file fh is still open. */
static bool still_open(uint64_t fh)
{
	struct fh *h = handle_get(fh);
	if (h)
		handle_put(h);
	return h != NULL;
}

/* The pass, in a child process holding none of the daemon's descriptors
 * (no /dev/fuse among them): a process blocked on a request of its own
 * mount could never exit if the daemon died meanwhile (the request waits
 * for the daemon, the daemon's descriptor for the process), while a child
 * sees the connection end and exits. Between fork and _exit only system
 * calls (async-signal-safe). */
static void pass(const char *mountpoint, const char *path)
{
	if (close_range(3, ~0u, 0) < 0)
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
	/* every name below the mount point walked without following a link
	 * (a SOURCE directory replaced by a link meanwhile) */
	int mnt = open(mountpoint, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd = mnt < 0 ? -1 : src_open(mnt, path, O_RDONLY | O_NONBLOCK, 0);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && null >= 0) {
		off_t off = 0;
		for (;;) {
			ssize_t n = sendfile(null, fd, &off, WARM_STEP);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;  /* the end, or the view changed or went away */
		}
	}
	_exit(0);
}

/* Runs a pass and watches it: it is killed when the reader's file is
 * released (its open file would make an unmount fail) or warming stops. */
static void *warm_thread(void *arg)
{
	struct warm *w = arg;
	pid_t pid = fork();
	if (pid == 0)
		pass(w->mountpoint, w->path);
	log_msg(LOG_DEBUG, "warming %s for its second read (process %d)", w->path, (int)pid);
	if (pid > 0) {
		int status;
		struct timespec tick = {0, 2000000};
		while (waitpid(pid, &status, WNOHANG) == 0) {
			if (atomic_load(&stopped) || !still_open(w->fh)) {
				kill(pid, SIGKILL);
				while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
					;
				break;
			}
			nanosleep(&tick, NULL);
		}
	}
	log_msg(LOG_DEBUG, "warming %s ended", w->path);
	free(w->path);
	pthread_mutex_lock(&lock);
	running[w->slot] = 0;
	pthread_cond_broadcast(&ended);
	pthread_mutex_unlock(&lock);
	free(w);
	return NULL;
}

void warm_on_open(struct inode *i, uint64_t gen, uint64_t size, uint64_t fh)
{
	struct fsstate *fs = i->fs;
	/* One thread serves every request with -s: our own open would wait
	 * for it. */
	if (size < WARM_MIN_BYTES || fs->o.singlethread || atomic_load(&stopped))
		return;
	pthread_mutex_lock(&i->lock);
	bool through = i->read_gen == gen;
	pthread_mutex_unlock(&i->lock);
	if (!through)
		return;
	char rel[PATH_MAX];
	int n = inode_path(i, rel, sizeof(rel));
	struct warm *w = malloc(sizeof(*w));
	if (n < 0 || !w || !(w->path = strdup(rel))) {
		free(w);
		return;
	}
	w->fh = fh;
	w->mountpoint = fs->o.mountpoint;
	pthread_mutex_lock(&lock);
	w->slot = -1;
	bool busy = atomic_load(&stopped);
	for (int k = 0; k < WARM_MAX && !busy; k++) {
		busy = running[k] == i->ino;  /* the pass's own open, or a third */
		if (!running[k] && w->slot < 0)
			w->slot = k;
	}
	if (busy || w->slot < 0) {
		pthread_mutex_unlock(&lock);
		free(w->path);
		free(w);
		return;
	}
	running[w->slot] = i->ino;
	pthread_mutex_unlock(&lock);
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, warm_thread, w) != 0) {
		pthread_mutex_lock(&lock);
		running[w->slot] = 0;
		pthread_mutex_unlock(&lock);
		free(w->path);
		free(w);
	}
	pthread_attr_destroy(&attr);
}

/* Passes running. Caller holds lock. */
static int nrunning(void)
{
	int n = 0;
	for (int k = 0; k < WARM_MAX; k++)
		n += running[k] != 0;
	return n;
}

void warm_stop(void)
{
	atomic_store(&stopped, true);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	pthread_mutex_lock(&lock);
	while (nrunning() > 0)
		if (pthread_cond_timedwait(&ended, &lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&lock);
}
