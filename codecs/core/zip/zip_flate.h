/* Raw deflate streams inflated and deflated in pieces: the zip room's only
 * calls into a deflate library. Two files implement it, one chosen at build
 * time (the meson option `isal`): zip_flate_isal.c (Intel's ISA-L,
 * isal_inflate and isal_deflate, the faster) and zip_flate_zlib.c (zlib).
 * Both inflaters hold bounded state (ISA-L's about 87 KiB, allocated when
 * the stream starts; zlib's about 44 KiB, its 32 KiB window allocated by
 * the first call that puts out bytes) and keep the CRC-32 of every byte
 * they put out. Nothing here knows of zip
 * members: zip_in.c checks a member's sizes and CRC-32 against them. */
#ifndef MFS_ZIP_FLATE_H
#define MFS_ZIP_FLATE_H

#include <stddef.h>
#include <stdint.h>

struct zip_flate;

/* A stream at its start, or NULL (out of memory). */
struct zip_flate *zip_flate_new(void);
/* A copy of f that goes on from where f is, or NULL (out of memory). */
struct zip_flate *zip_flate_copy(const struct zip_flate *f);
void zip_flate_free(struct zip_flate *f);

enum {
	ZIP_FLATE_MORE = 0,     /* out is full or in is used up: call again */
	ZIP_FLATE_END = 1,      /* the stream ended (in is left just past it) */
	ZIP_FLATE_BAD = -1      /* not a valid deflate stream */
};

/* Inflate from *in (*in_len bytes) into *out (*out_len bytes), advancing
 * both: ZIP_FLATE_MORE, ZIP_FLATE_END, or ZIP_FLATE_BAD with *why (static
 * text). A call with input and room always makes progress unless the
 * stream ended or is bad. A library may take input bytes past the
 * stream's end (ISA-L reads 8 bytes ahead): zip_flate_in tells where it
 * ended. */
int zip_flate_run(struct zip_flate *f, const uint8_t **in, size_t *in_len,
		  uint8_t **out, size_t *out_len, const char **why);

/* The input bytes the stream used so far; once it ended, its length. */
uint64_t zip_flate_in(const struct zip_flate *f);

/* The CRC-32 (as zip and gzip compute it) of every byte put out so far. */
uint32_t zip_flate_crc(const struct zip_flate *f);

/* The library that inflates ("ISA-L" or "zlib"), and the bytes one stream
 * holds. */
extern const char zip_flate_library[];
extern const size_t zip_flate_size;

/* ---- for the implementations ------------------------------------------- */

/* Point a library's stream s (zlib's and ISA-L's share the names next_in,
 * avail_in, next_out, avail_out) at *in and *out, at most cap bytes of
 * each; ain and aout get what it was given. */
#define ZIP_FLATE_POINT(s, in, in_len, out, out_len, cap, ain, aout)                  \
	do {                                                                          \
		(ain) = (uint32_t)(*(in_len) < (cap) ? *(in_len) : (cap));            \
		(aout) = (uint32_t)(*(out_len) < (cap) ? *(out_len) : (cap));         \
		(s).next_in = (void *)*(in);                                          \
		(s).avail_in = (ain);                                                 \
		(s).next_out = *(out);                                                \
		(s).avail_out = (aout);                                               \
	} while (0)

/* Advance *in by the used bytes and *out by the made ones. */
static inline void zip_flate_moved(const uint8_t **in, size_t *in_len, size_t used,
				   uint8_t **out, size_t *out_len, size_t made)
{
	*in += used;
	*in_len -= used;
	*out += made;
	*out_len -= made;
}

/* ---- deflating ---------------------------------------------------------- */

/* One raw deflate stream made in pieces, at the level a member's flags
 * tell (bits 1 and 2, as Info-ZIP sets them: normal, maximum, fast, super
 * fast). With ISA-L: its level 2 for normal, 1 for fast and super fast
 * (as small as zlib's level 6 on weights, within 5% on text, 10-40 times
 * as fast), zlib's level 9 for maximum; with zlib alone: zlib's 6, 9, 2,
 * 1. The same content in the same pieces makes the same bytes. */
struct zip_deflater;

struct zip_deflater *zip_deflater_new(uint16_t flags);
void zip_deflater_free(struct zip_deflater *d);
/* Deflate from *in (*in_len bytes) into *out (*out_len bytes), advancing
 * both; last: *in ends the content. ZIP_FLATE_MORE (call again, with
 * more input once *in_len is 0), ZIP_FLATE_END once all of it is out, or
 * ZIP_FLATE_BAD (the library failed: a bug). */
int zip_deflater_run(struct zip_deflater *d, const uint8_t **in, size_t *in_len,
		     uint8_t **out, size_t *out_len, int last);

/* The bytes a deflater for flags holds, at most. */
size_t zip_deflater_mem(uint16_t flags);

#endif
