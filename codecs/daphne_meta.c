/* The .meta sidecar of a .dbdf file: a small strict JSON reader (bounded
 * depth; hand-written pretty-printed files read fine), and the writer that
 * DAPHNE's is (nlohmann::json::dump(): compact, keys sorted, no newline). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daphne.h"

#define JSON_DEPTH_MAX 64

enum jtype { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

/* Text (decoded strings and keys, number spellings) lives in doc.s. */
struct jnode {
	uint8_t type;
	size_t key, keylen;      /* object members */
	size_t text, textlen;    /* J_STR, J_NUM */
	uint32_t first, last, next;  /* children in order; UINT32_MAX: none */
	uint32_t count;
};

struct jdoc {
	const char *src;
	size_t len, pos;
	struct jnode *v;
	uint32_t n, cap;
	char *s;
	size_t slen, scap;
	char err[96];
};

#define NIL UINT32_MAX

static int jfail(struct jdoc *j, const char *what)
{
	snprintf(j->err, sizeof(j->err), "%s at byte %zu", what, j->pos);
	return -1;
}

static int put_text(struct jdoc *j, const void *p, size_t n)
{
	if (j->slen + n > j->scap) {
		size_t nc = j->scap ? j->scap * 2 : 256;
		while (nc < j->slen + n)
			nc *= 2;
		char *s = realloc(j->s, nc);
		if (!s)
			return jfail(j, "out of memory");
		j->s = s;
		j->scap = nc;
	}
	memcpy(j->s + j->slen, p, n);
	j->slen += n;
	return 0;
}

static uint32_t new_node(struct jdoc *j, uint8_t type)
{
	if (j->n == j->cap) {
		uint32_t nc = j->cap ? j->cap * 2 : 32;
		struct jnode *v = nc > j->cap ? realloc(j->v, (size_t)nc * sizeof(*v)) : NULL;
		if (!v) {
			jfail(j, "out of memory");
			return NIL;
		}
		j->v = v;
		j->cap = nc;
	}
	struct jnode *x = &j->v[j->n];
	memset(x, 0, sizeof(*x));
	x->type = type;
	x->first = x->last = x->next = NIL;
	return j->n++;
}

static void add_child(struct jdoc *j, uint32_t parent, uint32_t child)
{
	struct jnode *p = &j->v[parent];
	if (p->last == NIL)
		p->first = child;
	else
		j->v[p->last].next = child;
	p->last = child;
	p->count++;
}

static void skip_ws(struct jdoc *j)
{
	while (j->pos < j->len && (j->src[j->pos] == ' ' || j->src[j->pos] == '\t' ||
				   j->src[j->pos] == '\n' || j->src[j->pos] == '\r'))
		j->pos++;
}

