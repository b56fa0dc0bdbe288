/* Unit tests of the primitiv codec on the corpus: trees and values against
 * MANIFEST.md, byte-identical rewrites of every writable view and re-encodes
 * of every tensor. Edits are in test_primitiv_edit.c.
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

#define DIR "primitiv/"

static const char *const corpus[] = {
	"adadelta_default.optimizer", "adagrad_default.optimizer", "adam_custom.optimizer",
	"bin_boundaries.model", "custom_subclass_map16.optimizer", "deep_nesting_17.model",
	"edge_names.model", "empty.model", "mlp_adam_2steps.model", "mlp_adam_2steps.optimizer",
	"mlp_adam_2steps_saved_without_stats.model", "mlp_init_nostats.model",
	"mlp_sgd_3steps.model", "momentumsgd_default.optimizer", "param_2x3_nostats.param",
	"param_adam_2x3.param", "param_adam_2x3_saved_without_stats.param",
	"param_custom_stats.param", "param_interior_ones.param", "param_momentumsgd_vec3.param",
	"param_scalar.param", "rmsprop_default.optimizer", "sgd_3steps.optimizer",
	"sgd_default.optimizer", "shape_2x3.shape", "shape_8d.shape", "shape_batch4.shape",
	"shape_scalar.shape", "shape_trailing_ones.shape", "tensor_2x2x2.tensor",
	"tensor_2x3.tensor", "tensor_bin16_100x3.tensor", "tensor_bin32_128x128.tensor",
	"tensor_scalar.tensor", "tensor_special_values.tensor", "tensor_vec3_batch2.tensor",
	"tied_weights.model",
};
#define NCORPUS (sizeof(corpus) / sizeof(corpus[0]))

static struct mfs_model *open_c(const char *file)
{
	char rel[256];
	snprintf(rel, sizeof(rel), DIR "%s", file);
	return topen(rel);
}

static void check_list(struct mfs_model *m, const char *path, const char *expect)
{
	char *got = tlist(m, path);
	if (strcmp(got, expect) != 0)
		fail_msg("listing of '%s' in %s:\n  got    \"%s\"\n  expect \"%s\"", path, m->name,
			 got, expect);
	free(got);
}

/* The first n elements of a tensor's data view equal these decimal float32
 * values (the MANIFEST's 9-digit numbers; NULL: not checked), in storage
 * order. */
static void check_data(struct mfs_model *m, const char *dir, const char *const *vals, size_t n)
{
	char path[512];
	size_t len;
	snprintf(path, sizeof(path), "%s/data", dir);
	char *d = tread(m, path, &len);
	assert_true(len >= n * 4);
	for (size_t i = 0; i < n; i++) {
		if (!vals[i])
			continue;
		float want = strtof(vals[i], NULL), got;
		memcpy(&got, d + 4 * i, 4);
		if (memcmp(&want, &got, 4) != 0)
			fail_msg("%s of %s element %zu: got %.9g, expect %s", path, m->name, i,
				 (double)got, vals[i]);
	}
	free(d);
}

/* ---- trees and values ----------------------------------------------------- */

