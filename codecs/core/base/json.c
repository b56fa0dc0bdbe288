/* The JSON reader (json.h): recursive descent over the source bytes,
 * bounded depth, 24-byte nodes in one array, decoded strings in one buffer
 * of records, and values not kept only checked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "error.h"
#include "json.h"

#define NIL MFS_JSON_NIL
#define EMPTY 4u          /* the record of "" that starts the text */
#define NODES_FIRST 64u
#define COUNT_MAX ((1u << 29) - 1)

_Static_assert(sizeof(struct mfs_json_node) == 24, "a node is 24 bytes");

static int fail(struct mfs_json *j, const char *what)
{
	snprintf(j->err, sizeof(j->err), "%s at byte %zu", what, j->pos);
	return -1;
}

static int oom(struct mfs_json *j)
{
	j->oom = true;
	return fail(j, "out of memory");
}

/* Ask before allocating bytes more. */
static bool charge(struct mfs_json *j, size_t bytes)
{
	if (!j->o.charge || !bytes)
		return true;
	if (bytes > INT64_MAX || !j->o.charge(j->o.ctx, (int64_t)bytes))
		return false;
	j->charged += bytes;
	return true;
}

static int put_text(struct mfs_json *j, const void *p, size_t n)
{
	if (j->sink)
		return 0;
	size_t nc = mfs_buf_grown_cap(&j->text, n);
	if (!nc || nc > UINT32_MAX || (nc > j->text.cap && !charge(j, nc - j->text.cap)) ||
	    mfs_buf_add(&j->text, p, n) < 0)
		return oom(j);
	return 0;
}

/* A text record: its length (filled in by end_record), its bytes, a NUL;
 * *off is where the bytes start (EMPTY when nothing is recorded). */
static int begin_record(struct mfs_json *j, uint32_t *off)
{
	*off = EMPTY;
	if (j->sink)
		return 0;
	static const char zero[4];
	if (put_text(j, zero, 4) < 0)
		return -1;
	*off = (uint32_t)j->text.len;
	return 0;
}

static int end_record(struct mfs_json *j, uint32_t off)
{
	if (j->sink)
		return 0;
	uint32_t n = (uint32_t)(j->text.len - off);
	memcpy(j->text.p + off - 4, &n, 4);
	return put_text(j, "", 1);
}

static int put_record(struct mfs_json *j, const char *s, size_t n, uint32_t *off)
{
	return begin_record(j, off) < 0 || put_text(j, s, n) < 0 ? -1 : end_record(j, *off);
}

/* A node for the value at pos, or NIL inside a value not kept (and when
 * memory ran out: j->err says which). */
