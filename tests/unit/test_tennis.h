/* Helpers shared by the TenniS tests (test_tennis_util.c): building .tsm
 * files in memory, re-encoding every tensor, comparing edited files. */
#ifndef MFS_TEST_TENNIS_H
#define MFS_TEST_TENNIS_H

#include <stddef.h>
#include <stdint.h>

#include "helpers.h"

/* A growing byte buffer that writes TenniS's little-endian fields. */
struct tb {
	uint8_t *b;
	size_t n, cap;
};
void tb_bytes(struct tb *t, const void *p, size_t n);
void tb_u8(struct tb *t, uint8_t v);
void tb_u32(struct tb *t, uint32_t v);
/* u32 length + bytes (a param name) */
void tb_str(struct tb *t, const char *s);
/* The 128-byte header: fake, code, 120 zero bytes. */
void tb_header(struct tb *t, uint32_t fake);
/* One field: dtype code, ndim, dims, then data bytes. */
void tb_field(struct tb *t, uint8_t code, uint32_t ndim, const uint32_t *dims,
	      const void *data, size_t len);
/* A param of one CHAR8 field holding s (#op, #name, strings). */
void tb_str_param(struct tb *t, const char *name, const char *s);

/* The corpus file tennis/<rel> (caller frees). */
uint8_t *tennis_load(const char *rel, size_t *len);

/* For every tensor of m: an edit with reshape=true, the same dtype and dims
 * and the current element bytes, passed to the codec's edit(), must give
 * back the source exactly. Returns the number of tensors checked. */
size_t tennis_reencode_all(struct mfs_model *m);

#endif
