/* values.txt's element order and size: column-major storage read in
 * logical order (tiled transposes, bands, partial rows) against the index
 * arithmetic, and the size measured without rendering (float tensors in
 * memory) against the text itself: every shape kind, both orders, both
 * float widths, big-endian storage, and values of every class (zeros,
 * subnormals, powers of ten at the notation switches, nan, inf). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "helpers.h"
#include "numtext.h"
#include "runtime.h"
#include "view_impl.h"

struct shape {
	enum mfs_dtype dtype;
	enum mfs_order order;
	uint8_t swap;
	uint32_t ndim;
	uint64_t dims[4];
};

static const struct shape shapes[] = {
	{MFS_DT_F32, MFS_ROW_MAJOR, 0, 1, {10007}},
	{MFS_DT_F32, MFS_ROW_MAJOR, 0, 2, {97, 131}},
	{MFS_DT_F32, MFS_COL_MAJOR, 0, 2, {4099, 3}},
	{MFS_DT_F32, MFS_COL_MAJOR, 0, 2, {3, 5000}},
	{MFS_DT_F32, MFS_COL_MAJOR, 0, 3, {7, 301, 5}},
	{MFS_DT_F32, MFS_ROW_MAJOR, 0, 4, {3, 4, 5, 211}},
	{MFS_DT_F32, MFS_COL_MAJOR, 0, 4, {2, 3, 4, 700}},
	{MFS_DT_F32, MFS_ROW_MAJOR, 4, 2, {300, 40}},
	{MFS_DT_F64, MFS_ROW_MAJOR, 0, 3, {2, 4096, 2}},
	{MFS_DT_F64, MFS_COL_MAJOR, 0, 2, {1500, 7}},
	{MFS_DT_F64, MFS_COL_MAJOR, 8, 3, {9, 10, 110}},
	{MFS_DT_F32, MFS_ROW_MAJOR, 0, 0, {0}},
	{MFS_DT_F32, MFS_COL_MAJOR, 0, 3, {1, 1, 1}},
};

static const struct shape *cur;  /* the shape the codec below shows */
static uint64_t rng = 88172645463325252ull;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Element bits: random bits, weights-like values, and special values. */
static uint64_t elem_bits(bool f64)
{
	static const double special[] = {0.0, -0.0, 1e-4, 9.999e-5, 1e15, 1e16, 9.99e15, 1.0,
					 -1.0, 0.1, 100.0, 1e-300, 1e300, 123456.0};
	uint64_t r = rnd();
	double d;
	switch (r % 8) {
	case 0:
		d = special[(r >> 8) % (sizeof(special) / sizeof(special[0]))];
		break;
	case 1:
		d = (r >> 8) % 3 == 0 ? NAN : (r >> 8) % 3 == 1 ? INFINITY : -INFINITY;
		break;
	case 2:
	case 3:
		return f64 ? rnd() : rnd() & 0xffffffffu;  /* any bits: subnormals, nan payloads */
	default:
		d = ((double)(r >> 11) * 0x1p-53 - 0.5) * pow(10, (double)((r >> 3) % 12) - 6);
	}
	uint64_t b;
	if (f64) {
		memcpy(&b, &d, 8);
		return b;
	}
	float f = (float)d;
	uint32_t b32;
	memcpy(&b32, &f, 4);
	return b32;
}

static int shape_open(struct mfs_model *m, struct mfs_err *err)
{
	(void)err;
	struct mfs_tensor t = {.dtype = (uint8_t)cur->dtype, .order = (uint8_t)cur->order,
			       .swap = cur->swap, .ndim = cur->ndim, .dims = cur->dims, .off = 8};
	mfs_add_tensor(m, MFS_ROOT, "t", 1, &t);
	return 0;
}

static int any_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	(void)h;
	(void)n;
	(void)size;
	(void)name;
	return 1;
}

static const struct mfs_codec shape_codec = {.name = "shape", .bid = any_bid, .open = shape_open};

