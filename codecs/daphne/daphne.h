/* DAPHNE .dbdf codec, private parts shared by its files: the three dialects
 * DAPHNE and its specification write (daphne_parse.c tells them apart), the
 * indexed blocks and frame columns, their tree, storage ops, edits and the
 * .meta sidecar. */
#ifndef MFS_DAPHNE_H
#define MFS_DAPHNE_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"

#define DAPHNE_HEAD 18u            /* version u8, data type u8, rows u64, cols u64 */
#define DAPHNE_DENSE_PREFIX 45u    /* DAPHNE dense: head, vt, rx, cx, #r, #c, bt, vt */
#define DAPHNE_CSR_PREFIX 53u      /* ... and nnz u64 */
#define DAPHNE_BLOCK_HEAD 9u       /* #r u32, #c u32, bt u8 */
/* Every block costs at least 25 bytes, and each one becomes a directory of
 * about ten nodes: beyond this many, the tree would dwarf the file. */
#define DAPHNE_MAX_BLOCKS 65536u
/* Sparse and multi-block storage is shown densely too (values.txt,
 * data.npy), but a few bytes could declare a matrix of 2^60 zeros, which no
 * view could render. A dense form may hold at most this many values, or 4096
 * per byte of the file. Beyond that, a sparse tensor (a CSR matrix, a CSR,
 * COO or empty block) is shown without its dense views (MFS_TF_NODENSE:
 * shape, dtype and matrix.mtx only); a dense matrix (data type 1) not
 * stored as one block of its type, and a frame (its columns and frame.csv
 * are dense), are refused. */
#define DAPHNE_DENSE_FLOOR (1ull << 22)
#define DAPHNE_DENSE_PER_BYTE 4096ull

enum daphne_dialect { DAPHNE_DAPHNE = 0, DAPHNE_DAPHNE01, DAPHNE_SPEC };
enum daphne_dt { DAPHNE_DENSE = 1, DAPHNE_CSR = 2, DAPHNE_FRAME = 3 };
enum daphne_bt { DAPHNE_B_EMPTY = 0, DAPHNE_B_DENSE = 1, DAPHNE_B_CSR = 2, DAPHNE_B_COO = 3 };

/* A value type code as the model shows it. */
struct daphne_vt {
	uint8_t dtype;      /* enum mfs_dtype */
	uint8_t size;       /* bytes per value */
	const char *name;   /* DAPHNE's name (.meta "valueType"); the dtype name for
			       opaque types (str, fixedstr16) */
};

/* The value type of code in a dialect's table, or NULL. */
const struct daphne_vt *daphne_vt(enum daphne_dialect d, unsigned code);

/* One block of a matrix or frame, checked when the file was indexed. */
struct daphne_block {
	uint64_t at;          /* offset of its rx field */
	uint64_t head;        /* offset of its header (#r) */
	uint64_t rx, cx;      /* position in the object */
	uint32_t rows, cols;
	uint8_t bt;           /* enum daphne_bt */
	uint8_t vt;           /* value type code (empty blocks: the object's) */
	uint8_t dtype, esize; /* empty blocks: the object's */
	uint8_t ixsize;       /* CSR column index / COO index bytes: 4 or 8 */
	uint8_t cntsize;      /* CSR per-row count bytes (spec 4, DAPHNE 0.1 8); 0:
				 DAPHNE's row offset array */
	bool nocol;           /* COO of a 1-column block: no column index */
	uint64_t data;        /* dense: values; CSR: first row (spec, 0.1) or the
				 row offsets (DAPHNE); COO: first entry */
	uint64_t cidx, vals;  /* DAPHNE CSR: column indices, values */
	uint64_t end;         /* first byte after the block */
	uint64_t nnz;         /* stored values (dense: rows * cols; empty: 0) */
	uint64_t *rowent;     /* CSR: rows + 1 entry indices where each row starts */
	uint64_t *cpos;       /* COO: row * cols + col of the entries, sorted */
	uint32_t *cent;       /* COO: the entry index of each cpos */
};

/* What a label is: bytes from the .meta or the file (not NUL-terminated). */
struct daphne_label {
	const char *s;
	size_t len;
};

/* The whole index of a file (m->priv, in the model's arena). */
struct daphne_file {
	enum daphne_dialect dialect;
	uint8_t dt;                 /* enum daphne_dt */
	uint64_t rows, cols;
	uint8_t vt;                 /* matrices: the header's value type */
	uint8_t dtype, esize;       /* matrices: the whole matrix's element type */
	bool raw;                   /* one dense block of the matrix's type covers
				       it: raw storage, `data`, reshape */
	bool nodense;               /* a CSR matrix too large to show densely */
	struct daphne_block *blocks;  /* in file order */
	uint32_t nblocks;
	uint32_t *byrow;            /* blocks with a nonzero area, by rx */
	uint32_t nbyrow;
	uint64_t maxrows;           /* tallest of them */
	uint64_t *nzpre;            /* entries before block k (nblocks + 1) */
	/* frames */
	uint8_t *ccode;             /* per column: value type code */
	uint8_t *cdtype, *csize;    /* per column: dtype, bytes */
	struct daphne_label *flabels; /* spec frames: the labels in the file */
	uint64_t *coloff;           /* DAPHNE frames: column offset in a record */
	uint64_t recs, recsize;     /* DAPHNE frames: first record, record size */
};

