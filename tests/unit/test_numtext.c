/* Unit tests of numtext: shortest round-trip floats (float16 exhaustively,
 * float32/float64 on random bit patterns), strict parsing and its errors,
 * every numeric dtype. MFS_TEST_QUICK=1 runs fewer cases; MFS_BENCH=1 adds a
 * small benchmark against snprintf/strtof. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "helpers.h"
#include "numtext.h"

/* --- Helpers ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	return trand(&rng_state);
}

/* Case counts shrink with MFS_TEST_QUICK and under the sanitizers. */
static size_t count(size_t full)
{
	return tcount(full, 20, 4);
}

/* NUL-terminate formatted text of length n, checking the length bound. */
static const char *fin(char *buf, size_t n)
{
	assert_true(n > 0 && n <= MFS_NUM_MAX);
	buf[n] = '\0';
	return buf;
}

#define s32(buf, v) fin(buf, mfs_fmt_f32(buf, v))
#define s64(buf, v) fin(buf, mfs_fmt_f64(buf, v))
#define s16(buf, h) fin(buf, mfs_fmt_f16(buf, h))
#define selem(buf, dt, src) fin(buf, mfs_fmt_elem(buf, dt, src))

static int pelem(enum mfs_dtype dt, const char *s, void *dst)
{
	return mfs_parse_elem(dt, s, strlen(s), dst);
}

/* Significant digits of a formatted number ("1000" has 1, "0.0012" 2). */
static int sigdigits(const char *s)
{
	int n = 0, upto_last_nonzero = 0;
	for (; *s && *s != 'e'; s++) {
		if (*s < '0' || *s > '9' || (*s == '0' && !n))
			continue;
		n++;
		if (*s != '0')
			upto_last_nonzero = n;
	}
	return upto_last_nonzero;
}

/* The fewest %.*g digits that read back to v with strtof (f32) or strtod. */
static int printf_digits(double v, bool f32)
{
	char buf[400];  /* %.*g of a double can be long at -O0 in the compiler's eyes */
	int p = 1, max = f32 ? 9 : 17;
	for (; p < max; p++) {
		snprintf(buf, sizeof(buf), "%.*g", p, v);
		if (f32 ? strtof(buf, NULL) == (float)v : strtod(buf, NULL) == v)
			break;
	}
	return p;
}

/* --- Known strings ---------------------------------------------------------- */

static void test_known_f32(void **state)
{
	(void)state;
	static const struct {
		float v;
		const char *s;
	} t[] = {
		{0.1f, "0.1"}, {3.0000000054977558e+38f, "3e+38"},
		{1.401298464324817e-45f, "1e-45"}, {FLT_MIN, "1.1754944e-38"},
		{FLT_MAX, "3.4028235e+38"}, {65504.0f, "65504"}, {16777216.0f, "16777216"},
		{1.5e38f, "1.5e+38"}, {1e-5f, "1e-05"}, {0.0001f, "0.0001"}, {3.0f, "3"},
		{-2.5f, "-2.5"}, {1e16f, "1e+16"},
		{1e15f, "1000000000000000"},  /* 999999986991104, shortest 1e15 */
		{123456.79f, "123456.79"}, {0.0f, "0"}, {-0.0f, "-0"},
		{1.0f / 3.0f, "0.33333334"},
	};
	char buf[MFS_NUM_MAX + 1];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(s32(buf, t[i].v), t[i].s);
	assert_string_equal(s32(buf, f32_of(0x7f800000)), "inf");
	assert_string_equal(s32(buf, f32_of(0xff800000)), "-inf");
	assert_string_equal(s32(buf, f32_of(0x7fc00000)), "nan");
	assert_string_equal(s32(buf, f32_of(0xffc00001)), "-nan");
	assert_string_equal(s32(buf, f32_of(0x7f800001)), "nan");
}

static void test_known_f64(void **state)
{
	(void)state;
	static const struct {
		double v;
		const char *s;
	} t[] = {
		{1e16, "1e+16"}, {1e15, "1000000000000000"},
		{9999999999999998.0, "9999999999999998"}, {1e-5, "1e-05"},
		{0.0001, "0.0001"}, {0.0001234, "0.0001234"}, {0.00001234, "1.234e-05"},
		{5e-324, "5e-324"}, {-0.0, "-0"}, {0.0, "0"},
		{3.141592653589793, "3.141592653589793"},
		{0.1 + 0.2, "0.30000000000000004"}, {DBL_MAX, "1.7976931348623157e+308"},
		{DBL_MIN, "2.2250738585072014e-308"},
		{123456789012345680.0, "1.2345678901234568e+17"}, {-2.5e-7, "-2.5e-07"},
		{100.0, "100"}, {1.5, "1.5"}, {1e100, "1e+100"},
		{(double)0.1f, "0.10000000149011612"},
	};
	char buf[MFS_NUM_MAX + 1];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(s64(buf, t[i].v), t[i].s);
	assert_string_equal(s64(buf, INFINITY), "inf");
	assert_string_equal(s64(buf, -INFINITY), "-inf");
	assert_string_equal(s64(buf, f64_of(0x7ff8000000000000ull)), "nan");
	assert_string_equal(s64(buf, f64_of(0xfff8000000000000ull)), "-nan");
}

