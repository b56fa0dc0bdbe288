/* zip_flate.h with Intel's ISA-L: isal_deflate (zlib's deflate for the
 * maximum level), and isal_inflate on a raw deflate stream
 * (crc_flag ISAL_GZIP_NO_HDR: it computes the gzip CRC-32, the same as
 * zip's, of what it puts out, and checks no trailer). Its state is one
 * flat struct of about 87 KiB (its 64 KiB history and look-ahead buffer
 * included) with no pointer into itself, so a copy is a memcpy. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l/igzip_lib.h>

#include "zip_flate.h"
#include "zip_zdeflate.h"

struct zip_flate {
	struct inflate_state st;
	uint64_t in;            /* input bytes it took */
};

const char zip_flate_library[] = "ISA-L";
const size_t zip_flate_size = sizeof(struct zip_flate);

struct zip_flate *zip_flate_new(void)
{
	struct zip_flate *f = malloc(sizeof(*f));
	if (!f)
		return NULL;
	isal_inflate_init(&f->st);
	f->in = 0;
	f->st.crc_flag = ISAL_GZIP_NO_HDR;
	return f;
}

struct zip_flate *zip_flate_copy(const struct zip_flate *f)
{
	struct zip_flate *c = malloc(sizeof(*c));
	if (c)
		memcpy(c, f, sizeof(*c));
	return c;
}

void zip_flate_free(struct zip_flate *f)
{
	free(f);
}

static const char *why_of(int r)
{
	switch (r) {
	case ISAL_INVALID_BLOCK:
		return "invalid block";
	case ISAL_INVALID_SYMBOL:
		return "invalid code";
	case ISAL_INVALID_LOOKBACK:
		return "invalid distance too far back";
	default:
		return "invalid deflate data";
	}
}

int zip_flate_run(struct zip_flate *f, const uint8_t **in, size_t *in_len,
		  uint8_t **out, size_t *out_len, const char **why)
{
	if (f->st.block_state == ISAL_BLOCK_FINISH)
		return ZIP_FLATE_END;
	uint32_t ain, aout;
	ZIP_FLATE_POINT(f->st, in, in_len, out, out_len, 1u << 31, ain, aout);
	int r = isal_inflate(&f->st);
	size_t used = ain - f->st.avail_in;
	zip_flate_moved(in, in_len, used, out, out_len, aout - f->st.avail_out);
	if (r < 0) {
		*why = why_of(r);
		return ZIP_FLATE_BAD;
	}
	f->in += used;
	return f->st.block_state == ISAL_BLOCK_FINISH ? ZIP_FLATE_END : ZIP_FLATE_MORE;
}

/* Once the stream ended, the whole bytes ISA-L read ahead past it are
 * still in its bit buffer (ISA-L 2.32.1 and later give them back to the
 * input themselves, leaving none there). */
uint64_t zip_flate_in(const struct zip_flate *f)
{
	uint64_t ahead = 0;
	if (f->st.block_state == ISAL_BLOCK_FINISH && f->st.read_in_length > 0)
		ahead = (uint64_t)f->st.read_in_length / 8;
	return ahead < f->in ? f->in - ahead : 0;
}

uint32_t zip_flate_crc(const struct zip_flate *f)
{
	return f->st.crc;
}

/* ---- deflating: ISA-L, or zlib for the maximum level (zip_zdeflate.h) -- */

/* ISA-L's level of each of the flags' four (-1: zlib's 9), and the buffer
 * each level needs (its default, the size it was measured with). */
static const int isal_level[4] = {2, -1, 1, 1};
static const uint32_t level_buf[3] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT,
				      ISAL_DEF_LVL2_DEFAULT};

/* One of the two, holding only the state it uses (zip_deflater_mem says
 * how much). */
struct zip_deflater {
	bool zlib;
	union {
		struct zdeflate z;
		struct isal_zstream is;
	} u;
	uint8_t *buf;           /* ISA-L's level buffer */
};

size_t zip_deflater_mem(uint16_t flags)
{
	int level = isal_level[(flags >> 1) & 3];
	if (level < 0)
		return sizeof(struct zip_deflater) + ZDEFLATE_STATE;
	return sizeof(struct zip_deflater) + level_buf[level];
}

struct zip_deflater *zip_deflater_new(uint16_t flags)
{
	int level = isal_level[(flags >> 1) & 3];
	struct zip_deflater *d = malloc(sizeof(*d));
	if (!d)
		return NULL;
	d->buf = NULL;
	d->zlib = level < 0;
	if (d->zlib) {
		if (zdeflate_init(&d->u.z, 9) < 0) {
			free(d);
			return NULL;
		}
		return d;
	}
	if (!(d->buf = malloc(level_buf[level]))) {
		free(d);
		return NULL;
	}
	isal_deflate_init(&d->u.is);
	d->u.is.level = (uint32_t)level;
	d->u.is.level_buf = d->buf;
	d->u.is.level_buf_size = level_buf[level];
	d->u.is.gzip_flag = IGZIP_DEFLATE;
	return d;
}

void zip_deflater_free(struct zip_deflater *d)
{
	if (!d)
		return;
	if (d->zlib)
		deflateEnd(&d->u.z.zs);
	free(d->buf);
	free(d);
}

int zip_deflater_run(struct zip_deflater *d, const uint8_t **in, size_t *in_len,
		     uint8_t **out, size_t *out_len, int last)
{
	if (d->zlib)
		return zdeflate_run(&d->u.z, in, in_len, out, out_len, last);
	struct isal_zstream *is = &d->u.is;
	uint32_t ain, aout;
	ZIP_FLATE_POINT(*is, in, in_len, out, out_len, 1u << 31, ain, aout);
	is->end_of_stream = last && ain == *in_len;
	is->flush = NO_FLUSH;
	int r = isal_deflate(is);
	zip_flate_moved(in, in_len, ain - is->avail_in, out, out_len, aout - is->avail_out);
	if (r != COMP_OK)
		return ZIP_FLATE_BAD;
	return is->internal_state.state == ZSTATE_END ? ZIP_FLATE_END : ZIP_FLATE_MORE;
}
