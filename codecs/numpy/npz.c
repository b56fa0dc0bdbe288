/* .npz archives: each `.npy` member a tensor under tensors/ (its name
 * without `.npy`, split at `.` and `/`), with `index`; other members as
 * read-only files under files/. Stored members are raw storage at their
 * data offset; deflated ones are read through the archive's inflate
 * cursors (npz_read.c, core/zip/). A member that
 * is not a valid .npy is a file, one whose bytes cannot be read (an unknown
 * method, a bad stream) is left out: either with a note (an errors line),
 * the other members shown as usual, as numpy.load reads them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "dotted.h"
#include "numpy.h"

/* Deflated members are inflated whole at open (CRC-32 and sizes checked, so
 * a corrupt small archive is refused with an errors line rather than failing
 * reads) up to this many uncompressed bytes per archive; the rest are
 * checked when read through (EIO). */
#define VERIFY_BUDGET (16u << 20)
/* Deflate expands at most 1032 times (a 258-byte match in under 2 bits). */
#define DEFLATE_MAX_RATIO 1100u

static bool npy_name(const struct mfs_zip_member *zm)
{
	return zm->name_len > 4 && !memcmp(zm->name + zm->name_len - 4, ".npy", 4);
}

/* The .npy header of a deflated member, inflated into a buffer. */
static int deflated_head(struct mfs_model *m, uint32_t i, struct mfs_npy_head *h,
			 struct mfs_err *err)
{
	const struct mfs_zip_member *zm = &((struct npz *)m->priv)->zip.mem[i];
	uint8_t pre[12];
	uint64_t n = zm->usize < 12 ? zm->usize : 12;
	int r = npz_member_read(m, i, 0, n, pre, err);
	if (r < 0)
		return r;
	if (n < 10 || memcmp(pre, "\x93NUMPY", 6) != 0)
		return mfs_npy_parse(pre, n, h, err);
	uint64_t hl = n;  /* npy_parse says what is wrong with a short one */
	if (pre[6] == 1)
		hl = 10 + (uint64_t)mfs_le16(pre + 8);
	else if (n == 12)
		hl = 12 + (uint64_t)mfs_le32(pre + 8);
	if (hl > zm->usize)
		hl = zm->usize;
	if (hl > MFS_NPY_HEADER_MAX + 12)
		hl = MFS_NPY_HEADER_MAX + 12;  /* npy_parse refuses it */
	uint8_t *buf = malloc((size_t)hl);
	if (!buf)
		return mfs_error(err, ENOMEM, "out of memory");
	r = npz_member_read(m, i, 0, hl, buf, err);
	if (r == 0)
		r = mfs_npy_parse(buf, hl, h, err);
	free(buf);
	return r;
}

/* Inflate member i whole, discarding it: its stream, sizes and CRC-32 are
 * checked at its end (core/zip/zip_inflate.c). */
static int verify(struct mfs_model *m, uint32_t i, uint64_t usize, struct mfs_err *err)
{
	uint8_t buf[16384];
	int r = 0;
	for (uint64_t off = 0; off < usize && r == 0; off += sizeof(buf)) {
		uint64_t n = usize - off < sizeof(buf) ? usize - off : sizeof(buf);
		r = npz_member_read(m, i, off, n, buf, err);
	}
	return r;
}

/* What a member becomes. */
enum member { M_FILE, M_TENSOR, M_NONE };

/* A member left out of the tree, or shown as a file, for the reason in err:
 * a note naming it (the archive's other members are shown as usual). */
static int noted(struct mfs_model *m, const struct mfs_zip_member *zm, enum member as,
		 struct mfs_err *err)
{
	char q[MFS_QUOTE_MAX];
	mfs_model_note(m, "member %s: %s; %s", mfs_quote(q, zm->name, zm->name_len), err->msg,
		       as == M_FILE ? "shown under files/" : "not shown");
	mfs_err_clear(err);
	return as;
}

/* Whether member i's bytes can be read: its method, its sizes, and for
 * deflated members within the budget, the whole stream. M_FILE if so. */
static int readable(struct mfs_model *m, uint32_t i, uint64_t *budget, struct mfs_err *err)
{
	const struct mfs_zip_member *zm = &((struct npz *)m->priv)->zip.mem[i];
	int r = 0;
	if (zm->flags & 1)
		r = mfs_error(err, ENOTSUP, "it is encrypted");
	else if (zm->method != 0 && zm->method != 8)
		r = mfs_error(err, ENOTSUP, "its compression method %u is not supported",
			      (unsigned)zm->method);
	else if (zm->method == 0 && zm->csize != zm->usize)
		r = mfs_error(err, EINVAL, "it is stored but says %llu bytes compressed and %llu uncompressed",
			      (unsigned long long)zm->csize, (unsigned long long)zm->usize);
	else if (zm->method == 8 && zm->usize / DEFLATE_MAX_RATIO > zm->csize)
		/* A zip bomb, or a lying size: nothing is inflated. */
		r = mfs_error(err, EINVAL, "it declares %llu bytes from %llu deflated, more than deflate can expand to",
			      (unsigned long long)zm->usize, (unsigned long long)zm->csize);
	else if (zm->method == 8 && zm->usize <= *budget) {
		*budget -= zm->usize;
		r = verify(m, i, zm->usize, err);
	}
	if (r == -ENOMEM)
		return r;
	return r < 0 ? noted(m, zm, M_NONE, err) : M_FILE;
}

