/* Unit tests of bfloat16, float8_e4m3fn and float8_e5m2 text, on every bit
 * pattern (65,536 and 2 x 256), against a computation of their own: values
 * from the formats' definitions (ldexp), rounding by comparing a double with
 * the exact midpoint of two neighbours, decimals by glibc's exact printf
 * under directed rounding modes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fenv.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtype.h"
#include "numtext.h"
#include "stats.h"

struct fmt {
	const char *name;
	enum mfs_dtype dt;
	int ebits, mbits, size;
	bool has_inf;       /* IEEE: all-ones exponent is inf or nan */
	unsigned count;     /* bit patterns */
	/* filled by setup: finite positive values by magnitude bits */
	unsigned nfin;      /* magnitude bits 0..nfin-1 are finite */
	double *val;
};

static struct fmt BF16 = {"bfloat16", MFS_DT_BF16, 8, 7, 2, true, 65536, 0, NULL};
static struct fmt E4M3 = {"float8_e4m3fn", MFS_DT_F8E4M3, 4, 3, 1, false, 256, 0, NULL};
static struct fmt E5M2 = {"float8_e5m2", MFS_DT_F8E5M2, 5, 2, 1, true, 256, 0, NULL};

/* The value of magnitude bits a from the format's definition; NAN/INFINITY
 * for the specials. */
static double def_value(const struct fmt *f, unsigned a)
{
	unsigned E = a >> f->mbits, M = a & ((1u << f->mbits) - 1), Emax = (1u << f->ebits) - 1;
	int bias = (1 << (f->ebits - 1)) - 1;
	if (f->has_inf && E == Emax)
		return M ? NAN : INFINITY;
	if (!f->has_inf && E == Emax && M == (1u << f->mbits) - 1)
		return NAN;  /* e4m3fn: S.1111.111 only */
	if (!E)
		return ldexp(M, 1 - bias - f->mbits);
	return ldexp(M + (1u << f->mbits), (int)E - bias - f->mbits);
}

static void setup_fmt(struct fmt *f)
{
	unsigned half = f->count / 2;
	f->val = malloc(sizeof(double) * (half + 1));
	assert_non_null(f->val);
	unsigned a = 0;
	for (; a < half && isfinite(def_value(f, a)); a++)
		f->val[a] = def_value(f, a);
	f->nfin = a;
	/* One step past the largest finite value, where rounding overflows. */
	double top = f->val[a - 1], below = f->val[a - 2];
	f->val[a] = top + (top - below);
}

/* Independent rounding of d >= 0 to nearest, ties to the even pattern:
 * magnitude bits, or -1 when it overflows. */
static long ref_round(const struct fmt *f, double d)
{
	unsigned lo = 0, hi = f->nfin;  /* val[lo] <= d < val[hi] */
	if (d >= f->val[hi])
		return -1;
	while (hi - lo > 1) {
		unsigned mid = (lo + hi) / 2;
		if (f->val[mid] <= d)
			lo = mid;
		else
			hi = mid;
	}
	double m = (f->val[lo] + f->val[hi]) / 2;  /* exact: both have 9 bits at most */
	unsigned r = d < m ? lo : d > m ? hi : (lo & 1 ? hi : lo);
	return r == f->nfin ? -1 : (long)r;
}

static unsigned load(const struct fmt *f, const uint8_t *b)
{
	return f->size == 2 ? (unsigned)b[0] | (unsigned)b[1] << 8 : b[0];
}

static void store(const struct fmt *f, uint8_t *b, unsigned v)
{
	b[0] = (uint8_t)v;
	if (f->size == 2)
		b[1] = (uint8_t)(v >> 8);
}

static int parse(const struct fmt *f, const char *s, unsigned *bits)
{
	uint8_t b[2] = {0};
	int r = mfs_parse_elem(f->dt, s, strlen(s), b);
	*bits = load(f, b);
	return r;
}

/* The exact decimal of d in "%e" form without trailing zeros. */
static void exact_text(char *buf, size_t cap, double d)
{
	snprintf(buf, cap, "%.200e", d);
	char *e = strchr(buf, 'e'), *z = e;
	while (z[-1] == '0')
		z--;
	if (z[-1] == '.')
		z--;
	memmove(z, e, strlen(e) + 1);
}

/* Significant digits of a formatted number ("1000" has 1, "0.0012" 2). */
static int sigdigits(const char *s)
{
	int n = 0, lead = 1, upto = 0;
	for (; *s && *s != 'e'; s++) {
		if (*s < '0' || *s > '9')
			continue;
		if (lead && *s == '0')
			continue;
		lead = 0;
		n++;
		if (*s != '0')
			upto = n;
	}
	return upto;
}

