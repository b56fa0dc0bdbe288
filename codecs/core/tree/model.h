/* The format-neutral model: a tree of nodes (directories, files, links) built
 * by a codec when it indexes a source file, and the tensors those nodes show.
 *
 * A model is built once by mfs_model_open*() and is read-only afterwards,
 * except for caches that views fill on first use (guarded internally), so any
 * number of threads may read it at once. Every pointer in it lives as long as
 * the model. The source bytes (base, size) may be a shared mapping of a file
 * that someone else truncates: touch them only inside mfs_guarded() (every
 * entry point of the core does so for its callees, codecs included).
 */
#ifndef MFS_MODEL_H
#define MFS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"
#include "error.h"

typedef uint32_t mfs_id;
#define MFS_NONE ((mfs_id)UINT32_MAX)
#define MFS_ROOT ((mfs_id)0)     /* the model directory itself */

enum mfs_kind { MFS_K_DIR = 1, MFS_K_FILE, MFS_K_LINK };

/* What a file node shows. Directories and links have MFS_V_NONE. */
enum mfs_view {
	MFS_V_NONE = 0,
	MFS_V_TEXT,    /* a one-value text file (content held by the node) */
	MFS_V_RAW,     /* a byte range of the source, shown as it is */
	MFS_V_SHAPE,   /* tensor views: see docs/layout.md "Tensor directories" */
	MFS_V_DTYPE,
	MFS_V_VALUES,
	MFS_V_DATA,
	MFS_V_NPY,
	MFS_V_MTX,     /* sparse tensors: MatrixMarket coordinate, 1-based */
	MFS_V_CSV,     /* frames: header line of labels, one line per row */
	MFS_V_COUNT
};

/* Node flags */
#define MFS_NF_WRITABLE 0x01u   /* the file accepts writes */
#define MFS_NF_TEXTLINK 0x02u   /* a link whose target is text (u.tlink), leading
				   out of the model (a sibling model's tensor) */
#define MFS_NF_EXACT    0x04u   /* a text file whose content is exact bytes (a
				   pickled bytes value): no newline is appended
				   to it nor taken from what is written */

struct mfs_node {
	mfs_id parent;            /* MFS_NONE for the root */
	mfs_id first, next;       /* children in file order; next sibling */
	uint32_t nchild;          /* number of children */
	uint32_t ndirs;           /* children that are directories (for st_nlink) */
	uint8_t kind;             /* enum mfs_kind */
	uint8_t view;             /* enum mfs_view */
	uint8_t flags;            /* MFS_NF_* */
	const char *name;         /* escaped (docs/layout.md "Names"), unique among siblings */
	union {
		struct { const char *s; uint64_t len; } text;  /* V_TEXT: content, newline included */
		struct { uint64_t off, len; } raw;             /* V_RAW: source range */
		mfs_id link;                                   /* K_LINK: the target node */
		/* K_LINK with MFS_NF_TEXTLINK: node is MFS_NONE (so u.link is
		 * too), target the relative path shown by readlink */
		struct { mfs_id node; const char *target; } tlink;
		uint32_t tensor;      /* tensor directories and their views: index in tensors[] */
		uint32_t frame;       /* V_CSV: index in frames[] */
	} u;
	uint64_t tag;             /* the codec's own reference, for its edit() */
};

/* Storage order of a tensor's elements (what `data` and data.npy show). */
enum mfs_order { MFS_ROW_MAJOR = 0, MFS_COL_MAJOR = 1 };

/* Tensor flags */
#define MFS_TF_WRITABLE 0x01u  /* values.txt, data and data.npy accept writes */
#define MFS_TF_RESHAPE  0x02u  /* data.npy (and char8 values.txt) may change the shape */
#define MFS_TF_RETYPE   0x04u  /* data.npy may change the dtype */
#define MFS_TF_SPARSE   0x08u  /* stored entries only (ops->entries); adds matrix.mtx */
#define MFS_TF_NODATA   0x10u  /* no `data` view (storage is not one dense block) */
#define MFS_TF_NODENSE  0x20u  /* no dense views either (values.txt, data.npy): a
				  sparse tensor too large to show densely */
#define MFS_TF_TNAME    0x40u  /* `dtype` shows tname, the format's own element type,
				  whose values the views show as dtype (GGUF's q4_k
				  blocks shown as float32: values.txt, data.npy) */

struct mfs_model;
struct mfs_tensor;
struct mfs_tcache;
struct mfs_chunked;
struct mfs_runtime;

/* Custom storage (text numbers, sparse or multi-block layouts). Raw dense
 * storage (ops == NULL) needs none: the core reads it at `off`. Both calls
 * are made inside mfs_guarded(). */
