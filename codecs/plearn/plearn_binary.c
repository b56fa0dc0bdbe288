/* plearn_binary values (PLearn's PStream): scalars after a type
 * code, 1-D sequences (0x12/0x13, element type, uint32 length) and 2-D ones
 * (0x14/0x15, element type, int32 length and width), dates, pointer ids. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "plearn.h"

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

bool pl_bin_int(const uint8_t *s, uint8_t code, int64_t *out)
{
	enum mfs_dtype dt = pl_bin_dtype(code);
	unsigned sz = pl_bin_size(code);
	if (!sz || dt == MFS_DT_F32 || dt == MFS_DT_F64)
		return false;
	uint8_t le[8] = {0};
	memcpy(le, s, sz);
	if (pl_bin_be(code))
		mfs_swap_elems(le, 1, sz);
	uint64_t u = mfs_le64(le);
	bool sgn = dt == MFS_DT_I8 || dt == MFS_DT_I16 || dt == MFS_DT_I32 || dt == MFS_DT_I64;
	if (sgn && sz < 8 && (u >> (8 * sz - 1)))
		u |= ~0ull << (8 * sz);  /* sign-extend */
	if (!sgn && u > INT64_MAX)
		return false;
	*out = (int64_t)u;
	return true;
}

int pl_parse_bin_id(struct pl_parser *p, uint64_t at, uint64_t *id)
{
	uint8_t code = p->b[p->pos];
	unsigned sz = pl_bin_size(code);
	int64_t v;
	if (p->n - p->pos - 1 < sz)
		return mfs_error(p->err, EINVAL, "pointer number at offset %llu needs %u bytes, %llu left",
				 ull(p->pos), sz + 1, ull(p->n - p->pos));
	if (!pl_bin_int(p->b + p->pos + 1, code, &v) || v < 0 || v > UINT32_MAX)
		return mfs_error(p->err, EINVAL, "bad binary pointer number after '*' at offset %llu",
				 ull(at));
	*id = (uint64_t)v;
	p->pos += 1 + sz;
	p->a->binary = true;
	return 0;
}

static uint32_t rd32(const uint8_t *s, bool be)
{
	return be ? mfs_be32(s) : mfs_le32(s);
}

/* A binary value: a scalar, a 1-D or 2-D sequence, or a date. */
int pl_parse_binary(struct pl_parser *p, uint32_t *out)
{
	struct pl_ast *a = p->a;
	uint64_t at = p->pos, left = p->n - at;
	uint8_t c = p->b[at];
	unsigned sz = pl_bin_size(c);
	int r;
	a->binary = true;
	if (sz) {
		if (left - 1 < sz)
			return mfs_error(p->err, EINVAL, "binary value of type 0x%02x at offset %llu needs %u bytes, %llu left",
					 c, ull(at), sz, ull(left - 1));
		if ((r = pl_new_val(p, PV_BNUM, at, out)))
			return r;
		a->v[*out].code = c;
		a->v[*out].len = 1 + sz;
		p->pos += 1 + sz;
		return 0;
	}
	if (c == 0xFE) {
		uint32_t kid;
		p->pos++;
		pl_skip(p, true);
		if ((r = pl_new_val(p, PV_BDATE, at, out)) || (r = pl_parse_item(p, &kid)))
			return r;
		a->v[*out].first = kid;
		a->v[*out].len = a->v[kid].off + a->v[kid].len - at;
		return 0;
	}
	bool be = c == 0x13 || c == 0x15, two = c == 0x14 || c == 0x15;
	if (c < 0x12 || c > 0x15)
		return mfs_error(p->err, EINVAL, "unknown binary type code 0x%02x at offset %llu", c, ull(at));
	unsigned hdr = two ? 10 : 6;
	if (left < hdr)
		return mfs_error(p->err, EINVAL, "binary sequence at offset %llu: header needs %u bytes, %llu left",
				 ull(at), hdr, ull(left));
	uint8_t et = p->b[at + 1];
	uint64_t d0 = rd32(p->b + at + 2, be), d1 = 0, count = d0;
	if (two) {
		d1 = rd32(p->b + at + 6, be);
		if ((int32_t)d0 < 0 || (int32_t)d1 < 0)
			return mfs_error(p->err, EINVAL, "binary matrix at offset %llu has a negative size",
					 ull(at));
		count = d0 * d1;
	}
	uint64_t data = at + hdr;
	left = p->n - data;
	if ((r = pl_new_val(p, two ? PV_BMAT : PV_BSEQ, at, out)))
		return r;
	struct pl_val *v = &a->v[*out];
	v->code = et;
	v->flags = be ? PVF_BE : 0;
	v->a = d0;
	v->b = d1;
	v->c = data;
	unsigned esz = pl_bin_size(et);
	if (esz || et == 0x30) {
		uint64_t bytes;
		if (!mfs_mul_ok(count, esz ? esz : 1, &bytes) || bytes > left)
			return mfs_error(p->err, EINVAL,
					 "binary sequence at offset %llu: %llu elements of %u bytes, %llu bytes left",
					 ull(at), ull(count), esz ? esz : 1, ull(left));
		for (uint64_t i = 0; et == 0x30 && i < count; i++)
			if (p->b[data + i] != '0' && p->b[data + i] != '1')
				return mfs_error(p->err, EINVAL,
						 "binary bool sequence at offset %llu: element %llu is 0x%02x, not '0' or '1'",
						 ull(at), ull(i), p->b[data + i]);
		p->pos = data + bytes;
		v->len = p->pos - at;
		return 0;
	}
	if (et != 0xFF && et != 0xFE)
		return mfs_error(p->err, EINVAL, "binary sequence at offset %llu has an unknown element type 0x%02x",
				 ull(at), et);
	/* Generic elements, each with its own header: one byte at least. */
	if (count > left)
		return mfs_error(p->err, EINVAL, "binary sequence at offset %llu: %llu elements, %llu bytes left",
				 ull(at), ull(count), ull(left));
	p->pos = data;
	struct pl_kids k = {PL_NIL, PL_NIL, 0};
	for (uint64_t i = 0; i < count; i++) {
		uint32_t kid;
		pl_skip(p, true);
		if ((r = pl_parse_item(p, &kid)))
			return r;
		pl_add_kid(a, &k, kid);
	}
	a->v[*out].first = k.first;
	a->v[*out].len = p->pos - at;
	return 0;
}

