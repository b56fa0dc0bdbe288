/* The restricted pickle reader (pickle.h): a loop over opcodes, each
 * checked against the bytes left, the stack above the innermost mark and
 * the memo before it acts. Strings and numbers are read here; containers,
 * globals and calls in pickle_ops.c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "numtext.h"
#include "pickle_impl.h"

int pk_fail(struct pk_parser *ps, const char *what)
{
	return mfs_error(ps->err, EINVAL, "pickle: %s at byte %llu", what,
			 (unsigned long long)ps->op_off);
}

int pk_nomem(struct pk_parser *ps)
{
	if (ps->err && ps->err->code == ENOMEM)
		return -ENOMEM;  /* the budget's message */
	return mfs_error(ps->err, ENOMEM, "out of memory reading the pickle");
}

int pk_reserve(struct pk_parser *ps, void *arr, uint32_t n, uint32_t *cap, size_t more,
	       size_t elem)
{
	if (more <= (size_t)(*cap - n))
		return 0;
	/* The capacity mfs_array_reserve will give: doubled from 64. */
	uint64_t nc = *cap ? *cap : 64;
	while (nc < (uint64_t)n + more)
		nc *= 2;
	const struct pk_budget *b = ps->budget;
	int64_t charge = (int64_t)((nc - *cap) * elem);
	if (nc >= PK_NIL || (b && !b->charge(b->ctx, charge)))
		return -ENOMEM;
	size_t c = *cap;
	if (mfs_array_reserve(arr, n, &c, (size_t)(nc - n), elem, 64) < 0) {
		if (b)
			b->charge(b->ctx, -charge);
		return -ENOMEM;
	}
	*cap = (uint32_t)c;
	return 0;
}

uint32_t pk_new(struct pk_parser *ps, uint8_t kind)
{
	struct pk *pk = ps->pk;
	if (pk_reserve(ps, &pk->v, pk->nv, &pk->capv, 1, sizeof(*pk->v)) < 0)
		return PK_NIL;
	struct pk_val *v = &pk->v[pk->nv];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->op = ps->op;
	v->off = ps->op_off;
	v->len = ps->pos - ps->op_off;
	v->head = v->tail = v->lhead = v->ltail = PK_NIL;
	v->a = v->b = v->c = PK_NIL;
	return pk->nv++;
}

int pk_push(struct pk_parser *ps, uint32_t v)
{
	if (v == PK_NIL)
		return pk_nomem(ps);
	if (ps->nstack == ps->capstack &&
	    MFS_ARRAY_RESERVE(ps->stack, ps->nstack, ps->capstack, 1, 64) < 0)
		return pk_nomem(ps);
	ps->stack[ps->nstack++] = v;
	return 0;
}

int pk_pop(struct pk_parser *ps, uint32_t *v)
{
	size_t fence = ps->nmarks ? ps->marks[ps->nmarks - 1] : 0;
	if (ps->nstack <= fence)
		return pk_fail(ps, ps->nstack ? "a value popped from below the mark" : "a value popped from an empty stack");
	*v = ps->stack[--ps->nstack];
	return 0;
}

int pk_top(struct pk_parser *ps, uint32_t *v)
{
	size_t fence = ps->nmarks ? ps->marks[ps->nmarks - 1] : 0;
	if (ps->nstack <= fence)
		return pk_fail(ps, "an empty stack used");
	*v = ps->stack[ps->nstack - 1];
	return 0;
}

int pk_pop_mark(struct pk_parser *ps, size_t *at, uint64_t *mark_off)
{
	if (!ps->nmarks)
		return pk_fail(ps, "no mark to pop to");
	*at = ps->marks[--ps->nmarks];
	if (mark_off)
		*mark_off = ps->mark_off[ps->nmarks];
	return 0;
}

/* n bytes of argument: a pointer to them, or NULL (truncated). */
static const uint8_t *arg(struct pk_parser *ps, uint64_t n)
{
	if (n > ps->avail - ps->pos) {
		pk_fail(ps, "truncated opcode argument");
		return NULL;
	}
	const uint8_t *a = ps->pk->p + ps->pos;
	ps->pos += n;
	return a;
}

