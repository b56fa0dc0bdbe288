/* Python literals written to a literal file (`(0.9, 0.999)`, `[0, 1, 2]`,
 * `[[1, 2], (3.5, 'a')]`) parsed and encoded as the opcodes that build
 * them: MARK ... TUPLE and MARK ... LIST (valid in every protocol), ints
 * and floats in their binary opcodes, strings as BINUNICODE, bytes as
 * BINBYTES, True/False/None. Nesting is bounded. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "pt_value.h"

#define LIT_DEPTH_MAX 100u

struct lit {
	const char *s, *end;
	struct mfs_buf *b;
	struct mfs_err *err;
};

static void blank(struct lit *l)
{
	while (l->s < l->end && strchr(" \t\r\n", *l->s))
		l->s++;
}

static int bad(struct lit *l, const char *what)
{
	char q[MFS_QUOTE_MAX];
	return mfs_error(l->err, EINVAL, "%s at %s", what,
			 mfs_quote(q, l->s, (size_t)(l->end - l->s)));
}

static int hexv(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

/* A quoted string's escape after the backslash: its value (a byte, or a
 * code point for \u and \U in a str), the characters it took, or 0. */
static size_t escape(const char *s, const char *end, bool bytes, uint32_t *c)
{
	static const char from[] = "\\'\"abfnrtv", to[] = "\\'\"\a\b\f\n\r\t\v";
	const char *k = s < end && *s ? strchr(from, *s) : NULL;
	if (k)
		return *c = (uint8_t)to[k - from], 1;
	unsigned w = s < end ? (*s == 'x' ? 2 : !bytes && *s == 'u' ? 4 : !bytes && *s == 'U' ? 8 : 0) : 0;
	if (!w || end - s < (ptrdiff_t)(1 + w))
		return 0;
	uint32_t x = 0;
	for (unsigned i = 1; i <= w; i++) {
		int h = hexv(s[i]);
		if (h < 0)
			return 0;
		x = x * 16 + (uint32_t)h;
	}
	return x > 0x10ffff ? 0 : (*c = x, 1 + w);
}

static void utf8(struct mfs_buf *t, uint32_t c, int *r)
{
	uint8_t o[4];
	size_t n = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
	if (n == 1) {
		o[0] = (uint8_t)c;
	} else {
		for (size_t i = n - 1; i > 0; i--, c >>= 6)
			o[i] = (uint8_t)(0x80 | (c & 63));
		o[0] = (uint8_t)((0xf00u >> n) | c);
	}
	if (*r == 0)
		*r = mfs_buf_add(t, o, n);
}

/* A quoted str or bytes (after its b prefix). */
static int string(struct lit *l, bool bytes)
{
	char q = *l->s++;
	struct mfs_buf t = {0};
	int r = 0;
	while (r == 0 && l->s < l->end && *l->s != q) {
		uint32_t c = (uint8_t)*l->s;
		size_t k = 1;
		if (c == '\\') {
			k = escape(l->s + 1, l->end, bytes, &c);
			if (!k) {
				mfs_buf_free(&t);
				return bad(l, "a bad escape");
			}
			k++;
		}
		if (bytes && (c > 0xff || (k == 1 && c >= 0x80))) {
			mfs_buf_free(&t);
			return bad(l, "a non-ASCII character in bytes");
		}
		if (c >= 0x80 && k == 1) {  /* UTF-8 as it is */
			k = mfs_utf8_char(l->s, (size_t)(l->end - l->s));
			if (!k) {
				mfs_buf_free(&t);
				return bad(l, "text that is not UTF-8");
			}
			r = mfs_buf_add(&t, l->s, k);
		} else if (bytes || c < 0x80) {
			uint8_t byte = (uint8_t)c;
			r = mfs_buf_add(&t, &byte, 1);
		} else {
			utf8(&t, c, &r);
		}
		l->s += k;
	}
	if (r == 0 && l->s == l->end)
		r = bad(l, "a string without its closing quote");
	if (r == 0) {
		l->s++;
		uint8_t op = bytes ? 'B' : 'X', len[4];
		mfs_put_le32(len, (uint32_t)t.len);
		if ((r = mfs_buf_add(l->b, &op, 1)) == 0 && (r = mfs_buf_add(l->b, len, 4)) == 0)
			r = mfs_buf_add(l->b, t.p, t.len);
	}
	mfs_buf_free(&t);
	return r;
}

