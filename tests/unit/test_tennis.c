/* Unit tests of the TenniS codec, reading: every corpus file shows its
 * MANIFEST.md values and the tree of docs/layout.md "TenniS"; every dtype code,
 * packed params, names, links and the bid, on hand-built files too. */
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

#include "test_tennis.h"

/* One tensor of a corpus file: its directory, what its views show, and
 * where its data is in the file (MANIFEST.md "@N"). */
struct texpect {
	const char *dir;
	const char *dtype;
	const char *shape;
	const char *values;   /* whole values.txt, or a prefix ending in "..." */
	long off;             /* data offset; -1: not listed */
	size_t bytes;         /* data length */
};

static void check_tensor(struct mfs_model *m, const uint8_t *file, const struct texpect *x)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/dtype", x->dir);
	char want[64];
	snprintf(want, sizeof(want), "%s\n", x->dtype);
	tcheck(m, path, want);
	snprintf(path, sizeof(path), "%s/shape", x->dir);
	tcheck(m, path, x->shape);
	if (x->values) {
		snprintf(path, sizeof(path), "%s/values.txt", x->dir);
		size_t vl = strlen(x->values);
		if (vl >= 3 && !strcmp(x->values + vl - 3, "...")) {
			size_t len;
			char *got = tread(m, path, &len);
			if (len < vl - 3 || memcmp(got, x->values, vl - 3) != 0)
				fail_msg("%s: got \"%.80s\", expect a prefix \"%s\"", path, got,
					 x->values);
			free(got);
		} else {
			tcheck(m, path, x->values);
		}
	}
	if (x->off < 0)
		return;
	/* data is the file's own bytes; data.npy ends with them. */
	snprintf(path, sizeof(path), "%s/data", x->dir);
	size_t len;
	char *got = tread(m, path, &len);
	assert_int_equal(len, x->bytes);
	assert_memory_equal(got, file + x->off, len);
	free(got);
	snprintf(path, sizeof(path), "%s/data.npy", x->dir);
	if (mfs_resolve(m, path) == MFS_NONE)
		return;
	got = tread(m, path, &len);
	assert_true(len >= 128 + x->bytes);
	assert_memory_equal(got, "\x93NUMPY\x01\x00", 8);
	assert_memory_equal(got + len - x->bytes, file + x->off, x->bytes);
	free(got);
}

static void check_all(struct mfs_model *m, const char *rel, const struct texpect *x, size_t n)
{
	size_t len;
	uint8_t *file = tennis_load(rel, &len);
	for (size_t i = 0; i < n; i++)
		check_tensor(m, file, &x[i]);
	free(file);
}

static void check_list(const struct mfs_model *m, const char *path, const char *expect)
{
	char *got = tlist(m, path);
	if (strcmp(got, expect) != 0)
		fail_msg("%s of %s lists \"%s\", expect \"%s\"", path, m->name, got, expect);
	free(got);
}

static void check_link(const struct mfs_model *m, const char *path, const char *target)
{
	char buf[256];
	mfs_id id = tnode(m, path);
	assert_int_equal(m->nodes[id].kind, MFS_K_LINK);
	assert_true(mfs_link_target(m, id, buf, sizeof(buf)) > 0);
	assert_string_equal(buf, target);
}

static const char *const tensor_views = "shape dtype values.txt data data.npy";

/* ---- convnet_small.tsm ---------------------------------------------------- */

