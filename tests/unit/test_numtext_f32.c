/* Unit tests of numtext's own float32 shortest digits (numtext_fmt.c)
 * against Dragonbox's: every exponent's edges and a stride through every bit
 * pattern (MFS_EXHAUSTIVE=1: all 2^32, ~25 min on one core), and the run API
 * against value by value. MFS_TEST_QUICK=1 runs fewer cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"
#include "numtext.h"
#include "numtext_shim.h"

static uint64_t rng_state = 0x853c49e6748fea9bull;
#define rnd() trand(&rng_state)
#define count(full) tcount(full, 20, 4)  /* fewer when quick or sanitized */

/* sig * 10^k (sig without trailing zeros) in numtext's layout, the slow
 * and obvious way: plain when the first digit's exponent is in [-4, 16),
 * else d.ddde+XX. */
static size_t ref_layout(char *out, bool neg, uint64_t sig, int k)
{
	char dg[24];
	int nd = snprintf(dg, sizeof(dg), "%llu", (unsigned long long)sig), e = k + nd - 1;
	char *p = out;
	if (neg)
		*p++ = '-';
	if (e >= -4 && e < 16 && e < 0) {
		p += sprintf(p, "0.%.*s%s", -e - 1, "0000", dg);
	} else if (e >= -4 && e < 16 && k >= 0) {
		p += sprintf(p, "%s%.*s", dg, k, "0000000000000000");
	} else if (e >= -4 && e < 16) {
		p += sprintf(p, "%.*s.%s", e + 1, dg, dg + e + 1);
	} else {
		p += sprintf(p, "%c%s%s", dg[0], nd > 1 ? "." : "", dg + 1);
		p += sprintf(p, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
	}
	return (size_t)(p - out);
}

/* mfs_fmt_f32 and mfs_len_f32 of the float32 with bits b against Dragonbox's
 * shortest digits laid out by ref_layout; 0 if they agree. */
static int check_f32(uint32_t b)
{
	char buf[MFS_NUM_MAX + 1], ref[64];
	float v = f32_of(b);
	if (!isfinite(v) || v == 0)
		return 0;
	struct mfs_dec32 d = mfs_shim_shortest_f32(fabsf(v));
	size_t rn = ref_layout(ref, b >> 31, d.sig, d.exp);
	size_t n = mfs_fmt_f32(buf, v);
	if (n != rn || memcmp(buf, ref, n) || mfs_len_f32(b) != n) {
		buf[n] = ref[rn] = '\0';
		print_error("%08x: \"%s\" (length %zu), Dragonbox \"%s\"\n", b, buf,
			    mfs_len_f32(b), ref);
		return -1;
	}
	return 0;
}

/* float32's own shortest digits (numtext_fmt.c) against Dragonbox: every
 * exponent's edges (powers of two, where the interval is narrower below,
 * and their neighbours), the smallest subnormals, and a stride through
 * every bit pattern; MFS_EXHAUSTIVE=1 checks all 2^32 (the biases of
 * shortest_f32 hold only because they do). */
static void test_f32_dragonbox(void **state)
{
	(void)state;
	int bad = 0;
	for (uint32_t e = 0; e < 255; e++) {
		static const uint32_t f[] = {0, 1, 2, 3, 0x400000, 0x7ffffd, 0x7ffffe, 0x7fffff};
		for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
			bad |= check_f32(e << 23 | f[i]);
			bad |= check_f32(0x80000000u | e << 23 | f[i]);
		}
	}
	for (uint32_t b = 1; b < 4096; b++)
		bad |= check_f32(b);
	const char *x = getenv("MFS_EXHAUSTIVE");
	uint64_t step = x && !strcmp(x, "1") ? 1 : (1ull << 32) / count(8000000) | 1;
	for (uint64_t b = rnd() % step; b < 1ull << 32 && bad == 0; b += step)
		bad |= check_f32((uint32_t)b);
	assert_int_equal(bad, 0);
}

/* mfs_fmt_f32_run against mfs_fmt_f32 value by value, from an unaligned
 * source: random bits or weights, with the rare kinds mixed in. */
static void test_f32_run(void **state)
{
	(void)state;
	enum { N = 4096 };
	static const uint32_t rare[] = {0, 0x80000000u, 1, 0x807fffffu, 0x3f800000u,
					0xff800000u, 0x7fc00000u, 0xffc00001u};
	static uint8_t src[4 * N + 1];
	static char run[N * (MFS_NUM_MAX + 1)], one[N * (MFS_NUM_MAX + 1)];
	for (size_t rep = 0; rep < count(200); rep++) {
		char *o = one, sep = rep % 2 ? '\n' : ' ';
		for (size_t i = 0; i < N; i++) {
			uint32_t b = (uint32_t)rnd();
			if (b % 16 == 0)
				b = rare[(b >> 4) % 8];
			else if (rep % 4 == 0)
				b = bits32((float)(((double)(b >> 8) * 0x1p-24 - 0.5) * 0.1));
			memcpy(src + 1 + 4 * i, &b, 4);
			o += mfs_fmt_f32(o, f32_of(b));
			*o++ = sep;
		}
		size_t n = mfs_fmt_f32_run(run, src + 1, N, sep);
		assert_int_equal(n, (size_t)(o - one));
		assert_memory_equal(run, one, n);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_f32_dragonbox),
		cmocka_unit_test(test_f32_run),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
