/* Unit tests of codecs/core/json.c and json_write.c: values and their
 * source spans, string decoding (escapes, surrogate pairs, UTF-8 checks),
 * refusals with their byte offsets, the depth bound, duplicate keys, and
 * the writer (escapes, sorted members, round trip). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "json.h"

static void parse_ok(struct mfs_json *j, const char *text)
{
	if (mfs_json_parse(j, text, strlen(text)) != 0) {
		fprintf(stderr, "%s: %s\n", text, j->err);
		fail();
	}
}

static void refused(const char *text, size_t len, const char *why)
{
	struct mfs_json j;
	assert_int_equal(mfs_json_parse(&j, text, len), -1);
	if (!strstr(j.err, why)) {
		fprintf(stderr, "err \"%s\", expected \"%s\"\n", j.err, why);
		fail();
	}
	mfs_json_free(&j);
}

/* The source bytes of node n. */
static void span_is(const struct mfs_json *j, uint32_t n, const char *want)
{
	assert_int_equal(j->v[n].span, strlen(want));
	assert_memory_equal(j->src + j->v[n].at, want, strlen(want));
}

static void values_and_spans(void **state)
{
	(void)state;
	const char *text = " {\"a\" : [1, -2.5e+3, true, null],\n \"s\": \"x\\ty\", \"o\": {}, \"f\":false} ";
	struct mfs_json j;
	parse_ok(&j, text);
	assert_int_equal(j.v[0].type, MFS_JSON_OBJ);
	assert_int_equal(j.v[0].count, 4);
	span_is(&j, 0, "{\"a\" : [1, -2.5e+3, true, null],\n \"s\": \"x\\ty\", \"o\": {}, \"f\":false}");
	uint32_t a = mfs_json_member(&j, 0, "a");
	assert_int_equal(j.v[a].type, MFS_JSON_ARR);
	assert_int_equal(j.v[a].count, 4);
	span_is(&j, a, "[1, -2.5e+3, true, null]");
	uint32_t n2 = j.v[j.v[a].first].next;
	assert_int_equal(j.v[n2].type, MFS_JSON_NUM);
	span_is(&j, n2, "-2.5e+3");
	assert_memory_equal(mfs_json_text(&j, n2), "-2.5e+3", 7);
	span_is(&j, j.v[n2].next, "true");
	span_is(&j, j.v[j.v[n2].next].next, "null");
	uint32_t s = mfs_json_member(&j, 0, "s");
	span_is(&j, s, "\"x\\ty\"");
	assert_int_equal(mfs_json_textlen(&j, s), 3);
	assert_memory_equal(mfs_json_text(&j, s), "x\ty", 3);
	span_is(&j, mfs_json_member(&j, 0, "o"), "{}");
	span_is(&j, mfs_json_member(&j, 0, "f"), "false");
	assert_int_equal(mfs_json_member(&j, 0, "missing"), MFS_JSON_NIL);
	mfs_json_free(&j);

	parse_ok(&j, "\"top\"");  /* any value at the top */
	assert_int_equal(j.v[0].type, MFS_JSON_STR);
	mfs_json_free(&j);
}

static void strings_decoded(void **state)
{
	(void)state;
	struct mfs_json j;
	parse_ok(&j, "[\"\\u00e9\\ud83d\\ude00\\/\\\"\\\\\\b\\f\\n\\r\", \"caf\xc3\xa9 \xf0\x9f\x98\x80\"]");
	uint32_t a = j.v[0].first, b = j.v[a].next;
	const char want[] = "\xc3\xa9\xf0\x9f\x98\x80/\"\\\b\f\n\r";
	assert_int_equal(mfs_json_textlen(&j, a), sizeof(want) - 1);
	assert_memory_equal(mfs_json_text(&j, a), want, sizeof(want) - 1);
	assert_int_equal(mfs_json_textlen(&j, b), 10);
	assert_memory_equal(mfs_json_text(&j, b), "caf\xc3\xa9 \xf0\x9f\x98\x80", 10);
	mfs_json_free(&j);
}

