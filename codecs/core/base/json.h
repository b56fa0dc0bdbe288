/* JSON for the codecs: a strict reader that keeps where each value lies in
 * the source (so an edit can replace one value's bytes and keep the rest of
 * the text as it was), and a compact writer.
 *
 * The reader builds a flat array of nodes (node 0 is the root); strings are
 * decoded (escapes, surrogate pairs) into one text buffer and must be valid
 * UTF-8; depth is bounded (MFS_JSON_DEPTH_MAX). Duplicate keys are kept in
 * order; mfs_json_member takes the last, as most readers do. */
#ifndef MFS_JSON_H
#define MFS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "buf.h"

#define MFS_JSON_DEPTH_MAX 64
#define MFS_JSON_NIL UINT32_MAX

enum mfs_json_type {
	MFS_JSON_NULL, MFS_JSON_FALSE, MFS_JSON_TRUE, MFS_JSON_NUM, MFS_JSON_STR,
	MFS_JSON_ARR, MFS_JSON_OBJ
};

struct mfs_json_node {
	uint8_t type;                /* enum mfs_json_type */
	size_t key, keylen;          /* object members: the decoded key, in text */
	size_t text, textlen;        /* STR: decoded; NUM: as spelled; in text */
	size_t at, span;             /* the value's bytes in the source */
	uint32_t first, last, next;  /* children in order; MFS_JSON_NIL: none */
	uint32_t count;
};

struct mfs_json {
	const char *src;
	size_t len, pos;
	struct mfs_json_node *v;
	uint32_t n, cap;
	struct mfs_buf text;         /* decoded strings and keys, number spellings */
	char err[96];                /* why parsing failed, with the byte offset */
	bool bytes;                  /* strings are bytes: not UTF-8 is kept as is */
};

/* Parse a whole document (any value at the top; trailing white space
 * only). 0, or -1 with j->err set; free j either way. */
int mfs_json_parse(struct mfs_json *j, const void *src, size_t len);
/* The same for strings of bytes written by mfs_json_put_string (GGUF's
 * strings need not be UTF-8): a byte of a string that is not part of a
 * UTF-8 character is taken as it is, so every byte string reads back. */
int mfs_json_parse_bytes(struct mfs_json *j, const void *src, size_t len);
void mfs_json_free(struct mfs_json *j);

/* The last member of object obj named key, or MFS_JSON_NIL. */
uint32_t mfs_json_member(const struct mfs_json *j, uint32_t obj, const char *key);
/* The decoded text of a string or number node, or of a member's key. */
static inline const char *mfs_json_text(const struct mfs_json *j, uint32_t node)
{
	return j->text.p + j->v[node].text;
}
static inline const char *mfs_json_key(const struct mfs_json *j, uint32_t node)
{
	return j->text.p + j->v[node].key;
}

/* Set member key of object obj to the number v (appended if missing);
 * 0 or -ENOMEM. The node no longer has a source span (span 0). */
int mfs_json_set_number(struct mfs_json *j, uint32_t obj, const char *key, uint64_t v);

/* Writing, compact (no white space): a string with JSON escapes (control
 * bytes as \u00XX, other bytes as they are), and a node as
 * nlohmann::json::dump() writes it: objects' members sorted by key bytes,
 * the last of equal keys. 0 or -ENOMEM. */
int mfs_json_put_string(struct mfs_buf *out, const char *s, size_t n);
int mfs_json_dump_sorted(const struct mfs_json *j, uint32_t node, struct mfs_buf *out);

#endif
