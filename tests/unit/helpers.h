/* Shared helpers for the unit tests: load test files, open models, read
 * views as strings, apply patches. Every helper fails the test on error. */
#ifndef MFS_TEST_HELPERS_H
#define MFS_TEST_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "codec.h"
#include "edit.h"
#include "model.h"
#include "view.h"

/* Path of a file under tests/data (MFS_TEST_DATA), in a static buffer. */
const char *tdata(const char *rel);
/* Whole file into memory (NUL-terminated); fails the test if unreadable. */
uint8_t *tload(const char *path, size_t *len);
/* Open tests/data/<rel> from memory, with its sidecar <rel><suffix> if
 * the probed codec has one and it exists. The model owns nothing: free it
 * with tclose(), which also frees the buffers. */
struct mfs_model *topen(const char *rel);
/* Same, expecting failure: returns the -errno and fills err. */
int topen_fail(const char *rel, struct mfs_err *err);
/* Open bytes held in memory (copied); side may be NULL. */
struct mfs_model *topen_mem(const void *buf, size_t len, const char *name,
			    const void *side, size_t side_len);
void tclose(struct mfs_model *m);
/* A test codec's bid: 32 for bytes starting "TST1", else 0. */
int tst1_bid(const uint8_t *h, size_t n, uint64_t size, const char *name);
/* Open the 4 bytes "TST1" as name with codec c (whose open builds the tree
 * from the test's own state); fails the test on error. Free with
 * mfs_model_close. */
struct mfs_model *topen_tst1(const struct mfs_codec *c, const char *name);
/* The runtime the helpers give every model they open (created on first use,
 * stopped at exit). */
struct mfs_runtime *truntime(void);

/* Node at a path relative to the model directory; fails if absent. */
mfs_id tnode(const struct mfs_model *m, const char *path);
/* Whole content of a file node (NUL-terminated, caller frees); checks that
 * the bytes read match mfs_view_size. */
char *tread(struct mfs_model *m, const char *path, size_t *len);
/* assert that the file at path holds exactly the string expect */
void tcheck(struct mfs_model *m, const char *path, const char *expect);
/* Names of the children of a directory, space-separated (caller frees). */
char *tlist(const struct mfs_model *m, const char *path);

/* Write content to the file at path through mfs_view_write and apply the
 * resulting patch to the model's bytes. Returns the view_write result
 * (0 changed, 1 unchanged, <0 error); on 0, out and outlen hold the new
 * file (caller frees); tlast_sidecar() gives the new sidecar if one was set. */
int twrite(struct mfs_model *m, const char *path, const void *content, size_t len,
	   uint8_t **out, size_t *outlen, struct mfs_err *err);
/* Read every file node and link of a model fully (sizes checked, any error
 * fails the test). Returns the number of nodes visited. */
size_t twalk(struct mfs_model *m);
/* Robustness: open truncated copies of the file (at many lengths) and copies
 * with bytes flipped/overwritten at random (iterations, fixed seed); each one
 * must either fail to open with an error message or open and twalk cleanly.
 * Run under the sanitizers. Returns how many opened. */
size_t tmutate(const char *rel, unsigned iterations);
/* Append p[0, len) to the growable bytes (*b, *n, *cap) of a test's file
 * builder. */
void tappend(uint8_t **b, size_t *n, size_t *cap, const void *p, size_t len);
/* The same over bytes in memory, shown to the codecs as file name. */
size_t tmutate_mem(const void *buf, size_t len, const char *name, unsigned iterations);
/* Write every writable file of m back unchanged: each must change nothing
 * (twrite returns 1). Returns how many. */
size_t trewrite_all(struct mfs_model *m);
/* new_ is old with [off, off + old_len) replaced by new_len bytes. */
void tsame_outside(const uint8_t *old, size_t old_size, const uint8_t *new_, size_t new_size,
		   size_t off, size_t old_len, size_t new_len);
/* The same bits seen as another type (type punning through a union). */
#define f32_of(b) (((union { uint32_t u; float f; }){.u = (b)}).f)
#define bits32(v) (((union { uint32_t u; float f; }){.f = (v)}).u)
#define f64_of(b) (((union { uint64_t u; double f; }){.u = (b)}).f)
#define bits64(v) (((union { uint64_t u; double f; }){.f = (v)}).u)

/* Pseudo-random numbers: a splitmix64 step on *state (fixed seeds, so a
 * failure reproduces). */
uint64_t trand(uint64_t *state);
/* How many random cases to run: full, divided by quick_div when
 * MFS_TEST_QUICK is set (not "0") and by san_div under AddressSanitizer or
 * ThreadSanitizer; at least 1. */
size_t tcount(size_t full, unsigned quick_div, unsigned san_div);

/* Apply a patch to bytes (caller frees the result). */
uint8_t *tapply(const struct mfs_patch *p, const uint8_t *base, size_t size, size_t *outlen);
/* The sidecar set by the last twrite (or NULL); valid until the next twrite. */
const uint8_t *tlast_sidecar(size_t *len);

#endif
