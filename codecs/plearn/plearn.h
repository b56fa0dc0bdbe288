/* PLearn codec, private: the value tree of .psave/.plearn files (ascii and
 * plearn_binary), number text, and the state the codec keeps for its edits.
 * Shared by the plearn*.c files only. */
#ifndef MFS_PLEARN_H
#define MFS_PLEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"
#include "edit.h"
#include "model.h"

#define PL_MAX_DEPTH 256          /* nesting of values, objects and sequences */
#define PL_NIL ((uint32_t)UINT32_MAX)
#define PL_NOLEN UINT64_MAX       /* a sequence written without its length */

/* ---- The value tree ------------------------------------------------------
 * One node per value that is not a plain number inside a sequence: numbers
 * of all-number sequences are only indexed (their token offsets in
 * pl_ast.num), so a matrix costs 8 bytes per element, not a node. */
enum pl_kind {
	PV_NUM = 1,   /* ascii number token (nan, inf, ? included) */
	PV_WORD,      /* bare word (True, a class-less name, ...) */
	PV_STR,       /* "quoted string" */
	PV_BNUM,      /* binary scalar: code = type code, bytes follow it */
	PV_BDATE,     /* 0xFE then one value (a binary double) */
	PV_OBJ,       /* Class( options ): a/b = class name span; kids = PV_OPT */
	PV_OPT,       /* name = value: a/b = name span; first kid = the value */
	PV_DEF,       /* *N -> value: a = N; first kid = the value; c = its node */
	PV_REF,       /* *N (N > 0): a = N; b = the PV_DEF it names, or PL_NIL */
	PV_NULL,      /* *0 */
	PV_SEQ,       /* N [ ... ] or [ ... ]: a = N or PL_NOLEN */
	PV_MAT,       /* L W [ ... ]: a = L, b = W */
	PV_BSEQ,      /* binary 1-D: code = element type; a = length; c = data offset */
	PV_BMAT,      /* binary 2-D: code = element type; a = L, b = W, c = data offset */
	PV_TVEC,      /* TVec( length offset storage ): kids */
	PV_TMAT,      /* TMat( length width mod offset storage ): kids */
	PV_STORAGE,   /* Storage( sequence ): first kid */
	PV_MAP,       /* { k : v , ... }: kids are PV_PAIR */
	PV_PAIR,      /* ( a , b ), a : b, or a tuple: kids */
	PV_MULTI,     /* a value written as several items ("x1" 0): kids */
	PV_EMPTY,     /* an option with no value text */
};

/* pl_val.flags */
#define PVF_NUMERIC 0x01u   /* PV_SEQ/PV_MAT: every element a number: c = first
			       index in pl_ast.num, d = count; no kids */
#define PVF_SHOWN   0x02u   /* PV_DEF: its value has a node in the tree */
#define PVF_BE      0x04u   /* PV_BSEQ/PV_BMAT: the header is big-endian */

struct pl_val {
	uint8_t kind;
	uint8_t code;
	uint8_t flags;
	uint8_t show;             /* cached enum pl_show + 1, 0 = not yet known */
	uint32_t first, next;     /* kids in file order; next sibling */
	uint64_t off, len;        /* the value's span in the text */
	uint64_t a, b, c, d;      /* per kind, see enum pl_kind */
};

struct pl_ast {
	struct pl_val *v;
	uint32_t nv, capv;
	uint64_t *num;            /* offsets of indexed number tokens */
	uint64_t nnum, capnum;
	uint32_t *defs;           /* every PV_DEF, sorted by (id, offset) after parsing */
	uint32_t ndefs, capdefs;
	uint32_t root;
	bool binary;              /* some value is binary-coded */
	bool open_comment;        /* a '#' comment ran to the end of the text */
};

enum pl_parse_mode {
	PL_FILE,    /* a whole .psave/.plearn: one top-level value */
	PL_OPTION,  /* the text of one option value (an edit): items up to the end */
};

/* Parse text [b, b + n) into a (zeroed by the caller; free with pl_ast_free).
 * Errors carry the offset of the problem. */
int pl_parse(struct pl_ast *a, const uint8_t *b, uint64_t n, enum pl_parse_mode mode,
	     struct mfs_err *err);
void pl_ast_free(struct pl_ast *a);

/* ---- Inside the parser (plearn_parse.c, plearn_binary.c) ---------------- */
struct pl_parser {
	const uint8_t *b;
	uint64_t n, pos;
	struct pl_ast *a;
	struct mfs_err *err;
	unsigned depth;           /* of pl_parse_item calls */
};

/* Kids of one list, linked as they come. */
struct pl_kids {
	uint32_t first, last;
	uint64_t count;
};

