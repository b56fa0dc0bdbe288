/* values.txt: elements as text in logical (row-major) order, rendered one
 * chunk of MFS_CHUNK_ELEMS elements at a time (LAYOUT.md "values.txt rules"). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "model_impl.h"
#include "numtext.h"
#include "npy_head.h"
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

/* n elements from p, each followed by sep. */
static size_t render_run(const struct mfs_tensor *t, const uint8_t *p, size_t n, char sep, char *o)
{
	if (t->dtype == MFS_DT_F32)
		return mfs_fmt_f32_run(o, p, n, sep);
	char *start = o;
	for (size_t i = 0; i < n; i++, p += t->esize) {
		if (t->dtype == MFS_DT_F64) {
			double v;
			memcpy(&v, p, 8);
			o += mfs_fmt_f64(o, v);
		} else {
			o += mfs_fmt_elem(o, (enum mfs_dtype)t->dtype, p);
		}
		*o++ = sep;
	}
	return (size_t)(o - start);
}

/* Elements [first, first + count) with their separators (mfs_values_sep),
 * a row's piece at a time: spaces within a row, a newline at its end, an
 * empty line after each block of shape[-2] rows. */
static size_t render_elems(const struct mfs_tensor *t, const uint8_t *el, uint64_t first,
			 uint64_t count, char *o)
{
	uint32_t nd = t->ndim;
	if (nd < 2)
		return render_run(t, el, (size_t)count, '\n', o);
	char *start = o;
	uint64_t cols = t->dims[nd - 1];
	uint64_t rows = nd >= 3 ? t->dims[nd - 2] : 0;
	uint64_t col = first % cols;
	uint64_t row = nd >= 3 ? (first / cols) % rows : 0;
	for (uint64_t i = 0; i < count;) {
		uint64_t k = cols - col < count - i ? cols - col : count - i;
		o += render_run(t, el + i * t->esize, (size_t)k, ' ', o);
		i += k;
		col += k;
		if (col < cols)
			break;  /* the run ends inside a row */
		col = 0;
		o[-1] = '\n';
		if (nd >= 3 && ++row == rows) {
			row = 0;
			if (first + i < t->nelem)
				*o++ = '\n';
		}
	}
	return (size_t)(o - start);
}

/* Elements of chunks [k, k + n) in logical order: straight from the source,
 * or gathered at once into the caller's scratch (one pass over whole rows of
 * a column-major matrix, where chunk by chunk would read each column line
 * many times). The scratch is kept by the caller from one window to the
 * next: freed each time, a window's worth (256 KiB) would go back to the
 * system (glibc unmaps or trims it) and the next window would fault its
 * pages in again. Valid until scratch changes. */
static const uint8_t *elements(struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
			       uint64_t count, struct mfs_buf *scratch, struct mfs_err *err, int *r)
{
	if (!t->ops && !t->swap && (t->order == MFS_ROW_MAJOR || t->ndim < 2))
		return m->base + t->off + first * t->esize;
	scratch->len = 0;
	if (mfs_buf_reserve(scratch, (size_t)(count * t->esize)) < 0) {
		*r = mfs_error(err, ENOMEM, "out of memory");
		return NULL;
	}
	uint8_t *buf = (uint8_t *)scratch->p;
	*r = mfs_tensor_gather(m, t, first, count, buf, err);
	return *r < 0 ? NULL : buf;
}

int mfs_values_render(struct mfs_model *m, const void *tensor, uint64_t k,
		      struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err)
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
	int r = 0;
	const uint8_t *el = elements(m, t, first, count, scratch, err, &r);
	if (!el)
		return r;
	out->len += render_elems(t, el, first, count, out->p + out->len);
	return 0;
}

/* ---- the size without rendering ------------------------------------------ */

#define PART_ELEMS (1u << 20)  /* elements per slice of the sizing work */

/* Separators of elements [first, first + count): one after each, and the
 * empty line after each block of shape[-2] rows but the last (render_run). */
