/* PLearn value syntax (plearn_ascii and plearn_binary, mixed freely) into a
 * value tree: objects, pointers, sequences, matrices, maps, pairs, strings,
 * numbers and binary values, each with its exact span in the text. The
 * numbers of all-number sequences are indexed, not given nodes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bisect.h"
#include "bytes.h"
#include "plearn.h"

/* Where a list of items ends. */
enum list_end {
	END_BRACKET,  /* ']' (consumed) */
	END_PAREN,    /* ')' (consumed) */
	END_OPTION,   /* before ';' ',' ')' or the next "name =" */
	END_MAPVAL,   /* before ';' ',' '}' */
	END_TEXT,     /* the end of the text; no closer may appear */
};

static int item(struct plearn_parser *p, uint32_t *out);

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

static int nomem(struct plearn_parser *p)
{
	return mfs_error(p->err, ENOMEM, "out of memory");
}

/* Blanks and '#' comments from q on, and the separators ';' ',' when seps. */
static uint64_t skip_at(const struct plearn_parser *p, uint64_t q, bool seps, bool *open_comment)
{
	while (q < p->n) {
		uint8_t c = p->b[q];
		if (plearn_blank(c) || (seps && (c == ';' || c == ','))) {
			q++;
		} else if (c == '#') {
			const uint8_t *nl = memchr(p->b + q, '\n', (size_t)(p->n - q));
			if (!nl) {
				if (open_comment)
					*open_comment = true;
				return p->n;
			}
			q = (uint64_t)(nl - p->b) + 1;
		} else {
			break;
		}
	}
	return q;
}

void plearn_skip(struct plearn_parser *p, bool seps)
{
	p->pos = skip_at(p, p->pos, seps, &p->a->open_comment);
}

int plearn_new_val(struct plearn_parser *p, enum plearn_kind kind, uint64_t off, uint32_t *out)
{
	struct plearn_ast *a = p->a;
	if (a->nv == a->capv) {
		if (a->capv >= PLEARN_NIL / 4)
			return mfs_error(p->err, EFBIG, "too many values");
		size_t cap = a->capv;
		if (MFS_ARRAY_RESERVE(a->v, a->nv, cap, 1, 256) < 0)
			return nomem(p);
		a->capv = (uint32_t)cap;  /* < PLEARN_NIL / 2 */
	}
	struct plearn_val *v = &a->v[a->nv];
	memset(v, 0, sizeof(*v));
	v->kind = (uint8_t)kind;
	v->first = v->next = PLEARN_NIL;
	v->off = off;
	*out = a->nv++;
	return 0;
}

static int push_num(struct plearn_parser *p, uint64_t off)
{
	struct plearn_ast *a = p->a;
	if (a->nnum == a->capnum) {
		size_t cap = (size_t)a->capnum;
		if (MFS_ARRAY_RESERVE(a->num, (size_t)a->nnum, cap, 1, 1024) < 0)
			return nomem(p);
		a->capnum = cap;
	}
	a->num[a->nnum++] = off;
	return 0;
}

static uint64_t end_of(const struct plearn_ast *a, uint32_t i)
{
	return a->v[i].off + a->v[i].len;
}

void plearn_add_kid(struct plearn_ast *a, struct plearn_kids *k, uint32_t i)
{
	if (k->last == PLEARN_NIL)
		k->first = i;
	else
		a->v[k->last].next = i;
	k->last = i;
	k->count++;
}

static int num_node(struct plearn_parser *p, uint64_t off, uint64_t len, uint32_t *out)
{
	int r = plearn_new_val(p, PLEARN_V_NUM, off, out);
	if (!r)
		p->a->v[*out].len = len;
	return r;
}

/* A sequence that meets its first item other than a plain number: give
 * the numbers indexed so far their own nodes. */
