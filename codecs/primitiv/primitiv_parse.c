/* Reading primitiv's objects from the MessagePack stream: Shapes and Tensors
 * checked as primitiv itself would (dims, batch, a bin of exactly the
 * elements the shape needs) before anything is built for them. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "primitiv.h"

/* A name from the file made fit for a one-line message: at most 40 bytes,
 * control characters as '?'. */
const char *primitiv_msg_name(const uint8_t *p, uint64_t len, char out[48])
{
	size_t n = len > 40 ? 40 : (size_t)len;
	for (size_t i = 0; i < n; i++)
		out[i] = (p[i] < 0x20 || p[i] == 0x7f) ? '?' : (char)p[i];
	if (len > n) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

/* ---- reading ------------------------------------------------------------- */

int primitiv_read_shape(struct primitiv_cur *c, struct primitiv_shape *s)
{
	uint64_t n = 0;
	s->off = c->pos;
	int r = primitiv_array(c, "shape dims", &n);
	if (r < 0)
		return r;
	if (n > PRIMITIV_MAX_DIMS)
		return mfs_error(c->err, EINVAL, "shape at byte %llu: %llu dims, primitiv allows "
				 "at most %d", (unsigned long long)s->off, (unsigned long long)n,
				 PRIMITIV_MAX_DIMS);
	s->ndims = (uint32_t)n;
	for (uint32_t i = 0; i < s->ndims; i++) {
		if ((r = primitiv_uint32(c, "shape dim", &s->dims[i])) < 0)
			return r;
		if (s->dims[i] == 0)
			return mfs_error(c->err, EINVAL, "shape at byte %llu: dimension %u is 0 "
					 "(primitiv shapes are never empty)",
					 (unsigned long long)s->off, i);
	}
	if ((r = primitiv_uint32(c, "shape batch", &s->batch)) < 0)
		return r;
	if (s->batch == 0)
		return mfs_error(c->err, EINVAL, "shape at byte %llu: batch is 0",
				 (unsigned long long)s->off);
	return 0;
}

/* Elements of a stored shape (dims times batch); false on overflow. */
bool primitiv_shape_nelem(const struct primitiv_shape *s, uint64_t *n)
{
	uint64_t v = s->batch;
	for (uint32_t i = 0; i < s->ndims; i++)
		if (!mfs_mul_ok(v, s->dims[i], &v))
			return false;
	*n = v;
	return true;
}

int primitiv_read_tensor(struct primitiv_cur *c, struct primitiv_tensor *t)
{
	int r = primitiv_read_shape(c, &t->s);
	if (r < 0)
		return r;
	uint64_t at = c->pos, n, bytes;
	if ((r = primitiv_bin(c, "tensor data", &t->data, &t->len)) < 0)
		return r;
	if (!primitiv_shape_nelem(&t->s, &n) || !mfs_mul_ok(n, 4, &bytes))
		return mfs_error(c->err, EINVAL, "tensor data at byte %llu: %llu bytes, but its "
				 "shape (%u dims, batch %u) overflows: more than 2^64 bytes of "
				 "4-byte elements", (unsigned long long)at,
				 (unsigned long long)t->len, t->s.ndims, t->s.batch);
	if (bytes != t->len)
		return mfs_error(c->err, EINVAL, "tensor data at byte %llu: %llu bytes, but its "
				 "shape (%u dims, batch %u) needs %llu elements of 4 bytes",
				 (unsigned long long)at, (unsigned long long)t->len, t->s.ndims,
				 t->s.batch, (unsigned long long)n);
	return 0;
}
