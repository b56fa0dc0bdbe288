/* A safetensors file's header: parsed with the span-keeping JSON reader,
 * checked with the reference library's rules, and shown as the tree of
 * LAYOUT.md "safetensors". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "dotted.h"
#include "safetensors.h"

struct dt_row {
	const char *s;
	enum mfs_dtype dt;
	unsigned bits;
};

/* Every dtype of the format; the sub-byte and exponent-only ones have no
 * dtype of the table and show as opaque bytes. */
static const struct dt_row dtypes[] = {
	{"BOOL", MFS_DT_BOOL, 8}, {"U8", MFS_DT_U8, 8}, {"I8", MFS_DT_I8, 8},
	{"U16", MFS_DT_U16, 16}, {"I16", MFS_DT_I16, 16}, {"U32", MFS_DT_U32, 32},
	{"I32", MFS_DT_I32, 32}, {"U64", MFS_DT_U64, 64}, {"I64", MFS_DT_I64, 64},
	{"F16", MFS_DT_F16, 16}, {"BF16", MFS_DT_BF16, 16}, {"F32", MFS_DT_F32, 32},
	{"F64", MFS_DT_F64, 64}, {"F8_E4M3", MFS_DT_F8E4M3, 8}, {"F8_E5M2", MFS_DT_F8E5M2, 8},
	{"C64", MFS_DT_C64, 64}, {"F4", MFS_DT_OPAQUE, 4}, {"F6_E2M3", MFS_DT_OPAQUE, 6},
	{"F6_E3M2", MFS_DT_OPAQUE, 6}, {"F8_E8M0", MFS_DT_OPAQUE, 8},
};

unsigned mfs_st_dtype(const char *s, enum mfs_dtype *dt)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
		if (!strcmp(dtypes[i].s, s)) {
			*dt = dtypes[i].dt;
			return dtypes[i].bits;
		}
	}
	*dt = MFS_DT_OPAQUE;
	return 0;
}

/* What one tensor entry says, before the checks across entries. */
struct entry {
	uint32_t node;              /* the member in the JSON */
	enum mfs_dtype dt;
	unsigned bits;              /* 0: a dtype the format does not define */
	const char *tname;          /* the dtype string lower-cased (opaque) */
	uint32_t ndim;
	uint64_t *dims;
};

struct hdr {
	struct mfs_model *m;
	struct mfs_json j;
	struct st_file *f;
	struct entry *e;
	struct mfs_err *err;
};

/* A JSON number that is a non-negative integer fitting 64 bits. */
static bool json_u64(const struct mfs_json *j, uint32_t node, uint64_t *out)
{
	if (node == MFS_JSON_NIL || j->v[node].type != MFS_JSON_NUM)
		return false;
	const char *s = mfs_json_text(j, node);
	size_t n = j->v[node].textlen;
	uint64_t v = 0;
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || !mfs_mul_ok(v, 10, &v) ||
		    !mfs_add_ok(v, (uint64_t)(s[i] - '0'), &v))
			return false;
	}
	*out = v;
	return true;
}

/* "tensor "name": " before a message about one entry. */
static int entry_error(struct hdr *h, uint32_t node, const char *what)
{
	char q[MFS_QUOTE_MAX];
	return mfs_error(h->err, EINVAL, "tensor %s: %s",
			 mfs_quote(q, mfs_json_key(&h->j, node), h->j.v[node].keylen), what);
}

