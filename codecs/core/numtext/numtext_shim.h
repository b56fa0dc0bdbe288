/* Private to numtext.c and numtext_fast.c: the C entry points of the C++
 * shim over Dragonbox (shortest decimal of a float) and fast_float
 * (correctly rounded parsing). */
#ifndef MFS_NUMTEXT_SHIM_H
#define MFS_NUMTEXT_SHIM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* v = sig * 10^exp, sig without trailing zeros. */
struct mfs_dec32 {
	uint32_t sig;
	int exp;
};
struct mfs_dec64 {
	uint64_t sig;
	int exp;
};

/* Shortest decimal that reads back to v; v must be finite and > 0. */
struct mfs_dec32 mfs_shim_shortest_f32(float v);
struct mfs_dec64 mfs_shim_shortest_f64(double v);

/* Parse a decimal or scientific number without a sign from [first, last),
 * rounding to nearest (ties to even); too large gives infinity. Returns the
 * end of what was read, or NULL when nothing is a number. */
const char *mfs_shim_parse_f32(const char *first, const char *last, float *out);
const char *mfs_shim_parse_f64(const char *first, const char *last, double *out);

#ifdef __cplusplus
}
#endif

#endif
