/* The (parent, kind, raw component) -> directory map of codecs that build
 * trees from paths (dirmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "dirmap.h"

static uint64_t key_hash(mfs_id parent, uint32_t kind, const void *s, size_t n)
{
	return mfs_hash64(s, n, ((uint64_t)parent << 1) | kind);
}

/* The slot of (parent, kind, s[0, n)) with hash h: the matching one or the
 * empty one where it goes. The map has slots. */
static struct mfs_dirmap_entry *slot(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind,
				     const void *s, size_t n, uint64_t h)
{
	size_t mask = d->nslots - 1;
	for (size_t j = (size_t)h & mask;; j = (j + 1) & mask) {
		struct mfs_dirmap_entry *e = &d->slots[j];
		if (e->id == MFS_NONE)
			return e;
		if (e->h == h && e->parent == parent && e->kind == kind && e->len == n &&
		    memcmp(d->pool + e->off, s, n) == 0)
			return e;
	}
}

struct mfs_dirmap_entry *mfs_dirmap_find(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind,
					 const void *s, size_t n)
{
	if (!d->nslots)
		return NULL;
	struct mfs_dirmap_entry *e = slot(d, parent, kind, s, n, key_hash(parent, kind, s, n));
	return e->id == MFS_NONE ? NULL : e;
}

mfs_id mfs_dirmap_get(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind, const void *s,
		      size_t n)
{
	const struct mfs_dirmap_entry *e = mfs_dirmap_find(d, parent, kind, s, n);
	return e ? e->id : MFS_NONE;
}

/* Room for one more entry, the map at most half full. */
static int grow(struct mfs_dirmap *d)
{
	if ((d->used + 1) * 2 <= d->nslots)
		return 0;
	size_t n = d->nslots ? d->nslots * 2 : 256;
	if (n < d->nslots || n > SIZE_MAX / sizeof(struct mfs_dirmap_entry))
		return -ENOMEM;
	struct mfs_dirmap_entry *s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i].id = MFS_NONE;
	for (size_t i = 0; i < d->nslots; i++) {
		if (d->slots[i].id == MFS_NONE)
			continue;
		size_t j = (size_t)d->slots[i].h & (n - 1);
		while (s[j].id != MFS_NONE)
			j = (j + 1) & (n - 1);
		s[j] = d->slots[i];
	}
	free(d->slots);
	d->slots = s;
	d->nslots = n;
	return 0;
}

/* Copy x[0, n) to the end of the pool; its offset in *off. One spare byte:
 * the pool exists even when every string is empty. */
static int pool_add(struct mfs_dirmap *d, const void *x, size_t n, size_t *off)
{
	if (MFS_ARRAY_RESERVE(d->pool, d->plen, d->pcap, n + 1, 256) < 0)
		return -ENOMEM;
	if (n)
		memcpy(d->pool + d->plen, x, n);
	*off = d->plen;
	d->plen += n;
	return 0;
}

int mfs_dirmap_put(struct mfs_dirmap *d, mfs_id parent, uint32_t kind, const void *s, size_t n,
		   mfs_id id)
{
	if (grow(d) < 0)
		return -ENOMEM;
	uint64_t h = key_hash(parent, kind, s, n);
	struct mfs_dirmap_entry *e = slot(d, parent, kind, s, n, h);
	if (e->id != MFS_NONE)
		return 0;
	size_t off;
	if (pool_add(d, s, n, &off) < 0)
		return -ENOMEM;
	*e = (struct mfs_dirmap_entry){h, parent, id, kind, off, n, 0, 0};
	d->used++;
	return 0;
}

int mfs_dirmap_keep(struct mfs_dirmap *d, struct mfs_dirmap_entry *e, const void *x, size_t n)
{
	/* e points into the slots, which pool_add leaves where they are. */
	size_t off;
	if (pool_add(d, x, n, &off) < 0)
		return -ENOMEM;
	e->xoff = off;
	e->xlen = n;
	return 0;
}

bool mfs_dirmap_kept_is(const struct mfs_dirmap *d, const struct mfs_dirmap_entry *e,
			const void *x, size_t n)
{
	return e->xlen == n && (n == 0 || memcmp(d->pool + e->xoff, x, n) == 0);
}

void mfs_dirmap_free(struct mfs_dirmap *d)
{
	free(d->slots);
	free(d->pool);
	memset(d, 0, sizeof(*d));
}
