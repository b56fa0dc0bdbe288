/* A bump allocator: many small allocations freed together (a model's names,
 * shapes and texts). Not thread-safe. */
#ifndef MFS_ARENA_H
#define MFS_ARENA_H

#include <stddef.h>

struct mfs_arena_block;
struct mfs_arena {
	struct mfs_arena_block *head;
	size_t used, avail;  /* in the head block */
	size_t total;        /* bytes allocated from the system */
};

void mfs_arena_init(struct mfs_arena *a);
void mfs_arena_free(struct mfs_arena *a);
/* size bytes aligned to 8; NULL when out of memory. */
void *mfs_arena_alloc(struct mfs_arena *a, size_t size);
/* The bytes mfs_arena_alloc(a, size) would take from the system: 0 when
 * it fits the current block (SIZE_MAX when size overflows). */
size_t mfs_arena_growth(const struct mfs_arena *a, size_t size);

#endif