struct mfs_tensor_ops {
	/* Elements [first, first + count) in storage order, each little-endian,
	 * written to out (count * esize bytes). Sparse tensors give zeros where
	 * nothing is stored. */
	int (*read)(const struct mfs_model *m, const struct mfs_tensor *t,
		    uint64_t first, uint64_t count, void *out, struct mfs_err *err);
	/* MFS_TF_SPARSE: stored entries [first, first + count) in the order the
	 * file keeps them: 0-based row and column, and the value (little-endian). */
	int (*entries)(const struct mfs_model *m, const struct mfs_tensor *t,
		       uint64_t first, uint64_t count, uint64_t *rows, uint64_t *cols,
		       void *vals, struct mfs_err *err);
};

struct mfs_tensor {
	mfs_id dir;                 /* its directory node */
	uint8_t dtype;              /* enum mfs_dtype */
	uint8_t order;              /* enum mfs_order */
	uint8_t swap;               /* 0, or the size of each big-endian unit of a raw
				       element (the element size; a component's for complex) */
	uint8_t flags;              /* MFS_TF_* */
	uint8_t bits;               /* MFS_DT_OPAQUE elements narrower than a byte,
				       packed (safetensors' F4: 4): their bits, else 0.
				       The tensor is then the bytes they fill: esize
				       1 and nelem that many bytes (set here), while
				       dims (shape) stays the elements' */
	uint32_t ndim;
	uint32_t esize;             /* bytes per element */
	const uint64_t *dims;       /* logical shape (row-major index order), ndim entries */
	uint64_t nelem;             /* product of dims (packed bits: the bytes they fill) */
	uint64_t off;               /* raw storage: source offset of the first element */
	const struct mfs_tensor_ops *ops;   /* NULL: raw dense storage at off */
	const char *tname;          /* dtype name for MFS_DT_OPAQUE ("unknown64", ...) */
	uint64_t nnz;               /* MFS_TF_SPARSE: number of stored entries */
	uint64_t tag;               /* the codec's own reference */
	const char *storage;        /* the storage it shares with other tensors (a
				       PyTorch storage's key; user.modelfs.storage),
				       living as long as the model, or NULL */
	struct mfs_tcache *cache;   /* values.txt layout, built on first use */
};

/* A table of 1-D columns with labels (frame.csv). */
struct mfs_frame {
	mfs_id dir;
	uint32_t ncols;
	uint64_t nrows;
	const uint32_t *cols;       /* tensor index of each column */
	const char *const *labels;  /* label of each column (as shown in the header line) */
	struct mfs_chunked *csv;    /* frame.csv layout, built on first use */
};

struct mfs_codec;

struct mfs_model {
	const struct mfs_codec *codec;
	const char *name;           /* source file name (last path component) */
	const uint8_t *base;        /* source bytes: read inside mfs_guarded() only */
	uint64_t size;
	int fd;                     /* the source, open read-only, for large files (whose
				       views are spliced); -1 when held in memory */
	uint64_t dev, ino;          /* identity of the source file (0 for memory models) */
	const uint8_t *sidecar;     /* <name><codec->sidecar> if it exists */
	size_t sidecar_len;
	bool has_sidecar;
	/* The open looked beside the file (a sidecar, or siblings checked):
	 * the tree may differ for another name of the same file. */
	bool beside;
	void *priv;                 /* codec state, freed by codec->close */
	struct mfs_runtime *rt;     /* lent by the host (runtime.h); NULL: none */
	/* A problem the open got past (a malformed sidecar, say): "" if none;
	 * the first one, set with mfs_model_note. fs/ logs it as an error line. */
	char note[MFS_ERRMSG_MAX];
	uint32_t more_notes;        /* problems after the first, not kept */

	struct mfs_node *nodes;     /* nodes[0] is the model directory */
	uint32_t nnodes;
	struct mfs_tensor *tensors;
	uint32_t ntensors;
	struct mfs_frame *frames;
	uint32_t nframes;

	struct mfs_model_impl *impl;  /* private to model.c and the views */
};

/* ---- Building the tree (codecs, inside open) ----------------------------
 * Names are raw bytes from the file; they are escaped and made unique here.
 * The add functions return the new node's id, or MFS_NONE when memory ran
 * out or the parent is MFS_NONE; the failure is remembered and makes the open
 * fail with ENOMEM, so codecs need not check every call. */
mfs_id mfs_add_dir(struct mfs_model *m, mfs_id parent, const char *name, size_t len);
/* A one-value text file; content without its newline (one is appended,
 * unless flags hold MFS_NF_EXACT). */
