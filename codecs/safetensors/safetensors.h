/* safetensors: 8-byte little-endian header length N, N bytes of JSON, then
 * the byte buffer (LAYOUT.md "safetensors"). Shared by the codec's files. */
#ifndef MFS_SAFETENSORS_H
#define MFS_SAFETENSORS_H

#include <stdint.h>

#include "codec.h"
#include "json.h"

/* The reference library refuses longer headers. */
#define ST_HEADER_MAX 100000000u

/* One tensor entry of the header; spans are offsets in the header text. */
struct st_tensor {
	uint64_t begin, end;        /* data_offsets, relative to the buffer */
	size_t shape_at, shape_len; /* the "shape" array's bytes */
	size_t offs_at, offs_len;   /* the "data_offsets" array's bytes */
	uint32_t rank;              /* position in buffer order */
};

/* One __metadata__ entry: its string value's bytes (quotes included). */
struct st_meta {
	size_t at, len;
};

/* m->priv of a safetensors file (in the model's arena). */
struct st_file {
	uint64_t hlen;              /* N */
	uint32_t ntensors, nmeta;
	struct st_tensor *t;        /* in header order (tag of each mfs_tensor) */
	uint32_t *order;            /* indices of t in buffer order */
	struct st_meta *meta;       /* tag of each metadata/<key> node */
};

/* A shape has at most this many dimensions (real ones have a few; the
 * format sets no limit, and a longer one is refused at parse). */
#define ST_DIMS_MAX 1024u

/* One tensor entry while the header is parsed and its tree built. */
struct st_entry {
	uint32_t node;              /* the member in the JSON */
	enum mfs_dtype dt;
	unsigned bits;              /* 0: a dtype the format does not define */
	const char *tname;          /* the dtype string lower-cased (opaque) */
	uint32_t ndim;
	const uint64_t *dims;       /* in the parse's pool of dimensions */
};

/* The parse of one file's header (st_header.c) and what builds its tree
 * (st_tree.c). */
struct st_parse {
	struct mfs_model *m;
	struct mfs_json j;
	struct st_file *f;
	struct st_entry *e;         /* of each f->t */
	uint32_t *mnodes;           /* the JSON node of each f->meta */
	uint64_t *pool;             /* every entry's dimensions */
	int64_t held;               /* bytes charged for e, mnodes and pool */
	struct mfs_err *err;
};

/* st_header.c: parse and check the header (the reference library's rules)
 * and build the tree of a safetensors file. */
int mfs_st_open_file(struct mfs_model *m, struct mfs_err *err);
/* st_tree.c: element bits of a dtype string, and the dtype it shows as
 * (MFS_DT_OPAQUE for strings without one); 0 bits when unknown. */
unsigned mfs_st_dtype(const char *s, enum mfs_dtype *dt);
/* st_tree.c: the tree of a checked header (LAYOUT.md "safetensors"). */
int mfs_st_build_tree(struct st_parse *h);

/* st_edit.c */
int mfs_st_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err);

/* st_index.c: a sharded checkpoint's index (.safetensors.index.json). */
int mfs_st_open_index(struct mfs_model *m, struct mfs_err *err);
/* Whether name ends in ".safetensors.index.json". */
bool mfs_st_is_index_name(const char *name);

#endif