static void bad_documents_refused(void **state)
{
	(void)state;
	refused("{\"a\":1,}", 8, "expected a key at byte 7");
	refused("[1 2]", 5, "expected ',' or ']' at byte 3");
	refused("{\"a\" 1}", 7, "expected ':'");
	refused("[01]", 4, "expected ',' or ']'");
	refused("[1.]", 4, "bad number");
	refused("[-]", 3, "bad number");
	refused("[1e]", 4, "bad number");
	refused("\"\\ud800\"", 8, "lone surrogate");
	refused("\"\\udc00\"", 8, "lone surrogate");
	refused("\"\\ud800\\u0041\"", 14, "bad surrogate pair");
	refused("\"\\x\"", 4, "bad escape");
	refused("\"\\u12g4\"", 8, "bad \\u escape");
	refused("\"\\u12", 5, "short \\u escape");
	refused("\"a\tb\"", 5, "control character");
	refused("\"abc", 4, "unterminated string");
	refused("[1] x", 5, "trailing characters at byte 4");
	refused("", 0, "unexpected end");
	refused("tru", 3, "unexpected character");
	refused("[1, 2", 5, "expected ',' or ']' at byte 5");
	refused("[1, ", 4, "unexpected end");
	/* invalid UTF-8: a stray continuation byte, an overlong form, a
	 * surrogate, a code point above U+10FFFF, a cut sequence */
	refused("\"\x80\"", 3, "invalid UTF-8 in a string at byte 1");
	refused("\"\xc0\xaf\"", 4, "invalid UTF-8");
	refused("\"\xed\xa0\x80\"", 5, "invalid UTF-8");
	refused("\"\xf4\x90\x80\x80\"", 6, "invalid UTF-8");
	refused("\"\xe2\x82\"", 4, "invalid UTF-8");
	/* a NUL inside the text is a control character, not an end */
	refused("\"a\0b\"", 5, "control character");
}

static void depth_bounded(void **state)
{
	(void)state;
	size_t deep = 200000;
	char *t = malloc(2 * deep);
	assert_non_null(t);
	memset(t, '[', deep);
	memset(t + deep, ']', deep);
	refused(t, 2 * deep, "nested too deeply");
	/* MFS_JSON_DEPTH_MAX levels below the top still read */
	size_t ok = MFS_JSON_DEPTH_MAX + 1;
	memset(t, '[', ok);
	memset(t + ok, ']', ok);
	struct mfs_json j;
	assert_int_equal(mfs_json_parse(&j, t, 2 * ok), 0);
	mfs_json_free(&j);
	refused(t, 2 * ok + 1, "");
	memset(t, '[', ok + 1);
	memset(t + ok + 1, ']', ok + 1);
	refused(t, 2 * (ok + 1), "nested too deeply");
	free(t);
}

static void dump_is(const struct mfs_json *j, const char *want)
{
	struct mfs_buf o = {0};
	assert_int_equal(mfs_json_dump_sorted(j, 0, &o), 0);
	if (o.len != strlen(want) || memcmp(o.p, want, o.len) != 0) {
		fprintf(stderr, "got  %.*s\nwant %s\n", (int)o.len, o.p, want);
		fail();
	}
	mfs_buf_free(&o);
}

static void duplicates_and_writer(void **state)
{
	(void)state;
	struct mfs_json j;
	parse_ok(&j, "{ \"b\": 1, \"a\": [ \"q\\\"\\u0001\\n\", {\"z\":null,\"y\":true} ], \"b\": 2, \"aa\": -0.5 }");
	/* the last of equal keys, as most readers take it */
	assert_memory_equal(mfs_json_text(&j, mfs_json_member(&j, 0, "b")), "2", 1);
	dump_is(&j, "{\"a\":[\"q\\\"\\u0001\\n\",{\"y\":true,\"z\":null}],\"aa\":-0.5,\"b\":2}");
	assert_int_equal(mfs_json_set_number(&j, 0, "b", 7), 0);
	assert_int_equal(mfs_json_set_number(&j, 0, "c", 18446744073709551615ull), 0);
	dump_is(&j, "{\"a\":[\"q\\\"\\u0001\\n\",{\"y\":true,\"z\":null}],\"aa\":-0.5,\"b\":7,"
		    "\"c\":18446744073709551615}");
	/* what the writer writes reads back to the same document */
	struct mfs_buf o = {0};
	assert_int_equal(mfs_json_dump_sorted(&j, 0, &o), 0);
	struct mfs_json k;
	assert_int_equal(mfs_json_parse(&k, o.p, o.len), 0);
	dump_is(&k, "{\"a\":[\"q\\\"\\u0001\\n\",{\"y\":true,\"z\":null}],\"aa\":-0.5,\"b\":7,"
		    "\"c\":18446744073709551615}");
	mfs_json_free(&k);
	mfs_buf_free(&o);
	mfs_json_free(&j);
}

