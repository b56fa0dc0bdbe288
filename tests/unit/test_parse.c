/* Unit tests of parsing values text in bulk: the fast path of plain decimals
 * (numtext_fast.c) gives exactly what mfs_parse_f32/f64 give, float32
 * rounding boundaries included; values.txt checked early in pieces
 * (mfs_view_check_prefix) and then committed with the check's values
 * (mfs_content.checked) gives the same result, patch and message as a
 * commit that parses it all. MFS_TEST_QUICK=1 runs fewer cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "numtext.h"
#include "view_impl.h"

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return trand(&rng_state);
}

/* Case counts shrink with MFS_TEST_QUICK and under the sanitizers. */
static size_t count(size_t full)
{
	return tcount(full, 10, 5);
}

/* The token s (followed by a separator, or not) through the fast path must
 * give what the one-token parser gives, whenever the fast path takes it. */
static bool check_f32(const char *s)
{
	size_t n = strlen(s);
	char buf[160];
	memcpy(buf, s, n);
	/* More text after it: the 16-byte path reads past the token. */
	memcpy(buf + n, " 12345678 9.75e+3,-0.5\n", 24);
	float a = 0, b = 0;
	int r = mfs_parse_f32(s, n, &a);
	const char *ends[3] = {buf + n, buf + n + 1, buf + n + 24};
	bool fast = false;
	for (int k = 0; k < 3; k++) {
		const char *q = mfs_parse_f32_prefix(buf, ends[k], &b);
		if (q != buf + n)
			continue;  /* not taken: the caller asks mfs_parse_f32 */
		fast = true;
		uint32_t ua, ub;
		memcpy(&ua, &a, 4);
		memcpy(&ub, &b, 4);
		if (r != 0 || ua != ub)
			fail_msg("\"%s\": fast path gives %08x, mfs_parse_f32 %d %08x", s, ub, r, ua);
	}
	return fast;
}

static bool check_f64(const char *s)
{
	size_t n = strlen(s);
	char buf[160];
	memcpy(buf, s, n);
	memcpy(buf + n, " 12345678 9.75e+3,-0.5\n", 24);
	double a = 0, b = 0;
	int r = mfs_parse_f64(s, n, &a);
	bool fast = false;
	for (int k = 0; k < 2; k++) {
		const char *q = mfs_parse_f64_prefix(buf, buf + n + (k ? 24 : 0), &b);
		if (q != buf + n)
			continue;
		fast = true;
		uint64_t ua, ub;
		memcpy(&ua, &a, 8);
		memcpy(&ub, &b, 8);
		if (r != 0 || ua != ub)
			fail_msg("\"%s\": fast path gives %016llx, mfs_parse_f64 %d %016llx", s,
				 (unsigned long long)ub, r, (unsigned long long)ua);
	}
	return fast;
}

static float rnd_f32(void)
{
	uint32_t u = (uint32_t)rnd();
	float f;
	memcpy(&f, &u, 4);
	return f;
}

/* Random decimals: up to 20 digits, a point anywhere, an exponent or not. */
static void rnd_decimal(char *s)
{
	int nd = 1 + (int)(rnd() % 20), dot = (int)(rnd() % (unsigned)(nd + 2)) - 1, k = 0;
	if (rnd() % 2)
		s[k++] = '-';
	for (int i = 0; i < nd; i++) {
		if (i == dot)
			s[k++] = '.';
		s[k++] = (char)('0' + rnd() % 10);
	}
	if (rnd() % 3 == 0)
		k += sprintf(s + k, "e%d", (int)(rnd() % 90) - 45);
	s[k] = '\0';
}

