/* Private to the numtext*.c files: what the minifloats (numtext_mini.c)
 * share with float16's and float32's code. */
#ifndef MFS_NUMTEXT_IMPL_H
#define MFS_NUMTEXT_IMPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { MFS_FT_NUM, MFS_FT_INF, MFS_FT_NAN };

/* A float token split into its sign and its body [p, end). */
struct mfs_ftok {
	const char *p, *end;
	bool neg;
};

/* MFS_FT_NUM (body still to be checked by the shim), MFS_FT_INF,
 * MFS_FT_NAN or -EINVAL. */
int mfs_scan_float(const char *s, size_t n, struct mfs_ftok *t);

/* Compare the unsigned decimal [p, end), which fast_float accepted, with
 * 0.dd[0..nd) x 10^dexp (nd > 0, no trailing zero digit) exactly: -1, 0
 * or 1. */
int mfs_cmp_dec_text(const char *p, const char *end, const char *dd, int nd, int dexp);

/* sig * 10^k (0 < sig < 10^9) in the layout of numtext.h, with a '-'
 * first when neg; "nan"/"inf" and "0" with their signs. */
size_t mfs_fmt_dec32(char *out, bool neg, uint32_t sig, int k);
size_t mfs_fmt_special(char *out, bool neg, bool nan);
size_t mfs_fmt_zero(char *out, bool neg);

#endif
