/* primitiv file format v0.1 (MessagePack, seed 000): indexing the five data
 * types (Shape, Tensor, Parameter, Model, Optimizer) into a tree, and patches
 * for edited tensors (values, or a new shape) and optimizer configs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "bytes.h"
#include "codec.h"
#include "dirmap.h"
#include "numtext.h"
#include "primitiv_wire.h"

#define PRIMITIV_HEAD_LEN 15
#define PRIMITIV_MAX_DIMS 8           /* primitiv's Shape::MAX_DEPTH */
/* Each level of a key path costs at least 2 bytes of a path name ("x/"), so
 * deeper trees could not be reached through a PATH_MAX path anyway; real
 * models nest a handful of levels. */
#define PRIMITIV_KEY_DEPTH_MAX 1024

enum primitiv_data_type {
	PRIMITIV_SHAPE = 0x000,
	PRIMITIV_TENSOR = 0x100,
	PRIMITIV_PARAMETER = 0x200,
	PRIMITIV_MODEL = 0x300,
	PRIMITIV_OPTIMIZER = 0x400,
};

/* Node tags of optimizer configs: source offset of the value << 2 | kind. */
enum { PRIMITIV_CFG_UINT = 1, PRIMITIV_CFG_FLOAT = 2 };

/* A Shape as stored: dims (trailing 1s stripped by primitiv) and batch. */
struct primitiv_shape {
	uint64_t off;           /* source offset of the dims array */
	uint32_t ndims, batch;
	uint32_t dims[PRIMITIV_MAX_DIMS];
};

/* A Tensor as stored: its Shape, then a bin of float32 little-endian. */
struct primitiv_tensor {
	struct primitiv_shape s;
	uint64_t data, len;     /* the bin payload */
};

/* Sub-model directories of key paths are found by (parent, raw name) in an
 * mfs_dirmap: leaf parameter directories share the namespace but are never
 * entered, so the map is kept apart while building (m->priv; freed when
 * open ends). */

static const char *type_name(uint32_t t)
{
	switch (t) {
	case PRIMITIV_SHAPE: return "shape";
	case PRIMITIV_TENSOR: return "tensor";
	case PRIMITIV_PARAMETER: return "parameter";
	case PRIMITIV_MODEL: return "model";
	default: return "optimizer";
	}
}

/* The 15-byte header ce 00000000 ce 00000001 ce <data_type>, exactly as
 * primitiv writes it; *type gets the data type. */
static bool head_ok(const uint8_t *h, size_t n, uint32_t *type)
{
	static const uint8_t v01[11] = {0xce, 0, 0, 0, 0, 0xce, 0, 0, 0, 1, 0xce};
	if (n < PRIMITIV_HEAD_LEN || memcmp(h, v01, sizeof(v01)) != 0)
		return false;
	uint32_t t = mfs_be32(h + 11);
	if ((t & 0xff) || t > PRIMITIV_OPTIMIZER)
		return false;
	*type = t;
	return true;
}

static int primitiv_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	uint32_t t;
	(void)size;
	(void)name;
	/* 15 bytes verified, of which the data type is one of five values. */
	return head_ok(head, n, &t) ? 112 : 0;
}

/* A name from the file made fit for a one-line message: at most 40 bytes,
 * control characters as '?'. */
static const char *msg_name(const uint8_t *p, uint64_t len, char out[48])
{
	size_t n = len > 40 ? 40 : (size_t)len;
	for (size_t i = 0; i < n; i++)
		out[i] = (p[i] < 0x20 || p[i] == 0x7f) ? '?' : (char)p[i];
	if (len > n) {
		memcpy(out + n, "...", 3);
		n += 3;
	}
	out[n] = '\0';
	return out;
}

/* ---- reading ------------------------------------------------------------- */

