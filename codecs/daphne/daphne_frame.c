/* DAPHNE .dbdf frames: the schema and labels, then either DAPHNE's
 * row-interleaved packed records or the spec's blocks; the tree of
 * columns/<label>/, frame.csv (and blocks/ for spec frames). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "daphne.h"

/* DAPHNE: rx, cx (zeros), then rows of packed values, no block header. */
static int try_daphne(struct mfs_model *m, struct daphne_file *d, uint64_t pos, char *why, size_t wn)
{
	uint64_t rec = 0;
	for (uint64_t j = 0; j < d->cols; j++) {
		const struct daphne_vt *vt = daphne_vt(DAPHNE_DAPHNE, d->ccode[j]);
		if (!vt || vt->dtype == MFS_DT_OPAQUE) {
			snprintf(why, wn, "column %llu has value type %u, not one of its frame codes 0-7",
				 (unsigned long long)j, d->ccode[j]);
			return 0;
		}
		rec += vt->size;
	}
	uint64_t n, need = UINT64_MAX;
	if (mfs_mul_ok(rec, d->rows, &n) && !mfs_add_ok(n, pos + 16, &need))
		need = UINT64_MAX;
	if (need != m->size) {
		snprintf(why, wn, "%llu rows of %llu bytes need %llu bytes", (unsigned long long)d->rows,
			 (unsigned long long)rec, (unsigned long long)need);
		return 0;
	}
	uint64_t rx = mfs_le64(m->base + pos), cx = mfs_le64(m->base + pos + 8);
	if (rx || cx) {
		snprintf(why, wn, "values at (%llu, %llu), it writes (0, 0)", (unsigned long long)rx,
			 (unsigned long long)cx);
		return 0;
	}
	d->coloff = mfs_model_alloc(m, (size_t)(d->cols ? d->cols : 1) * sizeof(*d->coloff));
	if (!d->coloff)
		return -ENOMEM;
	uint64_t off = 0;
	for (uint64_t j = 0; j < d->cols; j++) {
		const struct daphne_vt *vt = daphne_vt(DAPHNE_DAPHNE, d->ccode[j]);
		d->cdtype[j] = vt->dtype;
		d->csize[j] = vt->size;
		d->coloff[j] = off;
		off += vt->size;
	}
	d->recs = pos + 16;
	d->recsize = rec;
	return 1;
}

/* Spec: blocks, each of the value type of every column it covers. */
static int try_spec(struct mfs_model *m, struct daphne_file *d, uint64_t pos, char *why, size_t wn,
		    struct mfs_err *err)
{
	for (uint64_t j = 0; j < d->cols; j++) {
		const struct daphne_vt *vt = daphne_vt(DAPHNE_SPEC, d->ccode[j]);
		if (!vt) {
			snprintf(why, wn, "column %llu has value type %u, not one of its codes 1-10",
				 (unsigned long long)j, d->ccode[j]);
			return 0;
		}
		d->cdtype[j] = vt->dtype;
		d->csize[j] = vt->size;
	}
	return daphne_walk_blocks(m, d, pos, why, wn, err);
}

static int check_spec_blocks(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err)
{
	int r = daphne_check_blocks(m, d, err);
	if (r < 0)
		return r;
	for (uint32_t k = 0; k < d->nblocks; k++) {
		struct daphne_block *b = &d->blocks[k];
		if (b->bt == DAPHNE_B_EMPTY) {
			/* No value type of its own: it shows zeros of its first column's. */
			b->dtype = b->cols ? d->cdtype[b->cx] : MFS_DT_U8;
			b->esize = mfs_dtype_info((enum mfs_dtype)b->dtype)->size;
			continue;
		}
		for (uint64_t j = b->cx; j < b->cx + b->cols; j++)
			if (d->cdtype[j] != b->dtype)
				return mfs_error(err, EINVAL,
						 "block %u holds %s values, but column %llu is %s", k,
						 mfs_dtype_info((enum mfs_dtype)b->dtype)->name,
						 (unsigned long long)j,
						 mfs_dtype_info((enum mfs_dtype)d->cdtype[j])->name);
	}
	return 0;
}

