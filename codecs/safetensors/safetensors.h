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

/* st_header.c: parse and check the header (the reference library's rules)
 * and build the tree of a safetensors file. */
int mfs_st_open_file(struct mfs_model *m, struct mfs_err *err);
/* Element bits of a dtype string, and the dtype it shows as (MFS_DT_OPAQUE
 * for strings without one); 0 bits when unknown. */
unsigned mfs_st_dtype(const char *s, enum mfs_dtype *dt);

/* st_edit.c */
int mfs_st_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err);

/* st_index.c: a sharded checkpoint's index (.safetensors.index.json). */
int mfs_st_open_index(struct mfs_model *m, struct mfs_err *err);
/* Whether name ends in ".safetensors.index.json". */
bool mfs_st_is_index_name(const char *name);

#endif
