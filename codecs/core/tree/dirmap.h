/* The directories a codec makes for path components, found again by
 * (parent, kind, raw component): what a tree built from paths of raw names
 * asks for each component of every path (primitiv's key paths, the dotted
 * tensor names of dotted.c). The raw bytes, before escaping, are what a
 * second path names the same directory by; kind keeps apart entries of one
 * name that are different things (dotted.c's directories and links).
 *
 * An open-addressing hash, at most half full, its names copied into a pool
 * of its own. Memory only: a put that cannot grow it fails with -ENOMEM
 * and leaves the map as it was. Zero-initialized: empty. */
#ifndef MFS_DIRMAP_H
#define MFS_DIRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct mfs_dirmap_entry {
	uint64_t h;
	mfs_id parent, id;     /* id MFS_NONE: an empty slot */
	uint32_t kind;
	size_t off, len;       /* the raw component in the pool */
	size_t xoff, xlen;     /* a second string kept with it (mfs_dirmap_keep) */
};

struct mfs_dirmap {
	struct mfs_dirmap_entry *slots;
	size_t nslots, used;   /* nslots: zero or a power of two */
	char *pool;
	size_t plen, pcap;
};

/* The entry of (parent, kind, s[0, n)), or NULL. */
struct mfs_dirmap_entry *mfs_dirmap_find(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind,
					 const void *s, size_t n);
/* Its node, or MFS_NONE. */
mfs_id mfs_dirmap_get(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind, const void *s,
		      size_t n);
/* Remember node id as (parent, kind, s[0, n)); an entry already there is
 * kept. 0, or -ENOMEM. */
int mfs_dirmap_put(struct mfs_dirmap *d, mfs_id parent, uint32_t kind, const void *s, size_t n,
		   mfs_id id);
/* Keep x[0, n) with entry e (e.g. a link's target); 0, or -ENOMEM (e as
 * it was). */
int mfs_dirmap_keep(struct mfs_dirmap *d, struct mfs_dirmap_entry *e, const void *x, size_t n);
/* Whether the string kept with e is x[0, n). */
bool mfs_dirmap_kept_is(const struct mfs_dirmap *d, const struct mfs_dirmap_entry *e,
			const void *x, size_t n);
void mfs_dirmap_free(struct mfs_dirmap *d);

#endif
