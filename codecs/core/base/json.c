/* The JSON reader (json.h): recursive descent over the source bytes,
 * bounded depth, nodes in one array, decoded text in one buffer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "error.h"
#include "json.h"

#define NIL MFS_JSON_NIL

static int fail(struct mfs_json *j, const char *what)
{
	snprintf(j->err, sizeof(j->err), "%s at byte %zu", what, j->pos);
	return -1;
}

static int put_text(struct mfs_json *j, const void *p, size_t n)
{
	return mfs_buf_add(&j->text, p, n) < 0 ? fail(j, "out of memory") : 0;
}

static uint32_t new_node(struct mfs_json *j, uint8_t type)
{
	if (j->n == j->cap) {
		size_t cap = j->cap;
		if (cap >= UINT32_MAX / 2 || MFS_ARRAY_RESERVE(j->v, j->n, cap, 1, 32) < 0) {
			fail(j, "out of memory");
			return NIL;
		}
		j->cap = (uint32_t)cap;
	}
	struct mfs_json_node *x = &j->v[j->n];
	memset(x, 0, sizeof(*x));
	x->type = type;
	x->at = j->pos;
	x->first = x->last = x->next = NIL;
	return j->n++;
}

static void add_child(struct mfs_json *j, uint32_t parent, uint32_t child)
{
	struct mfs_json_node *p = &j->v[parent];
	if (p->last == NIL)
		p->first = child;
	else
		j->v[p->last].next = child;
	p->last = child;
	p->count++;
}

static void skip_ws(struct mfs_json *j)
{
	while (j->pos < j->len && (j->src[j->pos] == ' ' || j->src[j->pos] == '\t' ||
				   j->src[j->pos] == '\n' || j->src[j->pos] == '\r'))
		j->pos++;
}

static int hex4(struct mfs_json *j, unsigned *out)
{
	if (j->len - j->pos < 4)
		return fail(j, "short \\u escape");
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
			return fail(j, "bad \\u escape");
	}
	*out = v;
	return 0;
}

static int put_utf8(struct mfs_json *j, unsigned cp)
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

/* A run of plain characters at pos, checked and copied. */
static int plain_run(struct mfs_json *j)
{
	const unsigned char *s = (const unsigned char *)j->src;
	size_t st = j->pos;
	while (j->pos < j->len && s[j->pos] != '"' && s[j->pos] != '\\' && s[j->pos] >= 0x20) {
		if (s[j->pos] < 0x80) {
			j->pos++;
			continue;
		}
		size_t k = mfs_utf8_char(s + j->pos, j->len - j->pos);
		if (!k && j->bytes)
			k = 1;  /* a byte string: kept as it is */
		if (!k)
			return fail(j, "invalid UTF-8 in a string");
		j->pos += k;
	}
	return put_text(j, j->src + st, j->pos - st);
}

/* One escape after the backslash at pos - 1. */
static int escape(struct mfs_json *j)
{
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
				return fail(j, "lone surrogate");
			j->pos += 2;
			if (hex4(j, &lo) < 0)
				return -1;
			if (lo < 0xdc00 || lo >= 0xe000)
				return fail(j, "bad surrogate pair");
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		} else if (cp >= 0xdc00 && cp < 0xe000) {
			return fail(j, "lone surrogate");
		}
		return put_utf8(j, cp);
	default:
		return fail(j, "bad escape");
	}
	return put_text(j, &o, 1);
}

/* A string at pos (the opening quote), decoded into j->text. */
static int parse_string(struct mfs_json *j, size_t *off, size_t *len)
{
	j->pos++;
	*off = j->text.len;
	while (j->pos < j->len) {
		unsigned char c = (unsigned char)j->src[j->pos];
		if (c == '"') {
			j->pos++;
			*len = j->text.len - *off;
			return 0;
		}
		if (c < 0x20)
			return fail(j, "control character in a string");
		int r;
		if (c != '\\') {
			r = plain_run(j);
		} else {
			if (++j->pos >= j->len)
				return fail(j, "unterminated string");
			r = escape(j);
		}
		if (r < 0)
			return -1;
	}
	return fail(j, "unterminated string");
}

static bool digit(struct mfs_json *j)
{
	return j->pos < j->len && j->src[j->pos] >= '0' && j->src[j->pos] <= '9';
}

static int digits(struct mfs_json *j)
{
	if (!digit(j))
		return fail(j, "bad number");
	while (digit(j))
		j->pos++;
	return 0;
}

static int parse_number(struct mfs_json *j, uint32_t node)
{
	size_t st = j->pos;
	if (j->src[j->pos] == '-')
		j->pos++;
	if (!digit(j))
		return fail(j, "bad number");
	if (j->src[j->pos] == '0')
		j->pos++;
	else if (digits(j) < 0)
		return -1;
	if (j->pos < j->len && j->src[j->pos] == '.') {
		j->pos++;
		if (digits(j) < 0)
			return -1;
	}
	if (j->pos < j->len && (j->src[j->pos] == 'e' || j->src[j->pos] == 'E')) {
		j->pos++;
		if (j->pos < j->len && (j->src[j->pos] == '+' || j->src[j->pos] == '-'))
			j->pos++;
		if (digits(j) < 0)
			return -1;
	}
	j->v[node].text = j->text.len;
	j->v[node].textlen = j->pos - st;
	return put_text(j, j->src + st, j->pos - st);
}

