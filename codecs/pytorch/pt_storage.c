/* Storages of a torch.save file: a persistent id ('storage',
 * torch.<Type>Storage, key, location, numel) names a storage, shared by
 * every tensor whose rebuild call names the same key (a hash of keys). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "buf.h"
#include "pytorch.h"

static const struct {
	const char *name;
	uint8_t dtype;
	uint8_t esize;      /* for the opaque ones */
	const char *tname;
} storages[] = {
	{"FloatStorage", MFS_DT_F32, 0, NULL},
	{"DoubleStorage", MFS_DT_F64, 0, NULL},
	{"HalfStorage", MFS_DT_F16, 0, NULL},
	{"BFloat16Storage", MFS_DT_BF16, 0, NULL},
	{"LongStorage", MFS_DT_I64, 0, NULL},
	{"IntStorage", MFS_DT_I32, 0, NULL},
	{"ShortStorage", MFS_DT_I16, 0, NULL},
	{"CharStorage", MFS_DT_I8, 0, NULL},
	{"ByteStorage", MFS_DT_U8, 0, NULL},
	{"BoolStorage", MFS_DT_BOOL, 0, NULL},
	{"ComplexFloatStorage", MFS_DT_C64, 0, NULL},
	{"ComplexDoubleStorage", MFS_DT_C128, 0, NULL},
	{"QInt8Storage", MFS_DT_OPAQUE, 1, "qint8"},
	{"QUInt8Storage", MFS_DT_OPAQUE, 1, "quint8"},
	{"QInt32Storage", MFS_DT_OPAQUE, 4, "qint32"},
	{"QUInt4x2Storage", MFS_DT_OPAQUE, 1, "quint4x2"},
	{"QUInt2x4Storage", MFS_DT_OPAQUE, 1, "quint2x4"},
	{"ComplexHalfStorage", MFS_DT_OPAQUE, 4, "complexhalf"},
	{"UntypedStorage", MFS_DT_U8, 0, NULL},
};

uint32_t pt_elem(const struct pk *pk, const struct pk_val *v, uint32_t i)
{
	uint32_t c = v->head;
	while (i-- && c != PK_NIL)
		c = pk->c[c].next;
	return c == PK_NIL ? PK_NIL : pk->c[c].v;
}

/* ---- storages by key ------------------------------------------------------ */

static bool key_is(const struct pt *pt, uint32_t st, const uint8_t *s, uint64_t n)
{
	const struct pk_val *k = &pt->pk.v[pt->st[st].key];
	return k->u.s.len == n && !memcmp(pk_bytes(&pt->pk, k), s, (size_t)n);
}

uint32_t pt_storage_find(const struct pt *pt, const uint8_t *s, uint64_t n)
{
	if (!pt->st_hcap)
		return UINT32_MAX;
	uint32_t mask = pt->st_hcap - 1;
	for (uint32_t h = (uint32_t)mfs_hash64(s, (size_t)n, 0) & mask;; h = (h + 1) & mask) {
		uint32_t e = pt->st_hash[h];
		if (!e)
			return UINT32_MAX;
		if (key_is(pt, e - 1, s, n))
			return e - 1;
	}
}

static void hash_put(struct pt *pt, uint32_t st)
{
	const struct pk_val *k = &pt->pk.v[pt->st[st].key];
	uint32_t h = (uint32_t)mfs_hash64(pk_bytes(&pt->pk, k), (size_t)k->u.s.len, 0) & (pt->st_hcap - 1);
	while (pt->st_hash[h])
		h = (h + 1) & (pt->st_hcap - 1);
	pt->st_hash[h] = st + 1;
}

static int hash_grow(struct pt *pt)
{
	uint32_t cap = pt->st_hcap ? pt->st_hcap * 2 : 64;
	uint32_t *h = calloc(cap, sizeof(*h));
	if (!h)
		return -ENOMEM;
	free(pt->st_hash);
	pt->st_hash = h;
	pt->st_hcap = cap;
	for (uint32_t i = 0; i < pt->nst; i++)
		hash_put(pt, i);
	return 0;
}

