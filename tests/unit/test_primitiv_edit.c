/* Unit tests of primitiv edits: values.txt, data, data.npy (with reshapes
 * and the Shape/bin re-encoding they need) and optimizer configs; bad input
 * refused with EINVAL/ERANGE and a message; untouched bytes kept.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "view_impl.h"

static struct mfs_model *open_c(const char *file)
{
	char rel[256];
	snprintf(rel, sizeof(rel), "primitiv/%s", file);
	return topen(rel);
}

/* a and b (same length) differ only inside [from, to). */
static void only_changed(const uint8_t *a, const uint8_t *b, size_t len, size_t from, size_t to)
{
	for (size_t i = 0; i < len; i++)
		if ((i < from || i >= to) && a[i] != b[i])
			fail_msg("byte %zu changed (outside %zu..%zu)", i, from, to);
}

static int write_s(struct mfs_model *m, const char *path, const char *s, uint8_t **out,
		   size_t *outlen, struct mfs_err *err)
{
	return twrite(m, path, s, strlen(s), out, outlen, err);
}

static void expect_fail(struct mfs_model *m, const char *path, const void *s, size_t len,
			int code)
{
	uint8_t *out = NULL;
	size_t outlen;
	struct mfs_err err = {0};
	int r = twrite(m, path, s, len, &out, &outlen, &err);
	if (r != -code)
		fail_msg("writing '%.*s' to %s: got %d (%s), expect %d", (int)(len > 60 ? 60 : len),
			 (const char *)s, path, r, err.msg, -code);
	assert_true(err.msg[0] != '\0');
	free(out);
}

static void test_edit_values(void **state)
{
	(void)state;
	struct mfs_model *m = open_c("tensor_2x3.tensor");
	uint8_t *out;
	size_t outlen;
	struct mfs_err err = {0};
	assert_int_equal(write_s(m, "values.txt", "1 2 3\n4 5 6\n", &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size);
	only_changed(m->base, out, outlen, 33, 57);
	struct mfs_model *m2 = topen_mem(out, outlen, "t.tensor", NULL, 0);
	tcheck(m2, "values.txt", "1 2 3\n4 5 6\n");
	size_t len;
	char *d = tread(m2, "data", &len);
	float want[6] = {1, 4, 2, 5, 3, 6};
	assert_memory_equal(d, want, 24);
	free(d);
	tclose(m2);
	free(out);

	expect_fail(m, "values.txt", "1 2 3\n", 6, EINVAL);
	expect_fail(m, "values.txt", "1 2 x\n4 5 6\n", 12, EINVAL);
	expect_fail(m, "values.txt", "1e39 2 3\n4 5 6\n", 15, ERANGE);
	expect_fail(m, "values.txt", "1 2 3\n4 5 6 7\n", 14, EINVAL);
	tclose(m);

	/* A stat inside a model: only its 12 payload bytes change. */
	m = open_c("mlp_adam_2steps.model");
	const char *m1 = "params/decoder/out/b/stats/Adam.m1";
	const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, m1));
	assert_int_equal(write_s(m, "params/decoder/out/b/stats/Adam.m1/values.txt", "1\n2\n3.25\n",
				 &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size);
	only_changed(m->base, out, outlen, t->off, t->off + 12);
	m2 = topen_mem(out, outlen, "x.model", NULL, 0);
	tcheck(m2, "params/decoder/out/b/stats/Adam.m1/values.txt", "1\n2\n3.25\n");
	char *m2old = tread(m, "params/decoder/out/b/stats/Adam.m2/values.txt", NULL);
	tcheck(m2, "params/decoder/out/b/stats/Adam.m2/values.txt", m2old);
	free(m2old);
	tclose(m2);
	free(out);
	tclose(m);
}

