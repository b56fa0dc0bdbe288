/* A checked safetensors header as the tree of LAYOUT.md "safetensors":
 * header.json, metadata/<key>, tensors/ (dotted names) and index; the
 * format's dtypes and what each shows as. */
#include <errno.h>
#include <string.h>

#include "dotted.h"
#include "safetensors.h"

struct dt_row {
	const char *s;
	enum mfs_dtype dt;
	unsigned bits;
};

/* Every dtype of the reference library (its Dtype and bitsize) with the
 * element type of the table it shows as; the sub-byte, exponent-only and
 * FNUZ ones have none and show as opaque elements (shape, dtype, data). */
static const struct dt_row dtypes[] = {
	{"BOOL", MFS_DT_BOOL, 8}, {"U8", MFS_DT_U8, 8}, {"I8", MFS_DT_I8, 8},
	{"U16", MFS_DT_U16, 16}, {"I16", MFS_DT_I16, 16}, {"U32", MFS_DT_U32, 32},
	{"I32", MFS_DT_I32, 32}, {"U64", MFS_DT_U64, 64}, {"I64", MFS_DT_I64, 64},
	{"F16", MFS_DT_F16, 16}, {"BF16", MFS_DT_BF16, 16}, {"F32", MFS_DT_F32, 32},
	{"F64", MFS_DT_F64, 64}, {"F8_E4M3", MFS_DT_F8E4M3, 8}, {"F8_E5M2", MFS_DT_F8E5M2, 8},
	{"C64", MFS_DT_C64, 64}, {"F4", MFS_DT_OPAQUE, 4}, {"F6_E2M3", MFS_DT_OPAQUE, 6},
	{"F6_E3M2", MFS_DT_OPAQUE, 6}, {"F8_E8M0", MFS_DT_OPAQUE, 8},
	{"F8_E4M3FNUZ", MFS_DT_OPAQUE, 8}, {"F8_E5M2FNUZ", MFS_DT_OPAQUE, 8},
};

unsigned mfs_st_dtype(const char *s, enum mfs_dtype *dt)
{
	for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
		if (!strcmp(dtypes[i].s, s)) {
			*dt = dtypes[i].dt;
			return dtypes[i].bits;
		}
	}
	*dt = MFS_DT_OPAQUE;
	return 0;
}

/* The tensor a header entry shows. A dtype of the format is shown with the
 * header's shape: a dtype of the table as itself; an opaque one as
 * elements of its size, or packed bits (the byte length was checked to be
 * whole). A dtype the format does not define, whose size is not known, as
 * opaque elements of bytes / elements each when that divides (at most 64
 * bytes), else as one dimension of bytes. */
static void tensor_of(const struct st_entry *e, const struct st_tensor *st, uint64_t off,
		      struct mfs_tensor *t, uint64_t *one)
{
	uint64_t bytes = st->end - st->begin;
	*t = (struct mfs_tensor){.dtype = (uint8_t)e->dt, .ndim = e->ndim, .dims = e->dims,
				 .off = off};
	if (e->dt != MFS_DT_OPAQUE) {
		t->flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE;
		return;
	}
	t->flags = MFS_TF_WRITABLE;
	t->tname = e->tname;
	if (e->bits) {
		if (e->bits < 8)
			t->bits = (uint8_t)e->bits;
		else
			t->esize = e->bits / 8;
		return;
	}
	uint64_t n = 1;
	for (uint32_t k = 0; k < e->ndim; k++)
		n *= e->dims[k];  /* checked by check_layout */
	if (!n && !bytes) {
		t->esize = 1;
		return;
	}
	if (n && bytes % n == 0 && bytes / n >= 1 && bytes / n <= 64) {
		t->esize = (uint32_t)(bytes / n);
		return;
	}
	*one = bytes;
	t->ndim = 1;
	t->dims = one;
	t->esize = 1;
}

int mfs_st_build_tree(struct st_parse *h)
{
	struct mfs_model *m = h->m;
	const struct mfs_json *j = &h->j;
	struct st_file *f = h->f;
	mfs_add_raw(m, MFS_ROOT, "header.json", 11, 8, f->hlen, 0);
	mfs_id md = mfs_add_dir(m, MFS_ROOT, "metadata", 8);
	for (uint32_t i = 0; i < f->nmeta; i++) {
		uint32_t c = h->mnodes[i];
		mfs_id id = mfs_add_text(m, md, mfs_json_key(j, c), mfs_json_keylen(j, c),
					 mfs_json_text(j, c), mfs_json_textlen(j, c), MFS_NF_WRITABLE);
		mfs_set_tag(m, id, i);
	}
	mfs_id td = mfs_add_dir(m, MFS_ROOT, "tensors", 7);
	struct mfs_dotted *d = mfs_dotted_new(m, td, ".");
	if (!d)
		return mfs_error(h->err, ENOMEM, "out of memory");
	uint64_t data = 8 + f->hlen;
	for (uint32_t i = 0; i < f->ntensors; i++) {
		struct mfs_tensor t;
		uint64_t one;
		tensor_of(&h->e[i], &f->t[i], data + f->t[i].begin, &t, &one);
		t.tag = i;
		uint32_t c = h->e[i].node;
		mfs_dotted_add(d, mfs_json_key(j, c), mfs_json_keylen(j, c), &t, t.off,
			       f->t[i].end - f->t[i].begin);
	}
	mfs_dotted_finish(d, MFS_ROOT);
	return 0;
}
