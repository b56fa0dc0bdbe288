/* Unit tests of the PyTorch codec's reading: the restricted pickle reader
 * on the same object in every protocol (tests/data/pytorch/pickle*.pkl,
 * written by Python's pickle) and on hostile opcodes (underflow, unknown
 * memo, deep marks, truncation, extension codes), Python's repr of floats
 * and ints, and the samples torch.save wrote (tests/data/pytorch/
 * MANIFEST.md): dicts split at dots, literals, inert objects that run
 * nothing, tensors of every dtype, views (transposed, sliced, strided,
 * expanded), shared storages, the legacy stream, broken files refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "pickle.h"
#include "pt_repr.h"

static char *repr_of(const uint8_t *p, size_t n, struct mfs_err *err, int *rc)
{
	struct pk pk;
	*rc = pk_parse(&pk, p, n, NULL, err);
	char *out = NULL;
	if (*rc == 0) {
		struct pt_repr rp;
		pt_repr_init(&rp, pk.nv);
		const char *s;
		size_t len;
		*rc = pt_repr(&rp, &pk, pk.root, &s, &len, err);
		if (*rc == 0) {
			out = malloc(len + 1);
			memcpy(out, s, len);
			out[len] = '\0';
		}
		pt_repr_free(&rp);
	}
	pk_free(&pk);
	return out;
}

static void test_protocols(void **state)
{
	(void)state;
	const char *want = "{'a': [1, -2, 2.5, 'x\\n\xc3\xa9\xe4\xb8\xad', None, True, (3,), "
			   "1180591620717411303424, -18446744073709551616], 'b': b'\\x01', "
			   "'s': frozenset({1})}";
	for (int p = 0; p <= 5; p++) {
		char name[64];
		snprintf(name, sizeof(name), "pytorch/pickle%d.pkl", p);
		size_t n;
		uint8_t *b = tload(tdata(name), &n);
		struct mfs_err err = {0};
		int rc;
		char *s = repr_of(b, n, &err, &rc);
		if (rc)
			fail_msg("protocol %d: %s", p, err.msg);
		assert_string_equal(s, want);
		free(s);
		free(b);
	}
}

static int refuse(const char *p, size_t n, const char *what)
{
	struct mfs_err err = {0};
	int rc;
	char *s = repr_of((const uint8_t *)p, n, &err, &rc);
	free(s);
	if (rc == 0)
		fail_msg("accepted: %s", what);
	assert_true(err.msg[0] != '\0');
	return rc;
}

static void test_hostile_opcodes(void **state)
{
	(void)state;
	assert_int_equal(refuse("", 0, "empty"), -EINVAL);
	assert_int_equal(refuse("\x80\x02", 2, "no STOP"), -EINVAL);
	assert_int_equal(refuse(".", 1, "STOP of nothing"), -EINVAL);
	assert_int_equal(refuse("a.", 2, "APPEND of nothing"), -EINVAL);
	assert_int_equal(refuse("]K\x01(a.", 6, "APPEND below the mark"), -EINVAL);
	assert_int_equal(refuse("h\x05.", 3, "a memo never put"), -EINVAL);
	assert_int_equal(refuse("j\xff\xff\xff\xff.", 6, "a memo index 2^32 - 1"), -EINVAL);
	assert_int_equal(refuse("X\xff\xff\xff\x7f.", 6, "a string longer than the pickle"), -EINVAL);
	assert_int_equal(refuse("\x8d\xff\xff\xff\xff\xff\xff\xff\xff.", 10, "BINUNICODE8 of 2^64 - 1"), -EINVAL);
	assert_int_equal(refuse("\x8b\xff\xff\xff\xff.", 6, "a negative LONG4"), -EINVAL);
	assert_int_equal(refuse("\x82\x01.", 3, "EXT1"), -EINVAL);
	assert_int_equal(refuse("\x97.", 2, "NEXT_BUFFER"), -EINVAL);
	assert_int_equal(refuse("\x80\x06N.", 4, "protocol 6"), -EINVAL);
	assert_int_equal(refuse("\xff.", 2, "an unknown opcode"), -EINVAL);
	assert_int_equal(refuse("\x95\xff\x00\x00\x00\x00\x00\x00\x00N.", 11, "a FRAME past the end"), -EINVAL);
	assert_int_equal(refuse("NNb.", 4, "BUILD of None"), -EINVAL);
	assert_int_equal(refuse("(K\x01" "d.", 5, "a dict of one item"), -EINVAL);
	assert_int_equal(refuse("S'abc\n.", 7, "an unterminated STRING"), -EINVAL);
	/* Marks nested 1001 deep; 1000 are read. */
	char deep[1100];
	memset(deep, '(', 1001);
	memcpy(deep + 1001, "N.", 2);
	assert_int_equal(refuse(deep, 1003, "1001 marks"), -EINVAL);
	/* Lists nested 2000 deep parse, but are more than a repr writes. */
	char lists[4100];
	size_t k = 0;
	for (int i = 0; i < 2000; i++)
		lists[k++] = ']';
	for (int i = 0; i < 1999; i++)
		lists[k++] = 'a';
	lists[k++] = '.';
	assert_int_equal(refuse(lists, k, "lists 2000 deep"), -EINVAL);
	/* A list that holds itself: parsed (the memo allows it), never written out. */
	assert_int_equal(refuse("]q\x00h\x00" "a.", 7, "a list holding itself"), -EINVAL);
}

