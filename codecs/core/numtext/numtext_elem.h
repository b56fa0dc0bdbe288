/* Private to dtype.c and numtext_elem.c: one element of each numeric dtype
 * as text and back, and floats as doubles: the fmt, parse and widen of the
 * dtype table's rows (see struct mfs_dtype_info). */
#ifndef MFS_NUMTEXT_ELEM_H
#define MFS_NUMTEXT_ELEM_H

#include <stddef.h>

#define MFS_ELEM_ROWS(X) \
	X(i8) X(u8) X(i16) X(u16) X(i32) X(u32) X(i64) X(u64) \
	X(f16) X(f32) X(f64) X(bool) X(c32) X(c64) X(c128) \
	X(bf16) X(f8e4m3) X(f8e5m2) X(f128) X(c256)

#define MFS_ELEM_DECL(T) \
	size_t mfs_elem_fmt_##T(char *out, const void *src); \
	int mfs_elem_parse_##T(const char *s, size_t n, void *dst);
MFS_ELEM_ROWS(MFS_ELEM_DECL)
#undef MFS_ELEM_DECL

#define MFS_WIDEN_DECL(T) void mfs_elem_widen_##T(double *out, const void *src, size_t n);
MFS_WIDEN_DECL(f16) MFS_WIDEN_DECL(f32) MFS_WIDEN_DECL(f64)
MFS_WIDEN_DECL(bf16) MFS_WIDEN_DECL(f8e4m3) MFS_WIDEN_DECL(f8e5m2)
MFS_WIDEN_DECL(c32) MFS_WIDEN_DECL(c64) MFS_WIDEN_DECL(c128)
MFS_WIDEN_DECL(f128) MFS_WIDEN_DECL(c256)
#undef MFS_WIDEN_DECL

#endif