static void test_edit_data(void **state)
{
	(void)state;
	struct mfs_model *m = open_c("param_adam_2x3.param");
	const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, "value"));
	size_t len, outlen;
	char *d = tread(m, "value/data", &len);
	float v = 99.0f;
	memcpy(d + 16, &v, 4);
	uint8_t *out;
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "value/data", d, len, &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size);
	only_changed(m->base, out, outlen, t->off + 16, t->off + 20);
	assert_memory_equal(out + t->off + 16, "\x00\x00\xc6\x42", 4);
	struct mfs_model *m2 = topen_mem(out, outlen, "p.param", NULL, 0);
	char *v2 = tread(m2, "value/values.txt", NULL);
	assert_non_null(strstr(v2, " 99\n"));   /* [0,2] is flat 4 */
	free(v2);
	tclose(m2);
	free(out);
	/* data must keep its size */
	expect_fail(m, "value/data", d, len - 4, EINVAL);
	free(d);
	tclose(m);
}

/* A NumPy v1.0 .npy file: header dict padded to a multiple of 64 bytes. */
static uint8_t *make_npy(const char *descr, bool fortran, const uint64_t *shape, int nd,
			 const void *data, size_t dlen, size_t *outlen)
{
	char dict[256], sh[128] = "";
	size_t sl = 0;
	for (int i = 0; i < nd; i++)
		sl += (size_t)snprintf(sh + sl, sizeof(sh) - sl, i ? ", %llu" : "%llu",
				       (unsigned long long)shape[i]);
	if (nd == 1)
		snprintf(sh + sl, sizeof(sh) - sl, ",");
	int n = snprintf(dict, sizeof(dict),
			 "{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", descr,
			 fortran ? "True" : "False", sh);
	size_t hl = (size_t)n + 1;
	while ((10 + hl) % 64)
		hl++;
	uint8_t *b = malloc(10 + hl + dlen);
	assert_non_null(b);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	b[8] = (uint8_t)(hl & 0xff);
	b[9] = (uint8_t)(hl >> 8);
	memset(b + 10, ' ', hl);
	memcpy(b + 10, dict, (size_t)n);
	b[10 + hl - 1] = '\n';
	memcpy(b + 10 + hl, data, dlen);
	*outlen = 10 + hl + dlen;
	return b;
}

static int write_npy(struct mfs_model *m, const char *path, const char *descr,
		     const uint64_t *shape, int nd, const float *vals, size_t n, uint8_t **out,
		     size_t *outlen, struct mfs_err *err)
{
	size_t nl;
	uint8_t *npy = make_npy(descr, true, shape, nd, vals, n * 4, &nl);
	int r = twrite(m, path, npy, nl, out, outlen, err);
	free(npy);
	return r;
}

