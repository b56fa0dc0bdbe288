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

#define PLEARN_MAX_DEPTH 256          /* nesting of values, objects and sequences */
#define PLEARN_NIL ((uint32_t)UINT32_MAX)
#define PLEARN_NOLEN UINT64_MAX       /* a sequence written without its length */

/* ---- The value tree ------------------------------------------------------
 * One node per value that is not a plain number inside a sequence: numbers
 * of all-number sequences are only indexed (their token offsets in
 * plearn_ast.num), so a matrix costs 8 bytes per element, not a node. */
enum plearn_kind {
	PLEARN_V_NUM = 1,   /* ascii number token (nan, inf, ? included) */
	PLEARN_V_WORD,      /* bare word (True, a class-less name, ...) */
	PLEARN_V_STR,       /* "quoted string" */
	PLEARN_V_BNUM,      /* binary scalar: code = type code, bytes follow it */
	PLEARN_V_BDATE,     /* 0xFE then one value (a binary double) */
	PLEARN_V_OBJ,       /* Class( options ): a/b = class name span; kids = PLEARN_V_OPT */
	PLEARN_V_OPT,       /* name = value: a/b = name span; first kid = the value */
	PLEARN_V_DEF,       /* *N -> value: a = N; first kid = the value; c = its node */
	PLEARN_V_REF,       /* *N (N > 0): a = N; b = the PLEARN_V_DEF it names, or PLEARN_NIL */
	PLEARN_V_NULL,      /* *0 */
	PLEARN_V_SEQ,       /* N [ ... ] or [ ... ]: a = N or PLEARN_NOLEN */
	PLEARN_V_MAT,       /* L W [ ... ]: a = L, b = W */
	PLEARN_V_BSEQ,      /* binary 1-D: code = element type; a = length; c = data offset */
	PLEARN_V_BMAT,      /* binary 2-D: code = element type; a = L, b = W, c = data offset */
	PLEARN_V_TVEC,      /* TVec( length offset storage ): kids */
	PLEARN_V_TMAT,      /* TMat( length width mod offset storage ): kids */
	PLEARN_V_STORAGE,   /* Storage( sequence ): first kid */
	PLEARN_V_MAP,       /* { k : v , ... }: kids are PLEARN_V_PAIR */
	PLEARN_V_PAIR,      /* ( a , b ), a : b, or a tuple: kids */
	PLEARN_V_MULTI,     /* a value written as several items ("x1" 0): kids */
	PLEARN_V_EMPTY,     /* an option with no value text */
};

/* plearn_val.flags */
#define PLEARN_VF_NUMERIC 0x01u   /* PLEARN_V_SEQ/PLEARN_V_MAT: every element a number: c = first
			       index in plearn_ast.num, d = count; no kids */
#define PLEARN_VF_SHOWN   0x02u   /* PLEARN_V_DEF: its value has a node in the tree */
#define PLEARN_VF_BE      0x04u   /* PLEARN_V_BSEQ/PLEARN_V_BMAT: the header is big-endian */

struct plearn_val {
	uint8_t kind;
	uint8_t code;
	uint8_t flags;
	uint8_t show;             /* cached enum plearn_show + 1, 0 = not yet known */
	uint32_t first, next;     /* kids in file order; next sibling */
	uint64_t off, len;        /* the value's span in the text */
	uint64_t a, b, c, d;      /* per kind, see enum plearn_kind */
};

struct plearn_ast {
	struct plearn_val *v;
	uint32_t nv, capv;
	uint64_t *num;            /* offsets of indexed number tokens */
	uint64_t nnum, capnum;
	uint32_t *defs;           /* every PLEARN_V_DEF, sorted by (id, offset) after parsing */
	uint32_t ndefs, capdefs;
	uint32_t root;
	bool binary;              /* some value is binary-coded */
	bool open_comment;        /* a '#' comment ran to the end of the text */
};

enum plearn_parse_mode {
	PLEARN_FILE,    /* a whole .psave/.plearn: one top-level value */
	PLEARN_OPTION,  /* the text of one option value (an edit): items up to the end */
};

/* Parse text [b, b + n) into a (zeroed by the caller; free with plearn_ast_free).
 * Errors carry the offset of the problem. */
int plearn_parse(struct plearn_ast *a, const uint8_t *b, uint64_t n, enum plearn_parse_mode mode,
		 struct mfs_err *err);
void plearn_ast_free(struct plearn_ast *a);

/* ---- Inside the parser (plearn_parse.c, plearn_binary.c) ---------------- */
struct plearn_parser {
	const uint8_t *b;
	uint64_t n, pos;
	struct plearn_ast *a;
	struct mfs_err *err;
	unsigned depth;           /* of plearn_parse_item calls */
};

/* Kids of one list, linked as they come. */
struct plearn_kids {
	uint32_t first, last;
	uint64_t count;
};

