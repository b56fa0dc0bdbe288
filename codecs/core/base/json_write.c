/* The JSON writer (json.h): compact output, objects sorted by key as
 * nlohmann::json::dump() writes them (std::map order: key bytes). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

int mfs_json_put_string(struct mfs_buf *out, const char *s, size_t n)
{
	if (mfs_buf_reserve(out, n + 2) < 0 || mfs_buf_add(out, "\"", 1) < 0)
		return -ENOMEM;
	size_t run = 0;  /* bytes copied as they are, pending */
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
		if (!e) {
			run++;
			continue;
		}
		if (mfs_buf_add(out, s + i - run, run) < 0 || mfs_buf_add(out, e, strlen(e)) < 0)
			return -ENOMEM;
		run = 0;
	}
	if (mfs_buf_add(out, s + n - run, run) < 0 || mfs_buf_add(out, "\"", 1) < 0)
		return -ENOMEM;
	return 0;
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

static int dump_array(const struct mfs_json *j, const struct mfs_json_node *x,
		      struct mfs_buf *out)
{
	if (mfs_buf_add(out, "[", 1) < 0)
		return -ENOMEM;
	for (uint32_t c = x->first; c != MFS_JSON_NIL; c = j->v[c].next)
		if ((c != x->first && mfs_buf_add(out, ",", 1) < 0) ||
		    mfs_json_dump_sorted(j, c, out) < 0)
			return -ENOMEM;
	return mfs_buf_add(out, "]", 1);
}

/* An object: members sorted by key, the last of equal keys. */
static int dump_object(const struct mfs_json *j, const struct mfs_json_node *x,
		       struct mfs_buf *out)
{
	struct keyref *k = malloc((size_t)(x->count ? x->count : 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	uint32_t n = 0;
	for (uint32_t c = x->first; c != MFS_JSON_NIL; c = j->v[c].next, n++)
		k[n] = (struct keyref){mfs_json_key(j, c), mfs_json_keylen(j, c), c, n};
	qsort(k, n, sizeof(*k), cmp_keyref);
	int r = mfs_buf_add(out, "{", 1);
	bool any = false;
	for (uint32_t i = 0; i < n && r == 0; i++) {
		if (i + 1 < n && k[i + 1].len == k[i].len && memcmp(k[i + 1].key, k[i].key, k[i].len) == 0)
			continue;
		if ((any && mfs_buf_add(out, ",", 1) < 0) ||
		    mfs_json_put_string(out, k[i].key, k[i].len) < 0 || mfs_buf_add(out, ":", 1) < 0 ||
		    mfs_json_dump_sorted(j, k[i].node, out) < 0)
			r = -ENOMEM;
		any = true;
	}
	free(k);
	return r < 0 ? r : mfs_buf_add(out, "}", 1);
}

int mfs_json_dump_sorted(const struct mfs_json *j, uint32_t node, struct mfs_buf *out)
{
	const struct mfs_json_node *x = &j->v[node];
	switch (x->type) {
	case MFS_JSON_NULL: return mfs_buf_add(out, "null", 4);
	case MFS_JSON_TRUE: return mfs_buf_add(out, "true", 4);
	case MFS_JSON_FALSE: return mfs_buf_add(out, "false", 5);
	case MFS_JSON_NUM: return mfs_buf_add(out, mfs_json_text(j, node), mfs_json_textlen(j, node));
	case MFS_JSON_STR:
		return mfs_json_put_string(out, mfs_json_text(j, node), mfs_json_textlen(j, node));
	case MFS_JSON_ARR: return dump_array(j, x, out);
	default: return dump_object(j, x, out);
	}
}