static int read_shape(struct primitiv_cur *c, struct primitiv_shape *s)
{
	uint64_t n = 0;
	s->off = c->pos;
	int r = primitiv_array(c, "shape dims", &n);
	if (r < 0)
		return r;
	if (n > PRIMITIV_MAX_DIMS)
		return mfs_error(c->err, EINVAL, "shape at byte %llu: %llu dims, primitiv allows "
				 "at most %d", (unsigned long long)s->off, (unsigned long long)n,
				 PRIMITIV_MAX_DIMS);
	s->ndims = (uint32_t)n;
	for (uint32_t i = 0; i < s->ndims; i++) {
		if ((r = primitiv_uint32(c, "shape dim", &s->dims[i])) < 0)
			return r;
		if (s->dims[i] == 0)
			return mfs_error(c->err, EINVAL, "shape at byte %llu: dimension %u is 0 "
					 "(primitiv shapes are never empty)",
					 (unsigned long long)s->off, i);
	}
	if ((r = primitiv_uint32(c, "shape batch", &s->batch)) < 0)
		return r;
	if (s->batch == 0)
		return mfs_error(c->err, EINVAL, "shape at byte %llu: batch is 0",
				 (unsigned long long)s->off);
	return 0;
}

/* Elements of a stored shape (dims times batch); false on overflow. */
static bool shape_nelem(const struct primitiv_shape *s, uint64_t *n)
{
	uint64_t v = s->batch;
	for (uint32_t i = 0; i < s->ndims; i++)
		if (!mfs_mul_ok(v, s->dims[i], &v))
			return false;
	*n = v;
	return true;
}

static int read_tensor(struct primitiv_cur *c, struct primitiv_tensor *t)
{
	int r = read_shape(c, &t->s);
	if (r < 0)
		return r;
	uint64_t at = c->pos, n, bytes;
	if ((r = primitiv_bin(c, "tensor data", &t->data, &t->len)) < 0)
		return r;
	if (!shape_nelem(&t->s, &n) || !mfs_mul_ok(n, 4, &bytes))
		return mfs_error(c->err, EINVAL, "tensor data at byte %llu: %llu bytes, but its "
				 "shape (%u dims, batch %u) overflows: more than 2^64 bytes of "
				 "4-byte elements", (unsigned long long)at,
				 (unsigned long long)t->len, t->s.ndims, t->s.batch);
	if (bytes != t->len)
		return mfs_error(c->err, EINVAL, "tensor data at byte %llu: %llu bytes, but its "
				 "shape (%u dims, batch %u) needs %llu elements of 4 bytes",
				 (unsigned long long)at, (unsigned long long)t->len, t->s.ndims,
				 t->s.batch, (unsigned long long)n);
	return 0;
}

/* The model's view of a stored tensor: the batch, when > 1, is one more
 * (last, slowest) dimension of a column-major float32 array. */
static void tensor_desc(const struct primitiv_tensor *pt, struct mfs_tensor *t, uint64_t dims[])
{
	uint32_t nd = pt->s.ndims;
	for (uint32_t i = 0; i < nd; i++)
		dims[i] = pt->s.dims[i];
	if (pt->s.batch > 1)
		dims[nd++] = pt->s.batch;
	memset(t, 0, sizeof(*t));
	t->dtype = MFS_DT_F32;
	t->order = MFS_COL_MAJOR;
	t->flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE;
	t->ndim = nd;
	t->dims = dims;
	t->off = pt->data;
	t->tag = pt->s.off;   /* edit() re-reads the Shape and bin header from here */
}

static mfs_id add_tensor(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
			 const struct primitiv_tensor *pt)
{
	uint64_t dims[PRIMITIV_MAX_DIMS + 1];
	struct mfs_tensor t;
	tensor_desc(pt, &t, dims);
	return mfs_add_tensor(m, parent, name, len, &t);
}

static void add_batch(struct mfs_model *m, const struct primitiv_shape *s)
{
	mfs_add_textf(m, MFS_ROOT, "batch", 0, "%u", s->batch);
}

/* Parameter: Tensor value, uint32 N, N x (str key, Tensor). */
static int read_parameter(struct mfs_model *m, struct primitiv_cur *c, mfs_id dir)
{
	struct primitiv_tensor t;
	int r = read_tensor(c, &t);
	if (r < 0)
		return mfs_error_prefix(c->err, "value");
	add_tensor(m, dir, "value", 5, &t);
	uint32_t n = 0;
	if ((r = primitiv_uint32(c, "stats count", &n)) < 0)
		return r;
	mfs_id stats = mfs_add_dir(m, dir, "stats", 5);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t off = 0, len = 0;
		char nm[48];
		if ((r = primitiv_str(c, "stat key", &off, &len)) < 0)
			return mfs_error_prefix(c->err, "stat %u of %u", i + 1, n);
		if ((r = read_tensor(c, &t)) < 0)
			return mfs_error_prefix(c->err, "stat %u of %u '%s'", i + 1, n,
						msg_name(c->base + off, len, nm));
		add_tensor(m, stats, (const char *)c->base + off, (size_t)len, &t);
	}
	return 0;
}

