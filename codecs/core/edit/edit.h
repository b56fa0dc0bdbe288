/* Edits and patches: a change to one node, and the source spans it rewrites.
 *
 * The views turn what a user wrote into an mfs_edit (parsed and checked
 * values); the codec turns the edit into an mfs_patch (see codec.h); the
 * commit engine (commit.h) applies the patch to the source file atomically.
 */
#ifndef MFS_EDIT_H
#define MFS_EDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "gather.h"
#include "model.h"

enum mfs_edit_kind {
	MFS_E_TEXT = 1,  /* a MFS_V_TEXT or MFS_V_RAW node gets new content */
	MFS_E_TENSOR,    /* some elements of a tensor change, or all with a new shape */
	MFS_E_ENTRIES,   /* MFS_TF_SPARSE: some stored entries change value */
};

struct mfs_edit {
	enum mfs_edit_kind kind;
	mfs_id node;                /* TEXT: the file; TENSOR/ENTRIES: the tensor directory */

	/* MFS_E_TEXT: the new content, one trailing newline already removed for
	 * MFS_V_TEXT nodes (RAW and MFS_NF_EXACT nodes get the bytes as
	 * written). */
	const char *text;
	size_t len;

	/* MFS_E_TENSOR / MFS_E_ENTRIES */
	uint32_t tensor;            /* index in m->tensors */
	bool reshape;               /* dtype, ndim, dims are new (the tensor allowed it)
				       and the runs cover every element */
	enum mfs_dtype dtype;
	uint32_t ndim;
	const uint64_t *dims;
	const struct mfs_run *runs; /* changed elements (or entries), sorted, disjoint */
	size_t nruns;
	/* Non-NULL: the runs have no bytes; their values come from here. Only
	 * for MFS_E_TENSOR edits without reshape of raw-storage tensors, and only
	 * to codecs that take them (mfs_codec.gathered_runs). */
	const struct mfs_gather *gather;
};

/* A span's new bytes made as the commit writes them (a member compressed
 * again while it is written): read gives bytes [from, from + n) of them
 * into out, asked for in order from 0 (a from before the last one's end
 * starts over), 0 or -errno with a message; free (optional) releases it
 * with the patch, before its buffers (a generator may live in one). A
 * patch that holds one is never applied in place: its bytes may be made
 * from the very bytes they replace. */
struct mfs_gen {
	int (*read)(struct mfs_gen *g, uint64_t from, uint64_t n, uint8_t *out,
		    struct mfs_err *err);
	void (*free)(struct mfs_gen *g);
	struct mfs_gen *next;       /* the patch's list (mfs_patch_generated) */
};

/* One replaced span of the source: bytes [off, off + len) become data[0, dlen),
 * or, when data is NULL and dlen > 0, bytes [src_off, src_off + dlen) of
 * src's elements in storage order (read them with mfs_span_bytes), or
 * gen's bytes (mfs_span_read). */
struct mfs_span {
	uint64_t off, len;
	const uint8_t *data;
	uint64_t dlen;
	const struct mfs_gather *src;
	uint64_t src_off;
	struct mfs_gen *gen;
};

struct mfs_patch {
	struct mfs_span *spans;     /* sorted by off and disjoint after mfs_patch_sort */
	size_t n, cap;
	struct mfs_patch_buf *bufs; /* owned copies */
	struct mfs_gen *gens;       /* owned generators */
	bool has_sidecar;           /* the sidecar gets new content */
	uint8_t *sidecar;
	size_t sidecar_len;
	/* What the edit may hold in memory: the patch's own buffers (counted
	 * by mfs_patch_alloc, _keep, _put), and what views and codecs count
	 * with mfs_patch_hold (parsed values, compression windows). limit is
	 * set by the caller after mfs_patch_init (0: none); refused is the
	 * size of the last buffer the limit refused. */
	uint64_t limit, held, refused;
};

void mfs_patch_init(struct mfs_patch *p);
void mfs_patch_free(struct mfs_patch *p);
/* Replace [off, off + len) by a copy of data[0, dlen). */
int mfs_patch_put(struct mfs_patch *p, uint64_t off, uint64_t len, const void *data,
		  uint64_t dlen);