static void test_known_f16(void **state)
{
	(void)state;
	static const struct {
		uint16_t h;
		const char *s;
	} t[] = {
		{0x2e66, "0.1"},      /* float16(0.1) = 0.0999755859375 */
		{0x3c00, "1"}, {0xbc00, "-1"}, {0x3c01, "1.001"}, {0x3555, "0.3333"},
		{0x7bff, "65500"},    /* 65504 reads back from "65500" (NumPy: 65500.0) */
		{0x0001, "6e-08"}, {0x0400, "6.104e-05"}, {0x4248, "3.14"},
		{0x2a00, "0.04688"},  /* 0.046875: a tie, to the even digit as NumPy */
		{0x0000, "0"}, {0x8000, "-0"}, {0x7c00, "inf"}, {0xfc00, "-inf"},
		{0x7e00, "nan"}, {0xfe00, "-nan"},
	};
	char buf[MFS_NUM_MAX + 1];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_string_equal(s16(buf, t[i].h), t[i].s);
}

/* --- Round trips ------------------------------------------------------------ */

static void test_f32_roundtrip(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1];
	size_t n = count(10000000);
	for (size_t i = 0; i < n; i++) {
		uint32_t b = (uint32_t)rnd();
		float v = f32_of(b), w = 0;
		s32(buf, v);
		float c = strtof(buf, NULL);
		assert_int_equal(mfs_parse_f32(buf, strlen(buf), &w), 0);
		if (isnan(v)) {
			assert_true(isnan(c) && isnan(w));
			assert_int_equal(signbit(c) != 0, signbit(v) != 0);
			assert_int_equal(signbit(w) != 0, signbit(v) != 0);
			continue;
		}
		if (bits32(c) != b || bits32(w) != b)
			fail_msg("%08x -> \"%s\" -> %08x / %08x", b, buf, bits32(c), bits32(w));
		/* Against the shortest %.*g that reads back, for a sample. */
		if (i % 64 == 0)
			assert_true(sigdigits(buf) <= printf_digits(v, true));
	}
}

static void test_f64_roundtrip(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1];
	size_t n = count(3000000);
	for (size_t i = 0; i < n; i++) {
		uint64_t b = rnd();
		double v = f64_of(b), w = 0;
		s64(buf, v);
		double c = strtod(buf, NULL);
		assert_int_equal(mfs_parse_f64(buf, strlen(buf), &w), 0);
		if (isnan(v)) {
			assert_true(isnan(c) && isnan(w));
			assert_int_equal(signbit(w) != 0, signbit(v) != 0);
			continue;
		}
		if (bits64(c) != b || bits64(w) != b)
			fail_msg("%016llx -> \"%s\"", (unsigned long long)b, buf);
		if (i % 64 == 0)
			assert_true(sigdigits(buf) <= printf_digits(v, false));
	}
}

/* A decimal with at most FLT_DIG (DBL_DIG) digits comes back as itself. */
static void test_short_decimals(void **state)
{
	(void)state;
	char in[64], buf[MFS_NUM_MAX + 1];
	size_t n = count(200000);
	for (size_t i = 0; i < n; i++) {
		bool f32 = i & 1;
		int digits = 1 + (int)(rnd() % (f32 ? 6 : 15));
		uint64_t m = rnd() % 1000000000000000ull % (uint64_t)pow(10, digits);
		int e = f32 ? (int)(rnd() % 70) - 40 : (int)(rnd() % 590) - 300;
		snprintf(in, sizeof(in), "%s%llue%d", rnd() & 1 ? "-" : "", (unsigned long long)m, e);
		if (f32) {
			float v;
			assert_int_equal(mfs_parse_f32(in, strlen(in), &v), 0);
			if (fabsf(v) < FLT_MIN)
				continue;  /* subnormals have fewer digits */
			assert_true(strtod(s32(buf, v), NULL) == strtod(in, NULL));
		} else {
			double v;
			assert_int_equal(mfs_parse_f64(in, strlen(in), &v), 0);
			if (fabs(v) < DBL_MIN)
				continue;
			assert_true(strtod(s64(buf, v), NULL) == strtod(in, NULL));
		}
	}
}

/* Every float16: format, parse back, same bits; and no longer than the
 * shortest %.*g that reads back. */
