/* TenniS .tsm codec, private parts shared by the reader (tennis.c) and the
 * writer (tennis_edit.c). The tree is docs/layout.md "TenniS". */
#ifndef MFS_TENNIS_H
#define MFS_TENNIS_H

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

int tennis_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err);

#endif