static void test_convnet_small(void **state)
{
	(void)state;
	struct mfs_model *m = topen("tennis/convnet_small.tsm");
	assert_string_equal(m->codec->name, "tennis");
	check_list(m, "", "header inputs outputs nodes by-name");
	check_list(m, "header", "fake code reserved");
	tcheck(m, "header/fake", "0\n");
	tcheck(m, "header/code", "0x19910929\n");
	size_t len;
	char *res = tread(m, "header/reserved", &len);
	static const char zero[120];
	assert_int_equal(len, 120);
	assert_memory_equal(res, zero, 120);
	free(res);
	tcheck(m, "inputs", "4\n");
	tcheck(m, "outputs", "5\n");
	check_list(m, "nodes", "0 1 2 3 4 5");
	check_list(m, "nodes/0", "op name inputs params");

	static const struct {
		const char *name, *op, *inputs, *params;
	} nodes[] = {
		{"_const_conv1_weights", "<const>", "\n", "#name #op value"},
		{"_const_conv1_bias_bias", "<const>", "\n", "#name #op value"},
		{"conv1", "conv2d", "4 0\n",
		 "#name #op dilation format padding padding_value stride"},
		{"conv1_bias", "add_bias", "2 1\n", "#name #op dim format"},
		{"input", "<param>", "\n", "#dtype #name #op #shape"},
		{"relu1", "relu", "3\n", "#name #op"},
	};
	for (unsigned i = 0; i < 6; i++) {
		char p[64], want[64];
		snprintf(p, sizeof(p), "nodes/%u/name", i);
		snprintf(want, sizeof(want), "%s\n", nodes[i].name);
		tcheck(m, p, want);
		snprintf(p, sizeof(p), "nodes/%u/op", i);
		snprintf(want, sizeof(want), "%s\n", nodes[i].op);
		tcheck(m, p, want);
		snprintf(p, sizeof(p), "nodes/%u/inputs", i);
		tcheck(m, p, nodes[i].inputs);
		snprintf(p, sizeof(p), "nodes/%u/params", i);
		check_list(m, p, nodes[i].params);
		snprintf(p, sizeof(p), "by-name/%s", nodes[i].name);
		snprintf(want, sizeof(want), "../nodes/%u", i);
		check_link(m, p, want);
	}
	check_list(m, "by-name",
		   "_const_conv1_weights _const_conv1_bias_bias conv1 conv1_bias input relu1");
	check_list(m, "nodes/0/params/value", tensor_views);
	check_list(m, "nodes/2/params/format", tensor_views);
	/* The node's #op/#name are also params, shown as strings. */
	tcheck(m, "nodes/2/params/#op/values.txt", "conv2d\n");

	static const struct texpect x[] = {
		{"nodes/0/params/value", "float32", "4 3 3 3\n",
		 "-0.5 -0.49 -0.48\n-0.47 -0.46 -0.45\n-0.44 -0.43 -0.42000002\n\n-0.41 -0.4 -0.39\n...",
		 255, 432},
		{"nodes/1/params/value", "float32", "4\n", "0.1\n-0.2\n0.3\n-0.4\n", 788, 16},
		{"nodes/2/params/dilation", "int32", "4\n", "1\n1\n1\n1\n", 890, 16},
		{"nodes/2/params/format", "char8", "4\n", "NCHW\n", 929, 4},
		{"nodes/2/params/padding", "int32", "4 2\n", "0 0\n0 0\n1 1\n1 1\n", 961, 32},
		{"nodes/2/params/padding_value", "int64", "\n", "0\n", 1019, 8},
		{"nodes/2/params/stride", "int32", "4\n", "1\n1\n1\n1\n", 1050, 16},
		{"nodes/3/params/dim", "int32", "\n", "1\n", 1158, 4},
		{"nodes/3/params/format", "char8", "4\n", "NCHW\n", 1185, 4},
		{"nodes/4/params/#dtype", "int32", "\n", "10\n", 1224, 4},
		{"nodes/4/params/#shape", "int32", "4\n", "1\n3\n8\n8\n", 1305, 16},
	};
	check_all(m, "convnet_small.tsm", x, sizeof(x) / sizeof(x[0]));

	/* char8 data.npy is a uint8 array */
	char *npy = tread(m, "nodes/2/params/format/data.npy", &len);
	assert_non_null(strstr(npy + 10, "'descr': '|u1'"));
	free(npy);
	npy = tread(m, "nodes/0/params/value/data.npy", &len);
	assert_non_null(strstr(npy + 10, "'descr': '<f4'"));
	assert_non_null(strstr(npy + 10, "'fortran_order': False"));
	assert_non_null(strstr(npy + 10, "'shape': (4, 3, 3, 3)"));
	free(npy);
	assert_true(twalk(m) > 0);
	tclose(m);
}

/* ---- dtypes_zoo.tsm ------------------------------------------------------- */

