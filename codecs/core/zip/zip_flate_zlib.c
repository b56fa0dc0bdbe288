/* zip_flate.h with zlib: inflate with a raw window of 32 KiB, the CRC-32
 * of what comes out computed after each call (zlib's inflate computes none
 * for raw streams); deflate at the level the member's flags tell. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "zip_flate.h"
#include "zip_zdeflate.h"

/* z_stream keeps a pointer to itself: a zip_flate never moves once made. */
struct zip_flate {
	z_stream zs;
	uint32_t crc;
};

const char zip_flate_library[] = "zlib";
/* The stream, and inflate's state with its 32 KiB window. */
const size_t zip_flate_size = sizeof(struct zip_flate) + (44u << 10);

struct zip_flate *zip_flate_new(void)
{
	struct zip_flate *f = calloc(1, sizeof(*f));
	if (f && inflateInit2(&f->zs, -15) != Z_OK) {
		free(f);
		f = NULL;
	}
	return f;
}

struct zip_flate *zip_flate_copy(const struct zip_flate *f)
{
	struct zip_flate *c = malloc(sizeof(*c));
	if (!c)
		return NULL;
	c->crc = f->crc;
	if (inflateCopy(&c->zs, (z_stream *)&f->zs) != Z_OK) {
		free(c);
		return NULL;
	}
	return c;
}

void zip_flate_free(struct zip_flate *f)
{
	if (!f)
		return;
	inflateEnd(&f->zs);
	free(f);
}

int zip_flate_run(struct zip_flate *f, const uint8_t **in, size_t *in_len,
		  uint8_t **out, size_t *out_len, const char **why)
{
	uint32_t ain, aout;
	ZIP_FLATE_POINT(f->zs, in, in_len, out, out_len, 1u << 30, ain, aout);
	int zr = inflate(&f->zs, Z_NO_FLUSH);
	size_t made = aout - f->zs.avail_out;
	f->crc = (uint32_t)crc32(f->crc, *out, (uInt)made);
	zip_flate_moved(in, in_len, ain - f->zs.avail_in, out, out_len, made);
	if (zr == Z_STREAM_END)
		return ZIP_FLATE_END;
	if (zr == Z_OK || zr == Z_BUF_ERROR)  /* (no progress possible) */
		return ZIP_FLATE_MORE;
	*why = f->zs.msg ? f->zs.msg : "invalid deflate data";
	return ZIP_FLATE_BAD;
}

uint64_t zip_flate_in(const struct zip_flate *f)
{
	return f->zs.total_in;
}

uint32_t zip_flate_crc(const struct zip_flate *f)
{
	return f->crc;
}

/* ---- deflating: zlib at the level the flags tell (zip_zdeflate.h) ---- */

struct zip_deflater {
	struct zdeflate z;
};

size_t zip_deflater_mem(uint16_t flags)
{
	(void)flags;
	return sizeof(struct zip_deflater) + ZDEFLATE_STATE;
}

struct zip_deflater *zip_deflater_new(uint16_t flags)
{
	static const int level[4] = {Z_DEFAULT_COMPRESSION, 9, 2, 1};
	struct zip_deflater *d = malloc(sizeof(*d));
	if (d && zdeflate_init(&d->z, level[(flags >> 1) & 3]) < 0) {
		free(d);
		d = NULL;
	}
	return d;
}

void zip_deflater_free(struct zip_deflater *d)
{
	if (!d)
		return;
	deflateEnd(&d->z.zs);
	free(d);
}

int zip_deflater_run(struct zip_deflater *d, const uint8_t **in, size_t *in_len,
		     uint8_t **out, size_t *out_len, int last)
{
	return zdeflate_run(&d->z, in, in_len, out, out_len, last);
}
