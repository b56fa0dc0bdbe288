/* Unit tests of the codec table made from codecs/registry.def: every line
 * is a codec whose table names itself as the line does, with a title for
 * --help and the operations every codec has; names and titles unique.
 * (A codec without a fuzz target or a unit test stops meson's
 * configuration: tests/fuzz/meson.build, tests/unit/meson.build.) */
#include <string.h>

#include "helpers.h"

static const char *const registry[] = {
#define MFS_CODEC(name) #name,
#include "../../codecs/registry.def"
#undef MFS_CODEC
};
#define NREGISTRY (sizeof(registry) / sizeof(registry[0]))

static void every_line_a_codec(void **state)
{
	(void)state;
	size_t n = 0;
	while (mfs_codecs[n])
		n++;
	assert_int_equal(n, NREGISTRY);
	for (size_t i = 0; i < n; i++) {
		const struct mfs_codec *c = mfs_codecs[i];
		assert_non_null(c->name);
		assert_string_equal(c->name, registry[i]);
		assert_non_null(c->title);
		assert_true(c->title[0] != '\0');
		assert_non_null(c->bid);
		assert_non_null(c->open);
	}
}

static void names_and_titles_unique(void **state)
{
	(void)state;
	for (size_t i = 0; mfs_codecs[i]; i++)
		for (size_t j = i + 1; mfs_codecs[j]; j++) {
			assert_string_not_equal(mfs_codecs[i]->name, mfs_codecs[j]->name);
			assert_string_not_equal(mfs_codecs[i]->title, mfs_codecs[j]->title);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_line_a_codec),
		cmocka_unit_test(names_and_titles_unique),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
