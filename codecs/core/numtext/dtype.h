/* Element types of tensors, format-neutral, with their NumPy names. */
#ifndef MFS_DTYPE_H
#define MFS_DTYPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum mfs_dtype {
	MFS_DT_INVALID = 0,
	MFS_DT_I8, MFS_DT_U8, MFS_DT_I16, MFS_DT_U16,
	MFS_DT_I32, MFS_DT_U32, MFS_DT_I64, MFS_DT_U64,
	MFS_DT_F16, MFS_DT_F32, MFS_DT_F64,
	MFS_DT_BOOL,
	MFS_DT_C32,    /* two float16 (TenniS COMPLEX32); no NumPy equivalent */
	MFS_DT_C64, MFS_DT_C128,
	MFS_DT_CHAR8,  /* a string: values.txt is its bytes; data.npy is uint8 */
	MFS_DT_CHAR16, MFS_DT_CHAR32,
	MFS_DT_VOID,   /* zero-sized elements */
	MFS_DT_OPAQUE, /* bytes with no numeric meaning; size and name per tensor */
	MFS_DT_BF16,   /* bfloat16: float32's top half; no NumPy equivalent */
	MFS_DT_F8E4M3, /* float8_e4m3fn: no inf, nan is S.1111.111, largest 448 */
	MFS_DT_F8E5M2, /* float8_e5m2: IEEE-like, largest 57344 */
	MFS_DT_F128,   /* NumPy's long double as x86-64 stores it (<f16): x87
			  extended precision in 10 of 16 bytes (numtext_ld.c) */
	MFS_DT_C256,   /* two of them (<c32) */
	MFS_DT_COUNT
};

enum mfs_dkind {
	MFS_DK_SIGNED, MFS_DK_UNSIGNED, MFS_DK_FLOAT, MFS_DK_BOOL,
	MFS_DK_COMPLEX, MFS_DK_CHAR, MFS_DK_OPAQUE,
};

/* One row per element type: everything that differs between dtypes is
 * here, so that adding one is adding a row (code that needs more than a row
 * holds, such as float32's fast text paths, tests the dtype itself). */
struct mfs_dtype_info {
	const char *name;     /* NumPy name, or the format's own lower-case name */
	const char *npy;      /* .npy descr ("<f4"), NULL when there is no .npy view */
	uint8_t size;         /* bytes per element; 0 for void and opaque (per tensor) */
	uint8_t kind;         /* enum mfs_dkind */
	bool numeric;         /* has values.txt */
	bool stats;           /* has stats (mfs_stats_supported) */
	/* values.txt of one element at src (little-endian, any alignment), as
	 * numtext.h says; NULL when not numeric. */
	size_t (*fmt)(char *out, const void *src);
	/* One token into one element at dst: 0, -EINVAL or -ERANGE. */
	int (*parse)(const char *s, size_t n, void *dst);
	const char *range;    /* what it holds, for messages ("0 to 255"); NULL: no values */
	/* Floats and complex: n elements at src as doubles, a complex as its
	 * magnitude (NaN when a part is NaN); NULL for the others (stats
	 * reads integers and bool exactly by kind and size). */
	void (*widen)(double *out, const void *src, size_t n);
	uint8_t part;         /* complex: the dtype of each half; else 0 */
	/* bfloat16 and float8: enum mfs_mini (numtext.h), data.npy shows the
	 * values widened to float32; else 0 */
	uint8_t mini;
	/* Floats: bytes at the end of an element that hold no part of its
	 * value (float128's 6 bytes of padding), so that its sign bit is the
	 * top bit of byte size - pad - 1; else 0 */
	uint8_t pad;
};

const struct mfs_dtype_info *mfs_dtype_info(enum mfs_dtype dt);

/* The dtype of a name of the table ("float32", "bfloat16"); MFS_DT_INVALID
 * if none. */
enum mfs_dtype mfs_dtype_from_name(const char *name);

/* One value of an integer, float32 or float64 dtype as another of them
 * (dtype_convert.c); false when it does not keep its exact value (dst then
 * holds the nearest one: the bound of an integer range, 0 for a NaN, an
 * infinity for a float too large), or when a dtype is none of those (dst
 * then untouched). */
bool mfs_dtype_convert(enum mfs_dtype dst_dt, void *dst, enum mfs_dtype src_dt, const void *src);

/* The dtype of data.npy's elements for a tensor of dtype dt: dt, float32
 * for the small floats (mini), MFS_DT_INVALID when there is no data.npy. */
enum mfs_dtype mfs_npy_dtype(enum mfs_dtype dt);

/* NumPy descr ("<f4", "|u1", ...) to dtype; MFS_DT_INVALID if unknown. */
enum mfs_dtype mfs_dtype_from_npy(const char *descr, size_t len);

/* One element of dtype dt, stored little-endian at src (unaligned is fine),
 * as text (its row's fmt). Numeric dtypes only (mfs_dtype_info(dt)->numeric);
 * CHAR8 formats as the unsigned byte value. */
size_t mfs_fmt_elem(char *out, enum mfs_dtype dt, const void *src);

/* Parse one token into one element of dt, written little-endian at dst (its
 * row's parse). bool accepts 0/1 (and true/false, True/False); complex
 * accepts "re+imj", "re-imj", "(re+imj)", "imj" and a plain real. */
int mfs_parse_elem(enum mfs_dtype dt, const char *s, size_t n, void *dst);

/* A token that mfs_parse_elem refused (r: -EINVAL or -ERANGE), and where it
 * was ("value 3, line 1"): '"abc" is not a number (value 3, line 1)' or
 * '"300" is out of range for uint8, which holds 0 to 255 (value 3, line 1)',
 * worded from dt's row. Returns -EINVAL or -ERANGE. */
int mfs_value_error(struct mfs_err *err, int r, enum mfs_dtype dt, const char *tok, size_t n,
		    const char *where);

#endif
