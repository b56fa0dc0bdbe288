/* Unit tests of the dotted-name builder (codecs/core/dotted.c) through a
 * small test codec: the file is "DOT1\n" then one name per line; each name
 * is a uint8 scalar at offset 0, a line "L <name>" is a link into the
 * sibling "sib.safetensors", and a first line "SEP <chars>" sets the
 * separators (default "."). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dotted.h"
#include "helpers.h"

static int dot_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	(void)size;
	(void)name;
	return n >= 5 && memcmp(h, "DOT1\n", 5) == 0 ? 40 : 0;
}

static int dot_open(struct mfs_model *m, struct mfs_err *err)
{
	(void)err;
	const char *p = (const char *)m->base + 5, *end = (const char *)m->base + m->size;
	const char *seps = ".";
	if (end - p > 4 && memcmp(p, "SEP ", 4) == 0) {
		seps = "./";
		p = memchr(p, '\n', (size_t)(end - p)) + 1;
	}
	mfs_id tensors = mfs_add_dir(m, MFS_ROOT, "tensors", 7);
	struct mfs_dotted *d = mfs_dotted_new(m, tensors, seps);
	struct mfs_tensor t = {.dtype = MFS_DT_U8, .ndim = 0, .off = 0};
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		if (n >= 2 && memcmp(p, "L ", 2) == 0)
			mfs_dotted_add_link(d, p + 2, n - 2, "sib.safetensors");
		else
			mfs_dotted_add(d, p, n, &t, 0, 1);
		p += n + 1;
	}
	mfs_dotted_finish(d, MFS_ROOT);
	return 0;
}

static const struct mfs_codec dot_codec = {
	.name = "dotted-test", .bid = dot_bid, .open = dot_open};

static struct mfs_model *open_names(const char *text)
{
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	size_t len = strlen(text);
	char *buf = malloc(len + 5);
	memcpy(buf, "DOT1\n", 5);
	memcpy(buf + 5, text, len);
	int r = mfs_model_open_mem(&m, buf, len + 5, "t.dot", NULL, 0, &dot_codec, &err);
	if (r < 0)
		fail_msg("open: %s", err.msg);
	m->priv = buf;  /* freed by close_names */
	return m;
}

static void close_names(struct mfs_model *m)
{
	void *buf = m->priv;
	m->priv = NULL;
	mfs_model_free(m);
	free(buf);
}

static void check_list(struct mfs_model *m, const char *path, const char *expect)
{
	char *l = tlist(m, path);
	assert_string_equal(l, expect);
	free(l);
}

static void test_prefix_collisions(void **state)
{
	(void)state;
	/* The longer name first: its directory becomes the tensor's. */
	struct mfs_model *m = open_names("a.b.c\na.b\nx.y");
	check_list(m, "tensors", "a x");
	check_list(m, "tensors/a/b", "c shape dtype values.txt data data.npy");
	assert_non_null(mfs_node_tensor(m, tnode(m, "tensors/a/b")));
	assert_non_null(mfs_node_tensor(m, tnode(m, "tensors/a/b/c")));
	assert_null(mfs_node_tensor(m, tnode(m, "tensors/a")));
	tcheck(m, "tensors/a/b/shape", "\n");
	twalk(m);
	close_names(m);
	/* The shorter first: the tensor directory gets a sub-directory. */
	m = open_names("a.b\na.b.c\na.b.c.d");
	check_list(m, "tensors/a/b", "shape dtype values.txt data data.npy c");
	check_list(m, "tensors/a/b/c", "shape dtype values.txt data data.npy d");
	twalk(m);
	close_names(m);
}

