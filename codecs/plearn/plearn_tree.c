/* The tree of a .psave/.plearn file (docs/layout.md "PLearn"): objects are
 * directories of `class` and their options, number sequences are tensors,
 * vectors of objects or matrices are directories 0/ 1/ ..., references are
 * links, and every other value is a text file holding its exact text. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "numtext.h"
#include "plearn.h"

enum plearn_show { SH_OBJ = 1, SH_TENSOR, SH_SEQDIR, SH_LINK, SH_BNUM, SH_TEXT };

struct pending {
	mfs_id link;
	uint32_t def;
};

struct build {
	struct mfs_model *m;
	struct plearn_model *pm;
	struct plearn_ast *a;
	const uint8_t *b;
	uint64_t n;
	struct pending *links;
	size_t nlinks, caplinks;
	int fail;                  /* ENOMEM while building */
};

/* A tensor as found: its record, dtype and shape. */
struct tdesc {
	struct plearn_tens pt;
	uint8_t dtype;
	uint32_t ndim;
	uint64_t dims[2];
};

static uint32_t unwrap(const struct plearn_ast *a, uint32_t i)
{
	while (a->v[i].kind == PLEARN_V_DEF && a->v[i].first != PLEARN_NIL)
		i = a->v[i].first;
	return i;
}

static uint32_t kid_count(const struct plearn_ast *a, uint32_t i, uint32_t *kids, uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t k = a->v[i].first; k != PLEARN_NIL; k = a->v[k].next) {
		if (n < max)
			kids[n] = k;
		n++;
	}
	return n;
}

/* A non-negative integer written as digits or as a binary integer. */
static bool int_of(const struct build *bd, uint32_t i, uint64_t *out)
{
	const struct plearn_val *v = &bd->a->v[i];
	if (v->kind == PLEARN_V_NUM) {
		uint64_t x = 0;
		for (uint64_t k = 0; k < v->len; k++) {
			uint8_t c = bd->b[v->off + k];
			if (c < '0' || c > '9' || !mfs_mul_ok(x, 10, &x) || !mfs_add_ok(x, c - '0', &x))
				return false;
		}
		*out = x;
		return v->len > 0;
	}
	int64_t x;
	if (v->kind != PLEARN_V_BNUM || !plearn_bin_int(bd->b + v->off + 1, v->code, &x) || x < 0)
		return false;
	*out = (uint64_t)x;
	return true;
}

/* The numbers behind an explicit TVec/TMat: a number sequence, possibly
 * a pointer to one, possibly wrapped in Storage( ). */
struct store {
	bool binary;
	uint8_t code;
	uint64_t base, count;
};

static bool storage_of(const struct plearn_ast *a, uint32_t i, struct store *s)
{
	for (int hop = 0; hop < 8; hop++) {
		const struct plearn_val *v = &a->v[i];
		switch (v->kind) {
		case PLEARN_V_DEF:
		case PLEARN_V_STORAGE:
			if (v->first == PLEARN_NIL || a->v[v->first].next != PLEARN_NIL)
				return false;
			i = v->first;
			continue;
		case PLEARN_V_REF:
			if (v->b == PLEARN_NIL)
				return false;
			i = (uint32_t)v->b;
			continue;
		case PLEARN_V_SEQ:
			if (!(v->flags & PLEARN_VF_NUMERIC) || (v->a != PLEARN_NOLEN && v->a != v->d))
				return false;
			*s = (struct store){false, 0, v->c, v->d};
			return true;
		case PLEARN_V_BSEQ:
			if (!plearn_bin_size(v->code) && v->code != 0x30)
				return false;
			*s = (struct store){true, v->code, v->c, v->a};
			return true;
		default:
			return false;
		}
	}
	return false;
}

static void set_tokens(struct tdesc *t, uint64_t base, uint64_t cols, uint64_t mod)
{
	t->dtype = MFS_DT_F64;
	t->pt = (struct plearn_tens){PLEARN_T_TOKENS, 8, 0, base, cols ? cols : 1, mod ? mod : 1};
}

static void set_binary(struct tdesc *t, uint8_t code, uint64_t base, uint64_t cols, uint64_t mod)
{
	unsigned es = code == 0x30 ? 1 : plearn_bin_size(code);
	uint8_t kind = code == 0x30 ? PLEARN_T_BOOL : (cols == mod ? PLEARN_T_RAW : PLEARN_T_STRIDED);
	t->dtype = (uint8_t)plearn_bin_dtype(code);
	t->pt = (struct plearn_tens){kind, (uint8_t)es, plearn_bin_be(code), base, cols ? cols : 1,
				 mod ? mod : 1};
}

/* An explicit TVec( length offset storage ) or TMat( length width mod
 * offset storage ) over a sequence of numbers. */