static int parse_value(struct mfs_json *j, uint32_t *out, int depth);

/* One member's key and colon (objects), or nothing (arrays). */
static int member_key(struct mfs_json *j, bool obj, size_t *key, size_t *keylen)
{
	*key = *keylen = 0;
	if (!obj)
		return 0;
	if (j->pos >= j->len || j->src[j->pos] != '"')
		return fail(j, "expected a key");
	if (parse_string(j, key, keylen) < 0)
		return -1;
	skip_ws(j);
	if (j->pos >= j->len || j->src[j->pos] != ':')
		return fail(j, "expected ':'");
	j->pos++;
	return 0;
}

static int parse_container(struct mfs_json *j, uint32_t node, bool obj, int depth)
{
	char close = obj ? '}' : ']';
	j->pos++;
	skip_ws(j);
	if (j->pos < j->len && j->src[j->pos] == close) {
		j->pos++;
		return 0;
	}
	for (;;) {
		size_t key, keylen;
		uint32_t child;
		skip_ws(j);
		if (member_key(j, obj, &key, &keylen) < 0 || parse_value(j, &child, depth + 1) < 0)
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
		return fail(j, obj ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int literal(struct mfs_json *j, const char *word, uint8_t type, uint32_t *out)
{
	size_t n = strlen(word);
	if (j->len - j->pos < n || memcmp(j->src + j->pos, word, n) != 0)
		return fail(j, "unexpected character");
	*out = new_node(j, type);
	j->pos += n;
	return *out == NIL ? -1 : 0;
}

static int parse_inner(struct mfs_json *j, char c, uint32_t *out, int depth)
{
	uint32_t node;
	switch (c) {
	case '{':
	case '[':
		node = new_node(j, c == '{' ? MFS_JSON_OBJ : MFS_JSON_ARR);
		if (node == NIL || parse_container(j, node, c == '{', depth) < 0)
			return -1;
		break;
	case '"':
		node = new_node(j, MFS_JSON_STR);
		if (node == NIL || parse_string(j, &j->v[node].text, &j->v[node].textlen) < 0)
			return -1;
		break;
	case 't':
		return literal(j, "true", MFS_JSON_TRUE, out);
	case 'f':
		return literal(j, "false", MFS_JSON_FALSE, out);
	case 'n':
		return literal(j, "null", MFS_JSON_NULL, out);
	default:
		if (c != '-' && (c < '0' || c > '9'))
			return fail(j, "unexpected character");
		node = new_node(j, MFS_JSON_NUM);
		if (node == NIL || parse_number(j, node) < 0)
			return -1;
	}
	*out = node;
	return 0;
}

static int parse_value(struct mfs_json *j, uint32_t *out, int depth)
{
	if (depth > MFS_JSON_DEPTH_MAX)
		return fail(j, "nested too deeply");
	skip_ws(j);
	if (j->pos >= j->len)
		return fail(j, "unexpected end");
	if (parse_inner(j, j->src[j->pos], out, depth) < 0)
		return -1;
	j->v[*out].span = j->pos - j->v[*out].at;
	return 0;
}

static int parse_doc(struct mfs_json *j, const void *src, size_t len, bool bytes)
{
	memset(j, 0, sizeof(*j));
	j->src = (const char *)src;
	j->len = len;
	j->bytes = bytes;
	if (mfs_buf_reserve(&j->text, 1) < 0)  /* text.p is never NULL */
		return fail(j, "out of memory");
	uint32_t root;
	if (parse_value(j, &root, 0) < 0)
		return -1;
	skip_ws(j);
	if (j->pos != j->len)
		return fail(j, "trailing characters");
	return 0;
}

int mfs_json_parse(struct mfs_json *j, const void *src, size_t len)
{
	return parse_doc(j, src, len, false);
}

int mfs_json_parse_bytes(struct mfs_json *j, const void *src, size_t len)
{
	return parse_doc(j, src, len, true);
}

void mfs_json_free(struct mfs_json *j)
{
	free(j->v);
	mfs_buf_free(&j->text);
	j->v = NULL;
	j->n = j->cap = 0;
}

uint32_t mfs_json_member(const struct mfs_json *j, uint32_t obj, const char *key)
{
	size_t kl = strlen(key);
	uint32_t hit = NIL;
	for (uint32_t c = j->v[obj].first; c != NIL; c = j->v[c].next)
		if (j->v[c].keylen == kl && memcmp(j->text.p + j->v[c].key, key, kl) == 0)
			hit = c;
	return hit;
}

int mfs_json_set_number(struct mfs_json *j, uint32_t obj, const char *key, uint64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	uint32_t c = mfs_json_member(j, obj, key);
	if (c == NIL) {
		size_t koff = j->text.len;
		if (put_text(j, key, strlen(key)) < 0)
			return -ENOMEM;
		c = new_node(j, MFS_JSON_NUM);
		if (c == NIL)
			return -ENOMEM;
		j->v[c].key = koff;
		j->v[c].keylen = strlen(key);
		add_child(j, obj, c);
	}
	struct mfs_json_node *x = &j->v[c];
	x->type = MFS_JSON_NUM;
	x->first = x->last = NIL;
	x->count = 0;
	x->at = x->span = 0;
	x->text = j->text.len;
	x->textlen = (size_t)n;
	return put_text(j, num, (size_t)n) < 0 ? -ENOMEM : 0;
}