static void check_repr(const char *p, size_t n, const char *want)
{
	struct mfs_err err = {0};
	int rc;
	char *s = repr_of((const uint8_t *)p, n, &err, &rc);
	if (rc)
		fail_msg("%s: %s", want, err.msg);
	assert_string_equal(s, want);
	free(s);
}

static void test_values(void **state)
{
	(void)state;
	check_repr("G?\xb9\x99\x99\x99\x99\x99\x9a.", 10, "0.1");
	check_repr("G>Ey\x8e\xe2\x30\x8c:.", 10, "1e-08");
	check_repr("G\x7f\xf0\x00\x00\x00\x00\x00\x00.", 10, "inf");
	check_repr("G\xff\xf8\x00\x00\x00\x00\x00\x00.", 10, "nan");
	check_repr("G\x80\x00\x00\x00\x00\x00\x00\x00.", 10, "-0.0");
	check_repr("G\x40\x00\x00\x00\x00\x00\x00\x00.", 10, "2.0");
	check_repr("GC\x40\x00\x00\x00\x00\x00\x00.", 10, "9007199254740992.0");
	check_repr("GCA\xc3y7\xe0\x80\x00.", 10, "1e+16");
	check_repr("F1e300\n.", 8, "1e+300");
	check_repr("F1e999\n.", 8, "inf");    /* out of range: Python's float() */
	check_repr("F-1e999\n.", 9, "-inf");
	check_repr("\x8a\x00.", 3, "0");
	check_repr("\x8a\x01\xff.", 4, "-1");
	check_repr("\x8a\x08\x00\x00\x00\x00\x00\x00\x00\x80.", 11, "-9223372036854775808");
	check_repr("\x8a\x09\xff\xff\xff\xff\xff\xff\xff\xff\x00.", 12, "18446744073709551615");
	check_repr("I-0042\n.", 8, "-42");
	check_repr("L0099999999999999999999L\n.", 26, "99999999999999999999");
	check_repr("I00\n.", 5, "False");
	check_repr("V\\u00e9a\\\\b\n.", 13, "'\xc3\xa9" "a\\\\\\\\b'");
	check_repr("S'it\\'s'\n.", 10, "\"it's\"");
	check_repr("U\x03\x01\"'.", 6, "'\\x01\"\\''");
	check_repr("C\x02\x7f\x80.", 5, "b'\\x7f\\x80'");
	check_repr(").", 2, "()");
	check_repr("\x8f(K\x01K\x02\x90.", 8, "{1, 2}");
	check_repr("(K\x01K\x02l.", 7, "[1, 2]");
	check_repr("(K\x01K\x02" "d.", 7, "{1: 2}");
	check_repr("K\x01K\x02\x86\x32\x86.", 8, "((1, 2), (1, 2))");
	check_repr("cos\nsystem\n.", 12, "os.system");
}

