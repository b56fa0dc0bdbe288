/* Numbers as text (see numtext.h) for the small binary floats of ML
 * checkpoints: bfloat16, float8_e4m3fn and float8_e5m2. One description of
 * each format (exponent and fraction widths, its largest finite value, its
 * nan and inf) drives one parser and one formatter.
 *
 * Parsing reads the decimal into a double (fast_float, correctly rounded),
 * then rounds the double's bits directly to the target, to nearest, ties to
 * even. Every midpoint between two target values is a double, so the double
 * falls on the same side of each midpoint as the text, unless it is the
 * midpoint itself: then the exact text decides (no double rounding).
 *
 * Formatting writes the shortest decimal that this parser reads back to the
 * same value: for 1, 2, ... significant digits it takes the two decimals of
 * that many digits around the exact value (every value of these formats is a
 * short exact decimal), keeps those that read back, and of two the closer
 * (ties: the even last digit). */
#include "numtext.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "numtext_impl.h"
#include "numtext_shim.h"

struct mini {
	uint8_t ebits, mbits;
	uint16_t sign;    /* the sign bit */
	uint16_t maxfin;  /* magnitude bits of the largest finite value */
	uint16_t nan;     /* magnitude bits written for "nan" */
	uint16_t inf;     /* magnitude bits of infinity; 0: there is none */
};

static const struct mini BF16 = {8, 7, 0x8000, 0x7f7f, 0x7fc0, 0x7f80};
static const struct mini E4M3 = {4, 3, 0x80, 0x7e, 0x7f, 0};
static const struct mini E5M2 = {5, 2, 0x80, 0x7b, 0x7e, 0x7c};

static inline int bias(const struct mini *f)
{
	return (1 << (f->ebits - 1)) - 1;
}

/* --- Exact decimals ------------------------------------------------------- */

#define LIMBS 24  /* base 10^9: 216 digits, room for m < 2^53 times 2^200 or 5^200 */

/* The exact decimal of m * 2^e2 (m > 0, -200 <= e2 <= 200) as
 * 0.dd[0..nd) x 10^*dexp, without trailing zero digits; returns nd. */
static int exact_digits(uint64_t m, int e2, char dd[LIMBS * 9], int *dexp)
{
	uint32_t l[LIMBS] = {(uint32_t)(m % 1000000000u), (uint32_t)(m / 1000000000u % 1000000000u),
			     (uint32_t)(m / 1000000000u / 1000000000u)};
	int n = 3;
	/* m * 2^e2 = m * 5^-e2 * 10^e2 when e2 < 0. */
	for (int left = e2 < 0 ? -e2 : e2; left > 0;) {
		int step = e2 < 0 ? (left < 13 ? left : 13) : (left < 30 ? left : 30);
		uint64_t mul = 1;
		for (int i = 0; i < step; i++)
			mul *= e2 < 0 ? 5 : 2;
		uint64_t carry = 0;
		for (int i = 0; i < n; i++) {
			uint64_t x = l[i] * mul + carry;
			l[i] = (uint32_t)(x % 1000000000u);
			carry = x / 1000000000u;
		}
		while (carry && n < LIMBS) {
			l[n++] = (uint32_t)(carry % 1000000000u);
			carry /= 1000000000u;
		}
		left -= step;
	}
	while (n > 1 && !l[n - 1])
		n--;
	int nd = 0;
	for (int i = n - 1; i >= 0; i--) {
		char t[9];
		uint32_t v = l[i];
		for (int j = 8; j >= 0; j--, v /= 10)
			t[j] = (char)('0' + v % 10);
		int j = 0;
		if (i == n - 1)
			while (j < 8 && t[j] == '0')
				j++;
		memcpy(dd + nd, t + j, (size_t)(9 - j));
		nd += 9 - j;
	}
	*dexp = nd + (e2 < 0 ? e2 : 0);
	while (nd > 1 && dd[nd - 1] == '0')
		nd--;
	return nd;
}

/* The finite magnitude a as m * 2^e2. */
static void mini_value(const struct mini *f, unsigned a, uint64_t *m, int *e2)
{
	unsigned ef = a >> f->mbits, fr = a & ((1u << f->mbits) - 1);
	*m = ef ? fr | (1u << f->mbits) : fr;
	*e2 = (ef ? (int)ef : 1) - bias(f) - f->mbits;
}

