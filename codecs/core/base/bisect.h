/* Binary search over a sorted sequence told by a predicate: the one loop
 * that the "first position >= key" and "last start <= offset" searches of
 * the codecs and views share. */
#ifndef MFS_BISECT_H
#define MFS_BISECT_H

#include <stdbool.h>
#include <stdint.h>

/* below(ctx, i) holds for a prefix of [0, n) and fails after it: returns
 * that prefix's length (the first i where it fails, n if none). So the first
 * element >= key is mfs_partition(n, "elem[i] < key"), and the last element
 * <= key is mfs_partition(n, "elem[i] <= key") - 1. */
static inline uint64_t mfs_partition(uint64_t n, bool (*below)(const void *ctx, uint64_t i),
				     const void *ctx)
{
	uint64_t lo = 0, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (below(ctx, mid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

#endif
