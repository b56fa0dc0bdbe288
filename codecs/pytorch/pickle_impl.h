/* The pickle reader's private parts, shared by pickle.c (the loop,
 * strings and numbers) and pickle_ops.c (containers, memo, globals, calls). */
#ifndef MFS_PT_PICKLE_IMPL_H
#define MFS_PT_PICKLE_IMPL_H

#include <stddef.h>

#include "buf.h"
#include "pickle.h"

struct pk_memo {
	uint32_t *keys, *vals;  /* open addressing; vals PK_NIL: free */
	size_t cap, n;
};

struct pk_parser {
	struct pk *pk;
	uint64_t avail, pos;
	uint64_t op_off;          /* the current opcode's byte */
	uint8_t op;
	uint32_t *stack;
	size_t nstack, capstack;
	size_t marks[PK_MAX_MARKS];  /* stack heights at each open mark */
	uint64_t mark_off[PK_MAX_MARKS];  /* and where each MARK opcode is */
	size_t nmarks;
	struct pk_memo memo;
	const struct pk_budget *budget;
	struct mfs_err *err;
};

/* Room for more of an array of elem-byte elements (*cap of them, n used),
 * charged to the budget: 0 or -ENOMEM (nothing changed). */
int pk_reserve(struct pk_parser *ps, void *arr, uint32_t n, uint32_t *cap, size_t more,
	       size_t elem);

int pk_fail(struct pk_parser *ps, const char *what);
int pk_nomem(struct pk_parser *ps);
/* A new value of kind made by the current opcode (its span: from the
 * opcode to ps->pos), or PK_NIL when memory ran out (pk_push then fails). */
uint32_t pk_new(struct pk_parser *ps, uint8_t kind);
int pk_push(struct pk_parser *ps, uint32_t v);
int pk_pop(struct pk_parser *ps, uint32_t *v);
int pk_top(struct pk_parser *ps, uint32_t *v);
/* The innermost mark popped: the stack height it kept, and (mark_off, if
 * not NULL) where its opcode is. */
int pk_pop_mark(struct pk_parser *ps, size_t *at, uint64_t *mark_off);
int pk_line(struct pk_parser *ps, const uint8_t **s, size_t *len);
/* Containers, memo, globals, calls: 0, -errno, or 1 when op is none of them. */
int pk_op_struct(struct pk_parser *ps);
void pk_parser_free(struct pk_parser *ps);

#endif