static void test_shapes(void **state)
{
	(void)state;
	static const struct { const char *file, *shape, *batch; } cases[] = {
		{"shape_2x3.shape", "2 3\n", "1\n"},
		{"shape_scalar.shape", "\n", "1\n"},
		{"shape_trailing_ones.shape", "4 1 5\n", "1\n"},
		{"shape_batch4.shape", "7\n", "4\n"},
		{"shape_8d.shape", "2 3 4 5 6 7 8 9\n", "1\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mfs_model *m = open_c(cases[i].file);
		check_list(m, "", "version type shape batch");
		tcheck(m, "version", "0.1\n");
		tcheck(m, "type", "shape\n");
		tcheck(m, "shape", cases[i].shape);
		tcheck(m, "batch", cases[i].batch);
		assert_int_equal(m->ntensors, 0);
		tclose(m);
	}
}

static void test_tensors(void **state)
{
	(void)state;
	static const struct { const char *file, *shape, *values, *batch; } cases[] = {
		{"tensor_2x3.tensor", "2 3\n", "0.5 1.5 2.5\n10.5 11.5 12.5\n", "1\n"},
		{"tensor_scalar.tensor", "\n", "-2.75\n", "1\n"},
		{"tensor_vec3_batch2.tensor", "3 2\n", "1 101\n2 102\n3 103\n", "2\n"},
		{"tensor_2x2x2.tensor", "2 2 2\n", "0 4\n2 6\n\n1 5\n3 7\n", "1\n"},
		{"tensor_special_values.tensor", "6\n", "0\n-0\ninf\n-inf\nnan\n1.1754944e-38\n",
		 "1\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mfs_model *m = open_c(cases[i].file);
		check_list(m, "", "version type shape dtype values.txt data data.npy batch");
		tcheck(m, "type", "tensor\n");
		tcheck(m, "shape", cases[i].shape);
		tcheck(m, "dtype", "float32\n");
		tcheck(m, "values.txt", cases[i].values);
		tcheck(m, "batch", cases[i].batch);
		tclose(m);
	}

	/* tensor_2x3: data is the raw payload (from byte 33); data.npy is
	 * Fortran-ordered with the same bytes after its header. */
	struct mfs_model *m = open_c("tensor_2x3.tensor");
	size_t len, nlen;
	char *d = tread(m, "data", &len);
	assert_int_equal(len, 24);
	assert_memory_equal(d, m->base + 33, 24);
	char *npy = tread(m, "data.npy", &nlen);
	assert_true(nlen > 24 && memcmp(npy, "\x93NUMPY", 6) == 0);
	assert_non_null(strstr(npy + 10, "'fortran_order': True"));
	assert_non_null(strstr(npy + 10, "'shape': (2, 3)"));
	assert_non_null(strstr(npy + 10, "'<f4'"));
	assert_memory_equal(npy + nlen - 24, m->base + 33, 24);
	free(d);
	free(npy);
	tclose(m);

	m = open_c("tensor_scalar.tensor");
	d = tread(m, "data", &len);
	assert_memory_equal(d, "\x00\x00\x30\xc0", 4);
	free(d);
	tclose(m);

	m = open_c("tensor_special_values.tensor");
	d = tread(m, "data", &len);
	assert_memory_equal(d, "\0\0\0\0\0\0\0\x80\0\0\x80\x7f\0\0\x80\xff\0\0\xc0\x7f\0\0\x80\0",
			    24);
	free(d);
	tclose(m);

	/* bin16 [100,3]: [i,j] = 10i + j + 0.5; bin32 [128,128]: flat k = 0.5k */
	m = open_c("tensor_bin16_100x3.tensor");
	tcheck(m, "shape", "100 3\n");
	char *exp = malloc(100 * 40), *p = exp;
	for (int i = 0; i < 100; i++)
		p += sprintf(p, "%d.5 %d.5 %d.5\n", 10 * i, 10 * i + 1, 10 * i + 2);
	tcheck(m, "values.txt", exp);
	free(exp);
	tclose(m);

	m = open_c("tensor_bin32_128x128.tensor");
	tcheck(m, "shape", "128 128\n");
	exp = malloc(128 * 128 * 10);
	p = exp;
	for (int i = 0; i < 128; i++)
		for (int j = 0; j < 128; j++) {
			int k = i + 128 * j;
			p += sprintf(p, k % 2 ? "%d.5" : "%d", k / 2);
			*p++ = j == 127 ? '\n' : ' ';
		}
	*p = '\0';
	tcheck(m, "values.txt", exp);
	free(exp);
	d = tread(m, "data", &len);
	float v;
	memcpy(&v, d + 133 * 4, 4);
	assert_true(v == 66.5f);
	memcpy(&v, d + len - 4, 4);
	assert_true(v == 8191.5f);
	free(d);
	tclose(m);
}

static void test_parameters(void **state)
{
	(void)state;
	struct mfs_model *m = open_c("param_2x3_nostats.param");
	check_list(m, "", "version type value stats");
	tcheck(m, "type", "parameter\n");
	check_list(m, "value", "shape dtype values.txt data data.npy");
	check_list(m, "stats", "");
	tcheck(m, "value/shape", "2 3\n");
	tcheck(m, "value/values.txt", "0.5 1.5 2.5\n10.5 11.5 12.5\n");
	tclose(m);

	m = open_c("param_scalar.param");
	tcheck(m, "value/shape", "\n");
	tcheck(m, "value/values.txt", "3.5\n");
	tclose(m);

	m = open_c("param_interior_ones.param");
	tcheck(m, "value/shape", "2 1 3\n");
	tcheck(m, "value/values.txt", "0.5 1.5 2.5\n\n10.5 11.5 12.5\n");
	tclose(m);

	static const char *const adam_v[] = {"0.498000056", "10.4979992", "1.50199997", NULL,
					     NULL, "12.4979992"};
	static const char *const adam_m1[] = {"0.189800054", "3.60980082", "-0.189800024",
					      "3.2298007", "-0.569800138", "2.84980059"};
	static const char *const adam_m2[] = {"0.0019949784", "0.721553683", "0.00199497817",
					      "0.577635527", "0.0179787744", "0.449709177"};
	m = open_c("param_adam_2x3.param");
	check_list(m, "stats", "Adam.m2 Adam.m1");
	check_data(m, "value", adam_v, 3);
	size_t len;
	char *d = tread(m, "value/data", &len);
	assert_memory_equal(d, "\xdd\xf9\xfe\x3e", 4);
	float v;
	memcpy(&v, d + 20, 4);
	assert_true(v == strtof(adam_v[5], NULL));
	free(d);
	check_data(m, "stats/Adam.m1", adam_m1, 6);
	check_data(m, "stats/Adam.m2", adam_m2, 6);
	tcheck(m, "stats/Adam.m1/shape", "2 3\n");
	tclose(m);

	m = open_c("param_adam_2x3_saved_without_stats.param");
	check_list(m, "stats", "");
	check_data(m, "value", adam_v, 3);
	tclose(m);

	static const char *const mom_v[] = {"0.980000019", "1.96000004", "2.94000006"};
	static const char *const mom_m[] = {"-0.02", "-0.04", "-0.06"};
	m = open_c("param_momentumsgd_vec3.param");
	check_list(m, "stats", "MomentumSGD.m");
	check_data(m, "value", mom_v, 3);
	check_data(m, "stats/MomentumSGD.m", mom_m, 3);
	tcheck(m, "stats/MomentumSGD.m/shape", "3\n");
	tclose(m);

	m = open_c("param_custom_stats.param");
	char k40[41];
	memset(k40, 'k', 40);
	k40[40] = '\0';
	char expect[128], path[128];
	snprintf(expect, sizeof(expect), "%s 統計 custom_batch3", k40);
	check_list(m, "stats", expect);
	tcheck(m, "value/values.txt", "1 3\n2 4\n");
	snprintf(path, sizeof(path), "stats/%s/values.txt", k40);
	tcheck(m, path, "7 7\n7 7\n");
	tcheck(m, "stats/統計/shape", "\n");
	tcheck(m, "stats/統計/values.txt", "42\n");
	tcheck(m, "stats/custom_batch3/shape", "4 3\n");
	tcheck(m, "stats/custom_batch3/values.txt",
	       "100 104 108\n101 105 109\n102 106 110\n103 107 111\n");
	tclose(m);
}

static void check_mlp_tree(struct mfs_model *m, const char *stats)
{
	static const char *const leaves[] = {
		"decoder/hidden/b", "decoder/hidden/w", "decoder/out/b", "decoder/out/w",
		"embed", "encoder/b", "encoder/w",
	};
	tcheck(m, "type", "model\n");
	check_list(m, "", "version type params");
	check_list(m, "params", "decoder embed encoder");
	check_list(m, "params/decoder", "hidden out");
	check_list(m, "params/decoder/hidden", "b w");
	check_list(m, "params/encoder", "b w");
	for (size_t i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++) {
		char p[128];
		snprintf(p, sizeof(p), "params/%s", leaves[i]);
		check_list(m, p, "value stats");
		snprintf(p, sizeof(p), "params/%s/stats", leaves[i]);
		check_list(m, p, stats);
	}
	tcheck(m, "params/embed/value/shape", "4 10\n");
	tcheck(m, "params/encoder/w/value/shape", "8 4\n");
	tcheck(m, "params/decoder/hidden/w/value/shape", "8 8\n");
	tcheck(m, "params/decoder/out/w/value/shape", "3 8\n");
	tcheck(m, "params/decoder/out/b/value/shape", "3\n");
}

static void test_models(void **state)
{
	(void)state;
	struct mfs_model *m = open_c("mlp_init_nostats.model");
	check_mlp_tree(m, "");
	tcheck(m, "params/decoder/out/b/value/values.txt", "-0.5\n-0.375\n-0.25\n");
	tcheck(m, "params/encoder/w/value/values.txt",
	       "0.5 1.5 2.5 3.5\n10.5 11.5 12.5 13.5\n20.5 21.5 22.5 23.5\n"
	       "30.5 31.5 32.5 33.5\n40.5 41.5 42.5 43.5\n50.5 51.5 52.5 53.5\n"
	       "60.5 61.5 62.5 63.5\n70.5 71.5 72.5 73.5\n");
	tclose(m);

	static const char *const enc_w[] = {"0.497999996", "10.498003", "20.4985275"};
	static const char *const out_w[] = {"0.497999936", "10.5019999", NULL, "1.50199997"};
	static const char *const out_b[] = {"-0.498000085", "-0.376999378", "-0.251999944"};
	static const char *const out_b_m1[] = {"-0.168753162", "0.0234225933", "0.406025112"};
	static const char *const out_b_m2[] = {"0.0015770935", "3.04153527e-05", "0.00912930164"};
	static const char *const enc_b_m1[] = {"0.00847736374"};
	m = open_c("mlp_adam_2steps.model");
	check_mlp_tree(m, "Adam.m2 Adam.m1");
	check_data(m, "params/encoder/w/value", enc_w, 3);
	check_data(m, "params/decoder/out/w/value", out_w, 2);
	check_data(m, "params/decoder/out/b/value", out_b, 3);
	check_data(m, "params/decoder/out/b/stats/Adam.m1", out_b_m1, 3);
	check_data(m, "params/decoder/out/b/stats/Adam.m2", out_b_m2, 3);
	tcheck(m, "params/encoder/b/stats/Adam.m1/shape", "8\n");
	size_t len;
	char *d = tread(m, "params/decoder/out/w/value/data", &len);
	float v;
	memcpy(&v, d + 3 * 4, 4);   /* [0,1] is flat 3 in a [3,8] column-major */
	assert_true(v == strtof(out_w[3], NULL));
	free(d);
	d = tread(m, "params/encoder/b/stats/Adam.m1/data", &len);
	memcpy(&v, d, 4);
	assert_true(v == strtof(enc_b_m1[0], NULL));
	free(d);
	tclose(m);

	m = open_c("mlp_adam_2steps_saved_without_stats.model");
	check_mlp_tree(m, "");
	check_data(m, "params/encoder/w/value", enc_w, 3);
	tclose(m);

	static const char *const sgd_b[] = {"-0.282763928", "-0.401885182", "-0.764973164"};
	static const char *const sgd_enc_b[] = {"-0.51153034"};
	m = open_c("mlp_sgd_3steps.model");
	check_mlp_tree(m, "");
	check_data(m, "params/decoder/out/b/value", sgd_b, 3);
	d = tread(m, "params/encoder/b/value/data", &len);
	memcpy(&v, d, 4);
	assert_true(v == strtof(sgd_enc_b[0], NULL));
	free(d);
	tclose(m);

	m = open_c("empty.model");
	check_list(m, "", "version type params");
	check_list(m, "params", "");
	tclose(m);

	m = open_c("deep_nesting_17.model");
	check_list(m, "params", "m0");
	check_list(m, "params/m0", "m1 top");
	tcheck(m, "params/m0/m1/m2/m3/m4/m5/m6/m7/m8/m9/m10/m11/m12/m13/m14/m15/leaf/value/"
	       "values.txt", "1 3\n2 4\n");
	tcheck(m, "params/m0/top/value/shape", "\n");
	tcheck(m, "params/m0/top/value/values.txt", "0.5\n");
	tclose(m);

	m = open_c("tied_weights.model");
	check_list(m, "params", "a b");
	check_list(m, "params/b", "own w");
	tcheck(m, "params/a/w/value/values.txt", "1.5\n2.5\n3.5\n");
	tcheck(m, "params/b/w/value/values.txt", "1.5\n2.5\n3.5\n");
	tcheck(m, "params/b/own/value/values.txt", "-1\n-2\n");
	tclose(m);

	m = open_c("bin_boundaries.model");
	check_list(m, "params", "n16383_bin16 n16384_bin32 n63_bin8 n64_bin16");
	static const struct { const char *name; int n; } bb[] = {
		{"n16383_bin16", 16383}, {"n16384_bin32", 16384},
		{"n63_bin8", 63}, {"n64_bin16", 64},
	};
	for (size_t i = 0; i < 4; i++) {
		char p[128], s[32];
		snprintf(p, sizeof(p), "params/%s/value/shape", bb[i].name);
		snprintf(s, sizeof(s), "%d\n", bb[i].n);
		tcheck(m, p, s);
		snprintf(p, sizeof(p), "params/%s/value/values.txt", bb[i].name);
		char *e = malloc((size_t)bb[i].n * 8 + 1), *q = e;
		for (int k = 0; k < bb[i].n; k++)
			q += sprintf(q, "%d\n", k);
		tcheck(m, p, e);
		free(e);
	}
	tclose(m);
}

static void test_edge_names(void **state)
{
	(void)state;
	struct mfs_model *m = open_c("edge_names.model");
	char x32[33], y300[301], yesc[257], expect[1024];
	memset(x32, 'x', 32);
	x32[32] = '\0';
	memset(y300, 'y', 300);
	y300[300] = '\0';
	size_t yl = mfs_escape_name(y300, 300, yesc);
	assert_true(yl <= 255);
	snprintf(expect, sizeof(expect),
		 "%% %%2E%%2E a%%2Fb dot.name with space %s %s サブ 重み", x32, yesc);
	check_list(m, "params", expect);
	tcheck(m, "params/%/value/values.txt", "7\n8\n");
	tcheck(m, "params/%2E%2E/value/values.txt", "13\n14\n");
	tcheck(m, "params/a%2Fb/value/values.txt", "3\n4\n");
	tcheck(m, "params/dot.name/value/values.txt", "5\n6\n");
	tcheck(m, "params/with space/value/values.txt", "17\n18\n");
	char p[600];
	snprintf(p, sizeof(p), "params/%s/value/values.txt", x32);
	tcheck(m, p, "9\n10\n");
	snprintf(p, sizeof(p), "params/%s/value/values.txt", yesc);
	tcheck(m, p, "11\n12\n");
	tcheck(m, "params/サブ/deep1/deep2/leaf/value/values.txt", "15\n16\n");
	tcheck(m, "params/重み/value/values.txt", "1\n2\n");
	tclose(m);
}

static void test_optimizers(void **state)
{
	(void)state;
	static const char *const common[] = {
		"Optimizer.clip_threshold", "0", "Optimizer.l2_strength", "0",
		"Optimizer.lr_scale", "1",
	};
	static const struct { const char *file, *epoch; int nf; const char *f[16]; } cases[] = {
		{"sgd_default.optimizer", "0", 1, {"SGD.eta", "0.1"}},
		{"sgd_3steps.optimizer", "3", 1, {"SGD.eta", "0.1"}},
		{"mlp_adam_2steps.optimizer", "2", 4,
		 {"Adam.alpha", "0.001", "Adam.beta1", "0.9", "Adam.beta2", "0.999", "Adam.eps",
		  "1e-08"}},
		{"momentumsgd_default.optimizer", "0", 2,
		 {"MomentumSGD.eta", "0.01", "MomentumSGD.momentum", "0.9"}},
		{"adagrad_default.optimizer", "0", 2,
		 {"AdaGrad.eta", "0.001", "AdaGrad.eps", "1e-08"}},
		{"rmsprop_default.optimizer", "0", 3,
		 {"RMSProp.eta", "0.01", "RMSProp.alpha", "0.9", "RMSProp.eps", "1e-08"}},
		{"adadelta_default.optimizer", "0", 2,
		 {"AdaDelta.rho", "0.95", "AdaDelta.eps", "1e-06"}},
	};
	char p[256], e[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mfs_model *m = open_c(cases[i].file);
		check_list(m, "", "version type uint_configs float_configs");
		tcheck(m, "type", "optimizer\n");
		check_list(m, "uint_configs", "Optimizer.epoch");
		snprintf(e, sizeof(e), "%s\n", cases[i].epoch);
		tcheck(m, "uint_configs/Optimizer.epoch", e);
		assert_int_equal(m->nodes[tnode(m, "float_configs")].nchild, cases[i].nf + 3);
		for (int k = 0; k < cases[i].nf + 3; k++) {
			const char *const *kv = k < cases[i].nf ? &cases[i].f[2 * k]
							       : &common[2 * (k - cases[i].nf)];
			const char *key = kv[0], *val = kv[1];
			snprintf(p, sizeof(p), "float_configs/%s", key);
			snprintf(e, sizeof(e), "%s\n", val);
			tcheck(m, p, e);
		}
		tclose(m);
	}

	struct mfs_model *m = open_c("adam_custom.optimizer");
	tcheck(m, "uint_configs/Optimizer.epoch", "1234567\n");
	tcheck(m, "float_configs/Adam.alpha", "0.002\n");
	tcheck(m, "float_configs/Adam.beta1", "0.8\n");
	tcheck(m, "float_configs/Adam.beta2", "0.99\n");
	tcheck(m, "float_configs/Adam.eps", "1e-06\n");
	tcheck(m, "float_configs/Optimizer.lr_scale", "0.5\n");
	tcheck(m, "float_configs/Optimizer.l2_strength", "0.0001\n");
	tcheck(m, "float_configs/Optimizer.clip_threshold", "5\n");
	tclose(m);

	m = open_c("custom_subclass_map16.optimizer");
	assert_int_equal(m->nodes[tnode(m, "uint_configs")].nchild, 22);
	assert_int_equal(m->nodes[tnode(m, "float_configs")].nchild, 23);
	tcheck(m, "uint_configs/Optimizer.epoch", "3\n");
	tcheck(m, "uint_configs/Custom.big", "4000000000\n");
	for (int k = 0; k < 20; k++) {
		snprintf(p, sizeof(p), "uint_configs/Custom.u%d", k);
		snprintf(e, sizeof(e), "%d\n", k * 1000);
		tcheck(m, p, e);
		snprintf(p, sizeof(p), "float_configs/Custom.f%d", k);
		snprintf(e, sizeof(e), "%g\n", k * 0.25);
		tcheck(m, p, e);
	}
	tclose(m);
}

/* ---- byte identity ---------------------------------------------------------- */

/* Writing every writable view's own content back changes nothing, and a
 * reshape edit to the same shape re-encodes every tensor to its own bytes. */
static void test_identity(void **state)
{
	(void)state;
	size_t views = 0, tensors = 0;
	for (size_t f = 0; f < NCORPUS; f++) {
		struct mfs_model *m = open_c(corpus[f]);
		twalk(m);
		for (mfs_id id = 0; id < m->nnodes; id++) {
			const struct mfs_node *n = &m->nodes[id];
			if (n->kind != MFS_K_FILE || !(n->flags & MFS_NF_WRITABLE))
				continue;
			char path[4096];
			assert_true(mfs_node_path(m, id, path, sizeof(path)) >= 0);
			size_t len, outlen;
			char *c = tread(m, path, &len);
			uint8_t *out = NULL;
			struct mfs_err err = {0};
			int r = twrite(m, path, c, len, &out, &outlen, &err);
			if (r != 1)
				fail_msg("%s: rewriting %s gave %d (%s)", corpus[f], path, r,
					 err.msg);
			free(c);
			views++;
		}
		for (uint32_t ti = 0; ti < m->ntensors; ti++) {
			const struct mfs_tensor *t = &m->tensors[ti];
			struct mfs_run run = {0, t->nelem, m->base + t->off};
			struct mfs_edit e = {
				.kind = MFS_E_TENSOR, .node = t->dir, .tensor = ti, .reshape = true,
				.dtype = (enum mfs_dtype)t->dtype, .ndim = t->ndim, .dims = t->dims,
				.runs = &run, .nruns = 1,
			};
			struct mfs_patch p;
			struct mfs_err err = {0};
			mfs_patch_init(&p);
			int r = m->codec->edit(m, &e, &p, &err);
			if (r < 0)
				fail_msg("%s tensor %u: %s", corpus[f], ti, err.msg);
			assert_int_equal(mfs_patch_sort(&p, &err), 0);
			assert_int_equal(p.n, 1);
			size_t outlen;
			uint8_t *out = tapply(&p, m->base, (size_t)m->size, &outlen);
			assert_int_equal(outlen, m->size);
			if (memcmp(out, m->base, outlen) != 0)
				fail_msg("%s tensor %u re-encodes differently", corpus[f], ti);
			free(out);
			mfs_patch_free(&p);
			tensors++;
		}
		tclose(m);
	}
	print_message("[ info ] %zu views rewritten, %zu tensors re-encoded byte-identically\n",
		      views, tensors);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shapes),
		cmocka_unit_test(test_tensors),
		cmocka_unit_test(test_parameters),
		cmocka_unit_test(test_models),
		cmocka_unit_test(test_edge_names),
		cmocka_unit_test(test_optimizers),
		cmocka_unit_test(test_identity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
