/* Private parts of a model, shared by the core's rooms above the tree (the
 * host fills what opening a file finds, the views and tensors their caches). */
#ifndef MFS_MODEL_IMPL_H
#define MFS_MODEL_IMPL_H

#include <pthread.h>

#include "arena.h"
#include "model.h"

struct mfs_bands;

struct mfs_dupe {
	mfs_id parent;
	const char *name;  /* in the arena */
	unsigned next;
};

/* A slot of the sibling hash: a node and the low 32 bits of its (parent,
 * name) hash (names.c). */
struct mfs_name_slot {
	mfs_id id;   /* MFS_NONE: empty */
	uint32_t h;
};

struct mfs_hole {
	uint64_t start, end;
};

struct mfs_model_impl {
	struct mfs_arena arena;
	size_t cap_nodes, cap_tensors, cap_frames;
	mfs_id *last;               /* last child of each node, while building */
	/* (parent, name) -> node id, open addressing */
	struct mfs_name_slot *slots;
	uint32_t nslots;            /* power of two */
	/* (parent, duplicated name) -> next ~N suffix to try, so that k copies
	 * of one name cost O(k), not O(k^2) */
	struct mfs_dupe *dupes;
	uint32_t ndupes, cap_dupes; /* cap_dupes: power of two */
	int build_err;              /* first failure while building (positive errno) */
	char build_msg[160];
	pthread_mutex_t cache_lock; /* guards mfs_tensor.cache creation */
	/* Band caches shared by the threads reading the model (tensor/bands.h):
	 * transposed rows of column-major matrices, bands over streams. */
	struct mfs_bands *bands, *sbands;
	void *map;                  /* the mapping to unmap, or NULL */
	uint8_t *owned;             /* a small source read into memory, or NULL */
	size_t map_len;
	uint8_t *sidecar_buf;       /* owned copy of the sidecar */
	bool owns_fd;
	int dirfd;                  /* the source's directory while the codec opens
				       it (mfs_model_check_sibling), else -1 */
	/* While the codec opens a file of a directory: whether the file name
	 * beside it opens as a model of the same codec (the host's, which does
	 * the I/O); NULL otherwise (mfs_model_check_sibling answers 1). */
	int (*sibling)(struct mfs_model *m, const char *name, struct mfs_err *err);
	void *sibling_ctx;          /* the host's state for sibling */
	const struct mfs_opener *opener;  /* the host's, while the codec opens it, or NULL */
	/* The source's holes (read as zeros without being stored), sorted,
	 * each at least MFS_HOLE_MIN long (holes.c). */
	struct mfs_hole *holes;
	size_t nholes;
	uint64_t uid;               /* unique among the models of this process */
	uint64_t charged;           /* bytes charged to the index budget (model_budget.c) */
};

/* holes.c: whether [off, off + len) lies in one of the source's holes
 * (found with SEEK_HOLE/SEEK_DATA at open, at most MFS_HOLES_MAX of them,
 * none where the file system does not tell). */
#define MFS_HOLE_MIN (64u << 10)
#define MFS_HOLES_MAX 4096u
bool mfs_model_in_hole(const struct mfs_model *m, uint64_t off, uint64_t len);
/* Whether any hole overlaps [off, off + len). */
bool mfs_model_meets_hole(const struct mfs_model *m, uint64_t off, uint64_t len);

/* model.c */
mfs_id mfs_model_add_root(struct mfs_model *m);
/* model_state.c: remember the first failure while building (code: a
 * positive errno), and return it as an error (0 if none). */
void mfs_model_fail(struct mfs_model *m, int code, const char *msg);
int mfs_model_build_error(const struct mfs_model *m, struct mfs_err *err);

/* model_budget.c: charge growing from cap to newcap elements of elem bytes
 * (false: refused, remembered as the build's failure); give back all that
 * m holds (when it is freed). */
bool mfs_model_charge_growth(struct mfs_model *m, size_t cap, size_t newcap, size_t elem);
void mfs_model_uncharge(struct mfs_model *m);
#endif
