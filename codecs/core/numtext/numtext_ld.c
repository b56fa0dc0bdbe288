/* float128 (see numtext.h): NumPy's long double as x86-64 stores it, the x87
 * extended format in 10 of 16 bytes, as text and back through the host's
 * long double: glibc's printf and strtold round correctly, so the shortest
 * decimal that reads back is found by a search over precisions (a rare
 * type: its speed is not the float32 path's). Which format 16 bytes hold
 * is told from the elements themselves (mfs_f128_x87). */
#include "numtext.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "numtext_impl.h"

#define X87_BYTES 10     /* the value; the rest of the 16 is padding */
#define X87_DIGITS 21    /* decimal digits that always read back (64-bit significand) */
#define X87_BIAS 16383
#define NEAR_ONE 1100    /* binary exponents of plausible magnitudes: within 2^+-1100 */
#define TOKEN_STACK 256  /* longer tokens are copied to the heap for strtold */

#if defined(__x86_64__) && LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384
#define HOST_X87 1
#else
#define HOST_X87 0
#endif

static unsigned x87_exp(const uint8_t *b)
{
	return mfs_le16(b + 8) & 0x7fff;
}

static bool x87_neg(const uint8_t *b)
{
	return b[9] >> 7;
}

/* An encoding an x87 stores: its explicit integer bit is set exactly when
 * the exponent is not zero (unnormals, pseudo-denormals, pseudo-NaNs and
 * pseudo-infinities are not). */
static bool x87_canonical(const uint8_t *b)
{
	return (b[7] >> 7) == (x87_exp(b) != 0);
}

static bool x87_nan(const uint8_t *b)
{
	return !x87_canonical(b) ||
	       (x87_exp(b) == 0x7fff && (mfs_le64(b) & 0x7fffffffffffffffull));
}

static bool near_one(unsigned e)
{
	return e + NEAR_ONE >= X87_BIAS && e <= X87_BIAS + NEAR_ONE;
}

bool mfs_f128_x87(const void *src, size_t n)
{
	if (!HOST_X87)
		return false;
	const uint8_t *b = src;
	size_t as_x87 = 0, as_b128 = 0;
	static const uint8_t zero[16];
	for (size_t i = 0; i < n; i++, b += 16) {
		if (!x87_canonical(b))
			return false;
		unsigned e = x87_exp(b);
		bool x87_zero = e == 0 && mfs_le64(b) == 0;
		as_x87 += x87_zero ? memcmp(b + X87_BYTES, zero, 16 - X87_BYTES) == 0 : near_one(e);
		/* binary128: 112-bit fraction in bytes 0-13, then sign and exponent */
		unsigned e128 = mfs_le16(b + 14) & 0x7fff;
		as_b128 += e128 ? near_one(e128) : memcmp(b, zero, 14) == 0;
	}
	return as_x87 >= as_b128;
}

#if HOST_X87

static long double x87_load(const uint8_t *b)
{
	long double v = 0;
	memcpy(&v, b, X87_BYTES);
	return v;
}

static void x87_store(long double v, uint8_t *dst)
{
	memset(dst, 0, 16);
	memcpy(dst, &v, X87_BYTES);
}

double mfs_f128_to_f64(const void *src)
{
	const uint8_t *b = src;
	if (x87_nan(b))
		return x87_neg(b) ? -NAN : NAN;
	return (double)x87_load(b);
}

static bool reads_back(long double v, int digits, char *buf, size_t size)
{
	snprintf(buf, size, "%.*Le", digits - 1, v);
	return strtold(buf, NULL) == v;
}

/* The fewest significant digits of v > 0 that read back. More digits are
 * never worse where v's rounding interval is symmetric (all but powers of
 * two): the search halves it there, and walks up from 1 at powers of two. */