/* Member i as a tensor, when it is a .npy of a dtype modelfs shows: M_TENSOR
 * (z->heads[i] set), M_FILE (not an array, or not a valid .npy: noted),
 * M_NONE (its bytes cannot be read: noted), or -ENOMEM. */
static int classify(struct mfs_model *m, uint32_t i, uint64_t *budget, struct mfs_err *err)
{
	struct npz *z = m->priv;
	const struct mfs_zip_member *zm = &z->zip.mem[i];
	struct mfs_npy_head *h = &z->heads[i];
	int r = readable(m, i, budget, err);
	if (r != M_FILE || !npy_name(zm))
		return r;
	if (zm->method == 0)
		r = mfs_npy_parse(m->base + zm->data_off, zm->csize, h, err);
	else
		r = deflated_head(m, i, h, err);
	if (r == 0 && (h->data_off > zm->usize || h->bytes != zm->usize - h->data_off))
		r = mfs_error(err, EINVAL, "the .npy header says %llu bytes of data at byte %llu, the member has %llu bytes",
			      (unsigned long long)h->bytes, (unsigned long long)h->data_off,
			      (unsigned long long)zm->usize);
	if (r == 0)
		return M_TENSOR;
	memset(h, 0, sizeof(*h));  /* dtype MFS_DT_INVALID: not a tensor */
	if (r == -ENOMEM)
		return r;
	if (r == -ENOTSUP) {  /* strings, structured, objects: a file, silently */
		mfs_err_clear(err);
		return M_FILE;
	}
	return noted(m, zm, r == -EIO ? M_NONE : M_FILE, err);
}

/* Member i, a .npy whose header z->heads[i] holds, as a tensor. */
static void add_tensor(struct mfs_model *m, struct mfs_dotted *d, uint32_t i)
{
	struct npz *z = m->priv;
	const struct mfs_zip_member *zm = &z->zip.mem[i];
	const struct mfs_npy_head *h = &z->heads[i];
	struct mfs_tensor t;
	npy_tensor(h, zm->data_off + h->data_off, &t);
	t.tag = i;
	uint64_t off = t.off;
	if ((zm->flags & 8) && !zm->dd_len)  /* a data descriptor not found whole */
		t.flags = 0;
	size_t head = (size_t)(h->bytes < NPY_LONG_SAMPLE ? h->bytes : NPY_LONG_SAMPLE);
	if (zm->method == 8) {
		uint8_t first[NPY_LONG_SAMPLE];
		struct mfs_err err = {0};
		if (t.dtype != MFS_DT_F128 && t.dtype != MFS_DT_C256)
			head = 0;
		else if (npz_member_read(m, i, h->data_off, head, first, &err) < 0)
			head = 0;  /* its reads fail later, with EIO */
		npy_long_double(&t, first, head);
		t.ops = &npz_deflated_ops;
		t.swap = 0;  /* deflated_read swaps */
		t.off = 0;
		off = UINT64_MAX;
	} else {
		npy_long_double(&t, m->base + t.off, head);
	}
	mfs_dotted_add(d, zm->name, zm->name_len - 4, &t, off, h->bytes);
}

/* Member i as a read-only file under files/ (made on first use). */
static void add_file(struct mfs_model *m, mfs_id *files, uint32_t i)
{
	const struct mfs_zip_member *zm = &((struct npz *)m->priv)->zip.mem[i];
	if (*files == MFS_NONE)
		*files = mfs_add_dir(m, MFS_ROOT, "files", 5);
	if (zm->method == 0)
		mfs_add_raw(m, *files, zm->name, zm->name_len, zm->data_off, zm->csize, 0);
	else
		mfs_add_stream(m, *files, zm->name, zm->name_len, &npz_member_ops, zm->usize, i);
}

int npz_open(struct mfs_model *m, struct mfs_err *err)
{
	struct npz *z = calloc(1, sizeof(*z));
	if (!z)
		return mfs_error(err, ENOMEM, "out of memory");
	m->priv = z;
	int r = mfs_zip_read(m->base, m->size, &z->zip, err);
	if (r < 0)
		return r;
	if (mfs_zip_reader_new(&z->reader, m->base, &z->zip) < 0)
		return mfs_error(err, ENOMEM, "out of memory");
	z->heads = calloc(z->zip.n ? z->zip.n : 1, sizeof(*z->heads));
	if (!z->heads)
		return mfs_error(err, ENOMEM, "out of memory");
	mfs_id tensors = mfs_add_dir(m, MFS_ROOT, "tensors", 7), files = MFS_NONE;
	uint64_t budget = VERIFY_BUDGET;
	struct mfs_dotted *d = mfs_dotted_new(m, tensors, "./");
	if (!d)
		return mfs_error(err, ENOMEM, "out of memory");
	for (uint32_t i = 0; i < z->zip.n && r >= 0; i++) {
		r = classify(m, i, &budget, err);
		if (r == M_TENSOR)
			add_tensor(m, d, i);
		else if (r == M_FILE)
			add_file(m, &files, i);
	}
	mfs_dotted_finish(d, r < 0 ? MFS_NONE : MFS_ROOT);
	return r < 0 ? r : 0;
}

void npz_close(struct mfs_model *m)
{
	struct npz *z = m->priv;
	if (!z)
		return;
	mfs_zip_reader_free(z->reader);
	mfs_zip_free(&z->zip);
	free(z->heads);
	free(z);
	m->priv = NULL;
}