static bool explicit_of(const struct build *bd, uint32_t i, struct tdesc *t)
{
	const struct plearn_ast *a = bd->a;
	bool mat = a->v[i].kind == PLEARN_V_TMAT;
	uint32_t kids[5];
	uint64_t x[4];
	uint32_t nk = kid_count(a, i, kids, 5), want = mat ? 5 : 3;
	if (nk != want)
		return false;
	for (uint32_t k = 0; k + 1 < want; k++)
		if (!int_of(bd, kids[k], &x[k]))
			return false;
	uint64_t rows = mat ? x[0] : 1, cols = mat ? x[1] : x[0];
	uint64_t mod = mat ? x[2] : cols, off = mat ? x[3] : x[1], count;
	t->ndim = mat ? 2 : 1;
	t->dims[0] = mat ? rows : cols;
	t->dims[1] = cols;
	if (!mfs_mul_ok(rows, cols, &count))
		return false;
	if (a->v[kids[want - 1]].kind == PLEARN_V_NULL) {
		if (count)
			return false;
		set_tokens(t, 0, 1, 1);
		return true;
	}
	struct store s;
	if (!storage_of(a, kids[want - 1], &s))
		return false;
	if (count) {
		/* The last element, off + (rows - 1) * mod + cols - 1, must exist. */
		uint64_t last;
		if ((rows > 1 && mod < cols) || !mfs_mul_ok(rows - 1, mod, &last) ||
		    !mfs_add_ok(last, off, &last) || !mfs_add_ok(last, cols, &last) || last > s.count)
			return false;
	}
	if (rows <= 1)
		mod = cols;
	if (s.binary) {
		unsigned es = s.code == 0x30 ? 1 : plearn_bin_size(s.code);
		set_binary(t, s.code, s.base + off * es, cols, mod);
	} else {
		set_tokens(t, s.base + off, cols, mod);
	}
	return true;
}

static bool tensor_of(const struct build *bd, uint32_t i, struct tdesc *t)
{
	const struct plearn_ast *a = bd->a;
	i = unwrap(a, i);
	const struct plearn_val *v = &a->v[i];
	uint64_t count;
	switch (v->kind) {
	case PLEARN_V_STORAGE:
		if (v->first == PLEARN_NIL || a->v[v->first].next != PLEARN_NIL ||
		    a->v[v->first].kind == PLEARN_V_STORAGE)
			return false;
		return tensor_of(bd, v->first, t);
	case PLEARN_V_SEQ:
		if (!(v->flags & PLEARN_VF_NUMERIC) || (v->a != PLEARN_NOLEN && v->a != v->d))
			return false;
		t->ndim = 1;
		t->dims[0] = v->d;
		set_tokens(t, v->c, v->d, v->d);
		return true;
	case PLEARN_V_MAT:
		if (!(v->flags & PLEARN_VF_NUMERIC) || !mfs_mul_ok(v->a, v->b, &count) || count != v->d)
			return false;
		t->ndim = 2;
		t->dims[0] = v->a;
		t->dims[1] = v->b;
		set_tokens(t, v->c, v->b, v->b);
		return true;
	case PLEARN_V_BSEQ:
	case PLEARN_V_BMAT: {
		if (!plearn_bin_size(v->code) && v->code != 0x30)
			return false;
		bool mat = v->kind == PLEARN_V_BMAT;
		t->ndim = mat ? 2 : 1;
		t->dims[0] = v->a;
		t->dims[1] = v->b;
		uint64_t cols = mat ? v->b : v->a;
		set_binary(t, v->code, v->c, cols, cols);
		return true;
	}
	case PLEARN_V_TVEC:
	case PLEARN_V_TMAT:
		return explicit_of(bd, i, t);
	default:
		return false;
	}
}

static enum plearn_show show_of(struct build *bd, uint32_t i);

/* A vector of objects or of matrices: shown as 0/ 1/ ... */
static bool seqdir(struct build *bd, uint32_t i)
{
	struct plearn_ast *a = bd->a;
	const struct plearn_val *v = &a->v[i];
	if (!((v->kind == PLEARN_V_SEQ && !(v->flags & PLEARN_VF_NUMERIC)) ||
	      (v->kind == PLEARN_V_BSEQ && v->code == 0xFF)))
		return false;
	uint64_t n = 0, real = 0;
	for (uint32_t k = v->first; k != PLEARN_NIL; k = a->v[k].next) {
		enum plearn_show s = show_of(bd, k);
		n++;
		if (s == SH_OBJ || s == SH_TENSOR || s == SH_LINK)
			real++;
		else if (a->v[k].kind != PLEARN_V_NULL)
			return false;
	}
	v = &a->v[i];
	if (v->kind == PLEARN_V_SEQ && v->a != PLEARN_NOLEN && v->a != n)
		return false;
	return real > 0;
}

