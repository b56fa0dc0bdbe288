/* Building and reading the node tree of a model (see model.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "buf.h"
#include "model_impl.h"
#include "names.h"
#include "npy_head.h"

/* Room for one more element in arr; with_each: bytes of a companion
 * array grown alongside (charged with it). */
static bool grow(struct mfs_model *m, void *arr, size_t *cap, uint32_t n, size_t elem,
		 size_t with_each)
{
	if (n >= MFS_NONE - 1) {
		mfs_model_fail(m, EFBIG, "too many nodes");
		return false;
	}
	if (n == *cap && !mfs_model_charge_growth(m, *cap, *cap ? *cap * 2 : 64, elem + with_each))
		return false;
	if (mfs_array_reserve(arr, n, cap, 1, elem, 64) < 0) {
		mfs_model_fail(m, ENOMEM, "out of memory");
		return false;
	}
	return true;
}

/* Append a child; the root is created by the first call with parent NONE. */
static mfs_id add_node(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		       enum mfs_kind kind, enum mfs_view view, unsigned flags)
{
	struct mfs_model_impl *im = m->impl;
	if (im->build_err || (parent == MFS_NONE && m->nnodes) ||
	    (parent != MFS_NONE && (parent >= m->nnodes || m->nodes[parent].kind != MFS_K_DIR)))
		return MFS_NONE;
	size_t cap = im->cap_nodes;
	if (!grow(m, &m->nodes, &cap, m->nnodes, sizeof(*m->nodes), sizeof(*im->last)))
		return MFS_NONE;
	if (cap != im->cap_nodes) {
		mfs_id *l = realloc(im->last, (size_t)cap * sizeof(*l));
		if (!l) {
			mfs_model_fail(m, ENOMEM, "out of memory");
			return MFS_NONE;
		}
		im->last = l;
		im->cap_nodes = cap;
	}
	uint32_t h = 0;
	const char *nm = parent == MFS_NONE ? "" : mfs_unique_name(m, parent, name, len, &h);
	if (!nm)
		return MFS_NONE;
	mfs_id id = m->nnodes;
	struct mfs_node *n = &m->nodes[id];
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->first = n->next = MFS_NONE;
	n->kind = (uint8_t)kind;
	n->view = (uint8_t)view;
	n->flags = (uint8_t)flags;
	n->name = nm;
	im->last[id] = MFS_NONE;
	m->nnodes++;
	if (parent != MFS_NONE) {
		struct mfs_node *p = &m->nodes[parent];
		if (im->last[parent] == MFS_NONE)
			p->first = id;
		else
			m->nodes[im->last[parent]].next = id;
		im->last[parent] = id;
		p->nchild++;
		if (kind == MFS_K_DIR)
			p->ndirs++;
		if (mfs_names_insert(m, id, h) < 0) {
			mfs_model_fail(m, ENOMEM, "out of memory");
			return MFS_NONE;
		}
	}
	return id;
}

mfs_id mfs_model_add_root(struct mfs_model *m)
{
	return add_node(m, MFS_NONE, "", 0, MFS_K_DIR, MFS_V_NONE, 0);
}

mfs_id mfs_add_dir(struct mfs_model *m, mfs_id parent, const char *name, size_t len)
{
	return add_node(m, parent, name, len, MFS_K_DIR, MFS_V_NONE, 0);
}

mfs_id mfs_add_text(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		    const char *content, size_t clen, unsigned flags)
{
	mfs_id id = add_node(m, parent, name, len, MFS_K_FILE, MFS_V_TEXT, flags);
	if (id == MFS_NONE)
		return id;
	char *s = mfs_model_alloc(m, clen + 1);
	if (!s)
		return MFS_NONE;
	memcpy(s, content, clen);
	s[clen] = '\n';
	m->nodes[id].u.text.s = s;
	m->nodes[id].u.text.len = clen + !(flags & MFS_NF_EXACT);
	return id;
}

mfs_id mfs_add_textf(struct mfs_model *m, mfs_id parent, const char *name, unsigned flags,
		     const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		mfs_model_fail(m, EINVAL, "text value too long");
		return MFS_NONE;
	}
	return mfs_add_text(m, parent, name, strlen(name), buf, (size_t)n, flags);
}

mfs_id mfs_add_raw(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		   uint64_t off, uint64_t rlen, unsigned flags)
{
	uint64_t end;
	if (!mfs_add_ok(off, rlen, &end) || end > m->size) {
		mfs_model_fail(m, EINVAL, "raw field beyond the end of the file");
		return MFS_NONE;
	}
	mfs_id id = add_node(m, parent, name, len, MFS_K_FILE, MFS_V_RAW, flags);
	if (id != MFS_NONE) {
		m->nodes[id].u.raw.off = off;
		m->nodes[id].u.raw.len = rlen;
	}
	return id;
}

