/* Numbers to text (see numtext.h): integers, and the text layout of the
 * shortest decimals of floats, with their lengths alone. float16's and
 * float32's shortest decimals are found here, float64's (and the rare
 * float32s') by Dragonbox (behind numtext_shim.cc). Parsing and elements are
 * in numtext.c. */
#include "numtext.h"

#include <stdbool.h>
#include <string.h>

#include "numtext_impl.h"
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

/* The 8 digits of v < 10^8, one a byte (0 to 9), the first in the highest
 * byte: split in halves, pairs, digits, all lanes at once (SWAR), each
 * quotient added in place of its remainder's high part (x += q (2^32 -
 * 10^4): one multiply a step). No loop, no table, no store: the digits stay
 * in registers. | ASCII8 makes them text. */
#define ASCII8 0x3030303030303030ull  /* '0' in each byte */
static inline uint64_t swar8_be(uint32_t v)
{
	uint64_t x = v, q = (x * 109951163) >> 40;  /* v / 10^4, v < 10^8 */
	x += q * ((1ull << 32) - 10000);
	q = ((x * 10486) >> 20) & 0x0000007f0000007full;  /* /100 */
	x += q * ((1u << 16) - 100);
	q = ((x * 103) >> 10) & 0x000f000f000f000full;  /* /10 */
	return x + q * ((1u << 8) - 10);
}

/* The 8 digits of v < 10^8 as ASCII in one word, the first digit in the
 * lowest byte. */
