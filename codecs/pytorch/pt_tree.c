/* The pickled object of a torch.save file as a tree (docs/layout.md
 * "PyTorch"): dicts (OrderedDict too) as directories, string keys split at
 * dots; lists, tuples and sets holding a tensor, a dict or an object as
 * directories 0/, 1/, ...; tensors as tensor directories; any other
 * global's object as class, args and state; every other value a one-value
 * text file (a container of such values as its Python literal,
 * pt_repr.c). Values shared through the memo are shown at each place; the
 * walk is bounded in depth and in the nodes it makes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dotted.h"
#include "pt_repr.h"
#include "pytorch.h"

/* Nodes the walk makes at most: per value of the pickle, plus this many. */
#define NODES_FREE (1u << 16)
#define NODES_PER_VALUE 16u

enum { DEEP_UNKNOWN, DEEP_VISITING, DEEP_NO, DEEP_YES };

struct walk {
	struct mfs_model *m;
	struct pt *pt;
	struct mfs_dotted *ix;      /* the index lines */
	struct mfs_buf path;        /* the index name of the value being added */
	uint8_t *deep;              /* per value: DEEP_* */
	uint64_t budget;            /* nodes left to make */
	struct pt_repr rp;          /* literals' text */
	unsigned inert;             /* objects open around the value being added:
				       inside one, every file is read-only */
	struct mfs_err *err;
};

/* Whether v is a dict: a dict, or a call of collections.OrderedDict. */
static bool is_dict(const struct pk *pk, uint32_t v)
{
	const struct pk_val *x = &pk->v[v];
	return x->kind == PK_DICT ||
	       (x->kind == PK_CALL && pk_is_global(pk, x->a, "collections", "OrderedDict"));
}

static bool is_seq(uint8_t k)
{
	return k == PK_LIST || k == PK_TUPLE || k == PK_SET || k == PK_FROZENSET;
}

/* Whether v holds (or is) a tensor, a dict or an object at any depth. */
static int deep(struct walk *w, uint32_t v, uint32_t depth)
{
	const struct pk *pk = &w->pt->pk;
	if (depth > PT_DEPTH_MAX)
		return mfs_error(w->err, EINVAL, "values nested deeper than %u", PT_DEPTH_MAX);
	uint8_t k = pk->v[v].kind, sk;
	if (pt_bytes_call(pk, v) != PK_NIL)
		return 0;
	if (pt_set_call(pk, v, &sk) != PK_NIL)
		return deep(w, pt_set_call(pk, v, &sk), depth + 1);
	if (!is_seq(k))
		return k == PK_CALL || k == PK_DICT || k == PK_PERSID;
	if (w->deep[v] != DEEP_UNKNOWN)
		return w->deep[v] != DEEP_NO;  /* visiting: a cycle, a directory */
	w->deep[v] = DEEP_VISITING;
	int r = 0;
	for (uint32_t c = pk->v[v].head; c != PK_NIL && r == 0; c = pk->c[c].next)
		r = deep(w, pk->c[c].v, depth + 1);
	if (r < 0)
		return r;
	w->deep[v] = r ? DEEP_YES : DEEP_NO;
	return r;
}

static int spend(struct walk *w)
{
	if (!w->budget)
		return mfs_error(w->err, EINVAL, "the pickle's shared values make more than %llu nodes",
				 (unsigned long long)(w->pt->pk.nv * (uint64_t)NODES_PER_VALUE + NODES_FREE));
	w->budget--;
	return 0;
}

static int add_value(struct walk *w, mfs_id parent, struct mfs_dotted *d, const char *name,
		     size_t len, uint32_t v, uint32_t depth);

/* Where a named entry goes: its parent and the name it is given there
 * (split at dots when d is set). */
static mfs_id place(struct mfs_dotted *d, mfs_id parent, const char **name, size_t *len,
		    char req[16])
{
	return d ? mfs_dotted_parent(d, *name, *len, req, name, len) : parent;
}

static mfs_id add_dir(struct walk *w, mfs_id parent, struct mfs_dotted *d, const char *name,
		      size_t len)
{
	return d ? mfs_dotted_add_dir(d, name, len) : mfs_add_dir(w->m, parent, name, len);
}