static void test_fast_f32(void **state)
{
	(void)state;
	char s[128];
	size_t n = count(300000), fast = 0;
	for (size_t i = 0; i < n; i++) {
		float f = rnd_f32();
		if (!isfinite(f))
			continue;
		char num[MFS_NUM_MAX + 1];
		num[mfs_fmt_f32(num, f)] = '\0';
		fast += check_f32(num);
		snprintf(s, sizeof(s), "%.9g", f);
		fast += check_f32(s);
		snprintf(s, sizeof(s), "%.6e", f);
		check_f32(s);
		/* A float32 midpoint, and decimals of 15-17 digits next to it
		 * (whose double may be the midpoint itself). */
		float g = nextafterf(f, INFINITY);
		if (isfinite(g)) {
			double mid = ((double)f + (double)g) / 2;
			for (int p = 14; p <= 17; p++) {
				snprintf(s, sizeof(s), "%.*e", p, mid);
				check_f32(s);
			}
		}
		rnd_decimal(s);
		check_f32(s);
	}
	/* Integers on float32 midpoints (ties to even), and next to them. */
	for (uint64_t v = (1u << 24) - 3; v < (1u << 24) + 64; v++) {
		snprintf(s, sizeof(s), "%llu", (unsigned long long)v);
		check_f32(s);
		snprintf(s, sizeof(s), "%llu.000000001", (unsigned long long)v);
		check_f32(s);
		snprintf(s, sizeof(s), "%llu0e-1", (unsigned long long)v);
		check_f32(s);
	}
	static const char *const edge[] = {
		"0", "-0", "+0", "0.", ".5", "-.5", "1e5", "1E+05", "1e-5", "1e", "1e+", "1.5e",
		"1..5", ".", "-", "+", "1e99999", "3.4028235e38", "3.4028236e38", "3.40282357e38",
		"1e39", "1.17549435e-38", "1.1754942e-38", "1e-45", "7e-46", "1e-50",
		"340282356779733661637539395458142568448", "0.000000000000000000000000000001",
		"123456789012345678901234", "9007199254740993", "16777217", "16777216.5",
		"0x10", "1_0", "nan", "inf", "-inf", "1,5", "1 5",
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(*edge); i++)
		check_f32(edge[i]);
	/* The usual text takes the fast path. */
	assert_true(fast > n / 2);
}

static void test_fast_f64(void **state)
{
	(void)state;
	char s[128];
	size_t n = count(200000), fast = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t u = rnd();
		double d;
		memcpy(&d, &u, 8);
		if (!isfinite(d))
			continue;
		char num[MFS_NUM_MAX + 1];
		num[mfs_fmt_f64(num, d)] = '\0';
		check_f64(num);
		snprintf(s, sizeof(s), "%.6f", (double)rnd_f32());
		fast += check_f64(s);
		rnd_decimal(s);
		check_f64(s);
	}
	static const char *const edge[] = {
		"0", "-0", "9007199254740992", "9007199254740993", "1e22", "1e23", "1e-22", "1e-23",
		"1.7976931348623157e308", "1e309", "4.9e-324", "2e-324", ".", "1e", "1e+",
	};
	for (size_t i = 0; i < sizeof(edge) / sizeof(*edge); i++)
		check_f64(edge[i]);
	assert_true(fast > n / 2);
}

/* A text of tokens of every kind through mfs_parse_f32_run, as the values
 * parser calls it (a token it stops at is parsed on its own): the values
 * mfs_parse_f32 gives each token, and the newlines before them. */
