/* The pickle reader's structural opcodes: marks and the stack, the memo,
 * tuples, lists, dicts, sets, globals, calls (REDUCE, NEWOBJ, INST, OBJ:
 * inert nodes, nothing is called) with BUILD, and persistent ids. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "numtext.h"
#include "bytes.h"
#include "pickle_impl.h"

/* Append value x to the cell list (*head, *tail, *n) of a container. */
static int cell_add(struct pk_parser *ps, uint32_t owner, int list, uint32_t x)
{
	struct pk *pk = ps->pk;
	if (pk_reserve(ps, &pk->c, pk->nc, &pk->capc, 1, sizeof(*pk->c)) < 0)
		return pk_nomem(ps);
	uint32_t c = pk->nc++;
	pk->c[c] = (struct pk_cell){x, PK_NIL};
	struct pk_val *o = &pk->v[owner];
	uint32_t *head = list ? &o->lhead : &o->head, *tail = list ? &o->ltail : &o->tail;
	if (*tail == PK_NIL)
		*head = c;
	else
		pk->c[*tail].next = c;
	*tail = c;
	if (list)
		o->ln++;
	else
		o->n++;
	/* The container's span reaches the opcode that filled it. */
	if (ps->pos > o->off + o->len)
		o->len = ps->pos - o->off;
	return 0;
}

/* Items stack[from, nstack) into owner's cells, then off the stack. */
static int cells_from(struct pk_parser *ps, uint32_t owner, int list, size_t from)
{
	for (size_t k = from; k < ps->nstack; k++) {
		int r = cell_add(ps, owner, list, ps->stack[k]);
		if (r < 0)
			return r;
	}
	ps->nstack = from;
	return 0;
}

/* A new container of kind holding the items above the last mark. */
static int from_mark(struct pk_parser *ps, uint8_t kind)
{
	size_t at;
	uint64_t mo;
	int r = pk_pop_mark(ps, &at, &mo);
	if (r < 0)
		return r;
	if (kind == PK_DICT && (ps->nstack - at) % 2)
		return pk_fail(ps, "a dict of an odd number of items");
	uint32_t v = pk_new(ps, kind);
	if (v == PK_NIL)
		return pk_nomem(ps);
	ps->pk->v[v].off = mo;  /* its span: from the MARK on */
	ps->pk->v[v].len = ps->pos - mo;
	if ((r = cells_from(ps, v, 0, at)) < 0)
		return r;
	return pk_push(ps, v);
}

/* TUPLE1/2/3: the top n values. */
static int tuple_n(struct pk_parser *ps, size_t n)
{
	size_t fence = ps->nmarks ? ps->marks[ps->nmarks - 1] : 0;
	if (ps->nstack - fence < n)
		return pk_fail(ps, "a tuple of more values than the stack holds");
	uint32_t v = pk_new(ps, PK_TUPLE);
	if (v == PK_NIL)
		return pk_nomem(ps);
	if (n) {  /* its span: from its first element's opcode on */
		ps->pk->v[v].off = ps->pk->v[ps->stack[ps->nstack - n]].off;
		ps->pk->v[v].len = ps->pos - ps->pk->v[v].off;
	}
	int r = cells_from(ps, v, 0, ps->nstack - n);
	return r < 0 ? r : pk_push(ps, v);
}

/* APPEND(S), SETITEM(S), ADDITEMS: items above the mark (or the top one or
 * two) added to the container below them. */
static int fill(struct pk_parser *ps, bool marked, size_t n)
{
	size_t at;
	if (marked) {
		int r = pk_pop_mark(ps, &at, NULL);
		if (r < 0)
			return r;
	} else {
		size_t fence = ps->nmarks ? ps->marks[ps->nmarks - 1] : 0;
		if (ps->nstack - fence < n + 1)
			return pk_fail(ps, "items added to a missing container");
		at = ps->nstack - n;
	}
	size_t fence = ps->nmarks ? ps->marks[ps->nmarks - 1] : 0;
	if (at == 0 || at - 1 < fence)
		return pk_fail(ps, "items added to a missing container");
	uint32_t owner = ps->stack[at - 1];
	uint8_t k = ps->pk->v[owner].kind;
	bool dict = ps->op == 's' || ps->op == 'u';
	if (dict && (ps->nstack - at) % 2)
		return pk_fail(ps, "SETITEMS of an odd number of items");
	bool ok = dict ? (k == PK_DICT || k == PK_CALL)
		       : ps->op == 0x90 ? k == PK_SET : (k == PK_LIST || k == PK_CALL);
	if (!ok)
		return pk_fail(ps, "items added to a value that is not a container of their kind");
	return cells_from(ps, owner, !dict && k == PK_CALL, at);
}

