/* Reading primitiv's MessagePack stream (private to the primitiv codec): a cursor
 * that reads one msgpack header at a time and checks every declared length
 * against the bytes left before anyone uses it. Payloads are never copied or
 * decoded here: strings and bins come back as (offset, length) in the source.
 */
#ifndef MFS_PRIMITIV_WIRE_H
#define MFS_PRIMITIV_WIRE_H

#include <errno.h>
#include <stdint.h>

#include "bytes.h"
#include "error.h"

struct primitiv_cur {
	const uint8_t *base;    /* the source bytes */
	uint64_t pos, end;      /* next byte to read; end of the source */
	struct mfs_err *err;
};

static inline uint64_t primitiv_left(const struct primitiv_cur *c)
{
	return c->end - c->pos;
}

/* A short name of the msgpack type a byte starts, for error messages. */
static inline const char *primitiv_type_name(uint8_t b)
{
	if (b <= 0x7f)
		return "positive fixint";
	if (b <= 0x8f)
		return "fixmap";
	if (b <= 0x9f)
		return "fixarray";
	if (b <= 0xbf)
		return "fixstr";
	if (b >= 0xe0)
		return "negative fixint";
	static const char *const names[] = {
		"nil", "(never used)", "false", "true", "bin8", "bin16", "bin32",
		"ext8", "ext16", "ext32", "float32", "float64", "uint8", "uint16",
		"uint32", "uint64", "int8", "int16", "int32", "int64", "fixext1",
		"fixext2", "fixext4", "fixext8", "fixext16", "str8", "str16", "str32",
		"array16", "array32", "map16", "map32",
	};
	return names[b - 0xc0];
}

static inline int primitiv_short(struct primitiv_cur *c, uint64_t at, const char *what, uint64_t need)
{
	return mfs_error(c->err, EINVAL, "%s at byte %llu: needs %llu bytes, %llu left", what,
			 (unsigned long long)at, (unsigned long long)need,
			 (unsigned long long)(c->end - at));
}

static inline int primitiv_wrong(struct primitiv_cur *c, uint64_t at, const char *what, const char *expect)
{
	uint8_t b = c->base[at];
	return mfs_error(c->err, EINVAL, "%s at byte %llu: expected %s, found %s (0x%02x)", what,
			 (unsigned long long)at, expect, primitiv_type_name(b), b);
}

/* Big-endian unsigned integer of n (1, 2, 4 or 8) bytes at p. */
static inline uint64_t primitiv_be(const uint8_t *p, unsigned n)
{
	switch (n) {
	case 1: return p[0];
	case 2: return mfs_be16(p);
	case 4: return mfs_be32(p);
	default: return mfs_be64(p);
	}
}

/* An unsigned integer that fits in 32 bits. primitiv writes every one as
 * uint32 (0xce); any msgpack integer form is accepted here. */
static inline int primitiv_uint32(struct primitiv_cur *c, const char *what, uint32_t *v)
{
	uint64_t at = c->pos;
	if (primitiv_left(c) < 1)
		return primitiv_short(c, at, what, 1);
	uint8_t b = c->base[at];
	if (b <= 0x7f) {
		*v = b;
		c->pos++;
		return 0;
	}
	unsigned n;
	bool is_signed = false;
	switch (b) {
	case 0xcc: n = 1; break;
	case 0xcd: n = 2; break;
	case 0xce: n = 4; break;
	case 0xcf: n = 8; break;
	case 0xd0: n = 1; is_signed = true; break;
	case 0xd1: n = 2; is_signed = true; break;
	case 0xd2: n = 4; is_signed = true; break;
	case 0xd3: n = 8; is_signed = true; break;
	default:
		return primitiv_wrong(c, at, what, "an unsigned integer");
	}
	if (primitiv_left(c) < 1 + (uint64_t)n)
		return primitiv_short(c, at, what, 1 + (uint64_t)n);
	uint64_t x = primitiv_be(c->base + at + 1, n);
	if (is_signed && (x >> (8 * n - 1)) & 1) {
		int64_t neg = (int64_t)(x | (n < 8 ? ~0ull << (8 * n) : 0));
		return mfs_error(c->err, EINVAL, "%s at byte %llu: expected an unsigned 32-bit "
				 "integer, found %lld", what, (unsigned long long)at, (long long)neg);
	}
	if (x > UINT32_MAX)
		return mfs_error(c->err, EINVAL, "%s at byte %llu: expected an unsigned 32-bit "
				 "integer, found %llu", what, (unsigned long long)at,
				 (unsigned long long)x);
	*v = (uint32_t)x;
	c->pos = at + 1 + n;
	return 0;
}

/* A length-prefixed header: fix forms carry the length in the type byte
 * (fixmask bits of it, for type bytes in [fixlo, fixhi]), the others in a
 * field of 1, 2 or 4 bytes after it (codes c1, c2, c4; 0 = no such form). */
