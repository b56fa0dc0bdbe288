/* The DAPHNE tree of docs/layout.md "DAPHNE" over what daphne_parse.c
 * indexed: the whole matrix as the model directory's tensor, header/, and
 * blocks/<k>/ with each block's tensor views (frames: daphne_frame.c). */
#include <stdio.h>

#include "daphne.h"

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
void daphne_matrix_tree(struct mfs_model *m, struct daphne_file *d)
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
