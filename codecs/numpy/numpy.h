/* NumPy codec, private parts shared by its files: the .npy header
 * (core/npy_head.c), .npy files (numpy.c), .npz archives (npz_zip.c reads the
 * zip structure, npz.c builds the tree, npz_inflate.c reads compressed
 * members, npz_edit.c writes). The layouts are in FORMATS.md "NumPy". */
#ifndef MFS_NUMPY_H
#define MFS_NUMPY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "npy_head.h"

/* The tensor of an array described by h whose elements start at off. */
void npy_tensor(const struct mfs_npy_head *h, uint64_t off, struct mfs_tensor *t);
/* Long doubles (float128, complex256: `<f16`, `<c32`) have values only
 * where their bytes are x87 extended numbers, as NumPy writes them on
 * x86-64; under the same descr other platforms write IEEE binary128 (or a
 * pair of doubles). The first elements, data[0, n) (n up to
 * NPY_LONG_SAMPLE bytes), decide (mfs_f128_x87): when they are not x87,
 * t becomes an opaque tensor of that dtype's name and size (`shape`,
 * `dtype`, `data`). Other dtypes are left alone. */
#define NPY_LONG_SAMPLE 1024u  /* 64 float128 values */
void npy_long_double(struct mfs_tensor *t, const uint8_t *data, size_t n);
/* A whole new array for tensor t of a .npy described by h after reshape
 * edit e: header (h's version and byte order) and elements, kept by p. */
int npy_rewrite(struct mfs_patch *p, const struct mfs_npy_head *h, const struct mfs_tensor *t,
		const struct mfs_edit *e, uint8_t **out, uint64_t *len, struct mfs_err *err);

/* ---- .npz ---------------------------------------------------------------- */

/* One member of a zip archive, from its central directory entry and its
 * local header (both checked against the file). */
struct zip_member {
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
	 * its signature first: zip_dd_crc_at), and whether the local header
	 * holds the CRC-32 and the sizes too (some writers fill both). */
	uint32_t dd_len;
	bool lh_crc, lh_sizes;
};

/* Where member zm's data descriptor (dd_len != 0) holds its CRC-32: after
 * the 4-byte signature when it has one (16 or 24 bytes in all). */
static inline uint64_t zip_dd_crc_at(const struct zip_member *zm)
{
	return zm->data_off + zm->csize + (zm->dd_len == 16 || zm->dd_len == 24 ? 4 : 0);
}

/* Whether member zm's local header holds its CRC-32 (always, unless a data
 * descriptor holds it and the writer left the local one 0). */
static inline bool zip_lh_crc(const struct zip_member *zm)
{
	return !(zm->flags & 8) || zm->lh_crc;
}

struct zip_archive {
	struct zip_member *mem;
	uint32_t n;
	uint64_t cd_off, cd_size;
	uint64_t eocd_off;      /* the end of central directory record */
	uint64_t z64_off;       /* zip64 end record, or UINT64_MAX */
	uint64_t z64loc_off;    /* zip64 locator, or UINT64_MAX */
};

/* Read the central directory and local headers of the zip at base[0, size).
 * a->mem is malloc'd. 0, or -EINVAL with a message. */
int zip_read(const uint8_t *base, uint64_t size, struct zip_archive *a, struct mfs_err *err);

struct npz_cursor;

/* Bytes a cursor inflated to skip ahead, kept for the reader behind it. */
#define NSKIP 2u
struct npz_skip {
	uint32_t member;
	uint64_t start, len;
	uint8_t *buf;
	uint64_t used;
};

/* A cursor out of the table, inflating member `member` up to `end`: a
 * reader of a later part waits for it rather than inflating the same bytes
 * again (threads rendering alternate windows take turns with one cursor). */
#define NBUSY 16u
struct npz_busy {
	uint32_t member;
	uint64_t end;
	uint64_t id;       /* 0: the slot is free */
};

/* The state of an open .npz (m->priv). */
struct npz {
	struct zip_archive zip;
	struct mfs_npy_head *heads;     /* per member; dtype MFS_DT_INVALID: not a tensor */
	pthread_mutex_t lock;       /* the inflate cursors */
	pthread_cond_t moved;       /* a cursor came back (or was dropped) */
	struct npz_cursor **cur;    /* a few live inflate states (npz_inflate.c) */
	struct npz_skip skip[NSKIP];
	struct npz_busy busy[NBUSY];
	uint64_t clock;
};

int npz_open(struct mfs_model *m, struct mfs_err *err);
void npz_close(struct mfs_model *m);
int npz_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
	     struct mfs_err *err);

/* Bytes [off, off + len) of member i's uncompressed content, inflated from
 * the nearest cursor. 0, or -EIO with a message (corrupt data, CRC, size). */
int npz_inflate_read(const struct mfs_model *m, uint32_t i, uint64_t off, uint64_t len,
		     uint8_t *out, struct mfs_err *err);
/* The cursor table of z (npz_inflate_init: 0 or -ENOMEM), and freeing it. */
int npz_inflate_init(struct npz *z);
void npz_inflate_free(struct npz *z);
extern const struct mfs_tensor_ops npz_deflated_ops;
/* A deflated member's bytes as they are (a file under files/: tag is the
 * member). */
extern const struct mfs_tensor_ops npz_member_ops;

#endif
