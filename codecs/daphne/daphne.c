/* DAPHNE binary data format (.dbdf, seed 002): the codec table, bidding, and
 * the tree of docs/layout.md "DAPHNE" over what daphne_parse.c / daphne_frame.c
 * indexed (values: daphne_store.c, edits: daphne_edit.c, .meta: daphne_meta.c). */
#include <errno.h>
#include <stdio.h>
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

static const char *const dialect_names[] = {
	[DAPHNE_DAPHNE] = "daphne",
	[DAPHNE_DAPHNE01] = "daphne-0.1",
	[DAPHNE_SPEC] = "spec",
};

static const char *const dt_names[] = {
	[DAPHNE_DENSE] = "dense",
	[DAPHNE_CSR] = "csr",
	[DAPHNE_FRAME] = "frame",
};

static const char *const bt_names[] = {
	[DAPHNE_B_EMPTY] = "empty",
	[DAPHNE_B_DENSE] = "dense",
	[DAPHNE_B_CSR] = "csr",
	[DAPHNE_B_COO] = "coo",
};

void daphne_header_tree(struct mfs_model *m, const struct daphne_file *d)
{
	mfs_id h = mfs_add_dir(m, MFS_ROOT, "header", 6);
	mfs_add_textf(m, h, "version", 0, "%u", m->base[0]);
	mfs_add_textf(m, h, "type", 0, "%s", dt_names[d->dt]);
	mfs_add_textf(m, h, "rows", 0, "%llu", (unsigned long long)d->rows);
	mfs_add_textf(m, h, "cols", 0, "%llu", (unsigned long long)d->cols);
	mfs_add_textf(m, MFS_ROOT, "dialect", 0, "%s", dialect_names[d->dialect]);
}

/* The tensor of a block: raw when dense, sparse entries when CSR or COO,
 * zeros when empty (read-only: nothing of it is stored). A sparse or empty
 * block too large to show densely shows its entries only (matrix.mtx; none
 * for an empty block). */
static void block_tensor(struct mfs_model *m, const struct daphne_file *d, uint32_t k, mfs_id dir)
{
	const struct daphne_block *b = &d->blocks[k];
	uint64_t dims[2] = {b->rows, b->cols};
	struct mfs_tensor t = {
		.dtype = b->dtype,
		.ndim = 2,
		.dims = dims,
		.esize = b->esize,
		.tag = DAPHNE_TAG(DAPHNE_T_BLOCK, k),
	};
	bool opaque = b->dtype == MFS_DT_OPAQUE;
	if (opaque)
		t.tname = daphne_vt(d->dialect, b->vt)->name;
	switch (b->bt) {
	case DAPHNE_B_DENSE:
		t.off = b->data;
		t.flags = opaque ? 0 : MFS_TF_WRITABLE;
		break;
	case DAPHNE_B_CSR:
	case DAPHNE_B_COO:
		t.ops = &daphne_ops;
		t.nnz = b->nnz;
		t.flags = MFS_TF_WRITABLE | MFS_TF_SPARSE | MFS_TF_NODATA;
		break;
	default:
		t.ops = &daphne_ops;
		t.flags = MFS_TF_NODATA;
	}
	if (t.ops && !daphne_dense_fits(m, b->rows, b->cols))
		t.flags |= MFS_TF_SPARSE | MFS_TF_NODENSE;
	mfs_attach_tensor(m, dir, &t);
}

void daphne_blocks_tree(struct mfs_model *m, struct daphne_file *d, mfs_id parent)
{
	mfs_id blocks = mfs_add_dir(m, parent, "blocks", 6);
	for (uint32_t k = 0; k < d->nblocks; k++) {
		const struct daphne_block *b = &d->blocks[k];
		char name[16];
		int n = snprintf(name, sizeof(name), "%u", k);
		mfs_id dir = mfs_add_dir(m, blocks, name, (size_t)n);
		mfs_add_textf(m, dir, "row", 0, "%llu", (unsigned long long)b->rx);
		mfs_add_textf(m, dir, "col", 0, "%llu", (unsigned long long)b->cx);
		mfs_add_textf(m, dir, "type", 0, "%s", bt_names[b->bt]);
		if (dir != MFS_NONE)
			block_tensor(m, d, k, dir);
	}
}

/* The model directory is the whole matrix: raw when one dense block of the
 * matrix's type covers it; else read through the blocks, and for CSR
 * matrices the stored values of every block are its sparse entries (its
 * only view when it is too large to show densely). */
static void matrix_tree(struct mfs_model *m, struct daphne_file *d)
{
	uint64_t dims[2] = {d->rows, d->cols};
	struct mfs_tensor t = {
		.dtype = d->dtype,
		.ndim = 2,
		.dims = dims,
		.esize = d->esize,
		.tag = DAPHNE_TAG(DAPHNE_T_ROOT, 0),
	};
	if (d->raw) {
		t.off = d->blocks[0].data;
		if (d->dtype == MFS_DT_OPAQUE)
			t.tname = daphne_vt(d->dialect, d->vt)->name;
		else
			t.flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE;
	} else {
		t.ops = &daphne_ops;
		t.flags = MFS_TF_WRITABLE | MFS_TF_NODATA;
		if (d->dt == DAPHNE_CSR) {
			t.flags |= MFS_TF_SPARSE;
			t.nnz = d->nzpre[d->nblocks];
		}
		if (d->nodense)
			t.flags |= MFS_TF_NODENSE;
	}
	mfs_attach_tensor(m, MFS_ROOT, &t);
	daphne_header_tree(m, d);
	daphne_blocks_tree(m, d, MFS_ROOT);
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
			matrix_tree(m, d);
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
