/* Names of nodes: reversible escaping (LAYOUT.md "Names"), uniqueness among
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

static uint64_t slot_hash(mfs_id parent, const char *name)
{
	return mfs_hash64(name, strlen(name), parent);
}

static int grow_slots(struct mfs_model *m)
{
	struct mfs_model_impl *im = m->impl;
	uint32_t n = im->nslots ? im->nslots * 2 : 64;
	if (n < im->nslots || !mfs_model_charge_growth(m, im->nslots, n, sizeof(mfs_id)))
		return -ENOMEM;
	mfs_id *s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memset(s, 0xff, (size_t)n * sizeof(*s));
	for (uint32_t i = 0; i < im->nslots; i++) {
		mfs_id id = im->slots[i];
		if (id == MFS_NONE)
			continue;
		uint64_t h = slot_hash(m->nodes[id].parent, m->nodes[id].name);
		for (uint32_t j = (uint32_t)h & (n - 1);; j = (j + 1) & (n - 1)) {
			if (s[j] == MFS_NONE) {
				s[j] = id;
				break;
			}
		}
	}
	free(im->slots);
	im->slots = s;
	im->nslots = n;
	return 0;
}

mfs_id mfs_lookup(const struct mfs_model *m, mfs_id dir, const char *name)
{
	const struct mfs_model_impl *im = m->impl;
	if (!im->nslots || dir >= m->nnodes)
		return MFS_NONE;
	uint64_t h = slot_hash(dir, name);
	for (uint32_t j = (uint32_t)h & (im->nslots - 1);; j = (j + 1) & (im->nslots - 1)) {
		mfs_id id = im->slots[j];
		if (id == MFS_NONE)
			return MFS_NONE;
		if (m->nodes[id].parent == dir && strcmp(m->nodes[id].name, name) == 0)
			return id;
	}
}

int mfs_names_insert(struct mfs_model *m, mfs_id id)
{
	struct mfs_model_impl *im = m->impl;
	/* Keep the load under 1/2 so probes stay short. */
	if ((uint64_t)(m->nnodes + 1) * 2 > im->nslots && grow_slots(m) < 0)
		return -ENOMEM;
	uint64_t h = slot_hash(m->nodes[id].parent, m->nodes[id].name);
	for (uint32_t j = (uint32_t)h & (im->nslots - 1);; j = (j + 1) & (im->nslots - 1)) {
		if (im->slots[j] == MFS_NONE) {
			im->slots[j] = id;
			return 0;
		}
	}
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

char *mfs_unique_name(struct mfs_model *m, mfs_id parent, const char *raw, size_t len)
{
	char esc[257];
	size_t n = mfs_escape_name(raw, len, esc);
	if (mfs_lookup(m, parent, esc) == MFS_NONE)
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
		if (mfs_lookup(m, parent, cand) == MFS_NONE) {
			if (d)
				d->next = k + 1;
			return mfs_model_strdup(m, cand, keep + (size_t)sl);
		}
	}
}
