/* primitiv edits as patches: values in place (the core's runs), a tensor
 * written again with a new shape (its Shape and bin header re-packed with
 * msgpack-c), and optimizer configs. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "bytes.h"
#include "numtext.h"
#include "primitiv.h"

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
	int r = primitiv_read_tensor(&c, &old);
	if (r < 0)
		return r;
	struct primitiv_shape s = old.s;
	char sh[MFS_SHAPE_TEXT];
	if ((r = new_shape(t, e, &s, err)) < 0)
		return r;
	uint64_t n, bytes;
	if (!primitiv_shape_nelem(&s, &n) || !mfs_mul_ok(n, 4, &bytes) || bytes > UINT32_MAX)
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

int primitiv_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
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
