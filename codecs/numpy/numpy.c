/* NumPy .npy files (and, through npz.c, .npz archives): recognising them,
 * indexing a .npy as one tensor directory plus `header`, and its edits:
 * values patched in place, a new shape written as a new header and array.
 * docs/layout.md "NumPy". */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "numpy.h"
#include "numtext.h"

static bool is_npy(const uint8_t *head, size_t n)
{
	return n >= 6 && !memcmp(head, "\x93NUMPY", 6);
}

static int numpy_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	(void)size;
	if (is_npy(head, n) && n >= 8 && head[6] >= 1 && head[6] <= 3 && !head[7])
		return 64 + (mfs_has_ext(name, ".npy") ? 8 : 0);
	if (!mfs_has_ext(name, ".npy") && !mfs_has_ext(name, ".npz"))
		return 0;
	/* A zip is claimed by its extension too: PyTorch checkpoints and many
	 * other formats are zips. An empty archive starts with its end record.
	 * Any other .npy or .npz bids by its name alone, so that open says why
	 * it is not one. */
	if (n >= 4 && mfs_has_ext(name, ".npz") &&
	    (!memcmp(head, "PK\x03\x04", 4) || !memcmp(head, "PK\x05\x06", 4)))
		return 40;
	return 8;
}

/* The tensor of an array described by h at offset off of the source. */
void npy_tensor(const struct mfs_npy_head *h, uint64_t off, struct mfs_tensor *t)
{
	memset(t, 0, sizeof(*t));
	t->dtype = h->dtype;
	t->order = h->fortran && h->ndim > 1 ? MFS_COL_MAJOR : MFS_ROW_MAJOR;
	t->swap = h->swap;
	t->flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE;
	t->ndim = h->ndim;
	t->dims = h->dims;
	t->off = off;
}

void npy_long_double(struct mfs_tensor *t, const uint8_t *data, size_t n)
{
	if (t->dtype != MFS_DT_F128 && t->dtype != MFS_DT_C256)
		return;
	uint8_t s[NPY_LONG_SAMPLE];
	n = (n < sizeof(s) ? n : sizeof(s)) / 16 * 16;
	memcpy(s, data, n);
	if (t->swap)
		mfs_swap_elems(s, n / 16, 16);
	if (mfs_f128_x87(s, n / 16))
		return;
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)t->dtype);
	t->tname = di->name;
	t->esize = di->size;
	t->dtype = MFS_DT_OPAQUE;
}

static int npy_open(struct mfs_model *m, struct mfs_err *err)
{
	struct mfs_npy_head *h = mfs_model_alloc(m, sizeof(*h));
	if (!h)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = mfs_npy_parse(m->base, m->size, h, err);
	if (r < 0)
		return r;
	if (h->data_off > m->size || h->bytes > m->size - h->data_off)
		return mfs_error(err, EINVAL, "truncated: the .npy header says %llu bytes of data at byte %llu, the file has %llu",
				 (unsigned long long)h->bytes, (unsigned long long)h->data_off,
				 (unsigned long long)m->size);
	m->priv = h;
	struct mfs_tensor t;
	npy_tensor(h, h->data_off, &t);
	npy_long_double(&t, m->base + h->data_off, (size_t)(h->bytes < NPY_LONG_SAMPLE ? h->bytes : NPY_LONG_SAMPLE));
	mfs_attach_tensor(m, MFS_ROOT, &t);
	mfs_add_text(m, MFS_ROOT, "header", 6, (const char *)m->base + h->dict_off, h->dict_len, 0);
	return 0;
}

/* Whether m is read as a .npy file: by its magic, or by its name (one
 * without the magic is refused by the header parser, which says what it
 * found); else it is a .npz archive. */
static bool npy_file(const struct mfs_model *m)
{
	return is_npy(m->base, m->size) || mfs_has_ext(m->name, ".npy");
}

static int numpy_open(struct mfs_model *m, struct mfs_err *err)
{
	if (npy_file(m))
		return npy_open(m, err);
	return npz_open(m, err);
}

static void numpy_close(struct mfs_model *m)
{
	if (npy_file(m))
		return;  /* the head is in the model's arena */
	npz_close(m);
}

static int npy_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err)
{
	const struct mfs_npy_head *h = m->priv;
	if (e->kind != MFS_E_TENSOR || e->tensor >= m->ntensors)
		return mfs_error(err, EACCES, "read-only");
	const struct mfs_tensor *t = &m->tensors[e->tensor];
	if (!e->reshape)
		return mfs_patch_raw_runs(p, t, e, err);
	struct npy_new *nw = mfs_patch_keep(p, sizeof(*nw));
	if (!nw)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = npy_new_make(nw, p, h, t, e, err);
	if (r < 0)
		return r;
	/* The header, then the elements; bytes after the array (NumPy
	 * ignores them) stay after it. */
	if (mfs_patch_ref(p, 0, h->data_off, nw->head, nw->hl) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	return npy_new_elems(p, nw, h->data_off, h->bytes, err);
}

static int numpy_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		      struct mfs_err *err)
{
	if (npy_file(m))
		return npy_edit(m, e, p, err);
	return npz_edit(m, e, p, err);
}

/* A file without the magic is read as a .npy by its name alone. */
static int numpy_name_class(const char *name)
{
	return mfs_has_ext(name, ".npy");
}

const struct mfs_codec mfs_codec_numpy = {
	.name = "numpy",
	.title = "NumPy",
	.sidecar = NULL,
	.bid = numpy_bid,
	.open = numpy_open,
	.close = numpy_close,
	.edit = numpy_edit,
	.name_class = numpy_name_class,
};
