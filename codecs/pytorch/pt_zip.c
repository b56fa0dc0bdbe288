/* The zip layout of torch.save (PyTorch 1.6 on): `<top>/data.pkl` (the
 * object's pickle), `<top>/data/<key>` (one record per storage, stored
 * raw), `<top>/version` and the newer small records, read with the core's
 * zip room (core/zip/). A TorchScript archive (`<top>/code/`,
 * `<top>/constants.pkl`) is not shown. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "pytorch.h"

/* Deflate expands at most 1032 times; a larger claim is a lie. */
#define DEFLATE_MAX_RATIO 1100u
/* An inflated data.pkl at most (a pickle of a billion opcodes). */
#define PKL_MAX (1ull << 30)

static bool name_is(const struct mfs_zip_member *zm, const uint8_t *top, size_t tl,
		    const char *rest)
{
	size_t rl = strlen(rest);
	return zm->name_len == tl + rl && !memcmp(zm->name, top, tl) &&
	       !memcmp(zm->name + tl, rest, rl);
}

/* data.pkl under a top folder (the first one), TorchScript refused. */
static int find_pickle(struct pt *pt, struct mfs_err *err)
{
	for (uint32_t i = 0; i < pt->zip.n && pt->pkl_member == UINT32_MAX; i++) {
		const struct mfs_zip_member *zm = &pt->zip.mem[i];
		const uint8_t *s = (const uint8_t *)zm->name, *slash = memchr(s, '/', zm->name_len);
		if (slash && slash > s && name_is(zm, s, (size_t)(slash - s) + 1, "data.pkl")) {
			pt->pkl_member = i;
			pt->top = s;
			pt->top_len = (uint32_t)(slash - s) + 1;
		}
	}
	if (pt->pkl_member == UINT32_MAX)
		return mfs_error(err, EINVAL, "no <top>/data.pkl record in the zip (a torch.save file has one)");
	for (uint32_t i = 0; i < pt->zip.n; i++) {
		const struct mfs_zip_member *zm = &pt->zip.mem[i];
		if (name_is(zm, pt->top, pt->top_len, "constants.pkl") ||
		    (zm->name_len > pt->top_len + 5 && !memcmp(zm->name, pt->top, pt->top_len) &&
		     !memcmp(zm->name + pt->top_len, "code/", 5)))
			return mfs_error(err, ENOTSUP, "a TorchScript archive");
	}
	return 0;
}

/* data.pkl's bytes: in the source when stored, else inflated. */
static int pickle_bytes(struct mfs_model *m, struct pt *pt, const uint8_t **p, uint64_t *n,
			struct mfs_err *err)
{
	const struct mfs_zip_member *zm = &pt->zip.mem[pt->pkl_member];
	if (zm->flags & 1)
		return mfs_error(err, EINVAL, "data.pkl is encrypted");
	if (zm->method == 0) {
		if (zm->csize != zm->usize)
			return mfs_error(err, EINVAL, "data.pkl is stored but says %llu bytes compressed and %llu uncompressed",
					 (unsigned long long)zm->csize, (unsigned long long)zm->usize);
		pt->pkl_off = zm->data_off;
		*p = m->base + zm->data_off;
		*n = zm->usize;
		return 0;
	}
	if (zm->method != 8)
		return mfs_error(err, EINVAL, "data.pkl has compression method %u", (unsigned)zm->method);
	if (zm->usize / DEFLATE_MAX_RATIO > zm->csize || zm->usize > PKL_MAX)
		return mfs_error(err, EINVAL, "data.pkl declares %llu bytes from %llu deflated",
				 (unsigned long long)zm->usize, (unsigned long long)zm->csize);
	if (mfs_zip_reader_new(&pt->reader, m->base, &pt->zip) < 0 ||
	    !(pt->pkl_buf = malloc(zm->usize ? (size_t)zm->usize : 1)))
		return mfs_error(err, ENOMEM, "out of memory");
	pt->pkl_off = UINT64_MAX;
	int r = mfs_zip_read_member(pt->reader, pt->pkl_member, 0, zm->usize, pt->pkl_buf, err);
	if (r < 0)
		return mfs_error_prefix(err, "data.pkl");
	*p = pt->pkl_buf;
	*n = zm->usize;
	return 0;
}