static void test_dtypes_zoo(void **state)
{
	(void)state;
	struct mfs_model *m = topen("tennis/dtypes_zoo.tsm");
	tcheck(m, "inputs", "16\n");
	tcheck(m, "outputs", "17\n");
	tcheck(m, "nodes/17/name", "pack_all\n");
	tcheck(m, "nodes/17/op", "_pack\n");
	tcheck(m, "nodes/17/inputs",
	       "16 13 8 20 19 18 21 0 1 2 22 3 4 5 6 7 9 10 11 12 14 15\n");
	check_list(m, "nodes/17/params", "#name #op dim epsilon format shape smooth");
	tcheck(m, "nodes/5/name", "v_string_utf8\n");
	check_link(m, "by-name/v_float16", "../nodes/2");

	static const struct texpect x[] = {
		{"nodes/0/params/value", "int64", "3\n",
		 "-9223372036854775808\n-1\n9223372036854775807\n", 230, 24},
		{"nodes/1/params/value", "uint64", "3\n",
		 "0\n18446744073709551615\n1311768467463790320\n", 341, 24},
		/* float16: the shortest text that reads back to the same half */
		{"nodes/2/params/value", "float16", "5\n", "1\n-2\n0.5\n65500\ninf\n", 453, 10},
		{"nodes/3/params/value", "float64", "3\n", "3.141592653589793\n-1e+300\n5e-324\n",
		 551, 24},
		{"nodes/4/params/value", "char8", "13\n", "hello, TenniS\n", 662, 13},
		{"nodes/5/params/value", "char8", "9\n", "\xe6\xa8\xa1\xe5\x9e\x8b-\xc3\xa9\n", 767,
		 9},
		{"nodes/6/params/value", "bool", "3\n", "1\n0\n1\n", 861, 3},
		{"nodes/7/params/value", "complex64", "2\n", "1+2j\n-3.5-0.5j\n", 954, 16},
		{"nodes/8/params/value", "uint8", "4\n", "0\n1\n128\n255\n", 1056, 4},
		{"nodes/9/params/value", "complex128", "2 1\n", "1+1j\n-1e-300+2j\n", 1155, 32},
		{"nodes/10/params/value", "int32", "\n", "42\n", 1269, 4},
		{"nodes/11/params/value", "int64", "\n", "7\n", 1361, 8},
		{"nodes/12/params/value", "float64", "\n", "2.5\n", 1461, 8},
		{"nodes/13/params/value", "int8", "5\n", "-128\n-1\n0\n1\n127\n", 1554, 5},
		{"nodes/14/params/value", "bool", "\n", "1\n", 1640, 1},
		{"nodes/15/params/value", "float32", "2 3 4 5\n",
		 "0 1 2 3 4\n5 6 7 8 9\n10 11 12 13 14\n15 16 17 18 19\n\n20 21 22 23 24\n...",
		 1744, 480},
		{"nodes/16/params/#dtype", "int32", "\n", "10\n", 2251, 4},
		{"nodes/16/params/#shape", "int32", "2\n", "2\n2\n", 2328, 8},
		{"nodes/17/params/dim", "int32", "\n", "1\n", 2415, 4},
		{"nodes/17/params/epsilon", "float32", "\n", "1e-05\n", 2439, 4},
		{"nodes/17/params/format", "char8", "4\n", "NCHW\n", 2466, 4},
		{"nodes/17/params/shape", "int32", "3\n", "1\n-1\n3\n", 2492, 12},
		{"nodes/17/params/smooth", "bool", "\n", "1\n", 2523, 1},
		{"nodes/18/params/value", "int32", "4\n", "-2147483648\n-1\n0\n2147483647\n", 2698,
		 16},
		{"nodes/19/params/value", "uint16", "3\n", "0\n65535\n4660\n", 2801, 6},
		{"nodes/20/params/value", "int16", "2 2\n", "-32768 -2\n2 32767\n", 2897, 8},
		{"nodes/21/params/value", "uint32", "3\n", "0\n4294967295\n305419896\n", 2992, 12},
		{"nodes/22/params/value", "float32", "2 3\n", "1.5 -0.25 3e+38\n1e-45 0 -0\n", 3096,
		 24},
	};
	check_all(m, "dtypes_zoo.tsm", x, sizeof(x) / sizeof(x[0]));
	size_t len;
	char *npy = tread(m, "nodes/9/params/value/data.npy", &len);
	assert_non_null(strstr(npy + 10, "'descr': '<c16'"));
	assert_non_null(strstr(npy + 10, "'shape': (2, 1)"));
	free(npy);
	npy = tread(m, "nodes/10/params/value/data.npy", &len);
	assert_non_null(strstr(npy + 10, "'shape': ()"));
	free(npy);
	assert_true(twalk(m) > 0);
	tclose(m);
}