/* A newline-terminated argument (the newline not included). */
int pk_line(struct pk_parser *ps, const uint8_t **s, size_t *len)
{
	const uint8_t *p = ps->pk->p + ps->pos;
	const uint8_t *nl = memchr(p, '\n', (size_t)(ps->avail - ps->pos));
	if (!nl)
		return pk_fail(ps, "an argument without its newline");
	*s = p;
	*len = (size_t)(nl - p);
	ps->pos += *len + 1;
	return 0;
}

/* Room for n more bytes of decoded text; its offset in pk->text. */
static int text_room(struct pk_parser *ps, uint64_t n, uint64_t *at)
{
	struct pk *pk = ps->pk;
	if (n >= pk->captext - pk->ntext) {  /* at least one byte: text is never NULL */
		if (pk->ntext + n >= PK_NIL)
			return pk_nomem(ps);
		uint32_t cap = (uint32_t)pk->captext;
		if (pk_reserve(ps, &pk->text, (uint32_t)pk->ntext, &cap, (size_t)n + 1, 1) < 0)
			return pk_nomem(ps);
		pk->captext = cap;
	}
	*at = pk->ntext;
	return 0;
}

/* A string value of the n bytes at offset off of the pickle. */
static int push_span(struct pk_parser *ps, uint8_t kind, uint64_t off, uint64_t n)
{
	uint32_t v = pk_new(ps, kind);
	if (v != PK_NIL)
		ps->pk->v[v].u.s.off = off, ps->pk->v[v].u.s.len = n;
	return pk_push(ps, v);
}

/* A counted string: its length in lb bytes (little-endian), then the bytes. */
static int counted(struct pk_parser *ps, uint8_t kind, unsigned lb)
{
	const uint8_t *a = arg(ps, lb);
	if (!a)
		return -EINVAL;
	uint64_t n = lb == 1 ? a[0] : lb == 4 ? mfs_le32(a) : mfs_le64(a);
	if (lb == 4 && (ps->op == 'T' || ps->op == 'J') && (n >> 31))
		return pk_fail(ps, "a negative string length");
	uint64_t off = ps->pos;
	if (!arg(ps, n))
		return -EINVAL;
	return push_span(ps, kind, off, n);
}

/* A string value of the n bytes decoded at offset at of pk->text. */
static int push_text(struct pk_parser *ps, uint64_t at, uint64_t n)
{
	uint32_t v = pk_new(ps, PK_STR);
	if (v != PK_NIL) {
		ps->pk->v[v].flags = PK_F_TEXT;
		ps->pk->v[v].u.s.off = at;
		ps->pk->v[v].u.s.len = n;
	}
	ps->pk->ntext += n;
	return pk_push(ps, v);
}

/* Code point c as UTF-8 (surrogates too, as Python's surrogatepass). */
static size_t utf8_put(uint8_t *o, uint32_t c)
{
	if (c < 0x80)
		return o[0] = (uint8_t)c, 1;
	if (c < 0x800)
		return o[0] = (uint8_t)(0xc0 | c >> 6), o[1] = (uint8_t)(0x80 | (c & 63)), 2;
	if (c < 0x10000) {
		o[0] = (uint8_t)(0xe0 | c >> 12);
		o[1] = (uint8_t)(0x80 | ((c >> 6) & 63));
		o[2] = (uint8_t)(0x80 | (c & 63));
		return 3;
	}
	o[0] = (uint8_t)(0xf0 | c >> 18);
	o[1] = (uint8_t)(0x80 | ((c >> 12) & 63));
	o[2] = (uint8_t)(0x80 | ((c >> 6) & 63));
	o[3] = (uint8_t)(0x80 | (c & 63));
	return 4;
}

