/* Python's repr of pickled values: None, True, False, ints, floats (the
 * shortest text that reads back, as repr), str and bytes literals with
 * repr's quotes and escapes, tuples (`(1,)`), lists, sets (`set()`),
 * frozensets, dicts; a global as `module.name`. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "pt_repr.h"

#define REPR_FREE (16u << 20)
#define REPR_PER_VALUE 256u
#define REPR_DEPTH_MAX 1000u

void pt_repr_init(struct pt_repr *rp, uint32_t nvalues)
{
	memset(rp, 0, sizeof(*rp));
	rp->budget = (uint64_t)nvalues * REPR_PER_VALUE + REPR_FREE;
}

void pt_repr_free(struct pt_repr *rp)
{
	mfs_buf_free(&rp->b);
}

static int add(struct mfs_buf *b, const char *s)
{
	return mfs_buf_add(b, s, strlen(s));
}

int pt_repr_str(struct mfs_buf *b, const uint8_t *s, size_t n, bool bytes)
{
	bool sq = memchr(s, '\'', n) != NULL, dq = memchr(s, '"', n) != NULL;
	char q = sq && !dq ? '"' : '\'';
	if ((bytes && add(b, "b") < 0) || mfs_buf_add(b, &q, 1) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n;) {
		char e[16];
		size_t el = 0, take = 1;
		uint8_t c = s[i];
		size_t u = bytes || c < 0x80 ? 0 : mfs_utf8_char(s + i, n - i);
		if (c == '\\' || c == (uint8_t)q)
			el = (size_t)snprintf(e, sizeof(e), "\\%c", c);
		else if (c == '\n' || c == '\r' || c == '\t')
			el = (size_t)snprintf(e, sizeof(e), "\\%c", c == '\n' ? 'n' : c == '\r' ? 'r' : 't');
		else if (c < 0x20 || c == 0x7f || (c >= 0x80 && (bytes || !u)))
			el = (size_t)snprintf(e, sizeof(e), "\\x%02x", c);
		else if (u == 2 && c == 0xc2 && s[i + 1] <= 0xa0)  /* C1 controls, no-break space */
			el = (size_t)snprintf(e, sizeof(e), "\\x%02x", s[i + 1]), take = 2;
		else if (u)
			take = u;
		if (el ? mfs_buf_add(b, e, el) < 0 : mfs_buf_add(b, s + i, take) < 0)
			return -ENOMEM;
		i += take;
	}
	return mfs_buf_add(b, &q, 1);
}

static int repr(struct mfs_buf *b, uint64_t max, const struct pk *pk, uint32_t v, uint32_t depth);

static int seq(struct mfs_buf *b, uint64_t max, const struct pk *pk, const struct pk_val *x,
	       uint32_t depth);

static bool builtin(const struct pk *pk, uint32_t g, const char *name)
{
	return pk_is_global(pk, g, "builtins", name) || pk_is_global(pk, g, "__builtin__", name);
}

/* The single argument of call v, or PK_NIL. */
static uint32_t only_arg(const struct pk *pk, uint32_t v, uint32_t n)
{
	const struct pk_val *x = &pk->v[v];
	if (x->kind != PK_CALL || x->b == PK_NIL || pk->v[x->b].kind != PK_TUPLE || pk->v[x->b].n != n)
		return PK_NIL;
	return pk->c[pk->v[x->b].head].v;
}

uint32_t pt_set_call(const struct pk *pk, uint32_t v, uint8_t *kind)
{
	if (v == PK_NIL || pk->v[v].kind != PK_CALL || pk->v[v].n || pk->v[v].ln || pk->v[v].c != PK_NIL)
		return PK_NIL;
	bool set = builtin(pk, pk->v[v].a, "set"), fs = !set && builtin(pk, pk->v[v].a, "frozenset");
	uint32_t l = set || fs ? only_arg(pk, v, 1) : PK_NIL;
	if (l == PK_NIL || pk->v[l].kind != PK_LIST)
		return PK_NIL;
	*kind = set ? PK_SET : PK_FROZENSET;
	return l;
}

