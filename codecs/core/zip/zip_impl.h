/* The zip room's private parts shared by its files. */
#ifndef MFS_ZIP_IMPL_H
#define MFS_ZIP_IMPL_H

#include "zip.h"
#include "zip_flate.h"

/* A member's content read in order through an inflate stream of its own
 * (zip_in.c; the stream is zip_flate.h's, whichever library inflates). */
struct zip_in {
	struct zip_flate *fl;
	uint64_t pos;      /* uncompressed bytes produced */
	uint64_t in;       /* compressed bytes consumed */
	uint32_t crc;      /* of the bytes produced */
	bool ended;        /* the member's end was checked */
};

int zip_in_start(struct zip_in *s, struct mfs_err *err);
/* A copy of from that goes on from where it is: 0, or -ENOMEM. */
int zip_in_copy(struct zip_in *s, const struct zip_in *from);
void zip_in_end(struct zip_in *s);
/* The next len bytes of member zm's content into out (NULL: discarded);
 * its end checked once reached. 0, or -EIO with a message. Touches the
 * source: call it under a guard. */
int zip_in_read(const uint8_t *base, const struct mfs_zip_member *zm, struct zip_in *s,
		uint8_t *out, uint64_t len, struct mfs_err *err);

/* A member's new content as the first pass made it (zip_stream.c): its
 * sizes and CRC-32, and the CRC-32 of its compressed bytes, which are data
 * (kept in the patch) or gen's (made again as the commit writes them: the
 * caller gives gen to the patch at once). */
struct zip_new {
	uint64_t usize, clen;
	uint32_t crc, ccrc;
	const uint8_t *data;
	struct mfs_gen *gen;
};

/* The first pass over put's content for member zm: 0, or -errno with a
 * message (-EFBIG beyond what p may hold). */
int zip_compress(struct mfs_patch *p, const uint8_t *base, const struct mfs_zip_member *zm,
		 const struct mfs_zip_put *put, struct zip_new *nw, struct mfs_err *err);

#endif
