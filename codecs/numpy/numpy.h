/* NumPy codec, private parts shared by its files: the .npy header
 * (core/npy_head.c), .npy files (numpy.c), .npz archives (the zip itself is
 * core/zip/'s: npz.c builds the tree, npz_read.c reads deflated members,
 * npz_edit.c writes). The tree is docs/layout.md "NumPy". */
#ifndef MFS_NUMPY_H
#define MFS_NUMPY_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "npy_head.h"
#include "zip.h"

/* The tensor of an array described by h whose elements start at off. */
void npy_tensor(const struct mfs_npy_head *h, uint64_t off, struct mfs_tensor *t);
/* A new array for tensor t of a .npy described by h after reshape edit e
 * (npy_new.c): its header (h's version and byte order, t's storage order,
 * e's shape) kept by p, then the elements of e's runs, which give every
 * element in order and whose bytes outlive p. */
struct npy_new {
	const uint8_t *head;
	size_t hl;
	const struct mfs_run *runs; /* a copy of e's, kept by p */
	size_t nruns;
	unsigned esize, swap;       /* swap: the array is big-endian */
	uint64_t size;              /* header and elements */
	size_t at;                  /* the run the last read ended in */
};

int npy_new_make(struct npy_new *nw, struct mfs_patch *p, const struct mfs_npy_head *h,
		 const struct mfs_tensor *t, const struct mfs_edit *e, struct mfs_err *err);
/* Bytes [off, off + n) of the new .npy (ctx: a struct npy_new), the
 * elements byte-swapped to the array's order: a struct mfs_zip_src's read. */
int npy_new_read(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err);
/* A span of p replacing [off, off + len) of the source by the elements:
 * the run's own bytes when they can be written as they are, else made as
 * the commit writes them. */
int npy_new_elems(struct mfs_patch *p, struct npy_new *nw, uint64_t off, uint64_t len,
		  struct mfs_err *err);
/* Long doubles (float128, complex256: `<f16`, `<c32`) have values only
 * where their bytes are x87 extended numbers, as NumPy writes them on
 * x86-64; under the same descr other platforms write IEEE binary128 (or a
 * pair of doubles). The first elements, data[0, n) (n up to
 * NPY_LONG_SAMPLE bytes), decide (mfs_f128_x87): when they are not x87,
 * t becomes an opaque tensor of that dtype's name and size (`shape`,
 * `dtype`, `data`). Other dtypes are left alone. */
#define NPY_LONG_SAMPLE 1024u  /* 64 float128 values */
void npy_long_double(struct mfs_tensor *t, const uint8_t *data, size_t n);

/* ---- .npz ---------------------------------------------------------------- */

/* The state of an open .npz (m->priv): its zip structure (core/zip/) and
 * the .npy header of each member. */
struct npz {
	struct mfs_zip zip;
	struct mfs_npy_head *heads;     /* per member; dtype MFS_DT_INVALID: not a tensor */
	struct mfs_zip_reader *reader;  /* deflated members' bytes */
};

int npz_open(struct mfs_model *m, struct mfs_err *err);
void npz_close(struct mfs_model *m);
int npz_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
	     struct mfs_err *err);

/* Bytes [off, off + len) of member i's uncompressed content (through the
 * archive's inflate cursors). 0, or -EIO with a message. */
int npz_member_read(const struct mfs_model *m, uint32_t i, uint64_t off, uint64_t len,
		    uint8_t *out, struct mfs_err *err);
/* A deflated .npy member's elements (tag is the member). */
extern const struct mfs_tensor_ops npz_deflated_ops;
/* A deflated member's bytes as they are (a file under files/: tag is the
 * member). */
extern const struct mfs_tensor_ops npz_member_ops;

#endif