static void strings_written(void **state)
{
	(void)state;
	struct mfs_buf o = {0};
	const char in[] = "a\"b\\c\x01\x1f\x7f\xc3\xa9";
	assert_int_equal(mfs_json_put_string(&o, in, sizeof(in) - 1), 0);
	const char want[] = "\"a\\\"b\\\\c\\u0001\\u001f\x7f\xc3\xa9\"";
	assert_int_equal(o.len, sizeof(want) - 1);
	assert_memory_equal(o.p, want, o.len);
	mfs_buf_free(&o);
}

/* Every byte string, UTF-8 or not, written by mfs_json_put_string reads
 * back the same through mfs_json_parse_bytes; mfs_json_parse refuses the
 * ones that are not UTF-8. */
static void byte_strings_round_trip(void **state)
{
	(void)state;
	uint64_t rng = 7;
	for (int i = 0; i < 2000; i++) {
		char in[24];
		size_t n = (size_t)(trand(&rng) % sizeof(in));
		for (size_t k = 0; k < n; k++)
			in[k] = (char)trand(&rng);
		struct mfs_buf o = {0};
		assert_int_equal(mfs_json_put_string(&o, in, n), 0);
		struct mfs_json j;
		assert_int_equal(mfs_json_parse_bytes(&j, o.p, o.len), 0);
		assert_int_equal(j.v[0].type, MFS_JSON_STR);
		assert_int_equal(mfs_json_textlen(&j, 0), n);
		assert_memory_equal(mfs_json_text(&j, 0), in, n);
		mfs_json_free(&j);
		mfs_buf_free(&o);
	}
	struct mfs_json j;
	assert_int_equal(mfs_json_parse(&j, "\"a\xff\"", 4), -1);
	mfs_json_free(&j);
	assert_int_equal(mfs_json_parse_bytes(&j, "\"a\xff\"", 4), 0);
	mfs_json_free(&j);
}

/* A charge option that refuses beyond a limit and keeps the balance. */
struct budget {
	int64_t used, limit;
};

static bool charge(void *ctx, int64_t bytes)
{
	struct budget *b = ctx;
	if (bytes > 0 && b->used + bytes > b->limit)
		return false;
	b->used += bytes;
	return true;
}

/* Values a caller does not keep get no node and no text, are counted, and
 * are checked all the same. */
