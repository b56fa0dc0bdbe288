/* Reading members of a zip on demand, in bounded memory: a few inflate
 * states (cursors) are kept per archive, each at some position of some
 * member, so that sequential reads continue where the last one stopped and
 * threads reading different parts each keep theirs. A read takes the
 * nearest cursor at or before its offset out of the table (a copy of it
 * when it must skip ahead, so that a reader behind keeps the original),
 * inflates without the lock and puts it back; a fault in the source (a
 * truncated file) then loses only that cursor, and ends its turn.
 * Inflation never goes past the member's declared compressed or
 * uncompressed size, and the end of a member checks the stream's end, its
 * sizes and its CRC-32. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bytes.h"
#include "guard.h"
#include "zip_impl.h"

#define NCUR 4u                 /* cursors kept per archive */
#define SKIP_KEEP (4u << 20)    /* skips up to this long are kept (NSKIP of them) */
/* The longest a reader waits for a cursor another one holds before it
 * inflates on its own (a reader stuck in a slow source). */
#define WAIT_MS 250

struct cursor {
	struct zip_in in;
	uint32_t member;
	uint64_t used;     /* clock of the last use, for eviction */
};

/* Bytes a cursor inflated to skip ahead, kept for the reader behind it. */
#define NSKIP 2u
struct skip {
	uint32_t member;
	uint64_t start, len;
	uint8_t *buf;
	uint64_t used;
};

/* A cursor out of the table, inflating member `member` up to `end`: a
 * reader of a later part waits for it rather than inflating the same bytes
 * again (threads rendering alternate windows take turns with one cursor). */
#define NBUSY 16u
struct busy {
	uint32_t member;
	uint64_t end;
	uint64_t id;       /* 0: the slot is free */
};

struct mfs_zip_reader {
	const uint8_t *base;
	const struct mfs_zip *zip;
	pthread_mutex_t lock;       /* everything below */
	pthread_cond_t moved;       /* a cursor came back (or was dropped) */
	struct cursor *cur[NCUR];
	struct skip skip[NSKIP];
	struct busy busy[NBUSY];
	uint64_t clock;
};

static void cursor_free(struct cursor *c)
{
	if (!c)
		return;
	zip_in_end(&c->in);
	free(c);
}

int mfs_zip_reader_new(struct mfs_zip_reader **out, const uint8_t *base,
		       const struct mfs_zip *a)
{
	struct mfs_zip_reader *z = calloc(1, sizeof(*z));
	*out = z;
	if (!z)
		return -ENOMEM;
	z->base = base;
	z->zip = a;
	pthread_mutex_init(&z->lock, NULL);
	pthread_cond_init(&z->moved, NULL);
	return 0;
}

void mfs_zip_reader_free(struct mfs_zip_reader *z)
{
	if (!z)
		return;
	for (unsigned k = 0; k < NSKIP; k++)
		free(z->skip[k].buf);
	for (unsigned k = 0; k < NCUR; k++)
		cursor_free(z->cur[k]);
	pthread_cond_destroy(&z->moved);
	pthread_mutex_destroy(&z->lock);
	free(z);
}

static struct cursor *cursor_start(uint32_t member, struct mfs_err *err)
{
	struct cursor *c = malloc(sizeof(*c));
	if (!c) {
		mfs_error(err, ENOMEM, "out of memory (inflate)");
		return NULL;
	}
	if (zip_in_start(&c->in, err) < 0) {
		free(c);
		return NULL;
	}
	c->member = member;
	return c;
}

/* The best cursor for member i at off, taken out of the table (or a copy of
 * it when it must skip ahead), or NULL. Under z->lock. */
static struct cursor *take(struct mfs_zip_reader *z, uint32_t i, uint64_t off)
{
	unsigned best = NCUR;
	for (unsigned k = 0; k < NCUR; k++) {
		struct cursor *x = z->cur[k];
		if (x && x->member == i && x->in.pos <= off &&
		    (best == NCUR || x->in.pos > z->cur[best]->in.pos))
			best = k;
	}
	if (best == NCUR)
		return NULL;
	struct cursor *b = z->cur[best];
	if (b->in.pos < off) {
		struct cursor *c = malloc(sizeof(*c));
		if (c) {
			*c = *b;
			if (zip_in_copy(&c->in, &b->in) == 0)
				return c;
			free(c);
		}
	}
	z->cur[best] = NULL;
	return b;
}