static int materialize(struct plearn_parser *p, uint32_t seq, struct plearn_kids *k)
{
	struct plearn_ast *a = p->a;
	uint64_t base = a->v[seq].c;
	for (uint64_t i = base; i < a->nnum; i++) {
		uint32_t x;
		uint64_t off = a->num[i];
		int r = num_node(p, off, plearn_scan_number(p->b, p->n, off, NULL), &x);
		if (r)
			return r;
		plearn_add_kid(a, k, x);
	}
	a->nnum = base;
	a->v[seq].flags &= (uint8_t)~PLEARN_VF_NUMERIC;
	return 0;
}

static bool digits_value(const uint8_t *s, uint64_t len, uint64_t *out)
{
	uint64_t v = 0;
	for (uint64_t i = 0; i < len; i++)
		if (!mfs_mul_ok(v, 10, &v) || !mfs_add_ok(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	*out = v;
	return true;
}

enum numshape { NS_NONE, NS_NUM, NS_SEQ, NS_MAT };

struct numhead {
	uint64_t len;          /* the first number token */
	uint64_t dims[2];      /* NS_SEQ: N; NS_MAT: L W (UINT64_MAX if too large) */
	uint64_t bracket;      /* offset of the '[' */
};

/* What the number at pos starts: a plain number, "N [" (a sequence) or
 * "L W [" (a matrix), told apart by looking ahead. */
static enum numshape number_shape(const struct plearn_parser *p, struct numhead *h)
{
	bool isint, isint2;
	uint64_t l = plearn_scan_number(p->b, p->n, p->pos, &isint);
	h->len = l;
	if (!l)
		return NS_NONE;
	if (!isint)
		return NS_NUM;
	uint64_t q = skip_at(p, p->pos + l, false, NULL);
	if (q >= p->n)
		return NS_NUM;
	if (p->b[q] == '[') {
		if (!digits_value(p->b + p->pos, l, &h->dims[0]))
			h->dims[0] = UINT64_MAX;
		h->bracket = q;
		return NS_SEQ;
	}
	uint64_t l2 = plearn_scan_number(p->b, p->n, q, &isint2);
	if (!l2 || !isint2)
		return NS_NUM;
	uint64_t q2 = skip_at(p, q + l2, false, NULL);
	if (q2 >= p->n || p->b[q2] != '[')
		return NS_NUM;
	if (!digits_value(p->b + p->pos, l, &h->dims[0]))
		h->dims[0] = UINT64_MAX;
	if (!digits_value(p->b + q, l2, &h->dims[1]))
		h->dims[1] = UINT64_MAX;
	h->bracket = q2;
	return NS_MAT;
}

int plearn_parse_item(struct plearn_parser *p, uint32_t *out)
{
	if (p->depth >= PLEARN_MAX_DEPTH)
		return mfs_error(p->err, EINVAL, "values nested deeper than %d levels at offset %llu",
				 PLEARN_MAX_DEPTH, ull(p->pos));
	p->depth++;
	int r = item(p, out);
	p->depth--;
	return r;
}

/* Bytes of an option name ("name =") at q: no blanks, no punctuation. */
static uint64_t name_len(const struct plearn_parser *p, uint64_t q)
{
	uint64_t s = q;
	while (q < p->n && p->b[q] > 0x20 && p->b[q] != 0x7f &&
	       !strchr("(){}\",;#=|", p->b[q]))
		q++;
	return q - s;
}

static bool next_is_option_name(const struct plearn_parser *p)
{
	uint64_t l = name_len(p, p->pos);
	if (!l)
		return false;
	uint64_t q = skip_at(p, p->pos + l, false, NULL);
	return q < p->n && p->b[q] == '=';
}

static int list_closer(enum list_end end, uint8_t c)
{
	switch (end) {
	case END_BRACKET:
		return c == ']';
	case END_PAREN:
		return c == ')';
	case END_OPTION:
		return c == ';' || c == ',' || c == ')';
	case END_MAPVAL:
		return c == ';' || c == ',' || c == '}';
	case END_TEXT:
		break;
	}
	return 0;
}

/* Add the last item read to the list: a plain number (pend == PLEARN_NIL) is
 * indexed while the parent holds only numbers, else it gets a node. */
static int flush(struct plearn_parser *p, uint32_t parent, struct plearn_kids *k, uint32_t pend,
		 uint64_t pnum, uint64_t pnum_len)
{
	int r = 0;
	if (pend == PLEARN_NIL && parent != PLEARN_NIL && (p->a->v[parent].flags & PLEARN_VF_NUMERIC))
		return push_num(p, pnum);
	if (pend == PLEARN_NIL)
		r = num_node(p, pnum, pnum_len, &pend);
	if (!r)
		plearn_add_kid(p->a, k, pend);
	return r;
}

/* Items up to the end of a list. When parent is a sequence that still has
 * PLEARN_VF_NUMERIC, plain numbers are indexed; the first other item ends that.
 * Old-style pairs "a : b" become PLEARN_V_PAIR items. */
static int parse_list(struct plearn_parser *p, uint32_t parent, enum list_end end, struct plearn_kids *k)
{
	struct plearn_ast *a = p->a;
	bool seps = end == END_BRACKET || end == END_PAREN;
	uint64_t open = p->pos ? p->pos - 1 : 0;
	uint32_t pend = PLEARN_NIL;       /* the last item, not yet added: a ':' may follow */
	uint64_t pnum = 0, pnum_len = 0;
	bool has_pend = false;
	int r = 0;
	k->first = k->last = PLEARN_NIL;
	k->count = 0;
	for (;;) {
		plearn_skip(p, seps);
		if (p->pos >= p->n) {
			if (end == END_BRACKET || end == END_PAREN)
				return mfs_error(p->err, EINVAL,
						 "'%c' at offset %llu is never closed: expected '%c', found the end at offset %llu",
						 end == END_BRACKET ? '[' : '(', ull(open),
						 end == END_BRACKET ? ']' : ')', ull(p->n));
			break;
		}
		uint8_t c = p->b[p->pos];
		if (list_closer(end, c)) {
			if (end == END_BRACKET || end == END_PAREN)
				p->pos++;
			break;
		}
		if (end == END_OPTION && has_pend && next_is_option_name(p))
			break;
		bool numeric = parent != PLEARN_NIL && (a->v[parent].flags & PLEARN_VF_NUMERIC);
		if (c == ':') {
			if (!has_pend)
				return mfs_error(p->err, EINVAL, "':' with no value before it at offset %llu",
						 ull(p->pos));
			if (numeric && (r = materialize(p, parent, k)))
				return r;
			if (pend == PLEARN_NIL && (r = num_node(p, pnum, pnum_len, &pend)))
				return r;
			p->pos++;
			plearn_skip(p, false);
			uint32_t right, pair;
			if ((r = plearn_parse_item(p, &right)) || (r = plearn_new_val(p, PLEARN_V_PAIR, a->v[pend].off, &pair)))
				return r;
			a->v[pair].first = pend;
			a->v[pend].next = right;
			a->v[pair].len = end_of(a, right) - a->v[pair].off;
			pend = pair;
			continue;
		}
		/* The previous item is complete: add it. */
		if (has_pend && (r = flush(p, parent, k, pend, pnum, pnum_len)))
			return r;
		has_pend = false;
		struct numhead h;
		if (numeric && number_shape(p, &h) == NS_NUM) {
			pend = PLEARN_NIL;
			pnum = p->pos;
			pnum_len = h.len;
			p->pos += h.len;
			has_pend = true;
			continue;
		}
		if (numeric && (r = materialize(p, parent, k)))
			return r;
		if ((r = plearn_parse_item(p, &pend)))
			return r;
		has_pend = true;
	}
	if (has_pend && (r = flush(p, parent, k, pend, pnum, pnum_len)))
		return r;
	if (parent != PLEARN_NIL)
		a->v[parent].first = k->first;
	return 0;
}

/* One value written as items up to the end of an option, a map value or
 * the text: one item is itself, several make a PLEARN_V_MULTI, none a PLEARN_V_EMPTY. */
static int parse_value(struct plearn_parser *p, enum list_end end, uint32_t *out)
{
	struct plearn_ast *a = p->a;
	uint64_t at = p->pos;
	struct plearn_kids k;
	int r = parse_list(p, PLEARN_NIL, end, &k);
	if (r)
		return r;
	if (k.count == 1) {
		*out = k.first;
		return 0;
	}
	if ((r = plearn_new_val(p, k.count ? PLEARN_V_MULTI : PLEARN_V_EMPTY, k.count ? a->v[k.first].off : at, out)))
		return r;
	a->v[*out].first = k.first;
	if (k.count)
		a->v[*out].len = end_of(a, k.last) - a->v[*out].off;
	return 0;
}

static int sequence(struct plearn_parser *p, uint64_t at, enum plearn_kind kind, const uint64_t *dims,
		    uint32_t *out)
{
	struct plearn_ast *a = p->a;
	int r = plearn_new_val(p, kind, at, out);
	if (r)
		return r;
	struct plearn_val *v = &a->v[*out];
	v->a = dims ? dims[0] : PLEARN_NOLEN;
	v->b = kind == PLEARN_V_MAT ? dims[1] : 0;
	v->flags = PLEARN_VF_NUMERIC;
	v->c = a->nnum;
	p->pos++;  /* '[' */
	struct plearn_kids k;
	if ((r = parse_list(p, *out, END_BRACKET, &k)))
		return r;
	v = &a->v[*out];
	if (v->flags & PLEARN_VF_NUMERIC)
		v->d = a->nnum - v->c;
	v->len = p->pos - at;
	return 0;
}

static int pointer(struct plearn_parser *p, uint32_t *out)
{
	struct plearn_ast *a = p->a;
	uint64_t at = p->pos++;
	uint64_t id = 0;
	int r;
	plearn_skip(p, true);
	if (p->pos < p->n && p->b[p->pos] >= '0' && p->b[p->pos] <= '9') {
		uint64_t l = 0;
		while (p->pos + l < p->n && p->b[p->pos + l] >= '0' && p->b[p->pos + l] <= '9')
			l++;
		if (!digits_value(p->b + p->pos, l, &id) || id > UINT32_MAX)
			return mfs_error(p->err, EINVAL, "bad pointer number after '*' at offset %llu",
					 ull(at));
		p->pos += l;
	} else if (p->pos < p->n && plearn_bin_size(p->b[p->pos])) {
		if ((r = plearn_parse_bin_id(p, at, &id)))
			return r;
	} else {
		return mfs_error(p->err, EINVAL, "expected a pointer number after '*' at offset %llu",
				 ull(at));
	}
	uint64_t idend = p->pos;
	if (id == 0) {
		if ((r = plearn_new_val(p, PLEARN_V_NULL, at, out)))
			return r;
		a->v[*out].len = idend - at;
		return 0;
	}
	plearn_skip(p, true);
	if (p->pos < p->n && p->b[p->pos] == '-') {
		if (p->pos + 1 >= p->n || p->b[p->pos + 1] != '>')
			return mfs_error(p->err, EINVAL, "expected '->' after '*%llu' at offset %llu",
					 ull(id), ull(p->pos));
		p->pos += 2;
		plearn_skip(p, true);
		if ((r = plearn_new_val(p, PLEARN_V_DEF, at, out)))
			return r;
		if (a->ndefs == a->capdefs) {
			size_t cap = a->capdefs;  /* ndefs <= nv < PLEARN_NIL / 2 */
			if (MFS_ARRAY_RESERVE(a->defs, a->ndefs, cap, 1, 64) < 0)
				return nomem(p);
			a->capdefs = (uint32_t)cap;
		}
		a->defs[a->ndefs++] = *out;
		uint32_t kid;
		if ((r = plearn_parse_item(p, &kid)))
			return r;
		a->v[*out].a = id;
		a->v[*out].first = kid;
		a->v[*out].c = MFS_NONE;
		a->v[*out].len = end_of(a, kid) - at;
		return 0;
	}
	p->pos = idend;
	if ((r = plearn_new_val(p, PLEARN_V_REF, at, out)))
		return r;
	a->v[*out].a = id;
	a->v[*out].b = PLEARN_NIL;
	a->v[*out].len = idend - at;
	return 0;
}

static int map(struct plearn_parser *p, uint32_t *out)
{
	struct plearn_ast *a = p->a;
	uint64_t at = p->pos++;
	struct plearn_kids k = {PLEARN_NIL, PLEARN_NIL, 0};
	int r = plearn_new_val(p, PLEARN_V_MAP, at, out);
	if (r)
		return r;
	for (;;) {
		plearn_skip(p, true);
		if (p->pos >= p->n)
			return mfs_error(p->err, EINVAL,
					 "'{' at offset %llu is never closed: expected '}', found the end at offset %llu",
					 ull(at), ull(p->n));
		if (p->b[p->pos] == '}') {
			p->pos++;
			break;
		}
		uint32_t key, val, pair;
		if ((r = plearn_parse_item(p, &key)))
			return r;
		plearn_skip(p, true);
		if (p->pos >= p->n || p->b[p->pos] != ':')
			return mfs_error(p->err, EINVAL, "expected ':' after the map key at offset %llu",
					 ull(a->v[key].off));
		p->pos++;
		plearn_skip(p, true);
		if ((r = parse_value(p, END_MAPVAL, &val)))
			return r;
		if (a->v[val].kind == PLEARN_V_EMPTY)
			return mfs_error(p->err, EINVAL, "map key at offset %llu has no value",
					 ull(a->v[key].off));
		if ((r = plearn_new_val(p, PLEARN_V_PAIR, a->v[key].off, &pair)))
			return r;
		a->v[pair].first = key;
		a->v[key].next = val;
		a->v[pair].len = end_of(a, val) - a->v[pair].off;
		plearn_add_kid(a, &k, pair);
	}
	a->v[*out].first = k.first;
	a->v[*out].len = p->pos - at;
	return 0;
}

/* Class( options ), or TVec( ... ), TMat( ... ), Storage( ... ). p->pos is
 * at the '('; the class name is [at, at + nl). */
static int object(struct plearn_parser *p, uint64_t at, uint64_t nl, uint32_t *out)
{
	struct plearn_ast *a = p->a;
	const uint8_t *name = p->b + at;
	enum plearn_kind kind = PLEARN_V_OBJ;
	int r;
	if (nl == 4 && !memcmp(name, "TVec", 4))
		kind = PLEARN_V_TVEC;
	else if (nl == 4 && !memcmp(name, "TMat", 4))
		kind = PLEARN_V_TMAT;
	else if (nl == 7 && !memcmp(name, "Storage", 7)) {
		uint64_t q = skip_at(p, p->pos + 1, false, NULL);
		if (q < p->n && ((p->b[q] >= '0' && p->b[q] <= '9') || p->b[q] == '[' ||
				 p->b[q] == 0x12 || p->b[q] == 0x13))
			kind = PLEARN_V_STORAGE;
	}
	if ((r = plearn_new_val(p, kind, at, out)))
		return r;
	a->v[*out].a = at;
	a->v[*out].b = nl;
	p->pos++;  /* '(' */
	struct plearn_kids k = {PLEARN_NIL, PLEARN_NIL, 0};
	if (kind != PLEARN_V_OBJ) {
		if ((r = parse_list(p, *out, END_PAREN, &k)))
			return r;
		a->v[*out].len = p->pos - at;
		return 0;
	}
	for (;;) {
		plearn_skip(p, true);
		if (p->pos >= p->n)
			return mfs_error(p->err, EINVAL,
					 "object %.*s at offset %llu is never closed: expected ')', found the end at offset %llu",
					 (int)(nl < 64 ? nl : 64), (const char *)name, ull(at), ull(p->n));
		if (p->b[p->pos] == ')') {
			p->pos++;
			break;
		}
		uint64_t ns = p->pos, l = name_len(p, ns);
		if (!l)
			return mfs_error(p->err, EINVAL, "expected an option name or ')' at offset %llu",
					 ull(ns));
		p->pos += l;
		plearn_skip(p, false);
		if (p->pos >= p->n || p->b[p->pos] != '=') {
			char q[MFS_QUOTE_MAX];
			return mfs_error(p->err, EINVAL, "expected '=' after option %.*s at offset %llu, found %s",
					 (int)(l < 64 ? l : 64), (const char *)p->b + ns, ull(ns),
					 p->pos >= p->n ? "the end" : mfs_quote(q, p->b + p->pos, 1));
		}
		p->pos++;
		plearn_skip(p, false);
		uint32_t opt, val;
		if ((r = plearn_new_val(p, PLEARN_V_OPT, ns, &opt)))
			return r;
		a->v[opt].a = ns;
		a->v[opt].b = l;
		if ((r = parse_value(p, END_OPTION, &val)))
			return r;
		a->v[opt].first = val;
		a->v[opt].len = end_of(a, val) - ns;
		plearn_add_kid(a, &k, opt);
	}
	a->v[*out].first = k.first;
	a->v[*out].len = p->pos - at;
	return 0;
}

static int item(struct plearn_parser *p, uint32_t *out)
{
	struct plearn_ast *a = p->a;
	uint64_t at = p->pos;
	int r;
	if (at >= p->n)
		return mfs_error(p->err, EINVAL, "expected a value, found the end at offset %llu", ull(at));
	uint8_t c = p->b[at];
	if ((c < 0x20 && !plearn_blank(c)) || c >= 0xFE)
		return plearn_parse_binary(p, out);
	switch (c) {
	case '"': {
		uint64_t l = plearn_scan_string(p->b, p->n, at);
		if (!l)
			return mfs_error(p->err, EINVAL,
					 "string at offset %llu is never closed: expected '\"', found the end at offset %llu",
					 ull(at), ull(p->n));
		if ((r = plearn_new_val(p, PLEARN_V_STR, at, out)))
			return r;
		a->v[*out].len = l;
		p->pos += l;
		return 0;
	}
	case '*':
		return pointer(p, out);
	case '[':
		return sequence(p, at, PLEARN_V_SEQ, NULL, out);
	case '{':
		return map(p, out);
	case '(': {
		struct plearn_kids k;
		if ((r = plearn_new_val(p, PLEARN_V_PAIR, at, out)))
			return r;
		p->pos++;
		if ((r = parse_list(p, *out, END_PAREN, &k)))
			return r;
		a->v[*out].len = p->pos - at;
		return 0;
	}
	default:
		break;
	}
	struct numhead h;
	enum numshape ns = number_shape(p, &h);
	switch (ns) {
	case NS_NUM:
		p->pos += h.len;
		return num_node(p, at, h.len, out);
	case NS_SEQ:
	case NS_MAT: {
		bool mat = ns == NS_MAT;
		if (h.dims[0] == UINT64_MAX || (mat && h.dims[1] == UINT64_MAX))
			return mfs_error(p->err, EINVAL, "sequence size at offset %llu is too large", ull(at));
		p->pos = h.bracket;
		return sequence(p, at, mat ? PLEARN_V_MAT : PLEARN_V_SEQ, h.dims, out);
	}
	case NS_NONE:
		break;
	}
	uint64_t wl = plearn_scan_word(p->b, p->n, at);
	if (!wl)
		return mfs_error(p->err, EINVAL, "unexpected '%c' at offset %llu", c, ull(at));
	uint64_t q = at + wl;
	while (q < p->n && plearn_blank(p->b[q]))
		q++;
	if (q < p->n && p->b[q] == '(') {
		p->pos = q;
		return object(p, at, wl, out);
	}
	if ((r = plearn_new_val(p, PLEARN_V_WORD, at, out)))
		return r;
	a->v[*out].len = wl;
	p->pos = at + wl;
	return 0;
}

static int cmp_def(const void *x, const void *y, void *ctx)
{
	const struct plearn_val *v = ctx;
	const struct plearn_val *a = &v[*(const uint32_t *)x], *b = &v[*(const uint32_t *)y];
	if (a->a != b->a)
		return a->a < b->a ? -1 : 1;
	return (a->off > b->off) - (a->off < b->off);
}

/* A reference names the last definition of its number before it, or the
 * first one after it (a reference may come first). */
struct def_key {
	const struct plearn_ast *a;
	uint64_t id;
};

static bool def_below(const void *ctx, uint64_t i)
{
	const struct def_key *k = ctx;
	return k->a->v[k->a->defs[i]].a < k->id;
}

static void resolve_refs(struct plearn_ast *a)
{
	if (a->ndefs)
		qsort_r(a->defs, a->ndefs, sizeof(*a->defs), cmp_def, a->v);
	for (uint32_t i = 0; i < a->nv; i++) {
		struct plearn_val *r = &a->v[i];
		if (r->kind != PLEARN_V_REF)
			continue;
		struct def_key k = {a, r->a};
		uint32_t lo = (uint32_t)mfs_partition(a->ndefs, def_below, &k);  /* first id >= r->a */
		if (lo == a->ndefs || a->v[a->defs[lo]].a != r->a)
			continue;
		uint32_t best = a->defs[lo];
		for (uint32_t j = lo; j < a->ndefs && a->v[a->defs[j]].a == r->a; j++)
			if (a->v[a->defs[j]].off < r->off)
				best = a->defs[j];
		r->b = best;
	}
}

int plearn_parse(struct plearn_ast *a, const uint8_t *b, uint64_t n, enum plearn_parse_mode mode,
		 struct mfs_err *err)
{
	struct plearn_parser p = {b, n, 0, a, err, 0};
	int r;
	a->root = PLEARN_NIL;
	if (mode == PLEARN_FILE) {
		plearn_skip(&p, true);
		if (p.pos >= n)
			return mfs_error(err, EINVAL, "no value in the file");
		if ((r = plearn_parse_item(&p, &a->root)))
			return r;
		uint32_t top = a->root;
		while (a->v[top].kind == PLEARN_V_DEF)
			top = a->v[top].first;
		switch (a->v[top].kind) {
		case PLEARN_V_OBJ: case PLEARN_V_SEQ: case PLEARN_V_MAT: case PLEARN_V_BSEQ: case PLEARN_V_BMAT: case PLEARN_V_TVEC:
		case PLEARN_V_TMAT:
			break;
		default:
			return mfs_error(err, EINVAL, "the top-level value (offset %llu) is not an object or a sequence",
					 ull(a->v[top].off));
		}
		plearn_skip(&p, true);
		if (p.pos < n)
			return mfs_error(err, EINVAL, "unexpected '%c' after the top-level value at offset %llu",
					 b[p.pos] >= 0x20 && b[p.pos] < 0x7f ? b[p.pos] : '?', ull(p.pos));
	} else {
		plearn_skip(&p, false);
		if ((r = parse_value(&p, END_TEXT, &a->root)))
			return r;
	}
	resolve_refs(a);
	return 0;
}

void plearn_ast_free(struct plearn_ast *a)
{
	free(a->v);
	free(a->num);
	free(a->defs);
	memset(a, 0, sizeof(*a));
}
