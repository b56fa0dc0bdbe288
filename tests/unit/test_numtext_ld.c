/* Unit tests of float128 and complex256 (NumPy's long double on x86-64, the
 * x87 extended format in 16 bytes): text that is the shortest decimal
 * reading back (checked against glibc's printf and strtold directly),
 * parsing with the other floats' rules, padding, NaN signs, and the tell of
 * x87 from IEEE binary128 bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "dtype.h"
#include "numtext.h"

/* An x87 value in 16 bytes: significand, sign and exponent, padding. */
static void x87(uint8_t b[16], uint64_t mant, unsigned se, uint8_t padding)
{
	mfs_put_le64(b, mant);
	mfs_put_le16(b + 8, (uint16_t)se);
	memset(b + 10, padding, 6);
}

static void ld_bytes(uint8_t b[16], long double v)
{
	memset(b, 0, 16);
	memcpy(b, &v, 10);
}

static const char *fmt(char *buf, const uint8_t *b)
{
	size_t n = mfs_fmt_f128(buf, b);
	assert_true(n > 0 && n <= MFS_NUM_MAX);
	buf[n] = '\0';
	return buf;
}

static void test_text(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1];
	uint8_t b[16];
	static const struct {
		const char *in, *out;
	} t[] = {
		{"1.5", "1.5"}, {"-2.25", "-2.25"}, {"0.1", "0.1"},
		{"0.3333333333333333333342", "0.33333333333333333334"},
		{"1e-4000", "1e-4000"}, {"1.189731495357231765e+4932", "1.189731495357231765e+4932"},
		{"3.6451995318824746025e-4951", "4e-4951"},  /* the smallest subnormal */
		{"1180591620717411303424", "1.1805916207174113034e+21"},
		{"1e16", "1e+16"}, {"1e15", "1000000000000000"}, {"0.0001", "0.0001"},
		{"0.00001", "1e-05"}, {"123456789.125", "123456789.125"}, {"-0", "-0"},
		{"0", "0"}, {"inf", "inf"}, {"-inf", "-inf"}, {"nan", "nan"}, {"-nan", "-nan"},
		{"100", "100"}, {"1e100", "1e+100"}, {"-1.25e-300", "-1.25e-300"},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		if (mfs_parse_f128(t[i].in, strlen(t[i].in), b))
			fail_msg("\"%s\" refused", t[i].in);
		assert_string_equal(fmt(buf, b), t[i].out);
		/* parsing writes zero padding */
		static const uint8_t zero[6];
		assert_memory_equal(b + 10, zero, 6);
	}
	/* 0.1 as a double widened is not 0.1 as a long double */
	ld_bytes(b, (long double)0.1);
	assert_string_equal(fmt(buf, b), "0.10000000000000000555");
	/* padding is no part of the value; NaNs keep their sign, whatever the
	 * payload; encodings no x87 stores are NaNs of their sign */
	x87(b, 0xc000000000000000ull, 0x3fff, 0xa5);
	assert_string_equal(fmt(buf, b), "1.5");
	x87(b, 0xc000000000000001ull, 0xffff, 0);
	assert_string_equal(fmt(buf, b), "-nan");
	x87(b, 0x8000000000000001ull, 0x7fff, 0);  /* a signalling NaN */
	assert_string_equal(fmt(buf, b), "nan");
	x87(b, 0x4000000000000000ull, 0x3fff, 0);  /* an unnormal */
	assert_string_equal(fmt(buf, b), "nan");
	x87(b, 0x4000000000000000ull, 0xbfff, 0);
	assert_string_equal(fmt(buf, b), "-nan");
	assert_true(isnan(mfs_f128_to_f64(b)) && signbit(mfs_f128_to_f64(b)));
	x87(b, 0, 0xffff, 0);  /* a pseudo-infinity */
	assert_string_equal(fmt(buf, b), "-nan");
	x87(b, 0x8000000000000000ull, 0xffff, 0);
	assert_string_equal(fmt(buf, b), "-inf");
	x87(b, 0xc000000000000000ull, 0x3fff, 0);
	assert_true(mfs_f128_to_f64(b) == 1.5);
	assert_true(mfs_parse_f128("1e-4000", 7, b) == 0 && mfs_f128_to_f64(b) == 0);
	assert_true(mfs_parse_f128("-1e4000", 7, b) == 0 && mfs_f128_to_f64(b) == -INFINITY);
}

