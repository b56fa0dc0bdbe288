/* The growable byte buffer and typed arrays (buf.h). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"

size_t mfs_buf_grown_cap(const struct mfs_buf *b, size_t extra)
{
	if (b->cap - b->len >= extra)
		return b->cap;
	if (extra > SIZE_MAX - b->len)
		return 0;
	size_t nc = b->cap ? b->cap : 256;
	while (nc - b->len < extra) {
		if (nc > SIZE_MAX / 2)
			return 0;
		nc *= 2;
	}
	return nc;
}

int mfs_buf_reserve(struct mfs_buf *b, size_t extra)
{
	size_t nc = mfs_buf_grown_cap(b, extra);
	if (!nc)
		return -ENOMEM;
	if (nc == b->cap)
		return 0;
	char *p = realloc(b->p, nc);
	if (!p)
		return -ENOMEM;
	b->p = p;
	b->cap = nc;
	return 0;
}

int mfs_buf_add(struct mfs_buf *b, const void *p, size_t n)
{
	if (mfs_buf_reserve(b, n) < 0)
		return -ENOMEM;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

void mfs_buf_free(struct mfs_buf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
}

int mfs_array_reserve(void *vp, size_t n, size_t *cap, size_t more, size_t elem, size_t first)
{
	if (*cap >= n && *cap - n >= more)
		return 0;
	if (more > SIZE_MAX - n || elem == 0)
		return -ENOMEM;
	size_t nc = *cap ? *cap : (first ? first : 1);
	while (nc < n + more) {
		if (nc > SIZE_MAX / 2)
			return -ENOMEM;
		nc *= 2;
	}
	if (nc > SIZE_MAX / elem)
		return -ENOMEM;
	/* The pointer is read and written as bytes: it may be of any type. */
	void *old, *p;
	memcpy(&old, vp, sizeof(old));
	p = realloc(old, nc * elem);
	if (!p)
		return -ENOMEM;
	memcpy(vp, &p, sizeof(p));
	*cap = nc;
	return 0;
}
