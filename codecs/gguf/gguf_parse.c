/* Parsing a GGUF file (versions 2 and 3, little-endian): header, key-value
 * section, tensor infos and the data section's place. Only the structure is
 * walked; every count and length is checked against the bytes left before
 * it is used or anything is allocated from it. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "dtype.h"
#include "gguf.h"

struct rd {
	const uint8_t *b;
	uint64_t size, pos;
	struct mfs_err *err;
};

static uint64_t left(const struct rd *r)
{
	return r->size - r->pos;
}

static int need(struct rd *r, uint64_t n, const char *what)
{
	if (n > left(r))
		return mfs_error(r->err, EINVAL,
				 "truncated: %s needs %llu bytes at offset %llu, the file has %llu",
				 what, (unsigned long long)n, (unsigned long long)r->pos,
				 (unsigned long long)r->size);
	return 0;
}

/* n bytes (4 or 8) at r->pos as a little-endian number. */
static int num(struct rd *r, unsigned n, uint64_t *v, const char *what)
{
	int e = need(r, n, what);
	if (e < 0)
		return e;
	*v = n == 4 ? mfs_le32(r->b + r->pos) : mfs_le64(r->b + r->pos);
	r->pos += n;
	return 0;
}

static int u32(struct rd *r, uint32_t *v, const char *what)
{
	uint64_t x = 0;
	int e = num(r, 4, &x, what);
	*v = (uint32_t)x;
	return e;
}

static int u64(struct rd *r, uint64_t *v, const char *what)
{
	return num(r, 8, v, what);
}

/* A string: u64 length, bytes. *off gets the bytes' offset. */
static int str(struct rd *r, uint64_t *off, uint64_t *len, const char *what)
{
	int e = u64(r, len, what);
	if (e < 0)
		return e;
	if (*len > left(r))
		return mfs_error(r->err, EINVAL,
				 "%s of %llu bytes at offset %llu runs past the end of the file (%llu bytes)",
				 what, (unsigned long long)*len, (unsigned long long)r->pos - 8,
				 (unsigned long long)r->size);
	*off = r->pos;
	r->pos += *len;
	return 0;
}

static const uint8_t vt_sizes[GGUF_VT_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};
static const uint8_t vt_dtypes[GGUF_VT_COUNT] = {
	MFS_DT_U8, MFS_DT_I8, MFS_DT_U16, MFS_DT_I16, MFS_DT_U32, MFS_DT_I32, MFS_DT_F32,
	MFS_DT_BOOL, 0, 0, MFS_DT_U64, MFS_DT_I64, MFS_DT_F64,
};

unsigned mfs_gguf_vt_size(uint32_t vt)
{
	return vt < GGUF_VT_COUNT ? vt_sizes[vt] : 0;
}

uint8_t mfs_gguf_vt_dtype(uint32_t vt)
{
	return vt < GGUF_VT_COUNT ? vt_dtypes[vt] : 0;
}

/* Skip one value of type vt at r->pos (depth: arrays around it). */
static int skip_value(struct rd *r, uint32_t vt, int depth)
{
	if (vt >= GGUF_VT_COUNT)
		return mfs_error(r->err, EINVAL, "unknown value type %u at offset %llu", vt,
				 (unsigned long long)r->pos);
	if (vt == GGUF_STR) {
		uint64_t off, len;
		return str(r, &off, &len, "a string");
	}
	if (vt != GGUF_ARR) {
		int e = need(r, vt_sizes[vt], "a value");
		if (e == 0)
			r->pos += vt_sizes[vt];
		return e;
	}
	if (depth >= GGUF_MAX_DEPTH)
		return mfs_error(r->err, EINVAL, "arrays nested more than %d deep at offset %llu",
				 GGUF_MAX_DEPTH, (unsigned long long)r->pos);
	uint32_t et;
	uint64_t n, at = r->pos;
	int e = u32(r, &et, "an array's type");
	if (e == 0)
		e = u64(r, &n, "an array's length");
	if (e < 0)
		return e;
	if (et >= GGUF_VT_COUNT)
		return mfs_error(r->err, EINVAL, "unknown array element type %u at offset %llu", et,
				 (unsigned long long)at);
	/* Each element takes at least this many bytes: the count is checked
	 * against the bytes left before the elements are walked. */
	uint64_t min = et == GGUF_STR ? 8 : et == GGUF_ARR ? 12 : vt_sizes[et], total;
	if (!mfs_mul_ok(n, min, &total) || total > left(r))
		return mfs_error(r->err, EINVAL,
				 "an array of %llu elements at offset %llu needs at least %llu bytes per element, only %llu bytes are left",
				 (unsigned long long)n, (unsigned long long)at,
				 (unsigned long long)min, (unsigned long long)left(r));
	if (et != GGUF_STR && et != GGUF_ARR) {
		r->pos += total;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++) {
		e = skip_value(r, et, depth + 1);
		if (e < 0)
			return e;
	}
	return 0;
}