static inline uint64_t swar8(uint32_t v)
{
	return __builtin_bswap64(swar8_be(v)) | ASCII8;
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

/* sig * 10^k, sig below 10^9 (float16). */
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

size_t mfs_fmt_dec32(char *out, bool neg, uint32_t sig, int k)
{
	return layout32(out, neg, sig, k);
}

size_t mfs_fmt_special(char *out, bool neg, bool nan)
{
	return fmt_special(out, neg, nan);
}

size_t mfs_fmt_zero(char *out, bool neg)
{
	return fmt_zero(out, neg);
}

/* --- float32 -------------------------------------------------------------- */

/* a when c, else b, without a branch: for choices as random as the data (a
 * mispredicted branch costs more than computing both). Once both are in
 * registers (the empty asm), gcc too makes it a conditional move; it
 * branches around the one it does not need otherwise. */
static inline uint64_t pick(bool c, uint64_t a, uint64_t b)
{
	__asm__("" : "+r"(a), "+r"(b));
	return c ? a : b;
}

/* The power of ten that scales a float32 exponent's rounding interval to 10
 * to 100 units, and the interval's half width in the units of c g
 * (scripts/gen/f32_scales.py). */
struct f32_scale {
	uint64_t g, half;
};
#include "numtext_f32_scales.h"

/* A float32's shortest decimal as d * 10^x, d in [10^7, 2 * 10^8): its
 * digits, then zeros to fill (text32() counts them). */
struct dec32 {
	uint64_t d;
	int64_t x;
};

/* The shortest decimal of the float32 with bits a: positive, normal, not a
 * power of two (below one the interval is narrower: Dragonbox's). In units
 * of 10^-k it is v +- W/2 with W in [10, 100), so (Dragonbox's "big and
 * small divisor", J. Jeon, 2020) it holds at most one multiple of 100,
 * which is then the answer, else the multiple of 10 nearest v, which it
 * always holds. One product gives both: v/100 as hi + lo/2^64. Both answers
 * are computed and one is picked without a branch: which it is is as random
 * as the data (Dragonbox's branch on it mispredicted 0.6 times a value on
 * weights). The comparisons are exact all the same: c g is over v/100 by
 * less than 2^24 units of 2^-64 (g rounded up), and the exact quantities
 * compared are on their limits or 2^31 units away at least (so found for
 * every float32 with g to 192 bits); the biases below sit in between.
 * test_numtext checks every float32 against Dragonbox (MFS_EXHAUSTIVE=1). */
static inline struct dec32 shortest_f32(uint32_t a)
{
	const struct f32_scale *sc = &f32_scales[a >> 23];
	uint64_t c = (a & 0x7fffffu) | 0x800000u;
	u128 m = (u128)c * sc->g;
	uint64_t hi = (uint64_t)(m >> 64), lo = (uint64_t)m;
	/* 100 hi or 100 (hi + 1) is inside when within W/2 of v; on the end
	 * itself only when c is even (ties to even on reading): the bias
	 * 2^28 in half, less 2^29 when odd. */
	uint64_t half = sc->half - ((c & 1) << 29);
	bool below = lo <= half, above = 0 - lo <= half;
	/* Else v/10 rounded to nearest, ties to even: the fraction fr is
	 * 2^63 + [0, 2^28) on a tie, else 2^31 away at least. */
	uint64_t dig = (uint64_t)(((u128)lo * 10) >> 64), fr = lo * 10;
	uint64_t up = dig + (fr + ((dig & 1) << 31) > (1ull << 63) + (1ull << 30));
	/* the last digit: 10 carries into hi */
	uint64_t d = hi * 10 + pick(below | above, below ? 0 : 10, up);
	/* d >= v/10 - 5 > 2^23 - 5 has 7 digits at least, 7 only if hi <
	 * 10^6 (then d <= 10^7: times 10, it stays below 2 * 10^8). */
	bool seven = hi < 1000000u;
	return (struct dec32){pick(seven, d * 10, d), (int64_t)f32_exp10[a >> 23] - seven};
}

/* Subnormals and powers of two: rare, so Dragonbox's. They have 8 digits
 * at most (c <= 2^23: v 10^k <= 2^23 100 units). */
static struct dec32 shortest_f32_rare(uint32_t a)
{
	float v;
	memcpy(&v, &a, sizeof(v));
	struct mfs_dec32 r = mfs_shim_shortest_f32(v);
	struct dec32 d = {r.sig, r.exp};
	while (d.d < 10000000u) {
		d.d *= 10;
		d.x--;
	}
	return d;
}

/* Whether float32 bits a (sign dropped) take shortest_f32(). */
static inline bool common_f32(uint32_t a)
{
	return a - 0x00800000u < 0x7f000000u && (a & 0x7fffffu);
}

/* The digits of d * 10^x as text (first lowest), how many are significant
 * (nd) and the exponent of the first (e). */
struct text32 {
	uint64_t w;  /* the last 8 of the 9 (h) or 8 digits */
	int64_t h;   /* 9 digits: d >= 10^8, the first is '1' */
	int64_t nd, e;
};

static inline struct text32 text32(struct dec32 v)
{
	int64_t h = v.d >= 100000000u;
	uint64_t w = swar8_be((uint32_t)pick(h, v.d - 100000000u, v.d));
	/* Trailing zeros: the low bytes that are 0, all 8 only when d is
	 * 10^8 (d >= 10^7 else). A digit's lowest set bit is one of its
	 * low 4: + 1 makes 8 of bit 63 (w = 0) without a branch. */
	int64_t tz = (__builtin_ctzll(w | 1ull << 63) + 1) >> 3;
	return (struct text32){__builtin_bswap64(w) | ASCII8, h, 8 + h - tz, v.x + 7 + h};
}

/* "0.0ddd": e in [-4, 0), the shape of weights, the first case tried. */
static inline bool small32(struct text32 x)
{
	return x.e < 0 && x.e >= -4;
}

/* The other shapes as the fixed notation of f + 1 digits before the point
 * (none after it when f >= nd - 1, an integer), n bytes long: e itself in
 * [0, 16), else 0, then "e+XX" (sci; float32's exponents have two digits).
 * All computed without a branch: which shape comes next is as random as
 * the data when its exponents are (a mispredicted branch costs 15 cycles,
 * and half the values of random bits took one). */
struct shape32 {
	int64_t f, n;
	bool sci;
};

static inline struct shape32 shape32(struct text32 x)
{
	bool sci = (uint64_t)x.e >= 16;
	int64_t f = (int64_t)pick(sci, 0, (uint64_t)x.e);
	int64_t n = (int64_t)pick(f >= x.nd - 1, (uint64_t)f + 1, (uint64_t)x.nd + 1);
	return (struct shape32){f, n, sci};
}

/* layout() for float32, on text32's digits. Beyond "0.0ddd", which needs no
 * first digit apart, each store goes where it belongs in every shape or
 * past the end of the text. */
static inline size_t layout_f32(char *out, bool neg, struct dec32 v)
{
	struct text32 x = text32(v);
	char *t = out + neg;
	out[0] = '-';
	if (small32(x)) {
		memcpy(t, "0.000000", 8);
		t[1 - x.e] = '1';  /* the first digit when h, else overwritten */
		memcpy(t + 1 - x.e + x.h, &x.w, 8);
		return (size_t)(neg + 1 - x.e + x.nd);
	}
	struct shape32 s = shape32(x);
	int64_t h = x.h;
	__asm__("" : "+r"(h));  /* two conditions: gcc branches on one */
	uint64_t r = pick(x.h, x.w, x.w >> 8);
	t[0] = (char)pick(h, '1', x.w);
	memcpy(t + 1, &r, 8);
	memcpy(t + x.nd, "0000000000000000", 16);  /* an integer's zeros */
	t[s.f + 1] = '.';  /* past the end for an integer */
	r >>= 8 * (s.f & 7);  /* f < nd - 1 <= 8 but for integers */
	memcpy(t + s.f + 2, &r, 8);
	uint64_t ae = (uint64_t)(x.e < 0 ? -x.e : x.e);  /* < 46 */
	uint16_t d2;
	memcpy(&d2, digits2 + 2 * ae, 2);
	uint32_t exp = 'e' | (uint32_t)('+' + 2 * (x.e < 0)) << 8 | (uint32_t)d2 << 16;
	memcpy(t + s.n, &exp, 4);  /* past the end in fixed notation */
	return (size_t)(neg + s.n + 4 * s.sci);
}

/* The length layout_f32() gives. */
static inline size_t len_f32(bool neg, struct dec32 v)
{
	struct text32 x = text32(v);
	if (small32(x))
		return (size_t)(neg + 1 - x.e + x.nd);
	struct shape32 s = shape32(x);
	return (size_t)(neg + s.n + 4 * s.sci);
}

/* The rare float32s, out of line: mfs_fmt_f32() and mfs_len_f32() stay
 * leaf functions, with no registers to save. */
static __attribute__((noinline, cold)) size_t fmt_f32_rare(char *out, uint32_t b)
{
	bool neg = b >> 31;
	uint32_t a = b & 0x7fffffffu;
	if (a >= 0x7f800000u)
		return fmt_special(out, neg, a > 0x7f800000u);
	if (!a)
		return fmt_zero(out, neg);
	return layout_f32(out, neg, shortest_f32_rare(a));
}

static __attribute__((noinline, cold)) size_t len_f32_rare(uint32_t b)
{
	bool neg = b >> 31;
	uint32_t a = b & 0x7fffffffu;
	if (a >= 0x7f800000u || !a)
		return (a ? 3u : 1u) + neg;
	return len_f32(neg, shortest_f32_rare(a));
}

size_t mfs_fmt_f32(char *out, float v)
{
	uint32_t b;
	memcpy(&b, &v, sizeof(b));
	uint32_t a = b & 0x7fffffffu;
	if (__builtin_expect(!common_f32(a), 0))
		return fmt_f32_rare(out, b);
	return layout_f32(out, b >> 31, shortest_f32(a));
}

size_t mfs_len_f32(uint32_t b)
{
	uint32_t a = b & 0x7fffffffu;
	if (__builtin_expect(!common_f32(a), 0))
		return len_f32_rare(b);
	return len_f32(b >> 31, shortest_f32(a));
}

/* One loop, with nothing to call: the constants stay in registers and the
 * processor overlaps consecutive values (1.5 ns a value less than calling
 * mfs_fmt_f32 on weights). Blocks (the decimals of 16 values first, then
 * their text) were no faster. */
size_t mfs_fmt_f32_run(char *out, const void *src, size_t n, char sep)
{
	const unsigned char *p = src;
	char *o = out;
	for (size_t i = 0; i < n; i++, p += 4) {
		uint32_t b;
		memcpy(&b, p, sizeof(b));
		uint32_t a = b & 0x7fffffffu;
		if (__builtin_expect(common_f32(a), 1))
			o += layout_f32(o, b >> 31, shortest_f32(a));
		else
			o += fmt_f32_rare(o, b);
		*o++ = sep;
	}
	return (size_t)(o - out);
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
