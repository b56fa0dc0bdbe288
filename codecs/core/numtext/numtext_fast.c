/* The fast path of parsing a text of many values (view_parse.c): a plain
 * decimal such as "-0.026621511" or "1.5e-3" read in one pass; float32
 * through one double product (near_f32), float64 by Clinger's exact fast
 * path (a significand below 2^53 times a power of ten up to 10^22 is one
 * correctly rounded double operation); everything else goes to fast_float,
 * which is exact everywhere. The results are the same as mfs_parse_f32/f64's
 * (numtext.h). */
#include <float.h>
#include <stdbool.h>
#include <string.h>

#include "numtext.h"
#include "numtext_shim.h"

static const double pow10_f64[23] = {
	1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

/* The doubles nearest 10^-64 .. 10^64 (decimal literals are rounded
 * correctly). */
static const double pow10_near[129] = {
	1e-64, 1e-63, 1e-62, 1e-61, 1e-60, 1e-59, 1e-58, 1e-57,
	1e-56, 1e-55, 1e-54, 1e-53, 1e-52, 1e-51, 1e-50, 1e-49,
	1e-48, 1e-47, 1e-46, 1e-45, 1e-44, 1e-43, 1e-42, 1e-41,
	1e-40, 1e-39, 1e-38, 1e-37, 1e-36, 1e-35, 1e-34, 1e-33,
	1e-32, 1e-31, 1e-30, 1e-29, 1e-28, 1e-27, 1e-26, 1e-25,
	1e-24, 1e-23, 1e-22, 1e-21, 1e-20, 1e-19, 1e-18, 1e-17,
	1e-16, 1e-15, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9,
	1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1,
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7,
	1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
	1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22, 1e23,
	1e24, 1e25, 1e26, 1e27, 1e28, 1e29, 1e30, 1e31,
	1e32, 1e33, 1e34, 1e35, 1e36, 1e37, 1e38, 1e39,
	1e40, 1e41, 1e42, 1e43, 1e44, 1e45, 1e46, 1e47,
	1e48, 1e49, 1e50, 1e51, 1e52, 1e53, 1e54, 1e55,
	1e56, 1e57, 1e58, 1e59, 1e60, 1e61, 1e62, 1e63,
	1e64,
};

/* Eight ASCII digits at p (loaded little-endian), as a number; or -1. */
static inline int64_t eight_digits(const char *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	if (((v & 0xF0F0F0F0F0F0F0F0ull) | (((v + 0x0606060606060606ull) & 0xF0F0F0F0F0F0F0F0ull) >> 4)) !=
	    0x3333333333333333ull)
		return -1;
	v -= 0x3030303030303030ull;
	v = v * 10 + (v >> 8);  /* pairs of digits */
	v = (((v & 0x000000FF000000FFull) * 0x000F424000000064ull) +
	     (((v >> 16) & 0x000000FF000000FFull) * 0x0000271000000001ull)) >> 32;
	return (int64_t)(uint32_t)v;
}

/* Digits at *pp into *w; returns how many. */
static inline int digits(const char **pp, const char *end, uint64_t *w)
{
	const char *p = *pp;
	uint64_t v = *w;
	int64_t e8;
	while (end - p >= 8 && (e8 = eight_digits(p)) >= 0) {
		v = v * 100000000u + (uint64_t)e8;
		p += 8;
	}
	while (p < end && (unsigned)(*p - '0') < 10) {
		v = v * 10 + (unsigned)(*p - '0');
		p++;
	}
	int n = (int)(p - *pp);
	*pp = p;
	*w = v;
	return n;
}

/* A plain decimal at p, the sign taken: its value is w * 10^*e; returns
 * where it ends, or NULL when the fast path does not apply (too many
 * digits, an exponent that is not well formed or large, no digits). */
static inline const char *scan(const char *p, const char *end, uint64_t *w, int *e)
{
	uint64_t v = 0;
	int nd = digits(&p, end, &v), exp = 0;
	if (p < end && *p == '.') {
		p++;
		int nf = digits(&p, end, &v);
		nd += nf;
		exp = -nf;
	}
	if (nd == 0 || nd > 19)
		return NULL;
	if (p < end && (*p | 0x20) == 'e') {
		const char *q = p + 1;
		bool neg = q < end && *q == '-';
		if (q < end && (*q == '-' || *q == '+'))
			q++;
		int x = 0, n = 0;
		while (q < end && (unsigned)(*q - '0') < 10 && n < 4) {
			x = x * 10 + (*q - '0');
			q++;
			n++;
		}
		if (n == 0 || (q < end && (unsigned)(*q - '0') < 10))
			return NULL;
		exp += neg ? -x : x;
		p = q;
	}
	*w = v;
	*e = exp;
	return p;
}

/* The sign, and the start of the body when the token is a plain number. */
static inline const char *plain_start(const char *s, const char *end, bool *neg)
{
	const char *p = s;
	*neg = *p == '-';
	if (*p == '-' || *p == '+')
		p++;
	if (p == end || ((unsigned)(*p - '0') >= 10 && *p != '.'))
		return NULL;
	return p;
}

/* w * 10^e as the correctly rounded double, when Clinger's path gives it. */
static inline bool clinger(uint64_t w, int e, double *out)
{
	/* Plain double arithmetic only (no x87 excess precision). */
	if (FLT_EVAL_METHOD != 0 || w > (1ull << 53) || e < -22 || e > 22)
		return false;
	*out = e < 0 ? (double)w / pow10_f64[-e] : (double)w * pow10_f64[e];
	return true;
}

/* w * 10^e as a float32, with one double product by the double nearest
 * 10^e: that is within 3 units in the last place of the exact value (w
 * rounded, 10^e rounded, the product rounded), and float32 keeps 29 bits
 * fewer. So the float nearest the product is the float nearest the exact
 * value unless a float rounding boundary is that close: a midpoint between
 * two floats (the 29 low bits 1000...0), checked with a margin; or beyond
 * the normal floats, left out. False: fast_float decides. */
static inline bool near_f32(uint64_t w, int e, float *out)
{
	if (FLT_EVAL_METHOD != 0 || e < -64 || e > 64)
		return false;
	if (w == 0) {
		*out = 0;
		return true;
	}
	double d = (double)w * pow10_near[e + 64];
	if (!(d >= 0x1p-126 && d <= 0x1.fffffep127))
		return false;
	uint64_t u;
	memcpy(&u, &d, 8);
	if ((uint32_t)(u & 0x1fffffffu) - (0x10000000u - 8) <= 16)
		return false;
	*out = (float)d;
	return true;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_SIMD 1

/* Up to 15 digits with at most one point, at s[0] after an optional sign,
 * ending before s[15], read without branching on the digits (SSSE3: the
 * digits are gathered right-aligned, then summed in pairs, fours, eights):
 * the value is w * 10^*e. Needs 16 readable bytes at s. Returns where the
 * number ends, or NULL when it is anything else (an exponent, longer, no
 * digits, two points): the scalar path then reads it. */
__attribute__((target("ssse3"), always_inline)) static inline const char *
simd_decimal(const char *s, uint64_t *w, int *e)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
	unsigned sign = s[0] == '-' || s[0] == '+';
	__m128i dv = _mm_sub_epi8(v, _mm_set1_epi8('0'));
	unsigned dig = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(dv, _mm_set1_epi8(9)), dv));
	unsigned dot = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('.')));
	unsigned len = (unsigned)__builtin_ctz(~((dig | dot) >> sign));  /* the body */
	unsigned last = sign + len;
	if (last >= 16 || (s[last] | 0x20) == 'e')
		return NULL;
	unsigned dots = (dot >> sign) & ((1u << len) - 1);
	if ((dots & (dots - 1)) || len == (dots != 0))
		return NULL;
	int dp = dots ? (int)sign + __builtin_ctz(dots) : -1, end = (int)last - 1;
	/* Lane i takes the digit 15 - i places from the end: at end - (15 - i),
	 * one more to the left when that is at or before the point; none
	 * (index with the high bit set) before the first digit. */
	__m128i idx = _mm_add_epi8(_mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
				   _mm_set1_epi8((char)(end - 15)));
	idx = _mm_add_epi8(idx, _mm_cmpgt_epi8(_mm_set1_epi8((char)(dp + 1)), idx));
	idx = _mm_or_si128(idx, _mm_cmpgt_epi8(_mm_set1_epi8((char)sign), idx));
	__m128i d = _mm_shuffle_epi8(dv, idx);
	d = _mm_maddubs_epi16(d, _mm_setr_epi8(10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1, 10, 1));
	d = _mm_madd_epi16(d, _mm_setr_epi16(100, 1, 100, 1, 100, 1, 100, 1));
	d = _mm_packs_epi32(d, d);
	d = _mm_madd_epi16(d, _mm_setr_epi16(10000, 1, 10000, 1, 10000, 1, 10000, 1));
	uint64_t hi = (uint32_t)_mm_cvtsi128_si32(d);
	uint64_t lo = (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(d, 4));
	*w = hi * 100000000u + lo;
	*e = dots ? dp - end : 0;
	return s + last;
}

