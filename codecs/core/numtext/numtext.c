/* Numbers as text (see numtext.h): float16 conversions, strict integer and
 * float parsing. fast_float sits behind numtext_shim.cc; formatting is in
 * numtext_fmt.c, the small floats in numtext_mini.c, elements of each dtype
 * in numtext_elem.c. */
#include "numtext.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "numtext_impl.h"
#include "numtext_shim.h"

/* --- float16 -------------------------------------------------------------- */

float mfs_f16_to_f32(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t e = (h >> 10) & 0x1f, f = h & 0x3ff, b;
	if (e == 0x1f) {
		b = sign | 0x7f800000u | (f << 13);
	} else if (e) {
		b = sign | ((e + 112) << 23) | (f << 13);
	} else if (!f) {
		b = sign;
	} else {
		/* Subnormal: normalise so that the leading 1 is the implicit bit. */
		int sh = __builtin_clz(f) - 21;
		f <<= sh;
		b = sign | ((uint32_t)(113 - sh) << 23) | ((f & 0x3ff) << 13);
	}
	float v;
	memcpy(&v, &b, sizeof(v));
	return v;
}

/* Round d to binary16, to nearest. At an exact midpoint *tie is set and dir
 * decides: > 0 away from zero, < 0 towards zero, 0 ties to even. */
static uint16_t f64_to_f16_dir(double d, int dir, bool *tie)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	uint16_t sign = (uint16_t)(b >> 48) & 0x8000;
	unsigned ex = (unsigned)(b >> 52) & 0x7ff;
	uint64_t mant = b & 0x000fffffffffffffull;
	*tie = false;
	if (ex == 0x7ff)
		return sign | 0x7c00 | (mant ? 0x200 | (uint16_t)(mant >> 42) : 0);
	int e = (int)ex - 1023;
	if (e > 15)
		return sign | 0x7c00;
	if (ex == 0 || e < -25)
		return sign;  /* below half the smallest subnormal */
	unsigned shift;
	uint16_t h;
	if (e >= -14) {
		shift = 42;
		h = (uint16_t)(((e + 15) << 10) | (uint16_t)(mant >> 42));
	} else {
		mant |= 1ull << 52;
		shift = (unsigned)(28 - e);  /* to units of 2^-24 */
		h = (uint16_t)(mant >> shift);
	}
	uint64_t rem = mant & ((1ull << shift) - 1), half = 1ull << (shift - 1);
	bool up;
	if (rem != half) {
		up = rem > half;
	} else {
		*tie = true;
		up = dir ? dir > 0 : (h & 1);
	}
	/* A carry out of the fraction moves to the next binade, or to inf. */
	return sign | (uint16_t)(h + up);
}

uint16_t mfs_f64_to_f16(double d)
{
	bool tie;
	return f64_to_f16_dir(d, 0, &tie);
}

/* --- Parsing -------------------------------------------------------------- */

/* Sign and magnitude of an integer token: [+-]digits. */
static int parse_mag(const char *s, size_t n, bool *neg, uint64_t *mag)
{
	if (!n)
		return -EINVAL;
	size_t i = 0;
	*neg = s[0] == '-';
	if (s[0] == '-' || s[0] == '+')
		i = 1;
	if (i == n)
		return -EINVAL;
	uint64_t v = 0;
	bool over = false;
	for (; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';
		if (d > 9)
			return -EINVAL;
		/* Keep scanning after an overflow: "9...9x" is not a number. */
		over |= __builtin_mul_overflow(v, 10, &v);
		over |= __builtin_add_overflow(v, d, &v);
	}
	*mag = v;
	return over ? -ERANGE : 0;
}

int mfs_parse_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *out)
{
	bool neg;
	uint64_t mag;
	int r = parse_mag(s, n, &neg, &mag);
	if (r)
		return r;
	int64_t v;
	if (!neg) {
		if (mag > (uint64_t)INT64_MAX)
			return -ERANGE;
		v = (int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX + 1)
			return -ERANGE;
		v = mag > (uint64_t)INT64_MAX ? INT64_MIN : -(int64_t)mag;
	}
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int mfs_parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	bool neg;
	uint64_t mag;
	int r = parse_mag(s, n, &neg, &mag);
	if (r)
		return r;
	if ((neg && mag) || mag > max)
		return -ERANGE;
	*out = mag;
	return 0;
}

static bool word_is(const char *p, size_t n, const char *lower)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] | 0x20) != lower[i])
			return false;
	return lower[n] == '\0';
}

/* The sign is taken here because fast_float refuses '+'. */
int mfs_scan_float(const char *s, size_t n, struct mfs_ftok *t)
{
	if (!n)
		return -EINVAL;
	const char *p = s, *end = s + n;
	t->neg = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	if (p == end)
		return -EINVAL;
	t->p = p;
	t->end = end;
	if ((unsigned)(*p - '0') < 10 || *p == '.')
		return MFS_FT_NUM;
	size_t len = (size_t)(end - p);
	if (word_is(p, len, "nan"))
		return MFS_FT_NAN;
	if (word_is(p, len, "inf") || word_is(p, len, "infinity"))
		return MFS_FT_INF;
	return -EINVAL;
}