static int hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* n hex digits at s as a number, or -1. */
static int64_t hexnum(const uint8_t *s, unsigned n)
{
	int64_t x = 0;
	for (unsigned i = 0; i < n; i++) {
		int h = hexval(s[i]);
		if (h < 0)
			return -1;
		x = x * 16 + h;
	}
	return x;
}

/* UNICODE: raw-unicode-escape text (\uXXXX, \UXXXXXXXX; other bytes are
 * Latin-1) decoded to UTF-8. Each escape shrinks, each other byte at most
 * doubles: 2 bytes of text per byte of argument. */
static int op_unicode(struct pk_parser *ps)
{
	const uint8_t *s;
	size_t n;
	uint64_t at = 0;
	int r = pk_line(ps, &s, &n);
	if (r < 0 || (r = text_room(ps, 2 * (uint64_t)n, &at)) < 0)
		return r;
	uint8_t *o = (uint8_t *)ps->pk->text + at, *o0 = o;
	for (size_t i = 0; i < n;) {
		unsigned w = 0;
		if (s[i] == '\\' && i + 1 < n && (s[i + 1] == 'u' || s[i + 1] == 'U'))
			w = s[i + 1] == 'u' ? 4 : 8;
		int64_t c = w && i + 2 + w <= n ? hexnum(s + i + 2, w) : -1;
		if (w && (c < 0 || c > 0x10ffff))
			return pk_fail(ps, "a bad \\u escape in a UNICODE string");
		if (w) {
			o += utf8_put(o, (uint32_t)c);
			i += 2 + w;
		} else {
			o += utf8_put(o, s[i++]);
		}
	}
	return push_text(ps, at, (uint64_t)(o - o0));
}

/* One escape of a STRING's repr at s[i, n) (after the backslash): its
 * byte into *c, the bytes it took, or 0 when it is not one. */
static size_t str_escape(const uint8_t *s, size_t i, size_t n, uint8_t *c)
{
	static const char from[] = "\\'\"abfnrtv", to[] = "\\'\"\a\b\f\n\r\t\v";
	const char *k = i < n && s[i] ? strchr(from, s[i]) : NULL;
	if (k)
		return *c = (uint8_t)to[k - from], 1;
	if (i + 2 < n && s[i] == 'x' && hexnum(s + i + 1, 2) >= 0)
		return *c = (uint8_t)hexnum(s + i + 1, 2), 3;
	size_t d = 0;
	unsigned x = 0;
	while (d < 3 && i + d < n && s[i + d] >= '0' && s[i + d] <= '7')
		x = x * 8 + (unsigned)(s[i + d++] - '0');
	return d ? (*c = (uint8_t)x, d) : 0;
}

/* STRING: a quoted Python 2 str repr ('abc' or "abc", with escapes). */
static int op_string(struct pk_parser *ps)
{
	const uint8_t *s;
	size_t n;
	uint64_t at = 0;
	int r = pk_line(ps, &s, &n);
	if (r < 0)
		return r;
	if (n < 2 || (s[0] != '\'' && s[0] != '"') || s[n - 1] != s[0])
		return pk_fail(ps, "a STRING argument that is not quoted");
	if ((r = text_room(ps, n, &at)) < 0)
		return r;
	uint8_t *o = (uint8_t *)ps->pk->text + at, *o0 = o;
	for (size_t i = 1; i < n - 1;) {
		if (s[i] != '\\') {
			*o++ = s[i++];
			continue;
		}
		size_t k = str_escape(s, i + 1, n - 1, o);
		if (!k)
			return pk_fail(ps, "a bad escape in a STRING");
		o++;
		i += 1 + k;
	}
	return push_text(ps, at, (uint64_t)(o - o0));
}

static int push_int(struct pk_parser *ps, uint8_t kind, int64_t i)
{
	uint32_t v = pk_new(ps, kind);
	if (v != PK_NIL)
		ps->pk->v[v].u.i = i;
	return pk_push(ps, v);
}

/* A decimal text at s[0, n): an int64 (*i), or 1 when it is a valid
 * number beyond int64, -1 when it is not a number. */
