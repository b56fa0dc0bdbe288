/* Kernel cache invalidations, sent from a thread of their own: a request
 * handler must not wait for the kernel while the kernel may wait for it
 * (or only for a bounded time: notify_inval_entry_wait). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "fs.h"

struct note {
	struct note *next;
	fuse_ino_t ino;      /* inode to invalidate, or the parent of name */
	char *name;          /* NULL: inode */
	bool *done;          /* set (under lock, cond broadcast) once sent; or NULL */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct note *head, *tail;
static struct note *inflight;   /* being sent (out of the queue) */
static bool running, stopping;
static pthread_t thread;

static pthread_cond_t sent = PTHREAD_COND_INITIALIZER;

/* Queue a note; with done, wait until it was sent, at most ms. */
static void push(fuse_ino_t ino, const char *name, bool *done, int ms)
{
	struct note *n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->ino = ino;
	n->name = name ? strdup(name) : NULL;
	n->done = done;
	pthread_mutex_lock(&lock);
	if (!running) {
		pthread_mutex_unlock(&lock);
		free(n->name);
		free(n);
		return;
	}
	if (tail)
		tail->next = n;
	else
		head = n;
	tail = n;
	pthread_cond_signal(&cond);
	if (done) {
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += (long)ms * 1000000L;
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		while (!*done && running)
			if (pthread_cond_timedwait(&sent, &lock, &until) != 0)
				break;
		/* Not sent in time (or never): it no longer tells anyone. */
		for (struct note *q = head; q; q = q->next)
			if (q->done == done)
				q->done = NULL;
		if (inflight && inflight->done == done)
			inflight->done = NULL;
	}
	pthread_mutex_unlock(&lock);
}

void notify_inval_inode(fuse_ino_t ino)
{
	push(ino, NULL, NULL, 0);
}

void notify_inval_entry(fuse_ino_t parent, const char *name)
{
	push(parent, name, NULL, 0);
}

void notify_inval_entry_wait(fuse_ino_t parent, const char *name, int ms)
{
	bool done = false;
	push(parent, name, &done, ms);
}

static void *run(void *arg)
{
	struct fuse_session *se = arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!head && !stopping)
			pthread_cond_wait(&cond, &lock);
		if (!head && stopping)
			break;
		struct note *n = head;
		head = n->next;
		if (!head)
			tail = NULL;
		inflight = n;
		pthread_mutex_unlock(&lock);
		/* ENOENT just means the kernel did not cache it. */
		int r;
		if (n->name)
			r = fuse_lowlevel_notify_inval_entry(se, n->ino, n->name, strlen(n->name));
		else
			r = fuse_lowlevel_notify_inval_inode(se, n->ino, 0, 0);
		log_msg(LOG_DEBUG, "invalidate %llu%s%s: %d", (unsigned long long)n->ino,
			n->name ? "/" : "", n->name ? n->name : "", r);
		free(n->name);
		pthread_mutex_lock(&lock);
		if (n->done) {
			*n->done = true;
			pthread_cond_broadcast(&sent);
		}
		inflight = NULL;
		free(n);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int notify_start(struct fuse_session *se)
{
	pthread_mutex_lock(&lock);
	running = true;
	stopping = false;
	pthread_mutex_unlock(&lock);
	return pthread_create(&thread, NULL, run, se);
}

void notify_stop(void)
{
	pthread_mutex_lock(&lock);
	bool was = running;
	running = false;
	stopping = true;
	/* Pending notes are moot once the session ends. */
	while (head) {
		struct note *n = head;
		head = n->next;
		free(n->name);
		free(n);
	}
	tail = NULL;
	pthread_cond_signal(&cond);
	pthread_cond_broadcast(&sent);
	pthread_mutex_unlock(&lock);
	if (was)
		pthread_join(thread, NULL);
}