/* The sub-model directory named by source bytes [off, off + len) under
 * *dir, created on first use, replaces *dir. Only this table's memory can
 * fail here: a failed mfs_add_dir is remembered by the core, which then
 * fails the open. */
static int subdir(struct mfs_model *m, struct mfs_dirmap *d, mfs_id *dir, uint64_t off,
		  uint64_t len)
{
	mfs_id parent = *dir;
	if (parent == MFS_NONE)
		return 0;
	const uint8_t *name = m->base + off;
	*dir = mfs_dirmap_get(d, parent, 0, name, (size_t)len);
	if (*dir != MFS_NONE)
		return 0;
	*dir = mfs_add_dir(m, parent, (const char *)name, (size_t)len);
	return *dir == MFS_NONE ? 0 : mfs_dirmap_put(d, parent, 0, name, (size_t)len, *dir);
}

/* One Model entry: array<str> key path, then a Parameter. */
static int read_model_param(struct mfs_model *m, struct primitiv_cur *c, struct mfs_dirmap *d,
			    mfs_id params)
{
	uint64_t k = 0, at = c->pos;
	int r = primitiv_array(c, "key path", &k);
	if (r < 0)
		return r;
	if (k == 0)
		return mfs_error(c->err, EINVAL, "key path at byte %llu is empty",
				 (unsigned long long)at);
	if (k > PRIMITIV_KEY_DEPTH_MAX)
		return mfs_error(c->err, EINVAL, "key path at byte %llu has %llu components, "
				 "more than %d", (unsigned long long)at, (unsigned long long)k,
				 PRIMITIV_KEY_DEPTH_MAX);
	mfs_id parent = params;
	uint64_t off = 0, len = 0;
	for (uint64_t i = 0; i < k; i++) {
		if ((r = primitiv_str(c, "key path component", &off, &len)) < 0)
			return r;
		if (i + 1 < k && subdir(m, d, &parent, off, len) < 0)
			return mfs_error(c->err, ENOMEM, "out of memory");
	}
	mfs_id dir = mfs_add_dir(m, parent, (const char *)c->base + off, (size_t)len);
	char nm[48];
	if ((r = read_parameter(m, c, dir)) < 0)
		return mfs_error_prefix(c->err, "'%s'", msg_name(c->base + off, len, nm));
	return 0;
}

/* Model: uint32 N, N x (key path, Parameter). */
static int read_model(struct mfs_model *m, struct primitiv_cur *c)
{
	uint32_t n = 0;
	int r = primitiv_uint32(c, "parameter count", &n);
	if (r < 0)
		return r;
	mfs_id params = mfs_add_dir(m, MFS_ROOT, "params", 6);
	struct mfs_dirmap *d = calloc(1, sizeof(*d));
	if (!d)
		return mfs_error(c->err, ENOMEM, "out of memory");
	m->priv = d;   /* freed by primitiv_close if a fault ends the open early */
	for (uint32_t i = 0; i < n && r == 0; i++)
		if ((r = read_model_param(m, c, d, params)) < 0)
			mfs_error_prefix(c->err, "parameter %u of %u", i + 1, n);
	mfs_dirmap_free(d);
	free(d);
	m->priv = NULL;
	return r;
}

/* Optimizer: map<str, uint32> uint_configs, map<str, float> float_configs;
 * kept in the order found (primitiv writes them in hash order). */
