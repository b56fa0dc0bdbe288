/* Private parts of the views: growable buffers, the chunked text machinery
 * shared by values.txt, matrix.mtx and frame.csv, and per-view entry points
 * called by view.c (always inside mfs_guarded). */
#ifndef MFS_VIEW_IMPL_H
#define MFS_VIEW_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"
#include "view.h"

struct mfs_buf {
	char *p;
	size_t len, cap;
};
int mfs_buf_reserve(struct mfs_buf *b, size_t extra);
void mfs_buf_free(struct mfs_buf *b);

/* A text file made of a fixed head followed by chunks rendered on demand.
 * Chunk k's byte offset is known once chunks 0..k-1 were rendered (in order,
 * by a sequential reader) or after a full pass (for the size). */
struct mfs_chunked;
typedef int (*mfs_chunk_fn)(struct mfs_model *m, const void *obj, uint64_t k,
			    struct mfs_buf *out, struct mfs_err *err);

struct mfs_chunked {
	pthread_mutex_t lock;
	const void *obj;            /* passed to render */
	mfs_chunk_fn render;
	uint64_t nchunks;
	char *head;                 /* fixed prefix (may be empty), owned */
	size_t head_len;
	uint64_t *offs;             /* nchunks + 1 body offsets; offs[i] valid for i <= known */
	uint64_t known;
	bool sized;                 /* known == nchunks */
};

int mfs_chunked_init(struct mfs_chunked *c, const void *obj, mfs_chunk_fn render,
		     uint64_t nchunks, const char *head, size_t head_len);
void mfs_chunked_destroy(struct mfs_chunked *c);
/* Exact size: renders every chunk not yet measured (on all cores when large). */
int mfs_chunked_size(struct mfs_model *m, struct mfs_chunked *c, uint64_t *size,
		     struct mfs_err *err);
ssize_t mfs_chunked_read(struct mfs_model *m, struct mfs_chunked *c, uint64_t off,
			 size_t len, char *buf, struct mfs_rcache *rc, struct mfs_err *err);

/* Per-tensor and per-frame caches, created on first use (model.c frees). */
struct mfs_tcache {
	struct mfs_chunked values;  /* values.txt */
	struct mfs_chunked mtx;     /* matrix.mtx (sparse tensors) */
	bool has_values, has_mtx;
	char *npy_head;             /* .npy header (malloc'd, npy_head_len bytes) */
	size_t npy_head_len;
};
struct mfs_tcache *mfs_tcache_get(struct mfs_model *m, const struct mfs_tensor *t,
				  struct mfs_err *err);
struct mfs_chunked *mfs_frame_cache(struct mfs_model *m, uint32_t frame, struct mfs_err *err);

#define MFS_CHUNK_ELEMS 4096u  /* elements (or entries, or rows) per text chunk: a small
				 * read renders (and touches) a few KiB only */

/* Elements [first, first + count) of t in LOGICAL row-major order, each
 * little-endian, into out (tensor.c). */
int mfs_tensor_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err);
/* Elements [first, first + count) in STORAGE order, little-endian. */
int mfs_tensor_read_storage(const struct mfs_model *m, const struct mfs_tensor *t,
			    uint64_t first, uint64_t count, void *out, struct mfs_err *err);
/* Storage index of the element at logical row-major index r. */
uint64_t mfs_tensor_storage_index(const struct mfs_tensor *t, uint64_t r);
/* Reorder the elements of an array of this shape between row-major and
 * column-major order (to_col: in is row-major, out column-major). */
void mfs_reorder(const uint64_t *dims, uint32_t ndim, unsigned es, const void *in, void *out,
		 bool to_col);

/* values.txt (view_values.c) */
int mfs_values_render(struct mfs_model *m, const void *tensor, uint64_t k,
		      struct mfs_buf *out, struct mfs_err *err);
uint64_t mfs_values_nchunks(const struct mfs_tensor *t);
/* The separator after logical element i of a tensor of this shape. */
const char *mfs_values_sep(const uint64_t *dims, uint32_t ndim, uint64_t i, uint64_t nelem);

/* data.npy header (view_npy.c): fills h (at most 1024 bytes), returns its length. */
size_t mfs_npy_header(const struct mfs_tensor *t, char *h);
/* Parse a .npy header: dtype, shape and order of the array that follows. */
struct mfs_npy_info {
	enum mfs_dtype dtype;
	bool fortran;
	uint32_t ndim;
	uint64_t dims[32];
	uint64_t data_off;   /* where the array bytes start */
};
int mfs_npy_parse_header(const char *buf, size_t len, struct mfs_npy_info *info,
			 struct mfs_err *err);

/* matrix.mtx (view_mtx.c) and frame.csv (view_csv.c) */
int mfs_mtx_render(struct mfs_model *m, const void *tensor, uint64_t k,
		   struct mfs_buf *out, struct mfs_err *err);
size_t mfs_mtx_head(const struct mfs_tensor *t, char *h, size_t size);
int mfs_csv_render(struct mfs_model *m, const void *frame, uint64_t k,
		   struct mfs_buf *out, struct mfs_err *err);
int mfs_mtx_write(struct mfs_model *m, mfs_id node, const struct mfs_content *c,
		  struct mfs_patch *p, struct mfs_err *err);

/* Writing (view_write.c helpers shared with view_mtx.c) */
/* Read the whole content into a NUL-terminated buffer (caller frees). */
int mfs_content_load(const struct mfs_content *c, char **out, struct mfs_err *err);
/* Build and submit an edit with changed runs of t: diff new (storage order,
 * nelem elements) against the old values; returns 1 when nothing changed. */
int mfs_submit_values(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *newv,
		      struct mfs_patch *p, struct mfs_err *err);
/* Ask the codec for the patch and drop spans that change nothing; returns 1
 * when the patch changes nothing. */
int mfs_submit_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err);

/* Tokens of a values text: blanks (space, tab, CR, LF) and commas separate. */
struct mfs_tokens {
	const char *s;
	size_t len, pos;
};
/* Next token; false at the end. */
bool mfs_next_token(struct mfs_tokens *t, const char **tok, size_t *n);

#endif