mfs_id mfs_add_link(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		    mfs_id target)
{
	mfs_id id = add_node(m, parent, name, len, MFS_K_LINK, MFS_V_NONE, 0);
	if (id != MFS_NONE)
		m->nodes[id].u.link = target;
	return id;
}

mfs_id mfs_add_link_text(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
			 const char *target, size_t tlen)
{
	char *t = mfs_model_strdup(m, target, tlen);
	if (!t)
		return MFS_NONE;
	mfs_id id = add_node(m, parent, name, len, MFS_K_LINK, MFS_V_NONE, MFS_NF_TEXTLINK);
	if (id != MFS_NONE) {
		m->nodes[id].u.tlink.node = MFS_NONE;
		m->nodes[id].u.tlink.target = t;
	}
	return id;
}

void mfs_set_link(struct mfs_model *m, mfs_id link, mfs_id target)
{
	if (link < m->nnodes && m->nodes[link].kind == MFS_K_LINK &&
	    !(m->nodes[link].flags & MFS_NF_TEXTLINK))
		m->nodes[link].u.link = target;
}

static mfs_id add_view(struct mfs_model *m, mfs_id dir, const char *name, enum mfs_view v,
		       uint32_t tensor, unsigned flags)
{
	mfs_id id = add_node(m, dir, name, strlen(name), MFS_K_FILE, v, flags);
	if (id != MFS_NONE)
		m->nodes[id].u.tensor = tensor;
	return id;
}

/* Elements of t->bits bits packed: the bytes they fill, which must be
 * whole (*n: elements in, bytes out). */
static bool packed_bytes(struct mfs_model *m, struct mfs_tensor *t, uint64_t *n)
{
	uint64_t bits;
	if (t->dtype != MFS_DT_OPAQUE || t->bits >= 8) {
		mfs_model_fail(m, EINVAL, "packed elements of an opaque dtype narrower than a byte only");
		return false;
	}
	if (!mfs_mul_ok(*n, t->bits, &bits)) {
		mfs_model_fail(m, EFBIG, "tensor size overflows");
		return false;
	}
	if (bits % 8) {
		mfs_model_fail(m, EINVAL, "packed elements that end inside a byte");
		return false;
	}
	*n = bits / 8;
	t->esize = 1;
	return true;
}

/* Check t and append it to m->tensors as the tensor of node dir (its
 * directory, or the one file of a stream). The index, or -1 (remembered
 * failure). */
static int push_tensor(struct mfs_model *m, mfs_id dir, const struct mfs_tensor *src)
{
	struct mfs_model_impl *im = m->impl;
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)src->dtype);
	if (src->dtype == MFS_DT_INVALID || src->dtype >= MFS_DT_COUNT) {
		mfs_model_fail(m, EINVAL, "tensor of an unknown dtype");
		return -1;
	}
	if (!grow(m, &m->tensors, &im->cap_tensors, m->ntensors, sizeof(*m->tensors), 0))
		return -1;
	struct mfs_tensor t = *src;
	t.dir = dir;
	t.cache = NULL;
	if (src->dtype != MFS_DT_OPAQUE)
		t.esize = di->size;
	/* The element count must be representable, and raw storage must lie
	 * inside the file: every view relies on this check. */
	uint64_t n = 1, bytes;
	uint64_t *dims = mfs_model_alloc(m, (size_t)(src->ndim ? src->ndim : 1) * sizeof(*dims));
	if (!dims)
		return -1;
	for (uint32_t i = 0; i < src->ndim; i++) {
		dims[i] = src->dims[i];
		if (!mfs_mul_ok(n, dims[i], &n)) {
			mfs_model_fail(m, EFBIG, "tensor shape overflows");
			return -1;
		}
	}
	if (t.bits && !packed_bytes(m, &t, &n))
		return -1;
	if (!mfs_mul_ok(n, t.esize, &bytes)) {
		mfs_model_fail(m, EFBIG, "tensor size overflows");
		return -1;
	}
	if (!src->ops) {
		uint64_t end;
		if (!mfs_add_ok(t.off, bytes, &end) || end > m->size) {
			mfs_model_fail(m, EINVAL, "tensor data beyond the end of the file");
			return -1;
		}
	}
	t.dims = dims;
	t.nelem = n;
	uint32_t ti = m->ntensors++;
	m->tensors[ti] = t;
	m->nodes[dir].u.tensor = ti;
	return (int)ti;
}