/* --- Parsing -------------------------------------------------------------- */

/* The magnitude bits of d >= 0 rounded to f, to nearest, the exponent
 * unbounded above (the caller checks the range). At an exact midpoint *tie
 * is set and dir decides: > 0 up, < 0 down, 0 ties to even. */
static int64_t round_mag(const struct mini *f, double d, int dir, bool *tie)
{
	uint64_t b;
	memcpy(&b, &d, sizeof(b));
	unsigned ex = (unsigned)(b >> 52) & 0x7ff;
	uint64_t m = b & 0x000fffffffffffffull;
	*tie = false;
	if (!ex && !m)
		return 0;
	int e = ex ? (int)ex - 1023 : -1022;
	if (ex)
		m |= 1ull << 52;
	/* d = m * 2^(e - 52); the target's unit at d is 2^(eq - mbits). */
	int emin = 1 - bias(f), eq = e < emin ? emin : e;
	int shift = 52 - f->mbits + (eq - e);
	if (shift > 54)
		return 0;  /* below half the smallest subnormal */
	uint64_t n = m >> shift, rem = m & ((1ull << shift) - 1), half = 1ull << (shift - 1);
	bool up;
	if (rem != half) {
		up = rem > half;
	} else {
		*tie = true;
		up = dir ? dir > 0 : (n & 1);
	}
	/* Subnormals have a biased exponent of 0 and n < 2^mbits; for normals
	 * n carries the implicit bit, which adds the 1 back. A carry out of
	 * the fraction moves to the next binade. */
	return ((int64_t)(eq + bias(f) - 1) << f->mbits) + (int64_t)(n + up);
}

static int parse_mini(const struct mini *f, const char *s, size_t n, uint16_t *out)
{
	struct mfs_ftok t;
	int kind = mfs_scan_float(s, n, &t);
	if (kind < 0)
		return kind;
	uint16_t sign = t.neg ? f->sign : 0;
	if (kind == MFS_FT_NAN) {
		*out = sign | f->nan;
		return 0;
	}
	if (kind == MFS_FT_INF) {
		if (!f->inf)
			return -ERANGE;
		*out = sign | f->inf;
		return 0;
	}
	double d;
	if (mfs_shim_parse_f64(t.p, t.end, &d) != t.end)
		return -EINVAL;
	if (__builtin_isinf(d))
		return -ERANGE;
	bool tie;
	int64_t a = round_mag(f, d, 0, &tie);
	if (tie) {
		/* d is a midpoint: a short dyadic, so its decimal is exact. */
		uint64_t b;
		memcpy(&b, &d, sizeof(b));
		int e2 = (int)((b >> 52) & 0x7ff) - 1075;
		uint64_t m = (b & 0x000fffffffffffffull) | (1ull << 52);
		int tz = __builtin_ctzll(m);
		char dd[LIMBS * 9];
		int dexp, nd = exact_digits(m >> tz, e2 + tz, dd, &dexp);
		int c = mfs_cmp_dec_text(t.p, t.end, dd, nd, dexp);
		if (c)
			a = round_mag(f, d, c, &tie);
	}
	if (a > f->maxfin)
		return -ERANGE;
	*out = sign | (uint16_t)a;
	return 0;
}

/* --- Formatting ----------------------------------------------------------- */

/* sig * 10^k without trailing zeros in sig. */
static size_t fmt_dec(char *out, bool neg, uint32_t sig, int k)
{
	while (sig % 10 == 0) {
		sig /= 10;
		k++;
	}
	return mfs_fmt_dec32(out, neg, sig, k);
}

static bool reads_back(const struct mini *f, uint32_t sig, int k, unsigned a)
{
	char txt[MFS_NUM_MAX];
	uint16_t got;
	size_t n = fmt_dec(txt, false, sig, k);
	return !parse_mini(f, txt, n, &got) && got == a;
}

