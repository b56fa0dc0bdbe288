/* One raw deflate stream inflated in pieces: the zip room's only calls into
 * an inflate library. Two files implement it, one chosen at build time (the
 * meson option `isal`): zip_flate_isal.c (Intel's ISA-L, isal_inflate, the
 * faster) and zip_flate_zlib.c (zlib). Both hold bounded state (ISA-L's
 * about 87 KiB, zlib's about 44 KiB), never allocate once started, and keep
 * the CRC-32 of every byte they put out. Nothing here knows of zip
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

#endif