/* Every pattern: the row widens it to its value; the text reads back to the
 * same bits (nan to a nan of the same sign), its value rounds back
 * independently, and no decimal of one digit less (rounded down or up)
 * does. */
static void check_all_patterns(struct fmt *f)
{
	unsigned sign = f->count / 2;
	for (unsigned b = 0; b < f->count; b++) {
		uint8_t src[2];
		store(f, src, b);
		char txt[MFS_NUM_MAX + 1];
		size_t n = mfs_fmt_elem(txt, f->dt, src);
		assert_true(n > 0 && n <= MFS_NUM_MAX);
		txt[n] = '\0';
		unsigned a = b & (sign - 1), got;
		bool neg = b & sign;
		assert_int_equal(txt[0] == '-', neg);
		assert_int_equal(parse(f, txt, &got), 0);
		double v = def_value(f, a), w;
		mfs_dtype_info(f->dt)->widen(&w, src, 1);
		assert_true(isnan(v) ? isnan(w) && signbit(w) == neg : w == (neg ? -v : v));
		if (isnan(v)) {
			assert_string_equal(txt + neg, "nan");
			assert_true(isnan(def_value(f, got & (sign - 1))));
			assert_int_equal(got & sign, b & sign);
			continue;
		}
		if (isinf(v)) {
			assert_string_equal(txt + neg, "inf");
			assert_int_equal(got, b);
			continue;
		}
		assert_int_equal(got, b);
		double d = strtod(txt + neg, NULL);
		assert_int_equal(ref_round(f, d), (long)a);
		int p = sigdigits(txt);
		if (a == 0 || p <= 1)
			continue;
		char alt[300];
		int modes[2] = {FE_DOWNWARD, FE_UPWARD};
		for (int i = 0; i < 2; i++) {
			fesetround(modes[i]);
			snprintf(alt, sizeof(alt), "%.*e", p - 2, v);
			fesetround(FE_TONEAREST);
			long r = ref_round(f, strtod(alt, NULL));
			if (r == (long)a)
				fail_msg("%s %#x: \"%s\" is not shortest: \"%s\" reads back", f->name,
					 b, txt, alt);
		}
	}
}

static void expect(const struct fmt *f, const char *txt, long want)
{
	unsigned got;
	int r = parse(f, txt, &got);
	if (want < 0) {
		if (r != -ERANGE)
			fail_msg("%s \"%s\": got %d/%#x, want ERANGE", f->name, txt, r, got);
		return;
	}
	if (r || got != (unsigned)want)
		fail_msg("%s \"%s\": got %d/%#x, want %#lx", f->name, txt, r, got, want);
	/* The same text with a minus sign: the sign bit more. */
	char neg[420];
	snprintf(neg, sizeof(neg), "-%s", txt);
	assert_int_equal(parse(f, neg, &got), 0);
	assert_int_equal(got, (unsigned)want | f->count / 2);
}

/* Between each two neighbours (and past the largest finite value): the
 * values, the midpoint, the doubles next to it, and decimals just above and
 * below it that are no double (they read as the midpoint's double: the text
 * must decide, not the double). */
static void check_midpoints(struct fmt *f)
{
	char t[320];
	for (unsigned a = 0; a < f->nfin; a++) {
		double lo = f->val[a], hi = f->val[a + 1], m = (lo + hi) / 2;
		exact_text(t, sizeof(t), lo);
		expect(f, t, a);
		exact_text(t, sizeof(t), m);
		expect(f, t, ref_round(f, m));
		long up = a + 1 == f->nfin ? -1 : (long)a + 1;
		double nu = nextafter(m, INFINITY), nd = nextafter(m, 0);
		exact_text(t, sizeof(t), nu);
		expect(f, t, up);
		assert_int_equal(ref_round(f, nu), up);
		exact_text(t, sizeof(t), nd);
		expect(f, t, a);
		assert_int_equal(ref_round(f, nd), (long)a);
		/* m's exact decimal D ends in a digit d > 0: "D000001e.." is
		 * above it, D with d - 1 then "999999e.." below. */
		exact_text(t, sizeof(t), m);
		char *e = strchr(t, 'e'), tail[16], mant[330], x[400];
		snprintf(tail, sizeof(tail), "%s", e);
		*e = '\0';
		snprintf(mant, sizeof(mant), "%s%s", t, strchr(t, '.') ? "" : ".");
		char *last = mant + strlen(mant) - 1;
		if (*last == '.')
			last--;
		assert_true(*last > '0' && *last <= '9');
		snprintf(x, sizeof(x), "%s00000000000000000000001%s", mant, tail);
		expect(f, x, up);
		(*last)--;
		snprintf(x, sizeof(x), "%s99999999999999999999999%s", mant, tail);
		expect(f, x, a);
	}
}