static bool key_is(const struct rd *r, const struct gguf_kv *kv, const char *s)
{
	size_t n = strlen(s);
	return kv->key_len == n && memcmp(r->b + kv->key, s, n) == 0;
}

static int parse_kv(struct rd *r, struct gguf_file *f)
{
	for (uint64_t i = 0; i < f->n_kv; i++) {
		struct gguf_kv *kv = &f->kv[i];
		kv->start = r->pos;
		int e = str(r, &kv->key, &kv->key_len, "a key");
		if (e == 0)
			e = u32(r, &kv->type, "a value type");
		if (e < 0)
			return e;
		kv->val = r->pos;
		e = skip_value(r, kv->type, 0);
		if (e < 0)
			return e;
		kv->end = r->pos;
		if (key_is(r, kv, "general.alignment")) {
			if (kv->type != GGUF_U32)
				return mfs_error(r->err, EINVAL,
						 "general.alignment at offset %llu has value type %u, expected 4 (uint32)",
						 (unsigned long long)kv->start, kv->type);
			uint32_t a = mfs_le32(r->b + kv->val);
			if (a == 0 || (a & (a - 1)))
				return mfs_error(r->err, EINVAL,
						 "general.alignment is %u, expected a power of two", a);
			f->alignment = a;
		}
	}
	return 0;
}

static int parse_tinfo(struct rd *r, struct gguf_tinfo *t)
{
	uint64_t at = r->pos;
	int e = str(r, &t->name, &t->name_len, "a tensor name");
	if (e == 0)
		e = u32(r, &t->ndim, "a tensor's dimension count");
	if (e < 0)
		return e;
	if (t->ndim > GGUF_MAX_DIMS)
		return mfs_error(r->err, EINVAL, "tensor at offset %llu has %u dimensions, at most %d",
				 (unsigned long long)at, t->ndim, GGUF_MAX_DIMS);
	for (uint32_t d = 0; d < t->ndim; d++)
		if ((e = u64(r, &t->ne[d], "a tensor's dimension")) < 0)
			return e;
	if ((e = u32(r, &t->type, "a tensor's type")) < 0 || (e = u64(r, &t->rel, "a tensor's offset")) < 0)
		return e;
	const struct ggml_type_info *ty = mfs_ggml_type(t->type);
	if (!ty)
		return mfs_error(r->err, EINVAL, "tensor at offset %llu has unknown ggml type %u",
				 (unsigned long long)at, t->type);
	uint64_t n = 1;
	for (uint32_t d = 0; d < t->ndim; d++)
		if (!mfs_mul_ok(n, t->ne[d], &n))
			return mfs_error(r->err, EINVAL, "tensor at offset %llu: shape overflows",
					 (unsigned long long)at);
	uint64_t ne0 = t->ndim ? t->ne[0] : 1;
	if (ne0 % ty->blck)
		return mfs_error(r->err, EINVAL,
				 "tensor at offset %llu: its first dimension %llu is not a multiple of the %s block size %u",
				 (unsigned long long)at, (unsigned long long)ne0, ty->name, ty->blck);
	if (!mfs_mul_ok(n / ty->blck, ty->bytes, &t->nbytes))
		return mfs_error(r->err, EINVAL, "tensor at offset %llu: size overflows",
				 (unsigned long long)at);
	return 0;
}

