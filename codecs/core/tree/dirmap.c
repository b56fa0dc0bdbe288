/* The (parent, kind, raw component) -> directory map of codecs that build
 * trees from paths (dirmap.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "dirmap.h"

#define EMPTY UINT32_MAX

static uint32_t key_hash(mfs_id parent, const void *s, size_t n)
{
	return (uint32_t)mfs_hash64(s, n, parent);
}

/* The entries of (parent, s[0, n)) with hash h, by kind (out[k] for kind k
 * below nk), and the empty slot that ends their probe sequence. */
static struct mfs_dirmap_slot *probe(const struct mfs_dirmap *d, mfs_id parent, const void *s,
				     size_t n, uint32_t h, struct mfs_dirmap_entry **out,
				     uint32_t k0, uint32_t nk)
{
	for (uint32_t k = 0; k < nk; k++)
		out[k] = NULL;
	size_t mask = d->nslots - 1;
	for (size_t j = h & mask;; j = (j + 1) & mask) {
		struct mfs_dirmap_slot *sl = &d->slots[j];
		if (sl->at == EMPTY)
			return sl;
		struct mfs_dirmap_entry *e = &d->ents[sl->at];
		if (sl->h == h && e->parent == parent && e->len == n &&
		    e->kind - k0 < nk && memcmp(d->pool + e->off, s, n) == 0)
			out[e->kind - k0] = e;
	}
}

struct mfs_dirmap_entry *mfs_dirmap_find(const struct mfs_dirmap *d, mfs_id parent, uint32_t kind,
					 const void *s, size_t n)
{
	struct mfs_dirmap_entry *e = NULL;
	if (d->nslots)
		probe(d, parent, s, n, key_hash(parent, s, n), &e, kind, 1);
	return e;
}

void mfs_dirmap_find2(const struct mfs_dirmap *d, mfs_id parent, const void *s, size_t n,
		      struct mfs_dirmap_entry *out[2])
{
	out[0] = out[1] = NULL;
	if (d->nslots)
		probe(d, parent, s, n, key_hash(parent, s, n), out, 0, 2);
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
	if (d->nents >= EMPTY || MFS_ARRAY_RESERVE(d->ents, d->nents, d->cents, 1, 256) < 0)
		return -ENOMEM;
	if ((d->nents + 1) * 2 <= d->nslots)
		return 0;
	size_t n = d->nslots ? d->nslots * 2 : 256;
	if (n < d->nslots || n > SIZE_MAX / sizeof(struct mfs_dirmap_slot))
		return -ENOMEM;
	struct mfs_dirmap_slot *s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i].at = EMPTY;
	for (size_t i = 0; i < d->nslots; i++) {
		if (d->slots[i].at == EMPTY)
			continue;
		size_t j = d->slots[i].h & (n - 1);
		while (s[j].at != EMPTY)
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
	uint32_t h = key_hash(parent, s, n);
	struct mfs_dirmap_entry *e;
	struct mfs_dirmap_slot *free_slot = probe(d, parent, s, n, h, &e, kind, 1);
	if (e)
		return 0;
	size_t off;
	if (pool_add(d, s, n, &off) < 0)
		return -ENOMEM;
	d->ents[d->nents] = (struct mfs_dirmap_entry){parent, id, kind, off, n, 0, 0};
	*free_slot = (struct mfs_dirmap_slot){h, (uint32_t)d->nents++};
	return 0;
}

int mfs_dirmap_keep(struct mfs_dirmap *d, struct mfs_dirmap_entry *e, const void *x, size_t n)
{
	/* e points into the entries, which pool_add leaves where they are. */
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
	free(d->ents);
	free(d->pool);
	memset(d, 0, sizeof(*d));
}