static enum plearn_show show_of(struct build *bd, uint32_t i)
{
	struct plearn_ast *a = bd->a;
	if (a->v[i].show)
		return (enum plearn_show)a->v[i].show;
	enum plearn_show s = SH_TEXT;
	uint32_t in = unwrap(a, i);
	struct tdesc t;
	switch (a->v[in].kind) {
	case PLEARN_V_OBJ:
		s = SH_OBJ;
		break;
	case PLEARN_V_REF:
		s = in == i ? SH_LINK : SH_TEXT;
		break;
	case PLEARN_V_BNUM:
		s = in == i ? SH_BNUM : SH_TEXT;
		break;
	case PLEARN_V_SEQ:
	case PLEARN_V_MAT:
	case PLEARN_V_BSEQ:
	case PLEARN_V_BMAT:
	case PLEARN_V_TVEC:
	case PLEARN_V_TMAT:
	case PLEARN_V_STORAGE:
		if (tensor_of(bd, in, &t))
			s = SH_TENSOR;
		else if (seqdir(bd, in))
			s = SH_SEQDIR;
		break;
	default:
		break;
	}
	a->v[i].show = (uint8_t)s;
	return s;
}

/* Which pointer definitions get a node: those outside text values. */
static void mark(struct build *bd, uint32_t i)
{
	struct plearn_ast *a = bd->a;
	enum plearn_show s = show_of(bd, i);
	for (uint32_t d = i; a->v[d].kind == PLEARN_V_DEF; d = a->v[d].first) {
		a->v[d].flags |= PLEARN_VF_SHOWN;
		if (a->v[d].first == PLEARN_NIL)
			break;
	}
	uint32_t in = unwrap(a, i);
	if (s == SH_OBJ) {
		for (uint32_t o = a->v[in].first; o != PLEARN_NIL; o = a->v[o].next)
			if (a->v[o].first != PLEARN_NIL)
				mark(bd, a->v[o].first);
	} else if (s == SH_SEQDIR) {
		for (uint32_t k = a->v[in].first; k != PLEARN_NIL; k = a->v[k].next)
			mark(bd, k);
	}
}

static mfs_id add_text(struct build *bd, mfs_id parent, const char *name, size_t nl,
		       uint64_t off, uint64_t len, uint8_t code)
{
	const char *content = (const char *)bd->b + off;
	char buf[MFS_NUM_MAX];
	size_t clen = (size_t)len;
	if (code) {
		/* A binary scalar shows as its number. */
		uint8_t le[8] = {0};
		unsigned sz = plearn_bin_size(code);
		memcpy(le, bd->b + off + 1, sz);
		if (plearn_bin_be(code))
			mfs_swap_elems(le, 1, sz);
		clen = mfs_fmt_elem(buf, plearn_bin_dtype(code), le);
		content = buf;
	}
	mfs_id id = mfs_add_text(bd->m, parent, name, nl, content, clen, MFS_NF_WRITABLE);
	uint64_t tag = plearn_add_text(bd->pm, &(struct plearn_text){.off = off, .len = len, .code = code});
	if (!tag)
		bd->fail = ENOMEM;
	mfs_set_tag(bd->m, id, tag);
	return id;
}

static mfs_id add_tensor(struct build *bd, mfs_id parent, const char *name, size_t nl,
			 uint32_t i, bool attach)
{
	struct tdesc d;
	tensor_of(bd, i, &d);
	struct mfs_tensor t = {0};
	t.dtype = d.dtype;
	t.order = MFS_ROW_MAJOR;
	t.ndim = d.ndim;
	t.dims = d.dims;
	t.flags = MFS_TF_WRITABLE;
	if (d.pt.kind == PLEARN_T_RAW) {
		t.off = d.pt.base;
		t.swap = d.pt.be ? d.pt.esize : 0;
	} else {
		t.ops = &plearn_tensor_ops;
	}
	t.tag = plearn_add_tens(bd->pm, &d.pt);
	if (!t.tag) {
		bd->fail = ENOMEM;
		return MFS_NONE;
	}
	if (attach)
		return mfs_attach_tensor(bd->m, parent, &t) < 0 ? MFS_NONE : parent;
	return mfs_add_tensor(bd->m, parent, name, nl, &t);
}

static void fill(struct build *bd, mfs_id dir, uint32_t in, enum plearn_show s);

