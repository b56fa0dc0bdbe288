/* New opcode bytes for a pickled scalar, and the pickle made again around
 * them (pt_value.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "numtext.h"
#include "pt_repr.h"
#include "pt_value.h"

/* Digits of a decimal int at most (Python's own limit is 4300). */
#define PT_LITERAL_DEPTH 100u
#define INT_DIGITS_MAX 4300u

/* Whether the value came from a text opcode (protocol 0's forms). */
static bool text_form(uint8_t op)
{
	return op == 'I' || op == 'L' || op == 'F' || op == 'V' || op == 'S' || op == 'g';
}

static void trim(const char **s, size_t *n)
{
	while (*n && strchr(" \t\r\n", (*s)[0]))
		(*s)++, (*n)--;
	while (*n && strchr(" \t\r\n", (*s)[*n - 1]))
		(*n)--;
}

static int add_le(struct mfs_buf *b, uint64_t x, unsigned n)
{
	uint8_t le[8];
	for (unsigned i = 0; i < n; i++)
		le[i] = (uint8_t)(x >> (8 * i));
	return mfs_buf_add(b, le, n);
}

/* A decimal int at s[0, n) as little-endian two's complement bytes,
 * the fewest that hold it (LONG1's argument). */
static int big_bytes(const char *s, size_t n, struct mfs_buf *mag)
{
	bool neg = s[0] == '-';
	size_t k = s[0] == '-' || s[0] == '+';
	uint8_t *d = calloc(n + 2, 1);  /* magnitude, LE; 10^n fits in n bytes */
	if (!d)
		return -ENOMEM;
	size_t used = 1;
	for (; k < n; k++) {
		unsigned carry = (unsigned)(s[k] - '0');
		for (size_t i = 0; i < used || carry; i++) {
			unsigned x = (i < used ? d[i] : 0u) * 10u + carry;
			d[i] = (uint8_t)x;
			carry = x >> 8;
			if (i >= used)
				used = i + 1;
		}
	}
	if (neg) {  /* two's complement: invert and add one */
		unsigned carry = 1;
		for (size_t i = 0; i < used; i++) {
			unsigned x = (uint8_t)~d[i] + carry;
			d[i] = (uint8_t)x;
			carry = x >> 8;
		}
	}
	/* The sign bit must say the sign: one more byte where it does not. */
	uint8_t top = d[used - 1];
	if (!neg && (top & 0x80))
		d[used++] = 0;
	else if (neg && !(top & 0x80))
		d[used++] = 0xff;
	while (used > 1 && ((!neg && d[used - 1] == 0 && !(d[used - 2] & 0x80)) ||
			    (neg && d[used - 1] == 0xff && (d[used - 2] & 0x80))))
		used--;
	int r = mfs_buf_add(mag, d, used);
	free(d);
	return r;
}

static int enc_int(const struct pk_val *x, const char *s, size_t n, struct mfs_buf *b,
		   struct mfs_err *err)
{
	char q[MFS_QUOTE_MAX];
	size_t k = n && (s[0] == '-' || s[0] == '+');
	bool ok = k < n && n <= INT_DIGITS_MAX;
	for (size_t i = k; ok && i < n; i++)
		ok = s[i] >= '0' && s[i] <= '9';
	if (!ok)
		return mfs_error(err, EINVAL, "%s is not an int", mfs_quote(q, s, n));
	int64_t i = 0;
	bool small = mfs_parse_i64(s, n, INT64_MIN, INT64_MAX, &i) == 0;
	if (text_form(x->op)) {
		bool lng = x->op == 'L' || !small;
		int r = mfs_buf_add(b, lng ? "L" : "I", 1);
		if (r == 0)
			r = mfs_buf_add(b, s + (s[0] == '+'), n - (s[0] == '+'));
		return r < 0 ? r : mfs_buf_add(b, lng ? "L\n" : "\n", lng ? 2 : 1);
	}
	if (small && i >= 0 && i < 256)
		return mfs_buf_add(b, "K", 1) < 0 ? -ENOMEM : add_le(b, (uint64_t)i, 1);
	if (small && i >= 0 && i < 65536)
		return mfs_buf_add(b, "M", 1) < 0 ? -ENOMEM : add_le(b, (uint64_t)i, 2);
	if (small && i >= INT32_MIN && i <= INT32_MAX)
		return mfs_buf_add(b, "J", 1) < 0 ? -ENOMEM : add_le(b, (uint64_t)i, 4);
	struct mfs_buf mag = {0};
	int r = big_bytes(s, n, &mag);
	if (r == 0 && mag.len > 255)
		r = mfs_buf_add(b, "\x8b", 1) < 0 ? -ENOMEM : add_le(b, mag.len, 4);
	else if (r == 0)
		r = mfs_buf_add(b, "\x8a", 1) < 0 ? -ENOMEM : add_le(b, mag.len, 1);
	if (r == 0)
		r = mfs_buf_add(b, mag.p, mag.len);
	mfs_buf_free(&mag);
	return r;
}