/* ---- memo ---------------------------------------------------------------- */

static size_t memo_slot(const struct pk_memo *m, uint32_t key)
{
	size_t h = (size_t)(key * 2654435761u) & (m->cap - 1);
	while (m->vals[h] != PK_NIL && m->keys[h] != key)
		h = (h + 1) & (m->cap - 1);
	return h;
}

static int memo_grow(struct pk_memo *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64;
	uint32_t *keys = malloc(cap * sizeof(*keys)), *vals = malloc(cap * sizeof(*vals));
	if (!keys || !vals) {
		free(keys);
		free(vals);
		return -ENOMEM;
	}
	memset(vals, 0xff, cap * sizeof(*vals));
	struct pk_memo nm = {keys, vals, cap, m->n};
	for (size_t i = 0; i < m->cap; i++)
		if (m->vals[i] != PK_NIL) {
			size_t h = memo_slot(&nm, m->keys[i]);
			keys[h] = m->keys[i];
			vals[h] = m->vals[i];
		}
	free(m->keys);
	free(m->vals);
	*m = nm;
	return 0;
}

static int memo_put(struct pk_parser *ps, uint64_t key)
{
	uint32_t v;
	int r = pk_top(ps, &v);
	if (r < 0)
		return r;
	if (key >= PK_NIL)
		return pk_fail(ps, "a memo index beyond 2^32 - 2");
	struct pk_memo *m = &ps->memo;
	if ((m->n + 1) * 2 > m->cap && memo_grow(m) < 0)
		return pk_nomem(ps);
	size_t h = memo_slot(m, (uint32_t)key);
	if (m->vals[h] == PK_NIL)
		m->n++;
	m->keys[h] = (uint32_t)key;
	m->vals[h] = v;
	return 0;
}

static int memo_get(struct pk_parser *ps, uint64_t key)
{
	struct pk_memo *m = &ps->memo;
	size_t h = m->cap && key < PK_NIL ? memo_slot(m, (uint32_t)key) : 0;
	if (!m->cap || key >= PK_NIL || m->vals[h] == PK_NIL)
		return pk_fail(ps, "a memo index that was never put");
	uint32_t v = m->vals[h];
	uint8_t k = ps->pk->v[v].kind;
	ps->pk->v[v].flags |= PK_F_SHARED;
	if (k == PK_GLOBAL || k == PK_CALL || k == PK_PERSID || (k > PK_TUPLE && k <= PK_FROZENSET))
		return pk_push(ps, v);  /* one object, shared (containers may still grow) */
	/* A scalar or a tuple (complete once built): a copy of its own,
	 * spanning the GET, so that an edit of one place leaves the others
	 * (pk_val.a: the value first pushed; a tuple's copy holds its cells). */
	uint32_t c = pk_new(ps, k);
	if (c == PK_NIL)
		return pk_nomem(ps);
	struct pk_val *cv = &ps->pk->v[c], *ov = &ps->pk->v[v];
	cv->flags = ov->flags | PK_F_GOT;
	cv->u = ov->u;
	cv->n = ov->n, cv->head = ov->head, cv->tail = ov->tail;
	cv->a = (ov->flags & PK_F_GOT) ? ov->a : v;
	return pk_push(ps, c);
}

/* The argument of GET/PUT (decimal text) or BINGET/LONG_BINGET... */
static int memo_key(struct pk_parser *ps, uint64_t *key)
{
	const uint8_t *s;
	size_t n;
	switch (ps->op) {
	case 'g': case 'p': {
		int r = pk_line(ps, &s, &n);
		if (r < 0)
			return r;
		int64_t i;
		if (!n || n > 12 || mfs_parse_i64((const char *)s, n, 0, INT64_MAX, &i) < 0)
			return pk_fail(ps, "a memo index that is not a number");
		*key = (uint64_t)i;
		return 0;
	}
	case 'h': case 'q': n = 1; break;
	case 'j': case 'r': n = 4; break;
	default: *key = ps->memo.n; return 0;  /* MEMOIZE */
	}
	if (n > ps->avail - ps->pos)
		return pk_fail(ps, "truncated opcode argument");
	s = ps->pk->p + ps->pos;
	ps->pos += n;
	*key = n == 1 ? s[0] : mfs_le32(s);
	return 0;
}

