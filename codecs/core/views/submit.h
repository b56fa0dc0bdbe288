/* Turning new values into an edit (submit.c), for the views that accept
 * writes (view_write.c, view_mtx.c): diffed against the old values, handed
 * to the codec, stripped of spans that change nothing. */
#ifndef MFS_SUBMIT_H
#define MFS_SUBMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "edit.h"
#include "model.h"
#include "view.h"

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

#endif