uint32_t pt_bytes_call(const struct pk *pk, uint32_t v)
{
	if (v == PK_NIL || pk->v[v].kind != PK_CALL || pk->v[v].n || pk->v[v].ln || pk->v[v].c != PK_NIL)
		return PK_NIL;
	uint32_t t = pk->v[v].b;
	if (builtin(pk, pk->v[v].a, "bytes"))  /* b'': bytes() */
		return t != PK_NIL && pk->v[t].kind == PK_TUPLE && pk->v[t].n == 0 ? t : PK_NIL;
	if (!pk_is_global(pk, pk->v[v].a, "_codecs", "encode"))
		return PK_NIL;
	uint32_t s = only_arg(pk, v, 2);
	if (s == PK_NIL)
		return PK_NIL;
	const struct pk_val *a = &pk->v[pk->v[v].b];
	uint32_t enc = pk->c[pk->c[a->head].next].v;
	const struct pk_val *e = &pk->v[enc];
	if (pk->v[s].kind != PK_STR || e->kind != PK_STR || e->u.s.len != 6 ||
	    memcmp(pk_bytes(pk, e), "latin1", 6))
		return PK_NIL;
	return s;
}

int pt_bytes_of_call(struct mfs_buf *b, const struct pk *pk, uint32_t s)
{
	if (pk->v[s].kind != PK_STR)
		return 0;  /* bytes(): b'' */
	return pt_latin1(b, pk_bytes(pk, &pk->v[s]), (size_t)pk->v[s].u.s.len);
}

int pt_latin1(struct mfs_buf *b, const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		size_t u = s[i] < 0x80 ? 1 : mfs_utf8_char(s + i, n - i);
		if (!u || u > 2)
			return -EINVAL;
		uint8_t c = u == 1 ? s[i] : (uint8_t)((s[i] & 0x1f) << 6 | (s[i + 1] & 0x3f));
		if (mfs_buf_add(b, &c, 1) < 0)
			return -ENOMEM;
		i += u;
	}
	return 0;
}

/* A protocol 2 set or bytes call written as its literal; 1 when v is
 * neither. */
static int builtin_call(struct mfs_buf *b, uint64_t max, const struct pk *pk, uint32_t v,
			uint32_t depth)
{
	uint8_t kind;
	uint32_t l = pt_set_call(pk, v, &kind);
	if (l != PK_NIL) {
		struct pk_val as = pk->v[l];
		as.kind = kind;
		return seq(b, max, pk, &as, depth);
	}
	uint32_t s = pt_bytes_call(pk, v);
	if (s == PK_NIL)
		return 1;
	struct mfs_buf raw = {0};
	int r = pt_bytes_of_call(&raw, pk, s);
	if (r == 0)
		r = pt_repr_str(b, raw.p ? (const uint8_t *)raw.p : (const uint8_t *)"", raw.len, true);
	mfs_buf_free(&raw);
	return r;
}

