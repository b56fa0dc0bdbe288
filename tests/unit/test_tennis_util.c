/* Helpers shared by the TenniS tests (see test_tennis.h). */
#include "test_tennis.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tb_bytes(struct tb *t, const void *p, size_t n)
{
	tappend(&t->b, &t->n, &t->cap, p, n);
}

void tb_u8(struct tb *t, uint8_t v)
{
	tb_bytes(t, &v, 1);
}

void tb_u32(struct tb *t, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	tb_bytes(t, b, 4);
}

void tb_str(struct tb *t, const char *s)
{
	tb_u32(t, (uint32_t)strlen(s));
	tb_bytes(t, s, strlen(s));
}

void tb_header(struct tb *t, uint32_t fake)
{
	uint8_t zero[120] = {0};
	tb_u32(t, fake);
	tb_u32(t, 0x19910929u);
	tb_bytes(t, zero, sizeof(zero));
}

void tb_field(struct tb *t, uint8_t code, uint32_t ndim, const uint32_t *dims,
	      const void *data, size_t len)
{
	tb_u8(t, code);
	tb_u32(t, ndim);
	for (uint32_t k = 0; k < ndim; k++)
		tb_u32(t, dims[k]);
	tb_bytes(t, data, len);
}

void tb_str_param(struct tb *t, const char *name, const char *s)
{
	uint32_t len = (uint32_t)strlen(s);
	tb_str(t, name);
	tb_u32(t, 1);
	tb_field(t, 13, 1, &len, s, len);
}

uint8_t *tennis_load(const char *rel, size_t *len)
{
	char path[512];
	snprintf(path, sizeof(path), "tennis/%s", rel);
	return tload(tdata(path), len);
}

size_t tennis_reencode_all(struct mfs_model *m)
{
	for (uint32_t i = 0; i < m->ntensors; i++) {
		const struct mfs_tensor *t = &m->tensors[i];
		assert_null(t->ops);
		struct mfs_run run = {0, t->nelem, m->base + t->off};
		struct mfs_edit e = {
			.kind = MFS_E_TENSOR,
			.node = t->dir,
			.tensor = i,
			.reshape = true,
			.dtype = (enum mfs_dtype)t->dtype,
			.ndim = t->ndim,
			.dims = t->dims,
			.runs = &run,
			.nruns = t->nelem ? 1 : 0,
		};
		struct mfs_patch p;
		struct mfs_err err = {0};
		mfs_patch_init(&p);
		int r = m->codec->edit(m, &e, &p, &err);
		if (r == 0)
			r = mfs_patch_sort(&p, &err);
		if (r < 0) {
			char path[512];
			mfs_node_path(m, t->dir, path, sizeof(path));
			fail_msg("%s %s: re-encode failed: %s (%d)", m->name, path, err.msg, r);
		}
		assert_true(p.n >= 1);
		size_t len;
		uint8_t *out = tapply(&p, m->base, (size_t)m->size, &len);
		if (len != m->size || memcmp(out, m->base, len) != 0) {
			char path[512];
			mfs_node_path(m, t->dir, path, sizeof(path));
			fail_msg("%s %s: re-encoding changes the file", m->name, path);
		}
		free(out);
		mfs_patch_free(&p);
	}
	return m->ntensors;
}

