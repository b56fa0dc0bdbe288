/* A model's two band caches (bands.h), made with the model.
 *
 * Their rules, side by side (why one type serves both but the policies stay
 * with each user):
 *
 *                   transposes (transpose.c)         streams (colstream.c)
 *   tensors         2-D column-major, raw storage    column-major, custom storage
 *                                                    (a compressed stream)
 *   a band          whole rows from the first asked, logical elements on a fixed
 *                   at most 1 MiB and 32 rows        grid, at most 64 MiB
 *   a hit           the whole request in one band    any part; copied band by band
 *   being filled    read straight from the mapping   wait for it: reading the
 *                   (as cheap as the fill)           stream again costs a pass
 *   a fill          the one band asked for           that band and the next, if a
 *                                                    slot is free
 *   a fault         inside the reader's guard: the   under the pass's own guard:
 *                   slot stays filling (unused)      the band fails, waiters go on
 *   the buffer      kept for the next band           freed once all its elements
 *                                                    were served */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "model_impl.h"
#include "tensor.h"

#define TRANSPOSE_BAND_BYTES (1u << 20)  /* a band's size, when its rows allow */
#define STREAM_BAND_BYTES (64u << 20)    /* a band's size at most: size / this passes */
#define STREAM_PIECE_BYTES (4u << 20)    /* storage read at a time in a pass */

static struct mfs_bands *bands_new(uint64_t band_bytes, uint64_t piece_bytes)
{
	struct mfs_bands *bs = calloc(1, sizeof(*bs));
	if (!bs)
		return NULL;
	pthread_mutex_init(&bs->lock, NULL);
	pthread_cond_init(&bs->done, NULL);
	bs->band_bytes = band_bytes;
	bs->piece_bytes = piece_bytes;
	return bs;
}

static void bands_free(struct mfs_bands *bs)
{
	if (!bs)
		return;
	for (int i = 0; i < MFS_NBANDS; i++)
		free(bs->b[i].buf);
	pthread_cond_destroy(&bs->done);
	pthread_mutex_destroy(&bs->lock);
	free(bs);
}

int mfs_tensor_bands_init(struct mfs_model *m)
{
	struct mfs_model_impl *im = m->impl;
	im->bands = bands_new(TRANSPOSE_BAND_BYTES, 0);
	im->sbands = bands_new(STREAM_BAND_BYTES, STREAM_PIECE_BYTES);
	return im->bands && im->sbands ? 0 : -ENOMEM;
}

void mfs_tensor_bands_free(struct mfs_model *m)
{
	bands_free(m->impl->bands);
	bands_free(m->impl->sbands);
	m->impl->bands = m->impl->sbands = NULL;
}

struct mfs_band *mfs_band_find(struct mfs_bands *bs, const struct mfs_tensor *t, uint64_t first,
			       uint64_t n, bool filling)
{
	for (int i = 0; i < MFS_NBANDS; i++) {
		struct mfs_band *b = &bs->b[i];
		if (b->t == t && (b->ready || (filling && b->filling)) && first >= b->lo &&
		    first < b->hi && n <= b->hi - first)
			return b;
	}
	return NULL;
}

struct mfs_band *mfs_band_slot(struct mfs_bands *bs, bool spare)
{
	struct mfs_band *v = NULL;
	for (int i = 0; i < MFS_NBANDS; i++) {
		struct mfs_band *b = &bs->b[i];
		if (!b->filling && !(spare && b->ready) && (!v || b->used < v->used))
			v = b;
	}
	return v;
}

int mfs_band_take(struct mfs_band *b, const struct mfs_tensor *t, uint64_t lo, uint64_t hi)
{
	size_t need = (size_t)((hi - lo) * t->esize);
	if (need > b->cap) {
		mfs_band_clear(b);
		if (!(b->buf = malloc(need)))
			return -ENOMEM;
		b->cap = need;
	}
	*b = (struct mfs_band){.t = t, .lo = lo, .hi = hi, .filling = true, .buf = b->buf,
			       .cap = b->cap};
	return 0;
}

void mfs_band_filled(struct mfs_bands *bs, struct mfs_band *b, bool ok)
{
	b->filling = false;
	b->ready = ok;
	b->used = ++bs->tick;
}

void mfs_band_copy(struct mfs_bands *bs, struct mfs_band *b, uint64_t first, uint64_t n,
		   uint8_t *out)
{
	size_t es = b->t->esize;
	memcpy(out, b->buf + (first - b->lo) * es, (size_t)n * es);
	b->used = ++bs->tick;
	b->served += n;
}

void mfs_band_clear(struct mfs_band *b)
{
	free(b->buf);
	*b = (struct mfs_band){.used = b->used};
}
