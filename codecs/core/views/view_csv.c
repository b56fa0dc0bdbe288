/* frame.csv: a frame's columns as comma-separated text, a header line of
 * labels then one line per row, rendered in chunks of rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model_impl.h"
#include "numtext.h"
#include "view_impl.h"

static uint64_t rows_per_chunk(const struct mfs_frame *f)
{
	uint64_t r = MFS_CHUNK_ELEMS / (f->ncols ? f->ncols : 1);
	return r ? r : 1;
}

/* A label as a CSV field: quoted when it holds a comma, quote or newline. */
static int put_label(struct mfs_buf *b, const char *s)
{
	size_t n = strlen(s);
	bool quote = strpbrk(s, ",\"\n\r") != NULL;
	if (mfs_buf_reserve(b, 2 * n + 3) < 0)
		return -ENOMEM;
	if (!quote) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
		return 0;
	}
	b->p[b->len++] = '"';
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"')
			b->p[b->len++] = '"';
		b->p[b->len++] = s[i];
	}
	b->p[b->len++] = '"';
	return 0;
}

int mfs_csv_render(struct mfs_model *m, const void *frame, uint64_t k,
		   struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err)
{
	(void)scratch;
	const struct mfs_frame *f = frame;
	uint64_t per = rows_per_chunk(f), first = k * per;
	uint64_t count = f->nrows - first < per ? f->nrows - first : per;
	if (mfs_buf_reserve(out, (size_t)(count * f->ncols) * (MFS_NUM_MAX + 1) + 1) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	/* Gather each column's piece, then interleave row by row. */
	uint8_t **colv = calloc(f->ncols ? f->ncols : 1, sizeof(*colv));
	if (!colv)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = 0;
	for (uint32_t j = 0; j < f->ncols && r == 0; j++) {
		const struct mfs_tensor *t = &m->tensors[f->cols[j]];
		colv[j] = malloc((size_t)(count * t->esize) + 1);
		if (!colv[j])
			r = mfs_error(err, ENOMEM, "out of memory");
		else
			r = mfs_tensor_gather(m, t, first, count, colv[j], err);
	}
	if (r == 0) {
		char *o = out->p + out->len;
		for (uint64_t i = 0; i < count; i++) {
			for (uint32_t j = 0; j < f->ncols; j++) {
				const struct mfs_tensor *t = &m->tensors[f->cols[j]];
				if (j)
					*o++ = ',';
				o += mfs_fmt_elem(o, (enum mfs_dtype)t->dtype, colv[j] + i * t->esize);
			}
			*o++ = '\n';
		}
		out->len = (size_t)(o - out->p);
	}
	for (uint32_t j = 0; j < f->ncols; j++)
		free(colv[j]);
	free(colv);
	return r;
}

struct mfs_chunked *mfs_frame_cache(struct mfs_model *m, uint32_t frame, struct mfs_err *err)
{
	struct mfs_frame *f = &m->frames[frame];
	pthread_mutex_lock(&m->impl->cache_lock);
	struct mfs_chunked *c = f->csv;
	if (!c) {
		struct mfs_buf head = {0};
		int r = 0;
		for (uint32_t j = 0; j < f->ncols && r == 0; j++) {
			if (j && mfs_buf_reserve(&head, 1) == 0)
				head.p[head.len++] = ',';
			r = put_label(&head, f->labels[j]);
		}
		if (r == 0 && mfs_buf_reserve(&head, 1) == 0)
			head.p[head.len++] = '\n';
		else
			r = -ENOMEM;
		c = calloc(1, sizeof(*c));
		uint64_t per = rows_per_chunk(f);
		if (r < 0 || !c ||
		    mfs_chunked_init(c, f, mfs_csv_render, (f->nrows + per - 1) / per, head.p,
				     head.len) < 0) {
			free(c);
			c = NULL;
			mfs_error(err, ENOMEM, "out of memory");
		}
		mfs_buf_free(&head);
		f->csv = c;
	}
	pthread_mutex_unlock(&m->impl->cache_lock);
	return c;
}

void mfs_frame_cache_free(struct mfs_chunked *c)
{
	if (c) {
		mfs_chunked_destroy(c);
		free(c);
	}
}