int pl_new_val(struct pl_parser *p, enum pl_kind kind, uint64_t off, uint32_t *out);
void pl_add_kid(struct pl_ast *a, struct pl_kids *k, uint32_t i);
/* Blanks and '#' comments, and the separators ';' ',' when seps. */
void pl_skip(struct pl_parser *p, bool seps);
/* One value at p->pos, nesting checked against PL_MAX_DEPTH. */
int pl_parse_item(struct pl_parser *p, uint32_t *out);
/* The binary value at p->pos (a type code below 0x20, or 0xFE). */
int pl_parse_binary(struct pl_parser *p, uint32_t *out);
/* The binary integer after a '*' at offset at: a pointer number. */
int pl_parse_bin_id(struct pl_parser *p, uint64_t at, uint64_t *id);
/* The value of the integer scalar of type code at s; false for floats
 * and values beyond int64. */
bool pl_bin_int(const uint8_t *s, uint8_t code, int64_t *out);

/* ---- Lexical helpers (plearn_lex.c) ------------------------------------- */
static inline bool pl_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
/* Ends a bare token: blanks, punctuation PLearn stops at, binary bytes. */
bool pl_tok_end(uint8_t c);
/* Length of the number token at pos (PLearn's readAsciiNum grammar, ending
 * at a token end), 0 if none; *uint: digits only. */
uint64_t pl_scan_number(const uint8_t *b, uint64_t n, uint64_t pos, bool *uint);
/* Length of the bare word at pos (0 if none). */
uint64_t pl_scan_word(const uint8_t *b, uint64_t n, uint64_t pos);
/* Length of the quoted string at pos including both quotes, 0 if unterminated. */
uint64_t pl_scan_string(const uint8_t *b, uint64_t n, uint64_t pos);
/* Bytes after a binary scalar's type code, 0 if code is no scalar code. */
unsigned pl_bin_size(uint8_t code);
/* The dtype of a binary scalar or element code; MFS_DT_INVALID if none. */
enum mfs_dtype pl_bin_dtype(uint8_t code);
/* Whether the elements of a binary code are big-endian. */
bool pl_bin_be(uint8_t code);

/* ---- Numbers (plearn_num.c) --------------------------------------------- */
/* The value of a number token (as PLearn reads it: ? and nan are NaN). */
int pl_num_value(const uint8_t *s, uint64_t len, double *out);
/* 18 or 15 (%.18g, %.15g): the style of the first of these number tokens
 * that only one style writes; 0 when none tells. */
int pl_style_detect(const uint8_t *b, uint64_t n, const uint64_t *toks, uint64_t ntoks);
/* v as text that reads back as v: %.18g in style 18, else the shortest
 * round-trip decimal (%.15g would lose digits); as an integer when as_int
 * and v is one (not -0). out has room for MFS_NUM_MAX bytes; returns the
 * length (no NUL counted). */
size_t pl_fmt_num(char *out, double v, int style, bool as_int);

/* ---- The codec's state -------------------------------------------------- */
enum pl_format { PL_PSAVE = 1, PL_PMAT, PL_AMAT };

/* How a tensor's elements are stored. */
enum pl_tkind {
	PT_TOKENS = 1,  /* ascii number tokens, pl_model.num[base + row * mod + col] */
	PT_RAW,         /* binary, contiguous at base (ops == NULL) */
	PT_STRIDED,     /* binary elements at base + (row * mod + col) * esize */
	PT_BOOL,        /* binary '0'/'1' bytes at base + row * mod + col */
};

struct pl_tens {
	uint8_t kind;          /* enum pl_tkind */
	uint8_t esize;
	uint8_t be;            /* binary elements are big-endian */
	uint64_t base;
	uint64_t cols, mod;    /* element e is at row e / cols, column e % cols */
};

/* A writable text node: the value's span, and for binary scalars the code. */
struct pl_text {
	uint64_t off, len;
	uint8_t code;          /* 0: text re-parsed as PLearn; else a binary scalar */
	bool top;              /* the file's top-level value: it must stay one
				  object or sequence (what pl_parse's PL_FILE takes) */
};

struct pl_model {
	enum pl_format format;
	int style;             /* 18 or 15 (%.18g / %.15g) */
	uint64_t *num;         /* offsets of the number tokens tensors show */
	uint64_t nnum;
	struct pl_tens *tens;  /* indexed by mfs_tensor.tag - 1 */
	uint32_t ntens, captens;
	struct pl_text *texts; /* indexed by mfs_node.tag - 1 */
	uint32_t ntexts, captexts;
};

extern const struct mfs_tensor_ops pl_tensor_ops;

/* Add a tensor/text record; returns its tag (index + 1), 0 on ENOMEM. */
uint64_t pl_add_tens(struct pl_model *pm, const struct pl_tens *t);
uint64_t pl_add_text(struct pl_model *pm, const struct pl_text *t);

/* ---- The parts of the codec --------------------------------------------- */
int pl_psave_open(struct mfs_model *m, struct pl_model *pm, struct mfs_err *err);
int pl_pmat_open(struct mfs_model *m, struct pl_model *pm, struct mfs_err *err);
int pl_amat_open(struct mfs_model *m, struct pl_model *pm, struct mfs_err *err);
int pl_pmat_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		 struct mfs_err *err);
/* Tensor and text edits of .psave/.plearn files and .amat matrices. */
int pl_tensor_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		   struct mfs_err *err);
int pl_text_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		 struct mfs_err *err);

#endif