static void test_f16_all(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1], ref[64];
	for (uint32_t h = 0; h < 0x10000; h++) {
		uint16_t back = 0;
		s16(buf, (uint16_t)h);
		assert_int_equal(mfs_parse_f16(buf, strlen(buf), &back), 0);
		if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) {
			assert_true((back & 0x7c00) == 0x7c00 && (back & 0x3ff));
			assert_int_equal(back >> 15, h >> 15);
			continue;
		}
		if (back != h)
			fail_msg("%04x -> \"%s\" -> %04x", h, buf, back);
		if ((h & 0x7c00) == 0x7c00 || !(h & 0x7fff))
			continue;
		double v = mfs_f16_to_f32((uint16_t)h);
		int p = 1;
		for (; p < 5; p++) {
			snprintf(ref, sizeof(ref), "%.*g", p, v);
			if (mfs_f64_to_f16(strtod(ref, NULL)) == h)
				break;
		}
		if (sigdigits(buf) > p)
			fail_msg("%04x: \"%s\" longer than \"%s\"", h, buf, ref);
	}
}

/* Subtract one unit in the last place of a decimal string "ddd.ddd" that
 * ends in zeros and is not zero. */
static void dec_minus_ulp(char *s)
{
	size_t i = strlen(s);
	while (i-- > 0) {
		if (s[i] == '.')
			continue;
		if (s[i] != '0') {
			s[i]--;
			return;
		}
		s[i] = '9';
	}
}

/* Midpoints between float16 neighbours, exact and off by 1e-41, plain and
 * in scientific notation, both signs: parsing through double rounds such
 * text onto the midpoint; the text must decide, ties to even. */
static void test_f16_midpoints(void **state)
{
	(void)state;
	char mid[128], txt[160];
	for (uint32_t h = 0; h < 0x7c00; h++) {
		double a = mfs_f16_to_f32((uint16_t)h);
		double b = h == 0x7bff ? 65536.0 : mfs_f16_to_f32((uint16_t)(h + 1));
		snprintf(mid, sizeof(mid), "%.40f", (a + b) / 2);  /* exact */
		uint32_t even = (h & 1) ? h + 1 : h;
		for (int v = 0; v < 12; v++) {
			int kind = v % 3, neg = v / 6;  /* exact, above, below */
			bool sci = (v / 3) & 1;
			uint16_t r = 0;
			snprintf(txt, sizeof(txt), "%s%s%s", neg ? "-" : "", mid, kind == 1 ? "1" : "");
			if (kind == 2)
				dec_minus_ulp(txt + neg);
			if (sci) {
				char *dot = strchr(txt, '.');
				memmove(dot, dot + 1, strlen(dot));
				strcat(txt, kind == 1 ? "e-41" : "e-40");
			}
			uint32_t want = kind == 0 ? even : kind == 1 ? h + 1 : h;
			int rc = mfs_parse_f16(txt, strlen(txt), &r);
			if (want == 0x7c00 ? rc != -ERANGE : rc || r != (want | (neg ? 0x8000 : 0)))
				fail_msg("\"%s\": %d %04x, expected %04x", txt, rc, r, want);
		}
	}
}

