// The C++ half of numtext.c: shortest decimals from Dragonbox and correctly
// rounded parsing from fast_float (Debian's header-only libraries). No layout
// here; numtext.c turns significand and exponent into text.
#include "numtext_shim.h"

#include <dragonbox/dragonbox.h>
#include <fast_float/fast_float.h>

namespace {

// Callers pass positive values; the sign is written by numtext.c.
constexpr auto no_sign = jkj::dragonbox::policy::sign::ignore;

template <typename T>
const char *parse(const char *first, const char *last, T *out)
{
	T v;
	auto r = fast_float::from_chars(first, last, v, fast_float::chars_format::general);
	if (r.ec != std::errc())
		return nullptr;
	*out = v;
	return r.ptr;
}

} // namespace

// flatten: Dragonbox's inner steps are inlined here, a few ns per value.
extern "C" __attribute__((flatten)) mfs_dec32 mfs_shim_shortest_f32(float v)
{
	auto d = jkj::dragonbox::to_decimal(v, no_sign);
	return mfs_dec32{d.significand, d.exponent};
}

extern "C" __attribute__((flatten)) mfs_dec64 mfs_shim_shortest_f64(double v)
{
	auto d = jkj::dragonbox::to_decimal(v, no_sign);
	return mfs_dec64{d.significand, d.exponent};
}

extern "C" const char *mfs_shim_parse_f32(const char *first, const char *last, float *out)
{
	return parse(first, last, out);
}

extern "C" const char *mfs_shim_parse_f64(const char *first, const char *last, double *out)
{
	return parse(first, last, out);
}
