/* Unit tests of codecs/core/colstream.c: column-major tensors in custom
 * storage read in row-major order by bands, each filled in one pass over
 * the storage. Ranks 2 to 4, element sizes 1 to 16, bands of whole rows and
 * of parts of one row, pieces of whole and of cut columns; random ranges
 * against the index arithmetic of mfs_tensor_storage_index; several threads
 * at once; a storage read failing half way. */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "bands.h"
#include "model_impl.h"
#include "view_impl.h"

/* The tensor of the model being opened, and its storage. */
static uint64_t cur_dims[4];
static uint32_t cur_ndim;
static uint8_t cur_dtype;
static uint8_t *storage;
static _Atomic uint64_t elems_read;
static _Atomic uint64_t fail_at = UINT64_MAX;  /* a read reaching this element fails */

static int store_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err)
{
	(void)m;
	if (first + count > fail_at)
		return mfs_error(err, EIO, "storage element %llu cannot be read",
				 (unsigned long long)fail_at);
	elems_read += count;
	memcpy(out, storage + first * t->esize, (size_t)(count * t->esize));
	return 0;
}
static const struct mfs_tensor_ops store_ops = {store_read, NULL};

static int cs_open(struct mfs_model *m, struct mfs_err *err)
{
	(void)err;
	struct mfs_tensor t = {.dtype = cur_dtype, .ndim = cur_ndim, .dims = cur_dims,
			       .order = MFS_COL_MAJOR, .ops = &store_ops};
	mfs_attach_tensor(m, MFS_ROOT, &t);
	return 0;
}

static const struct mfs_codec cs_codec = {.name = "colstream", .bid = tst1_bid, .open = cs_open};

struct model {
	struct mfs_model *m;
	const struct mfs_tensor *t;
	uint8_t *want;  /* the logical order, computed element by element */
	unsigned es;
};

static struct model open_case(uint8_t dtype, uint32_t nd, const uint64_t *dims, uint64_t band,
			      uint64_t piece, uint64_t *seed)
{
	struct model c;
	cur_dtype = dtype;
	cur_ndim = nd;
	memcpy(cur_dims, dims, nd * sizeof(*dims));
	c.m = topen_tst1(&cs_codec, "cs");
	c.m->impl->sbands->band_bytes = band;
	c.m->impl->sbands->piece_bytes = piece;
	c.t = &c.m->tensors[0];
	c.es = c.t->esize;
	uint64_t n = c.t->nelem;
	storage = malloc((size_t)(n * c.es) + 1);
	c.want = malloc((size_t)(n * c.es) + 1);
	assert_non_null(storage);
	assert_non_null(c.want);
	for (uint64_t i = 0; i < n * c.es; i++)
		storage[i] = (uint8_t)trand(seed);
	for (uint64_t r = 0; r < n; r++)
		memcpy(c.want + r * c.es, storage + mfs_tensor_storage_index(c.t, r) * c.es, c.es);
	return c;
}

static void close_case(struct model *c)
{
	mfs_model_free(c->m);
	free(c->want);
	free(storage);
	storage = NULL;
}

static void check_range(const struct model *c, uint64_t first, uint64_t count)
{
	struct mfs_err err = {0};
	uint8_t *out = malloc((size_t)(count * c->es) + 1);
	assert_non_null(out);
	if (mfs_tensor_gather(c->m, c->t, first, count, out, &err) < 0)
		fail_msg("gather [%llu, +%llu): %s", (unsigned long long)first,
			 (unsigned long long)count, err.msg);
	if (memcmp(out, c->want + first * c->es, (size_t)(count * c->es)) != 0)
		fail_msg("rank %u, es %u: [%llu, +%llu) differs", c->t->ndim, c->es,
			 (unsigned long long)first, (unsigned long long)count);
	free(out);
}

static void check_random(const struct model *c, unsigned k, uint64_t *seed)
{
	uint64_t n = c->t->nelem;
	for (unsigned i = 0; i < k; i++) {
		uint64_t first = trand(seed) % n;
		uint64_t left = n - first, count = 1;
		switch (trand(seed) % 3) {
		case 0:
			count = 1;
			break;
		case 1:
			count = 1 + trand(seed) % (left < 300 ? left : 300);
			break;
		default:
			count = 1 + trand(seed) % left;
		}
		check_range(c, first, count);
	}
}

