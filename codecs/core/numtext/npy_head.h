/* The .npy header (NumPy's format 1.0, 2.0 and 3.0): one strict parser,
 * for the NumPy codec's .npy files and .npz members and for what users
 * write into any tensor's data.npy, and the writer numpy.save's layout. */
#ifndef MFS_NPY_HEAD_H
#define MFS_NPY_HEAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"

#define MFS_NPY_MAX_DIMS 32u           /* NumPy's limit (a tensor of more has no data.npy) */
#define MFS_NPY_HEADER_MAX (1u << 20)  /* longest header accepted (NumPy's reader: 10000) */

/* A parsed .npy header. */
struct mfs_npy_head {
	uint8_t major;          /* 1, 2 or 3 */
	uint8_t dtype;          /* enum mfs_dtype */
	uint8_t swap;           /* 0, or the unit size of a big-endian element */
	bool bigendian;         /* descr starts with '>' */
	bool fortran;
	bool structured;        /* descr is a list (dtype set when it names one) */
	uint32_t ndim;
	uint64_t dims[MFS_NPY_MAX_DIMS];
	uint64_t nelem, bytes;  /* element count and byte length of the array */
	uint32_t dict_off, dict_len;  /* the dict literal `{...}` in the header */
	uint32_t descr_off, descr_len;  /* the descr string's text, quotes excluded */
	uint64_t data_off;      /* where the array starts (after the padding) */
};

/* Parse the header at buf[0, len) (len may be less than the whole file: the
 * header must be inside it): the dict literal strictly (exactly 'descr',
 * 'fortran_order' and 'shape', each once, literal values only; sizes may
 * be written as Python 2 longs, 2L). 0; -ENOTSUP for a dtype modelfs does
 * not show (strings, structured, object, datetime): pass through (a structured descr that is exactly
 * one of modelfs's dtypes, complex32 as data.npy writes it, comes with h
 * filled in whole: h->structured and h->dtype); -EINVAL with a message for
 * a malformed header. */
int mfs_npy_parse(const uint8_t *buf, uint64_t len, struct mfs_npy_head *h, struct mfs_err *err);

/* A .npy header as numpy.save writes it, byte for byte (version major,
 * padded so that the data starts at a multiple of 64) for an array of dtype
 * dt, big-endian or not, of the given shape. Returns its length, or 0 when
 * dt has no descr, ndim is over MFS_NPY_MAX_DIMS, or it does not fit out[0,
 * size) or version 1's 16-bit length (then use version 2). */
size_t mfs_npy_write_header(uint8_t major, enum mfs_dtype dt, bool bigendian, bool fortran,
			    uint32_t ndim, const uint64_t *dims, uint8_t *out, size_t size);

#endif