/* ---- packed_params.tsm ---------------------------------------------------- */

static void test_packed_params(void **state)
{
	(void)state;
	struct mfs_model *m = topen("tennis/packed_params.tsm");
	tcheck(m, "inputs", "3 0\n");
	tcheck(m, "outputs", "2\n");
	tcheck(m, "nodes/1/inputs", "3 0\n");
	check_list(m, "nodes/1/params",
		   "#name #op cell_anchors mixed single_field_pack strides");
	/* Several fields: a directory of fields; one field: the tensor itself. */
	check_list(m, "nodes/1/params/cell_anchors", "0 1 2");
	check_list(m, "nodes/1/params/mixed", "0 1 2");
	check_list(m, "nodes/1/params/single_field_pack", tensor_views);
	check_list(m, "nodes/4/params/value", "0 1");
	check_list(m, "by-name", "features anchors merge image packed_const");
	static const struct texpect x[] = {
		{"nodes/0/params/#dtype", "int32", "\n", "10\n", 175, 4},
		{"nodes/0/params/#shape", "int32", "4\n", "1\n16\n8\n8\n", 259, 16},
		{"nodes/1/params/cell_anchors/0", "float32", "3 4\n",
		 "-8 -8 8 8\n-16 -16 16 16\n...", 381, 48},
		{"nodes/1/params/cell_anchors/1", "float32", "1 4\n", "-32 -32 32 32\n", 442, 16},
		{"nodes/1/params/cell_anchors/2", "float32", "2 4\n", "-64 -32 64 32\n-32 -64 32 64\n",
		 471, 32},
		{"nodes/1/params/mixed/0", "int32", "\n", "1\n", 521, 4},
		{"nodes/1/params/mixed/1", "char8", "4\n", "asdf\n", 534, 4},
		{"nodes/1/params/mixed/2", "float64", "2\n", "2\n3\n", 547, 16},
		{"nodes/1/params/single_field_pack", "int16", "2\n", "9\n8\n", 597, 4},
		{"nodes/1/params/strides", "int32", "3\n", "4\n8\n16\n", 625, 12},
		{"nodes/3/params/#shape", "int32", "4\n", "1\n3\n32\n32\n", 821, 16},
		{"nodes/4/params/value/0", "uint8", "3\n", "1\n2\n3\n", 928, 3},
		{"nodes/4/params/value/1", "float32", "1 1\n", "0.5\n", 944, 4},
	};
	check_all(m, "packed_params.tsm", x, sizeof(x) / sizeof(x[0]));
	assert_true(twalk(m) > 0);
	tclose(m);
}

/* ---- edge_cases.tsm ------------------------------------------------------- */

