/* Large buffers that grow (what is written to a view, the values parsed
 * from it): from 1 MiB on, whole pages from mmap, grown with mremap, which
 * moves page tables and never copies the bytes (realloc copies below its
 * mmap threshold, which grows to 32 MiB). Smaller sizes come from malloc.
 * Sizes are the caller's to remember. No huge pages: in a VM their first
 * use costs more than their faults save (measured). */
#ifndef MFS_BIGBUF_H
#define MFS_BIGBUF_H

#include <stddef.h>

/* size > 0; NULL when out of memory. */
void *mfs_big_alloc(size_t size);
/* p (NULL, or from mfs_big_alloc/resize with size old) to size > 0 bytes,
 * the first min(old, size) kept; NULL when out of memory (p is kept). */
void *mfs_big_resize(void *p, size_t old, size_t size);
void mfs_big_free(void *p, size_t size);

#endif
