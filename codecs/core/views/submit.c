/* Turning new values into an edit: diffed against the old values (a
 * block at a time, old NaNs and bool bytes kept), the changed runs handed
 * to the codec, and the patch it returns stripped of spans that change
 * nothing; for every writable view (view_write.c, view_mtx.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bytes.h"
#include "codec.h"
#include "view_impl.h"

#define DIFF_BLOCK 65536u

int mfs_content_load(const struct mfs_content *c, char **out, struct mfs_err *err)
{
	if (c->size > SIZE_MAX - 1)
		return mfs_error(err, EFBIG, "content too large");
	char *buf = malloc((size_t)c->size + 1);
	if (!buf)
		return mfs_error(err, ENOMEM, "out of memory");
	if (c->size && c->read(c->ctx, 0, (size_t)c->size, buf) < 0) {
		free(buf);
		return mfs_error(err, EIO, "cannot read the written content");
	}
	buf[c->size] = '\0';
	*out = buf;
	return 0;
}

/* Whether span s rewrites bytes with themselves (a gathered span compared a
 * piece at a time). */
static bool span_unchanged(const struct mfs_model *m, const struct mfs_span *s)
{
	if (s->gen || s->len != s->dlen || s->off > m->size || s->len > m->size - s->off)
		return false;
	if (s->data || s->len == 0)
		return s->len == 0 || memcmp(m->base + s->off, s->data, (size_t)s->len) == 0;
	uint8_t piece[4096];
	for (uint64_t done = 0; done < s->len;) {
		size_t n = s->len - done < sizeof(piece) ? (size_t)(s->len - done) : sizeof(piece);
		mfs_span_bytes(s, done, n, piece);
		if (memcmp(m->base + s->off + done, piece, n) != 0)
			return false;
		done += n;
	}
	return true;
}

int mfs_submit_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err)
{
	if (!m->codec->edit)
		return mfs_error(err, EROFS, "this format cannot be written");
	int r = m->codec->edit(m, e, p, err);
	if (r < 0)
		return r;
	r = mfs_patch_sort(p, err);
	if (r < 0)
		return r;
	/* Drop spans that rewrite bytes with themselves. */
	size_t k = 0;
	for (size_t i = 0; i < p->n; i++)
		if (!span_unchanged(m, &p->spans[i]))
			p->spans[k++] = p->spans[i];
	p->n = k;
	if (p->has_sidecar && m->has_sidecar && p->sidecar_len == m->sidecar_len &&
	    memcmp(p->sidecar, m->sidecar, p->sidecar_len) == 0)
		p->has_sidecar = false;
	return p->n == 0 && !p->has_sidecar ? 1 : 0;
}

/* Floats of row fi equal bitwise (but for padding, fi->pad), or both NaN
 * with the same sign. */
static bool same_float(const struct mfs_dtype_info *fi, const uint8_t *a, const uint8_t *b)
{
	unsigned fs = fi->size - fi->pad;
	if (memcmp(a, b, fs) == 0)
		return true;
	double x, y;
	fi->widen(&x, a, 1);
	fi->widen(&y, b, 1);
	return isnan(x) && isnan(y) && (a[fs - 1] >> 7) == (b[fs - 1] >> 7);
}

/* Whether two elements are equal for our purposes: bitwise, padding aside
 * (a float128's 6 bytes: writing back its text keeps what they hold); any
 * NaN equals any NaN of the same sign, also as a part of a complex value
 * (so writing back "nan" keeps a NaN's payload); and any non-zero bool byte
 * equals any other (so writing back "1" keeps a stored 2). */
static bool same_elem(enum mfs_dtype dt, const uint8_t *a, const uint8_t *b, unsigned es)
{
	if (memcmp(a, b, es) == 0)
		return true;
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	switch (di->kind) {
	case MFS_DK_FLOAT:
		return same_float(di, a, b);
	case MFS_DK_COMPLEX: {
		const struct mfs_dtype_info *pi = mfs_dtype_info((enum mfs_dtype)di->part);
		unsigned h = pi->size;
		return same_float(pi, a, b) && same_float(pi, a + h, b + h);
	}
	case MFS_DK_BOOL:
		return (a[0] != 0) == (b[0] != 0);
	default:
		return false;
	}
}

