/* Arrays held in the opposite order to a tensor's storage (the transpose of
 * all axes), brought to storage order a block at a time where they are
 * needed (gather.c): the diff and commit of a C-order .npy written to a
 * column-major tensor, or of a Fortran-order one to a row-major tensor, and
 * the logical order of N-d column-major storage. */
#ifndef MFS_GATHER_H
#define MFS_GATHER_H

#include <stdbool.h>
#include <stdint.h>

#define MFS_GATHER_MAX_DIMS 32

/* Elements [first, first + count) get new values: count * esize bytes,
 * little-endian, in the tensor's storage order. bytes is NULL when the
 * edit has a gather (below): the values are then gathered from it. */
struct mfs_run {
	uint64_t first, count;
	const void *bytes;
};

/* New values held in the opposite order to the tensor's storage (a C-order
 * .npy written to a column-major tensor, or a Fortran-order one to a
 * row-major tensor): storage order is the row-major order of dims, and in
 * holds the same elements in the row-major order of the reversed dims (the
 * transpose of all axes). Gathered a block at a time where they are
 * needed, so that no reordered copy of the whole array is made. in must
 * outlive the patch. */
struct mfs_gather {
	const uint8_t *in;
	unsigned esize;
	uint32_t ndim;              /* >= 2 */
	uint64_t dims[MFS_GATHER_MAX_DIMS];
};

/* g over in for storage order the row-major order of dims (reversed: of
 * the reversed dims); ndim 2 to MFS_GATHER_MAX_DIMS. */
void mfs_gather_init(struct mfs_gather *g, const void *in, unsigned esize, uint32_t ndim,
		     const uint64_t *dims, bool reversed);
/* Storage elements [first, first + n) of g, little-endian, into out. */
void mfs_gather_elems(const struct mfs_gather *g, uint64_t first, uint64_t n, uint8_t *out);
/* Bytes [off, off + len) of g's elements in storage order, into out. */
void mfs_gather_bytes(const struct mfs_gather *g, uint64_t off, uint64_t len, uint8_t *out);

/* Reorder the elements of an array of this shape between row-major and
 * column-major order (to_col: in is row-major, out column-major). */
void mfs_reorder(const uint64_t *dims, uint32_t ndim, unsigned es, const void *in, void *out,
		 bool to_col);

#endif
