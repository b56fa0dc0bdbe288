/* Worker threads for rendering ahead (see pool.h): started on first use,
 * one per CPU, living as long as the process; and threads started for one
 * pass and joined at its end (mfs_fan_out). */
#include <errno.h>
#include <sched.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "pool.h"

struct job {
	void (*fn)(void *);
	void *arg;
	struct job *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static struct job *head, *tail;
static unsigned nthreads;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		while (!head)
			pthread_cond_wait(&cond, &lock);
		struct job *j = head;
		head = j->next;
		if (!head)
			tail = NULL;
		pthread_mutex_unlock(&lock);
		j->fn(j->arg);
		free(j);
		pthread_mutex_lock(&lock);
	}
	return NULL;
}

unsigned mfs_ncpu(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (unsigned)n : 1;
}

static void start(void)
{
	unsigned n = mfs_ncpu(), want = n > 16 ? 16 : n;
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (unsigned i = 0; i < want; i++) {
		pthread_t t;
		if (pthread_create(&t, &attr, worker, NULL) == 0)
			nthreads++;
	}
	pthread_attr_destroy(&attr);
}

unsigned mfs_pool_size(void)
{
	pthread_once(&once, start);
	return nthreads;
}

int mfs_pool_submit(void (*fn)(void *arg), void *arg)
{
	if (mfs_pool_size() == 0)
		return -EAGAIN;
	struct job *j = malloc(sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->fn = fn;
	j->arg = arg;
	j->next = NULL;
	pthread_mutex_lock(&lock);
	if (tail)
		tail->next = j;
	else
		head = j;
	tail = j;
	pthread_cond_signal(&cond);
	pthread_mutex_unlock(&lock);
	return 0;
}

unsigned mfs_fan_out(unsigned n, void *(*fn)(void *arg), void *args, size_t size)
{
	enum { MAX = 16 };
	pthread_t th[MAX];
	char *a = args;
	unsigned started = 1;
	if (n > MAX)
		n = MAX;
	for (unsigned i = 1; i < n; i++) {
		if (pthread_create(&th[i], NULL, fn, a + (size_t)i * size) != 0)
			break;
		started = i + 1;
	}
	fn(a);  /* this thread works too */
	for (unsigned i = 1; i < started; i++)
		pthread_join(th[i], NULL);
	return started;
}