struct runs {
	struct mfs_run *v;
	size_t n, cap;
	size_t kept;    /* runs [0, kept) have their bytes in the patch: never extended */
	bool gathered;  /* runs have no bytes: the edit's gather holds their values */
};

static int add_run(struct runs *rs, uint64_t first, uint64_t count, const void *bytes,
		   unsigned es)
{
	if (rs->gathered)
		bytes = NULL;
	if (rs->n > rs->kept) {
		/* Contiguous elements in contiguous memory (or gathered): extend
		 * the last run. */
		struct mfs_run *last = &rs->v[rs->n - 1];
		if (last->first + last->count == first &&
		    (rs->gathered ||
		     (const uint8_t *)last->bytes + last->count * es == (const uint8_t *)bytes)) {
			last->count += count;
			return 0;
		}
	}
	if (MFS_ARRAY_RESERVE(rs->v, rs->n, rs->cap, 1, 64) < 0)
		return -ENOMEM;
	rs->v[rs->n++] = (struct mfs_run){first, count, bytes};
	return 0;
}

/* Old elements [first, first + n) of t in storage order. A large source
 * (open, not in memory) is read with pread rather than through its
 * mapping: comparing a whole tensor then does not keep its pages in the
 * daemon's memory. */
static int read_old(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		    uint64_t n, uint8_t *old, struct mfs_err *err)
{
	if (t->ops || m->fd < 0 || first > t->nelem || n > t->nelem - first)
		return mfs_tensor_read_storage(m, t, first, n, old, err);
	size_t len = (size_t)(n * t->esize), done = 0;
	uint64_t off = t->off + first * t->esize;
	while (done < len) {
		ssize_t k = pread(m->fd, old + done, len - done, (off_t)(off + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return mfs_error(err, EIO, "cannot read the old values at byte %llu",
					 (unsigned long long)(off + done));
		done += (size_t)k;
	}
	if (t->swap)
		mfs_swap_elems(old, len / t->swap, t->swap);
	return 0;
}

/* Diff newv (elements [first, first + count), storage order) against the old
 * values and append runs of changed elements. Values (text, data.npy): an
 * element equal in value is no run, so old NaNs and a long double's padding
 * stay bit-exact. Bytes (the data view, exact): any byte that differs is
 * written, so that the file holds the bytes written. */
static int diff_range(struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, const uint8_t *newv, bool exact, struct runs *rs,
		      struct mfs_err *err)
{
	enum mfs_dtype dt = exact ? MFS_DT_OPAQUE : (enum mfs_dtype)t->dtype;
	bool sparse = t->flags & MFS_TF_SPARSE;
	unsigned es = t->esize;
	uint8_t *old = malloc((size_t)(DIFF_BLOCK * (uint64_t)es) + 1);
	uint64_t *rows = NULL, *cols = NULL;
	if (sparse) {
		rows = malloc(DIFF_BLOCK * sizeof(uint64_t));
		cols = malloc(DIFF_BLOCK * sizeof(uint64_t));
	}
	if (!old || (sparse && (!rows || !cols))) {
		free(old);
		free(rows);
		free(cols);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	int r = 0;
	for (uint64_t b = 0; b < count && r == 0; b += DIFF_BLOCK) {
		uint64_t n = count - b < DIFF_BLOCK ? count - b : DIFF_BLOCK;
		r = sparse ? t->ops->entries(m, t, first + b, n, rows, cols, old, err)
			   : read_old(m, t, first + b, n, old, err);
		if (r == 0 && memcmp(old, newv + b * es, (size_t)(n * es)) == 0)
			continue;  /* the common case: a block that did not change */
		for (uint64_t i = 0; i < n && r == 0; i++) {
			const uint8_t *nv = newv + (b + i) * es;
			if (same_elem(dt, old + i * es, nv, es))
				continue;  /* equal elements are no run: old NaNs stay bit-exact */
			uint64_t j = i + 1;
			while (j < n && !same_elem(dt, old + j * es, newv + (b + j) * es, es))
				j++;
			if (add_run(rs, first + b + i, j - i, nv, es) < 0)
				r = mfs_error(err, ENOMEM, "out of memory");
			i = j - 1;
		}
	}
	free(old);
	free(rows);
	free(cols);
	return r;
}

/* gather: the runs' values, when they have no bytes (NULL: they have). */
static int submit_runs(struct mfs_model *m, const struct mfs_tensor *t, struct runs *rs,
		       const struct mfs_gather *gather, struct mfs_patch *p, struct mfs_err *err)
{
	if (rs->n == 0)
		return 1;
	struct mfs_edit e = {
		.kind = (t->flags & MFS_TF_SPARSE) ? MFS_E_ENTRIES : MFS_E_TENSOR,
		.node = t->dir,
		.tensor = (uint32_t)(t - m->tensors),
		.dtype = (enum mfs_dtype)t->dtype,
		.ndim = t->ndim,
		.dims = t->dims,
		.runs = rs->v,
		.nruns = rs->n,
		.gather = gather,
	};
	return mfs_submit_edit(m, &e, p, err);
}

/* The runs found since the last call point into the caller's values: copy
 * their bytes into p. */
static int keep_runs(struct runs *rs, unsigned es, struct mfs_patch *p, struct mfs_err *err)
{
	uint64_t total = 0;
	for (size_t i = rs->kept; i < rs->n; i++)
		total += rs->v[i].count * es;
	uint8_t *kept = total ? mfs_patch_keep(p, total) : NULL;
	if (total && !kept)
		return mfs_error(err, ENOMEM, "out of memory");
	for (size_t i = rs->kept; i < rs->n; i++) {
		size_t len = (size_t)(rs->v[i].count * es);
		memcpy(kept, rs->v[i].bytes, len);
		rs->v[i].bytes = kept;
		kept += len;
	}
	rs->kept = rs->n;
	return 0;
}

int mfs_submit_values(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *newv,
		      bool kept, struct mfs_patch *p, struct mfs_err *err)
{
	uint64_t count = (t->flags & MFS_TF_SPARSE) ? t->nnz : t->nelem;
	struct runs rs = {0};
	int r = diff_range(m, t, 0, count, newv, false, &rs, err);
	if (r == 0 && !kept)
		r = keep_runs(&rs, t->esize, p, err);
	if (r == 0)
		r = submit_runs(m, t, &rs, NULL, p, err);
	free(rs.v);
	return r;
}

int mfs_submit_reshape(struct mfs_model *m, const struct mfs_tensor *t, enum mfs_dtype dt,
		       uint32_t ndim, const uint64_t *dims, const uint8_t *storage, uint64_t nelem,
		       struct mfs_patch *p, struct mfs_err *err)
{
	struct mfs_run run = {0, nelem, storage};
	struct mfs_edit e = {
		.kind = MFS_E_TENSOR,
		.node = t->dir,
		.tensor = (uint32_t)(t - m->tensors),
		.reshape = true,
		.dtype = dt,
		.ndim = ndim,
		.dims = dims,
		.runs = &run,
		.nruns = nelem ? 1 : 0,
	};
	return mfs_submit_edit(m, &e, p, err);
}

/* The first of n nonzero values of a dense form of sparse t that no stored
 * entry (rows, cols: the pattern) holds. */
static int stray_nonzero(struct mfs_err *err, const struct mfs_tensor *t, const uint8_t *dense,
			 const uint64_t *rows, const uint64_t *cols, uint64_t n)
{
	static const uint8_t zero[16];
	unsigned es = t->esize;
	uint64_t ncols = t->ndim > 1 ? t->dims[1] : 1;
	uint8_t *stored = calloc((size_t)(t->nelem / 8 + 1), 1);
	uint64_t at = t->nelem;
	if (stored) {
		at = 0;
		for (uint64_t i = 0; i < t->nnz; i++) {
			uint64_t k = rows[i] * ncols + cols[i];
			stored[k / 8] |= (uint8_t)(1u << (k % 8));
		}
		while (at < t->nelem && (memcmp(dense + at * es, zero, es) == 0 ||
					 (stored[at / 8] >> (at % 8)) & 1))
			at++;
		free(stored);
	}
	if (at == t->nelem)  /* out of memory: no position */
		return mfs_error(err, EINVAL,
				 "%llu nonzero value%s where the sparse matrix stores no entry (the sparsity pattern cannot change)",
				 (unsigned long long)n, n == 1 ? "" : "s");
	char num[MFS_NUM_MAX];
	size_t l = mfs_fmt_elem(num, (enum mfs_dtype)t->dtype, dense + at * es);
	return mfs_error(err, EINVAL,
			 "[%llu, %llu] is %.*s, expected 0: the sparse matrix stores no entry there "
			 "(%llu such value%s; the sparsity pattern cannot change)",
			 (unsigned long long)(at / ncols), (unsigned long long)(at % ncols), (int)l, num,
			 (unsigned long long)n, n == 1 ? "" : "s");
}

/* A sparse tensor written densely (values.txt, data.npy): the stored
 * entries take the new values; anything else must stay zero. */
int mfs_submit_dense(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *dense,
		     struct mfs_patch *p, struct mfs_err *err)
{
	unsigned es = t->esize;
	uint64_t cols = t->ndim > 1 ? t->dims[1] : 1;
	uint8_t *vals = malloc((size_t)(t->nnz * es) + 1);
	uint64_t *rows = malloc((size_t)t->nnz * 8 + 8), *cidx = malloc((size_t)t->nnz * 8 + 8);
	uint8_t *tmp = malloc((size_t)(t->nnz * es) + 1);
	static const uint8_t zero[16];
	int r = 0;
	if (!vals || !rows || !cidx || !tmp) {
		r = mfs_error(err, ENOMEM, "out of memory");
		goto out;
	}
	r = t->ops->entries(m, t, 0, t->nnz, rows, cidx, tmp, err);
	if (r < 0)
		goto out;
	uint64_t nz_in = 0, nz_all = 0;
	for (uint64_t i = 0; i < t->nnz; i++) {
		const uint8_t *v = dense + (rows[i] * cols + cidx[i]) * es;
		memcpy(vals + i * es, v, es);
		nz_in += memcmp(v, zero, es) != 0;
	}
	for (uint64_t i = 0; i < t->nelem; i++)
		nz_all += memcmp(dense + i * es, zero, es) != 0;
	if (nz_all != nz_in) {
		r = stray_nonzero(err, t, dense, rows, cidx, nz_all - nz_in);
		goto out;
	}
	r = mfs_submit_values(m, t, vals, false, p, err);
out:
	free(vals);
	free(rows);
	free(cidx);
	free(tmp);
	return r;
}

#define GATHER_BLOCK 262144u  /* elements brought to storage order and diffed at a time */

/* New values of t held in the opposite order to its storage (see struct
 * mfs_gather): described by a gather over `in`, kept in the patch. */
static const struct mfs_gather *gather_of(const struct mfs_tensor *t, const uint8_t *in,
					  struct mfs_patch *p)
{
	struct mfs_gather *g = mfs_patch_keep(p, sizeof(*g));
	if (g)
		mfs_gather_init(g, in, t->esize, t->ndim, t->dims, t->order == MFS_COL_MAJOR);
	return g;
}

/* Whether new values in the order opposite to t's storage can be diffed
 * and committed through a gather (else they are reordered whole). */
bool mfs_gatherable(const struct mfs_tensor *t)
{
	return t->ndim >= 2 && t->ndim <= MFS_GATHER_MAX_DIMS && t->nelem &&
	       !(t->flags & MFS_TF_SPARSE) && t->esize && t->esize <= 16;
}

/* New values of t in the order opposite to its storage (in), diffed a
 * block at a time, each gathered into storage order on its own: no
 * reordered copy of the whole tensor. kept: in lives as long as p; then,
 * when the codec takes gathered runs, the patch reads the changed values
 * from in at commit time. Else the changed runs' bytes are copied. */
int mfs_submit_reordered(struct mfs_model *m, const struct mfs_tensor *t, const uint8_t *in,
			 bool kept, struct mfs_patch *p, struct mfs_err *err)
{
	unsigned es = t->esize;
	const struct mfs_gather *g = gather_of(t, in, p);
	uint8_t *st = g ? malloc((size_t)GATHER_BLOCK * es) : NULL;
	if (!st)
		return mfs_error(err, ENOMEM, "out of memory");
	struct runs rs = {.gathered = kept && !t->ops && m->codec->gathered_runs};
	int r = 0;
	for (uint64_t s0 = 0; s0 < t->nelem && r == 0; s0 += GATHER_BLOCK) {
		uint64_t n = t->nelem - s0 < GATHER_BLOCK ? t->nelem - s0 : GATHER_BLOCK;
		mfs_gather_elems(g, s0, n, st);
		r = diff_range(m, t, s0, n, st, false, &rs, err);
		if (r == 0 && !rs.gathered)
			r = keep_runs(&rs, es, p, err);  /* st is reused for the next block */
	}
	free(st);
	if (r == 0)
		r = submit_runs(m, t, &rs, rs.gathered ? g : NULL, p, err);
	free(rs.v);
	return r;
}

/* New values in logical order: to storage order, then diff or submit. */
int mfs_submit_logical(struct mfs_model *m, const struct mfs_tensor *t, uint8_t *logical,
		       struct mfs_patch *p, struct mfs_err *err)
{
	if (t->flags & MFS_TF_SPARSE)
		return mfs_submit_dense(m, t, logical, p, err);
	if (t->order == MFS_ROW_MAJOR || t->ndim < 2)
		return mfs_submit_values(m, t, logical, false, p, err);
	if (mfs_gatherable(t))
		return mfs_submit_reordered(m, t, logical, false, p, err);
	uint64_t bytes = t->nelem * t->esize;
	int r = mfs_patch_hold(p, bytes, "the values in storage order", err);
	if (r < 0)
		return r;
	uint8_t *st = malloc((size_t)bytes + 1);
	if (st) {
		mfs_reorder(t->dims, t->ndim, t->esize, logical, st, true);
		r = mfs_submit_values(m, t, st, false, p, err);
		free(st);
	} else {
		r = mfs_error(err, ENOMEM, "out of memory");
	}
	mfs_patch_release(p, bytes);
	return r;
}

int mfs_submit_extents(struct mfs_model *m, const struct mfs_tensor *t,
		       const struct mfs_content *c, struct mfs_patch *p, struct mfs_err *err)
{
	unsigned es = t->esize;
	struct mfs_extent all = {0, t->nelem * es};
	const struct mfs_extent *ext = c->ext ? c->ext : &all;
	size_t next = c->ext ? c->next : 1;
	struct runs rs = {0};
	int r = 0;
	for (size_t x = 0; x < next && r == 0; x++) {
		/* Whole elements covering the written range. */
		uint64_t e0 = ext[x].off / es;
		uint64_t e1 = (ext[x].off + ext[x].len + es - 1) / es;
		if (e1 > t->nelem)
			e1 = t->nelem;
		if (x + 1 < next && ext[x + 1].off / es < e1)
			e1 = ext[x + 1].off / es;  /* the next extent continues from there */
		if (e1 <= e0)
			continue;
		uint8_t *buf = mfs_patch_keep(p, (e1 - e0) * es);
		if (!buf) {
			r = mfs_error(err, ENOMEM, "out of memory");
			break;
		}
		if (c->read(c->ctx, e0 * es, (size_t)((e1 - e0) * es), buf) < 0) {
			r = mfs_error(err, EIO, "cannot read the written content");
			break;
		}
		r = diff_range(m, t, e0, e1 - e0, buf, true, &rs, err);
	}
	if (r == 0)
		r = submit_runs(m, t, &rs, NULL, p, err);
	free(rs.v);
	return r;
}