static int read_configs(struct mfs_model *m, struct primitiv_cur *c, bool is_float)
{
	const char *what = is_float ? "float_configs" : "uint_configs";
	uint64_t n = 0;
	int r = primitiv_map(c, what, &n);
	if (r < 0)
		return r;
	mfs_id dir = mfs_add_dir(m, MFS_ROOT, what, strlen(what));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = 0, len = 0;
		char txt[MFS_NUM_MAX], nm[48];
		size_t tl;
		if ((r = primitiv_str(c, "config key", &off, &len)) < 0)
			return mfs_error_prefix(c->err, "%s entry %llu", what,
						(unsigned long long)i + 1);
		uint64_t voff = c->pos;
		if (is_float) {
			float v;
			r = primitiv_f32(c, "config value", &v);
			tl = r < 0 ? 0 : mfs_fmt_f32(txt, v);
		} else {
			uint32_t v = 0;
			r = primitiv_uint32(c, "config value", &v);
			tl = r < 0 ? 0 : mfs_fmt_u64(txt, v);
		}
		if (r < 0)
			return mfs_error_prefix(c->err, "%s '%s'", what,
						msg_name(c->base + off, len, nm));
		mfs_id id = mfs_add_text(m, dir, (const char *)c->base + off, (size_t)len, txt, tl,
					 MFS_NF_WRITABLE);
		mfs_set_tag(m, id, voff << 2 | (is_float ? PRIMITIV_CFG_FLOAT : PRIMITIV_CFG_UINT));
	}
	return 0;
}

static int primitiv_open(struct mfs_model *m, struct mfs_err *err)
{
	uint32_t type;
	if (!head_ok(m->base, (size_t)(m->size < PRIMITIV_HEAD_LEN ? m->size : PRIMITIV_HEAD_LEN), &type))
		return mfs_error(err, ENOTSUP, "not a primitiv v0.1 file (bad 15-byte header)");
	struct primitiv_cur c = {m->base, PRIMITIV_HEAD_LEN, m->size, err};
	mfs_add_textf(m, MFS_ROOT, "version", 0, "0.1");
	mfs_add_textf(m, MFS_ROOT, "type", 0, "%s", type_name(type));
	int r = 0;
	switch (type) {
	case PRIMITIV_SHAPE: {
		struct primitiv_shape s;
		char txt[PRIMITIV_MAX_DIMS * 11 + 1];
		size_t tl = 0;
		if ((r = read_shape(&c, &s)) < 0)
			break;
		for (uint32_t i = 0; i < s.ndims; i++)
			tl += (size_t)snprintf(txt + tl, sizeof(txt) - tl, i ? " %u" : "%u",
					       s.dims[i]);
		mfs_add_text(m, MFS_ROOT, "shape", 5, txt, tl, 0);
		add_batch(m, &s);
		break;
	}
	case PRIMITIV_TENSOR: {
		struct primitiv_tensor pt;
		uint64_t dims[PRIMITIV_MAX_DIMS + 1];
		struct mfs_tensor t;
		if ((r = read_tensor(&c, &pt)) < 0)
			break;
		tensor_desc(&pt, &t, dims);
		mfs_attach_tensor(m, MFS_ROOT, &t);
		add_batch(m, &pt.s);
		break;
	}
	case PRIMITIV_PARAMETER:
		r = read_parameter(m, &c, MFS_ROOT);
		break;
	case PRIMITIV_MODEL:
		r = read_model(m, &c);
		break;
	default:
		r = read_configs(m, &c, false);
		if (r == 0)
			r = read_configs(m, &c, true);
	}
	if (r < 0)
		return r;
	if (c.pos != c.end)
		return mfs_error(err, EINVAL, "%llu unexpected bytes after the %s at byte %llu",
				 (unsigned long long)(c.end - c.pos), type_name(type),
				 (unsigned long long)c.pos);
	return 0;
}

static void primitiv_close(struct mfs_model *m)
{
	struct mfs_dirmap *d = m->priv;
	if (d) {
		mfs_dirmap_free(d);
		free(d);
		m->priv = NULL;
	}
}

/* ---- editing ------------------------------------------------------------- */

/* Pack with msgpack-c into an sbuffer; 0 or -ENOMEM. */
struct primitiv_pack {
	msgpack_sbuffer sb;
	msgpack_packer pk;
};

static void pack_init(struct primitiv_pack *p)
{
	msgpack_sbuffer_init(&p->sb);
	msgpack_packer_init(&p->pk, &p->sb, msgpack_sbuffer_write);
}

static bool blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n';
}

/* Trim the blanks a shell or editor may leave around a value. */
static void trim(const char **s, size_t *n)
{
	while (*n && blank((*s)[0]))
		(*s)++, (*n)--;
	while (*n && blank((*s)[*n - 1]))
		(*n)--;
}

