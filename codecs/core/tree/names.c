/* Names of nodes: reversible escaping (docs/layout.md "Names"), uniqueness among
 * siblings, and the (parent, name) hash used to build and to look up. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "model_impl.h"
#include "names.h"

#define NAME_MAX_BYTES 255

/* Length of the UTF-8 sequence starting with byte c (1 for other bytes). */
static size_t utf8_len(unsigned char c)
{
	if (c >= 0xF0 && c < 0xF8)
		return 4;
	if (c >= 0xE0)
		return c < 0xF0 ? 3 : 1;
	if (c >= 0xC0)
		return 2;
	return 1;
}

size_t mfs_escape_name(const char *name, size_t len, char out[257])
{
	static const char hex[] = "0123456789ABCDEF";
	if (len == 0) {
		memcpy(out, "%", 2);
		return 1;
	}
	if (len == 1 && name[0] == '.') {
		memcpy(out, "%2E", 4);
		return 3;
	}
	if (len == 2 && name[0] == '.' && name[1] == '.') {
		memcpy(out, "%2E%2E", 7);
		return 6;
	}
	/* Escape into a scratch buffer big enough for the worst case we keep,
	 * stopping once past the limit: the rest only feeds the hash suffix. */
	char buf[NAME_MAX_BYTES + 4];
	size_t o = 0, i = 0;
	size_t cut = 0;  /* a safe place to cut: not inside an escape or UTF-8 char */
	while (i < len && o <= NAME_MAX_BYTES) {
		unsigned char c = (unsigned char)name[i];
		if (c == '%' || c == '/' || c == '\0') {
			buf[o++] = '%';
			buf[o++] = hex[c >> 4];
			buf[o++] = hex[c & 15];
			i++;
		} else {
			/* A whole UTF-8 character stays together; a lead byte
			 * without its continuation bytes stands alone. */
			size_t n = utf8_len(c);
			if (i + n > len)
				n = 1;
			for (size_t k = 1; k < n; k++)
				if (((unsigned char)name[i + k] & 0xC0) != 0x80)
					n = 1;
			for (size_t k = 0; k < n && o < sizeof(buf); k++)
				buf[o++] = name[i++];
		}
		if (o <= NAME_MAX_BYTES - 17)
			cut = o;
	}
	if (i == len && o <= NAME_MAX_BYTES) {
		memcpy(out, buf, o);
		out[o] = '\0';
		return o;
	}
	/* Too long: keep a prefix and add "~" + 16 hex digits of the whole raw
	 * name, so the result is stable and distinct names stay distinct. */
	uint64_t h = mfs_hash64(name, len, 0x6e616d65);
	memcpy(out, buf, cut);
	out[cut] = '~';
	for (int k = 0; k < 16; k++)
		out[cut + 1 + k] = hex[(h >> (60 - 4 * k)) & 15];
	out[cut + 17] = '\0';
	return cut + 17;
}

/* A slot's hash: the (parent, name) hash's low 32 bits, kept beside the id
 * so that growing the table and probing it touch no node and measure no
 * name. */
static uint32_t slot_hash(mfs_id parent, const char *name, size_t len)
{
	return (uint32_t)mfs_hash64(name, len, parent);
}

static void place(struct mfs_name_slot *s, uint32_t mask, struct mfs_name_slot e)
{
	uint32_t j = e.h & mask;
	while (s[j].id != MFS_NONE)
		j = (j + 1) & mask;
	s[j] = e;
}

static int grow_slots(struct mfs_model *m)
{
	struct mfs_model_impl *im = m->impl;
	uint32_t n = im->nslots ? im->nslots * 2 : 64;
	if (n < im->nslots || !mfs_model_charge_growth(m, im->nslots, n, sizeof(*im->slots)))
		return -ENOMEM;
	struct mfs_name_slot *s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		s[i].id = MFS_NONE;
	for (uint32_t i = 0; i < im->nslots; i++)
		if (im->slots[i].id != MFS_NONE)
			place(s, n - 1, im->slots[i]);
	free(im->slots);
	im->slots = s;
	im->nslots = n;
	return 0;
}

