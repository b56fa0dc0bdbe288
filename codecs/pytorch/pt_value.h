/* A pickled scalar given a new value (pt_value.c): the text a user wrote
 * parsed as the value's own Python type, encoded as the opcode of the
 * same family (text opcodes for protocol 0's, binary ones otherwise), and
 * the pickle's bytes made again with only that opcode replaced. */
#ifndef MFS_PT_VALUE_H
#define MFS_PT_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "error.h"
#include "pickle.h"

/* The pickle pk with value v (a PK_INT, PK_LONG, PK_BOOL, PK_FLOAT, PK_STR,
 * PK_BYTES, or a PK_TUPLE or PK_LIST literal whose opcodes are its own: none
 * of the values inside it taken from the memo elsewhere) set to the value of
 * text[0, len): its new bytes into *out
 * (malloc'd) and *outlen. Every other value keeps its value: the places
 * that took v from the memo (GET) get v's old opcode in place of the GET,
 * and a FRAME around a changed opcode its new length. 0, or -EINVAL (not
 * a value of that type) / -ERANGE (a float beyond float64) with a message,
 * -ENOMEM. */
int pt_value_rewrite(const struct pk *pk, uint32_t v, const char *text, size_t len,
		     uint8_t **out, uint64_t *outlen, struct mfs_err *err);

/* As pt_value_rewrite, for protocol 2's bytes v (a call of
 * _codecs.encode(str, 'latin1')) set to bytes text[0, len): only the str's
 * opcode changes, to the str whose Latin-1 is those bytes. */
int pt_bytes_rewrite(const struct pk *pk, uint32_t v, const char *text, size_t len,
		     uint8_t **out, uint64_t *outlen, struct mfs_err *err);

/* A span of the pickle [off, off + len) replaced by bytes[0, n). */
struct pt_span {
	uint64_t off, len;
	const uint8_t *bytes;
	size_t n;
};

/* The pickle pk with spans sp[0, ns) (disjoint; sorted here) replaced,
 * each FRAME's length grown by what changed inside it, appended to out:
 * 0 or -ENOMEM. */
int pt_splice(const struct pk *pk, struct pt_span *sp, size_t ns, struct mfs_buf *out);
/* The binary opcode of int v (BININT1, BININT2, BININT, LONG1) appended to
 * b: 0 or -ENOMEM. */
int pt_int_opcode(struct mfs_buf *b, uint64_t v);

/* A decimal int's binary opcode (as pt_int_opcode; any sign and size):
 * 0, -EINVAL with a message, -ENOMEM. */
int pt_int_from_text(struct mfs_buf *b, const char *s, size_t n, struct mfs_err *err);
/* A float's text as its BINFLOAT opcode: 0, -EINVAL / -ERANGE with a
 * message, -ENOMEM. */
int pt_float_from_text(struct mfs_buf *b, const char *s, size_t n, struct mfs_err *err);
/* A Python literal's text (pt_literal.c: numbers, strings, bytes, True,
 * False, None, tuples and lists of them) as the opcodes that build it,
 * appended to b; its outermost value must be a container of kind (PK_TUPLE
 * or PK_LIST). 0, -EINVAL with a message, -ENOMEM. */
int pt_literal_encode(const char *s, size_t n, uint8_t kind, struct mfs_buf *b,
		      struct mfs_err *err);

#endif