/* ---- the codec ----------------------------------------------------------- */

static void test_state_dict(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/state_dict.pt");
	char *l = tlist(m, "");
	assert_string_equal(l, "0 1 index");
	free(l);
	tcheck(m, "0/weight/values.txt", "0 0.125 0.25\n0.375 0.5 0.625\n");
	tcheck(m, "0/bias/values.txt", "0.5\n-0.25\n");
	tcheck(m, "1/num_batches_tracked/shape", "\n");
	tcheck(m, "1/num_batches_tracked/dtype", "int64\n");
	tcheck(m, "1/num_batches_tracked/values.txt", "0\n");
	tcheck(m, "1/running_var/values.txt", "1\n1\n");
	char *ix = tread(m, "index", NULL);
	assert_non_null(strstr(ix, "0.weight\tfloat32\t2 3\t"));
	assert_non_null(strstr(ix, "1.num_batches_tracked\tint64\t\t"));
	free(ix);
	twalk(m);
	tclose(m);
}

static void test_hf_tied(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/hf_tied.bin");
	tcheck(m, "model/embed_tokens/weight/dtype", "bfloat16\n");
	tcheck(m, "lm_head/weight/values.txt", "0 0.25 0.5\n0.75 1 1.25\n1.5 1.75 2\n2.25 2.5 2.75\n");
	tcheck(m, "model/layers/0/self_attn/q_proj/weight/dtype", "float16\n");
	tcheck(m, "model/layers/0/self_attn/q_proj/weight/values.txt", "0 0.5 1\n1.5 2 2.5\n3 3.5 4\n");
	const struct mfs_tensor *a = mfs_node_tensor(m, tnode(m, "lm_head/weight"));
	const struct mfs_tensor *b = mfs_node_tensor(m, tnode(m, "model/embed_tokens/weight"));
	assert_int_equal(a->off, b->off);
	assert_string_equal(a->storage, b->storage);
	twalk(m);
	tclose(m);
}

static void test_optim_lightning(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/optim.pt");
	tcheck(m, "param_groups/0/lr", "0.001\n");
	tcheck(m, "param_groups/0/eps", "1e-08\n");
	tcheck(m, "param_groups/0/betas", "(0.9, 0.999)\n");
	tcheck(m, "param_groups/0/amsgrad", "False\n");
	tcheck(m, "param_groups/0/foreach", "None\n");
	tcheck(m, "param_groups/0/params", "[0]\n");
	tcheck(m, "state/0/exp_avg/values.txt", "0.05\n-0.1\n");
	tclose(m);
	m = topen("pytorch/lightning.ckpt");
	tcheck(m, "epoch", "3\n");
	tcheck(m, "pytorch-lightning_version", "1.9.0\n");
	tcheck(m, "hyper_parameters/class", "argparse.Namespace\n");
	tcheck(m, "hyper_parameters/args", "()\n");
	tcheck(m, "hyper_parameters/state/lr", "0.01\n");
	tcheck(m, "hyper_parameters/state/name", "tiny\n");
	tcheck(m, "callbacks/ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min'}/best_model_score",
	       "None\n");
	tcheck(m, "state_dict/model/w/values.txt", "0 1\n2 3\n");
	tcheck(m, "state_dict/model/step/values.txt", "7\n");
	tcheck(m, "optimizer_states/0/param_groups/0/betas", "(0.9, 0.999)\n");
	tcheck(m, "lr_schedulers", "[]\n");
	twalk(m);
	tclose(m);
}

