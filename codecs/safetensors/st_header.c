/* A safetensors file's header: parsed with the span-keeping JSON reader,
 * keeping only what the format defines (the top members, a tensor entry's
 * own fields, __metadata__'s strings: an unknown field's value is checked
 * and costs no memory; shapes and offsets are read from their bytes), and
 * checked with the reference library's rules. The tree is st_tree.c's.
 *
 * Memory: the JSON nodes kept (24 bytes for at least 5 header bytes), the
 * dimensions (8 bytes for at least 2 header bytes, here and in the tree)
 * and each entry's tree; all of it is charged to the model's index budget
 * as it is allocated (mfs_model_charge). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "safetensors.h"

static bool charge(void *ctx, int64_t bytes)
{
	return mfs_model_charge(ctx, bytes);
}

/* n elements of size bytes that live while the header is parsed, charged
 * to the model; NULL (with the error set) when they do not fit. */
static void *held_calloc(struct st_parse *h, size_t n, size_t size)
{
	uint64_t b;
	void *p = NULL;
	if (mfs_mul_ok(n ? n : 1, size, &b) && b <= INT64_MAX && mfs_model_charge(h->m, (int64_t)b)) {
		h->held += (int64_t)b;
		p = calloc(n ? n : 1, size);
	}
	if (!p)
		mfs_error(h->err, ENOMEM, "out of memory");
	return p;
}

/* Free what held_calloc(h, n, size) gave, and give back its charge. */
static void held_free(struct st_parse *h, void *p, size_t n, size_t size)
{
	if (!p)
		return;
	free(p);
	int64_t b = (int64_t)((n ? n : 1) * size);
	h->held -= b;
	mfs_model_charge(h->m, -b);
}

/* "tensor "name": " before a message about one entry. */
static int entry_error(struct st_parse *h, uint32_t node, const char *what)
{
	char q[MFS_QUOTE_MAX];
	return mfs_error(h->err, EINVAL, "tensor %s: %s",
			 mfs_quote(q, mfs_json_key(&h->j, node), mfs_json_keylen(&h->j, node)), what);
}

static int parse_dtype(struct st_parse *h, uint32_t node, uint32_t d, struct st_entry *e)
{
	const struct mfs_json *j = &h->j;
	if (d == MFS_JSON_NIL || j->v[d].type != MFS_JSON_STR)
		return entry_error(h, node, "no \"dtype\" string");
	size_t n = mfs_json_textlen(j, d);
	char *s = mfs_model_strdup(h->m, mfs_json_text(j, d), n);
	if (!s)
		return mfs_error(h->err, ENOMEM, "out of memory");
	e->bits = mfs_st_dtype(s, &e->dt);
	for (size_t i = 0; i < n; i++)
		if (s[i] >= 'A' && s[i] <= 'Z')
			s[i] = (char)(s[i] - 'A' + 'a');
	e->tname = s;
	return 0;
}

static const char *const fields[3] = {"dtype", "shape", "data_offsets"};

/* The entry's dtype, shape and data_offsets members (NIL when absent);
 * other members are ignored, as the reference library does, but one of
 * these given twice is refused, as it refuses it. */
static int entry_fields(struct st_parse *h, uint32_t node, uint32_t out[3])
{
	const struct mfs_json *j = &h->j;
	out[0] = out[1] = out[2] = MFS_JSON_NIL;
	for (uint32_t c = j->v[node].first; c != MFS_JSON_NIL; c = j->v[c].next) {
		for (int k = 0; k < 3; k++) {
			size_t n = strlen(fields[k]);
			if (mfs_json_keylen(j, c) != n || memcmp(mfs_json_key(j, c), fields[k], n))
				continue;
			if (out[k] != MFS_JSON_NIL) {
				char what[48];
				snprintf(what, sizeof(what), "\"%s\" is given twice", fields[k]);
				return entry_error(h, node, what);
			}
			out[k] = c;
		}
	}
	return 0;
}