/* The index name grows by one component (".name" after the first). */
static size_t path_push(struct walk *w, const char *s, size_t n)
{
	size_t at = w->path.len;
	if ((at && mfs_buf_add(&w->path, ".", 1) < 0) || mfs_buf_add(&w->path, s, n) < 0)
		w->path.len = at;  /* out of memory: the open fails on the next node */
	return at;
}

static int add_tensor(struct walk *w, mfs_id parent, struct mfs_dotted *d, const char *name,
		      size_t len, uint32_t v)
{
	struct mfs_tensor t;
	int r = pt_tensor(w->m, w->pt, v, &t, w->err);
	if (r < 0)
		return r;
	if (w->inert)  /* an inert object's part: read-only */
		t.flags &= (uint8_t)~(MFS_TF_WRITABLE | MFS_TF_RESHAPE);
	const struct pt_view *pv = &w->pt->views[t.tag];
	const struct pt_storage *st = &w->pt->st[pv->storage];
	uint64_t off = st->off + pv->offset * st->esize, bytes = 1;
	for (uint32_t i = 0; i < t.ndim; i++)
		bytes *= t.dims[i];
	bytes *= t.esize;
	if (parent == MFS_NONE)
		mfs_attach_tensor(w->m, MFS_ROOT, &t);
	else if (d)
		mfs_dotted_add(d, name, len, &t, off, bytes);
	else
		mfs_add_tensor(w->m, parent, name, len, &t);
	mfs_dotted_index(w->ix, w->path.p ? w->path.p : "", w->path.len, &t, off, bytes);
	return 0;
}

/* Pairs of a dict's cells (from cell c on, n of them) as entries of dir. */
static int add_pairs(struct walk *w, mfs_id dir, uint32_t c, uint32_t depth, bool root)
{
	const struct pk *pk = &w->pt->pk;
	struct mfs_dotted *d = mfs_dotted_new(w->m, dir, ".");
	if (!d)
		return mfs_error(w->err, ENOMEM, "out of memory");
	int r = 0;
	while (c != PK_NIL && pk->c[c].next != PK_NIL && r == 0) {
		uint32_t k = pk->c[c].v, v = pk->c[pk->c[c].next].v;
		c = pk->c[pk->c[c].next].next;
		const struct pk_val *kv = &pk->v[k];
		const char *name;
		size_t len;
		bool str = kv->kind == PK_STR;
		if (str) {
			name = (const char *)pk_bytes(pk, kv);
			len = (size_t)kv->u.s.len;
		} else if ((r = pt_repr(&w->rp, pk, k, &name, &len, w->err)) < 0) {
			break;
		}
		size_t at = path_push(w, name, len);
		if (root && str && len == 5 && !memcmp(name, "index", 5))
			r = add_value(w, dir, NULL, "index~1", 7, v, depth);  /* the index file's name */
		else
			r = add_value(w, dir, str ? d : NULL, name, len, v, depth);
		w->path.len = at;
	}
	mfs_dotted_finish(d, MFS_NONE);
	return r;
}

/* Elements of a container (cells from c) as entries 0, 1, ... of dir. */
static int add_elems(struct walk *w, mfs_id dir, uint32_t c, uint32_t depth)
{
	const struct pk *pk = &w->pt->pk;
	int r = 0;
	for (uint64_t i = 0; c != PK_NIL && r == 0; c = pk->c[c].next, i++) {
		char name[24];
		size_t n = (size_t)snprintf(name, sizeof(name), "%llu", (unsigned long long)i);
		size_t at = path_push(w, name, n);
		r = add_value(w, dir, NULL, name, n, pk->c[c].v, depth);
		w->path.len = at;
	}
	return r;
}

/* A dict's entries: its pairs, and an OrderedDict's from its argument (a
 * list of pairs, as protocol 0 writes it) before those SETITEMS gave. */
