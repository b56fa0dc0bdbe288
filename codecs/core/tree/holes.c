/* The holes of a sparse source file. A hole reads as zeros and holds no
 * bytes on disk: a text view whose elements all lie in one has a size known
 * without reading them (view_values.c), which is what makes stat of a
 * preallocated or sparse checkpoint's views cheap. The list belongs to one
 * generation of the file: any change makes a new model, found again. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "bisect.h"
#include "buf.h"
#include "model_impl.h"

static int add_hole(struct mfs_model_impl *im, size_t *cap, uint64_t a, uint64_t b)
{
	if (b - a < MFS_HOLE_MIN)
		return 0;
	if (MFS_ARRAY_RESERVE(im->holes, im->nholes, *cap, 1, 16) < 0)
		return -ENOMEM;
	im->holes[im->nholes++] = (struct mfs_hole){a, b};
	return 0;
}

void mfs_holes_find(struct mfs_model *m, int fd)
{
	struct mfs_model_impl *im = m->impl;
	size_t cap = 0;
	uint64_t pos = 0;
	while (pos < m->size && im->nholes < MFS_HOLES_MAX) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		uint64_t data = d < 0 ? m->size : (uint64_t)d;
		if (d < 0 && errno != ENXIO)
			break;  /* not told: no more holes known */
		if (data > m->size)
			data = m->size;
		if (data > pos && add_hole(im, &cap, pos, data) < 0)
			break;
		if (data >= m->size)
			break;
		off_t h = lseek(fd, (off_t)data, SEEK_HOLE);
		if (h < 0 || (uint64_t)h <= data)
			break;
		pos = (uint64_t)h;
	}
}

struct hole_key {
	const struct mfs_hole *holes;
	uint64_t off;
};

static bool starts_at_or_before(const void *ctx, uint64_t i)
{
	const struct hole_key *k = ctx;
	return k->holes[i].start <= k->off;
}

bool mfs_model_in_hole(const struct mfs_model *m, uint64_t off, uint64_t len)
{
	const struct mfs_model_impl *im = m->impl;
	if (!im->nholes || len == 0 || off + len < off)
		return false;
	struct hole_key k = {im->holes, off};
	uint64_t i = mfs_partition(im->nholes, starts_at_or_before, &k);
	return i > 0 && off + len <= im->holes[i - 1].end;
}

bool mfs_model_meets_hole(const struct mfs_model *m, uint64_t off, uint64_t len)
{
	const struct mfs_model_impl *im = m->impl;
	if (!im->nholes || len == 0 || off + len < off)
		return false;
	struct hole_key k = {im->holes, off + len - 1};
	uint64_t i = mfs_partition(im->nholes, starts_at_or_before, &k);
	return i > 0 && im->holes[i - 1].end > off;
}
