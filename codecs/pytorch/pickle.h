/* A restricted pickle reader: the opcodes of protocols 0-5 interpreted
 * into plain data, never importing or calling anything. A global is a
 * name (module, name); a call of it (REDUCE, NEWOBJ, INST, OBJ) is an inert
 * node holding the callable, its arguments and what BUILD, SETITEM(S) and
 * APPEND(S) gave it; a persistent id is a node holding the id's value.
 * Each scalar keeps the byte span of the opcode that pushed it, so that an
 * edit can replace just that value (pt_edit.c); a scalar or a tuple pushed
 * again from the memo is a copy spanning its GET (a tuple's holding the
 * same cells), so that each place is its own.
 *
 * Hostile input: every length is checked against the bytes left before
 * use, memo indices against what was put, the stack and marks against
 * what was pushed; values and cells are at most one per byte of the
 * pickle, so memory is bounded by its size whatever it claims. Nothing
 * here allocates from a count read in the pickle. */
#ifndef MFS_PT_PICKLE_H
#define MFS_PT_PICKLE_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

#define PK_NIL UINT32_MAX
/* Marks open at once (nested MARK opcodes), at most. */
#define PK_MAX_MARKS 1000u

enum pk_kind {
	PK_NONE = 1,
	PK_BOOL,      /* u.i 0 or 1 */
	PK_INT,       /* u.i */
	PK_LONG,      /* an int beyond int64: u.s (LONG1/LONG4 bytes, or decimal text: PK_F_TEXT) */
	PK_FLOAT,     /* u.f */
	PK_STR,       /* u.s: UTF-8 bytes */
	PK_BYTES,     /* u.s */
	PK_TUPLE,     /* n elements from head */
	PK_LIST,
	PK_DICT,      /* n cells from head: each key, then its value */
	PK_SET,
	PK_FROZENSET,
	PK_GLOBAL,    /* a: module, b: name (PK_STR values) */
	PK_CALL,      /* a: callable, b: arguments, c: BUILD state (PK_NIL: none);
		         n cells from head (SETITEM(S): key, value), ln from lhead (APPEND(S)) */
	PK_PERSID,    /* a: the persistent id's value */
};

/* Value flags */
#define PK_F_TEXT    0x1u  /* u.s is in pk.text (decoded), not in the pickle */
#define PK_F_DECIMAL 0x2u  /* a PK_LONG's u.s is decimal text, not LONG1/LONG4 bytes */
#define PK_F_GOT     0x4u  /* a scalar or tuple a memo GET pushed again: its span is
			      the GET's, a the value first pushed */
#define PK_F_SHARED  0x8u  /* taken from the memo by a GET somewhere */

struct pk_val {
	uint8_t kind;
	uint8_t op;           /* the opcode that made it */
	uint8_t flags;
	uint32_t n, head, tail;
	uint32_t a, b, c;
	uint32_t ln, lhead, ltail;
	uint64_t off, len;    /* its opcode's bytes in the pickle (with the argument) */
	union {
		int64_t i;
		double f;
		struct { uint64_t off, len; } s;
	} u;
};

struct pk_cell {
	uint32_t v, next;
};

/* A parsed pickle. Offsets are relative to the pickle's first byte. */
struct pk {
	const uint8_t *p;     /* the pickle's bytes (not owned) */
	uint64_t size;        /* bytes the pickle took, its STOP included */
	uint8_t proto;        /* the PROTO opcode's, else 0 */
	struct pk_val *v;
	uint32_t nv, capv;
	struct pk_cell *c;
	uint32_t nc, capc;
	char *text;           /* decoded strings (PK_F_TEXT) */
	uint64_t ntext;
	uint32_t captext;
	uint64_t *frames;     /* FRAME opcodes' offsets, in order */
	uint32_t nframes, capframes;
	uint32_t root;        /* the value STOP returned */
};

/* What the reader's tables may take: charge(ctx, bytes) is asked before
 * each of them grows by bytes, and false refuses (the parse fails with
 * -ENOMEM and charge's message, if it set none: "out of memory"). */
struct pk_budget {
	bool (*charge)(void *ctx, int64_t bytes);
	void *ctx;
};

/* Read the pickle at p[0, avail) (it may end before avail: pk->size says
 * where its STOP ended), its tables charged to budget (NULL: none). 0, or
 * -EINVAL with a message saying what and at which byte (relative to p),
 * -ENOMEM. Free with pk_free also on failure. */
int pk_parse(struct pk *pk, const uint8_t *p, uint64_t avail, const struct pk_budget *budget,
	     struct mfs_err *err);
void pk_free(struct pk *pk);

/* A string value's bytes (PK_STR, PK_BYTES, PK_LONG). */
static inline const uint8_t *pk_bytes(const struct pk *pk, const struct pk_val *v)
{
	return (v->flags & PK_F_TEXT) ? (const uint8_t *)pk->text + v->u.s.off : pk->p + v->u.s.off;
}

/* The i-th element cell of a list starting at head (i < count): walks. */
static inline uint32_t pk_next(const struct pk *pk, uint32_t cell)
{
	return pk->c[cell].next;
}

/* Whether value v is GLOBAL module.name (or a call of it with call). */
bool pk_is_global(const struct pk *pk, uint32_t v, const char *module, const char *name);
/* The decimal text of a PK_INT, PK_BOOL (as Python: True/False) or
 * PK_LONG value into out (at most cap bytes): its length, or 0 when it
 * does not fit. */
size_t pk_int_text(const struct pk *pk, const struct pk_val *v, char *out, size_t cap);
/* A float as Python's repr writes it ("0.001", "1e-08", "1.0", "inf",
 * "nan", "-0.0") into out (64 bytes): its length. */
size_t pk_float_repr(double f, char *out);

#endif
