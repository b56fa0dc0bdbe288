/* TenniS .tsm codec, private parts shared by its files: the codec table and
 * bid (tennis.c), the checked reader (tennis_parse.c), the tree
 * (tennis_tree.c) and the writer (tennis_edit.c). The tree is docs/layout.md "TenniS". */
#ifndef MFS_TENNIS_H
#define MFS_TENNIS_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"

#define TENNIS_CODE 0x19910929u     /* format V1, at offset 4 */
#define TENNIS_HEADER_LEN 128u      /* u32 fake, u32 code, 120 reserved bytes */
#define TENNIS_RESERVED_OFF 8u
#define TENNIS_RESERVED_LEN 120u
#define TENNIS_MAX_DIMS 32u         /* NumPy's limit; TenniS has none */
#define TENNIS_FIELD_HEAD 5u        /* u8 dtype + u32 dims count */
#define TENNIS_CHAR8 13u

/* A TenniS dtype code as the model shows it. */
struct tennis_type {
	uint8_t dtype;     /* enum mfs_dtype */
	uint8_t size;      /* bytes per element (PTR: 8, as written on 64-bit hosts) */
	const char *name;  /* TenniS's name, shown for MFS_DT_OPAQUE types */
};

/* The type of a dtype code, or NULL when TenniS has no such code. */
const struct tennis_type *tennis_type_of(unsigned code);
/* The code that stores dtype dt when a tensor is given a new dtype, or -1
 * where that makes no sense (no numeric meaning, or no TenniS type). */
int tennis_code(enum mfs_dtype dt);

/* Node tags: what writing a text node rewrites. The low 56 bits hold the
 * source offset of the CHAR8 field (its dtype byte) for TENNIS_TAG_STRING.
 * Tensor tags are the offset of the field's dtype byte. */
enum tennis_tag_kind {
	TENNIS_TAG_FAKE = 1,    /* header/fake */
	TENNIS_TAG_RESERVED,    /* header/reserved */
	TENNIS_TAG_STRING,      /* nodes/<i>/op, nodes/<i>/name */
};
#define TENNIS_TAG(kind, off) (((uint64_t)(kind) << 56) | (uint64_t)(off))
#define TENNIS_TAG_KIND(tag) ((unsigned)((tag) >> 56))
#define TENNIS_TAG_OFF(tag) ((tag) & ((UINT64_C(1) << 56) - 1))

/* ---- reading (tennis_parse.c) ------------------------------------------ */

/* A cursor over the file: every read is checked against size - pos. */
struct tennis_rd {
	struct mfs_model *m;
	const uint8_t *b;
	uint64_t pos, size;
	uint32_t nnodes;
	struct mfs_err *err;
	char where[160];   /* what is being read, for messages */
};

/* u32 count + count u32 node indices, at off. */
struct tennis_list {
	uint32_t n;
	uint64_t off;
};

/* The first #op / #name of a node, when it is one CHAR8 field. */
struct tennis_str {
	uint64_t field, data, len;   /* field 0: none */
};

/* One field of a packed tensor, as read. */
struct tennis_field {
	uint64_t off;       /* the dtype byte */
	uint64_t data;      /* the first data byte */
	uint64_t nelem;
	uint8_t code;
	uint32_t ndim;
	uint64_t dims[TENNIS_MAX_DIMS];
};

/* A node's #name, for by-name/. */
struct tennis_named {
	const uint8_t *s;
	uint64_t len;
	uint32_t node;
	bool dup;
};

/* where: what is being read, printf-style, for the messages that follow. */
void tennis_where(struct tennis_rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t tennis_left(const struct tennis_rd *r);
/* EINVAL: what needs need bytes at r->pos, fewer are left. */
int tennis_truncated(struct tennis_rd *r, const char *what, uint64_t need);
int tennis_get_u32(struct tennis_rd *r, const char *what, uint32_t *v);
/* A u32 count of items of at least each bytes, checked against the bytes
 * left before anything is built for them. */
int tennis_get_count(struct tennis_rd *r, const char *what, uint64_t each, uint32_t *n);
int tennis_get_list(struct tennis_rd *r, struct tennis_list *l);
/* Every index of l below r->nnodes. */
int tennis_check_list(struct tennis_rd *r, const char *what, const struct tennis_list *l);
/* A name from the file, fit for a message. */
void tennis_show_name(char out[48], const uint8_t *s, uint64_t len);
/* One packed-tensor field at r->pos: dtype, dims, data, all checked. */
int tennis_read_field(struct tennis_rd *r, struct tennis_field *f);

/* ---- the tree (tennis_tree.c) ------------------------------------------- */

mfs_id tennis_add_list_text(struct tennis_rd *r, mfs_id dir, const char *name,
			    const struct tennis_list *l);
/* Node i at r->pos: checked in a first pass, then added under nodes; its
 * #name noted in nm for by-name/. */
int tennis_read_node(struct tennis_rd *r, uint32_t i, mfs_id nodes, struct tennis_named *nm,
		     uint32_t *nnamed, mfs_id *dirs);
/* by-name/<name> -> ../nodes/<i> for the names that occur once. */
void tennis_add_links(struct tennis_rd *r, mfs_id byname, struct tennis_named *nm, uint32_t n,
		      const mfs_id *dirs);

int tennis_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		struct mfs_err *err);

#endif
