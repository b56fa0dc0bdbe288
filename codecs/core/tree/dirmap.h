/* The directories a codec makes for path components, found again by
 * (parent, kind, raw component): what a tree built from paths of raw names
 * asks for each component of every path (primitiv's key paths, the dotted
 * tensor names of dotted.c). The raw bytes, before escaping, are what a
 * second path names the same directory by; kind keeps apart entries of one
 * name that are different things (dotted.c's directories and links).
 *
 * An open-addressing hash of 8-byte slots, at most half full, over an
 * array of entries, their names copied into a pool of its own. Memory
 * only: a put that cannot grow it fails with -ENOMEM and leaves the map as
 * it was. Zero-initialized: empty. An entry's address holds until the next
 * put. */
#ifndef MFS_DIRMAP_H
#define MFS_DIRMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct mfs_dirmap_entry {
	mfs_id parent, id;
	uint32_t kind;
	size_t off, len;       /* the raw component in the pool */
	size_t xoff, xlen;     /* a second string kept with it (mfs_dirmap_keep) */
};

/* A slot of the hash: its entry's index (UINT32_MAX: empty) and the low
 * bits of the hash of (parent, raw component), which leaves the kind out:
 * the entries of one component of every kind lie on one probe sequence. */
struct mfs_dirmap_slot {
	uint32_t h, at;
};

struct mfs_dirmap {
	struct mfs_dirmap_slot *slots;
	size_t nslots;         /* zero or a power of two */
	struct mfs_dirmap_entry *ents;
	size_t nents, cents;
	char *pool;
	size_t plen, pcap;
};

/* The entry of (parent, kind, s[0, n)), or NULL. */
struct mfs_dirmap_entry *mfs_dirmap_find(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind,
					 const void *s, size_t n);
/* Its node, or MFS_NONE. */
mfs_id mfs_dirmap_get(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind, const void *s,
		      size_t n);
/* The entries of (parent, s[0, n)) of kind 0 and of kind 1 (NULL where
 * none), found by one probe sequence. */
void mfs_dirmap_find2(const struct mfs_dirmap *d, mfs_id parent, const void *s, size_t n,
		      struct mfs_dirmap_entry *out[2]);
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
