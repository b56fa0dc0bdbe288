/* Numbers to text (see numtext.h): integers, and the text layout of the
 * shortest decimals Dragonbox gives for float32/float64 (behind
 * numtext_shim.cc), with their lengths alone; float16's shortest decimal is
 * found here. Parsing and elements are in numtext.c. */
#include "numtext.h"

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

/* The digits after the first, r, first in the lowest byte: one 64-bit word
 * (float32: up to 8 digits) or two (float64: up to 16). */
struct digits {
	uint64_t lo, hi;
};

/* r to t: 8 bytes, or 16 when wide; the bytes past the digits are junk. */
static inline void put_digits(char *t, struct digits r, bool wide)
{
	memcpy(t, &r.lo, 8);
	if (wide)
		memcpy(t + 8, &r.hi, 8);
}

/* r without its first n bytes. */
static inline struct digits drop_digits(struct digits r, int n, bool wide)
{
	if (!wide)
		return (struct digits){r.lo >> (8 * n), 0};
	u128 x = ((u128)r.hi << 64 | r.lo) >> (8 * n);
	return (struct digits){(uint64_t)x, (uint64_t)(x >> 64)};
}

/* c0 r x 10^k (nd digits in all, no trailing zeros) in the style of
 * Python's repr: fixed notation when the exponent of d.ddd x 10^e is in
 * [-4, 16) (0.0001, 1000000000000000), else d.ddde+XX (1e-05, 1e+16). The
 * digits go straight to out with fixed-size stores that may run past the
 * text (out has MFS_NUM_MAX bytes; the furthest store ends at 34):
 * data-dependent loops and variable-size stores cost more, and so does
 * building the text aside and copying it (the copy's wide loads wait for
 * the narrow stores before them; measured). Inlined with wide constant:
 * float32's digits stay in one word (no 128-bit shifts: cachegrind, 108
 * instructions a value instead of 120). */
static inline size_t layout(char *out, bool neg, char c0, struct digits r, int nd, int k,
			    bool wide)
{
	int e = k + nd - 1;
	char *t = out;
	int s = neg, len;
	t[0] = '-';
	if (e >= -4 && e < 16) {
		if (e < 0) {
			memcpy(t + s, "0.000000", 8);
			t[s + 1 - e] = c0;
			put_digits(t + s + 2 - e, r, wide);
			len = s + 1 - e + nd;
		} else if (k >= 0) {
			t[s] = c0;
			put_digits(t + s + 1, r, wide);
			memcpy(t + s + nd, "0000000000000000", 16);
			len = s + e + 1;
		} else {
			t[s] = c0;
			put_digits(t + s + 1, r, wide);
			t[s + e + 1] = '.';
			put_digits(t + s + e + 2, drop_digits(r, e, wide), wide);
			len = s + nd + 1;
		}
	} else {
		t[s] = c0;
		t[s + 1] = '.';
		put_digits(t + s + 2, r, wide);
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

/* sig * 10^k, sig below 10^17 (a float64's shortest digits). */
static inline size_t layout64(char *out, bool neg, uint64_t sig, int k)
{
	int nd = ndigits(sig);
	uint64_t hi = sig / 100000000u;
	uint64_t h = hi / 100000000u;
	/* the 16 digits after the top one, h */
	u128 r = swar8((uint32_t)(hi - h * 100000000u)) |
		 (u128)swar8((uint32_t)(sig - hi * 100000000u)) << 64;
	char c0 = (char)('0' + h);
	if (nd < 17) {  /* skip the leading zeros */
		r >>= 8 * (16 - nd);
		c0 = (char)r;
		r >>= 8;
	}
	return layout(out, neg, c0, (struct digits){(uint64_t)r, (uint64_t)(r >> 64)}, nd, k, true);
}

/* sig * 10^k, sig below 10^9 (float32 and float16). */
static inline size_t layout32(char *out, bool neg, uint32_t sig, int k)
{
	int nd = ndigits(sig);
	uint32_t h = sig / 100000000u;
	uint64_t w = swar8(sig - h * 100000000u);
	/* Skip the leading zeros without a branch: how many digits a float
	 * has (6 to 9) is not predictable. */
	bool nine = nd == 9;
	uint64_t x = w >> (nine ? 0 : 8 * (8 - nd));
	char c0 = nine ? (char)('0' + h) : (char)x;
	return layout(out, neg, c0, (struct digits){nine ? w : x >> 8, 0}, nd, k, false);
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
	return layout32(out, neg, d.sig, d.exp);
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
	return layout64(out, neg, d.sig, d.exp);
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
		return layout32(out, neg, (uint32_t)q, k);
	}
}
