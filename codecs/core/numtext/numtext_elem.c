/* Elements as text (see numtext.h): the fmt and parse of each numeric row of
 * the dtype table (dtype.c), little-endian at any alignment. */
#include "numtext_elem.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "numtext.h"

static inline uint64_t ld_le(const void *src, unsigned size)
{
	const uint8_t *b = src;
	uint64_t v = 0;
	for (unsigned i = 0; i < size; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return v;
}

static inline void st_le(void *dst, uint64_t v, unsigned size)
{
	uint8_t *b = dst;
	for (unsigned i = 0; i < size; i++)
		b[i] = (uint8_t)(v >> (8 * i));
}

/* --- Integers and bool ---------------------------------------------------- */

static int parse_signed(const char *s, size_t n, void *dst, unsigned size)
{
	int64_t max = INT64_MAX >> (64 - 8 * size), v;
	int r = mfs_parse_i64(s, n, -max - 1, max, &v);
	if (!r)
		st_le(dst, (uint64_t)v, size);
	return r;
}

static int parse_unsigned(const char *s, size_t n, void *dst, unsigned size)
{
	uint64_t v;
	int r = mfs_parse_u64(s, n, UINT64_MAX >> (64 - 8 * size), &v);
	if (!r)
		st_le(dst, v, size);
	return r;
}

#define SIGNED_ROW(T, bits) \
	size_t mfs_elem_fmt_##T(char *out, const void *src) \
	{ \
		return mfs_fmt_i64(out, (int##bits##_t)ld_le(src, bits / 8)); \
	} \
	int mfs_elem_parse_##T(const char *s, size_t n, void *dst) \
	{ \
		return parse_signed(s, n, dst, bits / 8); \
	}
#define UNSIGNED_ROW(T, bits) \
	size_t mfs_elem_fmt_##T(char *out, const void *src) \
	{ \
		return mfs_fmt_u64(out, ld_le(src, bits / 8)); \
	} \
	int mfs_elem_parse_##T(const char *s, size_t n, void *dst) \
	{ \
		return parse_unsigned(s, n, dst, bits / 8); \
	}

SIGNED_ROW(i8, 8)
SIGNED_ROW(i16, 16)
SIGNED_ROW(i32, 32)
SIGNED_ROW(i64, 64)
UNSIGNED_ROW(u8, 8)
UNSIGNED_ROW(u16, 16)
UNSIGNED_ROW(u32, 32)
UNSIGNED_ROW(u64, 64)

size_t mfs_elem_fmt_bool(char *out, const void *src)
{
	/* NumPy reads any non-zero byte as True. */
	out[0] = *(const uint8_t *)src ? '1' : '0';
	return 1;
}

int mfs_elem_parse_bool(const char *s, size_t n, void *dst)
{
	uint64_t v;
	int r;
	if ((n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4))))
		v = 1;
	else if (n == 5 && (!memcmp(s, "false", 5) || !memcmp(s, "False", 5)))
		v = 0;
	else if ((r = mfs_parse_u64(s, n, 1, &v)))
		return r;
	*(uint8_t *)dst = (uint8_t)v;
	return 0;
}

/* --- Floats --------------------------------------------------------------- */

size_t mfs_elem_fmt_f16(char *out, const void *src)
{
	return mfs_fmt_f16(out, (uint16_t)ld_le(src, 2));
}

size_t mfs_elem_fmt_f32(char *out, const void *src)
{
	uint32_t u = (uint32_t)ld_le(src, 4);
	float v;
	memcpy(&v, &u, sizeof(v));
	return mfs_fmt_f32(out, v);
}

size_t mfs_elem_fmt_f64(char *out, const void *src)
{
	uint64_t u = ld_le(src, 8);
	double v;
	memcpy(&v, &u, sizeof(v));
	return mfs_fmt_f64(out, v);
}

size_t mfs_elem_fmt_bf16(char *out, const void *src)
{
	return mfs_fmt_bf16(out, (uint16_t)ld_le(src, 2));
}

size_t mfs_elem_fmt_f8e4m3(char *out, const void *src)
{
	return mfs_fmt_f8e4m3(out, *(const uint8_t *)src);
}

size_t mfs_elem_fmt_f8e5m2(char *out, const void *src)
{
	return mfs_fmt_f8e5m2(out, *(const uint8_t *)src);
}

int mfs_elem_parse_f16(const char *s, size_t n, void *dst)
{
	uint16_t h;
	int r = mfs_parse_f16(s, n, &h);
	if (!r)
		st_le(dst, h, 2);
	return r;
}

int mfs_elem_parse_f32(const char *s, size_t n, void *dst)
{
	float v;
	uint32_t u;
	int r = mfs_parse_f32(s, n, &v);
	if (!r) {
		memcpy(&u, &v, sizeof(u));
		st_le(dst, u, 4);
	}
	return r;
}

int mfs_elem_parse_f64(const char *s, size_t n, void *dst)
{
	double v;
	uint64_t u;
	int r = mfs_parse_f64(s, n, &v);
	if (!r) {
		memcpy(&u, &v, sizeof(u));
		st_le(dst, u, 8);
	}
	return r;
}

int mfs_elem_parse_bf16(const char *s, size_t n, void *dst)
{
	uint16_t h;
	int r = mfs_parse_bf16(s, n, &h);
	if (!r)
		st_le(dst, h, 2);
	return r;
}

int mfs_elem_parse_f8e4m3(const char *s, size_t n, void *dst)
{
	return mfs_parse_f8e4m3(s, n, dst);
}

int mfs_elem_parse_f8e5m2(const char *s, size_t n, void *dst)
{
	return mfs_parse_f8e5m2(s, n, dst);
}

size_t mfs_elem_fmt_f128(char *out, const void *src)
{
	return mfs_fmt_f128(out, src);
}

int mfs_elem_parse_f128(const char *s, size_t n, void *dst)
{
	return mfs_parse_f128(s, n, dst);
}

/* n floats of size bytes at src as doubles, each as conv gives it. */
#define WIDEN_ROW(T, size, conv) \
	void mfs_elem_widen_##T(double *out, const void *src, size_t n) \
	{ \
		const uint8_t *p = src; \
		for (size_t i = 0; i < n; i++, p += size) { \
			uint64_t u = ld_le(p, size); \
			out[i] = conv; \
		} \
	}

static inline double f32_of(uint64_t u)
{
	uint32_t w = (uint32_t)u;
	float v;
	memcpy(&v, &w, sizeof(v));
	return v;
}

static inline double f64_of(uint64_t u)
{
	double v;
	memcpy(&v, &u, sizeof(v));
	return v;
}

WIDEN_ROW(f16, 2, mfs_f16_to_f32((uint16_t)u))
WIDEN_ROW(f32, 4, f32_of(u))
WIDEN_ROW(f64, 8, f64_of(u))
WIDEN_ROW(bf16, 2, mfs_bf16_to_f32((uint16_t)u))
WIDEN_ROW(f8e4m3, 1, mfs_f8e4m3_to_f32((uint8_t)u))
WIDEN_ROW(f8e5m2, 1, mfs_f8e5m2_to_f32((uint8_t)u))

void mfs_elem_widen_f128(double *out, const void *src, size_t n)
{
	const uint8_t *p = src;
	for (size_t i = 0; i < n; i++, p += 16)
		out[i] = mfs_f128_to_f64(p);
}

/* --- Complex -------------------------------------------------------------- */

/* The float each half of a complex value is: its row's size, padding and
 * functions. */
struct part {
	unsigned size, pad;
	size_t (*fmt)(char *out, const void *src);
	int (*parse)(const char *s, size_t n, void *dst);
	void (*widen)(double *out, const void *src, size_t n);
};
#define PART(T, size, pad) {size, pad, mfs_elem_fmt_##T, mfs_elem_parse_##T, mfs_elem_widen_##T}
static const struct part part_f16 = PART(f16, 2, 0), part_f32 = PART(f32, 4, 0),
			 part_f64 = PART(f64, 8, 0), part_f128 = PART(f128, 16, 6);

/* n complex values of two part floats as their magnitudes. */
static void widen_complex(double *out, const uint8_t *p, size_t n, const struct part *pi)
{
	unsigned half = pi->size;
	for (size_t i = 0; i < n; i++, p += 2 * half) {
		double re, im;
		pi->widen(&re, p, 1);
		pi->widen(&im, p + half, 1);
		out[i] = isnan(re) || isnan(im) ? NAN : hypot(re, im);
	}
}

/* "re+imj" of two parts of dtype part: the imaginary part always carries a
 * sign ("1-0j", "1-nanj"). */
static size_t fmt_complex(char *out, const struct part *pi, const uint8_t *b)
{
	unsigned half = pi->size;
	size_t n = pi->fmt(out, b);
	char *p = out + n;
	char im[MFS_NUM_MAX];
	size_t m = pi->fmt(im, b + half);
	if (!(b[2 * half - pi->pad - 1] >> 7))  /* the imaginary part's sign bit */
		*p++ = '+';
	memcpy(p, im, m);
	p += m;
	*p++ = 'j';
	return (size_t)(p - out);
}

/* Python's complex() syntax without blanks: "re+imj", "re-imj", "(re+imj)",
 * "imj", a plain real; 'J' too, and a bare "j"/"+j"/"-j" for a unit. */
static int parse_complex(const struct part *pi, const char *s, size_t n, uint8_t *dst)
{
	unsigned half = pi->size;
	uint8_t tmp[32] = {0};
	if (n >= 2 && s[0] == '(' && s[n - 1] == ')') {
		s++;
		n -= 2;
	}
	if (!n)
		return -EINVAL;
	if (s[n - 1] != 'j' && s[n - 1] != 'J') {
		int r = pi->parse(s, n, tmp);
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
		rr = pi->parse(s, k, tmp);
	if (imn == 0 || (imn == 1 && (im[0] == '+' || im[0] == '-'))) {
		bool uneg = imn && im[0] == '-';
		ri = pi->parse(uneg ? "-1" : "1", uneg ? 2 : 1, tmp + half);
	} else {
		ri = pi->parse(im, imn, tmp + half);
	}
	if (rr == -EINVAL || ri == -EINVAL)
		return -EINVAL;
	if (rr || ri)
		return rr ? rr : ri;
	memcpy(dst, tmp, 2 * half);
	return 0;
}

#define COMPLEX_ROW(T, part) \
	size_t mfs_elem_fmt_##T(char *out, const void *src) \
	{ \
		return fmt_complex(out, part, src); \
	} \
	int mfs_elem_parse_##T(const char *s, size_t n, void *dst) \
	{ \
		return parse_complex(part, s, n, dst); \
	} \
	void mfs_elem_widen_##T(double *out, const void *src, size_t n) \
	{ \
		widen_complex(out, src, n, part); \
	}

COMPLEX_ROW(c32, &part_f16)
COMPLEX_ROW(c64, &part_f32)
COMPLEX_ROW(c128, &part_f64)
COMPLEX_ROW(c256, &part_f128)
