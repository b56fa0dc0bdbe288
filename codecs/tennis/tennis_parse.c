/* TenniS .tsm reading: a cursor over the mapped file whose every read is
 * checked against the bytes left (counts before anything is built for
 * them), and the packed-tensor field. The tree is built in tennis_tree.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "tennis.h"

void tennis_where(struct tennis_rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->where, sizeof(r->where), fmt, ap);
	va_end(ap);
}

uint64_t tennis_left(const struct tennis_rd *r)
{
	return r->size - r->pos;
}

int tennis_truncated(struct tennis_rd *r, const char *what, uint64_t need)
{
	return mfs_error(r->err, EINVAL, "%s: %s needs %llu bytes at offset %llu, %llu left",
			 r->where, what, (unsigned long long)need, (unsigned long long)r->pos,
			 (unsigned long long)tennis_left(r));
}

int tennis_get_u32(struct tennis_rd *r, const char *what, uint32_t *v)
{
	*v = 0;  /* on every path: compilers cannot tell that errors are < 0 */
	if (tennis_left(r) < 4)
		return tennis_truncated(r, what, 4);
	*v = mfs_le32(r->b + r->pos);
	r->pos += 4;
	return 0;
}

/* A count of items that take at least each bytes, checked against the bytes
 * left before anything is built for them. */
int tennis_get_count(struct tennis_rd *r, const char *what, uint64_t each, uint32_t *n)
{
	uint64_t at = r->pos;
	int rc = tennis_get_u32(r, what, n);
	if (rc < 0)
		return rc;
	uint64_t need = (uint64_t)*n * each;  /* < 2^32 * 2^32: no overflow */
	if (need > tennis_left(r))
		return mfs_error(r->err, EINVAL,
				 "%s: %s %u at offset %llu needs at least %llu bytes, %llu left",
				 r->where, what, *n, (unsigned long long)at, (unsigned long long)need,
				 (unsigned long long)tennis_left(r));
	return 0;
}

int tennis_get_list(struct tennis_rd *r, struct tennis_list *l)
{
	int rc = tennis_get_count(r, "index count", 4, &l->n);
	if (rc < 0)
		return rc;
	l->off = r->pos;
	r->pos += (uint64_t)l->n * 4;
	return 0;
}

int tennis_check_list(struct tennis_rd *r, const char *what, const struct tennis_list *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		uint32_t v = mfs_le32(r->b + l->off + 4 * (uint64_t)i);
		if (v >= r->nnodes)
			return mfs_error(r->err, EINVAL,
					 "%s %u at offset %llu: node index %u is beyond the %u nodes",
					 what, i, (unsigned long long)(l->off + 4 * (uint64_t)i), v,
					 r->nnodes);
	}
	return 0;
}

/* A name from the file, fit for a message: control bytes as '?', at most 40
 * bytes (not cutting a UTF-8 character). */
void tennis_show_name(char out[48], const uint8_t *s, uint64_t len)
{
	size_t n = len > 40 ? 40 : (size_t)len;
	if (n < len)
		while (n && (s[n] & 0xC0) == 0x80)
			n--;
	for (size_t i = 0; i < n; i++)
		out[i] = (s[i] < 0x20 || s[i] == 0x7F) ? '?' : (char)s[i];
	if (n < len)
		memcpy(out + n, "...", 4);
	else
		out[n] = '\0';
}

static const char *type_name(const struct tennis_type *ty)
{
	return ty->name ? ty->name : mfs_dtype_info((enum mfs_dtype)ty->dtype)->name;
}

int tennis_read_field(struct tennis_rd *r, struct tennis_field *f)
{
	if (tennis_left(r) < TENNIS_FIELD_HEAD)
		return tennis_truncated(r, "dtype and dims count", TENNIS_FIELD_HEAD);
	f->off = r->pos;
	f->code = r->b[r->pos];
	const struct tennis_type *ty = tennis_type_of(f->code);
	if (!ty)
		return mfs_error(r->err, EINVAL, "%s: unknown dtype code %u at offset %llu",
				 r->where, f->code, (unsigned long long)f->off);
	f->ndim = mfs_le32(r->b + r->pos + 1);
	r->pos += TENNIS_FIELD_HEAD;
	if ((uint64_t)f->ndim * 4 > tennis_left(r))
		return mfs_error(r->err, EINVAL, "%s: dims count %u needs %llu bytes, %llu left",
				 r->where, f->ndim, (unsigned long long)f->ndim * 4,
				 (unsigned long long)tennis_left(r));
	if (f->ndim > TENNIS_MAX_DIMS)
		return mfs_error(r->err, EINVAL, "%s: %u dimensions, at most %u are supported",
				 r->where, f->ndim, TENNIS_MAX_DIMS);
	f->nelem = 1;
	for (uint32_t k = 0; k < f->ndim; k++) {
		f->dims[k] = mfs_le32(r->b + r->pos + 4 * (uint64_t)k);
		if (!mfs_mul_ok(f->nelem, f->dims[k], &f->nelem))
			return mfs_error(r->err, EINVAL, "%s: shape at offset %llu overflows 64 bits",
					 r->where, (unsigned long long)r->pos);
	}
	r->pos += 4 * (uint64_t)f->ndim;
	uint64_t bytes;
	if (!mfs_mul_ok(f->nelem, ty->size, &bytes))
		return mfs_error(r->err, EINVAL, "%s: %llu %s elements overflow 64 bits",
				 r->where, (unsigned long long)f->nelem, type_name(ty));
	if (bytes > tennis_left(r))
		return mfs_error(r->err, EINVAL, "%s: %llu %s elements need %llu bytes, %llu left",
				 r->where, (unsigned long long)f->nelem, type_name(ty),
				 (unsigned long long)bytes, (unsigned long long)tennis_left(r));
	f->data = r->pos;
	r->pos += bytes;
	return 0;
}