static int add_dict(struct walk *w, mfs_id dir, uint32_t v, uint32_t depth, bool root)
{
	const struct pk *pk = &w->pt->pk;
	const struct pk_val *x = &pk->v[v];
	uint32_t arg = x->kind == PK_CALL && pk->v[x->b].kind == PK_TUPLE && pk->v[x->b].n == 1
		       ? pt_elem(pk, &pk->v[x->b], 0) : PK_NIL;
	int r = 0;
	if (arg != PK_NIL && pk->v[arg].kind == PK_LIST)
		for (uint32_t c = pk->v[arg].head; c != PK_NIL && r == 0; c = pk->c[c].next) {
			const struct pk_val *pair = &pk->v[pk->c[c].v];
			if ((pair->kind == PK_TUPLE || pair->kind == PK_LIST) && pair->n == 2)
				r = add_pairs(w, dir, pair->head, depth, root);
		}
	return r < 0 ? r : add_pairs(w, dir, x->head, depth, root);
}

/* A text file of value v's text (writable where an edit can replace it);
 * bytes are the bytes alone, without the newline of a text. */
static int add_scalar(struct walk *w, mfs_id parent, struct mfs_dotted *d, const char *name,
		      size_t len, uint32_t v)
{
	const struct pk *pk = &w->pt->pk;
	const struct pk_val *x = &pk->v[v];
	const char *s;
	size_t n;
	unsigned flags = 0;
	uint32_t raw = pt_bytes_call(pk, v);
	if (raw != PK_NIL) {  /* protocol 2's bytes: the Latin-1 of a str */
		struct mfs_buf b = {0};
		int r = pt_bytes_of_call(&b, pk, raw);
		/* Writable where the str is there to replace and no other place
		 * takes the call from the memo. */
		if (!w->inert && pk->v[raw].kind == PK_STR && !(x->flags & PK_F_SHARED))
			flags = MFS_NF_WRITABLE;
		char req[16];
		mfs_id p = place(d, parent, &name, &len, req);
		if (r == 0)
			mfs_set_tag(w->m, mfs_add_text(w->m, p, name, len, b.p ? b.p : "", b.len,
						       flags | MFS_NF_EXACT), v);
		mfs_buf_free(&b);
		return r == -ENOMEM ? mfs_error(w->err, ENOMEM, "out of memory")
		       : r < 0 ? mfs_error(w->err, EINVAL, "bytes of a str beyond Latin-1") : 0;
	}
	if (x->kind == PK_STR || x->kind == PK_BYTES) {
		s = (const char *)pk_bytes(pk, x);
		n = (size_t)x->u.s.len;
	} else {
		int r = pt_repr(&w->rp, pk, v, &s, &n, w->err);
		if (r < 0)
			return r;
	}
	uint8_t k = x->kind;
	if (!w->inert && (k == PK_INT || k == PK_LONG || k == PK_BOOL || k == PK_FLOAT ||
			  k == PK_STR || k == PK_BYTES || k == PK_TUPLE || k == PK_LIST))
		flags = MFS_NF_WRITABLE;  /* a literal is checked when written: pt_value.c */
	if (k == PK_BYTES)
		flags |= MFS_NF_EXACT;  /* the bytes alone */
	char req[16];
	mfs_id p = place(d, parent, &name, &len, req);
	mfs_set_tag(w->m, mfs_add_text(w->m, p, name, len, s, n, flags), v);
	return 0;
}

/* Any other global's object: class, args, state, and what SETITEMS and
 * APPENDS gave it (items/, list/), each read-only (w->inert). */
static int object_parts(struct walk *w, mfs_id dir, uint32_t v, uint32_t depth)
{
	const struct pk *pk = &w->pt->pk;
	const struct pk_val *x = &pk->v[v];
	const char *s;
	size_t n;
	int r = 0;
	if (x->kind == PK_PERSID)
		return add_value(w, dir, NULL, "persistent_id", 13, x->a, depth);
	if ((r = pt_repr(&w->rp, pk, x->a, &s, &n, w->err)) < 0)
		return r;
	mfs_add_text(w->m, dir, "class", 5, s, n, 0);
	size_t at = path_push(w, "args", 4);
	r = add_value(w, dir, NULL, "args", 4, x->b, depth);
	w->path.len = at;
	if (r == 0 && x->c != PK_NIL) {
		at = path_push(w, "state", 5);
		r = add_value(w, dir, NULL, "state", 5, x->c, depth);
		w->path.len = at;
	}
	if (r == 0 && x->n) {
		at = path_push(w, "items", 5);
		r = add_pairs(w, mfs_add_dir(w->m, dir, "items", 5), x->head, depth, false);
		w->path.len = at;
	}
	if (r == 0 && x->ln) {
		at = path_push(w, "list", 4);
		r = add_elems(w, mfs_add_dir(w->m, dir, "list", 4), x->lhead, depth);
		w->path.len = at;
	}
	return r;
}