int mfs_attach_tensor(struct mfs_model *m, mfs_id dir, const struct mfs_tensor *src)
{
	struct mfs_model_impl *im = m->impl;
	if (im->build_err || dir >= m->nnodes || m->nodes[dir].kind != MFS_K_DIR)
		return -1;
	int r = push_tensor(m, dir, src);
	if (r < 0)
		return -1;
	uint32_t ti = (uint32_t)r;
	const struct mfs_tensor t = m->tensors[ti];
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)t.dtype);
	unsigned wr = (t.flags & MFS_TF_WRITABLE) ? MFS_NF_WRITABLE : 0;
	add_view(m, dir, "shape", MFS_V_SHAPE, ti, 0);
	add_view(m, dir, "dtype", MFS_V_DTYPE, ti, 0);
	bool dense = !(t.flags & MFS_TF_NODENSE);
	if (di->numeric && dense)
		add_view(m, dir, "values.txt", MFS_V_VALUES, ti, wr);
	if (!(t.flags & (MFS_TF_NODATA | MFS_TF_NODENSE)))
		add_view(m, dir, "data", MFS_V_DATA, ti, wr);
	if (mfs_npy_dtype((enum mfs_dtype)t.dtype) != MFS_DT_INVALID && t.ndim <= MFS_NPY_MAX_DIMS &&
	    dense)
		add_view(m, dir, "data.npy", MFS_V_NPY, ti, wr);
	if (t.flags & MFS_TF_SPARSE)
		add_view(m, dir, "matrix.mtx", MFS_V_MTX, ti, wr);
	return im->build_err ? -1 : (int)ti;
}

mfs_id mfs_add_tensor(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		      const struct mfs_tensor *t)
{
	mfs_id dir = mfs_add_dir(m, parent, name, len);
	if (dir == MFS_NONE || mfs_attach_tensor(m, dir, t) < 0)
		return MFS_NONE;
	return dir;
}

mfs_id mfs_add_stream(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		      const struct mfs_tensor_ops *ops, uint64_t size, uint64_t tag)
{
	mfs_id id = add_node(m, parent, name, len, MFS_K_FILE, MFS_V_DATA, 0);
	if (id == MFS_NONE)
		return id;
	const uint64_t dims[1] = {size};
	struct mfs_tensor t = {.dtype = MFS_DT_U8, .ndim = 1, .dims = dims, .ops = ops, .tag = tag};
	return push_tensor(m, id, &t) < 0 ? MFS_NONE : id;
}

mfs_id mfs_add_frame_csv(struct mfs_model *m, mfs_id dir, uint64_t nrows, uint32_t ncols,
			 const uint32_t *cols, const char *const *labels)
{
	struct mfs_model_impl *im = m->impl;
	if (im->build_err)
		return MFS_NONE;
	for (uint32_t i = 0; i < ncols; i++) {
		if (cols[i] >= m->ntensors || m->tensors[cols[i]].ndim != 1 ||
		    m->tensors[cols[i]].nelem != nrows) {
			mfs_model_fail(m, EINVAL, "frame column is not a 1-D tensor of the frame's length");
			return MFS_NONE;
		}
	}
	if (!grow(m, &m->frames, &im->cap_frames, m->nframes, sizeof(*m->frames), 0))
		return MFS_NONE;
	uint32_t *c = mfs_model_alloc(m, (size_t)(ncols ? ncols : 1) * sizeof(*c));
	const char **l = mfs_model_alloc(m, (size_t)(ncols ? ncols : 1) * sizeof(*l));
	if (!c || !l)
		return MFS_NONE;
	for (uint32_t i = 0; i < ncols; i++) {
		c[i] = cols[i];
		l[i] = mfs_model_strdup(m, labels[i], strlen(labels[i]));
		if (!l[i])
			return MFS_NONE;
	}
	uint32_t fi = m->nframes++;
	m->frames[fi] = (struct mfs_frame){dir, ncols, nrows, c, l, NULL};
	mfs_id id = add_node(m, dir, "frame.csv", 9, MFS_K_FILE, MFS_V_CSV, 0);
	if (id != MFS_NONE)
		m->nodes[id].u.frame = fi;
	return id;
}

/* ---- reading ------------------------------------------------------------- */

