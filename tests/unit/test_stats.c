/* Unit tests of codecs/core/stats.c: the accumulator on every kind of dtype
 * (NaN, infinities, exact integer bounds, bool, float16, complex
 * magnitude), numerical stability, blocks added in any split, implicit
 * zeros, and mfs_tensor_stats over real test files (dense, CSR, a frame
 * column, refusals) and over a sparse tensor shown by its entries only. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "codec.h"
#include "helpers.h"
#include "numtext.h"
#include "stats.h"

static void close_to(double got, double want, double rel)
{
	double tol = rel * (fabs(want) > 1 ? fabs(want) : 1);
	if (!(fabs(got - want) <= tol)) {
		fprintf(stderr, "got %.17g, want %.17g\n", got, want);
		fail();
	}
}

static void floats_with_nan_and_inf(void **state)
{
	(void)state;
	float v[] = {1.0f, NAN, 3.0f, -2.0f, NAN};
	struct mfs_stats s;
	mfs_stats_init(&s, MFS_DT_F32);
	mfs_stats_add(&s, v, 5);
	mfs_stats_finish(&s);
	assert_int_equal(s.count, 5);
	assert_int_equal(s.nan, 2);
	assert_int_equal(s.n, 3);
	assert_int_equal(s.posinf + s.neginf, 0);
	assert_true(s.min == -2.0 && s.max == 3.0);
	close_to(s.mean, 2.0 / 3.0, 1e-15);
	/* population std of 1, 3, -2 */
	double m = 2.0 / 3.0;
	close_to(s.std, sqrt(((1 - m) * (1 - m) + (3 - m) * (3 - m) + (-2 - m) * (-2 - m)) / 3),
		 1e-15);

	/* An infinity: mean follows it (NumPy's nanmean), std is nan. */
	float w[] = {1.0f, INFINITY, 2.0f};
	mfs_stats_init(&s, MFS_DT_F32);
	mfs_stats_add(&s, w, 3);
	mfs_stats_finish(&s);
	assert_int_equal(s.posinf, 1);
	assert_true(isinf(s.mean) && s.mean > 0);
	assert_true(isnan(s.std));
	assert_true(s.max == INFINITY && s.min == 1.0);
	/* Both signs: the mean is nan. */
	float x[] = {-INFINITY, INFINITY};
	mfs_stats_init(&s, MFS_DT_F32);
	mfs_stats_add(&s, x, 2);
	mfs_stats_finish(&s);
	assert_true(isnan(s.mean) && isnan(s.std));
	assert_int_equal(s.neginf, 1);

	/* Nothing but NaN (and nothing at all): every statistic is nan. */
	double y[] = {NAN, NAN};
	mfs_stats_init(&s, MFS_DT_F64);
	mfs_stats_add(&s, y, 2);
	mfs_stats_finish(&s);
	assert_int_equal(s.n, 0);
	assert_true(isnan(s.min) && isnan(s.max) && isnan(s.mean) && isnan(s.std));
	mfs_stats_init(&s, MFS_DT_F64);
	mfs_stats_finish(&s);
	assert_int_equal(s.count, 0);
	assert_true(isnan(s.mean));
}

static void integers_exact(void **state)
{
	(void)state;
	int64_t v[] = {INT64_MAX, 0, INT64_MIN + 1, -5};
	struct mfs_stats s;
	mfs_stats_init(&s, MFS_DT_I64);
	mfs_stats_add(&s, v, 4);
	mfs_stats_finish(&s);
	assert_true(s.exact && s.is_signed);
	assert_true(s.imin == INT64_MIN + 1 && s.imax == INT64_MAX);
	assert_int_equal(s.nan, 0);

	uint64_t u[] = {UINT64_MAX, 10, UINT64_MAX - 1};
	mfs_stats_init(&s, MFS_DT_U64);
	mfs_stats_add(&s, u, 3);
	mfs_stats_finish(&s);
	assert_true(s.exact && !s.is_signed);
	assert_true(s.umin == 10 && s.umax == UINT64_MAX);

	int8_t b[] = {-128, 127, 0, 1};
	mfs_stats_init(&s, MFS_DT_I8);
	mfs_stats_add(&s, b, 4);
	mfs_stats_finish(&s);
	assert_true(s.imin == -128 && s.imax == 127);
	close_to(s.mean, 0.0, 0);

	uint8_t bo[] = {1, 0, 1, 1};
	mfs_stats_init(&s, MFS_DT_BOOL);
	mfs_stats_add(&s, bo, 4);
	mfs_stats_finish(&s);
	assert_true(s.umin == 0 && s.umax == 1);
	close_to(s.mean, 0.75, 0);
	close_to(s.std, sqrt(0.75 * 0.25), 1e-15);

	/* Implicit zeros move the exact bounds too. */
	uint16_t h[] = {5, 7};
	mfs_stats_init(&s, MFS_DT_U16);
	mfs_stats_add(&s, h, 2);
	mfs_stats_add_zeros(&s, 2);
	mfs_stats_finish(&s);
	assert_int_equal(s.count, 4);
	assert_true(s.umin == 0 && s.umax == 7);
	close_to(s.mean, 3.0, 0);
}