/* Bytes [off, off + len) of member i from a kept skip, copied to out:
 * true when one holds them all. Under z->lock. */
static bool from_skip(struct mfs_zip_reader *z, uint32_t i, uint64_t off, uint64_t len, uint8_t *out)
{
	for (unsigned k = 0; k < NSKIP; k++) {
		const struct skip *s = &z->skip[k];
		if (s->buf && s->member == i && off >= s->start && off - s->start <= s->len &&
		    len <= s->len - (off - s->start)) {
			memcpy(out, s->buf + (off - s->start), (size_t)len);
			return true;
		}
	}
	return false;
}

/* ---- readers taking turns with a cursor --------------------------------- */

/* The position of the best cursor in the table for member i at off (0 when
 * there is none: a new cursor starts there). Under z->lock. */
static uint64_t best_pos(const struct mfs_zip_reader *z, uint32_t i, uint64_t off)
{
	uint64_t have = 0;
	for (unsigned k = 0; k < NCUR; k++) {
		const struct cursor *x = z->cur[k];
		if (x && x->member == i && x->in.pos <= off && x->in.pos > have)
			have = x->in.pos;
	}
	return have;
}

/* Whether a cursor out of the table will come back at or before off and
 * past have: waiting for it saves inflating [have, its end) again. Under
 * z->lock. */
static bool worth_waiting(const struct mfs_zip_reader *z, uint32_t i, uint64_t off, uint64_t have)
{
	for (unsigned k = 0; k < NBUSY; k++) {
		const struct busy *b = &z->busy[k];
		if (b->id && b->member == i && b->end <= off && b->end > have)
			return true;
	}
	return false;
}

/* Register a cursor taken out to inflate member i up to end: its id, or 0
 * when the table is full (then nobody waits for it). Under z->lock. */
static uint64_t busy_add(struct mfs_zip_reader *z, uint32_t i, uint64_t end)
{
	for (unsigned k = 0; k < NBUSY; k++) {
		if (!z->busy[k].id) {
			z->busy[k] = (struct busy){i, end, ++z->clock};
			return z->busy[k].id;
		}
	}
	return 0;
}

/* The cursor registered as id is back or gone: wake the readers waiting.
 * Under z->lock. */
static void busy_end(struct mfs_zip_reader *z, uint64_t id)
{
	for (unsigned k = 0; id && k < NBUSY; k++)
		if (z->busy[k].id == id)
			z->busy[k].id = 0;
	pthread_cond_broadcast(&z->moved);
}

static void busy_end_locking(struct mfs_zip_reader *z, uint64_t id)
{
	pthread_mutex_lock(&z->lock);
	busy_end(z, id);
	pthread_mutex_unlock(&z->lock);
}

/* Wait (a while at most) until no cursor out of the table would serve a
 * read at off better than those in it. Under z->lock; false when the read
 * is served from a kept skip meanwhile (copied to out). */
static bool wait_turn(struct mfs_zip_reader *z, uint32_t i, uint64_t off, uint64_t len, uint8_t *out)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += WAIT_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	for (;;) {
		if (from_skip(z, i, off, len, out))
			return false;
		uint64_t have = best_pos(z, i, off);
		if (have == off || !worth_waiting(z, i, off, have) ||
		    pthread_cond_timedwait(&z->moved, &z->lock, &until) == ETIMEDOUT)
			return true;
	}
}

/* Put c back, evicting the least recently used cursor if the table is full,
 * and end its turn (id). */