/* The text read front to back (lengths learnt chunk by chunk, no size). */
static char *read_all(struct mfs_model *m, mfs_id v, size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *all = malloc(cap);
	struct mfs_err err = {0};
	for (;;) {
		if (cap - n < 4096)
			all = realloc(all, cap *= 2);
		assert_non_null(all);
		ssize_t r = mfs_view_read(m, v, n, 4096, all + n, NULL, &err);
		assert_true(r >= 0);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*len = n;
	return all;
}

/* The text against each element formatted alone (mfs_fmt_elem) in logical
 * order, with docs/layout.md's separators (mfs_values_sep). */
static void check_text(struct mfs_model *m, const char *text, size_t len)
{
	const struct mfs_tensor *t = &m->tensors[0];
	uint8_t *el = malloc(t->nelem * t->esize + 1);
	char *ref = malloc(t->nelem * (MFS_NUM_MAX + 2) + 1), *o = ref;
	assert_true(el && ref);
	struct mfs_err err = {0};
	assert_int_equal(mfs_tensor_gather(m, t, 0, t->nelem, el, &err), 0);
	for (uint64_t i = 0; i < t->nelem; i++) {
		o += mfs_fmt_elem(o, (enum mfs_dtype)t->dtype, el + i * t->esize);
		const char *sep = mfs_values_sep(t->dims, t->ndim, i, t->nelem);
		memcpy(o, sep, strlen(sep));
		o += strlen(sep);
	}
	assert_int_equal(len, (size_t)(o - ref));
	assert_memory_equal(text, ref, len);
	free(el);
	free(ref);
}

static void test_measured_size(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		cur = &shapes[s];
		bool f64 = cur->dtype == MFS_DT_F64;
		unsigned es = f64 ? 8 : 4;
		uint64_t n = 1;
		for (uint32_t i = 0; i < cur->ndim; i++)
			n *= cur->dims[i];
		size_t size = 8 + (size_t)n * es;
		uint8_t *buf = calloc(1, size);
		assert_non_null(buf);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t b = elem_bits(f64);
			if (cur->swap)
				b = f64 ? __builtin_bswap64(b) : __builtin_bswap32((uint32_t)b);
			memcpy(buf + 8 + i * es, &b, es);  /* little-endian host */
		}
		struct mfs_err err = {0};
		struct mfs_model *a, *b;
		assert_int_equal(mfs_model_open_mem(&a, buf, size, "a", NULL, 0, &shape_codec, &err), 0);
		assert_int_equal(mfs_model_open_mem(&b, buf, size, "b", NULL, 0, &shape_codec, &err), 0);
		size_t len;
		char *text = read_all(a, tnode(a, "t/values.txt"), &len);
		check_text(a, text, len);
		mfs_id v = tnode(b, "t/values.txt");
		uint64_t measured;
		assert_int_equal(mfs_view_size(b, v, &measured, &err), 0);
		if (measured != len)
			fail_msg("shape %zu: measured %llu bytes, the text has %zu", s,
				 (unsigned long long)measured, len);
		/* reads at any offset go by the measured chunk offsets */
		char piece[300];
		for (int k = 0; k < 300 && len; k++) {
			uint64_t off = rnd() % len;
			ssize_t r = mfs_view_read(b, v, off, sizeof(piece), piece, NULL, &err);
			assert_true(r > 0);
			assert_memory_equal(piece, text + off, (size_t)r);
		}
		free(text);
		mfs_model_free(a);
		mfs_model_free(b);
		free(buf);
	}
}

/* Column-major R x C of element size es, read in logical order over many
 * ranges, and reordered both ways. */
static void check_gather(uint64_t R, uint64_t C, unsigned es)
{
	uint64_t n = R * C;
	size_t size = 8 + (size_t)(n * es);
	uint8_t *buf = malloc(size), *got = malloc((size_t)(n * es)), *back = malloc((size_t)(n * es));
	assert_true(buf && got && back);
	for (size_t i = 0; i < size; i++)
		buf[i] = (uint8_t)rnd();
	struct shape sh = {es == 8 ? MFS_DT_F64 : es == 4 ? MFS_DT_F32 : es == 2 ? MFS_DT_I16
									  : MFS_DT_C128,
			   MFS_COL_MAJOR, 0, 2, {R, C}};
	cur = &sh;
	struct mfs_err err = {0};
	struct mfs_model *m;
	assert_int_equal(mfs_model_open_mem(&m, buf, size, "g", NULL, 0, &shape_codec, &err), 0);
	const struct mfs_tensor *t = &m->tensors[0];
	const uint8_t *st = buf + 8;
	for (int k = 0; k < 60; k++) {
		uint64_t first = k == 0 ? 0 : rnd() % n;
		uint64_t count = k == 0 ? n : k % 3 == 0 ? 1 + rnd() % (n - first) : 1 + rnd() % 5000;
		if (count > n - first)
			count = n - first;
		assert_int_equal(mfs_tensor_gather(m, t, first, count, got, &err), 0);
		for (uint64_t i = 0; i < count; i++) {
			uint64_t l = first + i, r = l / C, c = l % C;
			if (memcmp(got + i * es, st + (c * R + r) * es, es))
				fail_msg("%llux%llu es %u: element %llu of [%llu, +%llu) differs",
					 (unsigned long long)R, (unsigned long long)C, es,
					 (unsigned long long)l, (unsigned long long)first,
					 (unsigned long long)count);
		}
	}
	/* whole: column-major to row-major and back */
	mfs_reorder(sh.dims, 2, es, st, got, false);
	assert_int_equal(mfs_tensor_gather(m, t, 0, n, back, &err), 0);
	assert_memory_equal(got, back, (size_t)(n * es));
	mfs_reorder(sh.dims, 2, es, got, back, true);
	assert_memory_equal(back, st, (size_t)(n * es));
	mfs_model_free(m);
	free(buf);
	free(got);
	free(back);
}

