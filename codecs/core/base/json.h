/* JSON for the codecs: a strict reader that keeps where each value lies in
 * the source (so an edit can replace one value's bytes and keep the rest of
 * the text as it was), and a compact writer.
 *
 * The reader builds a flat array of 24-byte nodes (node 0 is the root);
 * strings are decoded (escapes, surrogate pairs) into one text buffer and
 * must be valid UTF-8; numbers are read where they are spelled in the
 * source; depth is bounded (MFS_JSON_DEPTH_MAX). Duplicate keys are kept in
 * order; mfs_json_member takes the last, as most readers do.
 *
 * Memory: a node per value kept and each kept string's decoded bytes plus 5
 * (its length and a NUL): at most 12 bytes per source byte (`[0,0,...]`)
 * when every value is kept. A caller that reads only part of a document
 * says which containers' values to keep (mfs_json_opts.keep): the others
 * are checked the same way and counted, and cost nothing (a 100 MB array
 * nobody reads costs no node). Sources are at most MFS_JSON_LEN_MAX bytes. */
#ifndef MFS_JSON_H
#define MFS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "buf.h"

#define MFS_JSON_DEPTH_MAX 64
#define MFS_JSON_NIL UINT32_MAX
#define MFS_JSON_LEN_MAX (1u << 30)
/* mfs_json_opts.keep: every value of a container. */
#define MFS_JSON_KEEP_ALL UINT32_MAX

enum mfs_json_type {
	MFS_JSON_NULL, MFS_JSON_FALSE, MFS_JSON_TRUE, MFS_JSON_NUM, MFS_JSON_STR,
	MFS_JSON_ARR, MFS_JSON_OBJ
};

/* Read the fields through the functions below: key and first are offsets
 * in the decoded text or node indices depending on the type. */
struct mfs_json_node {
	uint32_t at, span;           /* the value's bytes in the source */
	uint32_t key;                /* object members: the decoded key, in text */
	uint32_t next;               /* the next kept value of its container, or NIL */
	uint32_t first;              /* ARR/OBJ: the first kept value (NIL: none);
					STR: the decoded text; NUM: NIL (its text is
					its source bytes) or a text set after parsing */
	uint32_t count : 29;         /* ARR/OBJ: values, kept or not */
	uint32_t type : 3;           /* enum mfs_json_type */
};

struct mfs_json;

struct mfs_json_opts {
	bool bytes;                  /* strings are bytes: not UTF-8 is kept as is */
	/* Asked as each container opens (its node's type, key and at set;
	 * depth 0 is the top value; never inside a container whose values
	 * are not kept): how many of its values to keep as nodes, in order.
	 * The others are checked and counted but get no node and no text.
	 * NULL: every value. */
	uint32_t (*keep)(void *ctx, const struct mfs_json *j, uint32_t node, unsigned depth);
	/* Bytes the reader is about to allocate (> 0; before it does) or has
	 * freed (< 0, from mfs_json_free): false refuses them and the parse
	 * fails ("out of memory"). NULL: no limit. */
	bool (*charge)(void *ctx, int64_t bytes);
	void *ctx;
};

struct mfs_json {
	const char *src;
	size_t len, pos;
	struct mfs_json_node *v;
	uint32_t n;
	size_t cap;
	struct mfs_buf text;         /* decoded strings and keys: [u32 length][bytes][NUL] */
	char err[96];                /* why parsing failed, with the byte offset */
	struct mfs_json_opts o;
	bool sink;                   /* inside a value not kept: check, record nothing */
	bool oom;                    /* the parse failed for memory (or o.charge refused) */
	uint64_t charged;            /* bytes o.charge accepted */
};

/* Parse a whole document (any value at the top; trailing white space
 * only). 0, or -1 with j->err set; free j either way. */
int mfs_json_parse(struct mfs_json *j, const void *src, size_t len);
/* The same for strings of bytes written by mfs_json_put_string (GGUF's
 * strings need not be UTF-8): a byte of a string that is not part of a
 * UTF-8 character is taken as it is, so every byte string reads back. */
int mfs_json_parse_bytes(struct mfs_json *j, const void *src, size_t len);
/* The same with options (o NULL: mfs_json_parse). */
int mfs_json_parse_opts(struct mfs_json *j, const void *src, size_t len,
			const struct mfs_json_opts *o);
void mfs_json_free(struct mfs_json *j);

/* A keep option for documents read two levels deep (safetensors headers,
 * sharded indexes): the top value's values and those of the objects among
 * them; nothing below (a deeper container is one node, its values
 * counted). */
uint32_t mfs_json_keep_shallow(void *ctx, const struct mfs_json *j, uint32_t node,
			       unsigned depth);

/* The last kept member of object obj named key, or MFS_JSON_NIL. */
uint32_t mfs_json_member(const struct mfs_json *j, uint32_t obj, const char *key);

static inline uint32_t mfs_json__reclen(const struct mfs_json *j, uint32_t off)
{
	uint32_t n;
	memcpy(&n, j->text.p + off - 4, 4);
	return n;
}
/* The decoded text of a string or number node (not NUL-terminated for a
 * number read from the source), and its length. */
static inline const char *mfs_json_text(const struct mfs_json *j, uint32_t node)
{
	const struct mfs_json_node *x = &j->v[node];
	if (x->type == MFS_JSON_NUM && x->first == MFS_JSON_NIL)
		return j->src + x->at;
	return j->text.p + x->first;
}
static inline size_t mfs_json_textlen(const struct mfs_json *j, uint32_t node)
{
	const struct mfs_json_node *x = &j->v[node];
	if (x->type == MFS_JSON_NUM && x->first == MFS_JSON_NIL)
		return x->span;
	return mfs_json__reclen(j, x->first);
}
/* A member's decoded key (NUL-terminated; "" for array values). */
static inline const char *mfs_json_key(const struct mfs_json *j, uint32_t node)
{
	return j->text.p + j->v[node].key;
}
static inline size_t mfs_json_keylen(const struct mfs_json *j, uint32_t node)
{
	return mfs_json__reclen(j, j->v[node].key);
}

/* The values of array node (kept or not) read from its source bytes when
 * each is a non-negative integer that fits 64 bits: at most max of them
 * into out; *n is how many it has. false when one is not such a number or
 * there are more than max. */
bool mfs_json_u64s(const struct mfs_json *j, uint32_t node, uint64_t *out, uint32_t max,
		   uint32_t *n);

/* Set member key of object obj to the number v (appended if missing);
 * 0 or -ENOMEM. The node no longer has a source span (span 0). */
int mfs_json_set_number(struct mfs_json *j, uint32_t obj, const char *key, uint64_t v);

/* Writing, compact (no white space): a string with JSON escapes (control
 * bytes as \u00XX, other bytes as they are), and a node as
 * nlohmann::json::dump() writes it: objects' members sorted by key bytes,
 * the last of equal keys (every value of node must have been kept). 0 or
 * -ENOMEM. */
int mfs_json_put_string(struct mfs_buf *out, const char *s, size_t n);
int mfs_json_dump_sorted(const struct mfs_json *j, uint32_t node, struct mfs_buf *out);

#endif