static int shortest_digits(long double v, const uint8_t *b)
{
	char buf[64];
	if (mfs_le64(b) == 1ull << 63) {
		int d = 1;
		while (d < X87_DIGITS && !reads_back(v, d, buf, sizeof(buf)))
			d++;
		return d;
	}
	int lo = 1, hi = X87_DIGITS;
	while (lo < hi) {
		int mid = (lo + hi) / 2;
		if (reads_back(v, mid, buf, sizeof(buf)))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* digits[0, nd) x 10^(e - nd + 1), as Python's repr lays floats out:
 * fixed notation for e in [-4, 16), else d.ddde+XX. */
static size_t layout(char *out, bool neg, const char *digits, int nd, int e)
{
	char *p = out;
	if (neg)
		*p++ = '-';
	if (e >= -4 && e < 16) {
		if (e < 0) {
			memcpy(p, "0.", 2);
			p += 2;
			memset(p, '0', (size_t)(-e - 1));
			p += -e - 1;
			memcpy(p, digits, (size_t)nd);
			p += nd;
		} else if (nd <= e + 1) {
			memcpy(p, digits, (size_t)nd);
			p += nd;
			memset(p, '0', (size_t)(e + 1 - nd));
			p += e + 1 - nd;
		} else {
			memcpy(p, digits, (size_t)(e + 1));
			p += e + 1;
			*p++ = '.';
			memcpy(p, digits + e + 1, (size_t)(nd - e - 1));
			p += nd - e - 1;
		}
		return (size_t)(p - out);
	}
	*p++ = digits[0];
	if (nd > 1) {
		*p++ = '.';
		memcpy(p, digits + 1, (size_t)(nd - 1));
		p += nd - 1;
	}
	return (size_t)(p - out) + (size_t)sprintf(p, "e%c%02d", e < 0 ? '-' : '+', e < 0 ? -e : e);
}

size_t mfs_fmt_f128(char *out, const void *src)
{
	const uint8_t *b = src;
	bool neg = x87_neg(b);
	if (x87_nan(b))
		return mfs_fmt_special(out, neg, true);
	if (x87_exp(b) == 0x7fff)
		return mfs_fmt_special(out, neg, false);
	long double v = fabsl(x87_load(b));
	if (v == 0)
		return mfs_fmt_zero(out, neg);
	int nd = shortest_digits(v, b);
	char buf[64];  /* d.ddde+XXXX */
	snprintf(buf, sizeof(buf), "%.*Le", nd - 1, v);
	char digits[X87_DIGITS + 1];
	int k = 0;
	const char *q = buf;
	for (; *q != 'e'; q++)
		if (*q != '.')
			digits[k++] = *q;
	while (k > 1 && digits[k - 1] == '0')
		k--;
	return layout(out, neg, digits, k, atoi(q + 1));
}

/* [p, end): digits, an optional '.' and digits (one digit at least), an
 * optional exponent: what the other floats' parser takes, and no more
 * (strtold would also read hexadecimal). */
static bool plain_decimal(const char *p, const char *end)
{
	size_t mant = 0;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		mant++;
	if (p < end && *p == '.')
		for (p++; p < end && *p >= '0' && *p <= '9'; p++)
			mant++;
	if (!mant)
		return false;
	if (p < end && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < end && (*p == '+' || *p == '-'))
			p++;
		const char *d = p;
		while (p < end && *p >= '0' && *p <= '9')
			p++;
		if (p == d)
			return false;
	}
	return p == end;
}

int mfs_parse_f128(const char *s, size_t n, void *dst)
{
	struct mfs_ftok t;
	int kind = mfs_scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	long double v;
	if (kind == MFS_FT_NUM) {
		if (!plain_decimal(t.p, t.end))
			return -EINVAL;
		size_t len = (size_t)(t.end - t.p);
		char stack[TOKEN_STACK], *buf = len < sizeof(stack) ? stack : malloc(len + 1);
		if (!buf)
			return -ENOMEM;
		memcpy(buf, t.p, len);
		buf[len] = '\0';
		v = strtold(buf, NULL);
		if (buf != stack)
			free(buf);
		if (isinf(v))
			return -ERANGE;
	} else {
		v = kind == MFS_FT_INF ? (long double)INFINITY : (long double)NAN;
	}
	x87_store(t.neg ? -v : v, dst);
	return 0;
}

#else /* no x87 long double: float128 tensors are shown as bytes only */

double mfs_f128_to_f64(const void *src)
{
	return x87_neg(src) ? -NAN : NAN;
}

size_t mfs_fmt_f128(char *out, const void *src)
{
	return mfs_fmt_special(out, x87_neg(src), true);
}

int mfs_parse_f128(const char *s, size_t n, void *dst)
{
	(void)s, (void)n, (void)dst;
	return -EINVAL;
}

#endif