static int parse_shape(struct st_parse *h, uint32_t node, uint32_t sh, struct st_entry *e,
		       uint64_t *dims)
{
	const struct mfs_json *j = &h->j;
	if (sh == MFS_JSON_NIL || j->v[sh].type != MFS_JSON_ARR)
		return entry_error(h, node, "no \"shape\" array");
	if (j->v[sh].count > ST_DIMS_MAX) {
		char what[96];
		snprintf(what, sizeof(what), "its shape has %u dimensions, more than the %u "
			 "supported", (unsigned)j->v[sh].count, ST_DIMS_MAX);
		return entry_error(h, node, what);
	}
	if (!mfs_json_u64s(j, sh, dims, ST_DIMS_MAX, &e->ndim))
		return entry_error(h, node, "a dimension is not a non-negative integer");
	e->dims = dims;
	return 0;
}

/* One tensor entry: dtype, shape (into dims), data_offsets. */
static int parse_entry(struct st_parse *h, uint32_t node, struct st_entry *e,
		       struct st_tensor *st, uint64_t *dims)
{
	const struct mfs_json *j = &h->j;
	uint32_t fl[3];
	e->node = node;
	if (j->v[node].type != MFS_JSON_OBJ)
		return entry_error(h, node, "not an object");
	int r = entry_fields(h, node, fl);
	if (r == 0)
		r = parse_dtype(h, node, fl[0], e);
	if (r == 0)
		r = parse_shape(h, node, fl[1], e, dims);
	if (r < 0)
		return r;
	uint32_t of = fl[2], n;
	uint64_t v[2];
	if (of == MFS_JSON_NIL || j->v[of].type != MFS_JSON_ARR || j->v[of].count != 2 ||
	    !mfs_json_u64s(j, of, v, 2, &n))
		return entry_error(h, node, "\"data_offsets\" is not two non-negative integers");
	*st = (struct st_tensor){.begin = v[0], .end = v[1],
				 .shape_at = j->v[fl[1]].at, .shape_len = j->v[fl[1]].span,
				 .offs_at = j->v[of].at, .offs_len = j->v[of].span};
	return 0;
}

static bool is_meta(const struct mfs_json *j, uint32_t c)
{
	return mfs_json_keylen(j, c) == 12 && !memcmp(mfs_json_key(j, c), "__metadata__", 12);
}

struct key {
	const char *s;
	size_t len;
	uint32_t i;
};

static int key_cmp(const struct key *x, const struct key *y)
{
	int r = memcmp(x->s, y->s, x->len < y->len ? x->len : y->len);
	return r ? r : (x->len > y->len) - (x->len < y->len);
}

static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int r = key_cmp(x, y);
	return r ? r : (x->i > y->i) - (x->i < y->i);
}

/* Of the members nodes[0, n) that share a key, the last in the file is
 * kept (as the reference library's maps keep it): keep[i] says which. */
