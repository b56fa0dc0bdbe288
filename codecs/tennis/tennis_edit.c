/* TenniS edits as patches over the source: values in place, a field written
 * again with a new shape or dtype, strings of any length, header fields.
 * Nothing in a .tsm stores an offset, so what follows a resized field shifts. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "numtext.h"
#include "tennis.h"

/* The data offset and element count of the field whose dtype byte is at
 * off (checked when the model was indexed). */
static void field_extent(const struct mfs_model *m, uint64_t off, uint64_t *data,
			 uint64_t *nelem)
{
	uint32_t ndim = mfs_le32(m->base + off + 1);
	uint64_t n = 1;
	for (uint32_t k = 0; k < ndim; k++)
		n *= mfs_le32(m->base + off + TENNIS_FIELD_HEAD + 4 * (uint64_t)k);
	*data = off + TENNIS_FIELD_HEAD + 4 * (uint64_t)ndim;
	*nelem = n;
}

/* Replace source bytes [off, end) by a field header (dtype code, dims) and
 * bytes of data; returns where the data goes, or NULL when out of memory. */
static uint8_t *put_field(struct mfs_patch *p, uint64_t off, uint64_t end, unsigned code,
			  uint32_t ndim, const uint64_t *dims, uint64_t bytes)
{
	uint64_t head = TENNIS_FIELD_HEAD + 4 * (uint64_t)ndim;
	uint8_t *d = mfs_patch_alloc(p, off, end - off, head + bytes);
	if (!d)
		return NULL;
	d[0] = (uint8_t)code;
	mfs_put_le32(d + 1, ndim);
	for (uint32_t k = 0; k < ndim; k++)
		mfs_put_le32(d + TENNIS_FIELD_HEAD + 4 * k, (uint32_t)dims[k]);
	return d + head;
}

/* All elements with a new shape and maybe a new dtype: the field's dtype
 * byte, dims and data are written again as one span; the param's name and
 * field count stay. */
static int reshape(struct mfs_model *m, const struct mfs_tensor *t, const struct mfs_edit *e,
		   struct mfs_patch *p, struct mfs_err *err)
{
	uint64_t off = t->tag;
	unsigned code = m->base[off];
	if (e->dtype != t->dtype) {
		int c = tennis_code(e->dtype);
		if (!(t->flags & MFS_TF_RETYPE) || c < 0)
			return mfs_error(err, EINVAL, "a TenniS %s tensor cannot become %s",
					 t->tname ? t->tname : mfs_dtype_info(t->dtype)->name,
					 mfs_dtype_info(e->dtype)->name);
		code = (unsigned)c;
	}
	if (e->ndim > TENNIS_MAX_DIMS)
		return mfs_error(err, EINVAL, "%u dimensions: at most %u are supported", e->ndim,
				 TENNIS_MAX_DIMS);
	uint64_t nelem = 1, bytes;
	for (uint32_t k = 0; k < e->ndim; k++) {
		if (e->dims[k] > UINT32_MAX)
			return mfs_error(err, EINVAL,
					 "dimension %u is %llu: TenniS stores dimensions in 32 bits",
					 k, (unsigned long long)e->dims[k]);
		if (!mfs_mul_ok(nelem, e->dims[k], &nelem))
			return mfs_error(err, EINVAL, "the new shape overflows 64 bits");
	}
	unsigned esize = tennis_type_of(code)->size;
	if (!mfs_mul_ok(nelem, esize, &bytes) || bytes > SIZE_MAX / 2)
		return mfs_error(err, EFBIG, "%llu elements are too many",
				 (unsigned long long)nelem);
	uint8_t *d = put_field(p, off, t->off + t->nelem * t->esize, code, e->ndim, e->dims,
			       bytes);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	return mfs_reshape_fill(d, e, nelem, esize, err);
}

static int edit_tensor(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		       struct mfs_err *err)
{
	if (e->tensor >= m->ntensors)
		return mfs_error(err, EINVAL, "internal error: no tensor %u", e->tensor);
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (e->reshape)
		return reshape(m, t, e, p, err);
	/* Same shape: the elements are raw little-endian bytes in place. */
	return mfs_patch_raw_runs(p, t, e, err);
}

/* A #op or #name string: same length, its bytes only; else the field again
 * as a 1-D CHAR8 tensor of the new length. */
static int put_string(struct mfs_model *m, uint64_t off, const struct mfs_edit *e,
		      struct mfs_patch *p, struct mfs_err *err)
{
	uint64_t data, nelem;
	field_extent(m, off, &data, &nelem);
	if (e->len == nelem) {
		if (mfs_patch_put(p, data, nelem, e->text, e->len) < 0)
			return mfs_error(err, ENOMEM, "out of memory");
		return 0;
	}
	if ((uint64_t)e->len > UINT32_MAX)
		return mfs_error(err, EINVAL, "expected at most 4294967295 bytes (a TenniS string), got %zu",
				 e->len);
	uint64_t dim = e->len;
	uint8_t *d = put_field(p, off, data + nelem, TENNIS_CHAR8, 1, &dim, e->len);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(d, e->text, e->len);
	return 0;
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int put_fake(const struct mfs_edit *e, struct mfs_patch *p, struct mfs_err *err)
{
	const char *s = e->text;
	size_t n = e->len;
	while (n && blank(*s))
		s++, n--;
	while (n && blank(s[n - 1]))
		n--;
	uint64_t v;
	int rc = mfs_parse_u64(s, n, UINT32_MAX, &v);
	char q[MFS_QUOTE_MAX];
	if (rc == -ERANGE)
		return mfs_error(err, ERANGE, "%s is out of range for this 32-bit field, which holds 0 to 4294967295",
				 mfs_quote(q, s, n));
	if (rc < 0)
		return mfs_error(err, EINVAL, "%s is not a number, expected a decimal number from 0 to 4294967295",
				 mfs_quote(q, s, n));
	uint8_t *d = mfs_patch_alloc(p, 0, 4, 4);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	mfs_put_le32(d, (uint32_t)v);
	return 0;
}

static int edit_text(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		     struct mfs_err *err)
{
	if (e->node >= m->nnodes)
		return mfs_error(err, EINVAL, "internal error: no node %u", e->node);
	uint64_t tag = m->nodes[e->node].tag;
	switch (TENNIS_TAG_KIND(tag)) {
	case TENNIS_TAG_FAKE:
		return put_fake(e, p, err);
	case TENNIS_TAG_RESERVED:
		if (e->len != TENNIS_RESERVED_LEN)
			return mfs_error(err, EINVAL, "expected exactly %u bytes, got %zu (the size of this field cannot change)",
					 TENNIS_RESERVED_LEN, e->len);
		if (mfs_patch_put(p, TENNIS_RESERVED_OFF, TENNIS_RESERVED_LEN, e->text, e->len) < 0)
			return mfs_error(err, ENOMEM, "out of memory");
		return 0;
	case TENNIS_TAG_STRING:
		return put_string(m, TENNIS_TAG_OFF(tag), e, p, err);
	default:
		return mfs_error(err, EACCES, "%s is read-only", m->nodes[e->node].name);
	}
}

int tennis_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err)
{
	switch (e->kind) {
	case MFS_E_TEXT:
		return edit_text(m, e, p, err);
	case MFS_E_TENSOR:
		return edit_tensor(m, e, p, err);
	default:
		return mfs_error(err, EINVAL, "internal error: TenniS tensors are dense");
	}
}