static void test_view_names_and_empty(void **state)
{
	(void)state;
	struct mfs_model *m = open_names("x\nx.shape\nx.dtype.data\nx.values\na..b\n.lead\ntrail.\n"
					 "x.shape~1\n%\n");
	check_list(m, "tensors", "x a % trail %25");
	check_list(m, "tensors/x",
		   "shape dtype values.txt data data.npy shape~1 dtype~1 values shape~1~1");
	check_list(m, "tensors/x/dtype~1", "data~1");
	check_list(m, "tensors/a", "%");
	check_list(m, "tensors/a/%", "b");
	check_list(m, "tensors/%", "lead");
	check_list(m, "tensors/trail", "%");
	tcheck(m, "index",
	       "x\tuint8\t\t0\t1\nx.shape\tuint8\t\t0\t1\nx.dtype.data\tuint8\t\t0\t1\n"
	       "x.values\tuint8\t\t0\t1\na..b\tuint8\t\t0\t1\n.lead\tuint8\t\t0\t1\n"
	       "trail.\tuint8\t\t0\t1\nx.shape~1\tuint8\t\t0\t1\n%\tuint8\t\t0\t1\n");
	twalk(m);
	close_names(m);
}

static void test_duplicates_and_seps(void **state)
{
	(void)state;
	struct mfs_model *m = open_names("SEP ./\na/b.c\na.b/c\na/b.c\n");
	check_list(m, "tensors/a/b", "c c~1 c~2");
	assert_non_null(mfs_node_tensor(m, tnode(m, "tensors/a/b/c")));
	assert_non_null(mfs_node_tensor(m, tnode(m, "tensors/a/b/c~1")));
	check_list(m, "tensors/a", "b");
	close_names(m);
}

static void test_index_empty(void **state)
{
	(void)state;
	struct mfs_model *m = open_names("");
	tcheck(m, "index", "");
	check_list(m, "tensors", "");
	close_names(m);
}

static void test_links(void **state)
{
	(void)state;
	struct mfs_model *m = open_names("L m.l.w\nL top\nL m.shape\nL m.l\nL q.r\nL q.r.s.t\n");
	char t[512];
	mfs_id id = tnode(m, "tensors/m/l/w");
	assert_int_equal(m->nodes[id].kind, MFS_K_LINK);
	assert_true(mfs_link_target(m, id, t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../../sib.safetensors/tensors/m/l/w");
	assert_true(mfs_link_target(m, tnode(m, "tensors/top"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../sib.safetensors/tensors/top");
	assert_true(mfs_link_target(m, tnode(m, "tensors/m/shape~1"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../sib.safetensors/tensors/m/shape~1");
	/* A link where a directory is: the link gets ~1, its target the name. */
	assert_true(mfs_link_target(m, tnode(m, "tensors/m/l~1"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../sib.safetensors/tensors/m/l");
	assert_int_equal(mfs_resolve(m, "tensors/m/l/w/shape"), MFS_NONE);
	/* A link's longer names, added after it, into the same sibling: reached
	 * through it, nothing added beside it. */
	check_list(m, "tensors/q", "r");
	assert_int_equal(m->nodes[tnode(m, "tensors/q/r")].kind, MFS_K_LINK);
	twalk(m);
	close_names(m);
}

/* Many shards' worth of names, and one directory of 1000 children: the
 * builder's hash keeps this linear (the test checks the tree only). */
static void test_many(void **state)
{
	(void)state;
	size_t cap = 1 << 22, len = 0;
	char *text = malloc(cap);
	for (int i = 0; i < 1000; i++)
		len += (size_t)snprintf(text + len, cap - len, "flat.%d\n", i);
	for (int l = 0; l < 9000 / 9; l++)
		for (int k = 0; k < 9; k++)
			len += (size_t)snprintf(text + len, cap - len,
						"model.layers.%d.mlp.proj%d.weight\n", l, k);
	text[len] = '\0';
	struct mfs_model *m = open_names(text);
	assert_int_equal(m->ntensors, 10000);
	assert_int_equal(m->nodes[tnode(m, "tensors/flat")].nchild, 1000);
	assert_int_equal(m->nodes[tnode(m, "tensors/model/layers")].nchild, 1000);
	assert_non_null(mfs_node_tensor(m, tnode(m, "tensors/model/layers/999/mlp/proj8/weight")));
	close_names(m);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prefix_collisions),
		cmocka_unit_test(test_view_names_and_empty),
		cmocka_unit_test(test_duplicates_and_seps),
		cmocka_unit_test(test_index_empty),
		cmocka_unit_test(test_links),
		cmocka_unit_test(test_many),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
