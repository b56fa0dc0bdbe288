/* GGUF (llama.cpp, ggml): the parsed structure of a file and the ggml
 * tensor type table (the dequantizers are dequant.h's). See docs/layout.md
 * "GGUF" for the tree and docs/gguf.md of ggml for the format. */
#ifndef MFS_GGUF_H
#define MFS_GGUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "dequant.h"

/* Value types of the key-value section. */
enum gguf_vt {
	GGUF_U8 = 0, GGUF_I8, GGUF_U16, GGUF_I16, GGUF_U32, GGUF_I32, GGUF_F32, GGUF_BOOL,
	GGUF_STR, GGUF_ARR, GGUF_U64, GGUF_I64, GGUF_F64, GGUF_VT_COUNT
};

#define GGUF_MAX_DIMS 4
#define GGUF_MAX_DEPTH 8           /* arrays of arrays nested deeper are refused */
#define GGUF_DEFAULT_ALIGNMENT 32

/* One key-value pair; offsets are absolute in the source. */
struct gguf_kv {
	uint64_t start;      /* the key's length field */
	uint64_t key;        /* the key's bytes */
	uint64_t key_len;
	uint32_t type;       /* enum gguf_vt */
	uint64_t val;        /* the value (after the type field) */
	uint64_t end;        /* one past the value */
};

struct gguf_tinfo {
	uint64_t name, name_len;   /* absolute offset and length of the name */
	uint32_t ndim;
	uint64_t ne[GGUF_MAX_DIMS]; /* GGUF order: contiguous dimension first */
	uint32_t type;             /* ggml type id */
	uint64_t rel;              /* offset relative to the data section */
	uint64_t nbytes;
};

struct gguf_file {
	uint32_t version;
	uint64_t n_kv, n_tensors;
	struct gguf_kv *kv;
	struct gguf_tinfo *ti;
	uint32_t alignment;
	uint64_t kv_end;     /* end of the key-value section (= start of tensor infos) */
	uint64_t ti_end;     /* end of the tensor infos */
	uint64_t data;       /* start of the data section (ti_end aligned up) */
};

/* One row per ggml type id. */
struct ggml_type_info {
	const char *name;    /* ggml's lower-case name; NULL for unused ids */
	uint32_t blck;       /* elements per block */
	uint32_t bytes;      /* bytes per block */
	uint8_t dtype;       /* enum mfs_dtype of an ordinary tensor, 0 if quantized */
	/* Quantized and dequantizable: nblocks blocks at src to float32 at out. */
	void (*dequant)(const uint8_t *src, float *out, uint64_t nblocks);
};

const struct ggml_type_info *mfs_ggml_type(uint32_t id);

/* Parse the header, key-value section and tensor infos of base[0, size)
 * into f (arrays in the model's arena). 0, or -EINVAL (-ENOMEM) with a
 * message. */
int mfs_gguf_parse(struct mfs_model *m, struct gguf_file *f, struct mfs_err *err);

/* Size in bytes of one element of a scalar value type; 0 for strings and
 * arrays. */
unsigned mfs_gguf_vt_size(uint32_t vt);
/* The bytes one value of type vt at pos takes, in a parsed file. */
uint64_t mfs_gguf_value_len(const uint8_t *base, uint64_t pos, uint32_t vt);
/* The mfs_dtype of a numeric or bool value type; 0 for strings and arrays. */
uint8_t mfs_gguf_vt_dtype(uint32_t vt);

/* A scalar value at p as text ("true"/"false" for bool); out holds 64
 * bytes. Returns the length. */
size_t mfs_gguf_scalar_text(uint32_t vt, const uint8_t *p, char *out);

/* Build the tree of a parsed file (gguf_tree.c). */
int mfs_gguf_tree(struct mfs_model *m, const struct gguf_file *f, struct mfs_err *err);

/* The codec's edit (gguf_edit.c). */
int mfs_gguf_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		  struct mfs_err *err);

/* Node tags: what a node of the tree stands for. */
#define GGUF_TAG_KV 1u      /* a metadata value: index in kv[] */
#define GGUF_TAG_QDATA 2u   /* the raw `data` of a quantized tensor: index in ti[] */
#define GGUF_TAG_NESTED 3u  /* an array in an array of arrays: its value's offset */
#define GGUF_TAG(kind, i) (((uint64_t)(kind) << 56) | (uint64_t)(i))
#define GGUF_TAG_KIND(t) ((unsigned)((t) >> 56))
#define GGUF_TAG_INDEX(t) ((t) & ((1ull << 56) - 1))

#endif
