/* The growable byte buffer every part shares (text rendered, spans built,
 * JSON decoded and written, names collected): doubling growth, checked
 * against overflow. Large buffers that must grow without copying are
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
/* Append n bytes; 0 or -ENOMEM. */
int mfs_buf_add(struct mfs_buf *b, const void *p, size_t n);
void mfs_buf_free(struct mfs_buf *b);

#endif
