/* Large growable buffers (bigbuf.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bigbuf.h"

#define BIG_MIN ((size_t)1 << 20)

static size_t pages(size_t size)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	return (size + pg - 1) / pg * pg;
}

void *mfs_big_alloc(size_t size)
{
	if (size < BIG_MIN)
		return malloc(size);
	if (size > SIZE_MAX / 2)
		return NULL;
	void *p = mmap(NULL, pages(size), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *mfs_big_resize(void *p, size_t old, size_t size)
{
	if (!p)
		return mfs_big_alloc(size);
	if (old < BIG_MIN && size < BIG_MIN)
		return realloc(p, size);
	if (old >= BIG_MIN && size >= BIG_MIN) {
		if (size > SIZE_MAX / 2)
			return NULL;
#ifdef MREMAP_MAYMOVE
		void *q = mremap(p, pages(old), pages(size), MREMAP_MAYMOVE);
		return q == MAP_FAILED ? NULL : q;
#endif
	}
	/* Across the threshold (or no mremap): copy. */
	void *q = mfs_big_alloc(size);
	if (!q)
		return NULL;
	memcpy(q, p, old < size ? old : size);
	mfs_big_free(p, old);
	return q;
}

void mfs_big_free(void *p, size_t size)
{
	if (!p)
		return;
	if (size < BIG_MIN)
		free(p);
	else
		munmap(p, pages(size));
}