static uint32_t new_node(struct mfs_json *j, enum mfs_json_type type, uint32_t key)
{
	if (j->sink)
		return NIL;
	if (j->n == j->cap) {
		size_t more = j->cap ? j->cap : NODES_FIRST;
		if (!charge(j, more * sizeof(*j->v)) ||
		    MFS_ARRAY_RESERVE(j->v, j->n, j->cap, 1, NODES_FIRST) < 0) {
			oom(j);
			return NIL;
		}
	}
	j->v[j->n] = (struct mfs_json_node){.at = (uint32_t)j->pos, .key = key, .next = NIL,
					    .first = NIL, .type = type};
	return j->n++;
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
		if (!k && j->o.bytes)
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

/* A string at pos (the opening quote), decoded into a record of j->text. */
static int parse_string(struct mfs_json *j, uint32_t *off)
{
	j->pos++;
	if (begin_record(j, off) < 0)
		return -1;
	while (j->pos < j->len) {
		unsigned char c = (unsigned char)j->src[j->pos];
		if (c == '"') {
			j->pos++;
			return end_record(j, *off);
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

/* A number is read where it is spelled: nothing is recorded. */
static int parse_number(struct mfs_json *j)
{
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
	return 0;
}

static int parse_value(struct mfs_json *j, uint32_t *out, uint32_t key, unsigned depth);

/* One member's key and colon. */
static int member_key(struct mfs_json *j, uint32_t *key)
{
	if (j->pos >= j->len || j->src[j->pos] != '"')
		return fail(j, "expected a key");
	if (parse_string(j, key) < 0)
		return -1;
	skip_ws(j);
	if (j->pos >= j->len || j->src[j->pos] != ':')
		return fail(j, "expected ':'");
	j->pos++;
	return 0;
}

/* The values of a container (node NIL: one not kept), the first ones the
 * keep option asks for kept, the rest only checked. */
static int parse_container(struct mfs_json *j, uint32_t node, bool obj, unsigned depth)
{
	char close = obj ? '}' : ']';
	bool outer = j->sink;
	uint32_t keep = node == NIL ? 0 : j->o.keep ? j->o.keep(j->o.ctx, j, node, depth)
						    : MFS_JSON_KEEP_ALL;
	uint32_t kept = 0, count = 0, last = NIL;
	j->pos++;
	skip_ws(j);
	if (j->pos < j->len && j->src[j->pos] == close) {
		j->pos++;
		return 0;
	}
	for (;;) {
		uint32_t key = EMPTY, child;
		skip_ws(j);
		j->sink = outer || kept >= keep;
		if ((obj && member_key(j, &key) < 0) || parse_value(j, &child, key, depth + 1) < 0)
			return -1;
		j->sink = outer;
		if (count == COUNT_MAX)
			return fail(j, "too many values in one container");
		count++;
		if (child != NIL) {
			if (last == NIL)
				j->v[node].first = child;
			else
				j->v[last].next = child;
			last = child;
			kept++;
		}
		if (node != NIL)
			j->v[node].count = count;
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

static int literal(struct mfs_json *j, const char *word)
{
	size_t n = strlen(word);
	if (j->len - j->pos < n || memcmp(j->src + j->pos, word, n) != 0)
		return fail(j, "unexpected character");
	j->pos += n;
	return 0;
}

static int type_of(char c)
{
	switch (c) {
	case '{': return MFS_JSON_OBJ;
	case '[': return MFS_JSON_ARR;
	case '"': return MFS_JSON_STR;
	case 't': return MFS_JSON_TRUE;
	case 'f': return MFS_JSON_FALSE;
	case 'n': return MFS_JSON_NULL;
	default: return c == '-' || (c >= '0' && c <= '9') ? MFS_JSON_NUM : -1;
	}
}

/* The value at pos; *out is its node, NIL when it is not kept. */
static int parse_value(struct mfs_json *j, uint32_t *out, uint32_t key, unsigned depth)
{
	if (depth > MFS_JSON_DEPTH_MAX)
		return fail(j, "nested too deeply");
	skip_ws(j);
	if (j->pos >= j->len)
		return fail(j, "unexpected end");
	int type = type_of(j->src[j->pos]);
	if (type < 0)
		return fail(j, "unexpected character");
	uint32_t node = new_node(j, (enum mfs_json_type)type, key);
	if (node == NIL && !j->sink)
		return -1;
	int r = 0;
	uint32_t off;
	switch (type) {
	case MFS_JSON_OBJ:
	case MFS_JSON_ARR:
		r = parse_container(j, node, type == MFS_JSON_OBJ, depth);
		break;
	case MFS_JSON_STR:
		r = parse_string(j, &off);
		if (r == 0 && node != NIL)
			j->v[node].first = off;
		break;
	case MFS_JSON_TRUE: r = literal(j, "true"); break;
	case MFS_JSON_FALSE: r = literal(j, "false"); break;
	case MFS_JSON_NULL: r = literal(j, "null"); break;
	default: r = parse_number(j);
	}
	if (r < 0)
		return -1;
	if (node != NIL)
		j->v[node].span = (uint32_t)(j->pos - j->v[node].at);
	*out = node;
	return 0;
}

int mfs_json_parse_opts(struct mfs_json *j, const void *src, size_t len,
			const struct mfs_json_opts *o)
{
	memset(j, 0, sizeof(*j));
	j->src = (const char *)src;
	j->len = len;
	if (o)
		j->o = *o;
	if (len > MFS_JSON_LEN_MAX) {
		snprintf(j->err, sizeof(j->err), "%zu bytes of JSON, more than the %u supported",
			 len, MFS_JSON_LEN_MAX);
		return -1;
	}
	static const char empty[5];  /* the record of "", at EMPTY */
	if (put_text(j, empty, sizeof(empty)) < 0)
		return -1;
	uint32_t root;
	if (parse_value(j, &root, EMPTY, 0) < 0)
		return -1;
	skip_ws(j);
	if (j->pos != j->len)
		return fail(j, "trailing characters");
	return 0;
}

int mfs_json_parse(struct mfs_json *j, const void *src, size_t len)
{
	return mfs_json_parse_opts(j, src, len, NULL);
}

int mfs_json_parse_bytes(struct mfs_json *j, const void *src, size_t len)
{
	const struct mfs_json_opts o = {.bytes = true};
	return mfs_json_parse_opts(j, src, len, &o);
}

void mfs_json_free(struct mfs_json *j)
{
	free(j->v);
	mfs_buf_free(&j->text);
	j->v = NULL;
	j->n = 0;
	j->cap = 0;
	if (j->charged && j->o.charge)
		j->o.charge(j->o.ctx, -(int64_t)j->charged);
	j->charged = 0;
}

uint32_t mfs_json_keep_shallow(void *ctx, const struct mfs_json *j, uint32_t node,
			       unsigned depth)
{
	(void)ctx;
	return depth == 0 || (depth == 1 && j->v[node].type == MFS_JSON_OBJ) ? MFS_JSON_KEEP_ALL
									       : 0;
}

uint32_t mfs_json_member(const struct mfs_json *j, uint32_t obj, const char *key)
{
	size_t kl = strlen(key);
	uint32_t hit = NIL;
	for (uint32_t c = j->v[obj].first; c != NIL; c = j->v[c].next)
		if (mfs_json_keylen(j, c) == kl && memcmp(mfs_json_key(j, c), key, kl) == 0)
			hit = c;
	return hit;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool mfs_json_u64s(const struct mfs_json *j, uint32_t node, uint64_t *out, uint32_t max,
		   uint32_t *n)
{
	const struct mfs_json_node *x = &j->v[node];
	*n = 0;
	if (x->type != MFS_JSON_ARR || x->count > max)
		return false;
	/* The parse checked the array: only its numbers are read here, and
	 * anything else (a sign, a fraction, a string) ends it at once. */
	const char *s = j->src + x->at + 1, *e = j->src + x->at + x->span;
	uint32_t k = 0;
	for (;;) {
		while (s < e && blank(*s))
			s++;
		if (s < e && *s == ']')
			break;
		if (s == e || *s < '0' || *s > '9')
			return false;
		uint64_t v = 0;
		for (; s < e && *s >= '0' && *s <= '9'; s++)
			if (!mfs_mul_ok(v, 10, &v) || !mfs_add_ok(v, (uint64_t)(*s - '0'), &v))
				return false;
		if (s < e && (*s == '.' || *s == 'e' || *s == 'E'))
			return false;
		out[k++] = v;
		while (s < e && blank(*s))
			s++;
		if (s < e && *s == ',')
			s++;
	}
	*n = k;
	return true;
}

int mfs_json_set_number(struct mfs_json *j, uint32_t obj, const char *key, uint64_t v)
{
	char num[24];
	int n = snprintf(num, sizeof(num), "%llu", (unsigned long long)v);
	uint32_t c = mfs_json_member(j, obj, key);
	j->sink = false;
	if (c == NIL) {
		uint32_t koff;
		if (put_record(j, key, strlen(key), &koff) < 0)
			return -ENOMEM;
		c = new_node(j, MFS_JSON_NUM, koff);
		if (c == NIL)
			return -ENOMEM;
		uint32_t last = NIL;
		for (uint32_t k = j->v[obj].first; k != NIL; k = j->v[k].next)
			last = k;
		if (last == NIL)
			j->v[obj].first = c;
		else
			j->v[last].next = c;
		j->v[obj].count++;
	}
	uint32_t off;
	if (put_record(j, num, (size_t)n, &off) < 0)
		return -ENOMEM;
	struct mfs_json_node *x = &j->v[c];
	x->type = MFS_JSON_NUM;
	x->first = off;
	x->count = 0;
	x->at = x->span = 0;
	return 0;
}