/* The storage type of a persistent id: torch.<Name> as a table row. */
static int storage_type(const struct pk *pk, uint32_t g, size_t *row, struct mfs_err *err)
{
	if (g == PK_NIL || pk->v[g].kind != PK_GLOBAL)
		return mfs_error(err, EINVAL, "a storage whose type is not a global");
	const struct pk_val *mod = &pk->v[pk->v[g].a], *nm = &pk->v[pk->v[g].b];
	const uint8_t *ms = pk_bytes(pk, mod), *ns = pk_bytes(pk, nm);
	bool torch = (mod->u.s.len == 5 && !memcmp(ms, "torch", 5)) ||
		     (mod->u.s.len == 13 && !memcmp(ms, "torch.storage", 13));
	for (size_t i = 0; torch && i < sizeof(storages) / sizeof(storages[0]); i++)
		if (strlen(storages[i].name) == nm->u.s.len && !memcmp(storages[i].name, ns, nm->u.s.len))
			return (int)(*row = i, 0);
	char q[MFS_QUOTE_MAX];
	return mfs_error(err, EINVAL, "an unknown storage type %s", mfs_quote(q, ns, (size_t)nm->u.s.len));
}

static bool is_str(const struct pk *pk, uint32_t v, const char *s)
{
	return v != PK_NIL && pk->v[v].kind == PK_STR && pk->v[v].u.s.len == strlen(s) &&
	       !memcmp(pk_bytes(pk, &pk->v[v]), s, strlen(s));
}

int pt_storage_of(struct mfs_model *m, struct pt *pt, uint32_t persid, uint32_t *out,
		  struct mfs_err *err)
{
	const struct pk *pk = &pt->pk;
	uint32_t id = pk->v[persid].a;
	const struct pk_val *t = id == PK_NIL ? NULL : &pk->v[id];
	if (!t || t->kind != PK_TUPLE || t->n < 5 || !is_str(pk, pt_elem(pk, t, 0), "storage"))
		return mfs_error(err, EINVAL, "a persistent id that is not ('storage', type, key, location, numel)");
	uint32_t key = pt_elem(pk, t, 2);
	if (pk->v[key].kind != PK_STR)
		return mfs_error(err, EINVAL, "a storage key that is not a string");
	if (t->n > 5 && pk->v[pt_elem(pk, t, 5)].kind != PK_NONE)
		return mfs_error(err, EINVAL, "a view of a storage (the view metadata of PyTorch before 1.0)");
	size_t row = 0;
	int r = storage_type(pk, pt_elem(pk, t, 1), &row, err);
	if (r < 0)
		return r;
	const uint8_t *ks = pk_bytes(pk, &pk->v[key]);
	uint32_t s = pt_storage_find(pt, ks, pk->v[key].u.s.len);
	if (s != UINT32_MAX) {
		char q[MFS_QUOTE_MAX];
		if (pt->st[s].dtype != storages[row].dtype || pt->st[s].tname != storages[row].tname)
			return mfs_error(err, EINVAL, "storage %s is named with two types",
					 mfs_quote(q, ks, (size_t)pk->v[key].u.s.len));
		return (int)(*out = s, 0);
	}
	size_t cap = pt->capst;
	if (MFS_ARRAY_RESERVE(pt->st, pt->nst, cap, 1, 16) < 0 ||
	    ((pt->nst + 1) * 2 > pt->st_hcap && hash_grow(pt) < 0))
		return mfs_error(err, ENOMEM, "out of memory");
	pt->capst = (uint32_t)cap;
	struct pt_storage *st = &pt->st[pt->nst];
	memset(st, 0, sizeof(*st));
	st->key = key;
	st->dtype = storages[row].dtype;
	st->tname = storages[row].tname;
	st->esize = st->tname ? storages[row].esize : mfs_dtype_info((enum mfs_dtype)st->dtype)->size;
	st->member = UINT32_MAX;
	st->name = mfs_model_strdup(m, (const char *)ks, (size_t)pk->v[key].u.s.len);
	if (!pt->legacy && (r = pt_zip_record(m, pt, st, err)) < 0)
		return r;
	hash_put(pt, pt->nst);
	*out = pt->nst++;
	return 0;
}