/* The data section and every tensor's place in it. */
static int check_data(struct rd *r, struct gguf_file *f)
{
	uint64_t a = f->alignment, pad = (a - f->ti_end % a) % a;
	f->data = f->ti_end + pad;
	for (uint64_t i = 0; i < f->n_tensors; i++) {
		const struct gguf_tinfo *t = &f->ti[i];
		if (t->rel % a)
			return mfs_error(r->err, EINVAL,
					 "tensor %llu has offset %llu, not a multiple of the alignment %u",
					 (unsigned long long)i, (unsigned long long)t->rel, f->alignment);
		uint64_t start, end;
		if (!mfs_add_ok(f->data, t->rel, &start) || !mfs_add_ok(start, t->nbytes, &end) ||
		    end > r->size)
			return mfs_error(r->err, EINVAL,
					 "truncated: tensor %llu has %llu bytes at offset %llu, the file has %llu",
					 (unsigned long long)i, (unsigned long long)t->nbytes,
					 (unsigned long long)f->data + t->rel, (unsigned long long)r->size);
	}
	return 0;
}

/* The header: magic, version, counts. */
static int parse_header(struct rd *r, struct gguf_file *f)
{
	if (r->size < 4 || memcmp(r->b, "GGUF", 4) != 0) {
		char q[MFS_QUOTE_MAX];
		size_t n = r->size < 4 ? (size_t)r->size : 4;
		return mfs_error(r->err, EINVAL, "not a GGUF file: expected \"GGUF\" at byte 0, found %s (%llu bytes)",
				 mfs_quote(q, r->b, n), (unsigned long long)r->size);
	}
	r->pos = 4;
	int e = u32(r, &f->version, "the version");
	if (e < 0)
		return e;
	uint32_t sw = __builtin_bswap32(f->version);
	if (f->version > 0xFFFF && (sw == 2 || sw == 3))
		return mfs_error(r->err, EINVAL,
				 "big-endian GGUF (version %u) is not supported, only little-endian", sw);
	if (f->version != 2 && f->version != 3)
		return mfs_error(r->err, EINVAL, "GGUF version %u is not supported (only 2 and 3)",
				 f->version);
	if ((e = u64(r, &f->n_tensors, "the tensor count")) < 0 ||
	    (e = u64(r, &f->n_kv, "the key-value count")) < 0)
		return e;
	/* A key-value pair takes at least 13 bytes, a tensor info 24. */
	uint64_t kvmin, timin, sum;
	if (!mfs_mul_ok(f->n_kv, 13, &kvmin) || !mfs_mul_ok(f->n_tensors, 24, &timin) ||
	    !mfs_add_ok(kvmin, timin, &sum) || sum > left(r))
		return mfs_error(r->err, EINVAL,
				 "%llu key-value pairs and %llu tensors cannot fit in the %llu bytes after the header",
				 (unsigned long long)f->n_kv, (unsigned long long)f->n_tensors,
				 (unsigned long long)left(r));
	return 0;
}

int mfs_gguf_parse(struct mfs_model *m, struct gguf_file *f, struct mfs_err *err)
{
	struct rd r = {m->base, m->size, 0, err};
	memset(f, 0, sizeof(*f));
	f->alignment = GGUF_DEFAULT_ALIGNMENT;
	int e = parse_header(&r, f);
	if (e < 0)
		return e;
	f->kv = mfs_model_alloc(m, (size_t)(f->n_kv ? f->n_kv : 1) * sizeof(*f->kv));
	f->ti = mfs_model_alloc(m, (size_t)(f->n_tensors ? f->n_tensors : 1) * sizeof(*f->ti));
	if (!f->kv || !f->ti)
		return mfs_error(err, ENOMEM, "out of memory");
	memset(f->ti, 0, (size_t)(f->n_tensors ? f->n_tensors : 1) * sizeof(*f->ti));
	if ((e = parse_kv(&r, f)) < 0)
		return e;
	f->kv_end = r.pos;
	for (uint64_t i = 0; i < f->n_tensors; i++)
		if ((e = parse_tinfo(&r, &f->ti[i])) < 0)
			return e;
	f->ti_end = r.pos;
	return check_data(&r, f);
}
