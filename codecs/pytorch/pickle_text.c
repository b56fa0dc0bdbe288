/* Values of a parsed pickle as Python writes them: ints in decimal (big
 * ones from LONG1/LONG4's two's complement bytes), floats as repr, and
 * the test of a global's name. */
#include <stdlib.h>
#include <string.h>

#include "numtext.h"
#include "pickle.h"

bool pk_is_global(const struct pk *pk, uint32_t v, const char *module, const char *name)
{
	if (v == PK_NIL || pk->v[v].kind != PK_GLOBAL)
		return false;
	const struct pk_val *m = &pk->v[pk->v[v].a], *n = &pk->v[pk->v[v].b];
	return m->u.s.len == strlen(module) && !memcmp(pk_bytes(pk, m), module, m->u.s.len) &&
	       n->u.s.len == strlen(name) && !memcmp(pk_bytes(pk, n), name, n->u.s.len);
}

/* Little-endian two's complement bytes b[0, n) in decimal. */
static size_t big_text(const uint8_t *b, size_t n, char *out, size_t cap)
{
	size_t nl = (n + 3) / 4;
	if (n > 4096 || cap < n * 3 + 2)  /* 256^n has fewer than 2.41 n digits */
		return 0;
	uint32_t *l = calloc(nl ? nl : 1, sizeof(*l));
	if (!l)
		return 0;
	bool neg = n && (b[n - 1] & 0x80);
	for (size_t i = 0; i < n; i++)
		l[i / 4] |= (uint32_t)(neg ? (uint8_t)~b[i] : b[i]) << (8 * (i % 4));
	if (neg)  /* magnitude: the complement plus one */
		for (size_t i = 0; i < nl && ++l[i] == 0; i++)
			;
	if (neg && n % 4)
		l[nl - 1] &= (1u << (8 * (n % 4))) - 1;
	char *d = out + cap;  /* digits from the end */
	size_t top = nl;
	do {
		uint64_t rem = 0;
		for (size_t i = top; i-- > 0;) {
			uint64_t cur = rem << 32 | l[i];
			l[i] = (uint32_t)(cur / 1000000000u);
			rem = cur % 1000000000u;
		}
		while (top && !l[top - 1])
			top--;
		for (int k = 0; k < 9 && (top || rem); k++, rem /= 10)
			*--d = (char)('0' + rem % 10);
	} while (top);
	if (d == out + cap)
		*--d = '0';
	if (neg)
		*--d = '-';
	size_t len = (size_t)(out + cap - d);
	memmove(out, d, len);
	free(l);
	return len;
}

size_t pk_int_text(const struct pk *pk, const struct pk_val *v, char *out, size_t cap)
{
	if (v->kind == PK_BOOL) {
		const char *s = v->u.i ? "True" : "False";
		size_t n = strlen(s);
		return n <= cap ? (memcpy(out, s, n), n) : 0;
	}
	if (v->kind == PK_INT) {
		char b[MFS_NUM_MAX];
		size_t n = mfs_fmt_i64(b, v->u.i);
		return n <= cap ? (memcpy(out, b, n), n) : 0;
	}
	if (v->kind != PK_LONG)
		return 0;
	const uint8_t *s = pk_bytes(pk, v);
	size_t n = (size_t)v->u.s.len;
	if (!(v->flags & PK_F_DECIMAL))
		return big_text(s, n, out, cap);
	/* Decimal text as the pickle spells it, without a '+' or leading zeros. */
	bool neg = n && s[0] == '-';
	size_t k = n && (s[0] == '-' || s[0] == '+');
	while (k + 1 < n && s[k] == '0')
		k++;
	if (n - k + neg > cap)
		return 0;
	if (neg)
		out[0] = '-';
	memcpy(out + neg, s + k, n - k);
	return n - k + neg;
}

size_t pk_float_repr(double f, char *out)
{
	size_t n = mfs_fmt_f64(out, f);
	if (n == 4 && !memcmp(out, "-nan", 4))
		return memcpy(out, "nan", 3), 3;  /* Python has no signed nan */
	for (size_t i = 0; i < n; i++)
		if (out[i] == '.' || out[i] == 'e' || out[i] == 'n')
			return n;  /* a fraction, an exponent, inf or nan */
	memcpy(out + n, ".0", 2);
	return n + 2;
}