/* Elements from cell c, separated by ", " (pairs as "k: v" when dict). */
static int elems(struct mfs_buf *b, uint64_t max, const struct pk *pk, uint32_t c, bool dict, uint32_t depth)
{
	for (bool first = true; c != PK_NIL; c = pk->c[c].next, first = false) {
		int r = first ? 0 : add(b, ", ");
		if (r == 0)
			r = repr(b, max, pk, pk->c[c].v, depth + 1);
		if (r == 0 && dict && pk->c[c].next != PK_NIL) {
			c = pk->c[c].next;
			if ((r = add(b, ": ")) == 0)
				r = repr(b, max, pk, pk->c[c].v, depth + 1);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static int seq(struct mfs_buf *b, uint64_t max, const struct pk *pk, const struct pk_val *x, uint32_t depth)
{
	static const char *const open[] = {[PK_TUPLE] = "(", [PK_LIST] = "[", [PK_SET] = "{",
					   [PK_FROZENSET] = "frozenset({", [PK_DICT] = "{"};
	static const char *const close[] = {[PK_TUPLE] = ")", [PK_LIST] = "]", [PK_SET] = "}",
					    [PK_FROZENSET] = "})", [PK_DICT] = "}"};
	if (!x->n && (x->kind == PK_SET || x->kind == PK_FROZENSET))
		return add(b, x->kind == PK_SET ? "set()" : "frozenset()");
	int r = add(b, open[x->kind]);
	if (r == 0)
		r = elems(b, max, pk, x->head, x->kind == PK_DICT, depth);
	if (r == 0 && x->kind == PK_TUPLE && x->n == 1)
		r = add(b, ",");
	return r < 0 ? r : add(b, close[x->kind]);
}

/* A number's text (a frame of its own: the buffer is large). */
static __attribute__((noinline)) int number(struct mfs_buf *b, const struct pk *pk,
					    const struct pk_val *x)
{
	char num[4096 * 3 + 8];
	size_t n = x->kind == PK_FLOAT ? pk_float_repr(x->u.f, num) : pk_int_text(pk, x, num, sizeof(num));
	return n ? mfs_buf_add(b, num, n) : -EINVAL;
}

static int repr(struct mfs_buf *b, uint64_t max, const struct pk *pk, uint32_t v, uint32_t depth)
{
	if (depth > REPR_DEPTH_MAX || b->len > max)
		return -EINVAL;
	if (v == PK_NIL)
		return add(b, "None");
	const struct pk_val *x = &pk->v[v];
	switch (x->kind) {
	case PK_NONE: return add(b, "None");
	case PK_BOOL: case PK_INT: case PK_LONG: case PK_FLOAT:
		return number(b, pk, x);
	case PK_STR: case PK_BYTES:
		return pt_repr_str(b, pk_bytes(pk, x), (size_t)x->u.s.len, x->kind == PK_BYTES);
	case PK_TUPLE: case PK_LIST: case PK_SET: case PK_FROZENSET: case PK_DICT:
		return seq(b, max, pk, x, depth);
	case PK_GLOBAL: {
		const struct pk_val *mo = &pk->v[x->a], *nm = &pk->v[x->b];
		int r = mfs_buf_add(b, pk_bytes(pk, mo), (size_t)mo->u.s.len);
		if (r == 0)
			r = add(b, ".");
		return r < 0 ? r : mfs_buf_add(b, pk_bytes(pk, nm), (size_t)nm->u.s.len);
	}
	case PK_CALL: {
		int r = builtin_call(b, max, pk, v, depth);
		if (r != 1)
			return r;
		r = repr(b, max, pk, x->a, depth + 1);
		if (r == 0)
			r = repr(b, max, pk, x->b, depth + 1);
		return r;
	}
	case PK_PERSID: {
		int r = add(b, "persistent_id(");
		if (r == 0)
			r = repr(b, max, pk, x->a, depth + 1);
		return r < 0 ? r : add(b, ")");
	}
	default: return -EINVAL;
	}
}

int pt_repr(struct pt_repr *rp, const struct pk *pk, uint32_t v, const char **s, size_t *n,
	    struct mfs_err *err)
{
	rp->b.len = 0;
	int r = repr(&rp->b, rp->budget, pk, v, 0);
	if (r == -ENOMEM)
		return mfs_error(err, ENOMEM, "out of memory");
	if (r < 0)
		return mfs_error(err, EINVAL, "a value nested deeper than %u, an int of more than 4096 bytes, or more than %llu bytes of text in all",
				 REPR_DEPTH_MAX, (unsigned long long)rp->budget);
	if (rp->b.len > rp->budget)
		return mfs_error(err, EINVAL, "the pickle's values make more than %llu bytes of text",
				 (unsigned long long)rp->budget);
	rp->budget -= rp->b.len;
	*s = rp->b.p ? rp->b.p : "";
	*n = rp->b.len;
	return 0;
}