static void test_f32_run(void **state)
{
	(void)state;
	static const uint8_t sep[256] = {[' '] = 1, ['\t'] = 1, ['\n'] = 1, ['\r'] = 1, [','] = 1};
	static const char *const odd[] = {"1e5", "+1.5", "-.5", "1.", "nan", "-inf", "x", "1.2.3",
					  "123456789012345678", "0.000000000000000000001", "1e-50",
					  "3.4028236e38", "16777217", "-0"};
	size_t cap = count(200000) * 40 + 64, len = 0, ntok = 0;
	char *text = malloc(cap);
	assert_non_null(text);
	while (len + 64 < cap) {
		char num[MFS_NUM_MAX + 1];
		uint64_t k = rnd() % 10;
		if (k < 6) {
			float f = rnd_f32();
			num[isfinite(f) ? mfs_fmt_f32(num, f) : 1] = '\0';
			if (!isfinite(f))
				num[0] = '0';
		} else if (k < 8) {
			snprintf(num, sizeof(num), "%.*g", 1 + (int)(rnd() % 9), (double)rnd_f32());
		} else {
			snprintf(num, sizeof(num), "%s", odd[rnd() % (sizeof(odd) / sizeof(*odd))]);
		}
		len += (size_t)sprintf(text + len, "%s%s", num, (const char *[]){" ", "\n", ", ", "\t\r\n"}[rnd() % 4]);
		ntok++;
	}
	float *got = calloc(ntok, sizeof(float));
	assert_non_null(got);
	struct mfs_tokens tk = {text, len, 0};
	const char *p = text, *end = text + len, *tok, *seen = text;
	size_t i = 0, n;
	uint64_t lines = 0, want_lines = 0;
	while (i < ntok) {
		const char *stop;
		uint64_t nl;
		size_t k = mfs_parse_f32_run(p, end, sep, got + i, ntok - i, &stop, &nl);
		for (size_t j = 0; j < k; j++, i++) {
			assert_true(mfs_next_token(&tk, &tok, &n));
			float want;
			if (mfs_parse_f32(tok, n, &want) != 0 || memcmp(&want, &got[i], 4) != 0)
				fail_msg("token %zu \"%.*s\": the run gives %g", i, (int)n, tok, (double)got[i]);
		}
		lines += nl;
		for (; seen < stop; seen++)
			want_lines += *seen == '\n';
		assert_true(lines == want_lines);
		if (i == ntok)
			break;
		/* The caller's turn: one token on its own. */
		assert_true(mfs_next_token(&tk, &tok, &n));
		while (stop < tok)
			lines += *stop++ == '\n';
		p = tok + n;
		i++;
	}
	free(got);
	free(text);
}

/* --- values.txt checked in pieces, then committed ---------------------------- */

struct mem {
	const char *s;
};

static int mem_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	memcpy(buf, ((struct mem *)ctx)->s + off, len);
	return 0;
}

/* Write text to values.txt as the mount does: checked in random pieces
 * (a piece ends anywhere, even inside a value), then committed with the
 * check's values. Returns what the check or the commit returned; the new
 * file in *out (on 0) and the message in err. */
static int write_pieces(struct mfs_model *m, const char *text, size_t len, bool check,
			uint8_t **out, size_t *outlen, struct mfs_err *err)
{
	mfs_id id = tnode(m, "values.txt");
	struct mfs_check st = {0};
	int r = 0;
	size_t written = 0;
	while (check && written < len && r == 0) {
		/* Small pieces, and large ones that are parsed on several threads. */
		uint64_t most = rnd() % 4 ? 3000 : 120000;
		written += 1 + (size_t)(rnd() % most);
		if (written > len)
			written = len;
		r = mfs_view_check_prefix(m, id, text + st.off, written - st.off, &st, err);
	}
	if (r == 0) {
		struct mem mc = {text};
		struct mfs_content c = {.size = len, .read = mem_read, .ctx = &mc, .checked = &st};
		struct mfs_patch p;
		mfs_patch_init(&p);
		r = mfs_view_write(m, id, &c, &p, err);
		if (r == 0)
			*out = tapply(&p, m->base, (size_t)m->size, outlen);
		mfs_patch_free(&p);
	}
	mfs_check_reset(&st);
	return r;
}

/* The model file out shows the values of text in its values.txt. */
static void same_values(const uint8_t *out, size_t outlen, const char *text, size_t len)
{
	struct mfs_model *m = topen_mem(out, outlen, "new.tensor", NULL, 0);
	size_t nl;
	char *now = tread(m, "values.txt", &nl);
	struct mfs_tokens ta = {text, len, 0}, tb = {now, nl, 0};
	const char *a, *b;
	size_t an, bn, i = 0;
	while (mfs_next_token(&ta, &a, &an)) {
		assert_true(mfs_next_token(&tb, &b, &bn));
		float x, y;
		assert_int_equal(mfs_parse_f32(a, an, &x), 0);
		assert_int_equal(mfs_parse_f32(b, bn, &y), 0);
		if (memcmp(&x, &y, 4) != 0)
			fail_msg("value %zu: wrote %.*s, reads back %.*s", i, (int)an, a, (int)bn, b);
		i++;
	}
	assert_false(mfs_next_token(&tb, &b, &bn));
	free(now);
	tclose(m);
}

