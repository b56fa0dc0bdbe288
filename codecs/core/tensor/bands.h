/* Bands: a few ranges of one model's tensor elements in logical order, each
 * filled once by one thread and copied out by any, under the set's lock.
 * One type for both of a model's caches, whose rules differ (bands.c):
 * transposed rows of column-major matrices (transpose.c) and bands over a
 * stream in custom storage (colstream.c). The slots, their keys, use ticks
 * and buffers are here; when to fill, wait and free is each user's own. */
#ifndef MFS_BANDS_H
#define MFS_BANDS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

#define MFS_NBANDS 2

struct mfs_band {
	const struct mfs_tensor *t;
	uint64_t lo, hi;            /* logical elements [lo, hi), in order in buf */
	uint64_t used;              /* tick of the last use */
	uint64_t served;            /* elements copied out of it */
	bool filling, ready;
	uint8_t *buf;
	size_t cap;
};

struct mfs_bands {
	pthread_mutex_t lock;
	pthread_cond_t done;        /* a band is filled, or failed */
	struct mfs_band b[MFS_NBANDS];
	uint64_t tick;
	uint64_t band_bytes;        /* a band's size at most, and */
	uint64_t piece_bytes;       /* the storage read at a time (tests make both small) */
};

/* The functions below are called under bs->lock. */

/* The band of t holding elements [first, first + n): a ready one, or with
 * filling one being filled too; NULL if none. */
struct mfs_band *mfs_band_find(struct mfs_bands *bs, const struct mfs_tensor *t, uint64_t first,
			       uint64_t n, bool filling);
/* The least recently used band not being filled (and, if spare, not
 * ready either), or NULL. */
struct mfs_band *mfs_band_slot(struct mfs_bands *bs, bool spare);
/* b becomes elements [lo, hi) of t, being filled, with a buffer that holds
 * them. 0, or -ENOMEM with b left empty. */
int mfs_band_take(struct mfs_band *b, const struct mfs_tensor *t, uint64_t lo, uint64_t hi);
/* b's fill is over: ready when ok, used now. */
void mfs_band_filled(struct mfs_bands *bs, struct mfs_band *b, bool ok);
/* Copy elements [first, first + n) of the ready band b (all in it) to out;
 * used now, the n counted as served. */
void mfs_band_copy(struct mfs_bands *bs, struct mfs_band *b, uint64_t first, uint64_t n,
		   uint8_t *out);
/* Free b's buffer and key, keeping its use tick. */
void mfs_band_clear(struct mfs_band *b);

#endif