/* Tensor tags: what a tensor shows. */
enum { DAPHNE_T_ROOT = 1, DAPHNE_T_BLOCK, DAPHNE_T_COLUMN };
#define DAPHNE_TAG(kind, i) (((uint64_t)(kind) << 32) | (uint32_t)(i))
#define DAPHNE_TAG_KIND(t) ((unsigned)((t) >> 32))
#define DAPHNE_TAG_INDEX(t) ((uint32_t)(t))

/* ---- daphne_parse.c: matrices ------------------------------------------- */
/* Tell the dialect of a dense or CSR matrix file by its exact size and
 * index its blocks; m->priv is d. Returns 0 or -errno with a message. */
int daphne_parse_matrix(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err);
/* Spec dialect: walk blocks from pos to the end of the file. Returns 1 when
 * they end exactly there (d->blocks set), 0 when they do not (why says what
 * went wrong), -errno on failure. */
int daphne_walk_blocks(struct mfs_model *m, struct daphne_file *d, uint64_t pos, char *why,
		       size_t whylen, struct mfs_err *err);
/* Check positions and overlaps of d's blocks, the content of sparse blocks,
 * and build the lookup tables (byrow, nzpre). */
int daphne_check_blocks(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err);

/* Whether a dense form of rows x cols values is within what the file can
 * reasonably stand for (see DAPHNE_DENSE_FLOOR). */
bool daphne_dense_fits(const struct mfs_model *m, uint64_t rows, uint64_t cols);
/* Refuse a dense form that does not fit. */
int daphne_check_dense(const struct mfs_model *m, uint64_t rows, uint64_t cols,
		       struct mfs_err *err);

/* ---- daphne_frame.c ------------------------------------------------------ */
int daphne_parse_frame(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err);
/* frames' columns/, frame.csv (and blocks/ for spec frames) */
void daphne_frame_tree(struct mfs_model *m, struct daphne_file *d);

/* ---- daphne_tree.c ------------------------------------------------------- */
/* The model directory's tensor (the whole matrix), header/ and blocks/. */
void daphne_matrix_tree(struct mfs_model *m, struct daphne_file *d);
/* blocks/<k>/ with row, col, type and the block's tensor views. */
void daphne_blocks_tree(struct mfs_model *m, struct daphne_file *d, mfs_id parent);
/* header/ and dialect */
void daphne_header_tree(struct mfs_model *m, const struct daphne_file *d);

/* ---- daphne_store.c: reading values -------------------------------------- */
extern const struct mfs_tensor_ops daphne_ops;
/* Offset of the value of entry k of block b, with its block-relative row and
 * column; UINT64_MAX if the file no longer holds what was indexed. */
uint64_t daphne_entry(const struct mfs_model *m, const struct daphne_block *b, uint64_t k,
		      uint64_t *row, uint64_t *col);
/* Where (row, col) of block b is stored: 1 (off set), 0 (not stored). */
int daphne_block_locate(const struct mfs_model *m, const struct daphne_block *b, uint64_t row,
			uint64_t col, uint64_t *off);
/* The block holding (row, col) of the object, or NULL. */
const struct daphne_block *daphne_find_block(const struct daphne_file *d, uint64_t row, uint64_t col);
bool daphne_is_zero(uint8_t dt, const void *v);
/* Block k's index in nzpre order for entry e of the matrix. */
uint32_t daphne_entry_block(const struct daphne_file *d, uint64_t e);

/* ---- daphne_edit.c ------------------------------------------------------- */
int daphne_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err);

/* ---- daphne_meta.c: the .meta sidecar (JSON) ----------------------------- */
/* The frame labels of the .meta schema when it is valid JSON with a schema
 * of ncols columns (labels missing from it are NULL); NULL otherwise. */
struct daphne_label *daphne_meta_labels(struct mfs_model *m, uint64_t ncols);
/* A .meta that is not valid JSON (too deep, not UTF-8, ...) or whose
 * numRows or numCols differ from the file's: a note on m (mfs_model_note). */
void daphne_meta_check(struct mfs_model *m, uint64_t rows, uint64_t cols);
/* Whether the .meta has a top-level numeric key (numNonZeros, say). */
bool daphne_meta_has(const uint8_t *side, size_t len, const char *key);
/* The .meta rewritten as DAPHNE writes it (compact JSON, keys sorted, no
 * trailing newline) with numRows / numCols / numNonZeros set where their
 * `set_` flag is on. Returns 0 (*out malloc'ed) or -errno with a message. */
struct daphne_meta_set {
	bool set_rows, set_cols, set_nnz;
	uint64_t rows, cols, nnz;
};
int daphne_meta_rewrite(const uint8_t *side, size_t len, const struct daphne_meta_set *set,
			uint8_t **out, size_t *outlen, struct mfs_err *err);

#endif