static void kept_and_skipped(void **state)
{
	(void)state;
	const char *t = "{\"a\":{\"x\":[1,2,{\"y\":\"z\"}],\"s\":\"t\"},\"b\":[1, 2 ,3],"
			"\"c\":\"d\"}";
	const struct mfs_json_opts o = {.keep = mfs_json_keep_shallow};
	struct mfs_json j;
	assert_int_equal(mfs_json_parse_opts(&j, t, strlen(t), &o), 0);
	assert_int_equal(j.n, 6);  /* the root, a, x, s, b, c */
	uint32_t a = mfs_json_member(&j, 0, "a"), b = mfs_json_member(&j, 0, "b");
	uint32_t x = mfs_json_member(&j, a, "x");
	assert_int_equal(j.v[x].type, MFS_JSON_ARR);
	assert_int_equal(j.v[x].count, 3);
	assert_int_equal(j.v[x].first, MFS_JSON_NIL);
	span_is(&j, x, "[1,2,{\"y\":\"z\"}]");
	assert_memory_equal(mfs_json_text(&j, mfs_json_member(&j, a, "s")), "t", 2);
	assert_int_equal(j.v[b].count, 3);
	uint64_t v[3];
	uint32_t n;
	assert_true(mfs_json_u64s(&j, b, v, 3, &n));
	assert_int_equal(n, 3);
	assert_true(v[0] == 1 && v[1] == 2 && v[2] == 3);
	assert_false(mfs_json_u64s(&j, b, v, 2, &n));   /* more than max */
	assert_false(mfs_json_u64s(&j, x, v, 3, &n));   /* not all numbers */
	assert_memory_equal(mfs_json_key(&j, mfs_json_member(&j, 0, "c")), "c", 2);
	mfs_json_free(&j);
	/* numbers u64s refuses: signs, fractions, exponents, too large */
	static const char *const bad[] = {"[-1]", "[1.5]", "[1e3]", "[18446744073709551616]",
					  "[1,\"2\"]", "[[1]]"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mfs_json_parse(&j, bad[i], strlen(bad[i])), 0);
		assert_false(mfs_json_u64s(&j, 0, v, 3, &n));
		mfs_json_free(&j);
	}
	assert_int_equal(mfs_json_parse(&j, "[ ]", 3), 0);
	assert_true(mfs_json_u64s(&j, 0, v, 3, &n));
	assert_int_equal(n, 0);
	mfs_json_free(&j);
	/* what is not kept is checked */
	static const char *const wrong[] = {"{\"a\":{\"x\":[1,\"\xff\"]}}", "{\"a\":{\"x\":[01]}}",
					    "{\"a\":{\"x\":{\"k\" 1}}}", "{\"a\":[\"\\ud800\"]}"};
	for (size_t i = 0; i < sizeof(wrong) / sizeof(wrong[0]); i++) {
		assert_int_equal(mfs_json_parse_opts(&j, wrong[i], strlen(wrong[i]), &o), -1);
		mfs_json_free(&j);
	}
	size_t deep = MFS_JSON_DEPTH_MAX + 2;
	char *d = malloc(2 * deep + 8);
	assert_non_null(d);
	memcpy(d, "{\"a\":", 5);
	memset(d + 5, '[', deep);
	memset(d + 5 + deep, ']', deep);
	d[5 + 2 * deep] = '}';
	assert_int_equal(mfs_json_parse_opts(&j, d, 2 * deep + 6, &o), -1);
	assert_non_null(strstr(j.err, "nested too deeply"));
	mfs_json_free(&j);
	free(d);
}

/* A node is 24 bytes and a kept document costs at most 12 bytes of nodes
 * per source byte; what is not kept costs nothing; the charge option is
 * asked before each allocation and given all of it back. */
static void memory_bounded(void **state)
{
	(void)state;
	size_t n = 1u << 20, len = 2 * n + 1;
	char *t = malloc(len);
	assert_non_null(t);
	t[0] = '[';
	for (size_t i = 0; i < n; i++)
		memcpy(t + 1 + 2 * i, i + 1 < n ? "0," : "0]", 2);
	struct budget b = {0, INT64_MAX};
	struct mfs_json_opts o = {.charge = charge, .ctx = &b};
	struct mfs_json j;
	assert_int_equal(mfs_json_parse_opts(&j, t, len, &o), 0);
	assert_int_equal(j.n, n + 1);
	assert_int_equal(sizeof(j.v[0]), 24);
	assert_true((size_t)b.used >= j.cap * sizeof(j.v[0]) + j.text.cap);
	assert_true(j.cap <= 2 * (n + 1));
	mfs_json_free(&j);
	assert_int_equal(b.used, 0);
	/* the same array below the top level, not kept: one node */
	char *u = malloc(len + 16);
	assert_non_null(u);
	memcpy(u, "{\"a\":{\"b\":", 10);
	memcpy(u + 10, t, len);
	memcpy(u + 10 + len, "}}", 2);
	o.keep = mfs_json_keep_shallow;
	assert_int_equal(mfs_json_parse_opts(&j, u, len + 12, &o), 0);
	assert_int_equal(j.n, 3);
	assert_true(b.used < 8192);
	mfs_json_free(&j);
	/* a refused charge fails the parse for memory */
	b = (struct budget){0, 64 * 1024};
	o.keep = NULL;
	assert_int_equal(mfs_json_parse_opts(&j, t, len, &o), -1);
	assert_true(j.oom);
	assert_non_null(strstr(j.err, "out of memory"));
	mfs_json_free(&j);
	assert_int_equal(b.used, 0);
	free(u);
	free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(values_and_spans),
		cmocka_unit_test(strings_decoded),
		cmocka_unit_test(bad_documents_refused),
		cmocka_unit_test(depth_bounded),
		cmocka_unit_test(duplicates_and_writer),
		cmocka_unit_test(strings_written),
		cmocka_unit_test(byte_strings_round_trip),
		cmocka_unit_test(kept_and_skipped),
		cmocka_unit_test(memory_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