int plearn_new_val(struct plearn_parser *p, enum plearn_kind kind, uint64_t off, uint32_t *out);
void plearn_add_kid(struct plearn_ast *a, struct plearn_kids *k, uint32_t i);
/* Blanks and '#' comments, and the separators ';' ',' when seps. */
void plearn_skip(struct plearn_parser *p, bool seps);
/* One value at p->pos, nesting checked against PLEARN_MAX_DEPTH. */
int plearn_parse_item(struct plearn_parser *p, uint32_t *out);
/* The binary value at p->pos (a type code below 0x20, or 0xFE). */
int plearn_parse_binary(struct plearn_parser *p, uint32_t *out);
/* The binary integer after a '*' at offset at: a pointer number. */
int plearn_parse_bin_id(struct plearn_parser *p, uint64_t at, uint64_t *id);
/* The value of the integer scalar of type code at s; false for floats
 * and values beyond int64. */
bool plearn_bin_int(const uint8_t *s, uint8_t code, int64_t *out);

/* ---- Lexical helpers (plearn_lex.c) ------------------------------------- */
static inline bool plearn_blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}
/* Ends a bare token: blanks, punctuation PLearn stops at, binary bytes. */
bool plearn_tok_end(uint8_t c);
/* Length of the number token at pos (PLearn's readAsciiNum grammar, ending
 * at a token end), 0 if none; *uint: digits only. */
uint64_t plearn_scan_number(const uint8_t *b, uint64_t n, uint64_t pos, bool *uint);
/* Length of the bare word at pos (0 if none). */
uint64_t plearn_scan_word(const uint8_t *b, uint64_t n, uint64_t pos);
/* Length of the quoted string at pos including both quotes, 0 if unterminated. */
uint64_t plearn_scan_string(const uint8_t *b, uint64_t n, uint64_t pos);
/* Bytes after a binary scalar's type code, 0 if code is no scalar code. */
unsigned plearn_bin_size(uint8_t code);
/* The dtype of a binary scalar or element code; MFS_DT_INVALID if none. */
enum mfs_dtype plearn_bin_dtype(uint8_t code);
/* Whether the elements of a binary code are big-endian. */
bool plearn_bin_be(uint8_t code);

/* ---- Numbers (plearn_num.c) --------------------------------------------- */
/* The value of a number token (as PLearn reads it: ? and nan are NaN). */
int plearn_num_value(const uint8_t *s, uint64_t len, double *out);
/* 18 or 15 (%.18g, %.15g): the style of the first of these number tokens
 * that only one style writes; 0 when none tells. */
int plearn_style_detect(const uint8_t *b, uint64_t n, const uint64_t *toks, uint64_t ntoks);
/* v as text that reads back as v: %.18g in style 18, else the shortest
 * round-trip decimal (%.15g would lose digits); as an integer when as_int
 * and v is one (not -0). out has room for MFS_NUM_MAX bytes; returns the
 * length (no NUL counted). */
size_t plearn_fmt_num(char *out, double v, int style, bool as_int);

/* ---- The codec's state -------------------------------------------------- */
enum plearn_format { PLEARN_PSAVE = 1, PLEARN_PMAT, PLEARN_AMAT };

/* How a tensor's elements are stored. */
enum plearn_tkind {
	PLEARN_T_TOKENS = 1,  /* ascii number tokens, plearn_model.num[base + row * mod + col] */
	PLEARN_T_RAW,         /* binary, contiguous at base (ops == NULL) */
	PLEARN_T_STRIDED,     /* binary elements at base + (row * mod + col) * esize */
	PLEARN_T_BOOL,        /* binary '0'/'1' bytes at base + row * mod + col */
};

struct plearn_tens {
	uint8_t kind;          /* enum plearn_tkind */
	uint8_t esize;
	uint8_t be;            /* binary elements are big-endian */
	uint64_t base;
	uint64_t cols, mod;    /* element e is at row e / cols, column e % cols */
};

/* A writable text node: the value's span, and for binary scalars the code. */
struct plearn_text {
	uint64_t off, len;
	uint8_t code;          /* 0: text re-parsed as PLearn; else a binary scalar */
	bool top;              /* the file's top-level value: it must stay one
				  object or sequence (what plearn_parse's PLEARN_FILE takes) */
};

struct plearn_model {
	enum plearn_format format;
	int style;             /* 18 or 15 (%.18g / %.15g) */
	uint64_t *num;         /* offsets of the number tokens tensors show */
	uint64_t nnum;
	struct plearn_tens *tens;  /* indexed by mfs_tensor.tag - 1 */
	uint32_t ntens, captens;
	struct plearn_text *texts; /* indexed by mfs_node.tag - 1 */
	uint32_t ntexts, captexts;
};

extern const struct mfs_tensor_ops plearn_tensor_ops;

/* Add a tensor/text record; returns its tag (index + 1), 0 on ENOMEM. */
uint64_t plearn_add_tens(struct plearn_model *pm, const struct plearn_tens *t);
uint64_t plearn_add_text(struct plearn_model *pm, const struct plearn_text *t);

/* ---- The parts of the codec --------------------------------------------- */
int plearn_psave_open(struct mfs_model *m, struct plearn_model *pm, struct mfs_err *err);
int plearn_pmat_open(struct mfs_model *m, struct plearn_model *pm, struct mfs_err *err);
int plearn_amat_open(struct mfs_model *m, struct plearn_model *pm, struct mfs_err *err);
int plearn_pmat_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		     struct mfs_err *err);
/* Tensor and text edits of .psave/.plearn files and .amat matrices. */
int plearn_tensor_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		       struct mfs_err *err);
int plearn_text_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		     struct mfs_err *err);

#endif