static int op_memo(struct pk_parser *ps)
{
	uint64_t key = 0;
	int r = memo_key(ps, &key);
	if (r < 0)
		return r;
	bool get = ps->op == 'g' || ps->op == 'h' || ps->op == 'j';
	return get ? memo_get(ps, key) : memo_put(ps, key);
}

/* ---- globals, calls, persistent ids --------------------------------------- */

static uint32_t str_val(struct pk_parser *ps, const uint8_t *s, size_t n)
{
	uint32_t v = pk_new(ps, PK_STR);
	if (v != PK_NIL)
		ps->pk->v[v].u.s.off = (uint64_t)(s - ps->pk->p), ps->pk->v[v].u.s.len = n;
	return v;
}

static uint32_t global_of(struct pk_parser *ps, uint32_t module, uint32_t name)
{
	uint32_t g = module == PK_NIL || name == PK_NIL ? PK_NIL : pk_new(ps, PK_GLOBAL);
	if (g != PK_NIL)
		ps->pk->v[g].a = module, ps->pk->v[g].b = name;
	return g;
}

/* GLOBAL and INST name the global in two lines: module, then name. */
static int two_lines(struct pk_parser *ps, uint32_t *g)
{
	const uint8_t *a, *b;
	size_t na, nb;
	int r = pk_line(ps, &a, &na);
	if (r < 0 || (r = pk_line(ps, &b, &nb)) < 0)
		return r;
	uint32_t m = str_val(ps, a, na), n = str_val(ps, b, nb);
	*g = global_of(ps, m, n);
	return *g == PK_NIL ? pk_nomem(ps) : 0;
}

static int stack_global(struct pk_parser *ps)
{
	uint32_t m, n;
	int r = pk_pop(ps, &n);
	if (r < 0 || (r = pk_pop(ps, &m)) < 0)
		return r;
	if (ps->pk->v[m].kind != PK_STR || ps->pk->v[n].kind != PK_STR)
		return pk_fail(ps, "STACK_GLOBAL of values that are not strings");
	return pk_push(ps, global_of(ps, m, n));
}

static uint32_t call_of(struct pk_parser *ps, uint32_t callable, uint32_t args)
{
	uint32_t v = pk_new(ps, PK_CALL);
	if (v != PK_NIL)
		ps->pk->v[v].a = callable, ps->pk->v[v].b = args;
	return v;
}

/* REDUCE, NEWOBJ (callable, args), NEWOBJ_EX (cls, args, kwargs: the
 * keywords are dropped, as nothing is called). */
static int op_call(struct pk_parser *ps)
{
	uint32_t c, a, kw;
	int r = 0;
	if (ps->op == 0x92)
		r = pk_pop(ps, &kw);
	if (r < 0 || (r = pk_pop(ps, &a)) < 0 || (r = pk_pop(ps, &c)) < 0)
		return r;
	return pk_push(ps, call_of(ps, c, a));
}

/* INST (global in two lines) and OBJ (the class first): a call of the
 * items above the mark, made a tuple. */
static int op_inst(struct pk_parser *ps)
{
	uint32_t cls = PK_NIL;
	int r = ps->op == 'i' ? two_lines(ps, &cls) : 0;
	size_t at;
	if (r < 0 || (r = pk_pop_mark(ps, &at, NULL)) < 0)
		return r;
	if (ps->op == 'o') {
		if (at == ps->nstack)
			return pk_fail(ps, "OBJ without a class");
		cls = ps->stack[at++];
	}
	uint32_t args = pk_new(ps, PK_TUPLE);
	if (args == PK_NIL || (r = cells_from(ps, args, 0, at)) < 0)
		return args == PK_NIL ? pk_nomem(ps) : r;
	if (ps->op == 'o')
		ps->nstack--;  /* the class, below the arguments */
	return pk_push(ps, call_of(ps, cls, args));
}