static void half_and_complex(void **state)
{
	(void)state;
	uint16_t h[4];
	h[0] = mfs_f64_to_f16(0.5);
	h[1] = mfs_f64_to_f16(-65504);
	h[2] = 0x7e00;  /* nan */
	h[3] = mfs_f64_to_f16(2);
	struct mfs_stats s;
	mfs_stats_init(&s, MFS_DT_F16);
	mfs_stats_add(&s, h, 4);
	mfs_stats_finish(&s);
	assert_int_equal(s.nan, 1);
	assert_true(s.min == -65504.0 && s.max == 2.0);

	/* complex64: the magnitude; a NaN part makes a NaN element. */
	float c[] = {3, 4, 0, -1, NAN, 1, INFINITY, 0};
	mfs_stats_init(&s, MFS_DT_C64);
	mfs_stats_add(&s, c, 4);
	mfs_stats_finish(&s);
	assert_true(s.magnitude);
	assert_int_equal(s.count, 4);
	assert_int_equal(s.nan, 1);
	assert_int_equal(s.posinf, 1);
	assert_true(s.min == 1.0 && s.max == INFINITY);

	double z[] = {-6, 8, 0, 0};
	mfs_stats_init(&s, MFS_DT_C128);
	mfs_stats_add(&s, z, 2);
	mfs_stats_finish(&s);
	assert_true(s.min == 0 && s.max == 10);
	close_to(s.mean, 5, 0);
	close_to(s.std, 5, 1e-15);

	uint16_t c32[] = {mfs_f64_to_f16(0), mfs_f64_to_f16(-2)};
	mfs_stats_init(&s, MFS_DT_C32);
	mfs_stats_add(&s, c32, 1);
	mfs_stats_finish(&s);
	assert_true(s.max == 2.0);

	assert_false(mfs_stats_supported(MFS_DT_CHAR8));
	assert_false(mfs_stats_supported(MFS_DT_OPAQUE));
	assert_false(mfs_stats_supported(MFS_DT_VOID));
}

/* A large offset and a small spread: sum-of-squares in double would lose
 * every digit of the variance; per-block two-pass plus pairwise merging
 * keeps it. Also: the result does not depend on how the stream is cut. */
static void stable_and_split_invariant(void **state)
{
	(void)state;
	size_t n = 3000001;
	double *v = malloc(n * sizeof(*v));
	assert_non_null(v);
	for (size_t i = 0; i < n; i++)
		v[i] = 1e9 + (i % 2 ? 1.0 : -1.0);
	struct mfs_stats a, b;
	mfs_stats_init(&a, MFS_DT_F64);
	mfs_stats_add(&a, v, n);
	mfs_stats_finish(&a);
	/* n odd: (n+1)/2 values of -1, (n-1)/2 of +1 around 1e9. */
	double mean = 1e9 - 1.0 / (double)n;
	close_to(a.mean, mean, 1e-15);
	close_to(a.std, sqrt(1.0 - 1.0 / ((double)n * (double)n)), 1e-9);

	mfs_stats_init(&b, MFS_DT_F64);
	size_t cuts[] = {1, 7, 1023, 1024, 1025, 65536, 100000};
	size_t off = 0, k = 0;
	while (off < n) {
		size_t len = cuts[k++ % 7];
		if (len > n - off)
			len = n - off;
		mfs_stats_add(&b, v + off, len);
		off += len;
	}
	mfs_stats_finish(&b);
	assert_int_equal(b.count, n);
	close_to(b.mean, a.mean, 1e-15);
	close_to(b.std, a.std, 1e-9);

	/* float32 values near the top of double's range do not overflow the
	 * block sums into inf. */
	double big[4] = {1.5e308, 1.6e308, 1.7e308, 1.2e308};
	mfs_stats_init(&b, MFS_DT_F64);
	mfs_stats_add(&b, big, 4);
	mfs_stats_finish(&b);
	assert_true(isfinite(b.mean));
	close_to(b.mean, 1.5e308, 1e-12);
	free(v);
}