static enum mfs_mini mini_of(const struct fmt *f)
{
	return (enum mfs_mini)mfs_dtype_info(f->dt)->mini;
}

/* data.npy's float32: every pattern widens to its value (NaN: a NaN of its
 * sign) and narrows back to itself; random float32 bit patterns narrow as
 * ref_round says, ERANGE where it overflows or an infinity is missing. */
static void check_widen_narrow(struct fmt *f)
{
	enum mfs_mini k = mini_of(f);
	assert_int_not_equal(k, MFS_MINI_NONE);
	assert_int_equal(mfs_npy_dtype(f->dt), MFS_DT_F32);
	unsigned sign = f->count / 2;
	uint8_t *all = malloc((size_t)f->count * f->size);
	uint32_t *wide = malloc((size_t)f->count * sizeof(*wide));
	assert_non_null(all);
	assert_non_null(wide);
	for (unsigned b = 0; b < f->count; b++)
		store(f, all + (size_t)b * f->size, b);
	mfs_mini_widen(k, all, wide, f->count);
	for (unsigned b = 0; b < f->count; b++) {
		uint8_t in[2], back[2];
		store(f, in, b);
		uint32_t u;
		size_t bad;
		mfs_mini_widen(k, in, &u, 1);
		assert_int_equal(u, wide[b]);
		float v;
		memcpy(&v, &u, sizeof(v));
		double want = def_value(f, b & (sign - 1));
		if (isnan(want))
			assert_true(isnan(v));
		else
			assert_true(fabs((double)v) == want);
		assert_int_equal(signbit(v) != 0, (b & sign) != 0);
		assert_int_equal(mfs_mini_narrow(k, &u, back, 1, &bad), 0);
		assert_int_equal(load(f, back), b);
	}
	free(all);
	free(wide);
	uint64_t x = 0x9E3779B97F4A7C15ull;
	for (int i = 0; i < 400000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t u = (uint32_t)x;
		if (i % 4 != 0) {  /* mostly exponents near the format's range */
			uint32_t span = f->size == 2 ? 280 : 48, e = 127 - span / 2 + (u >> 8) % span;
			u = (u & 0x807fffffu) | (e < 255 ? e : 254) << 23;
		}
		float v;
		memcpy(&v, &u, sizeof(v));
		uint8_t out[2];
		size_t bad = 99;
		int r = mfs_mini_narrow(k, &u, out, 1, &bad);
		unsigned got = load(f, out);
		if (isnan(v)) {
			assert_int_equal(r, 0);
			assert_true(isnan(def_value(f, got & (sign - 1))));
			assert_int_equal((got & sign) != 0, signbit(v) != 0);
			continue;
		}
		long want = ref_round(f, fabs((double)v));
		if (isinf(v))
			want = f->has_inf ? (long)((1u << f->ebits) - 1) << f->mbits : -1;
		if (want < 0) {
			assert_int_equal(r, -ERANGE);
			assert_int_equal(bad, 0);
			continue;
		}
		assert_int_equal(r, 0);
		assert_int_equal(got, (unsigned)want | (signbit(v) ? sign : 0));
	}
}

static void test_patterns(void **state)
{
	(void)state;
	struct fmt *fs[] = {&BF16, &E4M3, &E5M2};
	for (int i = 0; i < 3; i++) {
		setup_fmt(fs[i]);
		check_all_patterns(fs[i]);
		check_midpoints(fs[i]);
		check_widen_narrow(fs[i]);
		free(fs[i]->val);
	}
}

static void test_table_rows(void **state)
{
	(void)state;
	struct fmt *fs[] = {&BF16, &E4M3, &E5M2};
	for (int i = 0; i < 3; i++) {
		const struct mfs_dtype_info *di = mfs_dtype_info(fs[i]->dt);
		assert_string_equal(di->name, fs[i]->name);
		assert_int_equal(di->size, fs[i]->size);
		assert_int_equal(di->kind, MFS_DK_FLOAT);
		assert_true(di->numeric);
		assert_int_equal(mfs_dtype_from_name(fs[i]->name), fs[i]->dt);
	}
	assert_int_equal(mfs_dtype_from_name("float32"), MFS_DT_F32);
	assert_int_equal(mfs_dtype_from_name("bfloat"), MFS_DT_INVALID);
}