const char *mfs_tensor_dtype_name(const struct mfs_tensor *t)
{
	return (t->dtype == MFS_DT_OPAQUE || (t->flags & MFS_TF_TNAME)) && t->tname ? t->tname
						      : mfs_dtype_info((enum mfs_dtype)t->dtype)->name;
}

const struct mfs_tensor *mfs_node_tensor(const struct mfs_model *m, mfs_id id)
{
	if (id >= m->nnodes)
		return NULL;
	const struct mfs_node *n = &m->nodes[id];
	bool is_tensor_dir = n->kind == MFS_K_DIR && n->u.tensor < m->ntensors &&
			     m->tensors[n->u.tensor].dir == id;
	bool is_view = n->kind == MFS_K_FILE && n->view >= MFS_V_SHAPE && n->view <= MFS_V_MTX;
	if (is_tensor_dir || is_view)
		return &m->tensors[n->u.tensor];
	return NULL;
}

int mfs_node_path(const struct mfs_model *m, mfs_id id, char *buf, size_t size)
{
	/* Collect the chain root..id, then join it. */
	size_t len = 0;
	for (mfs_id i = id; i != MFS_ROOT && i < m->nnodes; i = m->nodes[i].parent)
		len += strlen(m->nodes[i].name) + (len ? 1 : 0);
	if (len + 1 > size)
		return -ENAMETOOLONG;
	buf[len] = '\0';
	size_t pos = len;
	for (mfs_id i = id; i != MFS_ROOT && i < m->nnodes; i = m->nodes[i].parent) {
		size_t nl = strlen(m->nodes[i].name);
		if (pos != len)
			buf[--pos] = '/';
		pos -= nl;
		memcpy(buf + pos, m->nodes[i].name, nl);
	}
	return (int)len;
}

static uint32_t depth(const struct mfs_model *m, mfs_id id)
{
	uint32_t d = 0;
	for (; id != MFS_ROOT && id < m->nnodes; id = m->nodes[id].parent)
		d++;
	return d;
}

int mfs_link_target(const struct mfs_model *m, mfs_id id, char *buf, size_t size)
{
	if (id >= m->nnodes || m->nodes[id].kind != MFS_K_LINK)
		return -EINVAL;
	if (m->nodes[id].flags & MFS_NF_TEXTLINK) {
		size_t tl = strlen(m->nodes[id].u.tlink.target);
		if (tl + 1 > size)
			return -ENAMETOOLONG;
		memcpy(buf, m->nodes[id].u.tlink.target, tl + 1);
		return (int)tl;
	}
	mfs_id from = m->nodes[id].parent, to = m->nodes[id].u.link;
	if (to >= m->nnodes)
		return -ENOENT;
	/* Climb from the link's directory to the common ancestor, then down. */
	uint32_t df = depth(m, from), dt = depth(m, to);
	mfs_id a = from, b = to;
	uint32_t ups = 0;
	while (df > dt) { a = m->nodes[a].parent; df--; ups++; }
	while (dt > df) { b = m->nodes[b].parent; dt--; }
	while (a != b) { a = m->nodes[a].parent; b = m->nodes[b].parent; ups++; }
	size_t pos = 0;
	for (uint32_t i = 0; i < ups; i++) {
		if (pos + 3 >= size)
			return -ENAMETOOLONG;
		memcpy(buf + pos, "../", 3);
		pos += 3;
	}
	char path[4096], base[4096];
	int pl = mfs_node_path(m, to, path, sizeof(path));
	int bl = mfs_node_path(m, a, base, sizeof(base));
	if (pl < 0 || bl < 0)
		return -ENAMETOOLONG;
	const char *rest = path + (bl ? bl + 1 : 0);
	if (to == a)
		rest = ".";
	size_t rl = strlen(rest);
	if (pos + rl + 1 > size)
		return -ENAMETOOLONG;
	memcpy(buf + pos, rest, rl + 1);
	if (ups && to == a)  /* "../." reads better as ".." */
		buf[pos - 1] = '\0', pos--, rl = 0;
	return (int)(pos + rl);
}

mfs_id mfs_resolve(const struct mfs_model *m, const char *path)
{
	mfs_id id = MFS_ROOT;
	char comp[260];
	while (*path) {
		const char *sl = strchr(path, '/');
		size_t n = sl ? (size_t)(sl - path) : strlen(path);
		if (n >= sizeof(comp))
			return MFS_NONE;
		if (n) {
			memcpy(comp, path, n);
			comp[n] = '\0';
			id = mfs_lookup(m, id, comp);
			if (id == MFS_NONE)
				return id;
		}
		path += n + (sl ? 1 : 0);
	}
	return id;
}