static int dec_int(const uint8_t *s, size_t n, int64_t *i)
{
	size_t k = n && (s[0] == '-' || s[0] == '+');
	if (k == n || n > 4096)
		return -1;
	for (size_t j = k; j < n; j++)
		if (s[j] < '0' || s[j] > '9')
			return -1;
	return mfs_parse_i64((const char *)s, n, INT64_MIN, INT64_MAX, i) == 0 ? 0 : 1;
}

/* INT and LONG: decimal text (INT's 01 and 00 are True and False; LONG
 * may end in 'L'). Beyond int64, the digits are kept as text. */
static int op_int_text(struct pk_parser *ps)
{
	const uint8_t *s;
	size_t n;
	int r = pk_line(ps, &s, &n);
	if (r < 0)
		return r;
	if (ps->op == 'I' && n == 2 && s[0] == '0' && (s[1] == '0' || s[1] == '1'))
		return push_int(ps, PK_BOOL, s[1] == '1');
	if (ps->op == 'L' && n && s[n - 1] == 'L')
		n--;
	int64_t i;
	int k = dec_int(s, n, &i);
	if (k < 0)
		return pk_fail(ps, "an integer argument that is not a number");
	if (k == 0)
		return push_int(ps, PK_INT, i);
	uint32_t v = pk_new(ps, PK_LONG);
	if (v != PK_NIL) {
		ps->pk->v[v].u.s.off = (uint64_t)(s - ps->pk->p);
		ps->pk->v[v].u.s.len = n;
		ps->pk->v[v].flags = PK_F_DECIMAL;
	}
	return pk_push(ps, v);
}

/* LONG1, LONG4: n bytes of little-endian two's complement. */
static int op_long_bin(struct pk_parser *ps, unsigned lb)
{
	const uint8_t *a = arg(ps, lb);
	if (!a)
		return -EINVAL;
	uint64_t n = lb == 1 ? a[0] : mfs_le32(a);
	if (lb == 4 && (n >> 31))
		return pk_fail(ps, "a negative LONG4 length");
	uint64_t off = ps->pos;
	const uint8_t *b = arg(ps, n);
	if (!b)
		return -EINVAL;
	if (n <= 8) {
		uint64_t u = 0;
		for (unsigned k = 0; k < n; k++)
			u |= (uint64_t)b[k] << (8 * k);
		if (n && n < 8 && (b[n - 1] & 0x80))
			u |= ~(uint64_t)0 << (8 * n);  /* sign-extend */
		return push_int(ps, PK_INT, (int64_t)u);
	}
	return push_span(ps, PK_LONG, off, n);
}

static int push_float(struct pk_parser *ps, double f)
{
	uint32_t v = pk_new(ps, PK_FLOAT);
	if (v != PK_NIL)
		ps->pk->v[v].u.f = f;
	return pk_push(ps, v);
}

static int op_float_text(struct pk_parser *ps)
{
	const uint8_t *s;
	size_t n;
	double f;
	int r = pk_line(ps, &s, &n);
	if (r < 0)
		return r;
	r = mfs_parse_f64((const char *)s, n, &f);
	if (r == -ERANGE) {
		/* out of range: Python's float() gives an infinity of its sign */
		size_t k = 0;
		while (k < n && (s[k] == ' ' || s[k] == '\t'))
			k++;
		f = k < n && s[k] == '-' ? -HUGE_VAL : HUGE_VAL;
	} else if (r < 0) {
		return pk_fail(ps, "a FLOAT argument that is not a number");
	}
	return push_float(ps, f);
}

static int op_binfloat(struct pk_parser *ps)
{
	const uint8_t *a = arg(ps, 8);
	if (!a)
		return -EINVAL;
	uint64_t u = mfs_be64(a);
	double f;
	memcpy(&f, &u, 8);
	return push_float(ps, f);
}