static void test_f16_convert(void **state)
{
	(void)state;
	assert_true(mfs_f16_to_f32(0x0001) == 0x1p-24f);
	assert_true(mfs_f16_to_f32(0x03ff) == 0x3ffp-24f);
	assert_true(mfs_f16_to_f32(0x0400) == 0x1p-14f);
	assert_true(mfs_f16_to_f32(0x7bff) == 65504.0f);
	assert_true(mfs_f16_to_f32(0xc000) == -2.0f);
	assert_true(isinf(mfs_f16_to_f32(0x7c00)));
	assert_true(isnan(mfs_f16_to_f32(0xfe00)) && signbit(mfs_f16_to_f32(0xfe00)));
	static const struct {
		double d;
		uint16_t h;
	} t[] = {
		{65519.99, 0x7bff}, {65520.0, 0x7c00}, {0x1p-25, 0}, {0x1.0000000000001p-25, 1},
		{-0x1p-26, 0x8000}, {0x3ffp-24 + 0x1p-25, 0x0400}, {1.0 + 0x1p-11, 0x3c00},
		{1.0 + 0x3p-11, 0x3c02}, {1e300, 0x7c00}, {-1e-300, 0x8000},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(mfs_f64_to_f16(t[i].d), t[i].h);
#ifdef __FLT16_MAX__
	/* The compiler's own conversions, where it has _Float16. */
	for (uint32_t h = 0; h < 0x10000; h++) {
		_Float16 x;
		uint16_t hb = (uint16_t)h;
		memcpy(&x, &hb, 2);
		float a = mfs_f16_to_f32(hb), b = (float)x;
		if (isnan(b))
			assert_true(isnan(a));
		else
			assert_int_equal(bits32(a), bits32(b));
	}
	for (size_t i = 0; i < count(2000000); i++) {
		/* exponents around the float16 range, random significands */
		uint64_t r = rnd();
		uint64_t e = 1023 - 30 + (r >> 58) % 50;
		double d = f64_of((r & 0x800fffffffffffffull) | e << 52);
		_Float16 x = (_Float16)d;
		uint16_t hb;
		memcpy(&hb, &x, 2);
		assert_int_equal(mfs_f64_to_f16(d), hb);
	}
#endif
}

/* --- Parsing ---------------------------------------------------------------- */

struct pcase {
	int dt;  /* enum mfs_dtype, by the short names below */
	const char *s;
	int rc;
};

/* Short names for the tables below. */
enum {
	I8 = MFS_DT_I8, U8 = MFS_DT_U8, I32 = MFS_DT_I32, I64 = MFS_DT_I64,
	U64 = MFS_DT_U64, F16 = MFS_DT_F16, F32 = MFS_DT_F32, F64 = MFS_DT_F64,
	BOOL = MFS_DT_BOOL, C32 = MFS_DT_C32, C64 = MFS_DT_C64, C128 = MFS_DT_C128,
	CHAR8 = MFS_DT_CHAR8, CHAR16 = MFS_DT_CHAR16, VOID = MFS_DT_VOID,
	OPAQUE = MFS_DT_OPAQUE, INVALID = MFS_DT_INVALID,
};

static void test_parse_errors(void **state)
{
	(void)state;
	static const struct pcase t[] = {
		{F32, "1e39", -ERANGE}, {F32, "-1e39", -ERANGE},
		{F32, "3.4028236e38", -ERANGE}, {F32, "3.4028235e38", 0},
		{F64, "1e309", -ERANGE}, {F64, "-1e309", -ERANGE},
		{F64, "1.7976931348623157e308", 0}, {F16, "70000", -ERANGE},
		{F16, "65520", -ERANGE}, {F16, "-65520", -ERANGE}, {F16, "65519.99", 0},
		{F16, "65520.000000000000000000001", -ERANGE}, {F16, "1e309", -ERANGE},
		{F32, "1e-50", 0}, {F64, "1e-400", 0}, {F16, "1e-10", 0}, {F32, "", -EINVAL},
		{F32, " 1", -EINVAL}, {F32, "1 ", -EINVAL}, {F32, "1\n", -EINVAL},
		{F32, "1e", -EINVAL}, {F32, "1e+", -EINVAL}, {F32, "e5", -EINVAL},
		{F32, ".", -EINVAL}, {F32, "-", -EINVAL}, {F32, "+", -EINVAL},
		{F32, "+-1", -EINVAL}, {F32, "-+1", -EINVAL}, {F32, "--1", -EINVAL},
		{F32, "1..2", -EINVAL}, {F32, "1.2.3", -EINVAL}, {F32, "0x10", -EINVAL},
		{F32, "1,5", -EINVAL}, {F32, "infinit", -EINVAL}, {F32, "infinityy", -EINVAL},
		{F32, "nan(1)", -EINVAL}, {F32, "-nanx", -EINVAL}, {F32, "in", -EINVAL},
		{F32, "1f", -EINVAL}, {F16, "", -EINVAL}, {F16, "1e", -EINVAL},
		{F64, "1_000", -EINVAL}, {F32, ".5", 0}, {F32, "5.", 0}, {F32, "+5", 0},
		{F32, "-.5e-3", 0}, {F32, "1E5", 0}, {F32, "inf", 0}, {F32, "-Infinity", 0},
		{F32, "+INF", 0}, {F64, "NaN", 0}, {F16, "-nan", 0}, {I32, "1.5", -EINVAL},
		{I32, "1e3", -EINVAL}, {I32, "", -EINVAL}, {I32, "-", -EINVAL},
		{I32, "+", -EINVAL}, {I32, " 1", -EINVAL}, {I32, "1 ", -EINVAL},
		{I32, "--1", -EINVAL}, {I32, "+-1", -EINVAL}, {I32, "0x10", -EINVAL},
		{I32, "inf", -EINVAL}, {I32, "99999999999999999999999x", -EINVAL},
		{I32, "99999999999999999999999", -ERANGE}, {I32, "+7", 0}, {I32, "-0", 0},
		{I32, "007", 0}, {U8, "-0", 0}, {U8, "-1", -ERANGE}, {U8, "256", -ERANGE},
		{U8, "255", 0}, {U64, "-1", -ERANGE}, {U64, "18446744073709551616", -ERANGE},
		{I64, "9223372036854775808", -ERANGE}, {I64, "-9223372036854775809", -ERANGE},
		{BOOL, "2", -ERANGE}, {BOOL, "-1", -ERANGE}, {BOOL, "TRUE", -EINVAL},
		{BOOL, "yes", -EINVAL}, {BOOL, "", -EINVAL}, {BOOL, "1.0", -EINVAL},
		{CHAR8, "256", -ERANGE}, {C64, "1+2", -EINVAL}, {C64, "1+2jj", -EINVAL},
		{C64, "(1+2j", -EINVAL}, {C64, "1+2j)", -EINVAL}, {C64, "1+2i", -EINVAL},
		{C64, "()", -EINVAL}, {C64, "", -EINVAL}, {C64, "1+-2j", -EINVAL},
		{C64, "1 + 2j", -EINVAL}, {C64, "1e39+0j", -ERANGE}, {C64, "0+1e39j", -ERANGE},
		{C64, "x+1e39j", -EINVAL}, {C128, "1e309j", -ERANGE},
		{C32, "70000+1j", -ERANGE}, {VOID, "0", -EINVAL}, {OPAQUE, "0", -EINVAL},
		{CHAR16, "0", -EINVAL}, {INVALID, "0", -EINVAL},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t dst[16];
		enum mfs_dtype dt = (enum mfs_dtype)t[i].dt;
		int rc = pelem(dt, t[i].s, dst);
		if (rc != t[i].rc)
			fail_msg("%s \"%s\": %d, expected %d", mfs_dtype_info(dt)->name,
				 t[i].s, rc, t[i].rc);
	}
}

/* Exact results: the bits of the element parsed from the text. */
static void test_parse_floats(void **state)
{
	(void)state;
	static const struct {
		int dt;
		const char *s;
		uint64_t bits;
	} t[] = {
		{F32, "0.1", 0x3dcccccd}, {F32, "-0", 0x80000000},
		{F32, "1e-50", 0}, {F32, "-1e-50", 0x80000000},
		{F32, "1e-45", 1}, {F32, "-Infinity", 0xff800000},
		{F32, "-nan", 0xffc00000}, {F32, "NAN", 0x7fc00000},
		{F32, "+.5e1", 0x40a00000}, {F32, "3.4028235e38", 0x7f7fffff},
		{F64, "5e-324", 1},
		{F64, "2.4703282292062328e-324", 1},  /* just above half of 5e-324 */
		{F64, "2.4703282292062327e-324", 0},
		{F64, "3.141592653589793", 0x400921fb54442d18},
		{F64, "0.30000000000000004", 0x3fd3333333333334},
		{F64, "-INF", 0xfff0000000000000}, {F16, "0.1", 0x2e66},
		{F16, "65519.99", 0x7bff}, {F16, "-0", 0x8000},
		{F16, "1e-10", 0}, {F16, "6e-8", 1}, {F16, "inFINity", 0x7c00},
		/* ties between float16 neighbours go to even; text a hair above
		 * or below, which double rounds onto the tie, must not */
		{F16, "2.98023223876953125e-8", 0},
		{F16, "2.98023223876953125000000000001e-8", 1},
		{F16, "1.00048828125", 0x3c00},
		{F16, "1.000488281250000000000000001", 0x3c01},
		{F16, "100048828125e-11", 0x3c00},
		{F16, "1000488281250000000000000001e-27", 0x3c01},
		{F16, "0.1000488281249999999999999999999e1", 0x3c00},
		{F16, "65519.999999999999999999999", 0x7bff},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t e[8] = {0};
		uint64_t got = 0;
		if (pelem((enum mfs_dtype)t[i].dt, t[i].s, e))
			fail_msg("\"%s\" refused", t[i].s);
		for (int k = 7; k >= 0; k--)
			got = got << 8 | e[k];
		if (got != t[i].bits)
			fail_msg("\"%s\": %llx", t[i].s, (unsigned long long)got);
	}
	/* the length bounds the token: no NUL needed, what follows is ignored */
	float f;
	assert_int_equal(mfs_parse_f32("2.5xyz", 3, &f), 0);
	assert_true(f == 2.5f);
}

/* mfs_parse_i64 with its own bounds, through a NUL-terminated string */
static int pi64(const char *s, int64_t min, int64_t max, int64_t *v)
{
	return mfs_parse_i64(s, strlen(s), min, max, v);
}

static void test_ints(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1], ref[32];
	int64_t i;
	uint64_t u;
	assert_string_equal(fin(buf, mfs_fmt_i64(buf, INT64_MIN)), "-9223372036854775808");
	assert_string_equal(fin(buf, mfs_fmt_i64(buf, INT64_MAX)), "9223372036854775807");
	assert_string_equal(fin(buf, mfs_fmt_i64(buf, 0)), "0");
	assert_string_equal(fin(buf, mfs_fmt_i64(buf, -1)), "-1");
	assert_string_equal(fin(buf, mfs_fmt_u64(buf, UINT64_MAX)), "18446744073709551615");
	assert_string_equal(fin(buf, mfs_fmt_u64(buf, 10000000000000000000ull)),
			    "10000000000000000000");
	assert_string_equal(fin(buf, mfs_fmt_u64(buf, 100000000)), "100000000");
	assert_int_equal(pi64("-9223372036854775808", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(pi64("+9223372036854775807", INT64_MIN, INT64_MAX, &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(pi64("9223372036854775808", INT64_MIN, INT64_MAX, &i), -ERANGE);
	assert_int_equal(pi64("-9223372036854775809", INT64_MIN, INT64_MAX, &i), -ERANGE);
	assert_int_equal(pi64("-18446744073709551616", INT64_MIN, INT64_MAX, &i), -ERANGE);
	assert_int_equal(pi64("-0", 0, 10, &i), 0);
	assert_true(i == 0);
	assert_int_equal(pi64("11", 0, 10, &i), -ERANGE);
	assert_int_equal(pi64("-1", 0, 10, &i), -ERANGE);
	assert_int_equal(mfs_parse_u64("18446744073709551615", 20, UINT64_MAX, &u), 0);
	assert_true(u == UINT64_MAX);
	assert_int_equal(mfs_parse_u64("18446744073709551616", 20, UINT64_MAX, &u), -ERANGE);
	assert_int_equal(mfs_parse_u64("99999999999999999999", 20, UINT64_MAX, &u), -ERANGE);
	assert_int_equal(mfs_parse_u64("-0", 2, UINT64_MAX, &u), 0);
	assert_true(u == 0);
	assert_int_equal(mfs_parse_u64("-1", 2, UINT64_MAX, &u), -ERANGE);
	assert_int_equal(mfs_parse_u64("1.0", 3, UINT64_MAX, &u), -EINVAL);
	/* random values through text and back */
	for (size_t k = 0; k < count(200000); k++) {
		int64_t v = (int64_t)(rnd() >> (rnd() % 64));
		v = k & 1 ? -v : v;
		snprintf(ref, sizeof(ref), "%lld", (long long)v);
		assert_string_equal(fin(buf, mfs_fmt_i64(buf, v)), ref);
		assert_int_equal(pi64(buf, INT64_MIN, INT64_MAX, &i), 0);
		assert_true(i == v);
	}
}

/* Every integer dtype at and beyond its limits, through mfs_*_elem, and
 * little-endian storage. */
static void test_int_elems(void **state)
{
	(void)state;
	static const struct {
		enum mfs_dtype dt;
		const char *lo, *hi, *below, *above;
	} t[] = {
		{MFS_DT_I8, "-128", "127", "-129", "128"},
		{MFS_DT_U8, "0", "255", "-1", "256"},
		{MFS_DT_I16, "-32768", "32767", "-32769", "32768"},
		{MFS_DT_U16, "0", "65535", "-1", "65536"},
		{MFS_DT_I32, "-2147483648", "2147483647", "-2147483649", "2147483648"},
		{MFS_DT_U32, "0", "4294967295", "-1", "4294967296"},
		{MFS_DT_I64, "-9223372036854775808", "9223372036854775807",
		 "-9223372036854775809", "9223372036854775808"},
		{MFS_DT_U64, "0", "18446744073709551615", "-1", "18446744073709551616"},
		{MFS_DT_CHAR8, "0", "255", "-1", "256"},
	};
	char buf[MFS_NUM_MAX + 1];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t e[8], guard[8];
		size_t sz = mfs_dtype_info(t[i].dt)->size;
		memset(e, 0xaa, sizeof(e));
		assert_int_equal(pelem(t[i].dt, t[i].lo, e), 0);
		assert_string_equal(selem(buf, t[i].dt, e), t[i].lo);
		memset(guard, 0xaa, sizeof(guard));
		assert_memory_equal(e + sz, guard, 8 - sz);  /* wrote size bytes only */
		assert_int_equal(pelem(t[i].dt, t[i].hi, e), 0);
		assert_string_equal(selem(buf, t[i].dt, e), t[i].hi);
		assert_int_equal(pelem(t[i].dt, t[i].below, e), -ERANGE);
		assert_int_equal(pelem(t[i].dt, t[i].above, e), -ERANGE);
		assert_string_equal(selem(buf, t[i].dt, e), t[i].hi);  /* unchanged */
	}
	/* little-endian storage */
	uint8_t e[8];
	assert_int_equal(pelem(MFS_DT_I32, "-2", e), 0);
	assert_memory_equal(e, "\xfe\xff\xff\xff", 4);
	assert_int_equal(pelem(MFS_DT_U16, "258", e), 0);
	assert_memory_equal(e, "\x02\x01", 2);
	assert_string_equal(selem(buf, MFS_DT_I16, "\x00\x80"), "-32768");
	assert_string_equal(selem(buf, MFS_DT_CHAR8, "A"), "65");
	assert_string_equal(selem(buf, MFS_DT_CHAR8, "\xff"), "255");
	assert_string_equal(selem(buf, MFS_DT_I8, "\xff"), "-1");
	assert_int_equal(pelem(MFS_DT_F64, "0.1", e), 0);
	assert_memory_equal(e, "\x9a\x99\x99\x99\x99\x99\xb9\x3f", 8);
	assert_string_equal(selem(buf, MFS_DT_F64, e), "0.1");
	assert_string_equal(selem(buf, MFS_DT_F32, "\x00\x00\x80\x7f"), "inf");
	assert_string_equal(selem(buf, MFS_DT_F16, "\x66\x2e"), "0.1");
}

static void test_bool(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1];
	uint8_t b = 7;
	assert_string_equal(selem(buf, MFS_DT_BOOL, "\x00"), "0");
	assert_string_equal(selem(buf, MFS_DT_BOOL, "\x01"), "1");
	assert_string_equal(selem(buf, MFS_DT_BOOL, "\x02"), "1");
	static const struct {
		const char *s;
		uint8_t v;
	} t[] = {
		{"0", 0}, {"1", 1}, {"true", 1}, {"True", 1}, {"false", 0},
		{"False", 0}, {"-0", 0}, {"+1", 1},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(pelem(MFS_DT_BOOL, t[i].s, &b), 0);
		assert_int_equal(b, t[i].v);
	}
}

static void test_complex(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1];
	float c[2];
	double z[2];
	uint16_t h[2];
	static const struct {
		float re, im;
		const char *s;
	} f[] = {
		{1, 2, "1+2j"}, {-3.5f, -0.5f, "-3.5-0.5j"}, {1, -0.0f, "1-0j"},
		{0, 0, "0+0j"}, {-0.0f, 0, "-0+0j"}, {NAN, INFINITY, "nan+infj"},
		{1e20f, -1e-20f, "1e+20-1e-20j"}, {0.1f, -INFINITY, "0.1-infj"},
	};
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		c[0] = f[i].re;
		c[1] = f[i].im;
		assert_string_equal(selem(buf, MFS_DT_C64, c), f[i].s);
	}
	c[0] = 1;
	c[1] = f32_of(0xffc00000);
	assert_string_equal(selem(buf, MFS_DT_C64, c), "1-nanj");
	z[0] = 3.141592653589793;
	z[1] = -1e-300;
	assert_string_equal(selem(buf, MFS_DT_C128, z), "3.141592653589793-1e-300j");
	z[0] = -2.2250738585072014e-308;
	z[1] = -1.2345678901234567e-300;
	assert_true(mfs_fmt_elem(buf, MFS_DT_C128, z) <= MFS_NUM_MAX);
	h[0] = 0x2e66;
	h[1] = 0xbc00;
	assert_string_equal(selem(buf, MFS_DT_C32, h), "0.1-1j");

	static const struct {
		const char *s;
		double re, im;
	} p[] = {
		{"1+2j", 1, 2}, {"1-2j", 1, -2}, {"(1+2j)", 1, 2},
		{"(-1.5e+3-2.5e-3J)", -1500, -0.0025}, {"2j", 0, 2}, {"-2j", 0, -2},
		{"+2.5e-3j", 0, 0.0025}, {"7", 7, 0}, {"(7)", 7, 0}, {"-1e+05", -1e5, 0},
		{"1e5+1e5j", 1e5, 1e5}, {"j", 0, 1}, {"-j", 0, -1}, {"3+j", 3, 1},
		{"3-j", 3, -1}, {"inf-infj", INFINITY, -INFINITY},
		{"-infinity+Infj", -INFINITY, INFINITY},
	};
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
		if (pelem(MFS_DT_C128, p[i].s, z))
			fail_msg("complex128 \"%s\" refused", p[i].s);
		assert_true(z[0] == p[i].re && z[1] == p[i].im);
		assert_int_equal(pelem(MFS_DT_C64, p[i].s, c), 0);
		assert_true(c[0] == (float)p[i].re && c[1] == (float)p[i].im);
	}
	assert_int_equal(pelem(MFS_DT_C64, "nan-nanj", c), 0);
	assert_true(isnan(c[0]) && !signbit(c[0]) && isnan(c[1]) && signbit(c[1]));
	assert_int_equal(pelem(MFS_DT_C64, "1-0j", c), 0);
	assert_true(c[0] == 1 && c[1] == 0 && signbit(c[1]));
	assert_int_equal(pelem(MFS_DT_C32, "0.1-1j", h), 0);
	assert_true(h[0] == 0x2e66 && h[1] == 0xbc00);
	/* a refused token leaves the destination alone */
	z[0] = z[1] = 42;
	assert_int_equal(pelem(MFS_DT_C128, "1+1e999j", z), -ERANGE);
	assert_true(z[0] == 42 && z[1] == 42);

	/* round trips of random bit patterns */
	for (size_t i = 0; i < count(200000); i++) {
		uint64_t r = rnd();
		float in[2] = {f32_of((uint32_t)r), f32_of((uint32_t)(r >> 32))};
		selem(buf, MFS_DT_C64, in);
		assert_int_equal(pelem(MFS_DT_C64, buf, c), 0);
		for (int k = 0; k < 2; k++) {
			if (isnan(in[k]))
				assert_true(isnan(c[k]) && !signbit(c[k]) == !signbit(in[k]));
			else
				assert_int_equal(bits32(c[k]), bits32(in[k]));
		}
		uint16_t hin[2] = {(uint16_t)r, (uint16_t)(r >> 16)};
		selem(buf, MFS_DT_C32, hin);
		assert_int_equal(pelem(MFS_DT_C32, buf, h), 0);
		for (int k = 0; k < 2; k++)
			if ((hin[k] & 0x7c00) != 0x7c00 || !(hin[k] & 0x3ff))
				assert_int_equal(h[k], hin[k]);
	}
}