static int last_of_each(struct st_parse *h, const uint32_t *nodes, uint32_t n, bool *keep)
{
	struct key *k = held_calloc(h, n, sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		k[i] = (struct key){mfs_json_key(&h->j, nodes[i]), mfs_json_keylen(&h->j, nodes[i]), i};
	qsort(k, n, sizeof(*k), by_key);
	for (uint32_t r = 0; r < n; r++)
		keep[k[r].i] = r + 1 == n || key_cmp(&k[r], &k[r + 1]) != 0;
	held_free(h, k, n, sizeof(*k));
	return 0;
}

static int parse_metadata(struct st_parse *h, uint32_t node)
{
	const struct mfs_json *j = &h->j;
	struct st_file *f = h->f;
	if (j->v[node].type == MFS_JSON_NULL)
		return 0;
	if (j->v[node].type != MFS_JSON_OBJ)
		return mfs_error(h->err, EINVAL, "__metadata__ is not an object");
	uint32_t n = j->v[node].count, i = 0;
	f->meta = mfs_model_alloc(h->m, (size_t)(n + 1) * sizeof(*f->meta));
	h->mnodes = held_calloc(h, (size_t)n + 1, sizeof(*h->mnodes));
	bool *keep = h->mnodes ? held_calloc(h, (size_t)n + 1, sizeof(*keep)) : NULL;
	if (!f->meta || !keep) {
		held_free(h, keep, (size_t)n + 1, sizeof(*keep));
		return mfs_error(h->err, ENOMEM, "out of memory");
	}
	int r = 0;
	for (uint32_t c = j->v[node].first; c != MFS_JSON_NIL && r == 0; c = j->v[c].next) {
		char q[MFS_QUOTE_MAX];
		if (j->v[c].type != MFS_JSON_STR)
			r = mfs_error(h->err, EINVAL, "__metadata__ %s is not a string",
				      mfs_quote(q, mfs_json_key(j, c), mfs_json_keylen(j, c)));
		h->mnodes[i++] = c;
	}
	if (r == 0)
		r = last_of_each(h, h->mnodes, n, keep);
	for (i = 0; i < n && r == 0; i++) {
		if (!keep[i])
			continue;
		uint32_t c = h->mnodes[i];
		h->mnodes[f->nmeta] = c;
		f->meta[f->nmeta++] = (struct st_meta){j->v[c].at, j->v[c].span};
	}
	held_free(h, keep, (size_t)n + 1, sizeof(*keep));
	return r;
}

/* The dimensions all entries' shapes may have (a shape too long is
 * refused before it is read). */
static size_t dims_needed(const struct mfs_json *j)
{
	size_t n = 0;
	for (uint32_t c = j->v[0].first; c != MFS_JSON_NIL; c = j->v[c].next) {
		if (j->v[c].type != MFS_JSON_OBJ)
			continue;
		for (uint32_t k = j->v[c].first; k != MFS_JSON_NIL; k = j->v[k].next)
			if (j->v[k].type == MFS_JSON_ARR && j->v[k].count <= ST_DIMS_MAX &&
			    mfs_json_keylen(j, k) == 5 && !memcmp(mfs_json_key(j, k), "shape", 5))
				n += j->v[k].count;
	}
	return n;
}

/* Drop the entries a later one of the same name replaces. */
static int drop_replaced(struct st_parse *h)
{
	struct st_file *f = h->f;
	uint32_t n = f->ntensors, k = 0;
	uint32_t *nodes = held_calloc(h, (size_t)n + 1, sizeof(*nodes));
	bool *keep = nodes ? held_calloc(h, (size_t)n + 1, sizeof(*keep)) : NULL;
	if (!keep) {
		held_free(h, nodes, (size_t)n + 1, sizeof(*nodes));
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		nodes[i] = h->e[i].node;
	int r = last_of_each(h, nodes, n, keep);
	for (uint32_t i = 0; i < n && r == 0; i++) {
		if (!keep[i])
			continue;
		f->t[k] = f->t[i];
		h->e[k++] = h->e[i];
	}
	f->ntensors = k;
	held_free(h, nodes, (size_t)n + 1, sizeof(*nodes));
	held_free(h, keep, (size_t)n + 1, sizeof(*keep));
	return r;
}

/* Every member of the header object. */
static int parse_members(struct st_parse *h)
{
	const struct mfs_json *j = &h->j;
	uint32_t n = j->v[0].count;
	struct st_file *f = h->f;
	f->t = mfs_model_alloc(h->m, (size_t)(n + 1) * sizeof(*f->t));
	f->order = mfs_model_alloc(h->m, (size_t)(n + 1) * sizeof(*f->order));
	h->e = held_calloc(h, (size_t)n + 1, sizeof(*h->e));
	h->pool = h->e ? held_calloc(h, dims_needed(j) + 1, sizeof(*h->pool)) : NULL;
	if (!f->t || !f->order || !h->pool)
		return mfs_error(h->err, ENOMEM, "out of memory");
	bool meta = false;
	uint64_t *dims = h->pool;
	for (uint32_t c = j->v[0].first; c != MFS_JSON_NIL; c = j->v[c].next) {
		int r;
		if (is_meta(j, c)) {
			if (meta)
				return mfs_error(h->err, EINVAL, "__metadata__ is given twice");
			meta = true;
			r = parse_metadata(h, c);
		} else {
			uint32_t i = f->ntensors++;
			r = parse_entry(h, c, &h->e[i], &f->t[i], dims);
			dims += h->e[i].ndim;
		}
		if (r < 0)
			return r;
	}
	return drop_replaced(h);
}

struct span {
	uint64_t begin, end;
	uint32_t i;
};

static int by_offsets(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* f->order: the tensors in buffer order (by offsets, then header order). */
static int sort_tensors(struct st_parse *h)
{
	struct st_file *f = h->f;
	struct span *k = held_calloc(h, (size_t)f->ntensors + 1, sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (uint32_t i = 0; i < f->ntensors; i++)
		k[i] = (struct span){f->t[i].begin, f->t[i].end, i};
	qsort(k, f->ntensors, sizeof(*k), by_offsets);
	for (uint32_t r = 0; r < f->ntensors; r++) {
		f->order[r] = k[r].i;
		f->t[k[r].i].rank = r;
	}
	held_free(h, k, (size_t)f->ntensors + 1, sizeof(*k));
	return 0;
}

/* An entry's byte length against its shape and element size. */
static int check_length(struct st_parse *h, const struct st_entry *e, uint64_t len)
{
	uint64_t n = 1, bits;
	for (uint32_t k = 0; k < e->ndim; k++)
		if (!mfs_mul_ok(n, e->dims[k], &n))
			return entry_error(h, e->node, "its shape overflows");
	if (!e->bits)
		return 0;
	if (!mfs_mul_ok(n, e->bits, &bits))
		return entry_error(h, e->node, "its byte length overflows");
	if (bits % 8) {
		char what[128];
		snprintf(what, sizeof(what), "its %llu elements of %u bits end inside a byte",
			 (unsigned long long)n, e->bits);
		return entry_error(h, e->node, what);
	}
	if (bits / 8 != len)
		return entry_error(h, e->node, "its byte length is not its shape times its element size");
	return 0;
}

/* The reference library's rules: in buffer order each tensor begins where
 * the last ended, its length is its shape times its element size in bits
 * (a whole number of bytes), and the last one ends at the end of the file. */
static int check_layout(struct st_parse *h, uint64_t buffer)
{
	struct st_file *f = h->f;
	if (sort_tensors(h) < 0)
		return -ENOMEM;
	uint64_t at = 0;
	for (uint32_t r = 0; r < f->ntensors; r++) {
		uint32_t i = f->order[r];
		struct st_tensor *st = &f->t[i];
		if (st->begin != at || st->end < st->begin)
			return entry_error(h, h->e[i].node,
					   "its data_offsets overlap another tensor or leave a hole");
		int rc = check_length(h, &h->e[i], st->end - st->begin);
		if (rc < 0)
			return rc;
		at = st->end;
	}
	if (at != buffer)
		return mfs_error(h->err, EINVAL,
				 "the tensors cover %llu bytes of the %llu-byte buffer",
				 (unsigned long long)at, (unsigned long long)buffer);
	return 0;
}

static int parse_header(struct st_parse *h)
{
	struct mfs_model *m = h->m;
	uint64_t hlen = h->f->hlen;
	const char *text = (const char *)m->base + 8;
	const struct mfs_json_opts o = {.keep = mfs_json_keep_shallow, .charge = charge, .ctx = m};
	if (mfs_json_parse_opts(&h->j, text, hlen, &o) < 0) {
		if (h->j.oom)
			return mfs_error(h->err, ENOMEM, "out of memory");
		return mfs_error(h->err, EINVAL, "the header is not valid JSON: %s", h->j.err);
	}
	if (h->j.v[0].type != MFS_JSON_OBJ || text[0] != '{')
		return mfs_error(h->err, EINVAL, "the header is not a JSON object starting at byte 8");
	int r = parse_members(h);
	if (r < 0)
		return r;
	return check_layout(h, m->size - 8 - hlen);
}

int mfs_st_open_file(struct mfs_model *m, struct mfs_err *err)
{
	if (m->size < 8)
		return mfs_error(err, EINVAL, "%llu bytes: a safetensors file starts with an "
				 "8-byte header length", (unsigned long long)m->size);
	uint64_t hlen = mfs_le64(m->base);
	if (hlen > ST_HEADER_MAX)
		return mfs_error(err, EINVAL, "header length %llu is over the format's limit of "
				 "%u bytes", (unsigned long long)hlen, ST_HEADER_MAX);
	if (hlen > m->size - 8)
		return mfs_error(err, EINVAL, "header length %llu runs past the end of the "
				 "%llu-byte file", (unsigned long long)hlen,
				 (unsigned long long)m->size);
	struct st_parse h = {.m = m, .err = err};
	h.f = mfs_model_alloc(m, sizeof(*h.f));
	if (!h.f)
		return mfs_error(err, ENOMEM, "out of memory");
	memset(h.f, 0, sizeof(*h.f));
	h.f->hlen = hlen;
	int r = parse_header(&h);
	if (r == 0) {
		m->priv = h.f;
		r = mfs_st_build_tree(&h);
	}
	free(h.e);
	free(h.mnodes);
	free(h.pool);
	mfs_model_charge(m, -h.held);
	mfs_json_free(&h.j);
	return r;
}
