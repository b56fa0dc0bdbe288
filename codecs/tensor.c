/* Reading tensor elements in logical (row-major) or storage order, from raw
 * storage (swapped if big-endian, transposed if column-major) or through a
 * codec's custom storage ops. Called inside mfs_guarded(). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pthread.h>

#include "bytes.h"
#include "model_impl.h"
#include "view_impl.h"

/* A band of whole rows of a wide column-major matrix, transposed once and
 * kept per thread: a text chunk is a fraction of one row there, and reading
 * it alone would stride through the whole matrix. */
#define BAND_BYTES (1u << 20)
#define BAND_ROWS 32u

struct band {
	uint64_t uid;               /* the model's */
	const struct mfs_tensor *t;
	uint64_t r0, nr;            /* rows [r0, r0 + nr), row-major in buf */
	uint8_t *buf;
	size_t cap;
};

static pthread_key_t band_key;
static pthread_once_t band_once = PTHREAD_ONCE_INIT;

static void band_free(void *p)
{
	struct band *b = p;
	free(b->buf);
	free(b);
}

static void band_init(void)
{
	pthread_key_create(&band_key, band_free);
}

int mfs_tensor_read_storage(const struct mfs_model *m, const struct mfs_tensor *t,
			    uint64_t first, uint64_t count, void *out, struct mfs_err *err)
{
	if (first > t->nelem || count > t->nelem - first)
		return mfs_error(err, EINVAL, "internal error: elements beyond the tensor");
	if (!count)
		return 0;
	if (t->ops) {
		if (!t->ops->read)
			return mfs_error(err, EIO, "tensor storage cannot be read");
		return t->ops->read(m, t, first, count, out, err);
	}
	memcpy(out, m->base + t->off + first * t->esize, (size_t)(count * t->esize));
	if (t->swap)
		mfs_swap_elems(out, count * t->esize / t->swap, t->swap);
	return 0;
}

uint64_t mfs_tensor_storage_index(const struct mfs_tensor *t, uint64_t r)
{
	if (t->order == MFS_ROW_MAJOR || t->ndim < 2)
		return r;
	/* Column-major: the multi-index of r (row-major) read with reversed strides. */
	uint64_t s = 0, stride = 1;
	uint64_t idx[32];
	for (uint32_t i = t->ndim; i-- > 0;) {
		idx[i] = t->dims[i] ? r % t->dims[i] : 0;
		r = t->dims[i] ? r / t->dims[i] : 0;
	}
	for (uint32_t i = 0; i < t->ndim; i++) {
		s += idx[i] * stride;
		stride *= t->dims[i];
	}
	return s;
}

/* 2-D column-major R x C: logical rows [r0, r1), all columns, blocked in
 * 32 x 32 tiles so that reads stay sequential within each column piece. */
static void transpose_rows(const uint8_t *src, uint64_t R, uint64_t C, uint64_t r0, uint64_t r1,
			   unsigned es, uint8_t *out)
{
	enum { T = 32 };
	for (uint64_t rb = r0; rb < r1; rb += T) {
		uint64_t re = rb + T < r1 ? rb + T : r1;
		for (uint64_t cb = 0; cb < C; cb += T) {
			uint64_t ce = cb + T < C ? cb + T : C;
			for (uint64_t c = cb; c < ce; c++) {
				const uint8_t *col = src + (c * R) * es;
				switch (es) {
				case 4:
					for (uint64_t r = rb; r < re; r++)
						memcpy(out + ((r - r0) * C + c) * 4, col + r * 4, 4);
					break;
				case 8:
					for (uint64_t r = rb; r < re; r++)
						memcpy(out + ((r - r0) * C + c) * 8, col + r * 8, 8);
					break;
				default:
					for (uint64_t r = rb; r < re; r++)
						memcpy(out + ((r - r0) * C + c) * es, col + r * es, es);
				}
			}
		}
	}
}

