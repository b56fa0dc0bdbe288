/* Edits of .psave/.plearn values and .amat matrices: changed numbers are
 * rewritten token by token in the file's own style (separators kept),
 * binary values keep their type code and byte order, and option text is
 * re-parsed as PLearn before it replaces exactly the old value's span. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "numtext.h"
#include "plearn.h"

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* A run of consecutive changed tokens, rewritten as one span. */
struct group {
	uint64_t start, end;   /* source span [start, end) */
	uint64_t last;         /* token index of the last token in it */
	struct mfs_buf text;
	bool open;
};

static int gclose(struct group *g, struct mfs_patch *p)
{
	if (!g->open)
		return 0;
	g->open = false;
	return mfs_patch_put(p, g->start, g->end - g->start, g->text.p, g->text.len);
}

/* An integer token ([+-]digits) stays an integer when its new value is one. */
static bool int_token(const uint8_t *s, uint64_t len)
{
	uint64_t i = len && (s[0] == '-' || s[0] == '+');
	if (i == len)
		return false;
	for (; i < len; i++)
		if (s[i] < '0' || s[i] > '9')
			return false;
	return true;
}

static int token_edit(struct mfs_model *m, const struct plearn_tens *pt, const struct mfs_edit *e,
		      struct mfs_patch *p, struct mfs_err *err)
{
	const struct plearn_model *pm = m->priv;
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	struct group g = {0};
	int r = 0;
	for (size_t i = 0; i < e->nruns && !r; i++) {
		const struct mfs_run *run = &e->runs[i];
		if (run->first > t->nelem || run->count > t->nelem - run->first)
			return mfs_error(err, EINVAL, "internal error: run beyond the tensor");
		for (uint64_t k = 0; k < run->count && !r; k++) {
			uint64_t el = run->first + k;
			uint64_t idx = pt->base + (el / pt->cols) * pt->mod + el % pt->cols;
			uint64_t off = idx < pm->nnum ? pm->num[idx] : m->size, len = 0;
			double old, v;
			if (off < m->size)
				len = plearn_scan_number(m->base, m->size, off, NULL);
			if (!len || plearn_num_value(m->base + off, len, &old) < 0) {
				r = mfs_error(err, EIO, "element %llu is no longer a number in the file", ull(el));
				break;
			}
			uint64_t nb = mfs_le64((const uint8_t *)run->bytes + 8 * k), ob;
			memcpy(&v, &nb, 8);
			memcpy(&ob, &old, 8);
			char txt[64];
			size_t tl = plearn_fmt_num(txt, v, pm->style, int_token(m->base + off, len));
			if (nb == ob || (tl == len && !memcmp(txt, m->base + off, tl))) {
				r = gclose(&g, p);
				continue;
			}
			if (g.open && idx == g.last + 1 && off >= g.end) {
				/* Keep the separators between neighbours as they are. */
				r = mfs_buf_add(&g.text, m->base + g.end, (size_t)(off - g.end));
			} else {
				if ((r = gclose(&g, p)))
					break;
				g.open = true;
				g.start = off;
				g.text.len = 0;
			}
			if (!r)
				r = mfs_buf_add(&g.text, txt, tl);
			g.end = off + len;
			g.last = idx;
		}
	}
	if (!r)
		r = gclose(&g, p);
	mfs_buf_free(&g.text);
	if (r == -ENOMEM)
		return mfs_error(err, ENOMEM, "out of memory");
	return r;
}

/* Binary elements that are not one dense block, and '0'/'1' bool bytes. */
static int element_edit(struct mfs_model *m, const struct plearn_tens *pt, const struct mfs_edit *e,
			struct mfs_patch *p, struct mfs_err *err)
{
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	unsigned es = t->esize;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *run = &e->runs[i];
		if (run->first > t->nelem || run->count > t->nelem - run->first)
			return mfs_error(err, EINVAL, "internal error: run beyond the tensor");
		for (uint64_t k = 0; k < run->count; k++) {
			uint64_t el = run->first + k;
			uint64_t idx = (el / pt->cols) * pt->mod + el % pt->cols;
			const uint8_t *src = (const uint8_t *)run->bytes + k * es;
			uint8_t d[16];
			uint64_t off;
			if (pt->kind == PLEARN_T_BOOL) {
				off = pt->base + idx;
				d[0] = src[0] ? '1' : '0';
			} else {
				off = pt->base + idx * es;
				memcpy(d, src, es);
				if (pt->be)
					mfs_swap_elems(d, 1, es);
			}
			if (mfs_patch_put(p, off, es, d, es) < 0)
				return mfs_error(err, ENOMEM, "out of memory");
		}
	}
	return 0;
}

