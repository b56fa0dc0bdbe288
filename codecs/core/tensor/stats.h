/* Summary statistics of a tensor's elements (`modelfs stats`): count, NaN
 * and infinity counts, min, max, mean and standard deviation, in one
 * streaming pass with flat memory. No printing here: the front end formats.
 *
 * What is counted, per dtype:
 * - integers and bool: every element; min and max are exact (imin/imax or
 *   umin/umax); mean and std in double.
 * - floats (float16/32/64): NaNs are counted in `nan` and left out of
 *   min, max, mean and std (NumPy's nanmin, nanmax, nanmean, nanstd);
 *   infinities are included: the mean is then +-inf (nan when both signs
 *   occur) and the std nan. min and max are values of the dtype (printing
 *   them with the dtype's own shortest form round-trips).
 * - complex: the statistics are of the magnitude |z| (hypot, in double); an
 *   element with a NaN part counts as NaN, one with an infinite part as inf.
 * - char8 (strings), char16/32, void and opaque types have no numeric
 *   value: mfs_stats_supported() is false and mfs_tensor_stats refuses them.
 * std is the population standard deviation (ddof 0, NumPy's default). The
 * mean and M2 are accumulated per block of elements (two passes over the
 * block in memory) and merged with Chan et al.'s pairwise update, which is
 * stable for long runs of large values.
 *
 * Sparse tensors are summarised over their dense form (the implicit zeros
 * count); a sparse tensor too large to show densely (MFS_TF_NODENSE) over its
 * stored entries plus nelem - nnz zeros.
 */
#ifndef MFS_STATS_H
#define MFS_STATS_H

#include <stdbool.h>
#include <stdint.h>

#include "dtype.h"
#include "model.h"

struct mfs_stats {
	enum mfs_dtype dtype;
	bool magnitude;       /* complex: statistics of |z| */
	bool exact;           /* integer or bool: min/max in imin/imax or umin/umax */
	bool is_signed;       /* exact and signed: imin/imax, else umin/umax */
	uint64_t count;       /* elements */
	uint64_t nan;         /* NaN elements (left out of everything below) */
	uint64_t posinf, neginf;  /* infinite elements (included) */
	uint64_t n;           /* count - nan: what min..std cover */
	int64_t imin, imax;
	uint64_t umin, umax;
	double min, max;      /* as doubles for every dtype (when n > 0) */
	double mean, std;     /* set by mfs_stats_finish; nan when n == 0 */
	/* running state over the finite values */
	uint64_t nfin;
	double fmean, m2;
};

/* Whether a dtype has values stats can summarise. */
bool mfs_stats_supported(enum mfs_dtype dt);

void mfs_stats_init(struct mfs_stats *s, enum mfs_dtype dt);
/* Add count elements of s->dtype, little-endian, packed (unaligned is fine). */
void mfs_stats_add(struct mfs_stats *s, const void *elems, uint64_t count);
/* Add count zeros (the implicit elements of a sparse tensor). */
void mfs_stats_add_zeros(struct mfs_stats *s, uint64_t count);
/* Compute mean and std from what was added (may be called again after
 * more adds). */
void mfs_stats_finish(struct mfs_stats *s);

/* Every element of t, streamed in blocks (storage order; the order does not
 * change the result beyond rounding). Returns 0 (s finished), -EINVAL for a
 * dtype with no numeric values, or -errno from reading the source, each
 * with a message. */
int mfs_tensor_stats(struct mfs_model *m, const struct mfs_tensor *t, struct mfs_stats *s,
		     struct mfs_err *err);

#endif
