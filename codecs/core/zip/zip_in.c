/* A member's content read in order through an inflate stream of its own
 * (zip_flate.h): never past the member's declared compressed or
 * uncompressed size, and its end checked (the stream ends there, with all
 * its compressed bytes used and the CRC-32 of the central directory). */
#include <errno.h>
#include <string.h>

#include "zip_impl.h"

#define SCRATCH 16384u          /* skipped bytes are inflated into this */

int zip_in_start(struct zip_in *s, struct mfs_err *err)
{
	memset(s, 0, sizeof(*s));
	if (!(s->fl = zip_flate_new()))
		return mfs_error(err, ENOMEM, "out of memory (inflate)");
	return 0;
}

int zip_in_copy(struct zip_in *s, const struct zip_in *from)
{
	*s = *from;
	return (s->fl = zip_flate_copy(from->fl)) ? 0 : -ENOMEM;
}

void zip_in_end(struct zip_in *s)
{
	zip_flate_free(s->fl);
	s->fl = NULL;
}

/* Up to want bytes into dst from the member's compressed bytes left: the
 * library's answer (zip_flate.h), *got the bytes made. */
static int inflate_some(const uint8_t *base, const struct mfs_zip_member *zm, struct zip_in *c,
			uint8_t *dst, uint64_t want, uint64_t *got, const char **why)
{
	const uint8_t *in = base + zm->data_off + c->in;
	size_t in_len = (size_t)(zm->csize - c->in);  /* all of it: zip_flate_in is exact */
	size_t in0 = in_len, room = (size_t)want;
	int fr = zip_flate_run(c->fl, &in, &in_len, &dst, &room, why);
	c->in += in0 - in_len;
	if (fr == ZIP_FLATE_END)  /* (the library may have read ahead) */
		c->in = zip_flate_in(c->fl);
	*got = want - room;
	c->pos += *got;
	c->crc = zip_flate_crc(c->fl);
	return fr;
}

/* The member is inflated whole: the stream must end here, with all its
 * compressed bytes used and the CRC-32 of the central directory. */
static int check_end(const uint8_t *base, const struct mfs_zip_member *zm,
		     struct zip_in *c, struct mfs_err *err)
{
	uint8_t extra;
	uint64_t got;
	const char *why = NULL;
	int fr = inflate_some(base, zm, c, &extra, 1, &got, &why);
	if (fr == ZIP_FLATE_BAD)
		return mfs_error(err, EIO, "the deflated member at byte %llu is corrupt at its end: %s",
				 (unsigned long long)zm->data_off, why);
	if (got)
		return mfs_error(err, EIO, "the deflated member at byte %llu holds more than the %llu bytes its header declares",
				 (unsigned long long)zm->data_off, (unsigned long long)zm->usize);
	if (fr != ZIP_FLATE_END)
		return mfs_error(err, EIO, "the deflated member at byte %llu does not end within its %llu compressed bytes",
				 (unsigned long long)zm->data_off, (unsigned long long)zm->csize);
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
		uint64_t want = len, got;
		uint8_t *dst = out;
		if (!out && want > SCRATCH)
			want = SCRATCH;
		if (!out)
			dst = scratch;
		if (want > (1u << 30))
			want = 1u << 30;
		uint64_t in0 = c->in;
		const char *why = NULL;
		int fr = inflate_some(base, zm, c, dst, want, &got, &why);
		if (out)
			out += got;
		len -= got;
		if (fr == ZIP_FLATE_BAD)
			return mfs_error(err, EIO, "the deflated member at byte %llu is corrupt after %llu bytes: %s",
					 (unsigned long long)zm->data_off, (unsigned long long)c->pos, why);
		if (fr == ZIP_FLATE_END && len)
			return mfs_error(err, EIO, "the deflated member at byte %llu ends after %llu bytes, its header declares %llu",
					 (unsigned long long)zm->data_off, (unsigned long long)c->pos,
					 (unsigned long long)zm->usize);
		if (!got && c->in == in0)  /* its compressed bytes are used up */
			return mfs_error(err, EIO, "the deflated member at byte %llu is cut short: its %llu compressed bytes make %llu of the %llu bytes its header declares",
					 (unsigned long long)zm->data_off, (unsigned long long)zm->csize,
					 (unsigned long long)c->pos, (unsigned long long)zm->usize);
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
