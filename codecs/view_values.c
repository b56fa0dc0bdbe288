/* values.txt: elements as text in logical (row-major) order, rendered one
 * chunk of MFS_CHUNK_ELEMS elements at a time (LAYOUT.md "values.txt rules"). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "model_impl.h"
#include "numtext.h"
#include "view_impl.h"

uint64_t mfs_values_nchunks(const struct mfs_tensor *t)
{
	if (t->dtype == MFS_DT_CHAR8)
		return 1 + t->nelem / MFS_CHUNK_ELEMS;  /* the last chunk ends with "\n" */
	return (t->nelem + MFS_CHUNK_ELEMS - 1) / MFS_CHUNK_ELEMS;
}

const char *mfs_values_sep(const uint64_t *dims, uint32_t ndim, uint64_t i, uint64_t nelem)
{
	if (ndim < 2)
		return "\n";
	uint64_t cols = dims[ndim - 1];
	if ((i + 1) % cols)
		return " ";
	if (ndim == 2 || i + 1 == nelem)
		return "\n";
	uint64_t rows = dims[ndim - 2];
	/* An empty line between blocks of shape[-2] lines. */
	return ((i + 1) / cols) % rows ? "\n" : "\n\n";
}

/* Separator kinds for a run of elements: position in the row decides. */
static size_t render_run(const struct mfs_tensor *t, const uint8_t *el, uint64_t first,
			 uint64_t count, char *o)
{
	char *start = o;
	unsigned es = t->esize;
	uint32_t nd = t->ndim;
	uint64_t cols = nd >= 2 ? t->dims[nd - 1] : 1;
	uint64_t rows = nd >= 3 ? t->dims[nd - 2] : 0;
	uint64_t col = (first) % cols;
	uint64_t row = nd >= 3 ? (first / cols) % rows : 0;
	for (uint64_t i = 0; i < count; i++) {
		const uint8_t *p = el + i * es;
		switch (t->dtype) {
		case MFS_DT_F32: {
			float v;
			memcpy(&v, p, 4);
			o += mfs_fmt_f32(o, v);
			break;
		}
		case MFS_DT_F64: {
			double v;
			memcpy(&v, p, 8);
			o += mfs_fmt_f64(o, v);
			break;
		}
		default:
			o += mfs_fmt_elem(o, (enum mfs_dtype)t->dtype, p);
		}
		if (++col < cols) {
			*o++ = ' ';
			continue;
		}
		col = 0;
		*o++ = '\n';
		if (nd >= 3 && ++row == rows) {
			row = 0;
			if (first + i + 1 < t->nelem)
				*o++ = '\n';
		}
	}
	return (size_t)(o - start);
}

int mfs_values_render(struct mfs_model *m, const void *tensor, uint64_t k,
		      struct mfs_buf *out, struct mfs_err *err)
{
	const struct mfs_tensor *t = tensor;
	uint64_t first = k * MFS_CHUNK_ELEMS;
	uint64_t count = t->nelem - first < MFS_CHUNK_ELEMS ? t->nelem - first : MFS_CHUNK_ELEMS;
	if (t->dtype == MFS_DT_CHAR8) {
		/* A string: its bytes, then one newline at the very end. */
		bool last = k + 1 == mfs_values_nchunks(t);
		if (mfs_buf_reserve(out, (size_t)count + 1) < 0)
			return mfs_error(err, ENOMEM, "out of memory");
		int r = mfs_tensor_gather(m, t, first, count, out->p + out->len, err);
		if (r < 0)
			return r;
		out->len += (size_t)count;
		if (last)
			out->p[out->len++] = '\n';
		return 0;
	}
	/* Each element takes at most MFS_NUM_MAX bytes plus two separators. */
	if (mfs_buf_reserve(out, (size_t)count * (MFS_NUM_MAX + 2)) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	const uint8_t *el;
	uint8_t *tmp = NULL;
	if (!t->ops && !t->swap && (t->order == MFS_ROW_MAJOR || t->ndim < 2)) {
		el = m->base + t->off + first * t->esize;  /* format straight from the source */
	} else {
		tmp = malloc((size_t)(count * t->esize));
		if (!tmp)
			return mfs_error(err, ENOMEM, "out of memory");
		int r = mfs_tensor_gather(m, t, first, count, tmp, err);
		if (r < 0) {
			free(tmp);
			return r;
		}
		el = tmp;
	}
	out->len += render_run(t, el, first, count, out->p + out->len);
	free(tmp);
	return 0;
}

struct mfs_tcache *mfs_tcache_get(struct mfs_model *m, const struct mfs_tensor *t,
				  struct mfs_err *err)
{
	struct mfs_model_impl *im = m->impl;
	pthread_mutex_lock(&im->cache_lock);
	struct mfs_tcache *c = t->cache;
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c)
			goto oom;
		const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)t->dtype);
		bool dense = !(t->flags & MFS_TF_NODENSE);
		if (di->numeric && dense) {
			if (mfs_chunked_init(&c->values, t, mfs_values_render, mfs_values_nchunks(t),
					     "", 0) < 0)
				goto oom;
			c->has_values = true;
		}
		if (t->flags & MFS_TF_SPARSE) {
			char head[256];
			size_t hl = mfs_mtx_head(t, head, sizeof(head));
			if (mfs_chunked_init(&c->mtx, t, mfs_mtx_render,
					     (t->nnz + MFS_CHUNK_ELEMS - 1) / MFS_CHUNK_ELEMS, head, hl) < 0)
				goto oom;
			c->has_mtx = true;
		}
		if (di->npy && dense) {
			char head[1024];
			c->npy_head_len = mfs_npy_header(t, head);
			c->npy_head = malloc(c->npy_head_len);
			if (!c->npy_head)
				goto oom;
			memcpy(c->npy_head, head, c->npy_head_len);
		}
		/* The tensor is const to the views; its cache slot is the one
		 * field they fill, under cache_lock. */
		((struct mfs_tensor *)t)->cache = c;
	}
	pthread_mutex_unlock(&im->cache_lock);
	return c;
oom:
	if (c) {
		mfs_chunked_destroy(&c->values);
		mfs_chunked_destroy(&c->mtx);
		free(c->npy_head);
		free(c);
	}
	pthread_mutex_unlock(&im->cache_lock);
	mfs_error(err, ENOMEM, "out of memory");
	return NULL;
}

void mfs_tcache_free(struct mfs_tcache *c)
{
	if (!c)
		return;
	if (c->has_values)
		mfs_chunked_destroy(&c->values);
	if (c->has_mtx)
		mfs_chunked_destroy(&c->mtx);
	free(c->npy_head);
	free(c);
}