/* Words and the edges of each range. */
static void test_specials(void **state)
{
	(void)state;
	unsigned got;
	setup_fmt(&E4M3);
	expect(&E4M3, "448", 0x7e);
	expect(&E4M3, "464", 0x7e);     /* tie with the missing 480: even */
	expect(&E4M3, "464.001", -1);
	expect(&E4M3, "inf", -1);
	expect(&E4M3, "0.001953125", 0x01);  /* 2^-9, the smallest */
	expect(&E4M3, "0.0009765625", 0);    /* half of it: ties to 0 */
	assert_int_equal(parse(&E4M3, "nan", &got), 0);
	assert_int_equal(got, 0x7f);
	assert_int_equal(parse(&E4M3, "-NaN", &got), 0);
	assert_int_equal(got, 0xff);
	assert_int_equal(parse(&E4M3, "1x", &got), -EINVAL);
	assert_int_equal(parse(&E4M3, "", &got), -EINVAL);
	free(E4M3.val);

	setup_fmt(&E5M2);
	expect(&E5M2, "57344", 0x7b);
	expect(&E5M2, "61440", -1);     /* tie with inf: inf is even */
	expect(&E5M2, "61439.99", 0x7b);
	expect(&E5M2, "inf", 0x7c);
	expect(&E5M2, "Infinity", 0x7c);
	free(E5M2.val);

	setup_fmt(&BF16);
	expect(&BF16, "1", 0x3f80);
	expect(&BF16, "3.3895313892515355e38", 0x7f7f);
	expect(&BF16, "3.4e38", -1);
	expect(&BF16, "1e-50", 0);
	expect(&BF16, "inf", 0x7f80);
	expect(&BF16, "1.00390625", 0x3f80);  /* 1 + 2^-8: tie, to even */
	expect(&BF16, "1.0039062500000000000000000001", 0x3f81);
	free(BF16.val);

	char buf[MFS_NUM_MAX + 1];
	uint8_t b[2] = {0xc0, 0x3d};  /* 0x3dc0 = 0.09375, neighbours 2^-11 away */
	buf[mfs_fmt_elem(buf, MFS_DT_BF16, b)] = '\0';
	assert_string_equal(buf, "0.0938");
	b[0] = 0xcd, b[1] = 0x3d;       /* 0x3dcd = 0.10009765625, bfloat16(0.1) */
	buf[mfs_fmt_elem(buf, MFS_DT_BF16, b)] = '\0';
	assert_string_equal(buf, "0.1");
	b[0] = 0x80, b[1] = 0xff;
	buf[mfs_fmt_elem(buf, MFS_DT_BF16, b)] = '\0';
	assert_string_equal(buf, "-inf");
	b[0] = 0x7e;
	buf[mfs_fmt_elem(buf, MFS_DT_F8E4M3, b)] = '\0';
	assert_string_equal(buf, "450");  /* 448: 432 to 464 read back to it */
	b[0] = 0x80;
	buf[mfs_fmt_elem(buf, MFS_DT_F8E5M2, b)] = '\0';
	assert_string_equal(buf, "-0");
}

/* The rows' stats: values widened exactly, NaN left out. */
static void test_stats(void **state)
{
	(void)state;
	/* bfloat16 1.5, -2, nan, 0.1 (0x3dcd); float8_e4m3fn 448, -0.5, nan */
	const uint8_t bf[] = {0xc0, 0x3f, 0x00, 0xc0, 0xc0, 0x7f, 0xcd, 0x3d};
	const uint8_t e4[] = {0x7e, 0xb0, 0xff};
	struct mfs_stats s;
	assert_true(mfs_stats_supported(MFS_DT_BF16));
	mfs_stats_init(&s, MFS_DT_BF16);
	mfs_stats_add(&s, bf, 4);
	mfs_stats_finish(&s);
	assert_int_equal(s.count, 4);
	assert_int_equal(s.nan, 1);
	assert_true(s.min == -2 && s.max == 1.5);
	assert_true(fabs(s.mean - (1.5 - 2 + 0.10009765625) / 3) < 1e-12);
	mfs_stats_init(&s, MFS_DT_F8E4M3);
	mfs_stats_add(&s, e4, 3);
	mfs_stats_finish(&s);
	assert_int_equal(s.nan, 1);
	assert_true(s.min == -0.5 && s.max == 448);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_rows),
		cmocka_unit_test(test_specials),
		cmocka_unit_test(test_stats),
		cmocka_unit_test(test_patterns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
