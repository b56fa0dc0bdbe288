/* Kernel cache invalidations, sent from a thread of their own: a request
 * handler must not wait for the kernel while the kernel may wait for it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>

#include "fs.h"

struct note {
	struct note *next;
	fuse_ino_t ino;      /* inode to invalidate, or the parent of name */
	char *name;          /* NULL: inode */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct note *head, *tail;
static bool running, stopping;
static pthread_t thread;

static void push(fuse_ino_t ino, const char *name)
{
	struct note *n = calloc(1, sizeof(*n));
	if (!n)
		return;
	n->ino = ino;
	n->name = name ? strdup(name) : NULL;
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
	pthread_mutex_unlock(&lock);
}

void notify_inval_inode(fuse_ino_t ino)
{
	push(ino, NULL);
}

void notify_inval_entry(fuse_ino_t parent, const char *name)
{
	push(parent, name);
}

static void *run(void *arg)
{
	(void)arg;
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
		pthread_mutex_unlock(&lock);
		/* ENOENT just means the kernel did not cache it. */
		int r;
		if (n->name)
			r = fuse_lowlevel_notify_inval_entry(fs.se, n->ino, n->name, strlen(n->name));
		else
			r = fuse_lowlevel_notify_inval_inode(fs.se, n->ino, 0, 0);
		log_msg(LOG_DEBUG, "invalidate %llu%s%s: %d", (unsigned long long)n->ino,
			n->name ? "/" : "", n->name ? n->name : "", r);
		free(n->name);
		free(n);
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

int notify_start(void)
{
	pthread_mutex_lock(&lock);
	running = true;
	stopping = false;
	pthread_mutex_unlock(&lock);
	return pthread_create(&thread, NULL, run, NULL);
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
	pthread_mutex_unlock(&lock);
	if (was)
		pthread_join(thread, NULL);
}
