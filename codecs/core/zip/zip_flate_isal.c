/* zip_flate.h with Intel's ISA-L: isal_inflate on a raw deflate stream
 * (crc_flag ISAL_GZIP_NO_HDR: it computes the gzip CRC-32, the same as
 * zip's, of what it puts out, and checks no trailer). Its state is one
 * flat struct of about 87 KiB (its 64 KiB history and look-ahead buffer
 * included) with no pointer into itself, so a copy is a memcpy. */
#include <stdlib.h>
#include <string.h>
#include <isa-l/igzip_lib.h>

#include "zip_flate.h"

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
	uint32_t ain = (uint32_t)(*in_len < (1u << 31) ? *in_len : (1u << 31));
	uint32_t aout = (uint32_t)(*out_len < (1u << 31) ? *out_len : (1u << 31));
	f->st.next_in = (uint8_t *)*in;
	f->st.avail_in = ain;
	f->st.next_out = *out;
	f->st.avail_out = aout;
	int r = isal_inflate(&f->st);
	size_t used = ain - f->st.avail_in, made = aout - f->st.avail_out;
	*in += used;
	*in_len -= used;
	*out += made;
	*out_len -= made;
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
