/* PyTorch codec (torch.save files), private parts shared by its files:
 * pytorch.c (bid, the codec table), pt_zip.c (the zip layout: data.pkl
 * and data/<key> records, read with core/zip/), pt_legacy.c (the stream
 * before PyTorch 1.6), pt_storage.c (storages by key, tensors' sizes and
 * strides), pt_tree.c (the pickled object as a tree), pt_edit.c (edits).
 * The pickle itself is read by pickle.c, which runs nothing. The tree is
 * docs/layout.md "PyTorch". */
#ifndef MFS_PYTORCH_H
#define MFS_PYTORCH_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "pickle.h"
#include "zip.h"

/* Nesting of values (containers in containers) shown at most. */
#define PT_DEPTH_MAX 1000u
/* Dimensions of a tensor at most. */
#define PT_NDIM_MAX 1024u

/* One storage: the elements of a `data/<key>` record (or of the legacy
 * stream's storage section), shared by every tensor over it. */
struct pt_storage {
	uint32_t key;           /* its key: a PK_STR value of the pickle */
	const char *name;       /* the key as text (user.modelfs.storage) */
	uint8_t dtype;          /* enum mfs_dtype (MFS_DT_OPAQUE: tname) */
	uint32_t esize;
	const char *tname;      /* the dtype file's text of an opaque storage */
	uint64_t off;           /* source offset of its first byte */
	uint64_t bytes;         /* bytes it has */
	uint32_t member;        /* its zip member, or UINT32_MAX (legacy) */
	uint32_t ntensors;      /* tensors over it */
	bool placed;            /* off and bytes are known */
};

/* One tensor: a view of a storage. */
struct pt_view {
	uint32_t storage;
	uint32_t ndim;
	uint64_t offset;        /* storage offset, in elements */
	uint64_t *sizes, *strides;
	bool overlap;           /* some elements share memory (read-only) */
	uint32_t args;          /* its _rebuild_tensor arguments (a PK_TUPLE) */
};

struct pt {
	bool legacy;
	struct mfs_zip zip;
	struct mfs_zip_reader *reader;
	uint32_t pkl_member;    /* data.pkl (zip) */
	const uint8_t *top;     /* "<top>/" of the records' names */
	uint32_t top_len;
	uint32_t *rec_hash;     /* `<top>/data/<key>` records by key: member + 1 (0: free) */
	uint32_t rec_hcap;
	uint8_t *pkl_buf;       /* an inflated data.pkl (else NULL) */
	uint64_t pkl_off;       /* source offset of the pickle, UINT64_MAX when deflated */
	struct pk pk;
	struct pt_storage *st;
	uint32_t nst, capst;
	uint32_t *st_hash;      /* key hash -> storage index + 1 (0: free) */
	uint32_t st_hcap;
	struct pt_view *views;
	uint32_t nviews, capviews;
	/* the legacy stream: its storage keys in order (PK_STR values) */
	uint64_t legacy_data;   /* where the storages' section starts */
};

/* ---- the layouts --------------------------------------------------------- */

/* Whether the first bytes are a torch.save zip's local header of a record
 * `<top>/data.pkl` (or another record torch writes), or the legacy magic. */
bool pt_zip_head(const uint8_t *head, size_t n);
bool pt_legacy_head(const uint8_t *head, size_t n);
/* Find data.pkl and parse the pickle into pt->pk (pt_zip.c). -ENOTSUP for a
 * TorchScript archive. */
int pt_zip_open(struct mfs_model *m, struct pt *pt, struct mfs_err *err);
/* The record of storage key s (pt_zip.c): its offset and bytes, member. */
int pt_zip_record(struct mfs_model *m, struct pt *pt, struct pt_storage *s, struct mfs_err *err);
/* The legacy stream (pt_legacy.c): the magic, protocol and system-info
 * pickles, the object pickle into pt->pk, the key list and the storages'
 * offsets. */
int pt_legacy_open(struct mfs_model *m, struct pt *pt, struct mfs_err *err);

/* The pickle reader's tables charged to m's index budget (runtime.h) as
 * they grow. */
struct pk_budget pt_budget(struct mfs_model *m);

/* ---- storages and tensors (pt_storage.c) ---------------------------------- */

/* The storage a persistent id (a PK_PERSID value) names, found by its key
 * or made (its record looked up in a zip; the legacy layout places its
 * storages once all are known): its index into *out. 0 or -EINVAL. */
int pt_storage_of(struct mfs_model *m, struct pt *pt, uint32_t persid, uint32_t *out,
		  struct mfs_err *err);
/* The storage whose key is s[0, n), or UINT32_MAX. */
uint32_t pt_storage_find(const struct pt *pt, const uint8_t *s, uint64_t n);
/* The tensor of a rebuild call v (already known to be one: pt_tensor_call):
 * its storage found or made, sizes and strides checked against it; t set
 * for mfs_add_tensor, t->tag its view index. 0 or -EINVAL with a message. */
int pt_tensor(struct mfs_model *m, struct pt *pt, uint32_t v, struct mfs_tensor *t,
	      struct mfs_err *err);
/* The arguments (a tuple) of the _rebuild_tensor(_v2) call a value is,
 * through _rebuild_parameter and _rebuild_from_type_v2, or PK_NIL. */
uint32_t pt_tensor_call(const struct pk *pk, uint32_t v);
/* Strided views' elements in logical order (t->tag: the view). */
extern const struct mfs_tensor_ops pt_strided_ops;
/* The storage index of logical element r of view w. */
uint64_t pt_view_index(const struct pt_view *w, uint64_t r);

/* ---- the tree (pt_tree.c) and edits (pt_edit.c) --------------------------- */

int pt_tree(struct mfs_model *m, struct pt *pt, struct mfs_err *err);
/* Whether tensor t may change shape through data.npy (pt_reshape.c): a
 * row-major tensor of a zip alone on its storage, covering it, its sizes
 * and strides plain tuples; and the edit that does it. */
bool pt_reshapable(const struct pt *pt, const struct mfs_tensor *t);
int pt_reshape(struct mfs_model *m, const struct pt *pt, const struct mfs_tensor *t,
	       const struct mfs_edit *e, struct mfs_patch *p, struct mfs_err *err);
int pt_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
	    struct mfs_err *err);
/* The i-th cell's value of a value's element list (i < n). */
uint32_t pt_elem(const struct pk *pk, const struct pk_val *v, uint32_t i);

#endif