/* The same text through both ways: same result, same file, same message
 * (a bad value is told the same at a write as at the commit). */
static void both_ways(struct mfs_model *m, const char *text, size_t len, int expect)
{
	uint8_t *a = NULL, *b = NULL;
	size_t al = 0, bl = 0;
	struct mfs_err ea = {0}, eb = {0};
	int ra = write_pieces(m, text, len, false, &a, &al, &ea);
	int rb = write_pieces(m, text, len, true, &b, &bl, &eb);
	if (ra != expect)
		fail_msg("commit: got %d (%s), expect %d", ra, ea.msg, expect);
	if (rb != ra)
		fail_msg("checked: got %d (%s), commit %d (%s)", rb, eb.msg, ra, ea.msg);
	if (ra < 0 && strcmp(ea.msg, eb.msg) != 0 && !strstr(eb.msg, "at least"))
		fail_msg("messages differ:\n  commit  %s\n  checked %s", ea.msg, eb.msg);
	if (ra == 0 && (al != bl || memcmp(a, b, al) != 0))
		fail_msg("the two ways give different files");
	if (ra == 0)
		same_values(a, al, text, len);
	free(a);
	free(b);
}

static void test_values_pieces(void **state)
{
	(void)state;
	struct mfs_model *m = topen("primitiv/tensor_bin32_128x128.tensor");
	size_t len;
	char *text = tread(m, "values.txt", &len);
	char *t = malloc(2 * len + 64);
	assert_non_null(t);
	int rounds = (int)count(15);
	for (int k = 0; k < rounds; k++) {
		both_ways(m, text, len, 1);  /* unchanged */
		/* Some values changed, in another style: spaces, tabs, commas, CRLF. */
		size_t tl = 0;
		for (size_t i = 0; i < len; i++) {
			char c = text[i];
			if (c == ' ' && rnd() % 7 == 0)
				c = rnd() % 2 ? ',' : '\t';
			if (c == '\n' && rnd() % 5 == 0)
				t[tl++] = '\r';
			t[tl++] = c;
			if (c == '\n' && rnd() % 50 == 0)
				tl += (size_t)sprintf(t + tl, "%s", rnd() % 2 ? " " : "\n");
		}
		size_t at = rnd() % tl;
		while (at < tl && t[at] != ' ')
			at++;
		memmove(t + at + 4, t + at, tl - at);
		memcpy(t + at, " 1.5", 4);
		tl += 4;
		/* One value more now: drop the last one. */
		size_t end = tl;
		while (end > 0 && strchr(" \t,\r\n", t[end - 1]))
			end--;
		while (end > 0 && t[end - 1] != ' ' && t[end - 1] != '\t' && t[end - 1] != ',')
			end--;
		t[end - 1] = '\n';
		both_ways(m, t, end, 0);
		/* A bad value somewhere, out of range, one too many, one too few. */
		static const char *const bad[] = {" x", " 1e39", " 1.5.", " -", " nan(1)", " 7"};
		const char *b = bad[rnd() % 6];
		size_t bl = strlen(b);
		at = rnd() % len;
		while (at < len && text[at] != ' ')
			at++;
		memcpy(t, text, at);
		memcpy(t + at, b, bl);
		memcpy(t + at + bl, text + at, len - at);
		both_ways(m, t, len + bl, strcmp(b, " 1e39") == 0 ? -ERANGE : -EINVAL);
		size_t cut = len;
		while (cut > 0 && text[cut - 1] != ' ')
			cut--;
		both_ways(m, text, cut, -EINVAL);  /* the last value left out */
	}
	free(t);
	free(text);
	tclose(m);
}

/* A column-major tensor large enough to be diffed in several blocks of
 * columns (700 x 500, primitiv), made by writing a .npy to a small one. */
