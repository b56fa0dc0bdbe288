/* Numbers as text (see numtext.h): the text layout of shortest decimals,
 * float16 both ways, strict integer and float parsing, and elements of every
 * numeric dtype. Dragonbox and fast_float sit behind numtext_shim.cc. */
#include "numtext.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "numtext_shim.h"

static const char digits2[200] =
	"0001020304050607080910111213141516171819"
	"2021222324252627282930313233343536373839"
	"4041424344454647484950515253545556575859"
	"6061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull,
};

/* --- Digits --------------------------------------------------------------- */

static inline int ndigits(uint64_t v)
{
	/* log10 from the bit length (1233/4096 ~ log10(2)), then one compare.
	 * v | 1 has as many digits as v (10^k - 1 is odd) and 0 has one. */
	v |= 1;
	int t = ((64 - __builtin_clzll(v)) * 1233) >> 12;
	return t + (v >= pow10_u64[t]);
}

__extension__ typedef unsigned __int128 u128;
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "swar8() and layout() store digits as little-endian words");

/* The 8 digits of v < 10^8 as ASCII in one word, the first digit in the
 * lowest byte: split in halves, pairs, digits, all lanes at once (SWAR).
 * No loop, no table, no store: the digits stay in registers. */
static inline uint64_t swar8(uint32_t v)
{
	uint64_t x = (v / 10000) | ((uint64_t)(v % 10000) << 32);
	uint64_t y = ((x * 10486) >> 20) & 0x0000007f0000007full;  /* /100 */
	x = y | ((x - y * 100) << 16);
	y = ((x * 103) >> 10) & 0x000f000f000f000full;  /* /10 */
	x = y | ((x - y * 10) << 8);
	return x | 0x3030303030303030ull;
}

/* sig * 10^k (sig > 0, no trailing zeros, below 10^width with width 9 or
 * 17) in the style of Python's repr: fixed notation when the exponent of
 * d.ddd x 10^e is in [-4, 16) (0.0001, 1000000000000000), else d.ddde+XX
 * (1e-05, 1e+16). The first digit c0 and the others, r (first in the
 * lowest byte), go straight to out with fixed-size stores that may run past
 * the text (out has MFS_NUM_MAX bytes; the furthest store ends at 34):
 * data-dependent loops and variable-size stores cost more, and so does
 * building the text aside and copying it (the copy's wide loads wait for
 * the narrow stores before them; measured). */
static inline size_t layout(char *out, bool neg, uint64_t sig, int k, int width)
{
	int nd = ndigits(sig), e = k + nd - 1;
	uint64_t h;
	u128 w;  /* the width - 1 digits after the top one, h */
	if (width > 9) {
		uint64_t hi = sig / 100000000u;
		h = hi / 100000000u;
		w = swar8((uint32_t)(hi - h * 100000000u)) |
		    (u128)swar8((uint32_t)(sig - hi * 100000000u)) << 64;
	} else {
		h = sig / 100000000u;
		w = swar8((uint32_t)(sig - h * 100000000u));
	}
	char c0 = (char)('0' + h);
	u128 r = w;
	if (nd < width) {  /* skip the leading zeros */
		r = w >> (8 * (width - 1 - nd));
		c0 = (char)r;
		r >>= 8;
	}
	char *t = out;
	int s = neg, len;
	t[0] = '-';
	if (e >= -4 && e < 16) {
		if (e < 0) {
			memcpy(t + s, "0.000000", 8);
			t[s + 1 - e] = c0;
			memcpy(t + s + 2 - e, &r, 16);
			len = s + 1 - e + nd;
		} else if (k >= 0) {
			t[s] = c0;
			memcpy(t + s + 1, &r, 16);
			memcpy(t + s + nd, "0000000000000000", 16);
			len = s + e + 1;
		} else {
			t[s] = c0;
			memcpy(t + s + 1, &r, 16);
			t[s + e + 1] = '.';
			r >>= 8 * e;
			memcpy(t + s + e + 2, &r, 16);
			len = s + nd + 1;
		}
	} else {
		t[s] = c0;
		t[s + 1] = '.';
		memcpy(t + s + 2, &r, 16);
		int p = s + (nd > 1 ? nd + 1 : 1);
		unsigned ae = e < 0 ? (unsigned)-e : (unsigned)e;
		t[p++] = 'e';
		t[p++] = e < 0 ? '-' : '+';
		if (ae >= 100) {
			t[p++] = (char)('0' + ae / 100);
			ae %= 100;
		}
		memcpy(t + p, digits2 + 2 * ae, 2);
		len = p + 2;
	}
	return (size_t)len;
}

