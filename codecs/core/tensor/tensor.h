/* A tensor's elements, read in storage order (storage.c) or in logical
 * row-major order (tensor.c: byte-swapped, transposed, gathered), for the
 * views and stats. Called inside mfs_guarded(). */
#ifndef MFS_TENSOR_H
#define MFS_TENSOR_H

#include <stdint.h>

#include "error.h"
#include "gather.h"
#include "model.h"

/* Elements [first, first + count) of t in LOGICAL row-major order, each
 * little-endian, into out (tensor.c). */
int mfs_tensor_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err);
/* Elements [first, first + count) in STORAGE order, little-endian
 * (storage.c). */
int mfs_tensor_read_storage(const struct mfs_model *m, const struct mfs_tensor *t,
			    uint64_t first, uint64_t count, void *out, struct mfs_err *err);
/* Storage index of the element at logical row-major index r. */
uint64_t mfs_tensor_storage_index(const struct mfs_tensor *t, uint64_t r);

/* transpose.c: out = the transpose of in (`rows` rows of `cols` elements of
 * es bytes, is elements apart; out gets `cols` rows, os elements apart). */
void mfs_transpose(const uint8_t *in, uint64_t is, uint8_t *out, uint64_t os, uint64_t rows,
		   uint64_t cols, unsigned es);
/* Elements [first, first + count) of the 2-D column-major raw tensor t in
 * logical order, not swapped. */
void mfs_colmajor_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			 uint64_t count, uint8_t *out);
/* Elements [first, first + count) of the column-major tensor t in custom
 * storage (ops) in logical order, by bands each filled in one pass over
 * the storage (colstream.c). */
int mfs_colstream_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			 uint64_t count, uint8_t *out, struct mfs_err *err);

/* bands.c: a model's two band caches (transposed rows, stream bands), made
 * with the model and freed with it. 0 or -ENOMEM. */
int mfs_tensor_bands_init(struct mfs_model *m);
void mfs_tensor_bands_free(struct mfs_model *m);

#endif