/* Opcodes with a fixed-size little-endian integer argument. */
static int op_binint(struct pk_parser *ps, unsigned lb)
{
	const uint8_t *a = arg(ps, lb);
	if (!a)
		return -EINVAL;
	int64_t i = lb == 1 ? a[0] : lb == 2 ? mfs_le16(a) : (int32_t)mfs_le32(a);
	return push_int(ps, PK_INT, i);
}

static int op_proto(struct pk_parser *ps)
{
	const uint8_t *a = arg(ps, 1);
	if (!a)
		return -EINVAL;
	if (a[0] > 5)
		return pk_fail(ps, "an unsupported pickle protocol (0 to 5 are read)");
	ps->pk->proto = a[0];
	return 0;
}

/* FRAME: an 8-byte length of the opcodes that follow (kept for edits). */
static int op_frame(struct pk_parser *ps)
{
	const uint8_t *a = arg(ps, 8);
	if (!a)
		return -EINVAL;
	if (mfs_le64(a) > ps->avail - ps->pos)
		return pk_fail(ps, "a FRAME longer than the bytes left");
	struct pk *pk = ps->pk;
	if (pk_reserve(ps, &pk->frames, pk->nframes, &pk->capframes, 1, sizeof(*pk->frames)) < 0)
		return pk_nomem(ps);
	pk->frames[pk->nframes++] = ps->op_off;
	return 0;
}

/* Strings, numbers and the stream's own opcodes; 1 when op is none of
 * them (pickle_ops.c's). */
static int op_scalar(struct pk_parser *ps)
{
	switch (ps->op) {
	case 'N': return pk_push(ps, pk_new(ps, PK_NONE));
	case 0x88: return push_int(ps, PK_BOOL, 1);
	case 0x89: return push_int(ps, PK_BOOL, 0);
	case 'I': case 'L': return op_int_text(ps);
	case 'J': return op_binint(ps, 4);
	case 'K': return op_binint(ps, 1);
	case 'M': return op_binint(ps, 2);
	case 0x8a: return op_long_bin(ps, 1);
	case 0x8b: return op_long_bin(ps, 4);
	case 'F': return op_float_text(ps);
	case 'G': return op_binfloat(ps);
	case 'S': return op_string(ps);
	case 'V': return op_unicode(ps);
	case 'T': return counted(ps, PK_STR, 4);
	case 'U': return counted(ps, PK_STR, 1);
	case 'X': return counted(ps, PK_STR, 4);
	case 0x8c: return counted(ps, PK_STR, 1);
	case 0x8d: return counted(ps, PK_STR, 8);
	case 'B': return counted(ps, PK_BYTES, 4);
	case 'C': return counted(ps, PK_BYTES, 1);
	case 0x8e: case 0x96: return counted(ps, PK_BYTES, 8);
	case 0x80: return op_proto(ps);
	case 0x95: return op_frame(ps);
	default: return 1;
	}
}

int pk_parse(struct pk *pk, const uint8_t *p, uint64_t avail, const struct pk_budget *budget,
	     struct mfs_err *err)
{
	memset(pk, 0, sizeof(*pk));
	pk->p = p;
	pk->root = PK_NIL;
	struct pk_parser ps = {.pk = pk, .avail = avail, .budget = budget, .err = err};
	int r = 0;
	while (r == 0) {
		if (ps.pos >= avail) {
			r = pk_fail(&ps, "truncated: no STOP opcode");
			break;
		}
		ps.op_off = ps.pos;
		ps.op = p[ps.pos++];
		if (ps.op == '.') {
			r = pk_pop(&ps, &pk->root);
			break;
		}
		r = op_scalar(&ps);
		if (r == 1)
			r = pk_op_struct(&ps);
		if (r == 1)
			r = pk_fail(&ps, "an unknown opcode");
	}
	pk->size = ps.pos;
	pk_parser_free(&ps);
	return r;
}

void pk_free(struct pk *pk)
{
	free(pk->v);
	free(pk->c);
	free(pk->text);
	free(pk->frames);
	memset(pk, 0, sizeof(*pk));
	pk->root = PK_NIL;
}