static uint64_t sep_bytes(const struct mfs_tensor *t, uint64_t first, uint64_t count)
{
	uint64_t n = count;
	if (t->ndim >= 3) {
		uint64_t block = t->dims[t->ndim - 1] * t->dims[t->ndim - 2];
		uint64_t end = first + count;
		n += end / block - first / block;
		if (end == t->nelem && t->nelem % block == 0)
			n--;
	}
	return n;
}

static inline uint32_t elem_len(const uint8_t *p, bool f64, bool swap)
{
	if (f64) {
		uint64_t b;
		memcpy(&b, p, 8);
		return (uint32_t)mfs_len_f64(swap ? __builtin_bswap64(b) : b);
	}
	uint32_t b;
	memcpy(&b, p, 4);
	return (uint32_t)mfs_len_f32(swap ? __builtin_bswap32(b) : b);
}

/* Lengths of elements [s0, s1) of the storage, added to the chunks that
 * show them: in storage order, so that a column-major tensor is read
 * straight through (the chunk of each element follows its logical index,
 * an odometer over the shape with the first dimension fastest). */
static inline void measure_run(const struct mfs_tensor *t, const uint8_t *src, uint64_t s0,
			       uint64_t s1, uint32_t *lens, bool f64, bool swap)
{
	unsigned es = f64 ? 8 : 4;
	if (t->order == MFS_ROW_MAJOR || t->ndim < 2) {
		for (uint64_t s = s0; s < s1;) {
			uint64_t k = s / MFS_CHUNK_ELEMS, e = (k + 1) * MFS_CHUNK_ELEMS;
			if (e > s1)
				e = s1;
			uint32_t sum = 0;
			for (; s < e; s++)
				sum += elem_len(src + s * es, f64, swap);
			lens[k] += sum;
		}
		return;
	}
	uint32_t nd = t->ndim;
	const uint64_t *dims = t->dims;
	uint64_t idx[32], ls[32], l = 0, r = s0;
	ls[nd - 1] = 1;
	for (uint32_t i = nd - 1; i > 0; i--)
		ls[i - 1] = ls[i] * dims[i];
	for (uint32_t i = 0; i < nd; i++) {
		idx[i] = r % dims[i];
		r /= dims[i];
		l += idx[i] * ls[i];
	}
	for (uint64_t s = s0; s < s1; s++) {
		lens[l / MFS_CHUNK_ELEMS] += elem_len(src + s * es, f64, swap);
		if (++idx[0] < dims[0]) {
			l += ls[0];
			continue;
		}
		l -= (dims[0] - 1) * ls[0];
		idx[0] = 0;
		for (uint32_t i = 1; i < nd; i++) {
			if (++idx[i] < dims[i]) {
				l += ls[i];
				break;
			}
			l -= (dims[i] - 1) * ls[i];
			idx[i] = 0;
		}
	}
}

static int values_measure(struct mfs_model *m, const void *tensor, uint64_t part,
			  uint64_t nparts, uint32_t *lens, struct mfs_err *err)
{
	(void)nparts;
	(void)err;
	const struct mfs_tensor *t = tensor;
	if (part == 0) {
		for (uint64_t k = 0, first = 0; first < t->nelem; k++, first += MFS_CHUNK_ELEMS) {
			uint64_t count = t->nelem - first < MFS_CHUNK_ELEMS ? t->nelem - first
									  : MFS_CHUNK_ELEMS;
			lens[k] += (uint32_t)sep_bytes(t, first, count);
		}
	}
	uint64_t s0 = part * PART_ELEMS;
	uint64_t s1 = t->nelem - s0 < PART_ELEMS ? t->nelem : s0 + PART_ELEMS;
	const uint8_t *src = m->base + t->off;
	/* constant flags: each combination is its own loop */
	if (t->dtype == MFS_DT_F64) {
		if (t->swap)
			measure_run(t, src, s0, s1, lens, true, true);
		else
			measure_run(t, src, s0, s1, lens, true, false);
	} else if (t->swap) {
		measure_run(t, src, s0, s1, lens, false, true);
	} else {
		measure_run(t, src, s0, s1, lens, false, false);
	}
	return 0;
}