int daphne_parse_frame(struct mfs_model *m, struct daphne_file *d, struct mfs_err *err)
{
	uint64_t pos = DAPHNE_HEAD, C = d->cols;
	/* Each column costs at least 3 bytes (value type, label length). */
	if (C > (m->size - pos) / 3)
		return mfs_error(err, EINVAL, "a frame of %llu columns needs at least %llu bytes, %llu left",
				 (unsigned long long)C, (unsigned long long)C * 3,
				 (unsigned long long)(m->size - pos));
	if (C > UINT32_MAX)
		return mfs_error(err, EFBIG, "%llu columns: at most %u are supported",
				 (unsigned long long)C, UINT32_MAX);
	size_t n = (size_t)(C ? C : 1);
	d->ccode = mfs_model_alloc(m, n);
	d->cdtype = mfs_model_alloc(m, n);
	d->csize = mfs_model_alloc(m, n);
	d->flabels = mfs_model_alloc(m, n * sizeof(*d->flabels));
	if (!d->ccode || !d->cdtype || !d->csize || !d->flabels)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(d->ccode, m->base + pos, (size_t)C);
	pos += C;
	for (uint64_t j = 0; j < C; j++) {
		if (m->size - pos < 2)
			return mfs_error(err, EINVAL, "column %llu: label length needs 2 bytes at offset %llu, %llu left",
					 (unsigned long long)j, (unsigned long long)pos,
					 (unsigned long long)(m->size - pos));
		uint16_t len = mfs_le16(m->base + pos);
		pos += 2;
		if (m->size - pos < len)
			return mfs_error(err, EINVAL, "column %llu: a label of %u bytes at offset %llu, %llu left",
					 (unsigned long long)j, len, (unsigned long long)pos,
					 (unsigned long long)(m->size - pos));
		d->flabels[j] = (struct daphne_label){(const char *)m->base + pos, len};
		pos += len;
	}
	char w0[120], w1[120];
	d->dialect = DAPHNE_DAPHNE;
	int r = try_daphne(m, d, pos, w0, sizeof(w0));
	if (r < 0)
		return mfs_error(err, -r, "out of memory");
	if (r > 0)  /* frame.csv has a line per row, even without columns */
		return daphne_check_dense(m, d->rows, C ? C : 1, err);
	d->dialect = DAPHNE_SPEC;
	r = try_spec(m, d, pos, w1, sizeof(w1), err);
	if (r < 0)
		return r;
	if (r == 0)
		return mfs_error(err, EINVAL, "the file has %llu bytes and fits no dialect: DAPHNE: %s; spec: %s",
				 (unsigned long long)m->size, w0, w1);
	r = daphne_check_dense(m, d->rows, C ? C : 1, err);
	return r < 0 ? r : check_spec_blocks(m, d, err);
}

void daphne_frame_tree(struct mfs_model *m, struct daphne_file *d)
{
	daphne_header_tree(m, d);
	uint64_t C = d->cols;
	size_t n = (size_t)(C ? C : 1);
	uint32_t *idx = mfs_model_alloc(m, n * sizeof(*idx));
	const char **lab = mfs_model_alloc(m, n * sizeof(*lab));
	if (!idx || !lab)
		return;
	/* Labels: the .meta schema's; else the spec's own labels; never the
	 * bytes DAPHNE writes there (the head of a C++ string object). */
	struct daphne_label *meta = daphne_meta_labels(m, C);
	mfs_id cols = mfs_add_dir(m, MFS_ROOT, "columns", 7);
	uint64_t dims[1] = {d->rows};
	for (uint64_t j = 0; j < C; j++) {
		char def[32];
		struct daphne_label l;
		if (meta && meta[j].s) {
			l = meta[j];
		} else if (d->dialect == DAPHNE_SPEC) {
			l = d->flabels[j];
		} else {
			int k = snprintf(def, sizeof(def), "col_%llu", (unsigned long long)j);
			l = (struct daphne_label){def, (size_t)k};
		}
		struct mfs_tensor t = {
			.dtype = d->cdtype[j],
			.ndim = 1,
			.dims = dims,
			.ops = &daphne_ops,
			.flags = MFS_TF_WRITABLE,
			.tag = DAPHNE_TAG(DAPHNE_T_COLUMN, j),
		};
		mfs_id dir = mfs_add_tensor(m, cols, l.s, l.len, &t);
		lab[j] = mfs_model_strdup(m, l.s, l.len);
		if (dir == MFS_NONE || !lab[j])
			return;
		idx[j] = m->nodes[dir].u.tensor;
	}
	mfs_add_frame_csv(m, MFS_ROOT, d->rows, (uint32_t)C, idx, lab);
	if (d->dialect == DAPHNE_SPEC)
		daphne_blocks_tree(m, d, MFS_ROOT);
}