static void tensors_of_test_files(void **state)
{
	(void)state;
	struct mfs_err err = {0};
	struct mfs_stats s;

	/* DAPHNE CSR 6x5: 6 stored values, 24 implicit zeros. */
	struct mfs_model *m = topen("daphne/generated/csr_f64_6x5.dbdf");
	const struct mfs_tensor *t = mfs_node_tensor(m, MFS_ROOT);
	assert_non_null(t);
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), 0);
	assert_int_equal(s.count, 30);
	assert_true(s.min == -2 && s.max == 6);
	close_to(s.mean, (1.5 - 2 + 3.25 + 4 + 5.5 + 6) / 30, 1e-15);
	tclose(m);

	/* A frame column. */
	m = topen("daphne/generated/frame_mixed_4x8.dbdf");
	t = mfs_node_tensor(m, tnode(m, "columns/t"));
	assert_non_null(t);
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), 0);
	assert_true(s.exact && s.imin == -128 && s.imax == 127);
	tclose(m);

	/* A PLearn matrix with NaNs. */
	m = topen("plearn/pmat/FileVMatrix_fvm1_with_nan.pmat");
	t = mfs_node_tensor(m, MFS_ROOT);
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), 0);
	assert_int_equal(s.count, 39);
	assert_int_equal(s.nan, 3);
	assert_true(s.min == 1 && s.max == 23);
	tclose(m);

	/* TenniS: a string is refused, complex64 is summarised by |z|. */
	m = topen("tennis/dtypes_zoo.tsm");
	t = mfs_node_tensor(m, tnode(m, "nodes/4/params/value"));
	assert_int_equal(t->dtype, MFS_DT_CHAR8);
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), -EINVAL);
	assert_true(err.msg[0] != '\0');
	t = mfs_node_tensor(m, tnode(m, "nodes/7/params/value"));
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), 0);
	assert_true(s.magnitude);
	close_to(s.min, sqrt(5), 1e-7);
	tclose(m);

	/* primitiv specials: 0 -0 inf -inf nan tiny */
	m = topen("primitiv/tensor_special_values.tensor");
	t = mfs_node_tensor(m, MFS_ROOT);
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), 0);
	assert_int_equal(s.nan, 1);
	assert_int_equal(s.posinf, 1);
	assert_int_equal(s.neginf, 1);
	assert_true(isnan(s.mean));
	tclose(m);
}

/* A codec of one sparse 1000000x1000000 float64 matrix shown by its stored
 * entries only (MFS_TF_NODENSE): bytes "SPRS", then n float64 values at
 * (i, i). stats must use the entries and count the zeros, never a dense
 * read (which this codec fails). */
static int sp_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	(void)size;
	(void)name;
	return n >= 4 && !memcmp(h, "SPRS", 4) ? 32 : 0;
}

static int sp_read(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		   uint64_t count, void *out, struct mfs_err *err)
{
	(void)m; (void)t; (void)first; (void)count; (void)out;
	return mfs_error(err, EIO, "dense read of a NODENSE tensor");
}

static int sp_entries(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, uint64_t *rows, uint64_t *cols, void *vals,
		      struct mfs_err *err)
{
	(void)t;
	(void)err;
	for (uint64_t i = 0; i < count; i++)
		rows[i] = cols[i] = first + i;
	memcpy(vals, m->base + 8 + 8 * first, (size_t)(8 * count));
	return 0;
}

static const struct mfs_tensor_ops sp_ops = {sp_read, sp_entries};

static int sp_open(struct mfs_model *m, struct mfs_err *err)
{
	(void)err;
	uint64_t dims[2] = {1000000, 1000000};
	struct mfs_tensor t = {
		.dtype = MFS_DT_F64, .ndim = 2, .dims = dims, .ops = &sp_ops,
		.nnz = (m->size - 8) / 8,
		.flags = MFS_TF_SPARSE | MFS_TF_NODENSE | MFS_TF_NODATA,
	};
	mfs_attach_tensor(m, MFS_ROOT, &t);
	return 0;
}

static const struct mfs_codec sp_codec = {.name = "sparse-test", .bid = sp_bid, .open = sp_open};

static void sparse_by_entries(void **state)
{
	(void)state;
	uint8_t buf[8 + 3 * 8] = "SPRS";
	double vals[3] = {-4, 2.5, 8};
	memcpy(buf + 8, vals, sizeof(vals));
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	assert_int_equal(mfs_model_open_mem(&m, buf, sizeof(buf), "x.sprs", NULL, 0, &sp_codec,
					    &err), 0);
	const struct mfs_tensor *t = mfs_node_tensor(m, MFS_ROOT);
	struct mfs_stats s;
	assert_int_equal(mfs_tensor_stats(m, t, &s, &err), 0);
	assert_int_equal(s.count, 1000000000000ull);
	assert_true(s.min == -4 && s.max == 8);
	close_to(s.mean, 6.5 / 1e12, 1e-12);
	double mean = 6.5 / 1e12;
	double m2 = (-4 - mean) * (-4 - mean) + (2.5 - mean) * (2.5 - mean) +
		    (8 - mean) * (8 - mean) + (1e12 - 3) * mean * mean;
	close_to(s.std, sqrt(m2 / 1e12), 1e-9);
	mfs_model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(floats_with_nan_and_inf),
		cmocka_unit_test(integers_exact),
		cmocka_unit_test(half_and_complex),
		cmocka_unit_test(stable_and_split_invariant),
		cmocka_unit_test(tensors_of_test_files),
		cmocka_unit_test(sparse_by_entries),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
