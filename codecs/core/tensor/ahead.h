/* A tensor's storage read in order, a piece at a time, by a thread of its
 * own one piece ahead of the reader (ahead.c): a pass over a compressed
 * stream inflates on one core while the reader uses the piece before on
 * another. */
#ifndef MFS_AHEAD_H
#define MFS_AHEAD_H

#include <stdint.h>

#include "error.h"
#include "model.h"

struct mfs_ahead;

/* Storage elements [s0, s1) of t in pieces of piece elements, the first
 * being read at once: the reader, or NULL (no memory or thread: the caller
 * reads them itself). */
struct mfs_ahead *mfs_ahead_start(const struct mfs_model *m, const struct mfs_tensor *t,
				  uint64_t s0, uint64_t s1, uint64_t piece);
/* The next piece (the one before it is given back): its elements, *n of
 * them, or NULL with -errno and a message once one could not be read. */
const uint8_t *mfs_ahead_next(struct mfs_ahead *a, uint64_t *n, int *r, struct mfs_err *err);
/* Stop reading (early or not) and free everything. */
void mfs_ahead_stop(struct mfs_ahead *a);

#endif