/* Random encodings, normal and subnormal: each text reads back to the same
 * value with strtold itself, and one digit fewer, correctly rounded, does
 * not (the text is the shortest). */
static void test_shortest(void **state)
{
	(void)state;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	char buf[MFS_NUM_MAX + 1], fewer[64];
	for (int i = 0; i < 20000; i++) {
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		uint64_t mant = s;
		s = s * 6364136223846793005ull + 1442695040888963407ull;
		unsigned e = (unsigned)(s >> 49) % 0x7fff;  /* 0 to 0x7ffe */
		mant = e ? mant | (1ull << 63) : mant & ~(1ull << 63);
		if (i % 7 == 0)
			mant &= ~0ull << (s & 63);  /* few digits */
		uint8_t b[16], back[16];
		x87(b, mant, e | (unsigned)(s >> 47 & 1) << 15, (uint8_t)s);
		fmt(buf, b);
		long double v = 0;
		memcpy(&v, b, 10);
		assert_true(strtold(buf, NULL) == v);
		assert_int_equal(mfs_parse_f128(buf, strlen(buf), back), 0);
		assert_memory_equal(back, b, 10);
		/* the significant digits of the text (no leading or trailing
		 * zeros), and one fewer */
		char dig[64];
		int nd = 0;
		for (const char *q = buf; *q && *q != 'e'; q++)
			if (*q >= '0' && *q <= '9' && (nd || *q != '0'))
				dig[nd++] = *q;
		while (nd > 1 && dig[nd - 1] == '0')
			nd--;
		if (nd > 1 && v != 0) {
			snprintf(fewer, sizeof(fewer), "%.*Le", nd - 2, v);
			if (strtold(fewer, NULL) == v)
				fail_msg("%s: %s has fewer digits and reads back", buf, fewer);
		}
	}
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		int rc;
	} t[] = {
		{"", -EINVAL}, {"1e", -EINVAL}, {"1e+", -EINVAL}, {"0x1p3", -EINVAL},
		{"1.5L", -EINVAL}, {"--1", -EINVAL}, {"+-1", -EINVAL}, {".", -EINVAL},
		{"1..2", -EINVAL}, {" 1", -EINVAL}, {"1 ", -EINVAL}, {"nan(1)", -EINVAL},
		{"infinit", -EINVAL}, {"1,5", -EINVAL}, {"1e5000", -ERANGE}, {"-1e5000", -ERANGE},
		{"1.2e4932", -ERANGE}, {"1.18e4932", 0}, {"1e-5000", 0}, {".5", 0}, {"5.", 0},
		{"+5", 0}, {"-.5e-3", 0}, {"1E5", 0}, {"Infinity", 0}, {"-INF", 0}, {"NaN", 0},
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint8_t b[16];
		int rc = mfs_parse_f128(t[i].s, strlen(t[i].s), b);
		if (rc != t[i].rc)
			fail_msg("\"%s\": %d, expected %d", t[i].s, rc, t[i].rc);
	}
	/* a long token, digit by digit, rounds correctly */
	char lng[600];
	memset(lng, '0', sizeof(lng));
	lng[0] = '0';
	lng[1] = '.';
	lng[2] = '1';
	uint8_t b[16];
	assert_int_equal(mfs_parse_f128(lng, sizeof(lng), b), 0);
	char buf[MFS_NUM_MAX + 1];
	assert_string_equal(fmt(buf, b), "0.1");
	/* the dtype table's rows */
	assert_int_equal(mfs_dtype_from_npy("<f16", 4), MFS_DT_F128);
	assert_int_equal(mfs_dtype_from_npy("=c32", 4), MFS_DT_C256);
	assert_string_equal(mfs_dtype_info(MFS_DT_F128)->name, "float128");
	assert_string_equal(mfs_dtype_info(MFS_DT_C256)->name, "complex256");
}

