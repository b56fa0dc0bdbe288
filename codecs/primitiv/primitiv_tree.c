/* The primitiv tree: tensors (column-major float32, the batch one more
 * dimension), a Parameter's value and stats, a Model's key paths as
 * directories, an Optimizer's configs as writable text. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dirmap.h"
#include "numtext.h"
#include "primitiv.h"

/* Sub-model directories of key paths are found by (parent, raw name) in an
 * mfs_dirmap: leaf parameter directories share the namespace but are never
 * entered, so the map is kept apart while building (m->priv; freed when
 * open ends). */

/* The model's view of a stored tensor: the batch, when > 1, is one more
 * (last, slowest) dimension of a column-major float32 array. */
void primitiv_tensor_desc(const struct primitiv_tensor *pt, struct mfs_tensor *t, uint64_t dims[])
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
	primitiv_tensor_desc(pt, &t, dims);
	return mfs_add_tensor(m, parent, name, len, &t);
}

void primitiv_add_batch(struct mfs_model *m, const struct primitiv_shape *s)
{
	mfs_add_textf(m, MFS_ROOT, "batch", 0, "%u", s->batch);
}

/* Parameter: Tensor value, uint32 N, N x (str key, Tensor). */
int primitiv_read_parameter(struct mfs_model *m, struct primitiv_cur *c, mfs_id dir)
{
	struct primitiv_tensor t;
	int r = primitiv_read_tensor(c, &t);
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
		if ((r = primitiv_read_tensor(c, &t)) < 0)
			return mfs_error_prefix(c->err, "stat %u of %u '%s'", i + 1, n,
						primitiv_msg_name(c->base + off, len, nm));
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
	if ((r = primitiv_read_parameter(m, c, dir)) < 0)
		return mfs_error_prefix(c->err, "'%s'", primitiv_msg_name(c->base + off, len, nm));
	return 0;
}

/* Model: uint32 N, N x (key path, Parameter). */
int primitiv_read_model(struct mfs_model *m, struct primitiv_cur *c)
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
int primitiv_read_configs(struct mfs_model *m, struct primitiv_cur *c, bool is_float)
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
						primitiv_msg_name(c->base + off, len, nm));
		mfs_id id = mfs_add_text(m, dir, (const char *)c->base + off, (size_t)len, txt, tl,
					 MFS_NF_WRITABLE);
		mfs_set_tag(m, id, voff << 2 | (is_float ? PRIMITIV_CFG_FLOAT : PRIMITIV_CFG_UINT));
	}
	return 0;
}
