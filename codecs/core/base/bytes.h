/* Unaligned little/big-endian loads and stores, overflow-checked arithmetic
 * and a string hash: small helpers every codec needs. */
#ifndef MFS_BYTES_H
#define MFS_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static inline uint16_t mfs_le16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint32_t mfs_le32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t mfs_le64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint16_t mfs_be16(const void *p) { return __builtin_bswap16(mfs_le16(p)); }
static inline uint32_t mfs_be32(const void *p) { return __builtin_bswap32(mfs_le32(p)); }
static inline uint64_t mfs_be64(const void *p) { return __builtin_bswap64(mfs_le64(p)); }
static inline void mfs_put_le16(void *p, uint16_t v) { memcpy(p, &v, 2); }
static inline void mfs_put_le32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void mfs_put_le64(void *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void mfs_put_be16(void *p, uint16_t v) { v = __builtin_bswap16(v); memcpy(p, &v, 2); }
static inline void mfs_put_be32(void *p, uint32_t v) { v = __builtin_bswap32(v); memcpy(p, &v, 4); }
static inline void mfs_put_be64(void *p, uint64_t v) { v = __builtin_bswap64(v); memcpy(p, &v, 8); }

/* a * b and a + b, false on overflow. */
static inline bool mfs_mul_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_mul_overflow(a, b, out);
}
static inline bool mfs_add_ok(uint64_t a, uint64_t b, uint64_t *out)
{
	return !__builtin_add_overflow(a, b, out);
}

/* Reverse the bytes of each of n elements of size esize, in place. */
void mfs_swap_elems(void *buf, uint64_t n, unsigned esize);

/* 64-bit hash of a byte string (FNV-1a with a final mix). */
/* mfs_hash64 in pieces: h = mfs_hash64_start(seed), then
 * h = mfs_hash64_add(h, piece, len) for each piece, then mfs_hash64_end(h)
 * equals mfs_hash64 of the pieces one after the other. */
static inline uint64_t mfs_hash64_start(uint64_t seed)
{
	return 0xcbf29ce484222325ull ^ seed;
}

static inline uint64_t mfs_hash64_add(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static inline uint64_t mfs_hash64_end(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

static inline uint64_t mfs_hash64(const void *data, size_t len, uint64_t seed)
{
	return mfs_hash64_end(mfs_hash64_add(mfs_hash64_start(seed), data, len));
}

#endif
