/* Private parts of a model, shared by the tree code and the views. */
#ifndef MFS_MODEL_IMPL_H
#define MFS_MODEL_IMPL_H

#include <pthread.h>

#include "arena.h"
#include "model.h"

struct mfs_dupe {
	mfs_id parent;
	const char *name;  /* in the arena */
	unsigned next;
};

/* Bands of transposed rows of column-major matrices (transpose.c). */
#define MFS_NBANDS 2
struct mfs_band {
	const struct mfs_tensor *t;
	uint64_t r0, nr;            /* logical rows [r0, r0 + nr), row-major in buf */
	uint64_t used;              /* tick of the last use */
	bool filling;
	uint8_t *buf;
	size_t cap;
};
struct mfs_bands {
	pthread_mutex_t lock;
	struct mfs_band b[MFS_NBANDS];
	uint64_t tick;
};
void mfs_bands_init(struct mfs_bands *bs);
void mfs_bands_free(struct mfs_bands *bs);

/* Bands of column-major tensors in custom storage, read in row-major order
 * (colstream.c). */
#define MFS_NSBANDS 2
struct mfs_sband {
	const struct mfs_tensor *t;
	uint64_t lo, hi;            /* logical elements [lo, hi), in order in buf */
	uint64_t used;              /* tick of the last use */
	uint64_t served;            /* elements copied out of it */
	bool filling, ready;
	uint8_t *buf;
	size_t cap;
};
struct mfs_sbands {
	pthread_mutex_t lock;
	pthread_cond_t done;        /* a band is filled, or failed */
	struct mfs_sband b[MFS_NSBANDS];
	uint64_t tick;
	uint64_t band_bytes;        /* a band's size at most, and */
	uint64_t piece_bytes;       /* the storage read at a time (tests make both small) */
};
void mfs_sbands_init(struct mfs_sbands *bs);
void mfs_sbands_free(struct mfs_sbands *bs);

struct mfs_hole {
	uint64_t start, end;
};

struct mfs_model_impl {
	struct mfs_arena arena;
	size_t cap_nodes, cap_tensors, cap_frames;
	mfs_id *last;               /* last child of each node, while building */
	/* (parent, name) -> node id, open addressing; slot value MFS_NONE = empty */
	mfs_id *slots;
	uint32_t nslots;            /* power of two */
	/* (parent, duplicated name) -> next ~N suffix to try, so that k copies
	 * of one name cost O(k), not O(k^2) */
	struct mfs_dupe *dupes;
	uint32_t ndupes, cap_dupes; /* cap_dupes: power of two */
	int build_err;              /* first failure while building (positive errno) */
	char build_msg[160];
	pthread_mutex_t cache_lock; /* guards mfs_tensor.cache creation */
	struct mfs_bands bands;     /* shared by the threads reading the model */
	struct mfs_sbands sbands;   /* likewise */
	void *map;                  /* the mapping to unmap, or NULL */
	uint8_t *owned;             /* a small source read into memory, or NULL */
	size_t map_len;
	uint8_t *sidecar_buf;       /* owned copy of the sidecar */
	bool owns_fd;
	int dirfd;                  /* the source's directory while the codec opens
				       it (mfs_model_check_sibling), else -1 */
	/* The source's holes (read as zeros without being stored), sorted,
	 * each at least MFS_HOLE_MIN long (holes.c). */
	struct mfs_hole *holes;
	size_t nholes;
	uint64_t uid;               /* unique among the models of this process */
	uint64_t charged;           /* bytes charged to the index budget (model_budget.c) */
};

/* Frees the caches the views hang on tensors (view_values.c). */
void mfs_tcache_free(struct mfs_tcache *c);
void mfs_frame_cache_free(struct mfs_chunked *c);  /* view_csv.c */



/* holes.c: the source's holes, found with SEEK_HOLE/SEEK_DATA on fd at open
 * (none where the file system does not tell); whether [off, off + len) lies
 * in one of them. */
#define MFS_HOLE_MIN (64u << 10)
#define MFS_HOLES_MAX 4096u
void mfs_holes_find(struct mfs_model *m, int fd);
bool mfs_model_in_hole(const struct mfs_model *m, uint64_t off, uint64_t len);
/* Whether any hole overlaps [off, off + len). */
bool mfs_model_meets_hole(const struct mfs_model *m, uint64_t off, uint64_t len);

/* model.c */
mfs_id mfs_model_add_root(struct mfs_model *m);
int mfs_model_build_error(const struct mfs_model *m, struct mfs_err *err);
/* Remember the first failure while building (the open fails with it). */
void mfs_model_fail(struct mfs_model *m, int code, const char *msg);

/* model_budget.c: charge growing from cap to newcap elements of elem bytes
 * (false: refused, remembered as the build's failure); give back all that
 * m holds (when it is freed). */
bool mfs_model_charge_growth(struct mfs_model *m, size_t cap, size_t newcap, size_t elem);
void mfs_model_uncharge(struct mfs_model *m);
#endif