/* The key of member i when it is a `<top>/data/<key>` record. */
static bool record_key(const struct pt *pt, uint32_t i, const uint8_t **key, size_t *kl)
{
	const struct mfs_zip_member *zm = &pt->zip.mem[i];
	size_t pre = pt->top_len + 5;
	if (zm->name_len <= pre || memcmp(zm->name, pt->top, pt->top_len) ||
	    memcmp(zm->name + pt->top_len, "data/", 5))
		return false;
	*key = (const uint8_t *)zm->name + pre;
	*kl = zm->name_len - pre;
	return true;
}

/* The records by key, so that a checkpoint of many tensors finds each in
 * one probe. */
static int hash_records(struct pt *pt, struct mfs_err *err)
{
	uint32_t cap = 64;
	while (cap < 2 * (uint64_t)pt->zip.n + 2)
		cap *= 2;
	pt->rec_hash = calloc(cap, sizeof(*pt->rec_hash));
	if (!pt->rec_hash)
		return mfs_error(err, ENOMEM, "out of memory");
	pt->rec_hcap = cap;
	for (uint32_t i = 0; i < pt->zip.n; i++) {
		const uint8_t *k;
		size_t kl;
		if (!record_key(pt, i, &k, &kl))
			continue;
		uint32_t h = (uint32_t)mfs_hash64(k, kl, 0) & (cap - 1);
		while (pt->rec_hash[h])
			h = (h + 1) & (cap - 1);
		pt->rec_hash[h] = i + 1;
	}
	return 0;
}

int pt_zip_record(struct mfs_model *m, struct pt *pt, struct pt_storage *s, struct mfs_err *err)
{
	(void)m;
	const struct pk_val *k = &pt->pk.v[s->key];
	const uint8_t *key = pk_bytes(&pt->pk, k);
	uint64_t kl = k->u.s.len;
	for (uint32_t h = (uint32_t)mfs_hash64(key, (size_t)kl, 0) & (pt->rec_hcap - 1); pt->rec_hash[h];
	     h = (h + 1) & (pt->rec_hcap - 1)) {
		uint32_t i = pt->rec_hash[h] - 1;
		const struct mfs_zip_member *zm = &pt->zip.mem[i];
		const uint8_t *rk;
		size_t rl;
		if (!record_key(pt, i, &rk, &rl) || rl != kl || memcmp(rk, key, rl))
			continue;
		char q[MFS_QUOTE_MAX];
		if (zm->method != 0 || zm->csize != zm->usize || (zm->flags & 1))
			return mfs_error(err, EINVAL, "the record of storage %s is compressed (torch.save stores records as they are)",
					 mfs_quote(q, key, kl));
		s->member = i;
		s->off = zm->data_off;
		s->bytes = zm->usize;
		s->placed = true;
		return 0;
	}
	char q[MFS_QUOTE_MAX];
	return mfs_error(err, EINVAL, "storage %s has no record <top>/data/<key> in the zip",
			 mfs_quote(q, key, (size_t)kl));
}

int pt_zip_open(struct mfs_model *m, struct pt *pt, struct mfs_err *err)
{
	int r = mfs_zip_read(m->base, m->size, &pt->zip, err);
	if (r < 0 || (r = find_pickle(pt, err)) < 0 || (r = hash_records(pt, err)) < 0)
		return r;
	const uint8_t *p = NULL;
	uint64_t n = 0;
	if ((r = pickle_bytes(m, pt, &p, &n, err)) < 0)
		return r;
	struct pk_budget b = pt_budget(m);
	r = pk_parse(&pt->pk, p, n, &b, err);
	return r == -EINVAL ? mfs_error_prefix(err, "data.pkl") : r;
}