static void test_edge_cases(void **state)
{
	(void)state;
	struct mfs_model *m = topen("tennis/edge_cases.tsm");
	tcheck(m, "header/fake", "195948557\n");  /* 0x0BADF00D */
	size_t len;
	char *res = tread(m, "header/reserved", &len);
	assert_int_equal(len, 120);
	assert_memory_equal(res, "modelfs reserved header bytes test", 34);
	for (unsigned i = 34; i < 120; i++)
		assert_int_equal((uint8_t)res[i], i - 33);
	free(res);
	tcheck(m, "inputs", "8 5\n");
	tcheck(m, "outputs", "6 3\n");
	tcheck(m, "nodes/3/inputs", "0 0\n");
	check_list(m, "nodes/3/params", "#name #op");
	tcheck(m, "nodes/5/op", "<param>\n");
	check_list(m, "nodes/5/params", "#name #op");
	tcheck(m, "nodes/7/name", "op_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\n");
	tcheck(m, "nodes/7/op", "custom_op_yyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\n");
	tcheck(m, "nodes/7/inputs", "5 8 10 1 2 4 9\n");
	/* The empty param name is escaped as "%". */
	check_list(m, "nodes/7/params", "% #name #op long_string ppppppppppppppppppppppppppppppp");
	/* An empty packed tensor is an empty directory. */
	check_list(m, "nodes/9/params", "#name #op value");
	check_list(m, "nodes/9/params/value", "");
	check_list(m, "by-name",
		   "shared_const empty_2d empty_string uses_shared_twice seven_dims a out "
		   "op_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx b empty_pack empty_f32");
	check_link(m, "by-name/empty_f32", "../nodes/10");

	char *lstr = malloc(1002);
	assert_non_null(lstr);
	memset(lstr, 'z', 1000);
	memcpy(lstr + 1000, "\n", 2);
	tcheck(m, "nodes/7/params/long_string/values.txt", lstr);
	free(lstr);

	static const struct texpect x[] = {
		{"nodes/0/params/value", "float32", "1\n", "1\n", 243, 4},
		{"nodes/1/params/value", "int64", "3 0\n", "", 338, 0},
		{"nodes/2/params/value", "char8", "0\n", "\n", 429, 0},
		{"nodes/4/params/value", "uint8", "2 2 2 2 2 2 2\n", "0 1\n2 3\n\n4 5\n6 7\n\n...",
		 620, 128},
		{"nodes/7/params/%", "char8", "16\n", "empty-name-param\n", 897, 16},
		{"nodes/7/params/long_string", "char8", "1000\n", NULL, 1066, 1000},
		{"nodes/7/params/ppppppppppppppppppppppppppppppp", "int32", "\n", "1\n", 2110, 4},
		{"nodes/8/params/#dtype", "int32", "\n", "5\n", 2169, 4},
		{"nodes/8/params/#shape", "int32", "2\n", "-1\n3\n", 2246, 8},
		{"nodes/10/params/value", "float32", "0\n", "", 2422, 0},
	};
	check_all(m, "edge_cases.tsm", x, sizeof(x) / sizeof(x[0]));
	assert_true(twalk(m) > 0);
	tclose(m);
}

/* ---- cpp_resaved/ --------------------------------------------------------- */

