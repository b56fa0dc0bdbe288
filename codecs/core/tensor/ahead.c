/* A tensor's storage read ahead of its reader by a thread of its own (see
 * ahead.h): two piece buffers used in turn, the thread filling one while
 * the reader holds the other. Each read runs under the thread's own SIGBUS
 * guard (a guard is per thread), so a source truncated under the mount
 * fails that piece, and the reader gets the error in its place. */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "ahead.h"
#include "guard.h"
#include "tensor.h"

struct mfs_ahead {
	const struct mfs_model *m;
	const struct mfs_tensor *t;
	uint64_t s0, s1, piece;
	uint8_t *buf[2];
	pthread_t th;
	pthread_mutex_t lock;   /* everything below */
	pthread_cond_t moved;
	uint64_t read;          /* pieces read */
	uint64_t taken;         /* pieces the reader asked for */
	bool stop;
	int r;                  /* the thread's error, 0 if none */
	struct mfs_err err;
};

struct read_call {
	struct mfs_ahead *a;
	uint64_t s, n;
	uint8_t *buf;
};

static int run_read(void *arg)
{
	const struct read_call *c = arg;
	return mfs_tensor_read_storage(c->a->m, c->a->t, c->s, c->n, c->buf, &c->a->err);
}

static void *reader(void *arg)
{
	struct mfs_ahead *a = arg;
	for (uint64_t k = 0, s = a->s0; s < a->s1; k++, s += a->piece) {
		pthread_mutex_lock(&a->lock);
		/* piece k goes where piece k - 2 was: wait until it is given
		 * back (the reader asked for piece k - 1) */
		while (!a->stop && k >= 2 && a->taken < k)
			pthread_cond_wait(&a->moved, &a->lock);
		bool stop = a->stop;
		pthread_mutex_unlock(&a->lock);
		if (stop)
			break;
		struct read_call c = {a, s, a->s1 - s < a->piece ? a->s1 - s : a->piece, a->buf[k & 1]};
		int r = mfs_guarded(run_read, &c, &a->err);
		pthread_mutex_lock(&a->lock);
		if (r < 0)
			a->r = r;
		else
			a->read = k + 1;
		pthread_cond_broadcast(&a->moved);
		pthread_mutex_unlock(&a->lock);
		if (r < 0)
			break;
	}
	return NULL;
}

struct mfs_ahead *mfs_ahead_start(const struct mfs_model *m, const struct mfs_tensor *t,
				  uint64_t s0, uint64_t s1, uint64_t piece)
{
	struct mfs_ahead *a = calloc(1, sizeof(*a));
	if (!a)
		return NULL;
	*a = (struct mfs_ahead){.m = m, .t = t, .s0 = s0, .s1 = s1, .piece = piece};
	a->buf[0] = malloc((size_t)(piece * t->esize));
	a->buf[1] = malloc((size_t)(piece * t->esize));
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->moved, NULL);
	if (!a->buf[0] || !a->buf[1] || pthread_create(&a->th, NULL, reader, a) != 0) {
		pthread_cond_destroy(&a->moved);
		pthread_mutex_destroy(&a->lock);
		free(a->buf[0]);
		free(a->buf[1]);
		free(a);
		return NULL;
	}
	return a;
}

const uint8_t *mfs_ahead_next(struct mfs_ahead *a, uint64_t *n, int *r, struct mfs_err *err)
{
	pthread_mutex_lock(&a->lock);
	uint64_t k = a->taken++;
	pthread_cond_broadcast(&a->moved);  /* piece k - 1 is given back */
	while (a->read <= k && !a->r)
		pthread_cond_wait(&a->moved, &a->lock);
	bool have = a->read > k;  /* (an error after piece k waits for its turn) */
	*r = have ? 0 : a->r;
	if (!have && err)
		*err = a->err;
	pthread_mutex_unlock(&a->lock);
	if (!have)
		return NULL;
	uint64_t s = a->s0 + k * a->piece;
	*n = a->s1 - s < a->piece ? a->s1 - s : a->piece;
	return a->buf[k & 1];
}

void mfs_ahead_stop(struct mfs_ahead *a)
{
	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_broadcast(&a->moved);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->th, NULL);
	pthread_cond_destroy(&a->moved);
	pthread_mutex_destroy(&a->lock);
	free(a->buf[0]);
	free(a->buf[1]);
	free(a);
}
