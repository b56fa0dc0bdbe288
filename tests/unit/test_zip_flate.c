/* Unit tests of codecs/core/zip/zip_flate.h, built once with each library
 * that implements it (test_zip_flate_isal, test_zip_flate_zlib): streams
 * zlib's deflate made (stored, fixed and dynamic blocks, levels 0-9, empty,
 * with bytes after the end) inflated in pieces of every size, equal to
 * their content with its CRC-32; a copy going on like the original; a
 * stream cut short never ending and never stuck; corrupt streams and random
 * bytes refused or inflated within bounds, never a crash; the deflater at
 * each level making streams that inflate back, the same bytes each time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "zip_flate.h"

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 11);
}

/* n bytes of a kind: 0 random, 1 text-like, 2 float32 weights (random
 * mantissas, few exponents), 3 runs. */
static uint8_t *content(size_t n, int kind)
{
	uint8_t *b = malloc(n ? n : 1);
	assert_non_null(b);
	static const char *words[] = {"weight ", "0.125 ", "-3.5e-07 ", "layer.", "bias\n", "1 "};
	for (size_t i = 0; i < n;) {
		if (kind == 0) {
			b[i++] = (uint8_t)rnd();
		} else if (kind == 1) {
			const char *w = words[rnd() % 6];
			for (size_t k = 0; w[k] && i < n; k++)
				b[i++] = (uint8_t)w[k];
		} else if (kind == 2) {
			uint32_t v = (rnd() & 0x807fffffu) | ((120u + rnd() % 8) << 23);
			for (int k = 0; k < 4 && i < n; k++)
				b[i++] = (uint8_t)(v >> (8 * k));
		} else {
			uint8_t c = (uint8_t)rnd();
			for (size_t k = rnd() % 300; k && i < n; k--)
				b[i++] = c;
		}
	}
	return b;
}

/* The raw deflate stream of src at level and strategy (*clen bytes),
 * with room for extra bytes after it. */
static uint8_t *deflated(const uint8_t *src, size_t n, int level, int strategy, size_t *clen,
			 size_t extra)
{
	z_stream zs = {0};
	assert_int_equal(deflateInit2(&zs, level, Z_DEFLATED, -15, 8, strategy), Z_OK);
	size_t cap = deflateBound(&zs, n) + extra + 16;
	uint8_t *c = malloc(cap);
	assert_non_null(c);
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)n;
	zs.next_out = c;
	zs.avail_out = (uInt)cap;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	*clen = zs.total_out;
	deflateEnd(&zs);
	return c;
}

/* Inflate in[0..n) in pieces of at most ip input and op output bytes
 * (0: all) into out (cap bytes): the last answer; *made the bytes made,
 * *left the input bytes not used. */
static int inflate_pieces(struct zip_flate *f, const uint8_t *in, size_t n, size_t ip, size_t op,
			  uint8_t *out, size_t cap, size_t *made, size_t *left)
{
	size_t got = 0, at = 0;
	int fr = ZIP_FLATE_MORE;
	unsigned stuck = 0;
	while (fr == ZIP_FLATE_MORE && stuck < 3) {
		size_t il = n - at, ol = cap - got;
		if (ip && il > ip)
			il = ip;
		if (op && ol > op)
			ol = op;
		size_t il0 = il, ol0 = ol;
		const uint8_t *p = in + at;
		uint8_t *o = out + got;
		const char *why = NULL;
		fr = zip_flate_run(f, &p, &il, &o, &ol, &why);
		assert_true(p == in + at + (il0 - il));
		assert_true(o == out + got + (ol0 - ol));
		at += il0 - il;
		got += ol0 - ol;
		if (fr == ZIP_FLATE_BAD)
			assert_non_null(why);
		stuck = il0 == il && ol0 == ol ? stuck + 1 : 0;
		if (ol0 == 0 && got == cap)
			break;
	}
	*made = got;
	*left = n - at;
	return fr;
}

static void round_trip(void **state)
{
	(void)state;
	static const size_t sizes[] = {0, 1, 2, 100, 32767, 32768, 32769, 65536, 300000, 1 << 20};
	static const size_t pieces[] = {0, 1, 7, 4096, 65536};
	static const int strategies[] = {Z_DEFAULT_STRATEGY, Z_FIXED, Z_HUFFMAN_ONLY, Z_RLE};
	for (size_t si = 0; si < sizeof(sizes) / sizeof(*sizes); si++)
		for (int kind = 0; kind < 4; kind++)
			for (int level = 0; level <= 9; level += 3) {
				size_t n = sizes[si], clen;
				uint8_t *src = content(n, kind);
				int strategy = strategies[(si + (size_t)kind + (size_t)level) % 4];
				uint8_t *c = deflated(src, n, level, strategy, &clen, 5);
				memcpy(c + clen, "extra", 5);  /* bytes after the stream */
				size_t ip = pieces[rnd() % 5], op = pieces[rnd() % 5];
				if (n > 100000 && (ip == 1 || op == 1))
					ip = op = 4096;
				uint8_t *out = malloc(n + 1);
				struct zip_flate *f = zip_flate_new();
				assert_non_null(f);
				size_t made, left;
				int fr = inflate_pieces(f, c, clen + 5, ip, op, out, n + 1, &made, &left);
				assert_int_equal(fr, ZIP_FLATE_END);
				assert_int_equal(made, n);
				assert_true(left <= 5);  /* (ISA-L reads ahead) */
				assert_int_equal(zip_flate_in(f), clen);
				assert_memory_equal(out, src, n);
				assert_int_equal(zip_flate_crc(f), (uint32_t)crc32(0, src, (uInt)n));
				/* once ended, it stays ended and makes nothing */
				const uint8_t *p = c + clen;
				size_t il = 5, ol = 1;
				uint8_t *o = out;
				const char *why = NULL;
				assert_int_equal(zip_flate_run(f, &p, &il, &o, &ol, &why), ZIP_FLATE_END);
				assert_int_equal(ol, 1);
				zip_flate_free(f);
				free(out);
				free(c);
				free(src);
			}
}