static size_t fmt_special(char *out, bool neg, bool nan)
{
	char *p = out;
	if (neg)
		*p++ = '-';
	memcpy(p, nan ? "nan" : "inf", 3);
	return (size_t)(p + 3 - out);
}

static size_t fmt_zero(char *out, bool neg)
{
	if (!neg) {
		out[0] = '0';
		return 1;
	}
	memcpy(out, "-0", 2);
	return 2;
}

/* --- Formatting ----------------------------------------------------------- */

size_t mfs_fmt_u64(char *out, uint64_t v)
{
	int nd = ndigits(v);
	char *end = out + nd;
	while (v >= 100) {
		uint64_t q = v / 100;
		end -= 2;
		memcpy(end, digits2 + 2 * (v - q * 100), 2);
		v = q;
	}
	if (v >= 10)
		memcpy(end - 2, digits2 + 2 * v, 2);
	else
		end[-1] = (char)('0' + v);
	return (size_t)nd;
}

size_t mfs_fmt_i64(char *out, int64_t v)
{
	if (v >= 0)
		return mfs_fmt_u64(out, (uint64_t)v);
	out[0] = '-';
	return 1 + mfs_fmt_u64(out + 1, 0 - (uint64_t)v);
}

size_t mfs_fmt_f32(char *out, float v)
{
	uint32_t b;
	memcpy(&b, &v, sizeof(b));
	bool neg = b >> 31;
	if ((b & 0x7f800000u) == 0x7f800000u)
		return fmt_special(out, neg, b & 0x007fffffu);
	if (!(b & 0x7fffffffu))
		return fmt_zero(out, neg);
	b &= 0x7fffffffu;
	memcpy(&v, &b, sizeof(v));
	struct mfs_dec32 d = mfs_shim_shortest_f32(v);
	return layout(out, neg, d.sig, d.exp, 9);
}

size_t mfs_fmt_f64(char *out, double v)
{
	uint64_t b;
	memcpy(&b, &v, sizeof(b));
	bool neg = b >> 63;
	if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
		return fmt_special(out, neg, b & 0x000fffffffffffffull);
	if (!(b & 0x7fffffffffffffffull))
		return fmt_zero(out, neg);
	b &= 0x7fffffffffffffffull;
	memcpy(&v, &b, sizeof(v));
	struct mfs_dec64 d = mfs_shim_shortest_f64(v);
	return layout(out, neg, d.sig, d.exp, 17);
}

/* The length layout() gives sig * 10^k, without writing it. */
static inline size_t layout_len(bool neg, uint64_t sig, int k)
{
	int nd = ndigits(sig), e = k + nd - 1;
	size_t len;
	if (e >= -4 && e < 16)
		len = e < 0 ? (size_t)(1 - e + nd) : k >= 0 ? (size_t)(e + 1) : (size_t)(nd + 1);
	else
		len = (size_t)(nd + (nd > 1) + 2 + (e <= -100 || e >= 100 ? 3 : 2));
	return len + neg;
}

size_t mfs_len_f32(uint32_t b)
{
	bool neg = b >> 31;
	if ((b & 0x7f800000u) == 0x7f800000u)
		return 3u + neg;
	if (!(b & 0x7fffffffu))
		return 1u + neg;
	b &= 0x7fffffffu;
	float v;
	memcpy(&v, &b, sizeof(v));
	struct mfs_dec32 d = mfs_shim_shortest_f32(v);
	return layout_len(neg, d.sig, d.exp);
}

size_t mfs_len_f64(uint64_t b)
{
	bool neg = b >> 63;
	if ((b & 0x7ff0000000000000ull) == 0x7ff0000000000000ull)
		return 3u + neg;
	if (!(b & 0x7fffffffffffffffull))
		return 1u + neg;
	b &= 0x7fffffffffffffffull;
	double v;
	memcpy(&v, &b, sizeof(v));
	struct mfs_dec64 d = mfs_shim_shortest_f64(v);
	return layout_len(neg, d.sig, d.exp);
}

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

