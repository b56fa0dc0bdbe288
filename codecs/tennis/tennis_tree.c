/* The TenniS tree: per node its directory (op, name, inputs, params), the
 * module's input and output lists as text, and by-name/ links for the
 * names that occur once (docs/layout.md "TenniS"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "numtext.h"
#include "tennis.h"

/* The indices of a list as one line of text. */
mfs_id tennis_add_list_text(struct tennis_rd *r, mfs_id dir, const char *name, const struct tennis_list *l)
{
	char *s = mfs_model_alloc(r->m, (size_t)l->n * 11 + 1);
	if (!s)
		return MFS_NONE;
	size_t n = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		if (i)
			s[n++] = ' ';
		n += mfs_fmt_u64(s + n, mfs_le32(r->b + l->off + 4 * (uint64_t)i));
	}
	return mfs_add_text(r->m, dir, name, strlen(name), s, n, 0);
}

static void add_field(struct tennis_rd *r, mfs_id parent, const char *name, size_t len,
		      const struct tennis_field *f)
{
	const struct tennis_type *ty = tennis_type_of(f->code);
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)ty->dtype);
	struct mfs_tensor t;
	memset(&t, 0, sizeof(t));
	t.dtype = ty->dtype;
	t.order = MFS_ROW_MAJOR;
	t.ndim = f->ndim;
	t.esize = ty->size;
	t.dims = f->dims;
	t.off = f->data;
	t.tname = ty->name;
	t.tag = f->off;
	/* Any shape and any numeric TenniS dtype can be written back; char16/32
	 * bytes can be overwritten in place; pointers and opaque types are
	 * shown only. */
	if (di->numeric)
		t.flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE | MFS_TF_RETYPE;
	else if (di->kind == MFS_DK_CHAR)
		t.flags = MFS_TF_WRITABLE;
	mfs_add_tensor(r->m, parent, name, len, &t);
}

static void note_string(struct tennis_str *s, const struct tennis_field *f)
{
	if (s->field)
		return;  /* the loader takes the first of duplicates too */
	s->field = f->off;
	s->data = f->data;
	s->len = f->nelem;
}

/* The params of node `node`: checked, and added under dir unless dir is
 * MFS_NONE (the first pass, which finds #op and #name). */
static int walk_params(struct tennis_rd *r, uint32_t node, uint32_t nparams, mfs_id dir,
		       struct tennis_str *op, struct tennis_str *name)
{
	for (uint32_t j = 0; j < nparams; j++) {
		tennis_where(r, "node %u param %u", node, j);
		uint32_t nl, nf;
		int rc = tennis_get_u32(r, "name length", &nl);
		if (rc < 0)
			return rc;
		if (nl > tennis_left(r))
			return tennis_truncated(r, "name", nl);
		const char *pn = (const char *)r->b + r->pos;
		r->pos += nl;
		char shown[48];
		tennis_show_name(shown, (const uint8_t *)pn, nl);
		tennis_where(r, "node %u param '%s'", node, shown);
		rc = tennis_get_count(r, "field count", TENNIS_FIELD_HEAD, &nf);
		if (rc < 0)
			return rc;
		/* One field is the tensor itself; else a directory of fields
		 * (empty for none). */
		mfs_id pdir = MFS_NONE;
		if (dir != MFS_NONE && nf != 1)
			pdir = mfs_add_dir(r->m, dir, pn, nl);
		for (uint32_t k = 0; k < nf; k++) {
			struct tennis_field f;
			if (nf != 1)
				tennis_where(r, "node %u param '%s' field %u", node, shown, k);
			rc = tennis_read_field(r, &f);
			if (rc < 0)
				return rc;
			if (dir == MFS_NONE) {
				if (nf == 1 && f.code == TENNIS_CHAR8 && nl == 3 && !memcmp(pn, "#op", 3))
					note_string(op, &f);
				if (nf == 1 && f.code == TENNIS_CHAR8 && nl == 5 && !memcmp(pn, "#name", 5))
					note_string(name, &f);
			} else if (nf == 1) {
				add_field(r, dir, pn, nl, &f);
			} else {
				char kn[16];
				int kl = snprintf(kn, sizeof(kn), "%u", k);
				add_field(r, pdir, kn, (size_t)kl, &f);
			}
		}
	}
	return 0;
}