static void test_gather(void **state)
{
	(void)state;
	static const uint64_t sizes[][2] = {{1, 1}, {1, 5000}, {5000, 1}, {16, 16}, {17, 33},
					    {50, 1000}, {37, 4096}, {1024, 300}, {3, 70000}};
	static const unsigned ess[] = {4, 8, 2, 16};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (size_t e = 0; e < sizeof(ess) / sizeof(ess[0]); e++)
			check_gather(sizes[i][0], sizes[i][1], ess[e]);
}

/* A model of one tensor of shape sh: random elements into *buf (the
 * caller frees), or those already there when *buf is set. */
static struct mfs_model *open_shape(const struct shape *sh, const char *name, uint8_t **buf)
{
	cur = sh;
	unsigned es = mfs_dtype_info(sh->dtype)->size;
	uint64_t n = 1;
	for (uint32_t i = 0; i < sh->ndim; i++)
		n *= sh->dims[i];
	size_t size = 8 + (size_t)n * es;
	if (!*buf) {
		*buf = malloc(size);
		assert_non_null(*buf);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t b = sh->dtype == MFS_DT_I32 ? rnd() : elem_bits(es == 8);
			memcpy(*buf + 8 + i * es, &b, es);
		}
	}
	struct mfs_err err = {0};
	struct mfs_model *m;
	assert_int_equal(mfs_model_open_mem(&m, *buf, size, name, NULL, 0, &shape_codec, &err), 0);
	return m;
}

/* What mfs_view_send_kept hands over, gathered. */
struct sent {
	char buf[3u << 20];
	size_t len;
	int calls;
};

static void collect(void *ctx, const struct iovec *iov, int count)
{
	struct sent *s = ctx;
	s->calls++;
	for (int i = 0; i < count; i++) {
		assert_true(s->len + iov[i].iov_len <= sizeof(s->buf));
		memcpy(s->buf + s->len, iov[i].iov_base, iov[i].iov_len);
		s->len += iov[i].iov_len;
	}
}

/* One pass instead of two: the size pass keeps the text it rendered (under
 * the budget), reads give the same bytes at any offset, a window read
 * through is freed, a new pass drops the oldest kept text to make room, and
 * freeing the model frees what it kept. */
