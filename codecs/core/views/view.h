/* Views: the content of every file node, computed on demand from the model.
 *
 * Reading decodes only what is asked for: a text view of a large tensor is
 * rendered chunk by chunk (4096 elements), with per-chunk text offsets kept
 * after the first full pass, which is what an exact st_size costs. Raw views
 * of little-endian dense tensors are plain source ranges (mfs_view_segments),
 * which the FUSE layer splices without copying.
 *
 * Writing: the FUSE layer collects what a user wrote to a view (mfs_content)
 * and mfs_view_write() parses and checks it, builds an edit and asks the
 * codec for the patch. Thread-safe on a shared model.
 */
#ifndef MFS_VIEW_H
#define MFS_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "edit.h"
#include "model.h"

/* What a tensor's `shape` and `dtype` views hold ("2 3\n", "float32\n"),
 * written to buf (no NUL added; with 1024 bytes, exactly what the views
 * show, as they use as much); returns the length, newline included. Reads
 * only the model, never the source. */
size_t mfs_tensor_shape_text(const struct mfs_tensor *t, char *buf, size_t size);
/* The dtype file's name without its newline: mfs_tensor_dtype_name (model.h). */

/* Per open file: the last rendered chunk, so sequential reads render each
 * chunk once. May be NULL (then nothing is cached). */
struct mfs_rcache;
struct mfs_rcache *mfs_rcache_new(void);
void mfs_rcache_free(struct mfs_rcache *rc);
/* Workers rendering ahead for rc's reader call hold(arg) before and
 * release(arg) after: what the reader holds around its reads. */
typedef void (*mfs_hold_fn)(void *arg);
void mfs_rcache_hold(struct mfs_rcache *rc, mfs_hold_fn hold, mfs_hold_fn release, void *arg);

int mfs_view_size(struct mfs_model *m, mfs_id id, uint64_t *size, struct mfs_err *err);
/* Whether the size is already known without rendering anything. */
bool mfs_view_size_cheap(const struct mfs_model *m, mfs_id id);
/* Bytes [off, off + len) of the view; returns the count (short only at the
 * end of the file) or -errno. */
ssize_t mfs_view_read(struct mfs_model *m, mfs_id id, uint64_t off, size_t len, void *buf,
		      struct mfs_rcache *rc, struct mfs_err *err);

/* Bytes [off, off + len) of a text view (cut at its end) handed to send in
 * place when its size pass kept them (view_keep.c): no copy on the way to
 * the reader. send runs with the view locked; keep it short (a reply). False,
 * calling nothing, when they are not all kept: read them with mfs_view_read. */
typedef void (*mfs_send_fn)(void *ctx, const struct iovec *iov, int count);
bool mfs_view_send_kept(struct mfs_model *m, mfs_id id, uint64_t off, size_t len,
			mfs_send_fn send, void *ctx);

/* When bytes [off, off + len) of a view are a piece of memory followed by a
 * range of the source file, describe them (returns 1); else 0. */
struct mfs_vseg {
	const void *mem;            /* mem_len bytes first */
	uint64_t mem_len;
	uint64_t src_off, src_len;  /* then src_len bytes of the source at src_off */
};
int mfs_view_segments(const struct mfs_model *m, mfs_id id, uint64_t off, uint64_t len,
		      struct mfs_vseg *seg);

/* What was written to a view. */
struct mfs_extent { uint64_t off, len; };
struct mfs_check;
struct mfs_content {
	uint64_t size;
	/* Bytes [off, off + len) of the new content (within size). */
	int (*read)(void *ctx, uint64_t off, size_t len, void *buf);
	void *ctx;
	/* Optional (NULL): the same bytes in place, when they are in one piece
	 * of memory; else NULL. The memory stays valid while the content is
	 * unchanged, so a patch built from it may point into it (the caller
	 * keeps the content until the patch is freed). */
	const void *(*peek)(void *ctx, uint64_t off, size_t len);
	/* Ranges that were written, sorted and disjoint; bytes outside them are
	 * the view's old bytes. NULL: unknown, all of it may be new. */
	const struct mfs_extent *ext;
	size_t next;
	/* Optional (NULL): the early check of the first checked->off bytes,
	 * which have not changed since (their values are not parsed again).
	 * mfs_view_write may use the room of checked->vals. */
	struct mfs_check *checked;
};

/* Checking what is being written before it is complete, so that the write
 * itself can fail (shells ignore errors from close). For values.txt, the
 * values already followed by a separator are parsed, counted and kept for
 * the commit (mfs_content.checked); a text file that holds one complete line
 * is checked whole. st carries the progress between calls; zero it to start,
 * mfs_check_reset it to start over. text holds the content written so far
 * from offset st->off on (len bytes). Returns 0 or -EINVAL / -ERANGE with a
 * message. */
struct mfs_check {
	uint64_t off;     /* bytes of text already checked */
	uint64_t count;   /* values found in them */
	uint64_t lines;   /* newlines in them */
	/* values.txt: the count values, parsed (logical order, little-endian),
	 * as elements of this dtype in a tensor of nelem elements */
	uint8_t *vals;
	size_t cap;       /* bytes at vals */
	uint64_t nelem;
	int dtype;
};
int mfs_view_check_prefix(struct mfs_model *m, mfs_id id, const char *text, size_t len,
			  struct mfs_check *st, struct mfs_err *err);
/* Free what st holds; zero it. */
void mfs_check_reset(struct mfs_check *st);

/* Parse and check the new content of a file node and build the patch.
 * Returns 0 (p holds the change), 1 (the content changes nothing), or
 * -EINVAL / -ERANGE / -EACCES ... with a message. */
int mfs_view_write(struct mfs_model *m, mfs_id id, const struct mfs_content *c,
		   struct mfs_patch *p, struct mfs_err *err);

#endif
