/* Bump allocator: see arena.h. */
#include "arena.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

struct mfs_arena_block {
	struct mfs_arena_block *next;
	size_t size;
	_Alignas(16) unsigned char data[];
};

#define BLOCK_FIRST 2048          /* small models stay small */
#define BLOCK_MAX (64 * 1024)     /* blocks double up to this */

void mfs_arena_init(struct mfs_arena *a)
{
	a->head = NULL;
	a->used = a->avail = a->total = 0;
}

void mfs_arena_free(struct mfs_arena *a)
{
	struct mfs_arena_block *b = a->head;
	while (b) {
		struct mfs_arena_block *n = b->next;
		free(b);
		b = n;
	}
	mfs_arena_init(a);
}

/* The block a request of need bytes (rounded) takes when the head block
 * has no room: its size, and whether it is the request's own. */
static size_t block_size(const struct mfs_arena *a, size_t need, bool *own)
{
	/* Large requests get a block of their own, so a huge one does not
	 * waste the rest of the current block. */
	size_t next = a->head ? a->avail * 2 : BLOCK_FIRST;
	if (next > BLOCK_MAX)
		next = BLOCK_MAX;
	*own = need > BLOCK_MAX / 4;
	return *own ? need : (need > next ? need : next);
}

size_t mfs_arena_growth(const struct mfs_arena *a, size_t size)
{
	size_t need = (size + 7) & ~(size_t)7;
	if (need < size)
		return SIZE_MAX;
	if (a->head && a->avail - a->used >= need)
		return 0;
	bool own;
	return block_size(a, need, &own);
}

void *mfs_arena_alloc(struct mfs_arena *a, size_t size)
{
	size_t need = (size + 7) & ~(size_t)7;
	if (need < size)
		return NULL;
	if (!a->head || a->avail - a->used < need) {
		bool own;
		size_t bs = block_size(a, need, &own);
		if (bs > SIZE_MAX - sizeof(struct mfs_arena_block))
			return NULL;
		struct mfs_arena_block *b = malloc(sizeof(*b) + bs);
		if (!b)
			return NULL;
		b->size = bs;
		a->total += bs;
		if (a->head && own) {
			/* Keep filling the current block; link the big one behind it. */
			b->next = a->head->next;
			a->head->next = b;
			return b->data;
		}
		b->next = a->head;
		a->head = b;
		a->used = 0;
		a->avail = bs;
	}
	void *p = a->head->data + a->used;
	a->used += need;
	return p;
}
