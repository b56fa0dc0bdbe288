/* Zip archives (PKWARE APPNOTE 6.3) for the codecs whose files are zips
 * (.npz; torch.save files): their structure read and checked, members'
 * bytes read (stored, or deflated through a few inflate cursors kept per
 * archive), and edits as patches (edit.h): a stored member patched in
 * place with its CRC-32 brought up to date everywhere it is written, and
 * members given new content with the directory after them. Nothing here
 * knows what a member holds, and nothing does I/O: the archive is bytes in
 * memory (a mapped source). README.md tells how a read and a rewrite
 * travel. */
#ifndef MFS_ZIP_H
#define MFS_ZIP_H

#include <stdbool.h>
#include <stdint.h>

#include "edit.h"
#include "error.h"

/* One member, from its central directory entry and its local header (both
 * checked against the file). */
struct mfs_zip_member {
	const char *name;       /* raw name (not NUL-terminated), in the source */
	uint32_t name_len;
	uint16_t method;        /* 0 stored, 8 deflated */
	uint16_t flags;
	uint32_t crc;
	uint64_t csize, usize;
	uint64_t cd_off;        /* its central directory entry */
	uint64_t local_off;     /* its local header */
	uint64_t data_off;      /* its (compressed) data */
	/* Where the sizes are written: 0 = the 32-bit fields, else the
	 * offset of the 8-byte value in a zip64 extra field. */
	uint64_t cd_usize_at, cd_csize_at, cd_off_at;
	uint64_t lh_usize_at, lh_csize_at;
	/* flags bit 3 (a data descriptor after the data holds CRC and sizes):
	 * its whole length (0: not found whole; 12 or 20 bytes, 16 or 24 with
	 * its signature first: mfs_zip_dd_crc_at), and whether the local
	 * header holds the CRC-32 and the sizes too (some writers fill both). */
	uint32_t dd_len;
	bool lh_crc, lh_sizes;
};

struct mfs_zip {
	struct mfs_zip_member *mem;  /* in central directory order */
	uint32_t n;
	uint64_t cd_off, cd_size;
	uint64_t eocd_off;      /* the end of central directory record */
	uint64_t z64_off;       /* zip64 end record, or UINT64_MAX */
	uint64_t z64loc_off;    /* zip64 locator, or UINT64_MAX */
};

/* Where member zm's data descriptor (dd_len != 0) holds its CRC-32: after
 * the 4-byte signature when it has one (16 or 24 bytes in all). */
static inline uint64_t mfs_zip_dd_crc_at(const struct mfs_zip_member *zm)
{
	return zm->data_off + zm->csize + (zm->dd_len == 16 || zm->dd_len == 24 ? 4 : 0);
}

/* Whether member zm's local header holds its CRC-32 (always, unless a data
 * descriptor holds it and the writer left the local one 0). */
static inline bool mfs_zip_lh_crc(const struct mfs_zip_member *zm)
{
	return !(zm->flags & 8) || zm->lh_crc;
}

/* The end of member zm's record: its data, and its data descriptor. */
static inline uint64_t mfs_zip_record_end(const struct mfs_zip_member *zm)
{
	return zm->data_off + zm->csize + ((zm->flags & 8) ? zm->dd_len : 0);
}

/* ---- reading (zip_read.c) ------------------------------------------------ */

/* Read the central directory and local headers of the zip at base[0, size)
 * into a (a->mem malloc'd: mfs_zip_free). 0, or -EINVAL with a message
 * (-ENOMEM). Members may not overlap each other or the directory. */
int mfs_zip_read(const uint8_t *base, uint64_t size, struct mfs_zip *a, struct mfs_err *err);
void mfs_zip_free(struct mfs_zip *a);

/* ---- members' bytes (zip_inflate.c) -------------------------------------- */

