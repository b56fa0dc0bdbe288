/* The growable byte buffer every part shares (text rendered, spans built,
 * JSON decoded and written, names collected) and typed arrays: doubling
 * growth, checked against overflow. Large buffers that must grow without copying are
 * bigbuf.h's. */
#ifndef MFS_BUF_H
#define MFS_BUF_H

#include <stddef.h>

struct mfs_buf {
	char *p;
	size_t len, cap;
};

/* Room for extra more bytes after len; 0 or -ENOMEM (b unchanged). */
int mfs_buf_reserve(struct mfs_buf *b, size_t extra);
/* The capacity mfs_buf_reserve(b, extra) leaves b with (b->cap when it
 * has room), or 0 when that overflows: what it will allocate, asked before. */
size_t mfs_buf_grown_cap(const struct mfs_buf *b, size_t extra);
/* Append n bytes; 0 or -ENOMEM. */
int mfs_buf_add(struct mfs_buf *b, const void *p, size_t n);
void mfs_buf_free(struct mfs_buf *b);

/* Typed arrays (a pointer, a count n and a capacity cap in elements of
 * elem bytes): room for more elements after n, the capacity doubling from
 * first (checked against overflow). 0 or -ENOMEM (the array unchanged).
 * vp is the address of the array's pointer, of any object type.
 * MFS_ARRAY_RESERVE(v, n, cap, more, first) takes the pointer and size_t
 * capacity themselves. */
int mfs_array_reserve(void *vp, size_t n, size_t *cap, size_t more, size_t elem, size_t first);
#define MFS_ARRAY_RESERVE(v, n, cap, more, first) \
	mfs_array_reserve(&(v), (n), &(cap), (more), sizeof(*(v)), (first))

#endif