static int hex4(struct jdoc *j, unsigned *out)
{
	if (j->len - j->pos < 4)
		return jfail(j, "short \\u escape");
	unsigned v = 0;
	for (int i = 0; i < 4; i++) {
		char c = j->src[j->pos++];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return jfail(j, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static int put_utf8(struct jdoc *j, unsigned cp)
{
	char b[4];
	size_t n;
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xc0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xe0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		b[0] = (char)(0xf0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		b[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	return put_text(j, b, n);
}

/* A string at pos (the opening quote), decoded into j->s. */
static int parse_string(struct jdoc *j, size_t *off, size_t *len)
{
	j->pos++;
	*off = j->slen;
	while (j->pos < j->len) {
		unsigned char c = (unsigned char)j->src[j->pos];
		if (c == '"') {
			j->pos++;
			*len = j->slen - *off;
			return 0;
		}
		if (c < 0x20)
			return jfail(j, "control character in a string");
		if (c != '\\') {
			size_t st = j->pos;
			while (j->pos < j->len && j->src[j->pos] != '"' && j->src[j->pos] != '\\' &&
			       (unsigned char)j->src[j->pos] >= 0x20) {
				size_t u = mfs_utf8_char(j->src + j->pos, j->len - j->pos);
				if (u == 0)
					return jfail(j, "invalid UTF-8 in a string");
				j->pos += u;
			}
			if (put_text(j, j->src + st, j->pos - st) < 0)
				return -1;
			continue;
		}
		if (++j->pos >= j->len)
			return jfail(j, "unterminated string");
		char e = j->src[j->pos++], o;
		unsigned cp, lo;
		switch (e) {
		case '"': case '\\': case '/': o = e; break;
		case 'b': o = '\b'; break;
		case 'f': o = '\f'; break;
		case 'n': o = '\n'; break;
		case 'r': o = '\r'; break;
		case 't': o = '\t'; break;
		case 'u':
			if (hex4(j, &cp) < 0)
				return -1;
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (j->len - j->pos < 2 || j->src[j->pos] != '\\' || j->src[j->pos + 1] != 'u')
					return jfail(j, "lone surrogate");
				j->pos += 2;
				if (hex4(j, &lo) < 0)
					return -1;
				if (lo < 0xdc00 || lo >= 0xe000)
					return jfail(j, "bad surrogate pair");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			} else if (cp >= 0xdc00 && cp < 0xe000) {
				return jfail(j, "lone surrogate");
			}
			if (put_utf8(j, cp) < 0)
				return -1;
			continue;
		default:
			return jfail(j, "bad escape");
		}
		if (put_text(j, &o, 1) < 0)
			return -1;
	}
	return jfail(j, "unterminated string");
}

static bool digit(struct jdoc *j)
{
	return j->pos < j->len && j->src[j->pos] >= '0' && j->src[j->pos] <= '9';
}

static int parse_number(struct jdoc *j, uint32_t node)
{
	size_t st = j->pos;
	if (j->src[j->pos] == '-')
		j->pos++;
	if (!digit(j))
		return jfail(j, "bad number");
	if (j->src[j->pos] == '0')
		j->pos++;
	else
		while (digit(j))
			j->pos++;
	if (j->pos < j->len && j->src[j->pos] == '.') {
		j->pos++;
		if (!digit(j))
			return jfail(j, "bad number");
		while (digit(j))
			j->pos++;
	}
	if (j->pos < j->len && (j->src[j->pos] == 'e' || j->src[j->pos] == 'E')) {
		j->pos++;
		if (j->pos < j->len && (j->src[j->pos] == '+' || j->src[j->pos] == '-'))
			j->pos++;
		if (!digit(j))
			return jfail(j, "bad number");
		while (digit(j))
			j->pos++;
	}
	j->v[node].text = j->slen;
	j->v[node].textlen = j->pos - st;
	return put_text(j, j->src + st, j->pos - st);
}

static int parse_value(struct jdoc *j, uint32_t *out, int depth);

static int parse_container(struct jdoc *j, uint32_t node, bool obj, int depth)
{
	char close = obj ? '}' : ']';
	j->pos++;
	skip_ws(j);
	if (j->pos < j->len && j->src[j->pos] == close) {
		j->pos++;
		return 0;
	}
	for (;;) {
		size_t key = 0, keylen = 0;
		skip_ws(j);
		if (obj) {
			if (j->pos >= j->len || j->src[j->pos] != '"')
				return jfail(j, "expected a key");
			if (parse_string(j, &key, &keylen) < 0)
				return -1;
			skip_ws(j);
			if (j->pos >= j->len || j->src[j->pos] != ':')
				return jfail(j, "expected ':'");
			j->pos++;
		}
		uint32_t child;
		if (parse_value(j, &child, depth + 1) < 0)
			return -1;
		j->v[child].key = key;
		j->v[child].keylen = keylen;
		add_child(j, node, child);
		skip_ws(j);
		if (j->pos < j->len && j->src[j->pos] == ',') {
			j->pos++;
			continue;
		}
		if (j->pos < j->len && j->src[j->pos] == close) {
			j->pos++;
			return 0;
		}
		return jfail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int literal(struct jdoc *j, const char *word, uint8_t type, uint32_t *out)
{
	size_t n = strlen(word);
	if (j->len - j->pos < n || memcmp(j->src + j->pos, word, n) != 0)
		return jfail(j, "unexpected character");
	j->pos += n;
	*out = new_node(j, type);
	return *out == NIL ? -1 : 0;
}

static int parse_value(struct jdoc *j, uint32_t *out, int depth)
{
	if (depth > JSON_DEPTH_MAX)
		return jfail(j, "nested too deeply");
	skip_ws(j);
	if (j->pos >= j->len)
		return jfail(j, "unexpected end");
	char c = j->src[j->pos];
	uint32_t node;
	switch (c) {
	case '{':
	case '[':
		node = new_node(j, c == '{' ? J_OBJ : J_ARR);
		if (node == NIL || parse_container(j, node, c == '{', depth) < 0)
			return -1;
		break;
	case '"':
		node = new_node(j, J_STR);
		if (node == NIL || parse_string(j, &j->v[node].text, &j->v[node].textlen) < 0)
			return -1;
		break;
	case 't':
		return literal(j, "true", J_TRUE, out);
	case 'f':
		return literal(j, "false", J_FALSE, out);
	case 'n':
		return literal(j, "null", J_NULL, out);
	default:
		if (c != '-' && (c < '0' || c > '9'))
			return jfail(j, "unexpected character");
		node = new_node(j, J_NUM);
		if (node == NIL || parse_number(j, node) < 0)
			return -1;
	}
	*out = node;
	return 0;
}

static void jfree(struct jdoc *j)
{
	free(j->v);
	free(j->s);
}

/* Parse a whole document whose top level is an object; 0 or -1 (j->err). */
static int jparse(struct jdoc *j, const uint8_t *src, size_t len)
{
	memset(j, 0, sizeof(*j));
	j->src = (const char *)src;
	j->len = len;
	uint32_t root;
	if (parse_value(j, &root, 0) < 0)
		return -1;
	skip_ws(j);
	if (j->pos != j->len)
		return jfail(j, "trailing characters");
	if (j->v[root].type != J_OBJ)
		return jfail(j, "the top level is not an object");
	return 0;
}

/* The last member of object obj named key (nlohmann keeps the last). */
static uint32_t member(const struct jdoc *j, uint32_t obj, const char *key)
{
	size_t kl = strlen(key);
	uint32_t hit = NIL;
	for (uint32_t c = j->v[obj].first; c != NIL; c = j->v[c].next)
		if (j->v[c].keylen == kl && memcmp(j->s + j->v[c].key, key, kl) == 0)
			hit = c;
	return hit;
}

struct dbdf_label *dbdf_meta_labels(struct mfs_model *m, uint64_t ncols)
{
	struct jdoc j = {0};
	struct dbdf_label *out = NULL;
	if (!m->has_sidecar || jparse(&j, m->sidecar, m->sidecar_len) < 0)
		goto done;
	uint32_t schema = member(&j, 0, "schema");
	if (schema == NIL || j.v[schema].type != J_ARR || j.v[schema].count != ncols)
		goto done;
	out = mfs_model_alloc(m, (size_t)(ncols ? ncols : 1) * sizeof(*out));
	if (!out)
		goto done;
	uint64_t i = 0;
	for (uint32_t c = j.v[schema].first; c != NIL; c = j.v[c].next, i++) {
		out[i] = (struct dbdf_label){NULL, 0};
		uint32_t l = j.v[c].type == J_OBJ ? member(&j, c, "label") : NIL;
		if (l != NIL && j.v[l].type == J_STR) {
			out[i].s = mfs_model_strdup(m, j.s + j.v[l].text, j.v[l].textlen);
			out[i].len = j.v[l].textlen;
		}
	}
done:
	jfree(&j);
	return out;
}

void dbdf_meta_check(struct mfs_model *m, uint64_t rows, uint64_t cols)
{
	struct jdoc j = {0};
	if (!m->has_sidecar)
		return;
	if (jparse(&j, m->sidecar, m->sidecar_len) < 0) {
		mfs_model_note(m, "%s%s: %s; ignored", m->name,
			       m->codec->sidecar, j.err);
		jfree(&j);
		return;
	}
	static const char *const keys[2] = {"numRows", "numCols"};
	const uint64_t want[2] = {rows, cols};
	for (int k = 0; k < 2; k++) {
		uint32_t c = member(&j, 0, keys[k]);
		if (c == NIL)
			continue;
		char num[24];
		int l = snprintf(num, sizeof(num), "%llu", (unsigned long long)want[k]);
		if (j.v[c].type != J_NUM || j.v[c].textlen != (size_t)l ||
		    memcmp(j.s + j.v[c].text, num, (size_t)l) != 0) {
			char q[MFS_QUOTE_MAX];
			mfs_model_note(m, "%s%s: %s is %s, expected %s (the file's)",
				       m->name, m->codec->sidecar, keys[k],
				       j.v[c].type == J_NUM || j.v[c].type == J_STR
					       ? mfs_quote(q, j.s + j.v[c].text, j.v[c].textlen)
					       : "not a number", num);
			break;
		}
	}
	jfree(&j);
}

bool dbdf_meta_has(const uint8_t *side, size_t len, const char *key)
{
	struct jdoc j = {0};
	bool has = false;
	if (side && jparse(&j, side, len) == 0) {
		uint32_t c = member(&j, 0, key);
		has = c != NIL && j.v[c].type == J_NUM;
	}
	jfree(&j);
	return has;
}

/* ---- writing, as nlohmann::json::dump() does ----------------------------- */

struct out {
	char *p;
	size_t len, cap;
	bool oom;
};

static void emit(struct out *o, const void *p, size_t n)
{
	if (o->oom)
		return;
	if (o->len + n > o->cap) {
		size_t nc = o->cap ? o->cap * 2 : 256;
		while (nc < o->len + n)
			nc *= 2;
		char *q = realloc(o->p, nc);
		if (!q) {
			o->oom = true;
			return;
		}
		o->p = q;
		o->cap = nc;
	}
	memcpy(o->p + o->len, p, n);
	o->len += n;
}

static void emit_string(struct out *o, const char *s, size_t n)
{
	emit(o, "\"", 1);
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *e = NULL;
		char u[8];
		switch (c) {
		case '"': e = "\\\""; break;
		case '\\': e = "\\\\"; break;
		case '\b': e = "\\b"; break;
		case '\f': e = "\\f"; break;
		case '\n': e = "\\n"; break;
		case '\r': e = "\\r"; break;
		case '\t': e = "\\t"; break;
		default:
			if (c < 0x20) {
				snprintf(u, sizeof(u), "\\u%04x", c);
				e = u;
			}
		}
		if (e)
			emit(o, e, strlen(e));
		else
			emit(o, &s[i], 1);
	}
	emit(o, "\"", 1);
}

struct keyref {
	const char *key;
	size_t len;
	uint32_t node, order;
};

static int cmp_keyref(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->key, y->key, n);
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x->order > y->order) - (x->order < y->order);
}

static void dump(const struct jdoc *j, uint32_t v, struct out *o)
{
	const struct jnode *x = &j->v[v];
	switch (x->type) {
	case J_NULL: emit(o, "null", 4); return;
	case J_TRUE: emit(o, "true", 4); return;
	case J_FALSE: emit(o, "false", 5); return;
	case J_NUM: emit(o, j->s + x->text, x->textlen); return;
	case J_STR: emit_string(o, j->s + x->text, x->textlen); return;
	case J_ARR:
		emit(o, "[", 1);
		for (uint32_t c = x->first; c != NIL; c = j->v[c].next) {
			if (c != x->first)
				emit(o, ",", 1);
			dump(j, c, o);
		}
		emit(o, "]", 1);
		return;
	default:
		break;
	}
	/* An object: members sorted by key (std::map), the last of equal keys. */
	struct keyref *k = malloc((size_t)(x->count ? x->count : 1) * sizeof(*k));
	if (!k) {
		o->oom = true;
		return;
	}
	uint32_t n = 0;
	for (uint32_t c = x->first; c != NIL; c = j->v[c].next, n++)
		k[n] = (struct keyref){j->s + j->v[c].key, j->v[c].keylen, c, n};
	qsort(k, n, sizeof(*k), cmp_keyref);
	emit(o, "{", 1);
	bool any = false;
	for (uint32_t i = 0; i < n; i++) {
		if (i + 1 < n && k[i + 1].len == k[i].len && memcmp(k[i + 1].key, k[i].key, k[i].len) == 0)
			continue;
		if (any)
			emit(o, ",", 1);
		any = true;
		emit_string(o, k[i].key, k[i].len);
		emit(o, ":", 1);
		dump(j, k[i].node, o);
	}
	emit(o, "}", 1);
	free(k);
}

/* Set top-level key to the number v (a new member if there is none). */
static int set_number(struct jdoc *j, const char *key, uint64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	uint32_t c = member(j, 0, key);
	if (c == NIL) {
		size_t koff = j->slen;
		if (put_text(j, key, strlen(key)) < 0)
			return -1;
		c = new_node(j, J_NUM);
		if (c == NIL)
			return -1;
		j->v[c].key = koff;
		j->v[c].keylen = strlen(key);
		add_child(j, 0, c);
	}
	j->v[c].type = J_NUM;
	j->v[c].first = j->v[c].last = NIL;
	j->v[c].count = 0;
	j->v[c].text = j->slen;
	j->v[c].textlen = (size_t)n;
	return put_text(j, num, (size_t)n);
}

int dbdf_meta_rewrite(const uint8_t *side, size_t len, const struct dbdf_meta_set *set,
		      uint8_t **out, size_t *outlen, struct mfs_err *err)
{
	struct jdoc j;
	if (jparse(&j, side, len) < 0) {
		int r = mfs_error(err, EINVAL, "the .meta sidecar is not valid JSON (%s), so it cannot be kept in step",
				  j.err);
		jfree(&j);
		return r;
	}
	if ((set->set_rows && set_number(&j, "numRows", set->rows) < 0) ||
	    (set->set_cols && set_number(&j, "numCols", set->cols) < 0) ||
	    (set->set_nnz && set_number(&j, "numNonZeros", set->nnz) < 0)) {
		jfree(&j);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	struct out o = {0};
	dump(&j, 0, &o);
	jfree(&j);
	if (o.oom) {
		free(o.p);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	*out = (uint8_t *)o.p;
	*outlen = o.len;
	return 0;
}