static void test_cpp_resaved(void **state)
{
	(void)state;
	struct mfs_model *m = topen("tennis/cpp_resaved/convnet_small.tsm");
	tcheck(m, "inputs", "1\n");
	tcheck(m, "outputs", "5\n");
	check_list(m, "nodes/0/params", "value #op #name");
	check_list(m, "nodes/3/params",
		   "stride padding_value format dilation #op padding #name");
	tcheck(m, "nodes/3/inputs", "1 0\n");
	static const struct texpect c[] = {
		{"nodes/0/params/value", "float32", "4 3 3 3\n", "-0.5 -0.49 -0.48\n...", 186, 432},
		{"nodes/1/params/#shape", "int32", "4\n", "1\n3\n8\n8\n", 718, 16},
		{"nodes/1/params/#dtype", "int32", "\n", "10\n", 807, 4},
		{"nodes/2/params/value", "float32", "4\n", "0.1\n-0.2\n0.3\n-0.4\n", 841, 16},
		{"nodes/3/params/padding", "int32", "4 2\n", "0 0\n0 0\n1 1\n1 1\n", 1131, 32},
		{"nodes/4/params/dim", "int32", "\n", "1\n", 1249, 4},
	};
	check_all(m, "cpp_resaved/convnet_small.tsm", c, sizeof(c) / sizeof(c[0]));
	assert_true(twalk(m) > 0);
	tclose(m);

	m = topen("tennis/cpp_resaved/dtypes_zoo.tsm");
	tcheck(m, "inputs", "15\n");
	tcheck(m, "outputs", "22\n");
	check_list(m, "nodes/22/params", "shape format epsilon dim #op smooth #name");
	static const struct texpect z[] = {
		{"nodes/14/params/value", "float16", "5\n", "1\n-2\n0.5\n65500\ninf\n", 2071, 10},
		{"nodes/17/params/value", "complex128", "2 1\n", "1+1j\n-1e-300+2j\n", 2375, 32},
		{"nodes/22/params/epsilon", "float32", "\n", "1e-05\n", 2933, 4},
		{"nodes/22/params/smooth", "bool", "\n", "1\n", 3001, 1},
	};
	check_all(m, "cpp_resaved/dtypes_zoo.tsm", z, sizeof(z) / sizeof(z[0]));
	assert_true(twalk(m) > 0);
	tclose(m);

	m = topen("tennis/cpp_resaved/packed_params.tsm");
	check_list(m, "nodes/3/params",
		   "strides single_field_pack mixed cell_anchors #op #name");
	static const struct texpect p[] = {
		{"nodes/2/params/value/0", "uint8", "3\n", "1\n2\n3\n", 429, 3},
		{"nodes/3/params/mixed/2", "float64", "2\n", "2\n3\n", 636, 16},
		{"nodes/3/params/cell_anchors/2", "float32", "2 4\n",
		 "-64 -32 64 32\n-32 -64 32 64\n", 775, 32},
	};
	check_all(m, "cpp_resaved/packed_params.tsm", p, sizeof(p) / sizeof(p[0]));
	assert_true(twalk(m) > 0);
	tclose(m);

	/* The C++ writer turns an empty pack into one VOID scalar: shape, dtype
	 * and a 0-byte data view only. */
	m = topen("tennis/cpp_resaved/edge_cases.tsm");
	tcheck(m, "header/fake", "0\n");
	tcheck(m, "outputs", "10 9\n");
	check_list(m, "nodes/6/params/value", "shape dtype data");
	check_list(m, "nodes/8/params", "ppppppppppppppppppppppppppppppp long_string #op #name %");
	static const struct texpect e[] = {
		{"nodes/6/params/value", "void", "\n", NULL, 713, 0},
		{"nodes/8/params/%", "char8", "16\n", "empty-name-param\n", 2239, 16},
		{"nodes/7/params/value", "uint8", "2 2 2 2 2 2 2\n", "0 1\n...", 826, 128},
	};
	check_all(m, "cpp_resaved/edge_cases.tsm", e, sizeof(e) / sizeof(e[0]));
	assert_true(twalk(m) > 0);
	tclose(m);
}

/* ---- every dtype code, hand-built ----------------------------------------- */

static const char *const code_names[33] = {
	"void", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
	"float16", "float32", "float64", "ptr", "char8", "char16", "char32", "unknown8",
	"unknown16", "unknown32", "unknown64", "unknown128", "bool", "complex32", "complex64",
	"complex128", "sink8q0", "sink8q1", "sink8q2", "sink8q3", "sink8q4", "sink8q5",
	"sink8q6", "sink8q7",
};
static const uint8_t code_sizes[33] = {
	0, 1, 1, 2, 2, 4, 4, 8, 8, 2, 4, 8, 8, 1, 2, 4, 1, 2, 4, 8, 16, 1, 4, 8, 16,
	1, 1, 1, 1, 1, 1, 1, 1,
};

/* One node with a param "t<code>" of shape [2] per dtype code (void: [3]),
 * and scalars, a 32-dimensional tensor and an empty one with huge dims. */
static uint8_t *all_types_file(size_t *len)
{
	struct tb t = {0};
	tb_header(&t, 7);
	tb_u32(&t, 0);
	tb_u32(&t, 1);
	tb_u32(&t, 0);
	tb_u32(&t, 1);
	tb_u32(&t, 2 + 33 + 4);
	tb_str_param(&t, "#op", "zoo");
	tb_str_param(&t, "#name", "all");
	for (unsigned c = 0; c < 33; c++) {
		char name[8];
		uint8_t data[32];
		for (unsigned i = 0; i < sizeof(data); i++)
			data[i] = (uint8_t)(i + 1);
		if (c == 9)        /* float16 1, 0.1 */
			memcpy(data, "\x00\x3c\x66\x2e", 4);
		else if (c == 21)  /* bool */
			memcpy(data, "\x01\x00", 2);
		else if (c == 22)  /* complex32 1+2j, -0.5+0j */
			memcpy(data, "\x00\x3c\x00\x40\x00\xb8\x00\x00", 8);
		uint32_t dim = c == 0 ? 3 : 2;
		snprintf(name, sizeof(name), "t%u", c);
		tb_str(&t, name);
		tb_u32(&t, 1);
		tb_field(&t, (uint8_t)c, 1, &dim, data, 2 * (size_t)code_sizes[c]);
	}
	uint32_t one = 1, v = 5;
	tb_str(&t, "shape1");
	tb_u32(&t, 1);
	tb_field(&t, 5, 1, &one, &v, 4);
	tb_str(&t, "scalar");
	tb_u32(&t, 1);
	tb_field(&t, 5, 0, NULL, &v, 4);
	uint32_t ones[32];
	for (unsigned k = 0; k < 32; k++)
		ones[k] = 1;
	tb_str(&t, "dims32");
	tb_u32(&t, 1);
	tb_field(&t, 2, 32, ones, "\x2a", 1);
	uint32_t huge[4] = {0xffffffffu, 0, 0xffffffffu, 0xffffffffu};
	tb_str(&t, "empty_huge");
	tb_u32(&t, 1);
	tb_field(&t, 10, 4, huge, NULL, 0);
	tb_u32(&t, 0);
	*len = t.n;
	return t.b;
}

