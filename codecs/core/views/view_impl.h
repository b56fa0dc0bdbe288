/* Private parts of the views: the caches views hang on tensors and frames,
 * and each view's entry points called by view.c and view_write.c (always
 * inside mfs_guarded). The chunked text machinery is chunked.h's, turning
 * new values into an edit submit.h's. */
#ifndef MFS_VIEW_IMPL_H
#define MFS_VIEW_IMPL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "chunked.h"
#include "model.h"
#include "numtext.h"
#include "submit.h"
#include "tensor.h"
#include "view.h"

/* Per-tensor and per-frame caches, created on first use; mfs_model_free
 * frees them. */
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
void mfs_tcache_free(struct mfs_tcache *c);
void mfs_frame_cache_free(struct mfs_chunked *c);  /* view_csv.c */

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