int mfs_tensor_gather(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err)
{
	if (first > t->nelem || count > t->nelem - first)
		return mfs_error(err, EINVAL, "internal error: elements beyond the tensor");
	if (t->order == MFS_ROW_MAJOR || t->ndim < 2)
		return mfs_tensor_read_storage(m, t, first, count, out, err);
	if (!count)
		return 0;
	unsigned es = t->esize;
	uint8_t *o = out;
	if (t->ops) {
		/* Custom column-major storage: element by element. */
		for (uint64_t i = 0; i < count; i++) {
			int r = mfs_tensor_read_storage(m, t, mfs_tensor_storage_index(t, first + i),
							1, o + i * es, err);
			if (r < 0)
				return r;
		}
		return 0;
	}
	const uint8_t *src = m->base + t->off;
	/* Column-major storage of (d0, ..., dn-1) read in row-major order. A
	 * 2-D view (rows d0, columns the rest) with the rest in row-major order
	 * is exact only for n = 2; other ranks walk the index (correct, slower). */
	if (t->ndim == 2) {
		uint64_t R = t->dims[0], C = t->dims[1];
		uint64_t i = first, end = first + count;
		uint64_t ra = first / C, rb = (end - 1) / C;
		if (rb - ra + 1 < BAND_ROWS && C * es <= BAND_BYTES) {
			/* A wide matrix: serve the chunk from a band of rows. */
			pthread_once(&band_once, band_init);
			struct band *b = pthread_getspecific(band_key);
			if (!b && (b = calloc(1, sizeof(*b))) != NULL)
				pthread_setspecific(band_key, b);
			uint64_t uid = m->impl->uid;
			if (b && !(b->uid == uid && b->t == t && ra >= b->r0 && rb < b->r0 + b->nr)) {
				uint64_t nr = BAND_BYTES / (C * es);
				if (nr > BAND_ROWS)
					nr = BAND_ROWS;
				if (nr < rb - ra + 1)
					nr = rb - ra + 1;
				if (nr > R - ra)
					nr = R - ra;
				size_t need = (size_t)(nr * C * es);
				if (need > b->cap) {
					uint8_t *nb = realloc(b->buf, need);
					if (!nb) {
						b->uid = 0;
						goto direct;
					}
					b->buf = nb;
					b->cap = need;
				}
				b->uid = 0;  /* half-filled if the source faults */
				transpose_rows(src, R, C, ra, ra + nr, es, b->buf);
				b->uid = uid;
				b->t = t;
				b->r0 = ra;
				b->nr = nr;
			}
			if (b && b->uid == uid) {
				memcpy(o, b->buf + (first - b->r0 * C) * es, (size_t)(count * es));
				goto swap;
			}
		}
direct:
		/* Partial first row, whole rows blocked, partial last row. */
		while (i < end && (i % C) != 0) {
			memcpy(o, src + mfs_tensor_storage_index(t, i) * es, es);
			o += es;
			i++;
		}
		uint64_t r0 = i / C, r1 = end / C;
		if (r1 > r0) {
			transpose_rows(src, R, C, r0, r1, es, o);
			o += (r1 - r0) * C * es;
			i = r1 * C;
		}
		for (; i < end; i++, o += es)
			memcpy(o, src + mfs_tensor_storage_index(t, i) * es, es);
	} else {
		/* Odometer over the logical index; storage strides reversed. */
		uint32_t n = t->ndim;
		uint64_t idx[32], stride[32], s = 0, st = 1, r = first;
		for (uint32_t k = 0; k < n; k++) {
			stride[k] = st;
			st *= t->dims[k];
		}
		for (uint32_t k = n; k-- > 0;) {
			idx[k] = r % t->dims[k];
			r /= t->dims[k];
		}
		for (uint32_t k = 0; k < n; k++)
			s += idx[k] * stride[k];
		for (uint64_t i = 0; i < count; i++) {
			memcpy(o + i * es, src + s * es, es);
			for (uint32_t k = n; k-- > 0;) {
				if (++idx[k] < t->dims[k]) {
					s += stride[k];
					break;
				}
				s -= (idx[k] - 1) * stride[k];
				idx[k] = 0;
			}
		}
	}
swap:
	if (t->swap)
		mfs_swap_elems(out, count * es / t->swap, t->swap);
	return 0;
}

void mfs_reorder(const uint64_t *dims, uint32_t ndim, unsigned es, const void *in, void *out,
		 bool to_col)
{
	uint64_t n = 1;
	for (uint32_t k = 0; k < ndim; k++)
		n *= dims[k];
	if (ndim < 2 || n == 0) {
		memcpy(out, in, (size_t)(n * es));
		return;
	}
	/* Walk row-major order with an odometer holding the column-major index. */
	uint64_t idx[32] = {0}, stride[32], st = 1, s = 0;
	for (uint32_t k = 0; k < ndim; k++) {
		stride[k] = st;
		st *= dims[k];
	}
	const uint8_t *src = in;
	uint8_t *dst = out;
	for (uint64_t i = 0; i < n; i++) {
		if (to_col)
			memcpy(dst + s * es, src + i * es, es);
		else
			memcpy(dst + i * es, src + s * es, es);
		for (uint32_t k = ndim; k-- > 0;) {
			if (++idx[k] < dims[k]) {
				s += stride[k];
				break;
			}
			s -= (idx[k] - 1) * stride[k];
			idx[k] = 0;
		}
	}
}