static void put_back(struct mfs_zip_reader *z, struct cursor *c, uint64_t id)
{
	pthread_mutex_lock(&z->lock);
	busy_end(z, id);
	unsigned slot = NCUR;
	for (unsigned k = 0; k < NCUR && slot == NCUR; k++)
		if (!z->cur[k])
			slot = k;
	if (slot == NCUR) {
		slot = 0;
		for (unsigned k = 1; k < NCUR; k++)
			if (z->cur[k]->used < z->cur[slot]->used)
				slot = k;
	}
	cursor_free(z->cur[slot]);
	c->used = ++z->clock;
	z->cur[slot] = c;
	pthread_mutex_unlock(&z->lock);
}

/* Keep what a cursor inflated to skip ahead (another reader is usually about
 * to ask for it: threads rendering alternate windows), replacing the older
 * of the kept skips. */
static void keep_skip(struct mfs_zip_reader *z, uint32_t i, uint64_t start, uint64_t len, uint8_t *buf)
{
	pthread_mutex_lock(&z->lock);
	unsigned k = z->skip[0].used <= z->skip[1].used ? 0 : 1;
	free(z->skip[k].buf);
	z->skip[k] = (struct skip){i, start, len, buf, ++z->clock};
	pthread_mutex_unlock(&z->lock);
}

/* One read's inflating: the gap to its offset (into kept, or discarded),
 * then its bytes, then the end of the member checked if reached. */
struct inflate_call {
	const uint8_t *base;
	const struct mfs_zip_member *zm;
	struct cursor *c;
	uint8_t *kept;
	uint64_t gap;
	uint8_t *out;
	uint64_t len;
	bool skipped;      /* the gap is inflated (into kept) */
	struct mfs_err *err;
};

static int run_inflate(void *arg)
{
	struct inflate_call *a = arg;
	int r = zip_in_read(a->base, a->zm, &a->c->in, a->kept, a->gap, a->err);
	a->skipped = r == 0;
	if (r == 0)
		r = zip_in_read(a->base, a->zm, &a->c->in, a->out, a->len, a->err);
	return r;
}

/* A stored member's bytes, copied under the guard (a truncated source). */
struct copy_call {
	uint8_t *out;
	const uint8_t *from;
	uint64_t len;
};

static int run_copy(void *arg)
{
	const struct copy_call *a = arg;
	memcpy(a->out, a->from, (size_t)a->len);
	return 0;
}

int mfs_zip_read_member(struct mfs_zip_reader *z, uint32_t i, uint64_t off, uint64_t len,
			uint8_t *out, struct mfs_err *err)
{
	if (i >= z->zip->n)
		return mfs_error(err, EIO, "internal error: no member %u", i);
	const struct mfs_zip_member *zm = &z->zip->mem[i];
	if (off > zm->usize || len > zm->usize - off)
		return mfs_error(err, EIO, "internal error: read beyond the member");
	if (zm->method == 0) {
		struct copy_call a = {out, z->base + zm->data_off + off, len};
		return mfs_guarded(run_copy, &a, err);
	}
	pthread_mutex_lock(&z->lock);
	if (!wait_turn(z, i, off, len, out)) {
		pthread_mutex_unlock(&z->lock);
		return 0;
	}
	struct cursor *c = take(z, i, off);
	uint64_t id = busy_add(z, i, off + len);
	pthread_mutex_unlock(&z->lock);
	if (!c && !(c = cursor_start(i, err))) {
		busy_end_locking(z, id);
		return -ENOMEM;
	}
	uint64_t gap = off - c->in.pos, from = c->in.pos;
	struct inflate_call a = {z->base, zm, c, gap && gap <= SKIP_KEEP ? malloc((size_t)gap) : NULL,
				 gap, out, len, false, err};
	/* Under a guard of its own: a fault in the source ends the turn and
	 * frees the cursor here, rather than leaving readers to wait for it. */
	int r = mfs_guarded(run_inflate, &a, err);
	if (a.kept && a.skipped)
		keep_skip(z, i, from, gap, a.kept);
	else
		free(a.kept);
	if (r < 0 || c->in.pos == zm->usize) {
		cursor_free(c);
		busy_end_locking(z, id);
		return r;
	}
	put_back(z, c, id);
	return 0;
}