static void test_edit_reshape(void **state)
{
	(void)state;
	float vals[512];
	for (int i = 0; i < 512; i++)
		vals[i] = (float)i;
	uint8_t *out;
	size_t outlen;
	struct mfs_err err = {0};

	/* [2,3] -> [3,2]: the Shape and bin are re-encoded in place of the old. */
	struct mfs_model *m = open_c("param_2x3_nostats.param");
	uint64_t s32[] = {3, 2};
	assert_int_equal(write_npy(m, "value/data.npy", "<f4", s32, 2, vals, 6, &out, &outlen,
				   &err), 0);
	static const uint8_t want[] = {
		0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce, 0, 0, 2, 0,
		0x92, 0xce, 0, 0, 0, 3, 0xce, 0, 0, 0, 2, 0xce, 0, 0, 0, 1, 0xc4, 24,
	};
	assert_int_equal(outlen, sizeof(want) + 24 + 5);
	assert_memory_equal(out, want, sizeof(want));
	assert_memory_equal(out + sizeof(want), vals, 24);
	assert_memory_equal(out + sizeof(want) + 24, "\xce\0\0\0\0", 5);
	struct mfs_model *m2 = topen_mem(out, outlen, "p.param", NULL, 0);
	tcheck(m2, "value/shape", "3 2\n");
	tcheck(m2, "value/values.txt", "0 3\n1 4\n2 5\n");
	tclose(m2);
	free(out);

	/* A C-ordered .npy is brought to primitiv's column-major order. */
	size_t cl;
	uint8_t *cnpy = make_npy("<f4", false, s32, 2, vals, 24, &cl);
	assert_int_equal(twrite(m, "value/data.npy", cnpy, cl, &out, &outlen, &err), 0);
	free(cnpy);
	static const float colmaj[6] = {0, 2, 4, 1, 3, 5};
	assert_memory_equal(out + sizeof(want), colmaj, 24);
	m2 = topen_mem(out, outlen, "p.param", NULL, 0);
	tcheck(m2, "value/values.txt", "0 1\n2 3\n4 5\n");
	tclose(m2);
	free(out);

	/* Trailing 1s are dropped: [6,1] is stored as [6]. */
	uint64_t s61[] = {6, 1};
	assert_int_equal(write_npy(m, "value/data.npy", "<f4", s61, 2, vals, 6, &out, &outlen,
				   &err), 0);
	m2 = topen_mem(out, outlen, "p.param", NULL, 0);
	tcheck(m2, "value/shape", "6\n");
	tclose(m2);
	free(out);

	/* More elements: bin8 becomes bin16, and the stats count that follows is kept. */
	float *big = malloc(300 * 4);
	for (int i = 0; i < 300; i++)
		big[i] = (float)i * 0.5f;
	uint64_t s100[] = {100, 3};
	assert_int_equal(write_npy(m, "value/data.npy", "<f4", s100, 2, big, 300, &out, &outlen,
				   &err), 0);
	assert_int_equal(outlen, 15 + 16 + 3 + 1200 + 5);
	assert_memory_equal(out + 31, "\xc5\x04\xb0", 3);
	m2 = topen_mem(out, outlen, "p.param", NULL, 0);
	tcheck(m2, "value/shape", "100 3\n");
	size_t len;
	char *d = tread(m2, "value/data", &len);
	assert_int_equal(len, 1200);
	assert_memory_equal(d, big, 1200);
	free(d);
	tclose(m2);
	free(out);
	free(big);

	/* A scalar. */
	assert_int_equal(write_npy(m, "value/data.npy", "<f4", NULL, 0, vals + 7, 1, &out, &outlen,
				   &err), 0);
	assert_memory_equal(out + 15, "\x90\xce\0\0\0\x01\xc4\x04\0\0\xe0\x40", 12);
	free(out);

	/* Refused: 9 dims, an empty dimension, another dtype. */
	uint64_t s9[] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
	assert_int_equal(write_npy(m, "value/data.npy", "<f4", s9, 9, vals, 512, &out, &outlen,
				   &err), -EINVAL);
	assert_non_null(strstr(err.msg, "at most 8"));
	uint64_t s03[] = {0, 3};
	err.msg[0] = '\0';
	assert_int_equal(write_npy(m, "value/data.npy", "<f4", s03, 2, vals, 0, &out, &outlen,
				   &err), -EINVAL);
	assert_true(err.msg[0] != '\0');
	size_t nl;
	double dv[6] = {0};
	uint8_t *npy = make_npy("<f8", true, s32, 2, dv, sizeof(dv), &nl);
	expect_fail(m, "value/data.npy", npy, nl, EINVAL);
	free(npy);
	tclose(m);

	/* Batch: the same shape keeps batch 2; another shape is stored with batch 1. */
	m = open_c("tensor_vec3_batch2.tensor");
	assert_int_equal(write_npy(m, "data.npy", "<f4", s32, 2, vals, 6, &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size);
	only_changed(m->base, out, outlen, 28, 52);
	free(out);
	uint64_t s23[] = {2, 3};
	assert_int_equal(write_npy(m, "data.npy", "<f4", s23, 2, vals, 6, &out, &outlen, &err), 0);
	m2 = topen_mem(out, outlen, "t.tensor", NULL, 0);
	tcheck(m2, "shape", "2 3\n");
	tcheck(m2, "batch", "1\n");
	tcheck(m2, "values.txt", "0 2 4\n1 3 5\n");
	tclose(m2);
	free(out);
	tclose(m);

	/* Inside a model: every other tensor keeps its bytes. */
	m = open_c("mlp_adam_2steps.model");
	uint64_t s5[] = {5};
	assert_int_equal(write_npy(m, "params/decoder/out/b/value/data.npy", "<f4", s5, 1, vals, 5,
				   &out, &outlen, &err), 0);
	assert_int_equal(outlen, m->size + 8);
	m2 = topen_mem(out, outlen, "x.model", NULL, 0);
	assert_int_equal(m2->ntensors, m->ntensors);
	tcheck(m2, "params/decoder/out/b/value/values.txt", "0\n1\n2\n3\n4\n");
	tcheck(m2, "params/decoder/out/b/stats/Adam.m1/shape", "3\n");
	for (uint32_t i = 0; i < m->ntensors; i++) {
		const struct mfs_tensor *a = &m->tensors[i], *b = &m2->tensors[i];
		if (a->dir == tnode(m, "params/decoder/out/b/value"))
			continue;
		assert_int_equal(a->nelem, b->nelem);
		assert_memory_equal(m->base + a->off, m2->base + b->off, a->nelem * 4);
	}
	tclose(m2);
	free(out);
	tclose(m);
}

/* A same-shape C-order .npy into a column-major tensor: diffed and patched
 * through a gather (no reordered copy). Only the changed elements' bytes
 * change, and they land at their column-major places. */
static void check_c_order(const char *file, const char *view)
{
	struct mfs_model *m = open_c(file);
	const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, view));
	assert_non_null(t);
	assert_int_equal(t->order, MFS_COL_MAJOR);
	uint64_t n = t->nelem, dims[8];
	uint32_t nd = t->ndim;
	memcpy(dims, t->dims, nd * sizeof(*dims));
	/* The logical (C-order) values, read through values order: element at
	 * logical index i is storage element mfs_tensor_storage_index(t, i). */
	float *logical = malloc(n * 4);
	assert_non_null(logical);
	const float *stored = (const float *)(m->base + t->off);
	for (uint64_t i = 0; i < n; i++)
		memcpy(&logical[i], stored + mfs_tensor_storage_index(t, i), 4);
	/* Change every third element and a block at the end. */
	for (uint64_t i = 0; i < n; i++)
		if (i % 3 == 1 || i + 5 >= n)
			logical[i] = (float)i + 0.25f;
	size_t nl, outlen;
	uint8_t *npy = make_npy("<f4", false, dims, (int)nd, logical, n * 4, &nl), *out;
	char path[256];
	snprintf(path, sizeof(path), "%.200s%sdata.npy", view, *view ? "/" : "");
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, path, npy, nl, &out, &outlen, &err), 0);
	free(npy);
	assert_int_equal(outlen, m->size);
	only_changed(m->base, out, outlen, t->off, t->off + n * 4);
	const float *now = (const float *)(out + t->off);
	for (uint64_t i = 0; i < n; i++)
		assert_memory_equal(now + mfs_tensor_storage_index(t, i), &logical[i], 4);
	free(out);
	free(logical);
	tclose(m);
}