mfs_id mfs_add_text(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		    const char *content, size_t clen, unsigned flags);
mfs_id mfs_add_textf(struct mfs_model *m, mfs_id parent, const char *name, unsigned flags,
		     const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* A file showing source bytes [off, off + rlen) as they are. */
mfs_id mfs_add_raw(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		   uint64_t off, uint64_t rlen, unsigned flags);
/* A read-only file of size bytes that ops->read gives (an inflated archive
 * member, say): a 1-D uint8 tensor whose only view is this file, its `data`.
 * tag is the tensor's. */
mfs_id mfs_add_stream(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		      const struct mfs_tensor_ops *ops, uint64_t size, uint64_t tag);
/* A relative symbolic link to another node (which may be added later). */
mfs_id mfs_add_link(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		    mfs_id target);
/* A relative symbolic link whose target is the text target[0, tlen) (a
 * path out of this model, into a sibling model directory): u.link is
 * MFS_NONE and nothing inside the model follows it. */
mfs_id mfs_add_link_text(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
			 const char *target, size_t tlen);
/* Point a link at its target once the target exists (forward references). */
void mfs_set_link(struct mfs_model *m, mfs_id link, mfs_id target);
/* A tensor directory with its views (shape, dtype, values.txt, data,
 * data.npy, matrix.mtx as the dtype and flags allow). t->dims is copied;
 * t->dir, t->nelem, t->esize (unless opaque) and t->cache are set here.
 * Returns the directory's id. */
mfs_id mfs_add_tensor(struct mfs_model *m, mfs_id parent, const char *name, size_t len,
		      const struct mfs_tensor *t);
/* Make an existing directory (the root, say) a tensor directory. Returns
 * the tensor index, or -1 (remembered failure). */
int mfs_attach_tensor(struct mfs_model *m, mfs_id dir, const struct mfs_tensor *t);
/* frame.csv in dir over existing 1-D tensors; labels are copied. */
mfs_id mfs_add_frame_csv(struct mfs_model *m, mfs_id dir, uint64_t nrows, uint32_t ncols,
			 const uint32_t *cols, const char *const *labels);
/* Copy bytes into the model's arena (lives as long as the model). */
void *mfs_model_alloc(struct mfs_model *m, size_t size);
/* Memory a codec allocates while it opens m beyond m's arena (a parsed
 * header): bytes > 0 are charged to the index budget of m's runtime
 * (runtime.h) before they are allocated, and false says they do not fit
 * (the open then fails with ENOMEM and the budget's message: return
 * -ENOMEM); bytes < 0 give them back. Whatever is still charged is given
 * back when m is freed. */
bool mfs_model_charge(struct mfs_model *m, int64_t bytes);
/* Record a problem that does not stop the open (m->note: the first one;
 * later ones are counted in m->more_notes). */
void mfs_model_note(struct mfs_model *m, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Whether the name beside the source (a shard its index names) is a
 * regular file, not following a link, whose first bytes the same codec
 * bids for: one open and one read of MFS_HEAD_MAX bytes, nothing parsed
 * (the file is parsed when it is itself looked up): 0, -errno with a
 * message, or 1 when it cannot be told (a model opened from memory). For
 * use inside open. Past the first MFS_SIBLING_PROBES names of one open,
 * the directory is listed once and a regular file there is 0 without a
 * read (its bytes are checked when it is looked up itself), so that an
 * index of 200,000 shards costs one listing. */
#define MFS_SIBLING_PROBES 1024u
int mfs_model_check_sibling(struct mfs_model *m, const char *name, struct mfs_err *err);
char *mfs_model_strdup(struct mfs_model *m, const char *s, size_t len);
/* Give m the runtime its views use (runtime.h), before any view is read. */
void mfs_model_set_runtime(struct mfs_model *m, struct mfs_runtime *rt);

static inline void mfs_set_tag(struct mfs_model *m, mfs_id id, uint64_t tag)
{
	if (id != MFS_NONE)
		m->nodes[id].tag = tag;
}

/* ---- Reading the tree ---------------------------------------------------- */
mfs_id mfs_lookup(const struct mfs_model *m, mfs_id dir, const char *name);
/* Path of a node from the model directory ("params/w/value"); "" for the
 * root. Returns the length, or -ENAMETOOLONG. */
int mfs_node_path(const struct mfs_model *m, mfs_id id, char *buf, size_t size);
/* Relative target text of a link node ("../nodes/3"), or its text target. */
int mfs_link_target(const struct mfs_model *m, mfs_id id, char *buf, size_t size);
/* Resolve a path relative to the model directory; MFS_NONE if absent. */
mfs_id mfs_resolve(const struct mfs_model *m, const char *path);

/* The tensor a node belongs to (a tensor directory or one of its views), or
 * NULL. */
const struct mfs_tensor *mfs_node_tensor(const struct mfs_model *m, mfs_id id);
/* The name its dtype file shows, without the newline ("float32", or the
 * format's own such as "unknown64" or "q4_k"). */
const char *mfs_tensor_dtype_name(const struct mfs_tensor *t);

/* Escape a raw name as docs/layout.md says (no uniqueness suffix); writes at most
 * 256 bytes + NUL to out and returns the length. */
size_t mfs_escape_name(const char *name, size_t len, char out[257]);

#endif
