/* Write buffers: what has been written to an open view, kept as extents
 * over the view's old content (read on demand), so that patching a few bytes
 * of a large view holds only those bytes. No FUSE here. */
#ifndef MFS_WBUF_H
#define MFS_WBUF_H

#include <stdint.h>
#include <sys/types.h>

#include "view.h"

/* Reads bytes [off, off + len) of the old content (within its size). */
typedef int (*wbuf_base_fn)(void *ctx, uint64_t off, size_t len, void *buf);

struct wbuf;
/* cap: most bytes of written data held; beyond it writes fail with -EFBIG.
 * The size is bounded too: a write ending, or a truncation, beyond the old
 * size and beyond cap fails with -EFBIG (holes cost memory when the content
 * is materialized). */
struct wbuf *wbuf_new(uint64_t base_size, wbuf_base_fn base, void *ctx, uint64_t cap);
void wbuf_free(struct wbuf *w);
int wbuf_write(struct wbuf *w, uint64_t off, const void *data, size_t len);
int wbuf_truncate(struct wbuf *w, uint64_t size);  /* 0 or -EFBIG */
ssize_t wbuf_read(struct wbuf *w, uint64_t off, size_t len, void *buf);
uint64_t wbuf_size(const struct wbuf *w);
uint64_t wbuf_held(const struct wbuf *w);      /* bytes of written data held */
/* The content as mfs_content (valid until the next change of w). */
void wbuf_content(struct wbuf *w, struct mfs_content *c);
/* Bytes [off, off + len) in place when one piece of written data holds
 * them all (valid until the next change of w); else NULL. */
const void *wbuf_peek(struct wbuf *w, uint64_t off, size_t len);
/* The lowest offset written or truncated since wbuf_clean (UINT64_MAX:
 * none): bytes below it are as they were then. */
uint64_t wbuf_dirty_from(const struct wbuf *w);
void wbuf_clean(struct wbuf *w);

#endif
