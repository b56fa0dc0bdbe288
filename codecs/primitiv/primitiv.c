/* primitiv file format v0.1 (MessagePack, seed 000): the codec table, the
 * bid (the exact 15-byte header) and open, which reads the one object of the
 * file's data type (Shape, Tensor, Parameter, Model, Optimizer) through
 * primitiv_parse.c and primitiv_tree.c; edits are primitiv_edit.c's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "dirmap.h"
#include "primitiv.h"

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
		if ((r = primitiv_read_shape(&c, &s)) < 0)
			break;
		for (uint32_t i = 0; i < s.ndims; i++)
			tl += (size_t)snprintf(txt + tl, sizeof(txt) - tl, i ? " %u" : "%u",
					       s.dims[i]);
		mfs_add_text(m, MFS_ROOT, "shape", 5, txt, tl, 0);
		primitiv_add_batch(m, &s);
		break;
	}
	case PRIMITIV_TENSOR: {
		struct primitiv_tensor pt;
		uint64_t dims[PRIMITIV_MAX_DIMS + 1];
		struct mfs_tensor t;
		if ((r = primitiv_read_tensor(&c, &pt)) < 0)
			break;
		primitiv_tensor_desc(&pt, &t, dims);
		mfs_attach_tensor(m, MFS_ROOT, &t);
		primitiv_add_batch(m, &pt.s);
		break;
	}
	case PRIMITIV_PARAMETER:
		r = primitiv_read_parameter(m, &c, MFS_ROOT);
		break;
	case PRIMITIV_MODEL:
		r = primitiv_read_model(m, &c);
		break;
	default:
		r = primitiv_read_configs(m, &c, false);
		if (r == 0)
			r = primitiv_read_configs(m, &c, true);
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

const struct mfs_codec mfs_codec_primitiv = {
	.name = "primitiv",
	.title = "primitiv",
	.sidecar = NULL,
	.bid = primitiv_bid,
	.open = primitiv_open,
	.close = primitiv_close,
	.edit = primitiv_edit,
	.gathered_runs = true,  /* same-shape edits go to mfs_patch_raw_runs */
	.name_class = mfs_name_class_none,
};