static mfs_id add_string(struct tennis_rd *r, mfs_id dir, const char *name, const struct tennis_str *s)
{
	if (!s->field)
		return MFS_NONE;
	mfs_id id = mfs_add_text(r->m, dir, name, strlen(name), (const char *)r->b + s->data,
				 (size_t)s->len, MFS_NF_WRITABLE);
	mfs_set_tag(r->m, id, TENNIS_TAG(TENNIS_TAG_STRING, s->field));
	return id;
}

/* Node i at r->pos: checked in a first pass, then added under nodes. */
int tennis_read_node(struct tennis_rd *r, uint32_t i, mfs_id nodes, struct tennis_named *nm, uint32_t *nnamed,
		     mfs_id *dirs)
{
	struct tennis_str op = {0}, name = {0};
	struct tennis_list in;
	uint32_t nparams;
	tennis_where(r, "node %u", i);
	int rc = tennis_get_count(r, "param count", 8, &nparams);
	if (rc < 0)
		return rc;
	uint64_t params = r->pos;
	rc = walk_params(r, i, nparams, MFS_NONE, &op, &name);
	if (rc < 0)
		return rc;
	tennis_where(r, "node %u inputs", i);
	rc = tennis_get_list(r, &in);
	if (rc < 0)
		return rc;
	char what[32];
	snprintf(what, sizeof(what), "node %u input", i);
	rc = tennis_check_list(r, what, &in);
	if (rc < 0)
		return rc;
	uint64_t end = r->pos;

	char dn[16];
	int dl = snprintf(dn, sizeof(dn), "%u", i);
	mfs_id dir = mfs_add_dir(r->m, nodes, dn, (size_t)dl);
	dirs[i] = dir;
	add_string(r, dir, "op", &op);
	add_string(r, dir, "name", &name);
	tennis_add_list_text(r, dir, "inputs", &in);
	mfs_id pdir = mfs_add_dir(r->m, dir, "params", 6);
	if (name.field)
		nm[(*nnamed)++] = (struct tennis_named){r->b + name.data, name.len, i, false};
	if (pdir == MFS_NONE)
		return 0;  /* out of memory: the core reports it */
	r->pos = params;
	rc = walk_params(r, i, nparams, pdir, NULL, NULL);
	r->pos = end;
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	const struct tennis_named *x = a, *y = b;
	uint64_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->s, y->s, (size_t)n) : 0;
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

static int cmp_node(const void *a, const void *b)
{
	const struct tennis_named *x = a, *y = b;
	return (x->node > y->node) - (x->node < y->node);
}

/* by-name/<name> -> ../nodes/<i> for the names that occur once. */
void tennis_add_links(struct tennis_rd *r, mfs_id byname, struct tennis_named *nm, uint32_t n,
		      const mfs_id *dirs)
{
	qsort(nm, n, sizeof(*nm), cmp_name);
	for (uint32_t i = 1; i < n; i++) {
		if (nm[i].len == nm[i - 1].len &&
		    (!nm[i].len || !memcmp(nm[i].s, nm[i - 1].s, (size_t)nm[i].len)))
			nm[i].dup = nm[i - 1].dup = true;
	}
	qsort(nm, n, sizeof(*nm), cmp_node);
	for (uint32_t i = 0; i < n; i++)
		if (!nm[i].dup)
			mfs_add_link(r->m, byname, (const char *)nm[i].s, (size_t)nm[i].len,
				     dirs[nm[i].node]);
}