static int add_object(struct walk *w, mfs_id dir, uint32_t v, uint32_t depth)
{
	w->inert++;
	int r = object_parts(w, dir, v, depth);
	w->inert--;
	return r;
}

/* Value v as entry name of parent (split at dots with d); parent
 * MFS_NONE: v is the model directory itself. */
static int add_value(struct walk *w, mfs_id parent, struct mfs_dotted *d, const char *name,
		     size_t len, uint32_t v, uint32_t depth)
{
	const struct pk *pk = &w->pt->pk;
	if (v == PK_NIL)
		return mfs_error(w->err, EINVAL, "internal error: a missing value");
	if (depth > PT_DEPTH_MAX)
		return mfs_error(w->err, EINVAL, "values nested deeper than %u", PT_DEPTH_MAX);
	int r = spend(w);
	if (r < 0)
		return r;
	if (pt_tensor_call(pk, v) != PK_NIL)
		return add_tensor(w, parent, d, name, len, v);
	uint8_t k = pk->v[v].kind;
	uint32_t set = pt_set_call(pk, v, &k), elems = set != PK_NIL ? set : v;
	bool dir = is_dict(pk, v) || (k == PK_CALL && pt_bytes_call(pk, v) == PK_NIL) || k == PK_PERSID;
	if (!dir && is_seq(k) && (r = deep(w, elems, depth)) != 0) {
		if (r < 0)
			return r;
		dir = true;
	}
	if (!dir)
		return parent == MFS_NONE ? add_scalar(w, MFS_ROOT, NULL, "value", 5, v)
					  : add_scalar(w, parent, d, name, len, v);
	mfs_id id = parent == MFS_NONE ? MFS_ROOT : add_dir(w, parent, d, name, len);
	if (id == MFS_NONE)
		return mfs_error(w->err, ENOMEM, "out of memory");
	if (is_dict(pk, v))
		return add_dict(w, id, v, depth + 1, parent == MFS_NONE);
	if (is_seq(k))
		return add_elems(w, id, pk->v[elems].head, depth + 1);
	return add_object(w, id, v, depth + 1);
}

int pt_tree(struct mfs_model *m, struct pt *pt, struct mfs_err *err)
{
	struct walk w = {.m = m, .pt = pt, .err = err};
	w.budget = pt->pk.nv * (uint64_t)NODES_PER_VALUE + NODES_FREE;
	w.deep = calloc(pt->pk.nv ? pt->pk.nv : 1, 1);
	w.ix = mfs_dotted_new(m, MFS_ROOT, ".");
	pt_repr_init(&w.rp, pt->pk.nv);
	int r = w.deep && w.ix ? 0 : mfs_error(err, ENOMEM, "out of memory");
	if (r == 0)
		r = add_value(&w, MFS_NONE, NULL, "", 0, pt->pk.root, 0);
	/* Storages are known to be unshared only now. */
	for (uint32_t i = 0; r == 0 && i < m->ntensors; i++)
		if ((m->tensors[i].flags & MFS_TF_WRITABLE) && pt_reshapable(pt, &m->tensors[i]))
			m->tensors[i].flags |= MFS_TF_RESHAPE;
	bool tensor_root = r == 0 && mfs_node_tensor(m, MFS_ROOT);
	mfs_dotted_finish(w.ix, r < 0 || tensor_root ? MFS_NONE : MFS_ROOT);
	pt_repr_free(&w.rp);
	mfs_buf_free(&w.path);
	free(w.deep);
	return r;
}