static void test_kept_text(void **state)
{
	(void)state;
	static const struct shape big[] = {
		{MFS_DT_F32, MFS_ROW_MAJOR, 0, 1, {300007}},
		{MFS_DT_F64, MFS_COL_MAJOR, 0, 2, {701, 400}},
		{MFS_DT_F32, MFS_COL_MAJOR, 0, 3, {3, 301, 150}},
		{MFS_DT_I32, MFS_ROW_MAJOR, 0, 2, {1000, 200}},  /* no measurer: rendered twice before */
	};
	struct mfs_err err = {0};
	struct mfs_runtime *rt;
	assert_int_equal(mfs_runtime_new(&rt, NULL, &err), 0);
	mfs_text_cache_idle(rt, 3600);  /* slow builds (TSan) must not see text dropped as idle */
	for (size_t s = 0; s < sizeof(big) / sizeof(big[0]); s++) {
		uint8_t *buf = NULL, *buf2 = NULL, *buf3 = NULL;
		/* the reference: no runtime, sized the two-pass way */
		struct mfs_model *a = open_shape(&big[s], "a", &buf);
		mfs_id va = tnode(a, "t/values.txt");
		uint64_t size_a;
		assert_int_equal(mfs_view_size(a, va, &size_a, &err), 0);
		assert_int_equal(mfs_text_cache_used(rt), 0);
		size_t len;
		char *text = read_all(a, va, &len);
		assert_int_equal(size_a, len);
		mfs_model_free(a);

		mfs_text_cache_set(rt, 64u << 20);
		struct mfs_model *b = open_shape(&big[s], "b", &buf);
		mfs_model_set_runtime(b, rt);
		mfs_id vb = tnode(b, "t/values.txt");
		uint64_t size_b;
		assert_int_equal(mfs_view_size(b, vb, &size_b, &err), 0);
		assert_int_equal(size_b, len);
		uint64_t kept = mfs_text_cache_used(rt);
		if (kept < len || kept > len + len / 4)
			fail_msg("shape %zu: %llu bytes kept for %zu bytes of text", s,
				 (unsigned long long)kept, len);
		char piece[5000];
		for (int k = 0; k < 200; k++) {
			uint64_t off = rnd() % len;
			ssize_t r = mfs_view_read(b, vb, off, sizeof(piece), piece, NULL, &err);
			assert_true(r > 0);
			assert_memory_equal(piece, text + off, (size_t)r);
		}
		/* read through, front to back: nothing is kept any more */
		size_t len_b;
		char *again = read_all(b, vb, &len_b);
		assert_int_equal(len_b, len);
		assert_memory_equal(again, text, len);
		free(again);
		assert_int_equal(mfs_text_cache_used(rt), 0);
		mfs_model_free(b);
		/* a second model's pass drops the first one's text to make room */
		b = open_shape(&big[s], "b2", &buf);
		mfs_model_set_runtime(b, rt);
		vb = tnode(b, "t/values.txt");
		assert_int_equal(mfs_view_size(b, vb, &size_b, &err), 0);
		kept = mfs_text_cache_used(rt);
		mfs_text_cache_set(rt, kept + kept / 2);
		struct mfs_model *c = open_shape(&big[s], "c", &buf2);
		mfs_model_set_runtime(c, rt);
		uint64_t size_c;
		assert_int_equal(mfs_view_size(c, tnode(c, "t/values.txt"), &size_c, &err), 0);
		uint64_t kept_c = mfs_text_cache_used(rt);
		if (!kept_c || kept_c > kept + kept / 4)
			fail_msg("shape %zu: %llu bytes kept after the second pass, %llu before", s,
				 (unsigned long long)kept_c, (unsigned long long)kept);
		/* the first still reads right (rendered again), keeping nothing */
		again = read_all(b, vb, &len_b);
		assert_int_equal(len_b, len);
		assert_memory_equal(again, text, len);
		free(again);
		assert_int_equal(mfs_text_cache_used(rt), kept_c);
		size_t len_c;
		char *ctext = read_all(c, tnode(c, "t/values.txt"), &len_c);
		if (len_c != size_c)
			fail_msg("shape %zu: read %zu bytes of a view sized %llu", s, len_c,
				 (unsigned long long)size_c);
		free(ctext);
		assert_int_equal(mfs_text_cache_used(rt), 0);
		mfs_model_free(b);
		mfs_model_free(c);
		/* freeing a model frees its kept text */
		mfs_text_cache_set(rt, 64u << 20);
		b = open_shape(&big[s], "b3", &buf3);
		mfs_model_set_runtime(b, rt);
		assert_int_equal(mfs_view_size(b, tnode(b, "t/values.txt"), &size_b, &err), 0);
		assert_true(mfs_text_cache_used(rt) > 0);
		mfs_model_free(b);
		assert_int_equal(mfs_text_cache_used(rt), 0);
		/* kept text handed over in place, front to back, in reads of any
		 * size (a read that reaches a window's end frees it: a later read
		 * that needs it renders it again); then nothing is kept any more,
		 * and nothing more is handed over */
		b = open_shape(&big[s], "b4", &buf);
		mfs_model_set_runtime(b, rt);
		vb = tnode(b, "t/values.txt");
		assert_int_equal(mfs_view_size(b, vb, &size_b, &err), 0);
		struct sent *got = calloc(1, sizeof(*got));
		assert_non_null(got);
		int in_place = 0;
		for (uint64_t off = 0; off < len;) {
			size_t want = 1 + (size_t)(rnd() % (3u << 20));
			got->len = 0;
			if (mfs_view_send_kept(b, vb, off, want, collect, got)) {
				size_t n = want < len - off ? want : (size_t)(len - off);
				assert_int_equal(got->len, n);
				in_place++;
			} else {
				ssize_t r = mfs_view_read(b, vb, off, want < sizeof(got->buf) ? want : sizeof(got->buf),
							  got->buf, NULL, &err);
				assert_true(r > 0);
				got->len = (size_t)r;
			}
			assert_memory_equal(got->buf, text + off, got->len);
			off += got->len;
		}
		assert_true(in_place > 0);
		assert_int_equal(mfs_text_cache_used(rt), 0);
		got->calls = 0;
		assert_false(mfs_view_send_kept(b, vb, 0, 100, collect, got));
		assert_false(mfs_view_send_kept(b, vb, len, 100, collect, got));
		assert_int_equal(got->calls, 0);
		free(got);
		mfs_model_free(b);
		free(buf);
		free(buf2);
		free(buf3);
		free(text);
	}
	mfs_runtime_free(rt);
}

