/* Unit tests of the Ollama manifest codec: the bid, the tree (links into
 * the store's blobs, `layers`), and manifests refused. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

#define H1 "1111111111111111111111111111111111111111111111111111111111111111"
#define H2 "2222222222222222222222222222222222222222222222222222222222222222"
#define H3 "abcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdefabcdef0123"

static const char manifest[] =
	"{\"schemaVersion\":2,\"mediaType\":\"application/vnd.docker.distribution.manifest.v2+json\","
	"\"config\":{\"mediaType\":\"application/vnd.docker.container.image.v1+json\","
	"\"digest\":\"sha256:" H1 "\",\"size\":485},"
	"\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\","
	"\"digest\":\"sha256:" H2 "\",\"size\":4661211424},"
	"{\"mediaType\":\"application/vnd.ollama.image.template\","
	"\"digest\":\"sha256:" H3 "\",\"size\":1429}]}";

static struct mfs_model *open_text(const char *s, int *r, struct mfs_err *err)
{
	struct mfs_model *m = NULL;
	*r = mfs_model_open_mem(&m, s, strlen(s), "latest", NULL, 0, NULL, err);
	return m;
}

static void test_tree(void **state)
{
	(void)state;
	struct mfs_model *m = topen_mem(manifest, strlen(manifest), "latest", NULL, 0);
	assert_string_equal(m->codec->name, "ollama");
	char *l = tlist(m, "");
	assert_string_equal(l, "config model template layers");
	free(l);
	char t[256];
	assert_true(mfs_link_target(m, tnode(m, "model"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../../../blobs/sha256-" H2);
	assert_true(mfs_link_target(m, tnode(m, "config"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../../../blobs/sha256-" H1);
	tcheck(m, "layers",
	       "application/vnd.ollama.image.model\tsha256:" H2 "\t4661211424\n"
	       "application/vnd.ollama.image.template\tsha256:" H3 "\t1429\n");
	twalk(m);
	struct mfs_err err = {0};
	assert_true(twrite(m, "layers", "x\n", 2, NULL, NULL, &err) < 0);
	tclose(m);
}

static void test_bid(void **state)
{
	(void)state;
	const struct mfs_codec *c = mfs_probe((const uint8_t *)manifest, strlen(manifest),
					      strlen(manifest), "latest");
	assert_non_null(c);
	assert_string_equal(c->name, "ollama");
	static const char docker[] = "{\"schemaVersion\":2,\"layers\":[{\"mediaType\":"
				     "\"application/vnd.docker.image.rootfs.diff.tar.gzip\"}]}";
	assert_null(mfs_probe((const uint8_t *)docker, strlen(docker), strlen(docker), "latest"));
}

static void test_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {
		"{\"schemaVersion\":1,\"layers\":[],\"x\":\"application/vnd.ollama.image.model\"}",
		"{\"schemaVersion\":2,\"x\":\"application/vnd.ollama.image.model\"}",
		"{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\","
		"\"digest\":\"sha256:12\"}]}",
		"{\"schemaVersion\":2,\"layers\":[{\"mediaType\":\"application/vnd.ollama.image.model\","
		"\"digest\":\"sha256:" H2 "/../../x\"}]}",
		"{\"schemaVersion\":2,\"layers\":[7],\"m\":\"application/vnd.ollama.image.model\"}",
		"{\"schemaVersion\":2,\"layers\":[\"application/vnd.ollama.image.model\"",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct mfs_err err = {0};
		int r;
		struct mfs_model *m = open_text(bad[i], &r, &err);
		if (r != -EINVAL)
			fail_msg("manifest %zu: open gave %d (%s), not EINVAL", i, r, err.msg);
		assert_null(m);
		assert_true(err.msg[0] != '\0');
	}
}

static void test_robust(void **state)
{
	(void)state;
	tmutate_mem(manifest, strlen(manifest), "latest", 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_bid),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_robust),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