static bool word(struct lit *l, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(l->end - l->s) < n || memcmp(l->s, w, n))
		return false;
	l->s += n;
	return true;
}

/* A number: an int, or a float when it has a point, an exponent, inf or nan. */
static int number(struct lit *l)
{
	const char *a = l->s;
	bool fl = false;
	while (l->s < l->end && !strchr(" \t\r\n,)]", *l->s)) {
		fl |= strchr(".eEin", *l->s) != NULL;
		l->s++;
	}
	size_t n = (size_t)(l->s - a);
	if (!n)
		return bad(l, "a value expected");
	return fl ? pt_float_from_text(l->b, a, n, l->err) : pt_int_from_text(l->b, a, n, l->err);
}

static int value(struct lit *l, unsigned depth, uint8_t *kind);

/* A tuple or list's elements up to close, after MARK; a parenthesized
 * single value without a comma is that value, not a tuple (*kind 0). */
static int elements(struct lit *l, char close, unsigned depth, uint8_t *kind)
{
	size_t mark = l->b->len;
	int r = mfs_buf_add(l->b, "(", 1);
	unsigned n = 0;
	bool comma = false;
	for (blank(l); r == 0 && l->s < l->end && *l->s != close; blank(l)) {
		uint8_t k;
		if ((r = value(l, depth + 1, &k)) < 0)
			return r;
		n++;
		blank(l);
		comma = l->s < l->end && *l->s == ',';
		if (comma)
			l->s++;
		else if (l->s < l->end && *l->s != close)
			return bad(l, "a comma expected");
	}
	if (r < 0)
		return r;
	if (l->s == l->end)
		return bad(l, "a closing bracket expected");
	l->s++;
	if (close == ')' && n == 1 && !comma) {  /* (x) is x */
		memmove(l->b->p + mark, l->b->p + mark + 1, l->b->len - mark - 1);
		l->b->len--;
		*kind = 0;
		return 0;
	}
	*kind = close == ')' ? PK_TUPLE : PK_LIST;
	return mfs_buf_add(l->b, close == ')' ? "t" : "l", 1);
}

static int value(struct lit *l, unsigned depth, uint8_t *kind)
{
	if (depth > LIT_DEPTH_MAX)
		return bad(l, "a literal nested too deep");
	blank(l);
	*kind = 0;
	if (l->s == l->end)
		return bad(l, "a value expected");
	char c = *l->s;
	if (c == '(' || c == '[') {
		l->s++;
		return elements(l, c == '(' ? ')' : ']', depth, kind);
	}
	if (c == '\'' || c == '"')
		return string(l, false);
	if (c == 'b' && l->end - l->s > 1 && (l->s[1] == '\'' || l->s[1] == '"')) {
		l->s++;
		return string(l, true);
	}
	if (word(l, "True"))
		return mfs_buf_add(l->b, "\x88", 1);
	if (word(l, "False"))
		return mfs_buf_add(l->b, "\x89", 1);
	if (word(l, "None"))
		return mfs_buf_add(l->b, "N", 1);
	return number(l);
}

int pt_literal_encode(const char *s, size_t n, uint8_t kind, struct mfs_buf *b,
		      struct mfs_err *err)
{
	struct lit l = {s, s + n, b, err};
	uint8_t k;
	int r = value(&l, 0, &k);
	if (r == -ENOMEM)
		return mfs_error(err, ENOMEM, "out of memory");
	if (r < 0)
		return r;
	blank(&l);
	if (l.s != l.end)
		return bad(&l, "text after the literal");
	if (k != kind)
		return mfs_error(err, EINVAL, "expected a %s literal (%s), as before",
				 kind == PK_TUPLE ? "tuple" : "list", kind == PK_TUPLE ? "(a, b)" : "[a, b]");
	return 0;
}
