/* One value converted exactly between the integer and float32/float64
 * dtypes (a DAPHNE block of another value type than its matrix's): through
 * the value itself, never an undefined cast; whether the value was kept. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "dtype.h"

enum num_kind { NUM_S, NUM_U, NUM_F };

struct num {
	enum num_kind kind;
	int64_t i;
	uint64_t u;
	double f;
};

/* The value at p of dtype dt into *v; false for a dtype none of those. */
static bool load(enum mfs_dtype dt, const void *p, struct num *out)
{
	struct num v = {NUM_S, 0, 0, 0};
	switch (dt) {
	case MFS_DT_I8: { int8_t x; memcpy(&x, p, 1); v.i = x; break; }
	case MFS_DT_I16: { int16_t x; memcpy(&x, p, 2); v.i = x; break; }
	case MFS_DT_I32: { int32_t x; memcpy(&x, p, 4); v.i = x; break; }
	case MFS_DT_I64: { int64_t x; memcpy(&x, p, 8); v.i = x; break; }
	case MFS_DT_U8: { uint8_t x; memcpy(&x, p, 1); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_U16: { uint16_t x; memcpy(&x, p, 2); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_U32: { uint32_t x; memcpy(&x, p, 4); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_U64: { uint64_t x; memcpy(&x, p, 8); v.kind = NUM_U; v.u = x; break; }
	case MFS_DT_F32: { float x; memcpy(&x, p, 4); v.kind = NUM_F; v.f = x; break; }
	case MFS_DT_F64: { double x; memcpy(&x, p, 8); v.kind = NUM_F; v.f = x; break; }
	default: return false;
	}
	*out = v;
	return true;
}

#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0

/* v as an int64 in [lo, hi]; false (and the nearest bound, or 0 for NaN)
 * when it is not exactly one. */
static bool to_signed(struct num v, int64_t lo, int64_t hi, int64_t *out)
{
	switch (v.kind) {
	case NUM_S:
		*out = v.i < lo ? lo : v.i > hi ? hi : v.i;
		return v.i >= lo && v.i <= hi;
	case NUM_U:
		*out = v.u > (uint64_t)hi ? hi : (int64_t)v.u;
		return v.u <= (uint64_t)hi;
	default:
		if (isnan(v.f)) {
			*out = 0;
			return false;
		}
		if (v.f < -TWO63 || v.f >= TWO63) {
			*out = v.f < 0 ? lo : hi;
			return false;
		}
		int64_t x = (int64_t)v.f;
		*out = x < lo ? lo : x > hi ? hi : x;
		return (double)x == v.f && x >= lo && x <= hi;
	}
}

static bool to_unsigned(struct num v, uint64_t hi, uint64_t *out)
{
	switch (v.kind) {
	case NUM_S:
		*out = v.i < 0 ? 0 : (uint64_t)v.i > hi ? hi : (uint64_t)v.i;
		return v.i >= 0 && (uint64_t)v.i <= hi;
	case NUM_U:
		*out = v.u > hi ? hi : v.u;
		return v.u <= hi;
	default:
		if (isnan(v.f) || v.f < 0 || v.f >= TWO64) {
			*out = isnan(v.f) || v.f < 0 ? 0 : hi;
			return v.f == 0;  /* -0 */
		}
		uint64_t x = (uint64_t)v.f;
		*out = x > hi ? hi : x;
		return (double)x == v.f && x <= hi;
	}
}

/* Whether the double d is exactly the value v. */
static bool same_value(double d, struct num v)
{
	switch (v.kind) {
	case NUM_S:
		return d >= -TWO63 && d < TWO63 && (int64_t)d == v.i;
	case NUM_U:
		return d >= 0 && d < TWO64 && (uint64_t)d == v.u;
	default:
		return d == v.f || (isnan(d) && isnan(v.f));
	}
}

bool mfs_dtype_convert(enum mfs_dtype dst_dt, void *dst, enum mfs_dtype src_dt, const void *src)
{
	struct num v;
	if (!load(src_dt, src, &v))
		return false;  /* dst untouched */
	int64_t s = 0;
	uint64_t u = 0;
	bool ok, sig = true;
	unsigned n = mfs_dtype_info(dst_dt)->size;
	switch (dst_dt) {
	case MFS_DT_I8: ok = to_signed(v, INT8_MIN, INT8_MAX, &s); break;
	case MFS_DT_I16: ok = to_signed(v, INT16_MIN, INT16_MAX, &s); break;
	case MFS_DT_I32: ok = to_signed(v, INT32_MIN, INT32_MAX, &s); break;
	case MFS_DT_I64: ok = to_signed(v, INT64_MIN, INT64_MAX, &s); break;
	case MFS_DT_U8: ok = to_unsigned(v, UINT8_MAX, &u), sig = false; break;
	case MFS_DT_U16: ok = to_unsigned(v, UINT16_MAX, &u), sig = false; break;
	case MFS_DT_U32: ok = to_unsigned(v, UINT32_MAX, &u), sig = false; break;
	case MFS_DT_U64: ok = to_unsigned(v, UINT64_MAX, &u), sig = false; break;
	case MFS_DT_F64: {
		double d = v.kind == NUM_S ? (double)v.i : v.kind == NUM_U ? (double)v.u : v.f;
		memcpy(dst, &d, 8);
		return same_value(d, v);
	}
	case MFS_DT_F32: {
		double d = v.kind == NUM_S ? (double)v.i : v.kind == NUM_U ? (double)v.u : v.f;
		float f;
		if (isfinite(d) && fabs(d) > FLT_MAX)
			f = d < 0 ? -INFINITY : INFINITY;  /* out of range: no undefined cast */
		else
			f = (float)d;
		memcpy(dst, &f, 4);
		return same_value((double)f, v);
	}
	default:
		return false;
	}
	/* In range now: the low bytes are the value (little-endian). */
	if (sig)
		memcpy(dst, &s, n);
	else
		memcpy(dst, &u, n);
	return ok;
}