static int parse_dtype(struct hdr *h, uint32_t node, struct entry *e)
{
	const struct mfs_json *j = &h->j;
	uint32_t d = mfs_json_member(j, node, "dtype");
	if (d == MFS_JSON_NIL || j->v[d].type != MFS_JSON_STR)
		return entry_error(h, node, "no \"dtype\" string");
	size_t n = j->v[d].textlen;
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

/* One tensor entry: dtype, shape, data_offsets. */
static int parse_entry(struct hdr *h, uint32_t node, struct entry *e, struct st_tensor *st)
{
	const struct mfs_json *j = &h->j;
	e->node = node;
	if (j->v[node].type != MFS_JSON_OBJ)
		return entry_error(h, node, "not an object");
	int r = parse_dtype(h, node, e);
	if (r < 0)
		return r;
	uint32_t sh = mfs_json_member(j, node, "shape");
	if (sh == MFS_JSON_NIL || j->v[sh].type != MFS_JSON_ARR)
		return entry_error(h, node, "no \"shape\" array");
	e->ndim = j->v[sh].count;
	e->dims = mfs_model_alloc(h->m, (size_t)(e->ndim ? e->ndim : 1) * sizeof(*e->dims));
	if (!e->dims)
		return mfs_error(h->err, ENOMEM, "out of memory");
	uint32_t k = 0;
	for (uint32_t c = j->v[sh].first; c != MFS_JSON_NIL; c = j->v[c].next)
		if (!json_u64(j, c, &e->dims[k++]))
			return entry_error(h, node, "a dimension is not a non-negative integer");
	uint32_t of = mfs_json_member(j, node, "data_offsets");
	if (of == MFS_JSON_NIL || j->v[of].type != MFS_JSON_ARR || j->v[of].count != 2 ||
	    !json_u64(j, j->v[of].first, &st->begin) ||
	    !json_u64(j, j->v[j->v[of].first].next, &st->end))
		return entry_error(h, node, "\"data_offsets\" is not two non-negative integers");
	st->shape_at = j->v[sh].at;
	st->shape_len = j->v[sh].span;
	st->offs_at = j->v[of].at;
	st->offs_len = j->v[of].span;
	return 0;
}

static int parse_metadata(struct hdr *h, uint32_t node)
{
	const struct mfs_json *j = &h->j;
	h->f->nmeta = 0;  /* a key given twice: the last one counts, as for all keys */
	if (j->v[node].type == MFS_JSON_NULL)
		return 0;
	if (j->v[node].type != MFS_JSON_OBJ)
		return mfs_error(h->err, EINVAL, "__metadata__ is not an object");
	struct st_file *f = h->f;
	f->meta = mfs_model_alloc(h->m, (size_t)(j->v[node].count + 1) * sizeof(*f->meta));
	if (!f->meta)
		return mfs_error(h->err, ENOMEM, "out of memory");
	for (uint32_t c = j->v[node].first; c != MFS_JSON_NIL; c = j->v[c].next) {
		char q[MFS_QUOTE_MAX];
		if (j->v[c].type != MFS_JSON_STR)
			return mfs_error(h->err, EINVAL, "__metadata__ %s is not a string",
					 mfs_quote(q, mfs_json_key(j, c), j->v[c].keylen));
		f->meta[f->nmeta++] = (struct st_meta){j->v[c].at, j->v[c].span};
	}
	return 0;
}

/* Every member of the header object. */
static int parse_members(struct hdr *h)
{
	const struct mfs_json *j = &h->j;
	uint32_t n = j->v[0].count;
	struct st_file *f = h->f;
	f->t = mfs_model_alloc(h->m, (size_t)(n + 1) * sizeof(*f->t));
	f->order = mfs_model_alloc(h->m, (size_t)(n + 1) * sizeof(*f->order));
	h->e = calloc((size_t)n + 1, sizeof(*h->e));
	if (!f->t || !f->order || !h->e)
		return mfs_error(h->err, ENOMEM, "out of memory");
	for (uint32_t c = j->v[0].first; c != MFS_JSON_NIL; c = j->v[c].next) {
		if (j->v[c].keylen == 12 && !memcmp(mfs_json_key(j, c), "__metadata__", 12)) {
			int r = parse_metadata(h, c);
			if (r < 0)
				return r;
			continue;
		}
		uint32_t i = f->ntensors++;
		memset(&f->t[i], 0, sizeof(f->t[i]));
		int r = parse_entry(h, c, &h->e[i], &f->t[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

struct key {
	uint64_t begin, end;
	uint32_t i;
};

static int by_offsets(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/* f->order: the tensors in buffer order (by offsets, then header order). */
static int sort_tensors(struct hdr *h)
{
	struct st_file *f = h->f;
	struct key *k = malloc((size_t)(f->ntensors + 1) * sizeof(*k));
	if (!k)
		return mfs_error(h->err, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < f->ntensors; i++)
		k[i] = (struct key){f->t[i].begin, f->t[i].end, i};
	qsort(k, f->ntensors, sizeof(*k), by_offsets);
	for (uint32_t r = 0; r < f->ntensors; r++) {
		f->order[r] = k[r].i;
		f->t[k[r].i].rank = r;
	}
	free(k);
	return 0;
}

/* The reference library's rules: in buffer order each tensor begins where
 * the last ended, its length is its shape times its element size, and the
 * last one ends at the end of the file. */
static int check_layout(struct hdr *h, uint64_t buffer)
{
	struct st_file *f = h->f;
	if (sort_tensors(h) < 0)
		return -ENOMEM;
	uint64_t at = 0;
	for (uint32_t r = 0; r < f->ntensors; r++) {
		uint32_t i = f->order[r];
		struct st_tensor *st = &f->t[i];
		struct entry *e = &h->e[i];
		if (st->begin != at || st->end < st->begin)
			return entry_error(h, e->node,
					   "its data_offsets overlap another tensor or leave a hole");
		uint64_t n = 1, bits;
		for (uint32_t k = 0; k < e->ndim; k++)
			if (!mfs_mul_ok(n, e->dims[k], &n))
				return entry_error(h, e->node, "its shape overflows");
		if (e->bits) {
			if (!mfs_mul_ok(n, e->bits, &bits))
				return entry_error(h, e->node, "its byte length overflows");
			if (bits % 8 || bits / 8 != st->end - st->begin)
				return entry_error(h, e->node,
						   "its byte length is not its shape times its element size");
		}
		at = st->end;
	}
	if (at != buffer)
		return mfs_error(h->err, EINVAL,
				 "the tensors cover %llu bytes of the %llu-byte buffer",
				 (unsigned long long)at, (unsigned long long)buffer);
	return 0;
}

/* The tensor a header entry shows. A dtype of the table is shown with its
 * shape; other dtypes as opaque elements of bytes / elements each when
 * that divides (at most 64 bytes), else as one dimension of bytes. */
static void tensor_of(const struct entry *e, const struct st_tensor *st, uint64_t off,
		      struct mfs_tensor *t, uint64_t *one)
{
	uint64_t bytes = st->end - st->begin;
	*t = (struct mfs_tensor){.dtype = (uint8_t)e->dt, .ndim = e->ndim, .dims = e->dims,
				 .off = off};
	if (e->dt != MFS_DT_OPAQUE) {
		t->flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE;
		return;
	}
	t->flags = MFS_TF_WRITABLE;
	t->tname = e->tname;
	uint64_t n = 1;
	for (uint32_t k = 0; k < e->ndim; k++)
		n *= e->dims[k];  /* checked by check_layout */
	if (!n && !bytes) {
		t->esize = 1;
		return;
	}
	if (n && bytes % n == 0 && bytes / n >= 1 && bytes / n <= 64) {
		t->esize = (uint32_t)(bytes / n);
		return;
	}
	*one = bytes;
	t->ndim = 1;
	t->dims = one;
	t->esize = 1;
}

static int build_tree(struct hdr *h)
{
	struct mfs_model *m = h->m;
	const struct mfs_json *j = &h->j;
	struct st_file *f = h->f;
	mfs_add_raw(m, MFS_ROOT, "header.json", 11, 8, f->hlen, 0);
	mfs_id md = mfs_add_dir(m, MFS_ROOT, "metadata", 8);
	uint32_t mi = 0;
	uint32_t mnode = mfs_json_member(j, 0, "__metadata__");
	if (f->nmeta) {
		for (uint32_t c = j->v[mnode].first; c != MFS_JSON_NIL; c = j->v[c].next, mi++) {
			mfs_id id = mfs_add_text(m, md, mfs_json_key(j, c), j->v[c].keylen,
						 mfs_json_text(j, c), j->v[c].textlen,
						 MFS_NF_WRITABLE);
			mfs_set_tag(m, id, mi);
		}
	}
	mfs_id td = mfs_add_dir(m, MFS_ROOT, "tensors", 7);
	struct mfs_dotted *d = mfs_dotted_new(m, td, ".");
	if (!d)
		return mfs_error(h->err, ENOMEM, "out of memory");
	uint64_t data = 8 + f->hlen;
	for (uint32_t i = 0; i < f->ntensors; i++) {
		struct mfs_tensor t;
		uint64_t one;
		tensor_of(&h->e[i], &f->t[i], data + f->t[i].begin, &t, &one);
		t.tag = i;
		uint32_t c = h->e[i].node;
		mfs_dotted_add(d, mfs_json_key(j, c), j->v[c].keylen, &t, t.off,
			       f->t[i].end - f->t[i].begin);
	}
	mfs_dotted_finish(d, MFS_ROOT);
	return 0;
}

static int parse_header(struct hdr *h)
{
	struct mfs_model *m = h->m;
	uint64_t hlen = h->f->hlen;
	const char *text = (const char *)m->base + 8;
	if (mfs_json_parse(&h->j, text, hlen) < 0)
		return mfs_error(h->err, EINVAL, "the header is not valid JSON: %s", h->j.err);
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
	struct hdr h = {.m = m, .err = err};
	h.f = mfs_model_alloc(m, sizeof(*h.f));
	if (!h.f)
		return mfs_error(err, ENOMEM, "out of memory");
	memset(h.f, 0, sizeof(*h.f));
	h.f->hlen = hlen;
	int r = parse_header(&h);
	if (r == 0) {
		m->priv = h.f;
		r = build_tree(&h);
	}
	free(h.e);
	mfs_json_free(&h.j);
	return r;
}
