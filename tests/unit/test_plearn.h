/* Helpers shared by the PLearn tests (test_plearn_util.c): the corpus list,
 * whole-model round trips, byte comparisons, writing views, and a builder
 * of plearn_binary files in either byte order (PLearn's PStream rules). */
#ifndef MFS_TEST_PLEARN_H
#define MFS_TEST_PLEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "helpers.h"

/* Every corpus file that opens as a model, relative to tests/data. */
extern const char *const plt_corpus[];
extern const size_t plt_ncorpus;

/* For every tensor of m: an edit with reshape=true, the same dtype and dims
 * and the current element values, passed to the codec's edit(), must give
 * back the source exactly. Returns the number of tensors checked. */
size_t plt_reencode_all(struct mfs_model *m);

/* Offset of the first occurrence of needle in hay (fails if absent). */
size_t plt_find(const uint8_t *hay, size_t n, const char *needle);

/* Write content to the file at path: must change the file (returns the new
 * bytes, caller frees), or must be refused with code and a message. */
uint8_t *plt_write(struct mfs_model *m, const char *path, const void *content, size_t len,
		   size_t *outlen);
uint8_t *plt_write_str(struct mfs_model *m, const char *path, const char *s, size_t *outlen);
void plt_write_fails(struct mfs_model *m, const char *path, const void *content, size_t len,
		     int code);
/* Writing the content changes nothing. */
void plt_write_same(struct mfs_model *m, const char *path, const char *s);

/* Build a .npy v1.0 of float64 values (C order) into buf; returns its size. */
size_t plt_npy_f64(uint8_t *buf, size_t cap, const uint64_t *dims, uint32_t ndim,
		   const double *vals);

/* ---- plearn_binary builder ------------------------------------------------ */
struct pb {
	uint8_t *b;
	size_t n, cap;
	bool be;       /* numbers, lengths and type codes big-endian */
};
void pb_raw(struct pb *p, const void *s, size_t n);
void pb_str(struct pb *p, const char *s);        /* ascii text as it is */
void pb_int(struct pb *p, int32_t v);            /* 0x07/0x08 + 4 bytes */
void pb_i64(struct pb *p, int64_t v);            /* 0x16/0x17 + 8 bytes */
void pb_double(struct pb *p, double v);          /* 0x10/0x11 + 8 bytes */
void pb_float(struct pb *p, float v);            /* 0x0E/0x0F + 4 bytes */
void pb_def(struct pb *p, int32_t id);           /* '*' binary id "->" */
void pb_ref(struct pb *p, int32_t id);           /* '*' binary id ' ' */
/* 1-D sequence header 0x12/0x13, element type, uint32 length. */
void pb_seq(struct pb *p, uint8_t le_code, uint32_t len);
/* 2-D header 0x14/0x15, element type, int32 length and width. */
void pb_mat(struct pb *p, uint8_t le_code, int32_t l, int32_t w);
/* Element bytes in the builder's order. */
void pb_f64s(struct pb *p, const double *v, size_t n);
void pb_i32s(struct pb *p, const int32_t *v, size_t n);
/* The type code of le_code in the builder's byte order. */
uint8_t pb_code(const struct pb *p, uint8_t le_code);

#endif