static void test_all_dtypes(void **state)
{
	(void)state;
	size_t len;
	uint8_t *f = all_types_file(&len);
	struct mfs_model *m = topen_mem(f, len, "all.tsm", NULL, 0);
	tcheck(m, "header/fake", "7\n");
	tcheck(m, "nodes/0/op", "zoo\n");
	for (unsigned c = 0; c < 33; c++) {
		char dir[64], path[96], want[32];
		snprintf(dir, sizeof(dir), "nodes/0/params/t%u", c);
		snprintf(path, sizeof(path), "%s/dtype", dir);
		snprintf(want, sizeof(want), "%s\n", code_names[c]);
		tcheck(m, path, want);
		snprintf(path, sizeof(path), "%s/shape", dir);
		tcheck(m, path, c == 0 ? "3\n" : "2\n");
		const struct mfs_tensor *t = mfs_node_tensor(m, tnode(m, dir));
		assert_non_null(t);
		assert_int_equal(t->esize, code_sizes[c]);
		bool opaque = c == 0 || c == 12 || (c >= 14 && c <= 20) || c >= 25;
		check_list(m, dir, opaque ? "shape dtype data" : tensor_views);
		/* Types without values are shown only (char16/32 bytes may be
		 * overwritten in place). */
		snprintf(path, sizeof(path), "%s/data", dir);
		bool writable = m->nodes[tnode(m, path)].flags & MFS_NF_WRITABLE;
		assert_int_equal(writable, !opaque || c == 14 || c == 15);
		assert_int_equal(!!(t->flags & MFS_TF_RETYPE), !opaque);
		size_t dl;
		char *d = tread(m, path, &dl);
		assert_int_equal(dl, 2 * (size_t)code_sizes[c]);
		free(d);
	}
	tcheck(m, "nodes/0/params/t9/values.txt", "1\n0.1\n");
	tcheck(m, "nodes/0/params/t21/values.txt", "1\n0\n");
	tcheck(m, "nodes/0/params/t22/values.txt", "1+2j\n-0.5+0j\n");
	tcheck(m, "nodes/0/params/t1/values.txt", "1\n2\n");
	tcheck(m, "nodes/0/params/t5/values.txt", "67305985\n134678021\n");
	tcheck(m, "nodes/0/params/shape1/shape", "1\n");
	tcheck(m, "nodes/0/params/shape1/values.txt", "5\n");
	tcheck(m, "nodes/0/params/scalar/shape", "\n");
	tcheck(m, "nodes/0/params/scalar/values.txt", "5\n");
	tcheck(m, "nodes/0/params/dims32/shape",
	       "1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n");
	tcheck(m, "nodes/0/params/dims32/values.txt", "42\n");
	tcheck(m, "nodes/0/params/empty_huge/shape", "4294967295 0 4294967295 4294967295\n");
	tcheck(m, "nodes/0/params/empty_huge/values.txt", "");
	assert_true(twalk(m) > 0);
	assert_int_equal(tennis_reencode_all(m), 33 + 2 + 4);
	tclose(m);
	free(f);
}

/* ---- names ---------------------------------------------------------------- */