static const uint32_t pow5_u32[9] = {1, 5, 25, 125, 625, 3125, 15625, 78125, 390625};

size_t mfs_fmt_f16(char *out, uint16_t h)
{
	bool neg = h >> 15;
	unsigned ef = (h >> 10) & 0x1f, f = h & 0x3ff;
	if (ef == 0x1f)
		return fmt_special(out, neg, f);
	if (!ef && !f)
		return fmt_zero(out, neg);
	/* Exact integers in units of 2^-25: the value v and the bounds of the
	 * interval that rounds back to it (half as wide below a power of two),
	 * included when the significand is even (ties to even). */
	unsigned s = ef ? ef : 1;
	uint64_t m = ef ? (f | 0x400) : f;
	uint64_t v = m << s;
	uint64_t hi = v + (1ull << (s - 1));
	uint64_t lo = v - (!f && ef > 1 ? 1ull << (s - 2) : 1ull << (s - 1));
	bool incl = !(m & 1);
	/* The shortest decimal is a multiple of the largest 10^k that has one in
	 * the interval; of those, the closest to v. k = -8 always has one: the
	 * interval is at least 2^-24 wide. Values are < 2^42 and 5^8 < 2^19, so
	 * everything fits in 64 bits. */
	for (int k = 4;; k--) {
		uint64_t unit, L = lo, H = hi, V = v;
		if (k >= 0) {
			unit = pow10_u64[k] << 25;
		} else {
			/* 10^k in units of 2^-25 is 2^(25+k) / 5^-k: scale by 5^-k. */
			unit = 1ull << (25 + k);
			L *= pow5_u32[-k];
			H *= pow5_u32[-k];
			V *= pow5_u32[-k];
		}
		if (H < unit)
			continue;
		uint64_t qlo = incl ? (L + unit - 1) / unit : L / unit + 1;
		uint64_t qhi = incl ? H / unit : (H - 1) / unit;
		if (qlo > qhi)
			continue;
		uint64_t q = V / unit, r = V % unit;
		if (q < qlo || (q < qhi && (2 * r > unit || (2 * r == unit && (q & 1)))))
			q++;
		return layout(out, neg, q, k, 9);
	}
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

enum { FT_NUM, FT_INF, FT_NAN };

/* A float token split into its sign and its body [p, end). */
struct ftok {
	const char *p, *end;
	bool neg;
};

static bool word_is(const char *p, size_t n, const char *lower)
{
	for (size_t i = 0; i < n; i++)
		if ((p[i] | 0x20) != lower[i])
			return false;
	return lower[n] == '\0';
}

/* FT_NUM (body still to be checked by the shim), FT_INF, FT_NAN or -EINVAL.
 * The sign is taken here because fast_float refuses '+'. */
static int scan_float(const char *s, size_t n, struct ftok *t)
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
		return FT_NUM;
	size_t len = (size_t)(end - p);
	if (word_is(p, len, "nan"))
		return FT_NAN;
	if (word_is(p, len, "inf") || word_is(p, len, "infinity"))
		return FT_INF;
	return -EINVAL;
}

int mfs_parse_f32(const char *s, size_t n, float *out)
{
	struct ftok t;
	int kind = scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	float v;
	if (kind == FT_NUM) {
		if (mfs_shim_parse_f32(t.p, t.end, &v) != t.end)
			return -EINVAL;
		if (__builtin_isinf(v))
			return -ERANGE;
	} else {
		uint32_t b = kind == FT_INF ? 0x7f800000u : 0x7fc00000u;
		memcpy(&v, &b, sizeof(v));
	}
	*out = t.neg ? -v : v;
	return 0;
}