static int enc_float(const struct pk_val *x, const char *s, size_t n, struct mfs_buf *b,
		     struct mfs_err *err)
{
	double f;
	char q[MFS_QUOTE_MAX];
	int r = mfs_parse_f64(s, n, &f);
	if (r == -ERANGE)
		return mfs_error(err, ERANGE, "%s is out of range for a float, which holds up to 1.7976931348623157e+308",
				 mfs_quote(q, s, n));
	if (r < 0)
		return mfs_error(err, EINVAL, "%s is not a float", mfs_quote(q, s, n));
	if (text_form(x->op)) {
		char t[64];
		size_t tl = pk_float_repr(f, t);
		if ((r = mfs_buf_add(b, "F", 1)) == 0 && (r = mfs_buf_add(b, t, tl)) == 0)
			r = mfs_buf_add(b, "\n", 1);
		return r;
	}
	uint64_t u;
	memcpy(&u, &f, 8);
	uint8_t be[9] = {'G'};
	mfs_put_be64(be + 1, u);
	return mfs_buf_add(b, be, 9);
}

static int enc_bool(const struct pk_val *x, const char *s, size_t n, struct mfs_buf *b,
		    struct mfs_err *err)
{
	bool t = n == 4 && !memcmp(s, "True", 4), f = n == 5 && !memcmp(s, "False", 5);
	char q[MFS_QUOTE_MAX];
	if (!t && !f)
		return mfs_error(err, EINVAL, "%s is not True or False", mfs_quote(q, s, n));
	if (text_form(x->op))
		return mfs_buf_add(b, t ? "I01\n" : "I00\n", 4);
	return mfs_buf_add(b, t ? "\x88" : "\x89", 1);
}

/* UTF-8 text as raw-unicode-escape (UNICODE's argument): code points
 * below 256 as Latin-1 bytes, but for those the line and the escapes
 * need (backslash, newline, CR, NUL, 0x1a), others as \uXXXX/\UXXXXXXXX. */
static int raw_unicode(const char *s, size_t n, struct mfs_buf *b)
{
	for (size_t i = 0; i < n;) {
		const uint8_t *u = (const uint8_t *)s + i;
		size_t w = u[0] < 0x80 ? 1 : mfs_utf8_char(u, n - i);
		uint32_t c = w == 1 ? u[0] : w == 2 ? (u[0] & 0x1fu) << 6 | (u[1] & 0x3f)
			   : w == 3 ? (u[0] & 0x0fu) << 12 | (u[1] & 0x3fu) << 6 | (u[2] & 0x3f)
			   : (u[0] & 0x07u) << 18 | (u[1] & 0x3fu) << 12 | (u[2] & 0x3fu) << 6 | (u[3] & 0x3f);
		char e[16];
		int r;
		if (c < 256 && !strchr("\\\n\r\x1a", (int)c) && c) {
			uint8_t byte = (uint8_t)c;
			r = mfs_buf_add(b, &byte, 1);
		} else {
			int el = c < 0x10000 ? snprintf(e, sizeof(e), "\\u%04x", c) : snprintf(e, sizeof(e), "\\U%08x", c);
			r = mfs_buf_add(b, e, (size_t)el);
		}
		if (r < 0)
			return r;
		i += w;
	}
	return 0;
}

/* A str or bytes: the same opcode family, sized for its length. */
static int enc_string(const struct pk_val *x, const char *s, size_t n, struct mfs_buf *b,
		      struct mfs_err *err)
{
	bool bytes = x->kind == PK_BYTES;
	for (size_t i = 0; !bytes && i < n;) {
		size_t w = (uint8_t)s[i] < 0x80 ? 1 : mfs_utf8_char(s + i, n - i);
		if (!w)
			return mfs_error(err, EINVAL, "the text is not UTF-8 at byte %zu", i);
		i += w;
	}
	int r;
	if (!bytes && (x->op == 'V' || x->op == 'g')) {
		if ((r = mfs_buf_add(b, "V", 1)) == 0 && (r = raw_unicode(s, n, b)) == 0)
			r = mfs_buf_add(b, "\n", 1);
		return r;
	}
	uint8_t op;
	unsigned lb;
	if (bytes)
		op = x->op == 0x96 ? 0x96 : n < 256 && x->op == 'C' ? 'C' : n < (1ull << 32) && x->op != 0x8e ? 'B' : 0x8e;
	else
		op = n < 256 && x->op == 0x8c ? 0x8c : n < (1ull << 32) && x->op != 0x8d ? 'X' : 0x8d;
	lb = op == 'C' || op == 0x8c ? 1 : op == 'B' || op == 'X' ? 4 : 8;
	if ((r = mfs_buf_add(b, &op, 1)) == 0 && (r = add_le(b, n, lb)) == 0)
		r = mfs_buf_add(b, s, n);
	return r;
}