/* A new value for an optimizer config: only its 4 value bytes change when
 * it is stored as primitiv stores it (ce / ca + 4 bytes big-endian). */
static int edit_config(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		       struct mfs_err *err)
{
	if (e->node >= m->nnodes)
		return mfs_error(err, EINVAL, "internal error: no node %u", e->node);
	uint64_t tag = m->nodes[e->node].tag;
	unsigned kind = (unsigned)(tag & 3);
	uint64_t off = tag >> 2;
	if (m->nodes[e->node].view != MFS_V_TEXT || (kind != PRIMITIV_CFG_UINT && kind != PRIMITIV_CFG_FLOAT))
		return mfs_error(err, EACCES, "%s is read-only", m->nodes[e->node].name);
	const char *s = e->text;
	size_t n = e->len;
	trim(&s, &n);
	struct primitiv_cur c = {m->base, off, m->size, err};
	struct primitiv_pack pp;
	char q[MFS_QUOTE_MAX];
	int r;
	if (kind == PRIMITIV_CFG_UINT) {
		uint64_t v;
		uint32_t old;
		r = mfs_parse_u64(s, n, UINT32_MAX, &v);
		if (r == -ERANGE)
			return mfs_error(err, ERANGE, "%s is out of range for this uint32 setting, "
					 "which holds 0 to 4294967295", mfs_quote(q, s, n));
		if (r < 0)
			return mfs_error(err, EINVAL, "%s is not a number, expected an unsigned "
					 "integer (0 to 4294967295)", mfs_quote(q, s, n));
		if ((r = primitiv_uint32(&c, "config value", &old)) < 0)
			return r;
		pack_init(&pp);
		r = msgpack_pack_fix_uint32(&pp.pk, (uint32_t)v);
	} else {
		float v, old;
		r = mfs_parse_f32(s, n, &v);
		if (r == -ERANGE)
			return mfs_error(err, ERANGE, "%s is out of range for this float32 setting, "
					 "which holds -3.4028235e+38 to 3.4028235e+38", mfs_quote(q, s, n));
		if (r < 0)
			return mfs_error(err, EINVAL, "%s is not a number, expected a float32 number",
					 mfs_quote(q, s, n));
		if ((r = primitiv_f32(&c, "config value", &old)) < 0)
			return r;
		pack_init(&pp);
		r = msgpack_pack_float(&pp.pk, v);
	}
	if (r == 0) {
		/* Keep the type byte when it is already the 5-byte form; a shorter
		 * integer form (not primitiv's) becomes the form primitiv reads. */
		const uint8_t *enc = (const uint8_t *)pp.sb.data;
		if (m->base[off] == enc[0])
			r = mfs_patch_put(p, off + 1, 4, enc + 1, 4);
		else
			r = mfs_patch_put(p, off, c.pos - off, enc, pp.sb.size);
	}
	msgpack_sbuffer_destroy(&pp.sb);
	return r < 0 ? mfs_error(err, ENOMEM, "out of memory") : 0;
}

/* The Shape a reshaped tensor is stored with: the same as before when the
 * shape shown does not change, else the new dims as primitiv's Shape keeps
 * them (trailing 1s dropped, batch 1). */
static int new_shape(const struct mfs_tensor *t, const struct mfs_edit *e,
		     struct primitiv_shape *s, struct mfs_err *err)
{
	bool same = e->ndim == t->ndim;
	for (uint32_t i = 0; same && i < e->ndim; i++)
		same = e->dims[i] == t->dims[i];
	if (same)
		return 0;
	uint32_t nd = e->ndim;
	for (uint32_t i = 0; i < nd; i++) {
		char sh[MFS_SHAPE_TEXT];
		if (e->dims[i] == 0)
			return mfs_error(err, EINVAL, "the array has shape %s, but primitiv shapes have "
					 "no 0 dimension", mfs_shape_text(sh, e->ndim, e->dims));
		if (e->dims[i] > UINT32_MAX)
			return mfs_error(err, EINVAL, "dimension %u (%llu) does not fit in 32 bits",
					 i, (unsigned long long)e->dims[i]);
	}
	while (nd && e->dims[nd - 1] == 1)
		nd--;
	char sh[MFS_SHAPE_TEXT];
	if (nd > PRIMITIV_MAX_DIMS)
		return mfs_error(err, EINVAL, "the array has shape %s: %u dimensions (after "
				 "dropping trailing 1s), primitiv shapes have at most %d",
				 mfs_shape_text(sh, e->ndim, e->dims), nd, PRIMITIV_MAX_DIMS);
	s->ndims = nd;
	for (uint32_t i = 0; i < nd; i++)
		s->dims[i] = (uint32_t)e->dims[i];
	s->batch = 1;
	return 0;
}

