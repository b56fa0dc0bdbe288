/* Values of a pickle as Python's repr writes them (pt_repr.c): the text of
 * a scalar file, a literal (`(0.9, 0.999)`, `[0, 1, 2]`, `()`), a dict key
 * that is not a string (`0`, `(1, 2)`), an object's class. */
#ifndef MFS_PT_REPR_H
#define MFS_PT_REPR_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "pickle.h"

/* A scratch buffer and what the literals of one model may take in all
 * (values shared through the memo are written at each place). */
struct pt_repr {
	struct mfs_buf b;
	uint64_t budget;
};

void pt_repr_init(struct pt_repr *rp, uint32_t nvalues);
void pt_repr_free(struct pt_repr *rp);
/* The repr of value v into *s, *n (valid until the next call): 0, or
 * -EINVAL (too deep, past the budget), -ENOMEM, with a message. */
int pt_repr(struct pt_repr *rp, const struct pk *pk, uint32_t v, const char **s, size_t *n,
	    struct mfs_err *err);
/* A Python str literal of UTF-8 bytes s[0, n) (quotes and escapes as
 * repr), appended to b: 0 or -ENOMEM. */
int pt_repr_str(struct mfs_buf *b, const uint8_t *s, size_t n, bool bytes);

/* Protocol 2's forms of sets and bytes, calls of builtins: the list a
 * set([...]) or frozenset([...]) call builds (*kind PK_SET or
 * PK_FROZENSET), or PK_NIL; the str of a _codecs.encode(str, 'latin1')
 * call, or the empty argument tuple of a bytes() call (b''), or PK_NIL. */
uint32_t pt_set_call(const struct pk *pk, uint32_t v, uint8_t *kind);
uint32_t pt_bytes_call(const struct pk *pk, uint32_t v);
/* The bytes such a call builds (s: what pt_bytes_call gave), appended to
 * b: 0, -EINVAL (a code point beyond Latin-1), -ENOMEM. */
int pt_bytes_of_call(struct mfs_buf *b, const struct pk *pk, uint32_t s);
/* The bytes of UTF-8 text s[0, n) whose code points are all below 256
 * (Latin-1), appended to b: 0, -EINVAL (a code point beyond), -ENOMEM. */
int pt_latin1(struct mfs_buf *b, const uint8_t *s, size_t n);

#endif
