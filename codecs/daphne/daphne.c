/* DAPHNE binary data format (.dbdf, seed 002): the codec table, the value
 * type tables, bidding, and open, which hands the file to daphne_parse.c /
 * daphne_frame.c and what they indexed to the tree (daphne_tree.c; values:
 * daphne_store.c, edits: daphne_edit.c, .meta: daphne_meta.c). */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "daphne.h"

/* DAPHNE's ValueTypeCode (unchanged since 2021). Strings are stored as the
 * writer's in-memory objects: bytes with no meaning elsewhere. */
static const struct daphne_vt daphne_vts[] = {
	[0] = {MFS_DT_I8, 1, "si8"},
	[1] = {MFS_DT_I32, 4, "si32"},
	[2] = {MFS_DT_I64, 8, "si64"},
	[3] = {MFS_DT_U8, 1, "ui8"},
	[4] = {MFS_DT_U32, 4, "ui32"},
	[5] = {MFS_DT_U64, 8, "ui64"},
	[6] = {MFS_DT_F32, 4, "f32"},
	[7] = {MFS_DT_F64, 8, "f64"},
	[8] = {MFS_DT_OPAQUE, 32, "str"},
	[9] = {MFS_DT_OPAQUE, 16, "fixedstr16"},
};

/* The draft spec's table; 0 is reserved. */
static const struct daphne_vt spec_vts[] = {
	[1] = {MFS_DT_U8, 1, "ui8"},
	[2] = {MFS_DT_U16, 2, "ui16"},
	[3] = {MFS_DT_U32, 4, "ui32"},
	[4] = {MFS_DT_U64, 8, "ui64"},
	[5] = {MFS_DT_I8, 1, "si8"},
	[6] = {MFS_DT_I16, 2, "si16"},
	[7] = {MFS_DT_I32, 4, "si32"},
	[8] = {MFS_DT_I64, 8, "si64"},
	[9] = {MFS_DT_F32, 4, "f32"},
	[10] = {MFS_DT_F64, 8, "f64"},
};

const struct daphne_vt *daphne_vt(enum daphne_dialect d, unsigned code)
{
	if (d == DAPHNE_SPEC)
		return code >= 1 && code < sizeof(spec_vts) / sizeof(spec_vts[0]) ? &spec_vts[code]
										   : NULL;
	return code < sizeof(daphne_vts) / sizeof(daphne_vts[0]) ? &daphne_vts[code] : NULL;
}

static int daphne_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	(void)size;
	/* No magic number: the extension is what says "DAPHNE". Any .dbdf
	 * bids, so that one that cannot be read is reported, not ignored; the
	 * version byte and a known data type add evidence. */
	if (!mfs_has_ext(name, ".dbdf"))
		return 0;
	int bid = 8;
	if (n >= 2 && head[0] == 1) {
		bid += 8;
		if (head[1] >= DAPHNE_DENSE && head[1] <= DAPHNE_FRAME)
			bid += 8;
	}
	return bid;
}

static int daphne_open(struct mfs_model *m, struct mfs_err *err)
{
	const uint8_t *p = m->base;
	if (m->size < DAPHNE_HEAD)
		return mfs_error(err, EINVAL, "truncated: the header needs %u bytes, the file has %llu",
				 DAPHNE_HEAD, (unsigned long long)m->size);
	if (p[0] != 1)
		return mfs_error(err, EINVAL, "version byte is %u, expected 1 (the only DAPHNE version)",
				 p[0]);
	struct daphne_file *d = mfs_model_alloc(m, sizeof(*d));
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	memset(d, 0, sizeof(*d));
	m->priv = d;
	d->dt = p[1];
	d->rows = mfs_le64(p + 2);
	d->cols = mfs_le64(p + 10);
	int r;
	if (d->dt == DAPHNE_DENSE || d->dt == DAPHNE_CSR || d->dt == DAPHNE_FRAME)
		daphne_meta_check(m, d->rows, d->cols);
	switch (d->dt) {
	case DAPHNE_DENSE:
	case DAPHNE_CSR:
		r = daphne_parse_matrix(m, d, err);
		if (r == 0)
			daphne_matrix_tree(m, d);
		return r;
	case DAPHNE_FRAME:
		r = daphne_parse_frame(m, d, err);
		if (r == 0)
			daphne_frame_tree(m, d);
		return r;
	case 4:
		return mfs_error(err, EINVAL,
				 "data type 4 (a scalar, used only in DAPHNE's distributed transfers) is not supported");
	default:
		return mfs_error(err, EINVAL, "data type byte is %u, expected 1 (dense), 2 (CSR) or 3 (frame)",
				 d->dt);
	}
}

const struct mfs_codec mfs_codec_daphne = {
	.name = "daphne",
	.title = "DAPHNE",
	.sidecar = ".meta",
	.bid = daphne_bid,
	.open = daphne_open,
	.close = NULL,
	.edit = daphne_edit,
};