int mfs_parse_f32(const char *s, size_t n, float *out)
{
	struct mfs_ftok t;
	int kind = mfs_scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	float v;
	if (kind == MFS_FT_NUM) {
		if (mfs_shim_parse_f32(t.p, t.end, &v) != t.end)
			return -EINVAL;
		if (__builtin_isinf(v))
			return -ERANGE;
	} else {
		uint32_t b = kind == MFS_FT_INF ? 0x7f800000u : 0x7fc00000u;
		memcpy(&v, &b, sizeof(v));
	}
	*out = t.neg ? -v : v;
	return 0;
}

int mfs_parse_f64(const char *s, size_t n, double *out)
{
	struct mfs_ftok t;
	int kind = mfs_scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	double v;
	if (kind == MFS_FT_NUM) {
		if (mfs_shim_parse_f64(t.p, t.end, &v) != t.end)
			return -EINVAL;
		if (__builtin_isinf(v))
			return -ERANGE;
	} else {
		uint64_t b = kind == MFS_FT_INF ? 0x7ff0000000000000ull : 0x7ff8000000000000ull;
		memcpy(&v, &b, sizeof(v));
	}
	*out = t.neg ? -v : v;
	return 0;
}

/* Compare the unsigned decimal [p, end), which fast_float accepted, with
 * x * 2^-25 exactly: -1, 0 or 1. Both are written as 0.DDD x 10^E. */
static int cmp_dyadic(const char *p, const char *end, uint64_t x)
{
	const uint64_t mask = (1ull << 25) - 1;
	char dd[48];
	int nd = 0, dexp = 0;
	uint64_t ip = x >> 25, fr = x & mask;
	if (ip) {
		nd = (int)mfs_fmt_u64(dd, ip);
		dexp = nd;
	} else {
		for (; !((fr * 10) >> 25); fr *= 10)
			dexp--;
	}
	/* 25 binary places need at most 25 decimal places. */
	for (; fr; fr &= mask) {
		fr *= 10;
		dd[nd++] = (char)('0' + (fr >> 25));
	}
	while (nd > 0 && dd[nd - 1] == '0')
		nd--;
	return mfs_cmp_dec_text(p, end, dd, nd, dexp);
}

int mfs_cmp_dec_text(const char *p, const char *end, const char *dd, int nd, int dexp)
{
	const char *mend = p;
	while (mend < end && *mend != 'e' && *mend != 'E')
		mend++;
	int64_t ex = 0;
	if (mend < end) {
		const char *q = mend + 1;
		bool eneg = *q == '-';
		if (*q == '-' || *q == '+')
			q++;
		for (; q < end; q++)
			if (ex < 1000000000)
				ex = ex * 10 + (*q - '0');
		if (eneg)
			ex = -ex;
	}
	const char *dot = memchr(p, '.', (size_t)(mend - p));
	int64_t intdigits = (dot ? dot : mend) - p, i0 = 0;
	const char *q = p;
	for (; q < mend && (*q == '0' || *q == '.'); q++)
		i0 += *q == '0';
	if (q == mend)
		return -1;  /* zero, and x > 0 */
	int64_t texp = intdigits - i0 + ex;
	if (texp != dexp)
		return texp < dexp ? -1 : 1;
	for (int i = 0;; q++) {
		if (q < mend && *q == '.')
			continue;
		if (q == mend)
			return i < nd ? -1 : 0;
		if (i == nd) {
			for (; q < mend; q++)
				if (*q > '0')
					return 1;
			return 0;
		}
		if (*q != dd[i])
			return *q < dd[i] ? -1 : 1;
		i++;
	}
}

int mfs_parse_f16(const char *s, size_t n, uint16_t *out)
{
	struct mfs_ftok t;
	int kind = mfs_scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	uint16_t sign = t.neg ? 0x8000 : 0;
	if (kind != MFS_FT_NUM) {
		*out = sign | (kind == MFS_FT_INF ? 0x7c00 : 0x7e00);
		return 0;
	}
	double d;
	if (mfs_shim_parse_f64(t.p, t.end, &d) != t.end)
		return -EINVAL;
	bool tie;
	uint16_t h = f64_to_f16_dir(d, 0, &tie);
	if (tie) {
		/* Rounding to double may have moved the text onto a midpoint
		 * between two float16 values (double rounding): the text decides.
		 * Midpoints are multiples of 2^-25 below 2^16, so x is exact. */
		int c = cmp_dyadic(t.p, t.end, (uint64_t)(d * 0x1p25));
		if (c)
			h = f64_to_f16_dir(d, c, &tie);
	}
	if ((h & 0x7fff) == 0x7c00)
		return -ERANGE;
	*out = sign | h;
	return 0;
}