/* A copy made anywhere in the stream goes on like the original, and the
 * original is unchanged by it. */
static void copy(void **state)
{
	(void)state;
	for (int kind = 0; kind < 4; kind++) {
		size_t n = 400000 + rnd() % 1000, clen;
		uint8_t *src = content(n, kind);
		uint8_t *c = deflated(src, n, 6, Z_DEFAULT_STRATEGY, &clen, 0);
		uint8_t *a = malloc(n), *b = malloc(n);
		struct zip_flate *f = zip_flate_new();
		size_t cut = rnd() % n, made, left;
		const uint8_t *p = c;
		size_t il = clen, ol = cut;
		uint8_t *o = a;
		const char *why;
		while (ol) {
			assert_int_equal(zip_flate_run(f, &p, &il, &o, &ol, &why), ZIP_FLATE_MORE);
		}
		struct zip_flate *g = zip_flate_copy(f);
		assert_non_null(g);
		assert_int_equal(zip_flate_crc(g), zip_flate_crc(f));
		memcpy(b, a, cut);
		size_t used = clen - il;
		assert_int_equal(inflate_pieces(g, c + used, clen - used, 0, 8192, b + cut, n - cut, &made, &left),
				 ZIP_FLATE_END);
		assert_int_equal(made, n - cut);
		assert_int_equal(inflate_pieces(f, c + used, clen - used, 999, 0, a + cut, n - cut, &made, &left),
				 ZIP_FLATE_END);
		assert_memory_equal(a, src, n);
		assert_memory_equal(b, src, n);
		assert_int_equal(zip_flate_crc(f), zip_flate_crc(g));
		zip_flate_free(f);
		zip_flate_free(g);
		free(a);
		free(b);
		free(c);
		free(src);
	}
}

/* A stream cut anywhere never ends: its input used up, a call makes no
 * progress and says more is needed (or it is bad). */
static void truncated(void **state)
{
	(void)state;
	size_t n = 200000, clen;
	uint8_t *src = content(n, 1);
	uint8_t *c = deflated(src, n, 6, Z_DEFAULT_STRATEGY, &clen, 0);
	uint8_t *out = malloc(n);
	for (int t = 0; t < 200; t++) {
		size_t cut = t < 8 ? (size_t)t : t < 16 ? clen - (size_t)(t - 7) : rnd() % clen;
		struct zip_flate *f = zip_flate_new();
		size_t made, left;
		int fr = inflate_pieces(f, c, cut, t % 3 ? 0 : 333, 0, out, n, &made, &left);
		assert_int_not_equal(fr, ZIP_FLATE_END);
		assert_true(made < n || fr != ZIP_FLATE_END);
		assert_memory_equal(out, src, made);
		zip_flate_free(f);
	}
	free(out);
	free(c);
	free(src);
}

/* Flipped bytes, invalid block types and random bytes: BAD, or some
 * output within the room given, never more, never a crash. */