static size_t fmt_mini(const struct mini *f, char *out, uint16_t b)
{
	bool neg = b & f->sign;
	unsigned a = b & (f->sign - 1u);
	if (a > f->maxfin)
		return mfs_fmt_special(out, neg, !(f->inf && a == f->inf));
	if (!a)
		return mfs_fmt_zero(out, neg);
	uint64_t m;
	int e2;
	mini_value(f, a, &m, &e2);
	char dd[LIMBS * 9];
	int dexp, nd = exact_digits(m, e2, dd, &dexp);
	/* A value of these formats needs at most 4 significant digits (8 bits
	 * of precision); the exact decimal always reads back. */
	for (int p = 1; p < nd && p <= 9; p++) {
		uint32_t q = 0;
		for (int i = 0; i < p; i++)
			q = q * 10 + (uint32_t)(dd[i] - '0');
		int k = dexp - p;
		bool lo = reads_back(f, q, k, a), hi = reads_back(f, q + 1, k, a);
		if (!lo && !hi)
			continue;
		if (lo && hi) {
			/* The tail dd[p..nd) against one half: "5" then nothing. */
			int c = dd[p] != '5' ? (dd[p] > '5') - (dd[p] < '5') : nd > p + 1;
			hi = c > 0 || (c == 0 && (q & 1));
		}
		return fmt_dec(out, neg, hi ? q + 1 : q, k);
	}
	uint32_t q = 0;
	for (int i = 0; i < nd; i++)
		q = q * 10 + (uint32_t)(dd[i] - '0');
	return fmt_dec(out, neg, q, dexp - nd);
}

/* --- Entry points --------------------------------------------------------- */

/* The value of bits b: exact in a float. */
static float mini_to_f32(const struct mini *f, uint16_t b)
{
	unsigned a = b & (f->sign - 1u);
	float v;
	if (a > f->maxfin) {
		v = f->inf && a == f->inf ? INFINITY : NAN;
	} else {
		uint64_t m;
		int e2;
		mini_value(f, a, &m, &e2);
		v = ldexpf((float)m, e2);
	}
	return b & f->sign ? -v : v;
}

float mfs_bf16_to_f32(uint16_t bits)
{
	uint32_t u = (uint32_t)bits << 16;
	float v;
	memcpy(&v, &u, sizeof(v));
	return v;
}

float mfs_f8e4m3_to_f32(uint8_t bits)
{
	return mini_to_f32(&E4M3, bits);
}

float mfs_f8e5m2_to_f32(uint8_t bits)
{
	return mini_to_f32(&E5M2, bits);
}

/* Every value's text, made once per process on first use: these types have
 * 65536 and 256 values, and a lookup is far quicker than the search above
 * (which takes ~0.2 us a value). An entry of length 0 is formatted anew. */
#define TEXT_MAX 16
struct texts {
	const struct mini *f;
	pthread_once_t once;
	uint8_t *len;
	char (*txt)[TEXT_MAX];
};

static struct texts bf16_texts = {&BF16, PTHREAD_ONCE_INIT, NULL, NULL};
static struct texts e4m3_texts = {&E4M3, PTHREAD_ONCE_INIT, NULL, NULL};
static struct texts e5m2_texts = {&E5M2, PTHREAD_ONCE_INIT, NULL, NULL};

static void build_texts(struct texts *t)
{
	size_t n = (size_t)t->f->sign << 1;
	uint8_t *len = calloc(n, 1);
	char (*txt)[TEXT_MAX] = malloc(n * TEXT_MAX);
	if (!len || !txt) {
		free(len);
		free(txt);
		return;  /* every value formatted anew */
	}
	for (size_t b = 0; b < n; b++) {
		char buf[MFS_NUM_MAX];
		size_t k = fmt_mini(t->f, buf, (uint16_t)b);
		if (k < TEXT_MAX) {
			memcpy(txt[b], buf, k);
			len[b] = (uint8_t)k;
		}
	}
	t->txt = txt;
	t->len = len;
}

static void build_bf16(void)
{
	build_texts(&bf16_texts);
}

static void build_e4m3(void)
{
	build_texts(&e4m3_texts);
}

static void build_e5m2(void)
{
	build_texts(&e5m2_texts);
}

static size_t fmt_cached(struct texts *t, void (*build)(void), char *out, uint16_t bits)
{
	pthread_once(&t->once, build);
	if (t->len && t->len[bits]) {
		memcpy(out, t->txt[bits], TEXT_MAX);
		return t->len[bits];
	}
	return fmt_mini(t->f, out, bits);
}

size_t mfs_fmt_bf16(char *out, uint16_t bits)
{
	return fmt_cached(&bf16_texts, build_bf16, out, bits);
}