/* Mark value v and the elements it holds, at any depth: false when one is
 * not a literal's (a scalar, a tuple, a list) or is taken from the memo
 * elsewhere (its place would lose it). */
static bool mark_literal(const struct pk *pk, uint32_t v, uint8_t *in, unsigned depth)
{
	const struct pk_val *x = &pk->v[v];
	if (depth > PT_LITERAL_DEPTH || ((x->flags & PK_F_SHARED) && depth) || x->kind == PK_GLOBAL ||
	    x->kind == PK_CALL || x->kind == PK_PERSID || x->kind == PK_DICT || x->kind == PK_SET ||
	    x->kind == PK_FROZENSET)
		return false;
	in[v] = 1;
	for (uint32_t c = x->head; x->kind <= PK_LIST && x->kind >= PK_TUPLE && c != PK_NIL; c = pk->c[c].next)
		if (!mark_literal(pk, pk->c[c].v, in, depth + 1))
			return false;
	return true;
}

/* Whether literal v's opcodes are its span alone: nothing but its own
 * values inside it, none of them taken from the memo elsewhere, no FRAME.
 * The literal itself may be (the places that take it keep its old opcodes:
 * pt_value_rewrite); a place that took it (a GET) is its span alone. */
static int literal_alone(const struct pk *pk, uint32_t v, struct mfs_err *err)
{
	const struct pk_val *x = &pk->v[v];
	if (x->flags & PK_F_GOT)
		return 0;
	uint8_t *in = calloc(pk->nv, 1);
	if (!in)
		return mfs_error(err, ENOMEM, "out of memory");
	bool ok = mark_literal(pk, v, in, 0);
	for (uint32_t i = 0; ok && i < pk->nv; i++)
		ok = in[i] || pk->v[i].off < x->off || pk->v[i].off >= x->off + x->len;
	for (uint32_t f = 0; ok && f < pk->nframes; f++)
		ok = pk->frames[f] < x->off || pk->frames[f] >= x->off + x->len;
	free(in);
	return ok ? 0 : mfs_error(err, EACCES, "this literal shares values with other places of the pickle (read-only)");
}

static int encode(const struct pk_val *x, const char *s, size_t n, struct mfs_buf *b,
		  struct mfs_err *err)
{
	if (x->kind == PK_TUPLE || x->kind == PK_LIST)
		return pt_literal_encode(s, n, x->kind, b, err);
	if (x->kind == PK_STR || x->kind == PK_BYTES)
		return enc_string(x, s, n, b, err);
	trim(&s, &n);
	if (x->kind == PK_INT || x->kind == PK_LONG)
		return enc_int(x, s, n, b, err);
	if (x->kind == PK_FLOAT)
		return enc_float(x, s, n, b, err);
	if (x->kind == PK_BOOL)
		return enc_bool(x, s, n, b, err);
	return mfs_error(err, EACCES, "read-only");
}

static int by_off(const void *a, const void *b)
{
	const struct pt_span *x = a, *y = b;
	return x->off < y->off ? -1 : x->off > y->off;
}

static int splice(const struct pk *pk, const struct pt_span *sp, size_t ns, struct mfs_buf *out)
{
	uint64_t at = 0;
	size_t f = 0;
	int r = 0;
	for (size_t k = 0; k <= ns && r == 0; k++) {
		uint64_t end = k < ns ? sp[k].off : pk->size;
		size_t start = out->len;
		r = mfs_buf_add(out, pk->p + at, (size_t)(end - at));
		/* FRAME opcodes in what was copied: their lengths fixed below. */
		for (; r == 0 && f < pk->nframes && pk->frames[f] < end; f++) {
			uint64_t fo = pk->frames[f], flen = mfs_le64(pk->p + fo + 1), lim = fo + 9 + flen;
			int64_t delta = 0;
			for (size_t j = 0; j < ns; j++)
				if (sp[j].off >= fo + 9 && sp[j].off < lim)
					delta += (int64_t)sp[j].n - (int64_t)sp[j].len;
			uint64_t nl = flen + (uint64_t)delta;
			mfs_put_le64((uint8_t *)out->p + start + (fo - at) + 1, nl);
		}
		if (r == 0 && k < ns)
			r = mfs_buf_add(out, sp[k].bytes, sp[k].n);
		if (k < ns)
			at = sp[k].off + sp[k].len;
	}
	return r;
}

