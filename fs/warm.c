/* Second reads of large cached views at full speed (warm.h). */
#include "warm.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/sendfile.h>
#include <time.h>
#include <unistd.h>

#include "handle.h"

#define WARM_MAX 4               /* passes at once */
#define WARM_STEP (8u << 20)     /* bytes a sendfile call moves (~1 ms) */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ended = PTHREAD_COND_INITIALIZER;
static fuse_ino_t running[WARM_MAX];  /* inodes being warmed; 0: a free slot (lock) */
static int nrunning;                  /* (lock) */
static atomic_bool stopped;

struct warm {
	char *path;   /* the view in the mount */
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

void warm_read_through(struct inode *i, uint64_t gen)
{
	i->read_gen = gen;
}

static void *warm_thread(void *arg)
{
	struct warm *w = arg;
	int fd = open(w->path, O_RDONLY | O_CLOEXEC);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && null >= 0) {
		off_t off = 0;
		while (!atomic_load(&stopped) && still_open(w->fh)) {
			ssize_t n = sendfile(null, fd, &off, WARM_STEP);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;  /* the end, or the view changed or went away */
		}
	}
	if (fd >= 0)
		close(fd);
	if (null >= 0)
		close(null);
	free(w->path);
	pthread_mutex_lock(&lock);
	running[w->slot] = 0;
	nrunning--;
	pthread_cond_broadcast(&ended);
	pthread_mutex_unlock(&lock);
	free(w);
	return NULL;
}

void warm_on_open(struct inode *i, uint64_t gen, uint64_t size, uint64_t fh)
{
	/* One thread serves every request with -s: our own open would wait
	 * for it. */
	if (size < WARM_MIN_BYTES || fs.o.singlethread || atomic_load(&stopped))
		return;
	pthread_mutex_lock(&i->lock);
	bool through = i->read_gen == gen;
	pthread_mutex_unlock(&i->lock);
	if (!through)
		return;
	char rel[PATH_MAX];
	int n = inode_path(i, rel, sizeof(rel));
	struct warm *w = malloc(sizeof(*w));
	if (n < 0 || !w || asprintf(&w->path, "%s/%s", fs.o.mountpoint, rel) < 0) {
		free(w);
		return;
	}
	w->fh = fh;
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
	nrunning++;
	pthread_mutex_unlock(&lock);
	pthread_attr_t attr;
	pthread_t t;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, warm_thread, w) != 0) {
		pthread_mutex_lock(&lock);
		running[w->slot] = 0;
		nrunning--;
		pthread_mutex_unlock(&lock);
		free(w->path);
		free(w);
	}
	pthread_attr_destroy(&attr);
}

void warm_stop(void)
{
	atomic_store(&stopped, true);
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	pthread_mutex_lock(&lock);
	while (nrunning > 0)
		if (pthread_cond_timedwait(&ended, &lock, &until) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&lock);
}
