/* Helpers shared by the DAPHNE tests (see test_daphne.h). */
#include "test_daphne.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

void db_bytes(struct db *d, const void *p, size_t n)
{
	tappend(&d->b, &d->n, &d->cap, p, n);
}

void db_u8(struct db *d, uint8_t v) { db_bytes(d, &v, 1); }
void db_u16(struct db *d, uint16_t v) { db_bytes(d, &v, 2); }
void db_u32(struct db *d, uint32_t v) { db_bytes(d, &v, 4); }
void db_u64(struct db *d, uint64_t v) { db_bytes(d, &v, 8); }

void db_header(struct db *d, uint8_t dt, uint64_t rows, uint64_t cols)
{
	db_u8(d, 1);
	db_u8(d, dt);
	db_u64(d, rows);
	db_u64(d, cols);
}

void db_block(struct db *d, uint64_t rx, uint64_t cx, uint32_t rows, uint32_t cols, uint8_t bt)
{
	db_u64(d, rx);
	db_u64(d, cx);
	db_u32(d, rows);
	db_u32(d, cols);
	db_u8(d, bt);
}

size_t db_spec_size(uint8_t vt)
{
	static const size_t sz[] = {0, 1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
	return vt < 11 ? sz[vt] : 0;
}

void db_spec_value(struct db *d, uint8_t vt, double v)
{
	switch (vt) {
	case 1: db_u8(d, (uint8_t)v); break;
	case 2: db_u16(d, (uint16_t)v); break;
	case 3: db_u32(d, (uint32_t)v); break;
	case 4: db_u64(d, (uint64_t)v); break;
	case 5: { int8_t x = (int8_t)v; db_bytes(d, &x, 1); break; }
	case 6: { int16_t x = (int16_t)v; db_bytes(d, &x, 2); break; }
	case 7: { int32_t x = (int32_t)v; db_bytes(d, &x, 4); break; }
	case 8: { int64_t x = (int64_t)v; db_bytes(d, &x, 8); break; }
	case 9: { float x = (float)v; db_bytes(d, &x, 4); break; }
	case 10: db_bytes(d, &v, 8); break;
	default: fail_msg("no spec value type %u", vt);
	}
}

struct mfs_model *dopen(const struct db *d, const char *name, const char *meta)
{
	return topen_mem(d->b, d->n, name, meta, meta ? strlen(meta) : 0);
}

int dopen_fail(const void *buf, size_t len, const char *name, struct mfs_err *err)
{
	struct mfs_model *m = NULL;
	memset(err, 0, sizeof(*err));
	int r = mfs_model_open_mem(&m, buf, len, name, NULL, 0, NULL, err);
	if (r == 0) {
		mfs_model_free(m);
		fail_msg("%s opened but should not have", name);
	}
	if (!err->msg[0])
		fail_msg("%s failed (%d) without a message", name, r);
	return r;
}

/* Whole content of the view at path (caller frees). */
static uint8_t *view_bytes(struct mfs_model *m, const char *path, size_t *len)
{
	return (uint8_t *)tread(m, path, len);
}

static void check_reencode(struct mfs_model *m, const struct mfs_edit *e, const char *what)
{
	struct mfs_patch p;
	struct mfs_err err = {0};
	mfs_patch_init(&p);
	char path[512];
	mfs_node_path(m, m->tensors[e->tensor].dir, path, sizeof(path));
	int r = m->codec->edit(m, e, &p, &err);
	/* (mfs_patch_sort hands qsort a NULL array when there is no span:
	 * undefined behaviour that UBSan reports; a core bug, avoided here.) */
	if (r == 0 && p.n)
		r = mfs_patch_sort(&p, &err);
	if (r < 0)
		fail_msg("%s /%s (%s): re-encode failed: %s (%d)", m->name, path, what, err.msg, r);
	size_t len;
	uint8_t *out = tapply(&p, m->base, (size_t)m->size, &len);
	if (len != m->size || memcmp(out, m->base, len) != 0)
		fail_msg("%s /%s (%s): re-encoding changes the file", m->name, path, what);
	if (p.has_sidecar &&
	    (!m->has_sidecar || p.sidecar_len != m->sidecar_len ||
	     memcmp(p.sidecar, m->sidecar, p.sidecar_len) != 0))
		fail_msg("%s /%s (%s): re-encoding changes the sidecar to %.*s", m->name, path, what,
			 (int)p.sidecar_len, (const char *)p.sidecar);
	free(out);
	mfs_patch_free(&p);
}

/* A tensor shown by its entries only has no dense form to write: the codec
 * refuses element edits of it, and never reads it densely. */
static void check_nodense(struct mfs_model *m, uint32_t i)
{
	const struct mfs_tensor *t = &m->tensors[i];
	char path[512];
	mfs_node_path(m, t->dir, path, sizeof(path));
	static const char *const dense[] = {"values.txt", "data", "data.npy"};
	for (size_t k = 0; k < 3; k++) {
		char vp[600];
		snprintf(vp, sizeof(vp), "%s%s%s", path, path[0] ? "/" : "", dense[k]);
		if (mfs_resolve(m, vp) != MFS_NONE)
			fail_msg("%s /%s: a tensor without a dense form has %s", m->name, path, dense[k]);
	}
	assert_true(t->flags & MFS_TF_SPARSE);
	uint8_t one[16];
	struct mfs_run run = {0, 1, one};
	struct mfs_edit e = {
		.kind = MFS_E_TENSOR,
		.node = t->dir,
		.tensor = i,
		.dtype = (enum mfs_dtype)t->dtype,
		.ndim = t->ndim,
		.dims = t->dims,
		.runs = &run,
		.nruns = 1,
	};
	struct mfs_patch p;
	struct mfs_err err = {0};
	memset(one, 0, sizeof(one));
	mfs_patch_init(&p);
	assert_int_equal(m->codec->edit(m, &e, &p, &err), -EINVAL);
	assert_non_null(strstr(err.msg, "no dense form"));
	assert_int_equal(p.n, 0);
	mfs_patch_free(&p);
	memset(&err, 0, sizeof(err));
	assert_int_equal(t->ops->read(m, t, 0, 1, one, &err), -EIO);
}

size_t daphne_reencode_all(struct mfs_model *m)
{
	for (uint32_t i = 0; i < m->ntensors; i++) {
		const struct mfs_tensor *t = &m->tensors[i];
		char path[512], vp[600];
		mfs_node_path(m, t->dir, path, sizeof(path));
		size_t len;
		uint8_t *body = NULL;
		struct mfs_run run = {0, t->nelem, NULL};
		struct mfs_edit e = {
			.kind = MFS_E_TENSOR,
			.node = t->dir,
			.tensor = i,
			.reshape = true,
			.dtype = (enum mfs_dtype)t->dtype,
			.ndim = t->ndim,
			.dims = t->dims,
		};
		if (t->flags & MFS_TF_NODENSE) {
			check_nodense(m, i);
			e.reshape = false;
		} else {
			if (mfs_dtype_info((enum mfs_dtype)t->dtype)->npy) {
				snprintf(vp, sizeof(vp), "%s%sdata.npy", path, path[0] ? "/" : "");
				body = view_bytes(m, vp, &len);
				run.bytes = body + 10 + mfs_le16(body + 8);
			} else {
				snprintf(vp, sizeof(vp), "%s%sdata", path, path[0] ? "/" : "");
				body = view_bytes(m, vp, &len);
				run.bytes = body;
			}
			e.runs = &run;
			e.nruns = t->nelem ? 1 : 0;
			check_reencode(m, &e, "all elements");
		}
		if (t->flags & MFS_TF_SPARSE) {
			uint64_t n = t->nnz;
			uint64_t *rows = malloc(n * 8 + 8), *cols = malloc(n * 8 + 8);
			uint8_t *v = malloc(n * t->esize + 1);
			struct mfs_err err = {0};
			assert_int_equal(t->ops->entries(m, t, 0, n, rows, cols, v, &err), 0);
			struct mfs_run er = {0, n, v};
			e.kind = MFS_E_ENTRIES;
			e.runs = &er;
			e.nruns = n ? 1 : 0;
			check_reencode(m, &e, "all entries");
			free(rows);
			free(cols);
			free(v);
		}
		free(body);
	}
	return m->ntensors;
}

void daphne_same_outside(const uint8_t *old, const uint8_t *new_, size_t size, size_t off,
			 size_t len)
{
	tsame_outside(old, size, new_, size, off, len, len);
}

double daphne_npy_elem(struct mfs_model *m, const char *npy_path, uint64_t i)
{
	size_t len;
	uint8_t *b = (uint8_t *)tread(m, npy_path, &len);
	size_t h = 10 + mfs_le16(b + 8);
	const char *descr = strstr((const char *)b + 10, "'descr': '") + 10;
	double v = 0;
	if (strncmp(descr, "<f8", 3) == 0) {
		memcpy(&v, b + h + 8 * i, 8);
	} else if (strncmp(descr, "<f4", 3) == 0) {
		float f;
		memcpy(&f, b + h + 4 * i, 4);
		v = f;
	} else if (strncmp(descr, "<i4", 3) == 0) {
		int32_t x;
		memcpy(&x, b + h + 4 * i, 4);
		v = x;
	} else if (strncmp(descr, "<i8", 3) == 0) {
		int64_t x;
		memcpy(&x, b + h + 8 * i, 8);
		v = (double)x;
	} else {
		fail_msg("%s: unexpected dtype %.4s", npy_path, descr);
	}
	free(b);
	return v;
}