struct shape_case {
	uint8_t dtype;
	uint32_t nd;
	uint64_t dims[4];
	uint64_t band, piece;  /* bytes */
};

static const struct shape_case cases[] = {
	{MFS_DT_F32, 2, {37, 53}, 1000, 1 << 20},         /* bands of 4 whole rows */
	{MFS_DT_F64, 2, {5, 700}, 1000, 1 << 20},         /* bands of parts of a row */
	{MFS_DT_I16, 3, {6, 5, 7}, 100, 1 << 20},         /* one row a band */
	{MFS_DT_I16, 3, {6, 5, 7}, 50, 1 << 20},          /* parts of rows, rank 3 */
	{MFS_DT_C128, 4, {3, 4, 5, 6}, 256, 1 << 20},     /* 16-byte elements */
	{MFS_DT_U8, 2, {1000, 3}, 64, 100},               /* pieces cut columns */
	{MFS_DT_U8, 3, {999, 2, 3}, 500, 250},            /* cut columns, rank 3 */
	{MFS_DT_F32, 2, {300, 200}, 32u << 20, 1u << 20}, /* one band: the whole tensor */
	{MFS_DT_F32, 2, {1, 1000}, 1000, 1 << 20},        /* one logical row */
	{MFS_DT_F64, 2, {1000, 1}, 800, 100},             /* one logical column */
};

static void test_shapes(void **state)
{
	(void)state;
	uint64_t seed = 11;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct shape_case *sc = &cases[k];
		struct model c = open_case(sc->dtype, sc->nd, sc->dims, sc->band, sc->piece, &seed);
		uint64_t n = c.t->nelem, bytes = n * c.es;
		/* Read whole, in order: one pass over the storage per band. */
		elems_read = 0;
		check_range(&c, 0, n);
		uint64_t bands = (bytes + sc->band - 1) / sc->band + c.t->dims[0];
		if (elems_read > bands * n)
			fail_msg("case %zu: %llu elements read for %llu", k,
				 (unsigned long long)elems_read, (unsigned long long)n);
		check_random(&c, (unsigned)tcount(300, 3, 3), &seed);
		close_case(&c);
	}
}

struct reader {
	const struct model *c;
	uint64_t seed;
};

static void *reader(void *arg)
{
	struct reader *r = arg;
	check_random(r->c, (unsigned)tcount(200, 4, 4), &r->seed);
	return NULL;
}

/* Four threads at random ranges of small bands: they wait for the band
 * another fills, and evict each other's. */
static void test_threads(void **state)
{
	(void)state;
	uint64_t seed = 12;
	static const uint64_t dims[3] = {40, 30, 20};
	struct model c = open_case(MFS_DT_F32, 3, dims, 4000, 600, &seed);
	pthread_t th[4];
	struct reader rd[4];
	for (int i = 0; i < 4; i++) {
		rd[i] = (struct reader){&c, 100 + (uint64_t)i};
		assert_int_equal(pthread_create(&th[i], NULL, reader, &rd[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	close_case(&c);
}

/* A storage read failing half way fails the band and its readers, leaves
 * nothing half filled behind, and the next read tries again. */
static void test_failure(void **state)
{
	(void)state;
	uint64_t seed = 13;
	static const uint64_t dims[2] = {64, 64};
	struct model c = open_case(MFS_DT_F32, 2, dims, 4096, 1024, &seed);
	struct mfs_err err = {0};
	uint8_t *out = malloc(64 * 64 * 4);
	assert_non_null(out);
	fail_at = 2000;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(mfs_tensor_gather(c.m, c.t, 0, 64 * 64, out, &err), -EIO);
		assert_non_null(strstr(err.msg, "cannot be read"));
		mfs_err_clear(&err);
	}
	fail_at = UINT64_MAX;
	check_range(&c, 0, 64 * 64);
	free(out);
	close_case(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_failure),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