struct sizer {
	struct mfs_model *m;
	mfs_id v;
	uint64_t size;
	int r;
};

static void *size_thread(void *arg)
{
	struct sizer *z = arg;
	struct mfs_err err = {0};
	z->r = mfs_view_size(z->m, z->v, &z->size, &err);
	return NULL;
}

/* Four stats at once: one size pass, the others wait for its result (the
 * text is kept once, not four times). */
static void test_concurrent_size(void **state)
{
	(void)state;
	static const struct shape sh = {MFS_DT_F32, MFS_ROW_MAJOR, 0, 2, {500, 1000}};
	uint8_t *buf = NULL;
	struct mfs_runtime *rt;
	struct mfs_runtime_opts o = {.text_cache = 64u << 20};
	assert_int_equal(mfs_runtime_new(&rt, &o, NULL), 0);
	struct mfs_model *m = open_shape(&sh, "m", &buf);
	mfs_model_set_runtime(m, rt);
	struct sizer z[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		z[i] = (struct sizer){.m = m, .v = tnode(m, "t/values.txt")};
		assert_int_equal(pthread_create(&th[i], NULL, size_thread, &z[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(z[i].r, 0);
		assert_int_equal(z[i].size, z[0].size);
	}
	assert_true(mfs_text_cache_used(rt) >= z[0].size);
	assert_true(mfs_text_cache_used(rt) <= z[0].size + z[0].size / 4);
	mfs_model_free(m);
	assert_int_equal(mfs_text_cache_used(rt), 0);
	free(buf);
	mfs_runtime_free(rt);
}

/* Text nobody reads (a stat wanted the size only) is dropped once idle. */
static void test_idle_text(void **state)
{
	(void)state;
	static const struct shape sh = {MFS_DT_F64, MFS_ROW_MAJOR, 0, 1, {200000}};
	uint8_t *buf = NULL;
	struct mfs_runtime *rt;
	struct mfs_runtime_opts o = {.text_cache = 64u << 20, .idle_s = 1};
	assert_int_equal(mfs_runtime_new(&rt, &o, NULL), 0);
	struct mfs_model *m = open_shape(&sh, "m", &buf);
	mfs_model_set_runtime(m, rt);
	mfs_id v = tnode(m, "t/values.txt");
	uint64_t size;
	struct mfs_err err = {0};
	assert_int_equal(mfs_view_size(m, v, &size, &err), 0);
	assert_true(mfs_text_cache_used(rt) >= size);
	for (int i = 0; i < 100 && mfs_text_cache_used(rt); i++)
		usleep(100 * 1000);
	assert_int_equal(mfs_text_cache_used(rt), 0);
	/* and reads go on, rendered */
	char piece[100];
	assert_true(mfs_view_read(m, v, size / 2, sizeof(piece), piece, NULL, &err) > 0);
	mfs_model_free(m);
	free(buf);
	mfs_runtime_free(rt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gather),
		cmocka_unit_test(test_measured_size),
		cmocka_unit_test(test_kept_text),
		cmocka_unit_test(test_concurrent_size),
		cmocka_unit_test(test_idle_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