int plearn_tensor_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		       struct mfs_err *err)
{
	const struct plearn_model *pm = m->priv;
	if (e->tensor >= m->ntensors)
		return mfs_error(err, EINVAL, "internal error: no such tensor");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (!t->tag || t->tag > pm->ntens)
		return mfs_error(err, EINVAL, "internal error: tensor without a record");
	const struct plearn_tens *pt = &pm->tens[t->tag - 1];
	struct mfs_edit same = *e;
	if (e->reshape) {
		bool eq = e->dtype == t->dtype && e->ndim == t->ndim;
		for (uint32_t i = 0; eq && i < t->ndim; i++)
			eq = e->dims[i] == t->dims[i];
		char sh[MFS_SHAPE_TEXT], osh[MFS_SHAPE_TEXT];
		if (!eq)
			return mfs_error(err, EINVAL, "the array is %s of shape %s, expected %s of shape %s (a %s keeps its shape and element type)",
					 mfs_dtype_info(e->dtype)->name, mfs_shape_text(sh, e->ndim, e->dims),
					 mfs_dtype_info((enum mfs_dtype)t->dtype)->name,
					 mfs_shape_text(osh, t->ndim, t->dims),
					 pt->kind == PLEARN_T_TOKENS ? "PLearn text matrix" : "PLearn binary sequence");
		same.reshape = false;
	}
	switch (pt->kind) {
	case PLEARN_T_TOKENS:
		return token_edit(m, pt, &same, p, err);
	case PLEARN_T_RAW:
		return mfs_patch_raw_runs(p, t, &same, err);
	default:
		return element_edit(m, pt, &same, p, err);
	}
}

static bool text_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A binary scalar: the new number in the same type code and byte order. */
static int binary_text_edit(struct mfs_model *m, const struct plearn_text *ti, const char *s, size_t n,
			    struct mfs_patch *p, struct mfs_err *err)
{
	enum mfs_dtype dt = plearn_bin_dtype(ti->code);
	unsigned sz = plearn_bin_size(ti->code);
	uint8_t le[16] = {0};
	int r = mfs_parse_elem(dt, s, n, le);
	if (r < 0)
		return mfs_value_error(err, r, dt, s, n, "the value is stored in binary");
	if (plearn_bin_be(ti->code))
		mfs_swap_elems(le, 1, sz);
	if (!memcmp(le, m->base + ti->off + 1, sz))
		return 0;
	if (mfs_patch_put(p, ti->off + 1, sz, le, sz) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	return 0;
}

int plearn_text_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		     struct mfs_err *err)
{
	const struct plearn_model *pm = m->priv;
	uint64_t tag = e->node < m->nnodes ? m->nodes[e->node].tag : 0;
	if (!tag || tag > pm->ntexts)
		return mfs_error(err, EACCES, "this file is read-only");
	const struct plearn_text *ti = &pm->texts[tag - 1];
	const char *s = e->text;
	size_t n = e->len;
	while (n && text_blank(s[0]))
		s++, n--;
	while (n && text_blank(s[n - 1]))
		n--;
	if (ti->code)
		return binary_text_edit(m, ti, s, n, p, err);
	if (n == ti->len && !memcmp(s, m->base + ti->off, n))
		return 0;
	if (!n)
		return mfs_error(err, EINVAL, "expected a PLearn value, found nothing");
	/* A number stays a number: PLearn reads it into a numeric option. */
	const uint8_t *old = m->base + ti->off;
	if (plearn_scan_number(old, ti->len, 0, NULL) == ti->len &&
	    plearn_scan_number((const uint8_t *)s, n, 0, NULL) != n) {
		char q[MFS_QUOTE_MAX], was[MFS_QUOTE_MAX];
		return mfs_error(err, EINVAL, "expected a number (it was %s), found %s",
				 mfs_quote(was, old, (size_t)ti->len), mfs_quote(q, s, n));
	}
	struct plearn_ast a = {0};
	int r = plearn_parse(&a, (const uint8_t *)s, n, ti->top ? PLEARN_FILE : PLEARN_OPTION, err);
	bool open_comment = a.open_comment;
	plearn_ast_free(&a);
	if (r < 0)
		return mfs_error_prefix(err, "not a PLearn value");
	if (open_comment)
		return mfs_error(err, EINVAL, "a '#' comment at the end of the value would hide what follows it");
	/* Keep a bare word apart from what follows it: PLearn reads a word up
	 * to a blank or one of )]};,: only. */
	uint64_t after = ti->off + ti->len;
	bool space = after < m->size && !plearn_blank(m->base[after]) &&
		     !strchr(")]};,:#", m->base[after]) && !plearn_tok_end((uint8_t)s[n - 1]);
	uint8_t *d = mfs_patch_alloc(p, ti->off, ti->len, n + space);
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(d, s, n);
	if (space)
		d[n] = ' ';
	return 0;
}
