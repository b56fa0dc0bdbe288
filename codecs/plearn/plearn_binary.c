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

bool plearn_bin_int(const uint8_t *s, uint8_t code, int64_t *out)
{
	enum mfs_dtype dt = plearn_bin_dtype(code);
	unsigned sz = plearn_bin_size(code);
	if (!sz || dt == MFS_DT_F32 || dt == MFS_DT_F64)
		return false;
	uint8_t le[8] = {0};
	memcpy(le, s, sz);
	if (plearn_bin_be(code))
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

int plearn_parse_bin_id(struct plearn_parser *p, uint64_t at, uint64_t *id)
{
	uint8_t code = p->b[p->pos];
	unsigned sz = plearn_bin_size(code);
	int64_t v;
	if (p->n - p->pos - 1 < sz)
		return mfs_error(p->err, EINVAL, "pointer number at offset %llu needs %u bytes, %llu left",
				 ull(p->pos), sz + 1, ull(p->n - p->pos));
	if (!plearn_bin_int(p->b + p->pos + 1, code, &v) || v < 0 || v > UINT32_MAX)
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

/* A scalar of size sz after its type code c at p->pos. */
static int bin_scalar(struct plearn_parser *p, uint8_t c, unsigned sz, uint32_t *out)
{
	uint64_t at = p->pos, left = p->n - at;
	int r;
	if (left - 1 < sz)
		return mfs_error(p->err, EINVAL, "binary value of type 0x%02x at offset %llu needs %u bytes, %llu left",
				 c, ull(at), sz, ull(left - 1));
	if ((r = plearn_new_val(p, PLEARN_V_BNUM, at, out)))
		return r;
	p->a->v[*out].code = c;
	p->a->v[*out].len = 1 + sz;
	p->pos += 1 + sz;
	return 0;
}

/* A date (0xFE): the item after it. */
static int bin_date(struct plearn_parser *p, uint32_t *out)
{
	uint64_t at = p->pos;
	uint32_t kid;
	int r;
	p->pos++;
	plearn_skip(p, true);
	if ((r = plearn_new_val(p, PLEARN_V_BDATE, at, out)) || (r = plearn_parse_item(p, &kid)))
		return r;
	p->a->v[*out].first = kid;
	p->a->v[*out].len = p->a->v[kid].off + p->a->v[kid].len - at;
	return 0;
}

/* The count elements of sequence *out from p->b[data], of fixed size (or
 * the bools '0'/'1' of type 0x30), checked against the bytes left. */
static int seq_fixed(struct plearn_parser *p, uint64_t at, uint8_t et, uint64_t count, uint64_t data,
		     uint32_t out)
{
	unsigned esz = plearn_bin_size(et);
	uint64_t bytes, left = p->n - data;
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
	p->a->v[out].len = p->pos - at;
	return 0;
}

/* The count generic elements of sequence *out from p->b[data], each an
 * item with its own header (one byte at least). */
static int seq_items(struct plearn_parser *p, uint64_t at, uint64_t count, uint64_t data, uint32_t out)
{
	uint64_t left = p->n - data;
	int r;
	if (count > left)
		return mfs_error(p->err, EINVAL, "binary sequence at offset %llu: %llu elements, %llu bytes left",
				 ull(at), ull(count), ull(left));
	p->pos = data;
	struct plearn_kids k = {PLEARN_NIL, PLEARN_NIL, 0};
	for (uint64_t i = 0; i < count; i++) {
		uint32_t kid;
		plearn_skip(p, true);
		if ((r = plearn_parse_item(p, &kid)))
			return r;
		plearn_add_kid(p->a, &k, kid);
	}
	p->a->v[out].first = k.first;
	p->a->v[out].len = p->pos - at;
	return 0;
}

/* A 1-D (0x12 little-endian, 0x13 big-endian) or 2-D (0x14, 0x15)
 * sequence: element type, then uint32 length or int32 length and width. */
static int bin_sequence(struct plearn_parser *p, uint8_t c, uint32_t *out)
{
	uint64_t at = p->pos, left = p->n - at;
	bool be = c == 0x13 || c == 0x15, two = c == 0x14 || c == 0x15;
	int r;
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
	if ((r = plearn_new_val(p, two ? PLEARN_V_BMAT : PLEARN_V_BSEQ, at, out)))
		return r;
	struct plearn_val *v = &p->a->v[*out];
	v->code = et;
	v->flags = be ? PLEARN_VF_BE : 0;
	v->a = d0;
	v->b = d1;
	v->c = data;
	if (plearn_bin_size(et) || et == 0x30)
		return seq_fixed(p, at, et, count, data, *out);
	if (et != 0xFF && et != 0xFE)
		return mfs_error(p->err, EINVAL, "binary sequence at offset %llu has an unknown element type 0x%02x",
				 ull(at), et);
	return seq_items(p, at, count, data, *out);
}

/* A binary value: a scalar, a 1-D or 2-D sequence, or a date. */
int plearn_parse_binary(struct plearn_parser *p, uint32_t *out)
{
	uint8_t c = p->b[p->pos];
	unsigned sz = plearn_bin_size(c);
	p->a->binary = true;
	if (sz)
		return bin_scalar(p, c, sz, out);
	if (c == 0xFE)
		return bin_date(p, out);
	return bin_sequence(p, c, out);
}