/* Same, returning a buffer of dlen bytes for the caller to fill (NULL on ENOMEM). */
uint8_t *mfs_patch_alloc(struct mfs_patch *p, uint64_t off, uint64_t len, uint64_t dlen);
/* Same without a copy: data must outlive the patch. */
int mfs_patch_ref(struct mfs_patch *p, uint64_t off, uint64_t len, const void *data,
		  uint64_t dlen);
/* Same, the data being bytes [src_off, src_off + dlen) of src's elements in
 * storage order; src must outlive the patch. */
int mfs_patch_gathered(struct mfs_patch *p, uint64_t off, uint64_t len,
		       const struct mfs_gather *src, uint64_t src_off, uint64_t dlen);
/* Same, the data being g's bytes [0, dlen); p owns g from here on (it is
 * freed with p, also when this fails). */
int mfs_patch_generated(struct mfs_patch *p, uint64_t off, uint64_t len, struct mfs_gen *g,
			uint64_t dlen);
/* Bytes [from, from + n) of s's new data, into out (s has no gen). */
void mfs_span_bytes(const struct mfs_span *s, uint64_t from, uint64_t n, uint8_t *out);
/* The same for any span: 0, or -errno with a message (a gen's). */
int mfs_span_read(const struct mfs_span *s, uint64_t from, uint64_t n, uint8_t *out,
		  struct mfs_err *err);
/* Memory owned by the patch that is not a span: for data that spans (or an
 * edit's runs, which spans may refer to) must keep while the patch lives. */
void *mfs_patch_keep(struct mfs_patch *p, uint64_t size);
/* bytes more held by the edit (what names them for the message: "parsed
 * values"): 0, or -EFBIG with a message when that passes p->limit (then
 * nothing is counted). mfs_patch_release gives them back. */
int mfs_patch_hold(struct mfs_patch *p, uint64_t bytes, const char *what, struct mfs_err *err);
void mfs_patch_release(struct mfs_patch *p, uint64_t bytes);
/* Bytes the edit may still hold (UINT64_MAX without a limit). */
uint64_t mfs_patch_room(const struct mfs_patch *p);
/* An edit that failed with r: -EFBIG with the limit's message when r is
 * -ENOMEM because the limit refused a buffer of the patch, else r. */
int mfs_patch_refusal(const struct mfs_patch *p, int r, struct mfs_err *err);
int mfs_patch_set_sidecar(struct mfs_patch *p, const void *data, size_t len);
/* Sort the spans and refuse overlaps. (Spans that change nothing are
 * dropped by the views, which can compare with the source.) */
int mfs_patch_sort(struct mfs_patch *p, struct mfs_err *err);
/* Size of the source after the patch. */
uint64_t mfs_patch_new_size(const struct mfs_patch *p, uint64_t old_size);
/* True when every span keeps its length and none is generated (an in-place
 * patch is possible). */
bool mfs_patch_same_size(const struct mfs_patch *p);
/* Bytes [off, off + len) of the patched source, read from base + patch: 0,
 * or -errno (a generated span's). */
int mfs_patch_read(const struct mfs_patch *p, const uint8_t *base, uint64_t base_size,
		    uint64_t off, uint64_t len, uint8_t *out);

/* For raw-storage tensors (ops == NULL) with an unchanged shape: the runs of
 * e, at t->off, byte-swapped where t->swap. Codecs call it from edit(). The
 * patch may refer to the runs' bytes (or e's gather): they outlive it. */
int mfs_patch_raw_runs(struct mfs_patch *p, const struct mfs_tensor *t,
		       const struct mfs_edit *e, struct mfs_err *err);

/* For a reshape (e->reshape): the runs of e, which give every element in
 * order, copied to d (nelem * esize bytes). 0, or -EINVAL when they do not. */
int mfs_reshape_fill(uint8_t *d, const struct mfs_edit *e, uint64_t nelem, uint32_t esize,
		     struct mfs_err *err);

#endif
