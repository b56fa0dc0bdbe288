/* The holes of a sparse source file. A hole reads as zeros and holds no
 * bytes on disk: a text view whose elements all lie in one has a size known
 * without reading them (view_values.c), which is what makes stat of a
 * preallocated or sparse checkpoint's views cheap. The list belongs to one
 * generation of the file (the host finds it at open: model_open.c): any
 * change makes a new model, found again. */
#include "bisect.h"
#include "model_impl.h"

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