static void test_complex(void **state)
{
	(void)state;
	char buf[MFS_NUM_MAX + 1];
	uint8_t c[32];
	ld_bytes(c, 1);
	ld_bytes(c + 16, -1.0L / 3);
	size_t n = mfs_fmt_elem(buf, MFS_DT_C256, c);
	buf[n] = '\0';
	assert_string_equal(buf, "1-0.33333333333333333334j");
	x87(c + 16, 0xc000000000000000ull, 0xffff, 0x80);  /* -nan, padding's top bit set */
	n = mfs_fmt_elem(buf, MFS_DT_C256, c);
	buf[n] = '\0';
	assert_string_equal(buf, "1-nanj");
	x87(c + 16, 0xc000000000000000ull, 0x7fff, 0x80);  /* nan: the padding is no sign */
	n = mfs_fmt_elem(buf, MFS_DT_C256, c);
	buf[n] = '\0';
	assert_string_equal(buf, "1+nanj");
	/* the longest texts fit */
	ld_bytes(c, -LDBL_MIN / 3);
	ld_bytes(c + 16, -LDBL_MIN / 7);
	assert_true(mfs_fmt_elem(buf, MFS_DT_C256, c) <= MFS_NUM_MAX);
	assert_int_equal(mfs_parse_elem(MFS_DT_C256, "(1.5-2e-4000j)", 14, c), 0);
	assert_true(mfs_f128_to_f64(c) == 1.5 && mfs_f128_to_f64(c + 16) == 0);
	assert_int_equal(mfs_parse_elem(MFS_DT_C256, "1e5000+1j", 9, c), -ERANGE);
}

/* binary128 of a double's value (exact): the same sign, exponent and
 * fraction, widened. */
static void b128_of(uint8_t b[16], double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	unsigned e = (unsigned)(u >> 52) & 0x7ff;
	uint64_t f = u & 0xfffffffffffffull;
	unsigned e128 = e ? e - 1023 + 16383 : 0;
	/* fraction: 112 bits, the double's 52 at the top */
	memset(b, 0, 16);
	uint64_t hi = f >> 4, lo = f << 60;  /* bits 48..111 and 0..63 of the fraction */
	mfs_put_le64(b, lo);
	for (int k = 0; k < 6; k++)
		b[8 + k] = (uint8_t)(hi >> (8 * k));
	mfs_put_le16(b + 14, (uint16_t)(e128 | (unsigned)(u >> 63) << 15));
}

static bool tell(const double *v, size_t n, bool b128, uint8_t padding)
{
	uint8_t b[16 * 8];
	for (size_t i = 0; i < n; i++) {
		if (b128)
			b128_of(b + 16 * i, v[i]);
		else {
			ld_bytes(b + 16 * i, v[i]);
			if (v[i] != 0)
				memset(b + 16 * i + 10, padding + (uint8_t)i, 6);
		}
	}
	return mfs_f128_x87(b, n);
}

static void test_tell(void **state)
{
	(void)state;
	static const double frac[] = {0.1, 0.2, 0.3, 0.7, -1e-5, 3.14159};
	static const double ints[] = {0, 1, 2, 3, 1.5, -2.25};
	static const double one[] = {0.1}, zero[] = {0}, big[] = {1e300, -1e-300, 7};
	/* x87, padding zero or not (NumPy leaves whatever memory held) */
	assert_true(tell(frac, 6, false, 0));
	assert_true(tell(frac, 6, false, 0x3f));
	assert_true(tell(ints, 6, false, 0xa5));
	assert_true(tell(big, 3, false, 0x7f));
	assert_true(tell(zero, 1, false, 0));
	assert_true(mfs_f128_x87(NULL, 0));
	/* IEEE binary128 (aarch64, s390x): fractions, small integers and
	 * dyadic values, one value */
	assert_false(tell(frac, 6, true, 0));
	assert_false(tell(ints, 6, true, 0));
	assert_false(tell(one, 1, true, 0));
	assert_false(tell(big, 3, true, 0));
	/* zeros are zeros either way */
	assert_true(tell(zero, 1, true, 0));
	/* an encoding no x87 stores */
	uint8_t b[32];
	ld_bytes(b, 1.5);
	x87(b + 16, 0x4000000000000000ull, 0x3fff, 0);
	assert_false(mfs_f128_x87(b, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_shortest),
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_complex),
		cmocka_unit_test(test_tell),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
