/* The dtype table: one row per element type (see struct mfs_dtype_info). */
#include "dtype.h"

#include "numtext.h"
#include "numtext_elem.h"

#include <errno.h>
#include <string.h>

/* A numeric row: name, descr, size, kind, stats, its text functions, range. */
#define NUM(T, name, npy, size, kind, stats, range) \
	{name, npy, size, kind, true, stats, mfs_elem_fmt_##T, mfs_elem_parse_##T, range, NULL, 0, 0, 0}
/* A float row (pad: bytes of padding after its value), and a complex one of
 * two floats of dtype part. */
#define FLOAT(T, name, npy, size, stats, range, pad) \
	{name, npy, size, MFS_DK_FLOAT, true, stats, mfs_elem_fmt_##T, mfs_elem_parse_##T, range, \
	 mfs_elem_widen_##T, 0, 0, pad}
#define COMPLEX(T, name, npy, size, part, range) \
	{name, npy, size, MFS_DK_COMPLEX, true, true, mfs_elem_fmt_##T, mfs_elem_parse_##T, range, \
	 mfs_elem_widen_##T, part, 0, 0}
/* bfloat16 and float8 (no NumPy descr: data.npy widens them to float32). */
#define MINI(T, name, size, range, mini) \
	{name, NULL, size, MFS_DK_FLOAT, true, true, mfs_elem_fmt_##T, mfs_elem_parse_##T, range, \
	 mfs_elem_widen_##T, 0, mini, 0}
/* A row without values.txt. */
#define BYTES(name, size, kind) \
	{name, NULL, size, kind, false, false, NULL, NULL, NULL, NULL, 0, 0, 0}

#define F16_RANGE "-65504 to 65504"
#define F32_RANGE "-3.4028235e+38 to 3.4028235e+38"
#define F64_RANGE "-1.7976931348623157e+308 to 1.7976931348623157e+308"
#define F128_RANGE "-1.189731495357231765e+4932 to 1.189731495357231765e+4932"

static const struct mfs_dtype_info table[MFS_DT_COUNT] = {
	[MFS_DT_INVALID] = BYTES("invalid", 0, MFS_DK_OPAQUE),
	[MFS_DT_I8] = NUM(i8, "int8", "|i1", 1, MFS_DK_SIGNED, true, "-128 to 127"),
	[MFS_DT_U8] = NUM(u8, "uint8", "|u1", 1, MFS_DK_UNSIGNED, true, "0 to 255"),
	[MFS_DT_I16] = NUM(i16, "int16", "<i2", 2, MFS_DK_SIGNED, true, "-32768 to 32767"),
	[MFS_DT_U16] = NUM(u16, "uint16", "<u2", 2, MFS_DK_UNSIGNED, true, "0 to 65535"),
	[MFS_DT_I32] = NUM(i32, "int32", "<i4", 4, MFS_DK_SIGNED, true,
			   "-2147483648 to 2147483647"),
	[MFS_DT_U32] = NUM(u32, "uint32", "<u4", 4, MFS_DK_UNSIGNED, true, "0 to 4294967295"),
	[MFS_DT_I64] = NUM(i64, "int64", "<i8", 8, MFS_DK_SIGNED, true,
			   "-9223372036854775808 to 9223372036854775807"),
	[MFS_DT_U64] = NUM(u64, "uint64", "<u8", 8, MFS_DK_UNSIGNED, true,
			   "0 to 18446744073709551615"),
	[MFS_DT_F16] = FLOAT(f16, "float16", "<f2", 2, true, F16_RANGE, 0),
	[MFS_DT_F32] = FLOAT(f32, "float32", "<f4", 4, true, F32_RANGE, 0),
	[MFS_DT_F64] = FLOAT(f64, "float64", "<f8", 8, true, F64_RANGE, 0),
	[MFS_DT_BOOL] = NUM(bool, "bool", "|b1", 1, MFS_DK_BOOL, true, "0 or 1"),
	/* NumPy has no complex32: a structured descr keeps numpy.load working. */
	[MFS_DT_C32] = COMPLEX(c32, "complex32", "[('re', '<f2'), ('im', '<f2')]", 4, MFS_DT_F16,
			       F16_RANGE),
	[MFS_DT_C64] = COMPLEX(c64, "complex64", "<c8", 8, MFS_DT_F32, F32_RANGE),
	[MFS_DT_C128] = COMPLEX(c128, "complex128", "<c16", 16, MFS_DT_F64, F64_RANGE),
	/* A string: values.txt shows its bytes as uint8 does. */
	[MFS_DT_CHAR8] = NUM(u8, "char8", "|u1", 1, MFS_DK_CHAR, false, "0 to 255"),
	[MFS_DT_CHAR16] = BYTES("char16", 2, MFS_DK_CHAR),
	[MFS_DT_CHAR32] = BYTES("char32", 4, MFS_DK_CHAR),
	[MFS_DT_VOID] = BYTES("void", 0, MFS_DK_OPAQUE),
	[MFS_DT_OPAQUE] = BYTES("opaque", 0, MFS_DK_OPAQUE),
	/* ml_dtypes' names; NumPy has none of them. */
	[MFS_DT_BF16] = MINI(bf16, "bfloat16", 2, "-3.3895314e+38 to 3.3895314e+38", MFS_MINI_BF16),
	[MFS_DT_F8E4M3] = MINI(f8e4m3, "float8_e4m3fn", 1, "-448 to 448", MFS_MINI_E4M3),
	[MFS_DT_F8E5M2] = MINI(f8e5m2, "float8_e5m2", 1, "-57344 to 57344", MFS_MINI_E5M2),
	/* NumPy's names on x86-64, where long double is x87 extended
	 * precision: 10 bytes of value, 6 of padding. */
	[MFS_DT_F128] = FLOAT(f128, "float128", "<f16", 16, true, F128_RANGE, 6),
	[MFS_DT_C256] = COMPLEX(c256, "complex256", "<c32", 32, MFS_DT_F128, F128_RANGE),
};

enum mfs_dtype mfs_npy_dtype(enum mfs_dtype dt)
{
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	if (di->mini)
		return MFS_DT_F32;
	return di->npy ? dt : MFS_DT_INVALID;
}

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

enum mfs_dtype mfs_dtype_from_name(const char *name)
{
	for (int dt = MFS_DT_I8; dt < MFS_DT_COUNT; dt++)
		if (!strcmp(table[dt].name, name))
			return (enum mfs_dtype)dt;
	return MFS_DT_INVALID;
}

size_t mfs_fmt_elem(char *out, enum mfs_dtype dt, const void *src)
{
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	return di->fmt ? di->fmt(out, src) : 0;
}

int mfs_parse_elem(enum mfs_dtype dt, const char *s, size_t n, void *dst)
{
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	return di->parse ? di->parse(s, n, dst) : -EINVAL;
}

int mfs_value_error(struct mfs_err *err, int r, enum mfs_dtype dt, const char *tok, size_t n,
		    const char *where)
{
	char q[MFS_QUOTE_MAX];
	mfs_quote(q, tok, n);
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	if (r == -ERANGE)
		return mfs_error(err, ERANGE, "%s is out of range for %s, which holds %s (%s)", q,
				 di->name, di->range ? di->range : "no values", where);
	const char *what = di->kind == MFS_DK_FLOAT ? "a number"
			 : di->kind == MFS_DK_COMPLEX ? "a complex number"
			 : di->kind == MFS_DK_BOOL ? "a bool (0 or 1)"
			 : "an integer";
	return mfs_error(err, r < 0 ? -r : EINVAL, "%s is not %s (%s)", q, what, where);
}