/* --- Benchmark (MFS_BENCH=1) ------------------------------------------------ */

/* Thread CPU time: other processes on the machine matter less. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

enum { BENCH_N = 1 << 21 };

static void report(const char *label, double t, size_t bytes)
{
	printf("bench: %-26s %6.1f ns/value", label, t * 1e9 / BENCH_N);
	if (bytes)
		printf(" %6.0f MB/s\n", (double)bytes / t * 1e-6);
	else
		printf(" %6.1f M/s\n", BENCH_N / t * 1e-6);
}

/* Best of three runs of body for i in [0, BENCH_N). */
#define BENCH(label, bytes, body) do {						\
		double best_ = 1e9;						\
		for (int rep_ = 0; rep_ < 3; rep_++) {				\
			double t0_ = now();					\
			for (size_t i = 0; i < BENCH_N; i++) {			\
				body;						\
			}							\
			best_ = fmin(best_, now() - t0_);			\
		}								\
		report(label, best_, bytes);					\
	} while (0)

/* values.txt-like text of n floats; off[i] is where value i starts */
static size_t lay_out(const float *f, char *text, size_t *off)
{
	char *p = text;
	for (size_t i = 0; i < BENCH_N; i++) {
		off[i] = (size_t)(p - text);
		p += mfs_fmt_f32(p, f[i]);
		*p++ = '\n';
	}
	off[BENCH_N] = (size_t)(p - text);
	return off[BENCH_N];
}