/* Chunks whose elements all lie in a hole of the file are zeros: their
 * text is known from one zero's and the separators'. A chunk's elements
 * are one byte range in row-major storage; in column-major storage only
 * the whole tensor is checked. */
static uint64_t values_zeros(struct mfs_model *m, const void *tensor, uint64_t *lens)
{
	const struct mfs_tensor *t = tensor;
	bool whole = mfs_model_in_hole(m, t->off, t->nelem * t->esize);
	bool ranges = (t->order == MFS_ROW_MAJOR || t->ndim < 2) &&
		      mfs_model_meets_hole(m, t->off, t->nelem * t->esize);
	static const uint8_t zero[16];
	char text[MFS_NUM_MAX + 2];
	uint64_t zlen = render_run(t, zero, 1, ' ', text) - 1, unknown = 0;
	for (uint64_t k = 0, first = 0; first < t->nelem; k++, first += MFS_CHUNK_ELEMS) {
		uint64_t count = t->nelem - first < MFS_CHUNK_ELEMS ? t->nelem - first : MFS_CHUNK_ELEMS;
		if (whole || (ranges && mfs_model_in_hole(m, t->off + first * t->esize,
							   count * t->esize))) {
			lens[k] = count * zlen + sep_bytes(t, first, count);
		} else {
			lens[k] = MFS_LEN_UNKNOWN;
			unknown++;
		}
	}
	return unknown;
}

mfs_measure_fn mfs_values_measurer(const struct mfs_tensor *t, uint64_t *nparts)
{
	if (t->ops || !t->nelem || (t->dtype != MFS_DT_F32 && t->dtype != MFS_DT_F64) ||
	    (t->swap && t->swap != t->esize) || t->ndim > 32)
		return NULL;
	*nparts = (t->nelem + PART_ELEMS - 1) / PART_ELEMS;
	return values_measure;
}

int mfs_values_render_n(struct mfs_model *m, const void *tensor, uint64_t k, uint64_t n,
			struct mfs_buf *out, uint64_t *lens, struct mfs_buf *scratch,
			struct mfs_err *err)
{
	const struct mfs_tensor *t = tensor;
	uint64_t first = k * MFS_CHUNK_ELEMS;
	uint64_t all = t->nelem - first < n * MFS_CHUNK_ELEMS ? t->nelem - first
							       : n * MFS_CHUNK_ELEMS;
	int r = 0;
	const uint8_t *el = elements(m, t, first, all, scratch, err, &r);
	if (!el)
		return r;
	for (uint64_t i = 0, done = 0; i < n; i++) {
		uint64_t count = all - done < MFS_CHUNK_ELEMS ? all - done : MFS_CHUNK_ELEMS;
		if (mfs_buf_reserve(out, (size_t)count * (MFS_NUM_MAX + 2)) < 0)
			return mfs_error(err, ENOMEM, "out of memory");
		lens[i] = render_elems(t, el + done * t->esize, first + done, count,
				       out->p + out->len);
		out->len += lens[i];
		done += count;
	}
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
			c->values.measure = mfs_values_measurer(t, &c->values.nparts);
			if (!t->ops && t->esize <= 16 && t->dtype != MFS_DT_CHAR8 && t->nelem &&
			    t->nelem <= UINT64_MAX / t->esize)
				c->values.zeros = values_zeros;
			if (t->dtype != MFS_DT_CHAR8)
				c->values.render_n = mfs_values_render_n;
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
		enum mfs_dtype nd = mfs_npy_dtype((enum mfs_dtype)t->dtype);
		if (nd != MFS_DT_INVALID && t->ndim <= MFS_NPY_MAX_DIMS && dense) {
			uint8_t head[1024];
			c->npy_head_len = mfs_npy_write_header(1, nd, false, t->order == MFS_COL_MAJOR,
							       t->ndim, t->dims, head, sizeof(head));
			c->npy_head = c->npy_head_len ? malloc(c->npy_head_len) : NULL;
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