static mfs_id build(struct build *bd, mfs_id parent, const char *name, size_t nl, uint32_t i)
{
	struct plearn_ast *a = bd->a;
	enum plearn_show s = show_of(bd, i);
	uint32_t in = unwrap(a, i);
	const struct plearn_val *v = &a->v[i];
	mfs_id id = MFS_NONE;
	switch (s) {
	case SH_OBJ:
	case SH_SEQDIR:
		id = mfs_add_dir(bd->m, parent, name, nl);
		if (id != MFS_NONE)
			fill(bd, id, in, s);
		break;
	case SH_TENSOR:
		id = add_tensor(bd, parent, name, nl, in, false);
		break;
	case SH_LINK:
		if (v->b != PLEARN_NIL && (a->v[v->b].flags & PLEARN_VF_SHOWN)) {
			if (MFS_ARRAY_RESERVE(bd->links, bd->nlinks, bd->caplinks, 1, 32) < 0) {
				bd->fail = ENOMEM;
				return MFS_NONE;
			}
			id = mfs_add_link(bd->m, parent, name, nl, MFS_NONE);
			bd->links[bd->nlinks++] = (struct pending){id, (uint32_t)v->b};
			break;
		}
		id = add_text(bd, parent, name, nl, v->off, v->len, 0);
		break;
	case SH_BNUM:
		id = add_text(bd, parent, name, nl, v->off, v->len, v->code);
		break;
	case SH_TEXT:
		id = add_text(bd, parent, name, nl, v->off, v->len, 0);
		break;
	}
	for (uint32_t d = i; a->v[d].kind == PLEARN_V_DEF; d = a->v[d].first) {
		a->v[d].c = id;
		if (a->v[d].first == PLEARN_NIL)
			break;
	}
	return id;
}

/* The entries of an object directory, or of a 0/ 1/ ... directory. */
static void fill(struct build *bd, mfs_id dir, uint32_t in, enum plearn_show s)
{
	struct plearn_ast *a = bd->a;
	const struct plearn_val *v = &a->v[in];
	if (s == SH_OBJ) {
		mfs_add_text(bd->m, dir, "class", 5, (const char *)bd->b + v->a, (size_t)v->b, 0);
		for (uint32_t o = v->first; o != PLEARN_NIL && !bd->fail; o = a->v[o].next) {
			const struct plearn_val *opt = &a->v[o];
			if (opt->first != PLEARN_NIL)
				build(bd, dir, (const char *)bd->b + opt->a, (size_t)opt->b, opt->first);
		}
		return;
	}
	uint64_t k = 0;
	for (uint32_t e = v->first; e != PLEARN_NIL && !bd->fail; e = a->v[e].next) {
		char nm[24];
		int l = snprintf(nm, sizeof(nm), "%llu", (unsigned long long)k++);
		build(bd, dir, nm, (size_t)l, e);
	}
}

int plearn_psave_open(struct mfs_model *m, struct plearn_model *pm, struct mfs_err *err)
{
	struct plearn_ast a = {0};
	int r = plearn_parse(&a, m->base, m->size, PLEARN_FILE, err);
	if (r < 0) {
		plearn_ast_free(&a);
		return r;
	}
	struct build bd = {m, pm, &a, m->base, m->size, NULL, 0, 0, 0};
	uint32_t root = a.root;
	mark(&bd, root);
	enum plearn_show s = show_of(&bd, root);
	uint32_t in = unwrap(&a, root);
	if (s == SH_OBJ || s == SH_SEQDIR)
		fill(&bd, MFS_ROOT, in, s);
	else if (s == SH_TENSOR)
		add_tensor(&bd, MFS_ROOT, NULL, 0, in, true);
	else {
		mfs_id id = build(&bd, MFS_ROOT, "value", 5, root);
		uint64_t tag = id != MFS_NONE ? m->nodes[id].tag : 0;
		if (tag && tag <= pm->ntexts)
			pm->texts[tag - 1].top = true;
	}
	if (s == SH_OBJ || s == SH_SEQDIR || s == SH_TENSOR)
		for (uint32_t d = root; a.v[d].kind == PLEARN_V_DEF && a.v[d].first != PLEARN_NIL; d = a.v[d].first)
			a.v[d].c = MFS_ROOT;
	mfs_add_textf(m, MFS_ROOT, "encoding", 0, "%s", a.binary ? "binary" : "ascii");
	for (size_t k = 0; k < bd.nlinks; k++)
		if (bd.links[k].link != MFS_NONE)
			mfs_set_link(m, bd.links[k].link, (mfs_id)a.v[bd.links[k].def].c);
	free(bd.links);

	/* The tensors' tokens first: they are what edits write. */
	pm->style = plearn_style_detect(m->base, m->size, a.num, a.nnum);
	for (uint32_t i = 0; !pm->style && i < a.nv; i++)
		if (a.v[i].kind == PLEARN_V_NUM)
			pm->style = plearn_style_detect(m->base, m->size, &a.v[i].off, 1);
	if (!pm->style)
		pm->style = 18;
	pm->num = a.num;
	pm->nnum = a.nnum;
	a.num = NULL;
	plearn_ast_free(&a);
	if (bd.fail)
		return mfs_error(err, bd.fail, "out of memory");
	return 0;
}
