/* Helpers shared by the DAPHNE tests (test_daphne_util.c): building .dbdf
 * files in memory (the spec dialect and DAPHNE 0.1 have no writer left),
 * re-encoding every tensor, rewriting every view, robustness loops. */
#ifndef MFS_TEST_DAPHNE_H
#define MFS_TEST_DAPHNE_H

#include <stddef.h>
#include <stdint.h>

#include "helpers.h"

/* A growing byte buffer of little-endian fields. */
struct db {
	uint8_t *b;
	size_t n, cap;
};
void db_bytes(struct db *d, const void *p, size_t n);
void db_u8(struct db *d, uint8_t v);
void db_u16(struct db *d, uint16_t v);
void db_u32(struct db *d, uint32_t v);
void db_u64(struct db *d, uint64_t v);
/* version 1, data type, rows, cols */
void db_header(struct db *d, uint8_t dt, uint64_t rows, uint64_t cols);
/* A spec block header: rx, cx, #r, #c, bt (the caller adds the rest). */
void db_block(struct db *d, uint64_t rx, uint64_t cx, uint32_t rows, uint32_t cols, uint8_t bt);
/* A value of a spec value type code (1-10) from a double. */
void db_spec_value(struct db *d, uint8_t vt, double v);
size_t db_spec_size(uint8_t vt);

/* Open a buffer as "<name>" (probed), with an optional sidecar; fails the
 * test if it does not open. */
struct mfs_model *dopen(const struct db *d, const char *name, const char *meta);
/* Open expecting failure: returns -errno; the message is in err. */
int dopen_fail(const void *buf, size_t len, const char *name, struct mfs_err *err);

/* For every tensor of m: an edit with reshape=true, the same dtype and dims
 * and the current values (dense elements; for sparse tensors also their
 * entries) must give back the source exactly, and any sidecar it sets must
 * be the current one. A tensor without a dense form (MFS_TF_NODENSE) must
 * have no dense view, and the codec must refuse to read or edit it
 * densely; its entries are re-encoded. Returns the number of tensors
 * checked. */
size_t daphne_reencode_all(struct mfs_model *m);
/* new is old with only bytes [off, off + len) different (same size). */
void daphne_same_outside(const uint8_t *old, const uint8_t *new_, size_t size, size_t off,
			 size_t len);
/* Element i of a tensor's data.npy body, as a double. */
double daphne_npy_elem(struct mfs_model *m, const char *npy_path, uint64_t i);

#endif