static bool have_simd(void)
{
	return __builtin_cpu_supports("ssse3");
}

__attribute__((target("ssse3"), always_inline)) static inline const char *
simd_f32(const char *s, float *out)
{
	uint64_t w;
	int e;
	float v;
	const char *q = simd_decimal(s, &w, &e);
	if (!q || !near_f32(w, e, &v))
		return NULL;
	*out = s[0] == '-' ? -v : v;
	return q;
}

__attribute__((target("ssse3"))) static const char *simd_f32_call(const char *s, float *out)
{
	return simd_f32(s, out);
}

/* mfs_parse_f32_run's loop, in one function (no call per value). */
__attribute__((target("ssse3"))) static size_t simd_f32_run(const char *s, const char *end,
							      const uint8_t *sep, uint8_t *out,
							      size_t max, const char **stop,
							      uint64_t *nl)
{
	const char *p = s;
	size_t n = 0;
	uint64_t lines = 0;
	while (n < max) {
		const char *t = p;
		unsigned k = 0;
		while (t < end && sep[(unsigned char)*t]) {
			k += *t == '\n';
			t++;
		}
		float v;
		const char *q;
		if (end - t < 16 || !(q = simd_f32(t, &v)) || !sep[(unsigned char)*q])
			break;
		memcpy(out + n * 4, &v, 4);  /* x86: little-endian */
		lines += k;
		n++;
		p = q;
	}
	*stop = p;
	*nl = lines;
	return n;
}