static void test_bench(void **state)
{
	(void)state;
	const char *b = getenv("MFS_BENCH");
	if (!b || strcmp(b, "1"))
		skip();
	float *fw = malloc(BENCH_N * sizeof(float)), *fr = malloc(BENCH_N * sizeof(float));
	double *d = malloc(BENCH_N * sizeof(double));
	char *text = malloc((size_t)BENCH_N * 24), buf[MFS_NUM_MAX + 1];
	size_t *off = malloc((BENCH_N + 1) * sizeof(size_t));
	assert_true(fw && fr && d && text && off);
	for (size_t i = 0; i < BENCH_N; i++) {
		/* weights-like: uniform in +-0.1 times 0.1 .. 100 */
		double u = ((double)(rnd() >> 11) * 0x1p-53 - 0.5) * 0.2;
		fw[i] = (float)(u * pow(10, (double)(rnd() % 4) - 1));
		uint64_t r = rnd();
		fr[i] = f32_of((uint32_t)r & 0xbfffffffu);  /* finite, random */
		d[i] = f64_of(r & 0xbfffffffffffffffull);
	}
	volatile size_t sink = 0;
	float v;
	uint16_t h;
	BENCH("mfs_fmt_f32 (weights)", 0, sink += mfs_fmt_f32(buf, fw[i]));
	BENCH("mfs_len_f32 (weights)", 0, sink += mfs_len_f32(bits32(fw[i])));
	BENCH("mfs_fmt_f32 (random bits)", 0, sink += mfs_fmt_f32(buf, fr[i]));
	for (int k = 0; k < 2; k++) {
		const float *f = k ? fr : fw;
		BENCH(k ? "mfs_fmt_f32_run (random)" : "mfs_fmt_f32_run (weights)", 0,
		      if (i % 64 == 0) sink += mfs_fmt_f32_run(text, f + i, 64, ' '));
	}
	BENCH("snprintf %.9g (weights)", 0,
	      sink += (size_t)snprintf(buf, sizeof(buf), "%.9g", (double)fw[i]));
	BENCH("mfs_fmt_f64 (random bits)", 0, sink += mfs_fmt_f64(buf, d[i]));
	BENCH("snprintf %.17g (random)", 0,
	      sink += (size_t)snprintf(buf, sizeof(buf), "%.17g", d[i]));
	BENCH("mfs_fmt_f16 (weights)", 0, sink += mfs_fmt_f16(buf, mfs_f64_to_f16(fw[i])));
	for (int k = 0; k < 2; k++) {
		size_t bytes = lay_out(k ? fr : fw, text, off);
		printf("bench: parsing %s text, %.1f bytes/value\n", k ? "random-bit" : "weights",
		       (double)bytes / BENCH_N);
		BENCH("mfs_parse_f32", bytes,
		      mfs_parse_f32(text + off[i], off[i + 1] - off[i] - 1, &v); sink += bits32(v));
		BENCH("strtof", bytes, sink += bits32(strtof(text + off[i], NULL)));
		BENCH("mfs_parse_f16", bytes,
		      mfs_parse_f16(text + off[i], off[i + 1] - off[i] - 1, &h); sink += h);
	}
	(void)sink;
	free(fw);
	free(fr);
	free(d);
	free(text);
	free(off);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known_f32),
		cmocka_unit_test(test_known_f64),
		cmocka_unit_test(test_known_f16),
		cmocka_unit_test(test_f32_roundtrip),
		cmocka_unit_test(test_f64_roundtrip),
		cmocka_unit_test(test_short_decimals),
		cmocka_unit_test(test_f16_all),
		cmocka_unit_test(test_f16_midpoints),
		cmocka_unit_test(test_f16_convert),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_parse_floats),
		cmocka_unit_test(test_ints),
		cmocka_unit_test(test_int_elems),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_complex),
		cmocka_unit_test(test_bench),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