static void corrupt(void **state)
{
	(void)state;
	size_t n = 100000, clen;
	uint8_t *src = content(n, 2);
	uint8_t *c = deflated(src, n, 6, Z_DEFAULT_STRATEGY, &clen, 0);
	uint8_t *bad = malloc(clen), *out = malloc(n + 64);
	int refused = 0;
	for (int t = 0; t < 300; t++) {
		memcpy(bad, c, clen);
		for (int k = 0; k <= t % 4; k++)
			bad[rnd() % clen] ^= (uint8_t)(1u << (rnd() % 8));
		struct zip_flate *f = zip_flate_new();
		size_t made, left;
		int fr = inflate_pieces(f, bad, clen, t % 2 ? 0 : 517, t % 3 ? 0 : 4000, out, n + 64, &made, &left);
		assert_true(made <= n + 64);
		refused += fr == ZIP_FLATE_BAD || made != n ||
			   zip_flate_crc(f) != (uint32_t)crc32(0, src, (uInt)n);
		zip_flate_free(f);
	}
	assert_true(refused > 250);  /* a flip may hit a bit no decoder reads */
	/* a final block of type 3; a stream that refers to a preset
	 * dictionary (distances before its first byte) */
	static const uint8_t type3[] = {0x07, 0x00};
	static const char dict[] = "a dictionary the stream refers to, a dictionary";
	z_stream zs = {0};
	uint8_t dist[256];
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY), Z_OK);
	assert_int_equal(deflateSetDictionary(&zs, (const Bytef *)dict, sizeof(dict)), Z_OK);
	zs.next_in = (Bytef *)dict;
	zs.avail_in = sizeof(dict);
	zs.next_out = dist;
	zs.avail_out = sizeof(dist);
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	const uint8_t *bads[] = {type3, dist};
	size_t lens[] = {sizeof(type3), zs.total_out};
	deflateEnd(&zs);
	for (int k = 0; k < 2; k++) {
		struct zip_flate *f = zip_flate_new();
		size_t made, left;
		assert_int_equal(inflate_pieces(f, bads[k], lens[k], 0, 0, out, n, &made, &left), ZIP_FLATE_BAD);
		zip_flate_free(f);
	}
	for (int t = 0; t < 300; t++) {
		size_t rn = 1 + rnd() % 5000;
		uint8_t *r = content(rn, 0);
		struct zip_flate *f = zip_flate_new();
		size_t made, left;
		inflate_pieces(f, r, rn, t % 2 ? 0 : 61, 0, out, n, &made, &left);
		assert_true(made <= n);
		zip_flate_free(f);
		free(r);
	}
	free(out);
	free(bad);
	free(c);
	free(src);
}

/* content deflated by a zip_deflater at the level of flags, in pieces of
 * ip bytes in and op out (*clen bytes). */
static uint8_t *deflater_made(const uint8_t *src, size_t n, uint16_t flags, size_t ip, size_t op,
			      size_t *clen)
{
	struct zip_deflater *d = zip_deflater_new(flags);
	assert_non_null(d);
	size_t cap = n + n / 8 + 4096, at = 0, made = 0;
	uint8_t *c = malloc(cap);
	assert_non_null(c);
	int fr = ZIP_FLATE_MORE;
	const uint8_t *p = src;
	size_t il = 0;
	while (fr == ZIP_FLATE_MORE) {
		if (!il && at < n) {
			p = src + at;
			il = n - at < ip ? n - at : ip;
			at += il;
		}
		uint8_t *o = c + made;
		size_t ol = cap - made < op ? cap - made : op;
		size_t ol0 = ol;
		fr = zip_deflater_run(d, &p, &il, &o, &ol, at == n);
		made += ol0 - ol;
		assert_true(made < cap);
	}
	assert_int_equal(fr, ZIP_FLATE_END);
	zip_deflater_free(d);
	*clen = made;
	return c;
}

/* Each level deflates every kind of content into a stream that inflates
 * back to it, whatever the pieces, and the same pieces make the same
 * bytes again. */
static void deflater(void **state)
{
	(void)state;
	static const size_t sizes[] = {0, 1, 70000, 1 << 20};
	for (uint16_t flags = 0; flags < 8; flags += 2)
		for (size_t si = 0; si < 4; si++)
			for (int kind = 0; kind < 4; kind++) {
				size_t n = sizes[si], clen, clen2, made, left;
				uint8_t *src = content(n, kind);
				size_t ip = (size_t[]){1000, 262144, 65536}[rnd() % 3];
				size_t op = (size_t[]){100, 65536, 4096}[rnd() % 3];
				uint8_t *c = deflater_made(src, n, flags, ip, op, &clen);
				uint8_t *c2 = deflater_made(src, n, flags, ip, op, &clen2);
				assert_int_equal(clen, clen2);
				assert_memory_equal(c, c2, clen);
				if (kind == 1 && n > 1000)
					assert_true(clen < n / 2);
				uint8_t *out = malloc(n + 1);
				struct zip_flate *f = zip_flate_new();
				assert_int_equal(inflate_pieces(f, c, clen, 0, 0, out, n + 1, &made, &left), ZIP_FLATE_END);
				assert_int_equal(made, n);
				assert_int_equal(zip_flate_in(f), clen);
				assert_memory_equal(out, src, n);
				/* and zlib itself reads it the same */
				z_stream zs = {0};
				assert_int_equal(inflateInit2(&zs, -15), Z_OK);
				zs.next_in = c;
				zs.avail_in = (uInt)clen;
				zs.next_out = out;
				zs.avail_out = (uInt)n + 1;
				assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
				assert_int_equal(zs.total_out, n);
				assert_memory_equal(out, src, n);
				inflateEnd(&zs);
				zip_flate_free(f);
				free(out);
				free(c2);
				free(c);
				free(src);
			}
}

int main(void)
{
	printf("zip_flate with %s, %zu bytes a stream\n", zip_flate_library, zip_flate_size);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(round_trip),
		cmocka_unit_test(copy),
		cmocka_unit_test(truncated),
		cmocka_unit_test(corrupt),
		cmocka_unit_test(deflater),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
