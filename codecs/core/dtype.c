/* The dtype table: names, sizes and .npy descriptors. */
#include "dtype.h"

#include <string.h>

static const struct mfs_dtype_info table[MFS_DT_COUNT] = {
	[MFS_DT_INVALID] = {"invalid", NULL, 0, MFS_DK_OPAQUE, false},
	[MFS_DT_I8] = {"int8", "|i1", 1, MFS_DK_SIGNED, true},
	[MFS_DT_U8] = {"uint8", "|u1", 1, MFS_DK_UNSIGNED, true},
	[MFS_DT_I16] = {"int16", "<i2", 2, MFS_DK_SIGNED, true},
	[MFS_DT_U16] = {"uint16", "<u2", 2, MFS_DK_UNSIGNED, true},
	[MFS_DT_I32] = {"int32", "<i4", 4, MFS_DK_SIGNED, true},
	[MFS_DT_U32] = {"uint32", "<u4", 4, MFS_DK_UNSIGNED, true},
	[MFS_DT_I64] = {"int64", "<i8", 8, MFS_DK_SIGNED, true},
	[MFS_DT_U64] = {"uint64", "<u8", 8, MFS_DK_UNSIGNED, true},
	[MFS_DT_F16] = {"float16", "<f2", 2, MFS_DK_FLOAT, true},
	[MFS_DT_F32] = {"float32", "<f4", 4, MFS_DK_FLOAT, true},
	[MFS_DT_F64] = {"float64", "<f8", 8, MFS_DK_FLOAT, true},
	[MFS_DT_BOOL] = {"bool", "|b1", 1, MFS_DK_BOOL, true},
	/* NumPy has no complex32: a structured descr keeps numpy.load working. */
	[MFS_DT_C32] = {"complex32", "[('re', '<f2'), ('im', '<f2')]", 4, MFS_DK_COMPLEX, true},
	[MFS_DT_C64] = {"complex64", "<c8", 8, MFS_DK_COMPLEX, true},
	[MFS_DT_C128] = {"complex128", "<c16", 16, MFS_DK_COMPLEX, true},
	[MFS_DT_CHAR8] = {"char8", "|u1", 1, MFS_DK_CHAR, true},
	[MFS_DT_CHAR16] = {"char16", NULL, 2, MFS_DK_CHAR, false},
	[MFS_DT_CHAR32] = {"char32", NULL, 4, MFS_DK_CHAR, false},
	[MFS_DT_VOID] = {"void", NULL, 0, MFS_DK_OPAQUE, false},
	[MFS_DT_OPAQUE] = {"opaque", NULL, 0, MFS_DK_OPAQUE, false},
};

const struct mfs_dtype_info *mfs_dtype_info(enum mfs_dtype dt)
{
	if ((unsigned)dt >= MFS_DT_COUNT)
		dt = MFS_DT_INVALID;
	return &table[dt];
}

enum mfs_dtype mfs_dtype_from_npy(const char *descr, size_t len)
{
	/* '=' and '<' mean little-endian here (x86_64, aarch64); '|' and '<'
	 * are interchangeable for one-byte types. */
	for (int dt = MFS_DT_I8; dt < MFS_DT_COUNT; dt++) {
		const char *d = table[dt].npy;
		if (!d || dt == MFS_DT_CHAR8)
			continue;
		size_t dl = strlen(d);
		if (dl != len)
			continue;
		if (memcmp(d, descr, len) == 0)
			return (enum mfs_dtype)dt;
		if (d[0] != '[' && memcmp(d + 1, descr + 1, len - 1) == 0 &&
		    (descr[0] == '<' || descr[0] == '=' || (descr[0] == '|' && table[dt].size == 1)))
			return (enum mfs_dtype)dt;
	}
	return MFS_DT_INVALID;
}