static int op_build(struct pk_parser *ps)
{
	uint32_t st, obj;
	int r = pk_pop(ps, &st);
	if (r < 0 || (r = pk_top(ps, &obj)) < 0)
		return r;
	struct pk_val *o = &ps->pk->v[obj];
	if (o->kind != PK_CALL)
		return pk_fail(ps, "BUILD of a value that is not an object");
	o->c = st;
	return 0;
}

static int op_persid(struct pk_parser *ps)
{
	uint32_t id;
	int r = 0;
	if (ps->op == 'P') {
		const uint8_t *s;
		size_t n;
		if ((r = pk_line(ps, &s, &n)) < 0)
			return r;
		id = str_val(ps, s, n);
		if (id == PK_NIL)
			return pk_nomem(ps);
	} else if ((r = pk_pop(ps, &id)) < 0) {
		return r;
	}
	uint32_t v = pk_new(ps, PK_PERSID);
	if (v != PK_NIL)
		ps->pk->v[v].a = id;
	return pk_push(ps, v);
}

/* ---- the stack ------------------------------------------------------------ */

static int op_mark(struct pk_parser *ps)
{
	if (ps->nmarks == PK_MAX_MARKS)
		return pk_fail(ps, "marks nested deeper than 1000");
	ps->mark_off[ps->nmarks] = ps->op_off;
	ps->marks[ps->nmarks++] = ps->nstack;
	return 0;
}

/* POP: the top value, or the mark when nothing is above it (as CPython). */
static int op_pop(struct pk_parser *ps)
{
	size_t fence = ps->nmarks ? ps->marks[ps->nmarks - 1] : 0;
	if (ps->nmarks && ps->nstack == fence) {
		ps->nmarks--;
		return 0;
	}
	uint32_t v;
	return pk_pop(ps, &v);
}

static int op_pop_mark(struct pk_parser *ps)
{
	size_t at;
	int r = pk_pop_mark(ps, &at, NULL);
	if (r == 0)
		ps->nstack = at;
	return r;
}

static int op_dup(struct pk_parser *ps)
{
	uint32_t v;
	int r = pk_top(ps, &v);
	return r < 0 ? r : pk_push(ps, v);
}

int pk_op_struct(struct pk_parser *ps)
{
	uint32_t g;
	int r;
	switch (ps->op) {
	case '(': return op_mark(ps);
	case '0': return op_pop(ps);
	case '1': return op_pop_mark(ps);
	case '2': return op_dup(ps);
	case ')': return pk_push(ps, pk_new(ps, PK_TUPLE));
	case 't': return from_mark(ps, PK_TUPLE);
	case 0x85: return tuple_n(ps, 1);
	case 0x86: return tuple_n(ps, 2);
	case 0x87: return tuple_n(ps, 3);
	case ']': return pk_push(ps, pk_new(ps, PK_LIST));
	case 'l': return from_mark(ps, PK_LIST);
	case 'a': return fill(ps, false, 1);
	case 'e': return fill(ps, true, 0);
	case '}': return pk_push(ps, pk_new(ps, PK_DICT));
	case 'd': return from_mark(ps, PK_DICT);
	case 's': return fill(ps, false, 2);
	case 'u': return fill(ps, true, 0);
	case 0x8f: return pk_push(ps, pk_new(ps, PK_SET));
	case 0x90: return fill(ps, true, 0);
	case 0x91: return from_mark(ps, PK_FROZENSET);
	case 'g': case 'h': case 'j': case 'p': case 'q': case 'r': case 0x94:
		return op_memo(ps);
	case 'c':
		r = two_lines(ps, &g);
		return r < 0 ? r : pk_push(ps, g);
	case 0x93: return stack_global(ps);
	case 'R': case 0x81: case 0x92: return op_call(ps);
	case 'i': case 'o': return op_inst(ps);
	case 'b': return op_build(ps);
	case 'P': case 'Q': return op_persid(ps);
	case 0x98: return pk_top(ps, &g);  /* READONLY_BUFFER: nothing to do */
	case 0x97: return pk_fail(ps, "an out-of-band buffer (NEXT_BUFFER), which a file cannot hold");
	case 0x82: case 0x83: case 0x84:
		return pk_fail(ps, "an extension code (EXT1/2/4), which names a global registered at run time");
	default: return 1;
	}
}

void pk_parser_free(struct pk_parser *ps)
{
	free(ps->stack);
	free(ps->memo.keys);
	free(ps->memo.vals);
}
