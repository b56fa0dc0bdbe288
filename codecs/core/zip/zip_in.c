/* A member's content read in order through an inflate state of its own:
 * never past the member's declared compressed or uncompressed size, and
 * its end checked (the stream ends there, with all its compressed bytes
 * used and the CRC-32 of the central directory). */
#include <errno.h>
#include <string.h>
#include <zlib.h>

#include "zip_impl.h"

#define SCRATCH 16384u          /* skipped bytes are inflated into this */

int zip_in_start(struct zip_in *s, struct mfs_err *err)
{
	memset(s, 0, sizeof(*s));
	if (inflateInit2(&s->zs, -15) != Z_OK)
		return mfs_error(err, ENOMEM, "out of memory (inflate)");
	return 0;
}

void zip_in_end(struct zip_in *s)
{
	inflateEnd(&s->zs);
}

/* The member is inflated whole: the stream must end here, with all its
 * compressed bytes used and the CRC-32 of the central directory. */
static int check_end(const uint8_t *base, const struct mfs_zip_member *zm,
		     struct zip_in *c, struct mfs_err *err)
{
	uint8_t extra;
	c->zs.next_in = (Bytef *)(base + zm->data_off + c->in);
	c->zs.avail_in = (uInt)(zm->csize - c->in < UINT32_MAX ? zm->csize - c->in : UINT32_MAX);
	c->zs.next_out = &extra;
	c->zs.avail_out = 1;
	int zr = inflate(&c->zs, Z_NO_FLUSH);
	c->in += (uint64_t)(c->zs.next_in - (base + zm->data_off + c->in));
	if (zr != Z_STREAM_END || c->zs.avail_out == 0)
		return mfs_error(err, EIO, "the deflated member at byte %llu holds more than the %llu bytes its header declares",
				 (unsigned long long)zm->data_off, (unsigned long long)zm->usize);
	if (c->in != zm->csize)
		return mfs_error(err, EIO, "the deflated member at byte %llu ends after %llu of its %llu bytes",
				 (unsigned long long)zm->data_off, (unsigned long long)c->in,
				 (unsigned long long)zm->csize);
	if (c->crc != zm->crc)
		return mfs_error(err, EIO, "the member at byte %llu has CRC-32 %08x, its header says %08x",
				 (unsigned long long)zm->data_off, c->crc, zm->crc);
	return 0;
}

/* Inflate len bytes into out (NULL: discard them) from c. */
static int advance(const uint8_t *base, const struct mfs_zip_member *zm, struct zip_in *c,
		   uint8_t *out, uint64_t len, struct mfs_err *err)
{
	uint8_t scratch[SCRATCH];
	while (len) {
		uint64_t want = len;
		uint8_t *dst = out;
		if (!out && want > SCRATCH)
			want = SCRATCH;
		if (!out)
			dst = scratch;
		if (want > (1u << 30))
			want = 1u << 30;
		uint64_t left = zm->csize - c->in;
		c->zs.next_in = (Bytef *)(base + zm->data_off + c->in);
		c->zs.avail_in = (uInt)(left < (1u << 30) ? left : (1u << 30));
		c->zs.next_out = dst;
		c->zs.avail_out = (uInt)want;
		int zr = inflate(&c->zs, Z_NO_FLUSH);
		uint64_t got = want - c->zs.avail_out;
		c->in += (uint64_t)(c->zs.next_in - (base + zm->data_off + c->in));
		c->crc = (uint32_t)crc32(c->crc, dst, (uInt)got);
		c->pos += got;
		if (out)
			out += got;
		len -= got;
		if (zr == Z_STREAM_END && len)
			return mfs_error(err, EIO, "the deflated member at byte %llu ends after %llu bytes, its header declares %llu",
					 (unsigned long long)zm->data_off, (unsigned long long)c->pos,
					 (unsigned long long)zm->usize);
		if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && got))
			return mfs_error(err, EIO, "the deflated member at byte %llu is corrupt after %llu bytes%s%s",
					 (unsigned long long)zm->data_off, (unsigned long long)c->pos,
					 c->zs.msg ? ": " : "", c->zs.msg ? c->zs.msg : "");
	}
	return 0;
}

int zip_in_read(const uint8_t *base, const struct mfs_zip_member *zm, struct zip_in *s,
		uint8_t *out, uint64_t len, struct mfs_err *err)
{
	int r = advance(base, zm, s, out, len, err);
	if (r == 0 && s->pos == zm->usize && !s->ended) {
		r = check_end(base, zm, s, err);
		s->ended = r == 0;
	}
	return r;
}