size_t mfs_fmt_f8e4m3(char *out, uint8_t bits)
{
	return fmt_cached(&e4m3_texts, build_e4m3, out, bits);
}

size_t mfs_fmt_f8e5m2(char *out, uint8_t bits)
{
	return fmt_cached(&e5m2_texts, build_e5m2, out, bits);
}

int mfs_parse_bf16(const char *s, size_t n, uint16_t *out)
{
	return parse_mini(&BF16, s, n, out);
}

int mfs_parse_f8e4m3(const char *s, size_t n, uint8_t *out)
{
	uint16_t v;
	int r = parse_mini(&E4M3, s, n, &v);
	if (!r)
		*out = (uint8_t)v;
	return r;
}

int mfs_parse_f8e5m2(const char *s, size_t n, uint8_t *out)
{
	uint16_t v;
	int r = parse_mini(&E5M2, s, n, &v);
	if (!r)
		*out = (uint8_t)v;
	return r;
}

/* --- Widening to float32 and back (data.npy) ------------------------------ */

static const struct mini *mini_of(enum mfs_mini type)
{
	return type == MFS_MINI_BF16 ? &BF16 : type == MFS_MINI_E4M3 ? &E4M3 : &E5M2;
}

/* The float32 bits of b: its value exactly; a NaN keeps its sign and
 * payload (the fraction's top bits), so that narrowing gives b back. */
static uint32_t widen_bits(const struct mini *f, uint16_t b)
{
	unsigned a = b & (f->sign - 1u);
	uint32_t s = (b & f->sign) ? 0x80000000u : 0;
	if (a > f->maxfin && !(f->inf && a == f->inf))
		return s | 0x7f800000u | (uint32_t)(a & ((1u << f->mbits) - 1)) << (23 - f->mbits);
	float v = mini_to_f32(f, b);
	uint32_t u;
	memcpy(&u, &v, sizeof(u));
	return u;
}

/* Float32 bits u to f: nearest, ties to even; -ERANGE for a finite value
 * beyond f's range or an infinity f lacks. */
static int narrow_bits(const struct mini *f, uint32_t u, uint16_t *out)
{
	uint16_t sign = (u >> 31) ? f->sign : 0;
	uint32_t mag = u & 0x7fffffffu;
	if (mag > 0x7f800000u) {
		unsigned shift = 23u - f->mbits;
		unsigned a = ((1u << f->ebits) - 1u) << f->mbits |
			     ((mag >> shift) & ((1u << f->mbits) - 1u));
		bool same = !(mag & ((1u << shift) - 1u)) && a > f->maxfin &&
			    !(f->inf && a == f->inf);
		*out = sign | (uint16_t)(same ? a : f->nan);
		return 0;
	}
	if (mag == 0x7f800000u) {
		if (!f->inf)
			return -ERANGE;
		*out = sign | f->inf;
		return 0;
	}
	float v;
	memcpy(&v, &mag, sizeof(v));
	bool tie;
	int64_t a = round_mag(f, (double)v, 0, &tie);
	if (a > f->maxfin)
		return -ERANGE;
	*out = sign | (uint16_t)a;
	return 0;
}

void mfs_mini_widen(enum mfs_mini type, const void *src, uint32_t *out, size_t n)
{
	const uint8_t *p = src;
	if (type == MFS_MINI_BF16) {
		/* bfloat16 is float32's top half: its value and NaN payload exactly. */
		for (size_t i = 0; i < n; i++)
			out[i] = (uint32_t)(p[2 * i] | p[2 * i + 1] << 8) << 16;
		return;
	}
	const struct mini *f = mini_of(type);
	for (size_t i = 0; i < n; i++)
		out[i] = widen_bits(f, p[i]);
}

int mfs_mini_narrow(enum mfs_mini type, const uint32_t *in, void *dst, size_t n, size_t *bad)
{
	const struct mini *f = mini_of(type);
	uint8_t *p = dst;
	for (size_t i = 0; i < n; i++) {
		uint16_t b;
		if (narrow_bits(f, in[i], &b) < 0) {
			*bad = i;
			return -ERANGE;
		}
		if (type == MFS_MINI_BF16) {
			p[2 * i] = (uint8_t)b;
			p[2 * i + 1] = (uint8_t)(b >> 8);
		} else {
			p[i] = (uint8_t)b;
		}
	}
	return 0;
}