/* A new shape: Shape, bin header and payload are re-encoded as one span
 * over the old ones. The runs cover every element, in storage order. */
static int edit_reshape(struct mfs_model *m, const struct mfs_tensor *t,
			const struct mfs_edit *e, struct mfs_patch *p, struct mfs_err *err)
{
	if (e->dtype != MFS_DT_F32)
		return mfs_error(err, EINVAL, "the array is %s, expected float32 (primitiv tensors "
				 "are float32 only)", mfs_dtype_info(e->dtype)->name);
	struct primitiv_cur c = {m->base, t->tag, m->size, err};
	struct primitiv_tensor old;
	int r = read_tensor(&c, &old);
	if (r < 0)
		return r;
	struct primitiv_shape s = old.s;
	char sh[MFS_SHAPE_TEXT];
	if ((r = new_shape(t, e, &s, err)) < 0)
		return r;
	uint64_t n, bytes;
	if (!shape_nelem(&s, &n) || !mfs_mul_ok(n, 4, &bytes) || bytes > UINT32_MAX)
		return mfs_error(err, EINVAL, "the new shape %s holds more than the 4294967295 "
				 "bytes of a msgpack bin", mfs_shape_text(sh, e->ndim, e->dims));
	struct primitiv_pack pp;
	pack_init(&pp);
	r = msgpack_pack_array(&pp.pk, s.ndims);
	for (uint32_t i = 0; i < s.ndims && r == 0; i++)
		r = msgpack_pack_fix_uint32(&pp.pk, s.dims[i]);
	if (r == 0)
		r = msgpack_pack_fix_uint32(&pp.pk, s.batch);
	if (r == 0)
		r = msgpack_pack_bin(&pp.pk, (size_t)bytes);
	uint8_t *out = r == 0 ? mfs_patch_alloc(p, old.s.off, old.data + old.len - old.s.off,
						pp.sb.size + bytes) : NULL;
	if (out)
		memcpy(out, pp.sb.data, pp.sb.size);
	size_t hl = pp.sb.size;
	msgpack_sbuffer_destroy(&pp.sb);
	if (!out)
		return mfs_error(err, ENOMEM, "out of memory");
	uint64_t covered = 0, next = 0;
	for (size_t i = 0; i < e->nruns; i++) {
		const struct mfs_run *run = &e->runs[i];
		if (run->first < next || run->first > n || run->count > n - run->first)
			return mfs_error(err, EINVAL, "internal error: runs overlap or go beyond "
					 "the new shape");
		next = run->first + run->count;
		memcpy(out + hl + run->first * 4, run->bytes, (size_t)run->count * 4);
		covered += run->count;
	}
	if (covered != n)
		return mfs_error(err, EINVAL, "internal error: a reshape gave %llu of %llu values",
				 (unsigned long long)covered, (unsigned long long)n);
	return 0;
}

static int primitiv_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		   struct mfs_err *err)
{
	if (e->kind == MFS_E_TEXT)
		return edit_config(m, e, p, err);
	if (e->kind != MFS_E_TENSOR)
		return mfs_error(err, EINVAL, "primitiv tensors are dense: no stored entries");
	if (e->tensor >= m->ntensors)
		return mfs_error(err, EINVAL, "internal error: no tensor %u", e->tensor);
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (!e->reshape)
		return mfs_patch_raw_runs(p, t, e, err);
	return edit_reshape(m, t, e, p, err);
}

const struct mfs_codec mfs_codec_primitiv = {
	.name = "primitiv",
	.title = "primitiv",
	.sidecar = NULL,
	.bid = primitiv_bid,
	.open = primitiv_open,
	.close = primitiv_close,
	.edit = primitiv_edit,
	.gathered_runs = true,  /* same-shape edits go to mfs_patch_raw_runs */
};
