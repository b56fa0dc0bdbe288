/* Private parts of the views: growable buffers, the chunked text machinery
 * shared by values.txt, matrix.mtx and frame.csv, and per-view entry points
 * called by view.c (always inside mfs_guarded). */
#ifndef MFS_VIEW_IMPL_H
#define MFS_VIEW_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "model.h"
#include "numtext.h"
#include "tensor.h"
#include "view.h"


/* A text file made of a fixed head followed by chunks rendered on demand.
 * Chunk k's byte offset is known once chunks 0..k-1 were rendered (in order,
 * by a sequential reader) or after a full pass (for the size). */
struct mfs_chunked;
/* Render chunk k, appended to out. scratch: a buffer the caller keeps from
 * one call to the next, which the renderer may grow and use meanwhile
 * (elements gathered on the way); its content does not outlive the call. */
typedef int (*mfs_chunk_fn)(struct mfs_model *m, const void *obj, uint64_t k,
			    struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err);

/* Optional, for the size: add the text length of every chunk into
 * lens[0, nchunks), for part `part` of `nparts` slices of the work (the
 * slices together count each byte once), without rendering. Called from
 * several threads at once, each with lens of its own. */
typedef int (*mfs_measure_fn)(struct mfs_model *m, const void *obj, uint64_t part,
			      uint64_t nparts, uint32_t *lens, struct mfs_err *err);

/* Optional, for streaming: chunks [k, k + n) at once, back to back into out,
 * the length of each into lens (same text as n calls of render). */
typedef int (*mfs_chunks_fn)(struct mfs_model *m, const void *obj, uint64_t k, uint64_t n,
			     struct mfs_buf *out, uint64_t *lens, struct mfs_buf *scratch,
			     struct mfs_err *err);

/* The lengths of the chunks whose source bytes all lie in a hole of the
 * file (zeros: their text is known without reading them) into lens, the
 * others' as MFS_LEN_UNKNOWN; returns how many are unknown. */
#define MFS_LEN_UNKNOWN UINT64_MAX
typedef uint64_t (*mfs_zeros_fn)(struct mfs_model *m, const void *obj, uint64_t *lens);

struct mfs_chunked {
	pthread_mutex_t lock;
	pthread_mutex_t size_lock;  /* one size pass at a time (readers go on) */
	const void *obj;            /* passed to render */
	mfs_chunk_fn render;
	mfs_chunks_fn render_n;     /* NULL: windows render chunk by chunk */
	mfs_measure_fn measure;     /* NULL: the size renders every chunk */
	mfs_zeros_fn zeros;         /* NULL: no shortcut for a source all in a hole */
	uint64_t nparts;            /* slices of the work for measure */
	uint64_t nchunks;
	char *head;                 /* fixed prefix (may be empty), owned */
	size_t head_len;
	uint64_t *offs;             /* nchunks + 1 body offsets; offs[i] valid for i <= known */
	uint64_t known;
	bool sized;                 /* known == nchunks */
	/* Text kept from the size pass (view_keep.c), under lock: per window
	 * of MFS_KEEP_CHUNKS chunks, NULL once read through or dropped. */
	char **kept;
	uint64_t nkept;             /* windows */
	uint64_t kept_len;          /* bytes still kept */
	uint64_t kept_used;         /* when last read (monotonic seconds) */
	struct mfs_chunked *keep_prev, *keep_next;  /* views keeping text, oldest first */
	bool keep_linked;
	/* The runtime whose list holds this view and whose budget counts its
	 * kept text (set once, NULL: never kept): the reaper reaches views
	 * through that list, and a view freed with its model leaves it. */
	struct mfs_runtime *keep_rt;
};

int mfs_chunked_init(struct mfs_chunked *c, const void *obj, mfs_chunk_fn render,
		     uint64_t nchunks, const char *head, size_t head_len);
void mfs_chunked_destroy(struct mfs_chunked *c);
/* Exact size: renders every chunk not yet measured (on all cores when large). */
int mfs_chunked_size(struct mfs_model *m, struct mfs_chunked *c, uint64_t *size,
		     struct mfs_err *err);
ssize_t mfs_chunked_read(struct mfs_model *m, struct mfs_chunked *c, uint64_t off,
			 size_t len, char *buf, struct mfs_rcache *rc, struct mfs_err *err);

/* view_keep.c: the size pass of a view of MFS_KEEP_MIN_CHUNKS chunks or
 * more renders its text and keeps it, in windows of MFS_KEEP_CHUNKS chunks,
 * under one budget for all views. Returns 0 when sized and kept, 1 when not
 * tried (small, or the text would not fit: size it the two-pass way), or
 * -errno. */
#define MFS_KEEP_CHUNKS 64
#define MFS_KEEP_MIN_CHUNKS 32
int mfs_keep_pass(struct mfs_model *m, struct mfs_chunked *c, struct mfs_err *err);
/* Copy kept text from body offset body (inside chunk k) into buf, up to len
 * bytes or the end of k's window, freeing a window read through; 0 when
 * k's text is not kept. Caller holds c->lock. */
size_t mfs_keep_read(struct mfs_chunked *c, uint64_t k, uint64_t body, char *buf, size_t len);
/* Hand kept text [body, body + len) (cut at the end of the text) to send
 * in place, as pieces of the kept windows, under c->lock; then free the
 * windows read through. False, sending nothing, when any of it is not kept
 * or body is at the end. */