__attribute__((target("ssse3"))) static const char *simd_f64(const char *s, double *out)
{
	uint64_t w;
	int e;
	double v;
	const char *q = simd_decimal(s, &w, &e);
	if (!q || !clinger(w, e, &v))
		return NULL;
	*out = s[0] == '-' ? -v : v;
	return q;
}
#else
#define HAVE_SIMD 0
#endif

const char *mfs_parse_f32_prefix(const char *s, const char *end, float *out)
{
	bool neg;
#if HAVE_SIMD
	const char *q0;
	if (end - s >= 16 && have_simd() && (q0 = simd_f32_call(s, out)) != NULL)
		return q0;
#endif
	const char *p = plain_start(s, end, &neg);
	if (!p)
		return NULL;
	uint64_t w;
	int e;
	float v;
	const char *q = scan(p, end, &w, &e);
	if (!q || !near_f32(w, e, &v)) {
		q = mfs_shim_parse_f32(p, end, &v);
		if (!q || __builtin_isinf(v))
			return NULL;
	}
	*out = neg ? -v : v;
	return q;
}

const char *mfs_parse_f64_prefix(const char *s, const char *end, double *out)
{
	bool neg;
#if HAVE_SIMD
	const char *q0;
	if (end - s >= 16 && have_simd() && (q0 = simd_f64(s, out)) != NULL)
		return q0;
#endif
	const char *p = plain_start(s, end, &neg);
	if (!p)
		return NULL;
	uint64_t w;
	int e;
	double v;
	const char *q = scan(p, end, &w, &e);
	if (!q || !clinger(w, e, &v)) {
		q = mfs_shim_parse_f64(p, end, &v);
		if (!q || __builtin_isinf(v))
			return NULL;
	}
	*out = neg ? -v : v;
	return q;
}

size_t mfs_parse_f32_run(const char *s, const char *end, const uint8_t sep[256], void *out,
			 size_t max, const char **stop, uint64_t *nl)
{
#if HAVE_SIMD
	if (have_simd())
		return simd_f32_run(s, end, sep, out, max, stop, nl);
#endif
	(void)sep;
	(void)max;
	*stop = s;
	*nl = 0;
	return 0;
}