static void test_edit_c_order(void **state)
{
	(void)state;
	check_c_order("tensor_bin32_128x128.tensor", "");
	check_c_order("tensor_2x2x2.tensor", "");
	check_c_order("tensor_2x3.tensor", "");
}

static void test_edit_configs(void **state)
{
	(void)state;
	struct mfs_model *m = open_c("sgd_default.optimizer");
	uint8_t *out;
	size_t outlen;
	struct mfs_err err = {0};
	mfs_id id = tnode(m, "uint_configs/Optimizer.epoch");
	size_t off = (size_t)(m->nodes[id].tag >> 2);
	assert_int_equal(m->base[off], 0xce);
	assert_int_equal(write_s(m, "uint_configs/Optimizer.epoch", "4294967295\n", &out, &outlen,
				 &err), 0);
	assert_int_equal(outlen, m->size);
	only_changed(m->base, out, outlen, off + 1, off + 5);
	assert_memory_equal(out + off, "\xce\xff\xff\xff\xff", 5);
	struct mfs_model *m2 = topen_mem(out, outlen, "o.optimizer", NULL, 0);
	tcheck(m2, "uint_configs/Optimizer.epoch", "4294967295\n");
	tclose(m2);
	free(out);
	/* without a newline */
	assert_int_equal(write_s(m, "uint_configs/Optimizer.epoch", "7", &out, &outlen, &err), 0);
	assert_memory_equal(out + off, "\xce\0\0\0\x07", 5);
	free(out);

	id = tnode(m, "float_configs/SGD.eta");
	off = (size_t)(m->nodes[id].tag >> 2);
	assert_memory_equal(m->base + off, "\xca\x3d\xcc\xcc\xcd", 5);
	assert_int_equal(write_s(m, "float_configs/SGD.eta", "0.25\n", &out, &outlen, &err), 0);
	only_changed(m->base, out, outlen, off + 1, off + 5);
	assert_memory_equal(out + off, "\xca\x3e\x80\0\0", 5);
	m2 = topen_mem(out, outlen, "o.optimizer", NULL, 0);
	tcheck(m2, "float_configs/SGD.eta", "0.25\n");
	tcheck(m2, "uint_configs/Optimizer.epoch", "0\n");
	tclose(m2);
	free(out);

	expect_fail(m, "uint_configs/Optimizer.epoch", "4294967296\n", 11, ERANGE);
	expect_fail(m, "uint_configs/Optimizer.epoch", "-1\n", 3, ERANGE);
	expect_fail(m, "uint_configs/Optimizer.epoch", "abc\n", 4, EINVAL);
	expect_fail(m, "uint_configs/Optimizer.epoch", "1.5\n", 4, EINVAL);
	expect_fail(m, "uint_configs/Optimizer.epoch", "\n", 1, EINVAL);
	expect_fail(m, "float_configs/SGD.eta", "1e39\n", 5, ERANGE);
	expect_fail(m, "float_configs/SGD.eta", "x\n", 2, EINVAL);
	expect_fail(m, "float_configs/SGD.eta", "0.1 0.2\n", 8, EINVAL);

	/* Read-only files refuse writes. */
	out = NULL;
	assert_true(write_s(m, "version", "0.2\n", &out, &outlen, &err) < 0);
	free(out);
	tclose(m);

	/* A map16 optimizer: the entry order and every other byte are kept. */
	m = open_c("custom_subclass_map16.optimizer");
	id = tnode(m, "uint_configs/Custom.big");
	off = (size_t)(m->nodes[id].tag >> 2);
	assert_int_equal(write_s(m, "uint_configs/Custom.big", "12\n", &out, &outlen, &err), 0);
	only_changed(m->base, out, outlen, off + 1, off + 5);
	m2 = topen_mem(out, outlen, "o.optimizer", NULL, 0);
	tcheck(m2, "uint_configs/Custom.big", "12\n");
	char *a = tlist(m, "float_configs"), *b = tlist(m2, "float_configs");
	assert_string_equal(a, b);
	free(a);
	free(b);
	tclose(m2);
	free(out);
	tclose(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edit_values),
		cmocka_unit_test(test_edit_data),
		cmocka_unit_test(test_edit_reshape),
		cmocka_unit_test(test_edit_c_order),
		cmocka_unit_test(test_edit_configs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