static void test_dtypes(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/dtypes.pt");
	static const char *const names[] = {"float32", "float64", "float16", "bfloat16", "int64",
					    "int32", "int16", "int8"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char p[64];
		snprintf(p, sizeof(p), "%s/dtype", names[i]);
		char want[64];
		snprintf(want, sizeof(want), "%s\n", names[i]);
		tcheck(m, p, want);
		snprintf(p, sizeof(p), "%s/values.txt", names[i]);
		tcheck(m, p, "1\n-2\n3\n");
	}
	tcheck(m, "uint8/values.txt", "1\n2\n255\n");
	tcheck(m, "bool/values.txt", "1\n0\n1\n");
	tcheck(m, "complex64/values.txt", "1+2j\n-0-0.5j\n3+0j\n");
	tcheck(m, "complex128/dtype", "complex128\n");
	twalk(m);
	tclose(m);
}

static bool writable(struct mfs_model *m, const char *path)
{
	return m->nodes[tnode(m, path)].flags & MFS_NF_WRITABLE;
}

static void test_views(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/views.pt");
	tcheck(m, "t/values.txt", "0 4 8\n1 5 9\n2 6 10\n3 7 11\n");
	tcheck(m, "row1/values.txt", "4\n5\n6\n7\n");
	tcheck(m, "col2/values.txt", "2\n6\n10\n");
	tcheck(m, "every2/values.txt", "0 2\n4 6\n8 10\n");
	tcheck(m, "expand/values.txt", "0 1 2\n0 1 2\n");
	tcheck(m, "scalar/values.txt", "2.5\n");
	tcheck(m, "empty/values.txt", "");
	tcheck(m, "empty/shape", "0 3\n");
	/* data where the tensor is one span: row- or column-major */
	char *l = tlist(m, "t");
	assert_non_null(strstr(l, "data "));
	free(l);
	assert_int_equal(mfs_node_tensor(m, tnode(m, "t"))->order, MFS_COL_MAJOR);
	l = tlist(m, "row1");
	assert_non_null(strstr(l, "data "));
	free(l);
	l = tlist(m, "every2");
	assert_null(strstr(l, "data "));
	free(l);
	l = tlist(m, "col2");
	assert_null(strstr(l, "data "));
	free(l);
	assert_true(writable(m, "every2/values.txt"));
	assert_false(writable(m, "expand/values.txt"));
	char *ix = tread(m, "index", NULL);
	const struct mfs_tensor *base = mfs_node_tensor(m, tnode(m, "base"));
	char line[128];
	snprintf(line, sizeof(line), "row1\tfloat32\t4\t%llu\t16\n", (unsigned long long)base->off + 16);
	assert_non_null(strstr(ix, line));
	snprintf(line, sizeof(line), "t\tfloat32\t4 3\t%llu\t48\n", (unsigned long long)base->off);
	assert_non_null(strstr(ix, line));
	free(ix);
	twalk(m);
	tclose(m);
}

static void test_legacy_and_others(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/legacy.pt");
	tcheck(m, "w/values.txt", "0 1 2\n3 4 5\n");
	tcheck(m, "wt/values.txt", "0 3\n1 4\n2 5\n");
	tcheck(m, "b/values.txt", "1\n2\n");
	tcheck(m, "lr", "0.5\n");
	twalk(m);
	tclose(m);
	m = topen("pytorch/renamed.pt");
	tcheck(m, "x/values.txt", "0\n1\n");
	tclose(m);
	m = topen("pytorch/tensor.pt");
	tcheck(m, "values.txt", "0 1\n2 3\n");
	tclose(m);
	m = topen("pytorch/scalars.pt");
	tcheck(m, "int", "42\n");
	tcheck(m, "big", "1180591620717411303424\n");
	tcheck(m, "float", "0.1\n");
	tcheck(m, "tiny", "1e-08\n");
	tcheck(m, "true", "True\n");
	tcheck(m, "none", "None\n");
	tcheck(m, "str", "h\xc3\xa9llo\n");
	size_t bl;
	char *bytes = tread(m, "bytes", &bl);
	assert_int_equal(bl, 3);  /* the bytes alone, no newline */
	assert_memory_equal(bytes, "\0ab", 3);
	free(bytes);
	tcheck(m, "tuple", "(1,)\n");
	tcheck(m, "empty", "()\n");
	tcheck(m, "nested", "[[1, 2], (3.5, 'a')]\n");
	tcheck(m, "set", "{3}\n");
	tcheck(m, "7", "int key\n");
	tcheck(m, "(1, 2)", "tuple key\n");
	tcheck(m, "index~1", "a key named index\n");
	tcheck(m, "a/b", "1\n");
	tcheck(m, "a/c", "2\n");
	tcheck(m, "index", "");
	tclose(m);
}