static void test_names(void **state)
{
	(void)state;
	struct tb t = {0};
	tb_header(&t, 0);
	tb_u32(&t, 0);
	tb_u32(&t, 0);
	tb_u32(&t, 6);
	static const char *const names[] = {"dup", "a/b", "dup", "..", NULL, "x"};
	for (unsigned i = 0; i < 6; i++) {
		uint32_t v = i;
		if (i == 4) {  /* no #op, no #name, and a param named twice */
			tb_u32(&t, 2);
			for (unsigned k = 0; k < 2; k++) {
				tb_str(&t, "w");
				tb_u32(&t, 1);
				tb_field(&t, 5, 0, NULL, &v, 4);
			}
		} else if (i == 5) {  /* #name with two fields: not a name */
			uint32_t one = 1;
			tb_u32(&t, 1);
			tb_str(&t, "#name");
			tb_u32(&t, 2);
			tb_field(&t, 13, 1, &one, "x", 1);
			tb_field(&t, 13, 1, &one, "y", 1);
		} else {
			tb_u32(&t, 2);
			tb_str_param(&t, "#name", names[i]);
			tb_str_param(&t, "#op", "op");
		}
		tb_u32(&t, 1);
		tb_u32(&t, (i + 1) % 6);
	}
	struct mfs_model *m = topen_mem(t.b, t.n, "names.tsm", NULL, 0);
	check_list(m, "by-name", "a%2Fb %2E%2E");
	check_link(m, "by-name/a%2Fb", "../nodes/1");
	check_link(m, "by-name/%2E%2E", "../nodes/3");
	check_list(m, "nodes/4", "inputs params");
	check_list(m, "nodes/4/params", "w w~1");
	tcheck(m, "nodes/4/params/w~1/values.txt", "4\n");
	tcheck(m, "nodes/4/inputs", "5\n");
	check_list(m, "nodes/5", "inputs params");
	check_list(m, "nodes/5/params/#name", "0 1");
	tcheck(m, "nodes/2/name", "dup\n");
	assert_true(twalk(m) > 0);
	tclose(m);
	free(t.b);
}

/* ---- detection ------------------------------------------------------------ */

static void test_bid(void **state)
{
	(void)state;
	size_t len;
	uint8_t *f = tennis_load("convnet_small.tsm", &len);
	/* By content, whatever the name. */
	struct mfs_model *m = topen_mem(f, len, "weights.bin", NULL, 0);
	assert_string_equal(m->codec->name, "tennis");
	tcheck(m, "nodes/5/name", "relu1\n");
	tclose(m);
	const struct mfs_codec *c = mfs_probe(f, MFS_HEAD_MAX, len, "x");
	assert_non_null(c);
	assert_string_equal(c->name, "tennis");
	/* SeetaFace .sta files have the mark at offset 0, not 4. */
	uint8_t sta[200] = {0x29, 0x09, 0x91, 0x19, 1, 0, 0, 0};
	c = mfs_probe(sta, sizeof(sta), sizeof(sta), "model.sta");
	assert_true(c == NULL || strcmp(c->name, "tennis") != 0);
	/* The extension alone bids (low), so that a .tsm that is not one is
	 * reported: open says why. */
	uint8_t junk[200] = {0};
	c = mfs_probe(junk, sizeof(junk), sizeof(junk), "x.tsm");
	assert_string_equal(c->name, "tennis");
	struct mfs_err jerr = {0};
	assert_int_equal(mfs_model_open_mem(&m, junk, sizeof(junk), "x.tsm", NULL, 0, c, &jerr),
			 -EINVAL);
	assert_non_null(strstr(jerr.msg, "not a TenniS module"));
	/* The code but a header cut short: recognised, then refused. */
	struct mfs_err err = {0};
	assert_int_equal(mfs_model_open_mem(&m, f, 100, "x.tsm", NULL, 0, NULL, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "header"));
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convnet_small),
		cmocka_unit_test(test_dtypes_zoo),
		cmocka_unit_test(test_packed_params),
		cmocka_unit_test(test_edge_cases),
		cmocka_unit_test(test_cpp_resaved),
		cmocka_unit_test(test_all_dtypes),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_bid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
