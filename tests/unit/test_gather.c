/* Unit tests of codecs/core/gather.c: storage-order elements and bytes of an
 * array held in the reversed-axes order, for ranks 2 to 5 and element sizes
 * 1 to 16, at random ranges (cut rows, whole rows, single elements, cut
 * elements), against the index arithmetic done element by element here;
 * and gathered patch spans read back through mfs_patch_read. */
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

/* Offset in g->in of the storage element s, computed directly: the
 * storage multi-index of s, read with the reversed dims' row-major strides. */
static uint64_t in_index(const struct mfs_gather *g, uint64_t s)
{
	uint64_t at = 0, stride = 1;
	uint64_t idx[MFS_GATHER_MAX_DIMS];
	for (uint32_t k = g->ndim; k-- > 0;) {
		idx[k] = s % g->dims[k];
		s /= g->dims[k];
	}
	for (uint32_t k = 0; k < g->ndim; k++) {
		at += idx[k] * stride;
		stride *= g->dims[k];
	}
	return at;
}

/* An array of the given dims and element size filled with random bytes. */
static struct mfs_gather make(uint32_t nd, const uint64_t *dims, unsigned es, uint64_t *seed,
			      uint64_t *nelem)
{
	struct mfs_gather g = {.esize = es, .ndim = nd};
	uint64_t n = 1;
	for (uint32_t k = 0; k < nd; k++) {
		g.dims[k] = dims[k];
		n *= dims[k];
	}
	uint8_t *in = malloc((size_t)(n * es));
	assert_non_null(in);
	for (uint64_t i = 0; i < n * es; i++)
		in[i] = (uint8_t)trand(seed);
	g.in = in;
	*nelem = n;
	return g;
}

static void check_range(const struct mfs_gather *g, uint64_t first, uint64_t n)
{
	unsigned es = g->esize;
	uint8_t *out = malloc((size_t)(n * es) + 1);
	assert_non_null(out);
	mfs_gather_elems(g, first, n, out);
	for (uint64_t i = 0; i < n; i++)
		if (memcmp(out + i * es, g->in + in_index(g, first + i) * es, es) != 0)
			fail_msg("rank %u, es %u: element %llu of [%llu, +%llu) differs", g->ndim, es,
				 (unsigned long long)(first + i), (unsigned long long)first,
				 (unsigned long long)n);
	free(out);
}

static void check_bytes(const struct mfs_gather *g, uint64_t off, uint64_t len)
{
	unsigned es = g->esize;
	uint8_t *out = malloc((size_t)len + 1);
	assert_non_null(out);
	mfs_gather_bytes(g, off, len, out);
	for (uint64_t i = 0; i < len; i++) {
		uint64_t b = off + i;
		if (out[i] != g->in[in_index(g, b / es) * es + b % es])
			fail_msg("rank %u, es %u: byte %llu of [%llu, +%llu) differs", g->ndim, es,
				 (unsigned long long)b, (unsigned long long)off,
				 (unsigned long long)len);
	}
	free(out);
}

static void ranges(void **state)
{
	(void)state;
	static const uint64_t shapes[][5] = {
		{3, 5}, {1, 7}, {7, 1}, {64, 33}, {17, 16}, {130, 3},
		{2, 3, 4}, {5, 1, 6}, {2, 3, 2, 3}, {2, 2, 3, 2, 2},
	};
	static const uint32_t ranks[] = {2, 2, 2, 2, 2, 2, 3, 3, 4, 5};
	static const unsigned sizes[] = {1, 2, 4, 8, 16};
	uint64_t seed = 17;
	for (size_t s = 0; s < sizeof(ranks) / sizeof(ranks[0]); s++) {
		for (size_t e = 0; e < sizeof(sizes) / sizeof(sizes[0]); e++) {
			uint64_t n;
			struct mfs_gather g = make(ranks[s], shapes[s], sizes[e], &seed, &n);
			check_range(&g, 0, n);
			for (int t = 0; t < 40; t++) {
				uint64_t first = trand(&seed) % n;
				check_range(&g, first, 1 + trand(&seed) % (n - first));
				uint64_t off = trand(&seed) % (n * g.esize);
				check_bytes(&g, off, 1 + trand(&seed) % (n * g.esize - off));
			}
			free((void *)g.in);
		}
	}
}

/* A patch with a gathered span reads as the gathered bytes in place. */
static void gathered_span(void **state)
{
	(void)state;
	uint64_t seed = 5, n, dims[2] = {6, 4};
	struct mfs_gather g = make(2, dims, 4, &seed, &n);
	uint8_t base[200];
	for (size_t i = 0; i < sizeof(base); i++)
		base[i] = (uint8_t)i;
	struct mfs_patch p;
	mfs_patch_init(&p);
	/* elements [3, 11) replace bytes [40, 72) */
	assert_int_equal(mfs_patch_gathered(&p, 40, 32, &g, 12, 32), 0);
	assert_int_equal(mfs_patch_put(&p, 10, 2, "xyz", 3), 0);
	struct mfs_err err = {0};
	assert_int_equal(mfs_patch_sort(&p, &err), 0);
	size_t len;
	uint8_t *out = tapply(&p, base, sizeof(base), &len);
	assert_int_equal(len, sizeof(base) + 1);
	assert_memory_equal(out, base, 10);
	assert_memory_equal(out + 10, "xyz", 3);
	assert_memory_equal(out + 13, base + 12, 28);
	for (uint64_t i = 0; i < 8; i++)
		assert_memory_equal(out + 41 + 4 * i, g.in + in_index(&g, 3 + i) * 4, 4);
	assert_memory_equal(out + 73, base + 72, sizeof(base) - 72);
	free(out);
	mfs_patch_free(&p);
	free((void *)g.in);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(ranges),
		cmocka_unit_test(gathered_span),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