int mfs_parse_f64(const char *s, size_t n, double *out)
{
	struct ftok t;
	int kind = scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	double v;
	if (kind == FT_NUM) {
		if (mfs_shim_parse_f64(t.p, t.end, &v) != t.end)
			return -EINVAL;
		if (__builtin_isinf(v))
			return -ERANGE;
	} else {
		uint64_t b = kind == FT_INF ? 0x7ff0000000000000ull : 0x7ff8000000000000ull;
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
	struct ftok t;
	int kind = scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	uint16_t sign = t.neg ? 0x8000 : 0;
	if (kind != FT_NUM) {
		*out = sign | (kind == FT_INF ? 0x7c00 : 0x7e00);
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

/* --- Elements ------------------------------------------------------------- */

static inline uint64_t ld_le(const uint8_t *b, unsigned size)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static inline void st_le(uint8_t *b, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

static inline float f32_at(const uint8_t *b)
{
	uint32_t u = (uint32_t)ld_le(b, 4);
	float v;
	memcpy(&v, &u, sizeof(v));
	return v;
}

static inline double f64_at(const uint8_t *b)
{
	uint64_t u = ld_le(b, 8);
	double v;
	memcpy(&v, &u, sizeof(v));
	return v;
}

/* One float part (ft is F16, F32 or F64) of a complex at b; *neg tells
 * whether its sign bit is set. */
static size_t fmt_part(char *out, enum mfs_dtype ft, const uint8_t *b, bool *neg)
{
	switch (ft) {
	case MFS_DT_F16:
		*neg = b[1] >> 7;
		return mfs_fmt_f16(out, (uint16_t)ld_le(b, 2));
	case MFS_DT_F32:
		*neg = b[3] >> 7;
		return mfs_fmt_f32(out, f32_at(b));
	default:
		*neg = b[7] >> 7;
		return mfs_fmt_f64(out, f64_at(b));
	}
}

/* "re+imj": the imaginary part always carries a sign ("1-0j", "1-nanj"). */
static size_t fmt_complex(char *out, enum mfs_dtype ft, unsigned half, const uint8_t *b)
{
	bool neg;
	size_t n = fmt_part(out, ft, b, &neg);
	char *p = out + n;
	char im[MFS_NUM_MAX];
	size_t m = fmt_part(im, ft, b + half, &neg);
	if (!neg)
		*p++ = '+';
	memcpy(p, im, m);
	p += m;
	*p++ = 'j';
	return (size_t)(p - out);
}

size_t mfs_fmt_elem(char *out, enum mfs_dtype dt, const void *src)
{
	const uint8_t *b = src;
	switch (dt) {
	case MFS_DT_I8:
		return mfs_fmt_i64(out, (int8_t)b[0]);
	case MFS_DT_U8:
	case MFS_DT_CHAR8:
		return mfs_fmt_u64(out, b[0]);
	case MFS_DT_I16:
		return mfs_fmt_i64(out, (int16_t)ld_le(b, 2));
	case MFS_DT_U16:
		return mfs_fmt_u64(out, ld_le(b, 2));
	case MFS_DT_I32:
		return mfs_fmt_i64(out, (int32_t)ld_le(b, 4));
	case MFS_DT_U32:
		return mfs_fmt_u64(out, ld_le(b, 4));
	case MFS_DT_I64:
		return mfs_fmt_i64(out, (int64_t)ld_le(b, 8));
	case MFS_DT_U64:
		return mfs_fmt_u64(out, ld_le(b, 8));
	case MFS_DT_F16:
		return mfs_fmt_f16(out, (uint16_t)ld_le(b, 2));
	case MFS_DT_F32:
		return mfs_fmt_f32(out, f32_at(b));
	case MFS_DT_F64:
		return mfs_fmt_f64(out, f64_at(b));
	case MFS_DT_BOOL:
		/* NumPy reads any non-zero byte as True. */
		out[0] = b[0] ? '1' : '0';
		return 1;
	case MFS_DT_C32:
		return fmt_complex(out, MFS_DT_F16, 2, b);
	case MFS_DT_C64:
		return fmt_complex(out, MFS_DT_F32, 4, b);
	case MFS_DT_C128:
		return fmt_complex(out, MFS_DT_F64, 8, b);
	default:
		return 0;
	}
}

static int parse_float_part(enum mfs_dtype ft, const char *s, size_t n, uint8_t *dst)
{
	int r;
	switch (ft) {
	case MFS_DT_F16: {
		uint16_t h;
		if (!(r = mfs_parse_f16(s, n, &h)))
			st_le(dst, h, 2);
		return r;
	}
	case MFS_DT_F32: {
		float v;
		uint32_t u;
		if (!(r = mfs_parse_f32(s, n, &v))) {
			memcpy(&u, &v, sizeof(u));
			st_le(dst, u, 4);
		}
		return r;
	}
	default: {
		double v;
		uint64_t u;
		if (!(r = mfs_parse_f64(s, n, &v))) {
			memcpy(&u, &v, sizeof(u));
			st_le(dst, u, 8);
		}
		return r;
	}
	}
}

/* Python's complex() syntax without blanks: "re+imj", "re-imj", "(re+imj)",
 * "imj", a plain real; 'J' too, and a bare "j"/"+j"/"-j" for a unit. */
static int parse_complex(enum mfs_dtype ft, unsigned half, const char *s, size_t n, uint8_t *dst)
{
	uint8_t tmp[16] = {0};
	if (n >= 2 && s[0] == '(' && s[n - 1] == ')') {
		s++;
		n -= 2;
	}
	if (!n)
		return -EINVAL;
	if (s[n - 1] != 'j' && s[n - 1] != 'J') {
		int r = parse_float_part(ft, s, n, tmp);
		if (!r)
			memcpy(dst, tmp, 2 * half);
		return r;
	}
	/* The imaginary part starts at the last sign that is not an exponent's. */
	size_t k = n - 1;
	while (k > 0 && !((s[k] == '+' || s[k] == '-') && s[k - 1] != 'e' && s[k - 1] != 'E'))
		k--;
	const char *im = s + k;
	size_t imn = n - 1 - k;
	int rr = 0, ri;
	if (k)
		rr = parse_float_part(ft, s, k, tmp);
	if (imn == 0 || (imn == 1 && (im[0] == '+' || im[0] == '-'))) {
		bool uneg = imn && im[0] == '-';
		ri = parse_float_part(ft, uneg ? "-1" : "1", uneg ? 2 : 1, tmp + half);
	} else {
		ri = parse_float_part(ft, im, imn, tmp + half);
	}
	if (rr == -EINVAL || ri == -EINVAL)
		return -EINVAL;
	if (rr || ri)
		return rr ? rr : ri;
	memcpy(dst, tmp, 2 * half);
	return 0;
}

int mfs_parse_elem(enum mfs_dtype dt, const char *s, size_t n, void *dst)
{
	uint8_t *b = dst;
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	unsigned size = di->size;
	int r;
	switch (dt) {
	case MFS_DT_I8:
	case MFS_DT_I16:
	case MFS_DT_I32:
	case MFS_DT_I64: {
		int64_t max = INT64_MAX >> (64 - 8 * size), v;
		if (!(r = mfs_parse_i64(s, n, -max - 1, max, &v)))
			st_le(b, (uint64_t)v, size);
		return r;
	}
	case MFS_DT_U8:
	case MFS_DT_U16:
	case MFS_DT_U32:
	case MFS_DT_U64:
	case MFS_DT_CHAR8: {
		uint64_t v;
		if (!(r = mfs_parse_u64(s, n, UINT64_MAX >> (64 - 8 * size), &v)))
			st_le(b, v, size);
		return r;
	}
	case MFS_DT_BOOL: {
		uint64_t v;
		if ((n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4))))
			v = 1;
		else if (n == 5 && (!memcmp(s, "false", 5) || !memcmp(s, "False", 5)))
			v = 0;
		else if ((r = mfs_parse_u64(s, n, 1, &v)))
			return r;
		b[0] = (uint8_t)v;
		return 0;
	}
	case MFS_DT_F16:
	case MFS_DT_F32:
	case MFS_DT_F64:
		return parse_float_part(dt, s, n, b);
	case MFS_DT_C32:
		return parse_complex(MFS_DT_F16, 2, s, n, b);
	case MFS_DT_C64:
		return parse_complex(MFS_DT_F32, 4, s, n, b);
	case MFS_DT_C128:
		return parse_complex(MFS_DT_F64, 8, s, n, b);
	default:
		return -EINVAL;
	}
}