static struct mfs_model *big_colmajor(void)
{
	struct mfs_model *m = topen("primitiv/tensor_bin32_128x128.tensor");
	enum { R = 700, C = 500 };
	float *v = malloc(sizeof(float) * R * C);
	assert_non_null(v);
	for (size_t i = 0; i < (size_t)R * C; i++)
		v[i] = (float)(rnd() % 100000) / 64.0f - 700.0f;
	char dict[128];
	int n = snprintf(dict, sizeof(dict),
			 "{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", R, C);
	size_t hl = (size_t)n + 1;
	while ((10 + hl) % 64)
		hl++;
	size_t len = 10 + hl + sizeof(float) * R * C;
	uint8_t *npy = malloc(len);
	assert_non_null(npy);
	memcpy(npy, "\x93NUMPY\x01\x00", 8);
	npy[8] = (uint8_t)(hl & 0xff);
	npy[9] = (uint8_t)(hl >> 8);
	memset(npy + 10, ' ', hl);
	memcpy(npy + 10, dict, (size_t)n);
	npy[10 + hl - 1] = '\n';
	memcpy(npy + 10 + hl, v, sizeof(float) * R * C);
	uint8_t *out;
	size_t outlen;
	struct mfs_err err = {0};
	if (twrite(m, "data.npy", npy, len, &out, &outlen, &err) != 0)
		fail_msg("reshape: %s", err.msg);
	tclose(m);
	m = topen_mem(out, outlen, "big.tensor", NULL, 0);
	free(out);
	free(npy);
	free(v);
	return m;
}

/* Values changed here and there, in the first, a middle and the last
 * block of columns and elsewhere: the file shows exactly them. */
static void test_colmajor_blocks(void **state)
{
	(void)state;
	struct mfs_model *m = big_colmajor();
	size_t len;
	char *text = tread(m, "values.txt", &len);
	both_ways(m, text, len, 1);
	char *t = malloc(len + 4096);
	assert_non_null(t);
	for (int k = 0; k < (int)count(8); k++) {
		/* Replace some values by "0.5" or "-1e+30" (same count). */
		size_t tl = 0, i = 0, changed = 0;
		while (i < len) {
			size_t j = i;
			while (j < len && !strchr(" \n", text[j]))
				j++;
			bool change = j > i && (rnd() % 997 == 0 || (k == 0 && (i == 0 || j == len - 1)));
			if (change) {
				tl += (size_t)sprintf(t + tl, "%s", rnd() % 2 ? "0.5" : "-1e+30");
				changed++;
			} else {
				memcpy(t + tl, text + i, j - i);
				tl += j - i;
			}
			if (j < len)
				t[tl++] = text[j];
			i = j + 1;
		}
		both_ways(m, t, tl, changed ? 0 : 1);
	}
	free(t);
	free(text);
	tclose(m);
}

/* A tensor of no elements: blanks only are its values.txt, checked or not. */
static void test_empty_tensor(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/GaussMix_diagonal.final_learner.psave");
	mfs_id id = tnode(m, "sigma/values.txt");
	static const char *const texts[] = {"", "\n", " \n\n", "1\n", "x\n"};
	for (size_t k = 0; k < sizeof(texts) / sizeof(*texts); k++) {
		const char *text = texts[k];
		size_t len = strlen(text);
		struct mfs_check st = {0};
		struct mfs_err err = {0};
		int r = len ? mfs_view_check_prefix(m, id, text, len, &st, &err) : 0;
		if (r == 0) {
			struct mem mc = {text};
			struct mfs_content c = {.size = len, .read = mem_read, .ctx = &mc, .checked = &st};
			struct mfs_patch p;
			mfs_patch_init(&p);
			r = mfs_view_write(m, id, &c, &p, &err);
			mfs_patch_free(&p);
		}
		mfs_check_reset(&st);
		if (r != (k < 3 ? 1 : -EINVAL))
			fail_msg("\"%s\": got %d (%s)", text, r, err.msg);
	}
	tclose(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fast_f32),
		cmocka_unit_test(test_fast_f64),
		cmocka_unit_test(test_f32_run),
		cmocka_unit_test(test_values_pieces),
		cmocka_unit_test(test_colmajor_blocks),
		cmocka_unit_test(test_empty_tensor),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