static void test_nothing_runs(void **state)
{
	(void)state;
	struct mfs_model *m = topen("pytorch/system.pt");
	tcheck(m, "payload/class", "posix.system\n");
	tcheck(m, "payload/args", "('touch /tmp/modelfs-pwned',)\n");
	tcheck(m, "ok", "1\n");
	assert_false(writable(m, "payload/class"));
	tclose(m);
	m = topen("pytorch/user_class.pt");
	tcheck(m, "p/class", "__main__.Point\n");
	tcheck(m, "p/state/x", "1\n");
	tcheck(m, "p/state/y", "[2.5, 'z']\n");
	tcheck(m, "w/values.txt", "0\n1\n");
	tclose(m);
}

/* A copy of a sample with bytes [at, at + n) replaced. */
static int open_patched(const char *rel, size_t at, const void *with, size_t n,
			struct mfs_err *err)
{
	size_t len;
	uint8_t *b = tload(tdata(rel), &len);
	assert_true(at + n <= len);
	memcpy(b + at, with, n);
	struct mfs_model *m = NULL;
	int r = mfs_model_open_mem(&m, b, len, "x.pt", NULL, 0, NULL, err);
	mfs_model_free(m);
	free(b);
	return r;
}

/* Where a byte string first occurs in a sample. */
static size_t find_in(const char *rel, const void *s, size_t n)
{
	size_t len;
	uint8_t *b = tload(tdata(rel), &len);
	uint8_t *p = memmem(b, len, s, n);
	assert_non_null(p);
	size_t at = (size_t)(p - b);
	free(b);
	return at;
}

static void test_broken(void **state)
{
	(void)state;
	struct mfs_err err = {0};
	/* The tensor of views.pt's "base" says 3 x 4 with stride (4, 1): make
	 * its first size 9, beyond its storage of 12 elements. */
	size_t at = find_in("pytorch/views.pt", "K\x03K\x04\x86", 5);
	assert_int_equal(open_patched("pytorch/views.pt", at, "K\x09", 2, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "storage of 12 elements"));
	/* A storage key naming no record. */
	mfs_err_clear(&err);
	at = find_in("pytorch/renamed.pt", "X\x01\x00\x00\x00" "0", 6);
	assert_int_equal(open_patched("pytorch/renamed.pt", at, "X\x01\x00\x00\x00" "9", 6, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no record"));
	/* Truncated, bytes flipped: refused with a message, or read cleanly. */
	static const char *const all[] = {"pytorch/views.pt", "pytorch/legacy.pt",
					  "pytorch/lightning.ckpt", "pytorch/scalars.pt"};
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		tmutate(all[i], (unsigned)tcount(300, 10, 10));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_protocols),
		cmocka_unit_test(test_hostile_opcodes),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_state_dict),
		cmocka_unit_test(test_hf_tied),
		cmocka_unit_test(test_optim_lightning),
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_views),
		cmocka_unit_test(test_legacy_and_others),
		cmocka_unit_test(test_nothing_runs),
		cmocka_unit_test(test_broken),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
