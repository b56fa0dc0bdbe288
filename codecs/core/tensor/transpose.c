/* Column-major matrices read in row-major order: a tiled transpose, and
 * bands of whole rows transposed once and shared by a model's threads (a
 * window of text is a few rows of a wide matrix, and reading so few rows
 * alone takes a few bytes of every column's cache line and page). Called
 * inside mfs_guarded(). */
#include <stdlib.h>
#include <string.h>

#include "bands.h"
#include "model_impl.h"
#include "tensor.h"

#define BAND_ROWS 32u           /* a band's rows at most (its bytes: bands.c) */

/* out = the transpose of in: in has `rows` rows of `cols` elements of es
 * bytes, is elements apart; out gets `cols` rows of `rows` elements, os
 * apart. In tiles of 16 x 16: each tile's rows of in are copied whole into
 * a local block, and each row of out is written whole from it, so that
 * every cache line is read once and written once even when both strides
 * are powers of two (which map a naive tile's lines onto a few cache sets). */
#define TILE 16

#define DEFINE_TRANSPOSE(NAME, TYPE)						\
static void NAME(const uint8_t *in, uint64_t is, uint8_t *out, uint64_t os,	\
		 uint64_t rows, uint64_t cols)					\
{										\
	enum { ES = sizeof(TYPE) };						\
	TYPE tile[TILE][TILE], line[TILE];					\
	if (cols == 1) {  /* a strided gather: part of one logical row */	\
		for (uint64_t i = 0; i < rows; i++)				\
			memcpy(out + i * ES, in + i * is * ES, ES);		\
		return;								\
	}									\
	for (uint64_t i0 = 0; i0 < rows; i0 += TILE) {				\
		uint64_t ni = rows - i0 < TILE ? rows - i0 : TILE;		\
		for (uint64_t j0 = 0; j0 < cols; j0 += TILE) {			\
			uint64_t nj = cols - j0 < TILE ? cols - j0 : TILE;	\
			const uint8_t *ip = in + (i0 * is + j0) * ES;		\
			uint8_t *op = out + (j0 * os + i0) * ES;		\
			if (ni == TILE && nj == TILE) {				\
				for (int i = 0; i < TILE; i++)			\
					memcpy(tile[i], ip + i * is * ES, TILE * ES); \
				for (int j = 0; j < TILE; j++) {		\
					for (int i = 0; i < TILE; i++)		\
						line[i] = tile[i][j];		\
					memcpy(op + j * os * ES, line, TILE * ES); \
				}						\
				continue;					\
			}							\
			/* An edge tile: element by element, each row of in	\
			 * read once (a loop contiguous on both sides would	\
			 * become a memcpy call per row, slow for a few). */	\
			for (uint64_t i = 0; i < ni; i++)			\
				for (uint64_t j = 0; j < nj; j++)		\
					memcpy(op + (j * os + i) * ES,		\
					       ip + (i * is + j) * ES, ES);	\
		}								\
	}									\
}

DEFINE_TRANSPOSE(transpose4, uint32_t)
DEFINE_TRANSPOSE(transpose8, uint64_t)

void mfs_transpose(const uint8_t *in, uint64_t is, uint8_t *out, uint64_t os, uint64_t rows,
		      uint64_t cols, unsigned es)
{
	if (es == 4) {
		transpose4(in, is, out, os, rows, cols);
	} else if (es == 8) {
		transpose8(in, is, out, os, rows, cols);
	} else {
		for (uint64_t i = 0; i < rows; i++)
			for (uint64_t j = 0; j < cols; j++)
				memcpy(out + (j * os + i) * es, in + (i * is + j) * es, es);
	}
}

/* Logical rows [r0, r1) x columns [c0, c1) of the column-major R-row matrix
 * at src, row-major into out (rows of c1 - c0 elements). The storage is the
 * row-major C x R transpose: its rows [c0, c1), columns [r0, r1). */
static void rows_of_colmajor(const uint8_t *src, uint64_t R, uint64_t r0, uint64_t r1, uint64_t c0,
			     uint64_t c1, unsigned es, uint8_t *out)
{
	mfs_transpose(src + (c0 * R + r0) * es, R, out, c1 - c0, c1 - c0, r1 - r0, es);
}

/* Serve [first, first + count) (rows ra..) from a band of nr rows from ra,
 * transposing it if no band holds them. False when no slot is free (every
 * one being filled) or memory is short: the caller reads directly. */
static bool from_band(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t ra,
		      uint64_t nr, uint64_t first, uint64_t count, uint8_t *out)
{
	struct mfs_bands *bs = m->impl->bands;
	uint64_t R = t->dims[0], C = t->dims[1];
	pthread_mutex_lock(&bs->lock);
	struct mfs_band *v = mfs_band_find(bs, t, first, count, false);
	if (v) {
		mfs_band_copy(bs, v, first, count, out);
		pthread_mutex_unlock(&bs->lock);
		return true;
	}
	v = mfs_band_slot(bs, false);
	if (!v || mfs_band_take(v, t, ra * C, (ra + nr) * C) < 0) {
		pthread_mutex_unlock(&bs->lock);
		return false;
	}
	/* Filled outside the lock; if the source faults on the way (a file
	 * truncated under the mapping), the slot stays out of use. */
	pthread_mutex_unlock(&bs->lock);
	rows_of_colmajor(m->base + t->off, R, ra, ra + nr, 0, C, t->esize, v->buf);
	pthread_mutex_lock(&bs->lock);
	mfs_band_filled(bs, v, true);
	mfs_band_copy(bs, v, first, count, out);
	pthread_mutex_unlock(&bs->lock);
	return true;
}

void mfs_colmajor_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			 uint64_t count, uint8_t *o)
{
	const uint8_t *src = m->base + t->off;
	unsigned es = t->esize;
	uint64_t R = t->dims[0], C = t->dims[1];
	uint64_t end = first + count, ra = first / C, rb = (end - 1) / C;
	uint64_t band_bytes = m->impl->bands->band_bytes;
	if (C * es <= band_bytes) {
		/* A band when it holds at least two such requests. */
		uint64_t nr = band_bytes / (C * es);
		if (nr > BAND_ROWS)
			nr = BAND_ROWS;
		if (nr > R - ra)
			nr = R - ra;
		if ((rb - ra + 1) * 2 <= nr && from_band(m, t, ra, nr, first, count, o))
			return;
	}
	if ((first % C || end % C) && (rb - ra + 1) * C <= 4 * count) {
		/* Rows cut at either end: transpose them whole, aside. */
		uint8_t *rows = malloc((size_t)((rb - ra + 1) * C * es));
		if (rows) {
			rows_of_colmajor(src, R, ra, rb + 1, 0, C, es, rows);
			memcpy(o, rows + (first - ra * C) * es, (size_t)(count * es));
			free(rows);
			return;
		}
	}
	/* Partial first row, whole rows, partial last row. */
	uint64_t i = first;
	if (i % C) {
		uint64_t c1 = ra == rb ? (end - 1) % C + 1 : C;
		rows_of_colmajor(src, R, ra, ra + 1, i % C, c1, es, o);
		o += (c1 - i % C) * es;
		i += c1 - i % C;
	}
	uint64_t r0 = i / C, r1 = end / C;
	if (r1 > r0) {
		rows_of_colmajor(src, R, r0, r1, 0, C, es, o);
		o += (r1 - r0) * C * es;
		i = r1 * C;
	}
	if (i < end)
		rows_of_colmajor(src, R, i / C, i / C + 1, 0, end - i, es, o);
}
