/* The legacy torch.save stream (before PyTorch 1.6, and
 * _use_new_zipfile_serialization=False): pickles one after the other (the
 * magic number, the protocol version 1001, a system-info dict, the object,
 * the list of storage keys), then each storage in the list's order as an
 * 8-byte little-endian element count and its elements. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "pytorch.h"

/* One of the small pickles at *pos: parsed into pk, *pos moved past it. */
static int small(struct mfs_model *m, uint64_t *pos, struct pk *pk, const char *what,
		 struct mfs_err *err)
{
	struct pk_budget b = pt_budget(m);
	int r = pk_parse(pk, m->base + *pos, m->size - *pos, &b, err);
	if (r < 0)
		pk_free(pk);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return mfs_error_prefix(err, "the legacy stream's %s (at byte %llu)", what,
					(unsigned long long)*pos);
	*pos += pk->size;
	return 0;
}

/* The magic, the protocol version and the system info. */
static int preamble(struct mfs_model *m, uint64_t *pos, struct mfs_err *err)
{
	struct pk pk;
	int r = small(m, pos, &pk, "magic number", err);
	if (r == 0 && pk.v[pk.root].kind != PK_LONG)
		r = mfs_error(err, EINVAL, "the legacy stream does not start with its magic number");
	pk_free(&pk);
	if (r < 0 || (r = small(m, pos, &pk, "protocol version", err)) < 0)
		return r;
	if (pk.v[pk.root].kind != PK_INT || pk.v[pk.root].u.i != 1001)
		r = mfs_error(err, EINVAL, "the legacy stream's protocol version is not 1001");
	pk_free(&pk);
	if (r < 0 || (r = small(m, pos, &pk, "system info", err)) < 0)
		return r;
	const struct pk_val *d = &pk.v[pk.root];
	/* the dict's cells, key then value, walked once */
	uint32_t c = d->kind == PK_DICT ? d->head : PK_NIL;
	while (c != PK_NIL && pk.c[c].next != PK_NIL) {
		uint32_t vc = pk.c[c].next;
		const struct pk_val *k = &pk.v[pk.c[c].v], *v = &pk.v[pk.c[vc].v];
		if (k->kind == PK_STR && k->u.s.len == 13 && !memcmp(pk_bytes(&pk, k), "little_endian", 13) &&
		    v->kind == PK_BOOL && !v->u.i) {
			r = mfs_error(err, EINVAL, "a big-endian legacy stream (only little-endian ones are shown)");
			break;
		}
		c = pk.c[vc].next;
	}
	pk_free(&pk);
	return r;
}

/* Every storage the object names, made from its persistent ids (their
 * element sizes place the storages that follow). */
static int name_storages(struct mfs_model *m, struct pt *pt, struct mfs_err *err)
{
	for (uint32_t v = 0; v < pt->pk.nv; v++) {
		uint32_t s;
		int r = pt->pk.v[v].kind == PK_PERSID ? pt_storage_of(m, pt, v, &s, err) : 0;
		if (r < 0)
			return r;
	}
	return 0;
}

/* The storages' section: each key of the list, its count and elements. */
static int place(struct mfs_model *m, struct pt *pt, const struct pk *keys, uint64_t pos,
		 struct mfs_err *err)
{
	const struct pk_val *l = &keys->v[keys->root];
	if (l->kind != PK_LIST)
		return mfs_error(err, EINVAL, "the legacy stream's storage keys are not a list");
	char q[MFS_QUOTE_MAX];
	for (uint32_t c = l->head; c != PK_NIL; c = keys->c[c].next) {
		const struct pk_val *k = &keys->v[keys->c[c].v];
		if (k->kind != PK_STR)
			return mfs_error(err, EINVAL, "a storage key that is not a string at byte %llu",
					 (unsigned long long)pos);
		const uint8_t *ks = pk_bytes(keys, k);
		uint32_t s = pt_storage_find(pt, ks, k->u.s.len);
		if (s == UINT32_MAX || pt->st[s].placed)
			return mfs_error(err, EINVAL, "storage %s is %s", mfs_quote(q, ks, (size_t)k->u.s.len),
					 s == UINT32_MAX ? "named by no tensor (its element size is unknown)" : "listed twice");
		struct pt_storage *st = &pt->st[s];
		uint64_t n, bytes;
		if (m->size - pos < 8)
			return mfs_error(err, EINVAL, "truncated: storage %s's count at byte %llu is past the end",
					 mfs_quote(q, ks, (size_t)k->u.s.len), (unsigned long long)pos);
		n = mfs_le64(m->base + pos);
		if (__builtin_mul_overflow(n, (uint64_t)st->esize, &bytes) || bytes > m->size - pos - 8)
			return mfs_error(err, EINVAL, "truncated: storage %s says %llu elements at byte %llu, the file has %llu bytes",
					 mfs_quote(q, ks, (size_t)k->u.s.len), (unsigned long long)n,
					 (unsigned long long)pos, (unsigned long long)m->size);
		st->off = pos + 8;
		st->bytes = bytes;
		st->placed = true;
		pos += 8 + bytes;
	}
	return 0;
}

int pt_legacy_open(struct mfs_model *m, struct pt *pt, struct mfs_err *err)
{
	uint64_t pos = 0;
	int r = preamble(m, &pos, err);
	if (r < 0)
		return r;
	pt->pkl_off = pos;
	if ((r = small(m, &pos, &pt->pk, "object", err)) < 0)
		return r;
	struct pk keys;
	if ((r = small(m, &pos, &keys, "storage keys", err)) == 0 &&
	    (r = name_storages(m, pt, err)) == 0) {
		pt->legacy_data = pos;
		r = place(m, pt, &keys, pos, err);
	}
	pk_free(&keys);
	return r;
}