struct primitiv_lenform {
	uint8_t fixlo, fixhi, fixmask;
	uint8_t c1, c2, c4;
	const char *name;
};

static inline int primitiv_len(struct primitiv_cur *c, const char *what, const struct primitiv_lenform *f,
			       uint64_t *len)
{
	uint64_t at = c->pos;
	if (primitiv_left(c) < 1)
		return primitiv_short(c, at, what, 1);
	uint8_t b = c->base[at];
	unsigned n;
	if (b >= f->fixlo && b <= f->fixhi && f->fixmask) {
		*len = b & f->fixmask;
		c->pos++;
		return 0;
	}
	if (f->c1 && b == f->c1)
		n = 1;
	else if (b == f->c2)
		n = 2;
	else if (b == f->c4)
		n = 4;
	else
		return primitiv_wrong(c, at, what, f->name);
	if (primitiv_left(c) < 1 + (uint64_t)n)
		return primitiv_short(c, at, what, 1 + (uint64_t)n);
	*len = primitiv_be(c->base + at + 1, n);
	c->pos = at + 1 + n;
	return 0;
}

/* An array header; every element takes at least one byte, so a count
 * larger than the bytes left is refused here. */
static inline int primitiv_array(struct primitiv_cur *c, const char *what, uint64_t *n)
{
	static const struct primitiv_lenform f = {0x90, 0x9f, 0x0f, 0, 0xdc, 0xdd, "an array"};
	uint64_t at = c->pos;
	int r = primitiv_len(c, what, &f, n);
	if (r == 0 && *n > primitiv_left(c))
		return mfs_error(c->err, EINVAL, "%s at byte %llu: %llu elements need at least "
				 "%llu bytes, %llu left", what, (unsigned long long)at,
				 (unsigned long long)*n, (unsigned long long)*n,
				 (unsigned long long)primitiv_left(c));
	return r;
}

/* A map header; each entry takes at least two bytes. */
static inline int primitiv_map(struct primitiv_cur *c, const char *what, uint64_t *n)
{
	static const struct primitiv_lenform f = {0x80, 0x8f, 0x0f, 0, 0xde, 0xdf, "a map"};
	uint64_t at = c->pos;
	int r = primitiv_len(c, what, &f, n);
	if (r == 0 && *n > primitiv_left(c) / 2)
		return mfs_error(c->err, EINVAL, "%s at byte %llu: %llu entries need at least "
				 "%llu bytes, %llu left", what, (unsigned long long)at,
				 (unsigned long long)*n, (unsigned long long)*n * 2,
				 (unsigned long long)primitiv_left(c));
	return r;
}

/* Skip a payload of len bytes that a header just declared. */
static inline int primitiv_payload(struct primitiv_cur *c, uint64_t at, const char *what, uint64_t len,
				   uint64_t *off)
{
	if (len > primitiv_left(c))
		return mfs_error(c->err, EINVAL, "%s at byte %llu: declares %llu bytes, %llu left",
				 what, (unsigned long long)at, (unsigned long long)len,
				 (unsigned long long)primitiv_left(c));
	*off = c->pos;
	c->pos += len;
	return 0;
}

/* A string: its bytes are [*off, *off + *len) of the source. */
static inline int primitiv_str(struct primitiv_cur *c, const char *what, uint64_t *off, uint64_t *len)
{
	static const struct primitiv_lenform f = {0xa0, 0xbf, 0x1f, 0xd9, 0xda, 0xdb, "a string"};
	uint64_t at = c->pos;
	int r = primitiv_len(c, what, &f, len);
	return r < 0 ? r : primitiv_payload(c, at, what, *len, off);
}

/* A bin: its payload is [*off, *off + *len) of the source. */
static inline int primitiv_bin(struct primitiv_cur *c, const char *what, uint64_t *off, uint64_t *len)
{
	static const struct primitiv_lenform f = {0, 0, 0, 0xc4, 0xc5, 0xc6, "a bin"};
	uint64_t at = c->pos;
	int r = primitiv_len(c, what, &f, len);
	return r < 0 ? r : primitiv_payload(c, at, what, *len, off);
}

/* A float32 (0xca, big-endian): the only float form primitiv reads. */
static inline int primitiv_f32(struct primitiv_cur *c, const char *what, float *v)
{
	uint64_t at = c->pos;
	if (primitiv_left(c) < 1)
		return primitiv_short(c, at, what, 1);
	if (c->base[at] != 0xca)
		return primitiv_wrong(c, at, what, "a float32");
	if (primitiv_left(c) < 5)
		return primitiv_short(c, at, what, 5);
	uint32_t bits = mfs_be32(c->base + at + 1);
	memcpy(v, &bits, 4);
	c->pos = at + 5;
	return 0;
}

#endif
