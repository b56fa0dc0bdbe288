/* zlib's raw deflate in pieces, for the deflaters of zip_flate_zlib.c and
 * zip_flate_isal.c (which keeps zlib for the maximum level). */
#ifndef MFS_ZIP_ZDEFLATE_H
#define MFS_ZIP_ZDEFLATE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "zip_flate.h"

/* deflate's state at memLevel 8: its window, hash and pending buffer. */
#define ZDEFLATE_STATE (260u << 10)

/* z_stream keeps a pointer to itself: a zdeflate never moves once made. */
struct zdeflate {
	z_stream zs;
};

static inline int zdeflate_init(struct zdeflate *z, int level)
{
	memset(z, 0, sizeof(*z));
	return deflateInit2(&z->zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK ? 0 : -1;
}

static inline int zdeflate_run(struct zdeflate *z, const uint8_t **in, size_t *in_len,
			       uint8_t **out, size_t *out_len, int last)
{
	uint32_t ain, aout;
	ZIP_FLATE_POINT(z->zs, in, in_len, out, out_len, 1u << 30, ain, aout);
	int zr = deflate(&z->zs, last && ain == *in_len ? Z_FINISH : Z_NO_FLUSH);
	zip_flate_moved(in, in_len, ain - z->zs.avail_in, out, out_len, aout - z->zs.avail_out);
	if (zr == Z_STREAM_END)
		return ZIP_FLATE_END;
	return zr == Z_OK || zr == Z_BUF_ERROR ? ZIP_FLATE_MORE : ZIP_FLATE_BAD;
}

#endif