bool mfs_keep_send(struct mfs_chunked *c, uint64_t body, size_t len, mfs_send_fn send,
		   void *ctx);
/* Free what c keeps (mfs_chunked_destroy). */
void mfs_keep_drop(struct mfs_chunked *c);

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

/* values.txt (view_values.c) */
int mfs_values_render(struct mfs_model *m, const void *tensor, uint64_t k,
		      struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err);
int mfs_values_render_n(struct mfs_model *m, const void *tensor, uint64_t k, uint64_t n,
			struct mfs_buf *out, uint64_t *lens, struct mfs_buf *scratch,
			struct mfs_err *err);
/* Sizing without rendering, for float tensors in memory (NULL otherwise);
 * *nparts is set to the number of slices of the work. */
mfs_measure_fn mfs_values_measurer(const struct mfs_tensor *t, uint64_t *nparts);
uint64_t mfs_values_nchunks(const struct mfs_tensor *t);
/* The separator after logical element i of a tensor of this shape. */
const char *mfs_values_sep(const uint64_t *dims, uint32_t ndim, uint64_t i, uint64_t nelem);


/* matrix.mtx (view_mtx.c) and frame.csv (view_csv.c) */
int mfs_mtx_render(struct mfs_model *m, const void *tensor, uint64_t k,
		   struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err);
size_t mfs_mtx_head(const struct mfs_tensor *t, char *h, size_t size);
int mfs_csv_render(struct mfs_model *m, const void *frame, uint64_t k,
		   struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err);
int mfs_mtx_write(struct mfs_model *m, mfs_id node, const struct mfs_content *c,
		  struct mfs_patch *p, struct mfs_err *err);

/* Writing (submit.c, for view_write.c and view_mtx.c) */
/* Read the whole content into a NUL-terminated buffer (caller frees). */
int mfs_content_load(const struct mfs_content *c, char **out, struct mfs_err *err);
/* Ask the codec for the patch and drop spans that change nothing; returns 1
 * when the patch changes nothing. */
int mfs_submit_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err);
/* Build and submit an edit with changed runs of t: diff newv (storage order,
 * nelem elements, or nnz entries of a sparse tensor) against the old values;
 * returns 1 when nothing changed. kept: newv lives as long as p (the runs
 * point into it), else the changed bytes are copied into p. */
int mfs_submit_values(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *newv,
		      bool kept, struct mfs_patch *p, struct mfs_err *err);
/* The same from values in logical order (a sparse tensor's dense form
 * included): brought to storage order a block at a time. */
int mfs_submit_logical(struct mfs_model *m, const struct mfs_tensor *t, uint8_t *logical,
		       struct mfs_patch *p, struct mfs_err *err);
/* Every element anew, with dtype dt and shape (ndim, dims) (t allows it):
 * storage holds nelem elements and lives as long as p. */
int mfs_submit_reshape(struct mfs_model *m, const struct mfs_tensor *t, enum mfs_dtype dt,
		       uint32_t ndim, const uint64_t *dims, const uint8_t *storage, uint64_t nelem,
		       struct mfs_patch *p, struct mfs_err *err);
/* A sparse tensor written densely: the stored entries take the new values;
 * any other nonzero value is refused. */
int mfs_submit_dense(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *dense,
		     struct mfs_patch *p, struct mfs_err *err);
/* New values in the order opposite to t's storage (in), diffed a block at
 * a time through a gather (no reordered copy), when mfs_gatherable(t).
 * kept: in lives as long as p. */
bool mfs_gatherable(const struct mfs_tensor *t);
int mfs_submit_reordered(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *in,
			 bool kept, struct mfs_patch *p, struct mfs_err *err);
/* data written: the elements its extents (c->ext) cover, diffed (c->size
 * is nelem * esize, checked by the caller). */
int mfs_submit_extents(struct mfs_model *m, const struct mfs_tensor *t,
		       const struct mfs_content *c, struct mfs_patch *p, struct mfs_err *err);

/* Tokens of a values text: blanks (space, tab, CR, LF) and commas separate
 * (view_parse.c). */
struct mfs_tokens {
	const char *s;
	size_t len, pos;
};
/* Next token; false at the end. */
bool mfs_next_token(struct mfs_tokens *t, const char **tok, size_t *n);
/* The small float type whose data.npy is widened to float32, or
 * MFS_MINI_NONE (view.c sizes and reads it, view_write.c narrows it back). */
static inline enum mfs_mini mfs_npy_widened(const struct mfs_tensor *t)
{
	return (enum mfs_mini)mfs_dtype_info((enum mfs_dtype)t->dtype)->mini;
}

/* values.txt of t (not char8) written: the early check of the complete
 * values of text (mfs_view_check_prefix), which keeps them in st. */
int mfs_values_check(struct mfs_runtime *rt, const struct mfs_tensor *t, const char *text,
		     size_t len, struct mfs_check *st, struct mfs_err *err);
/* The new content of t's values.txt (not char8) as nelem values in logical
 * order, little-endian, at *vals; parses only what c->checked did not. The
 * caller frees *owned (NULL, or *vals). Checks every value and the count. */
int mfs_values_parse(struct mfs_runtime *rt, const struct mfs_tensor *t,
		     const struct mfs_content *c, uint8_t **vals, uint8_t **owned,
		     struct mfs_err *err);

#endif