static mfs_id lookup_hashed(const struct mfs_model *m, mfs_id dir, const char *name,
			    uint32_t h)
{
	const struct mfs_model_impl *im = m->impl;
	if (!im->nslots || dir >= m->nnodes)
		return MFS_NONE;
	uint32_t mask = im->nslots - 1;
	for (uint32_t j = h & mask;; j = (j + 1) & mask) {
		struct mfs_name_slot e = im->slots[j];
		if (e.id == MFS_NONE)
			return MFS_NONE;
		if (e.h == h && m->nodes[e.id].parent == dir && strcmp(m->nodes[e.id].name, name) == 0)
			return e.id;
	}
}

mfs_id mfs_lookup(const struct mfs_model *m, mfs_id dir, const char *name)
{
	return lookup_hashed(m, dir, name, slot_hash(dir, name, strlen(name)));
}

int mfs_names_insert(struct mfs_model *m, mfs_id id, uint32_t h)
{
	struct mfs_model_impl *im = m->impl;
	/* Keep the load under 1/2 so probes stay short. */
	if ((uint64_t)(m->nnodes + 1) * 2 > im->nslots && grow_slots(m) < 0)
		return -ENOMEM;
	place(im->slots, im->nslots - 1, (struct mfs_name_slot){id, h});
	return 0;
}

/* The counter of suffixes tried for (parent, name), created on first use;
 * NULL when out of memory (then the search starts from 1). */
static struct mfs_dupe *dupe_slot(struct mfs_model *m, mfs_id parent, const char *name, size_t n)
{
	struct mfs_model_impl *im = m->impl;
	if ((uint64_t)(im->ndupes + 1) * 2 > im->cap_dupes) {
		uint32_t nc = im->cap_dupes ? im->cap_dupes * 2 : 64;
		if (!mfs_model_charge_growth(m, im->cap_dupes, nc, sizeof(struct mfs_dupe)))
			return NULL;
		struct mfs_dupe *v = calloc(nc, sizeof(*v));
		if (!v)
			return NULL;
		for (uint32_t i = 0; i < im->cap_dupes; i++) {
			struct mfs_dupe *d = &im->dupes[i];
			if (!d->name)
				continue;
			uint64_t h = mfs_hash64(d->name, strlen(d->name), d->parent);
			uint32_t j = (uint32_t)h & (nc - 1);
			while (v[j].name)
				j = (j + 1) & (nc - 1);
			v[j] = *d;
		}
		free(im->dupes);
		im->dupes = v;
		im->cap_dupes = nc;
	}
	uint64_t h = mfs_hash64(name, n, parent);
	for (uint32_t j = (uint32_t)h & (im->cap_dupes - 1);; j = (j + 1) & (im->cap_dupes - 1)) {
		struct mfs_dupe *d = &im->dupes[j];
		if (!d->name) {
			d->name = mfs_model_strdup(m, name, n);
			if (!d->name)
				return NULL;
			d->parent = parent;
			d->next = 1;
			im->ndupes++;
			return d;
		}
		if (d->parent == parent && strcmp(d->name, name) == 0)
			return d;
	}
}

char *mfs_unique_name(struct mfs_model *m, mfs_id parent, const char *raw, size_t len,
		      uint32_t *hash)
{
	char esc[257];
	size_t n = mfs_escape_name(raw, len, esc);
	*hash = slot_hash(parent, esc, n);
	/* The first child of a directory needs no search. */
	if (parent >= m->nnodes || !m->nodes[parent].nchild ||
	    lookup_hashed(m, parent, esc, *hash) == MFS_NONE)
		return mfs_model_strdup(m, esc, n);
	/* A later duplicate gets ~1, ~2, ... (the suffix may need room); the
	 * search resumes where the last duplicate of this name stopped. */
	struct mfs_dupe *d = dupe_slot(m, parent, esc, n);
	for (unsigned k = d ? d->next : 1;; k++) {
		char cand[280];
		char suf[16];
		int sl = snprintf(suf, sizeof(suf), "~%u", k);
		size_t keep = n;
		if (keep + (size_t)sl > NAME_MAX_BYTES)
			keep = NAME_MAX_BYTES - (size_t)sl;
		memcpy(cand, esc, keep);
		memcpy(cand + keep, suf, (size_t)sl + 1);
		*hash = slot_hash(parent, cand, keep + (size_t)sl);
		if (lookup_hashed(m, parent, cand, *hash) == MFS_NONE) {
			if (d)
				d->next = k + 1;
			return mfs_model_strdup(m, cand, keep + (size_t)sl);
		}
	}
}