int pt_value_rewrite(const struct pk *pk, uint32_t v, const char *text, size_t len,
		     uint8_t **out, uint64_t *outlen, struct mfs_err *err)
{
	const struct pk_val *x = &pk->v[v];
	struct mfs_buf nb = {0}, res = {0};
	uint64_t after = x->off + x->len;
	uint8_t next = after < pk->size ? pk->p[after] : '.';
	if ((x->flags & PK_F_GOT) && (next == 'p' || next == 'q' || next == 'r' || next == 0x94))
		/* Put in the memo again: later places take it from there. */
		return mfs_error(err, EACCES, "the value is shared through the pickle's memo twice over (read-only)");
	int r = x->kind == PK_TUPLE || x->kind == PK_LIST ? literal_alone(pk, v, err) : 0;
	if (r == 0)
		r = encode(x, text, len, &nb, err);
	size_t ns = 1, cap = 8;
	struct pt_span *sp = r < 0 ? NULL : malloc(cap * sizeof(*sp));
	if (r == 0 && !sp)
		r = -ENOMEM;
	if (r == 0)
		sp[0] = (struct pt_span){x->off, x->len, (const uint8_t *)nb.p, nb.len};
	/* The places that took v from the memo keep its old value. */
	for (uint32_t i = 0; r == 0 && !(x->flags & PK_F_GOT) && i < pk->nv; i++) {
		const struct pk_val *c = &pk->v[i];
		if (!(c->flags & PK_F_GOT) || c->a != v)
			continue;
		if (ns == cap && MFS_ARRAY_RESERVE(sp, ns, cap, 1, 8) < 0)
			r = -ENOMEM;
		else
			sp[ns++] = (struct pt_span){c->off, c->len, pk->p + x->off, (size_t)x->len};
	}
	if (r == 0)
		r = pt_splice(pk, sp, ns, &res);
	free(sp);
	mfs_buf_free(&nb);
	if (r == -ENOMEM)
		r = mfs_error(err, ENOMEM, "out of memory");
	if (r < 0) {
		mfs_buf_free(&res);
		return r;
	}
	*out = (uint8_t *)res.p;
	*outlen = res.len;
	return 0;
}

int pt_bytes_rewrite(const struct pk *pk, uint32_t v, const char *text, size_t len,
		     uint8_t **out, uint64_t *outlen, struct mfs_err *err)
{
	uint32_t s = pt_bytes_call(pk, v);
	if (s == PK_NIL || pk->v[s].kind != PK_STR || (pk->v[v].flags & PK_F_SHARED))
		return mfs_error(err, EACCES, "read-only");
	/* Each byte as the code point of that value, in UTF-8. */
	struct mfs_buf u = {0};
	int r = 0;
	for (size_t i = 0; i < len && r == 0; i++) {
		uint8_t c = (uint8_t)text[i], two[2] = {(uint8_t)(0xc0 | c >> 6), (uint8_t)(0x80 | (c & 0x3f))};
		r = c < 0x80 ? mfs_buf_add(&u, &c, 1) : mfs_buf_add(&u, two, 2);
	}
	if (r == 0)
		r = pt_value_rewrite(pk, s, u.p ? u.p : "", u.len, out, outlen, err);
	else
		r = mfs_error(err, ENOMEM, "out of memory");
	mfs_buf_free(&u);
	return r;
}

int pt_splice(const struct pk *pk, struct pt_span *sp, size_t ns, struct mfs_buf *out)
{
	qsort(sp, ns, sizeof(*sp), by_off);
	return splice(pk, sp, ns, out);
}

int pt_int_opcode(struct mfs_buf *b, uint64_t v)
{
	char dec[24];
	size_t n = mfs_fmt_u64(dec, v);
	struct pk_val x = {.kind = PK_INT, .op = 'K'};
	return enc_int(&x, dec, n, b, NULL);
}

int pt_int_from_text(struct mfs_buf *b, const char *s, size_t n, struct mfs_err *err)
{
	struct pk_val x = {.kind = PK_INT, .op = 'K'};
	return enc_int(&x, s, n, b, err);
}

int pt_float_from_text(struct mfs_buf *b, const char *s, size_t n, struct mfs_err *err)
{
	struct pk_val x = {.kind = PK_FLOAT, .op = 'G'};
	return enc_float(&x, s, n, b, err);
}