/* The inflate cursors of one archive: a few inflate states kept at some
 * position of some member, so that sequential reads continue where the
 * last one stopped and threads reading different parts each keep theirs;
 * a reader of a part that follows a cursor another thread holds waits for
 * it (a while at most) rather than inflating the same bytes again.
 * Thread-safe. base and a must outlive it. */
struct mfs_zip_reader;

int mfs_zip_reader_new(struct mfs_zip_reader **out, const uint8_t *base,
		       const struct mfs_zip *a);
void mfs_zip_reader_free(struct mfs_zip_reader *r);
/* Bytes [off, off + len) of member i's uncompressed content (a stored
 * member's are copied from base). The end of a deflated member checks the
 * stream's end, its sizes and its CRC-32. 0, or -EIO with a message
 * (corrupt data, CRC, size, or a source truncated under the read). The
 * caller has checked the method (0 or 8). */
int mfs_zip_read_member(struct mfs_zip_reader *r, uint32_t i, uint64_t off, uint64_t len,
			uint8_t *out, struct mfs_err *err);

/* ---- edits (zip_edit.c) -------------------------------------------------- */

/* Whether member zm can be written: 0, or -EROFS with a message when its
 * sizes are in a data descriptor that was not found whole. */
int mfs_zip_writable(const struct mfs_zip_member *zm, struct mfs_err *err);

/* A stored member patched in place: the same-size spans p->spans[from,
 * p->n), all inside member zm's data, were added by the caller; its new
 * CRC-32, computed from the changed bytes alone, is written where the
 * member keeps it (local header, central directory, data descriptor). 0,
 * or -ENOMEM / -EROFS (a data descriptor not found whole) with a message. */
int mfs_zip_patch_crc(struct mfs_patch *p, const uint8_t *base, const struct mfs_zip_member *zm,
		      size_t from, struct mfs_err *err);

/* New content for a member, made in order: read gives bytes [off, off + n)
 * of it into out, asked for from 0 up (and from 0 again for a second
 * pass); 0, or -errno with a message. ctx must outlive the patch. */
struct mfs_zip_src {
	uint64_t size;
	int (*read)(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err);
	void *ctx;
};
/* A read for content held in memory: ctx is its first byte. */
int mfs_zip_mem_read(void *ctx, uint64_t off, uint64_t n, uint8_t *out, struct mfs_err *err);

/* Bytes [off, off + len) of a member's content become bytes[0, len). */
struct mfs_zip_run {
	uint64_t off, len;
	const uint8_t *bytes;
};

/* A member given new content: src's when src.read is set, else its old
 * content with runs (sorted, disjoint, inside it) written over it, their
 * bytes byte-swapped in units of swap on the way when swap > 1. The runs
 * and their bytes must outlive the patch. */
struct mfs_zip_put {
	uint32_t member;
	struct mfs_zip_src src;
	const struct mfs_zip_run *runs;
	size_t nruns;
	unsigned swap;
};

/* The alignment a torch.save record keeps: its local header's extra field
 * 0x4246 ("FB") pads its data to a multiple of 64. */
#define MFS_ZIP_PAD_ID 0x4246u

/* Members puts[0, n) (n >= 1, each member once) given new content, each
 * by its own method: stored, or deflated again (at the level its flags
 * tell: zip_flate.h) a window at a time; their local headers,
 * data descriptors and central directory entries get the new CRC-32 and
 * sizes, and the offsets of everything after them move. Every other
 * record's bytes are kept, except with align > 0: a record after a
 * changed one whose data starts at a multiple of align and whose local
 * header has an MFS_ZIP_PAD_ID field gets that field's padding resized so
 * that its data still does. What the new bytes take to make is counted in
 * p: a few windows, and the compressed bytes themselves when they are
 * few; else they are made again as the commit writes them (a generated
 * span, checked against the first pass). 0, or -errno with a message. */
int mfs_zip_replace(struct mfs_patch *p, const uint8_t *base, uint64_t size,
		    const struct mfs_zip *a, const struct mfs_zip_put *puts, size_t n, uint32_t align,
		    struct mfs_err *err);

#endif
