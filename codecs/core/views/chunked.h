/* Chunked text views (view_chunks.c): a fixed head followed by chunks
 * rendered on demand, read ahead for sequential readers, sized by one pass
 * over every chunk, and kept from that pass (view_keep.c). values.txt,
 * matrix.mtx and frame.csv are made of them. */
#ifndef MFS_CHUNKED_H
#define MFS_CHUNKED_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "buf.h"
#include "model.h"
#include "view.h"

#define MFS_CHUNK_ELEMS 4096u  /* elements (or entries, or rows) per text chunk: a small
				 * read renders (and touches) a few KiB only */

/* A text file made of a fixed head followed by chunks rendered on demand.
 * Chunk k's byte offset is known once chunks 0..k-1 were rendered (in order,
 * by a sequential reader) or after a full pass (for the size). */
struct mfs_chunked;
/* Render chunk k, appended to out. scratch: a buffer the caller keeps from
 * one call to the next, which the renderer may grow and use meanwhile
 * (elements gathered on the way); its content does not outlive the call. */
typedef int (*mfs_chunk_fn)(struct mfs_model *m, const void *obj, uint64_t k,
			    struct mfs_buf *out, struct mfs_buf *scratch, struct mfs_err *err);

/* Optional, for the size: add the text length of every chunk into
 * lens[0, nchunks), for part `part` of `nparts` slices of the work (the
 * slices together count each byte once), without rendering. Called from
 * several threads at once, each with lens of its own. */
typedef int (*mfs_measure_fn)(struct mfs_model *m, const void *obj, uint64_t part,
			      uint64_t nparts, uint32_t *lens, struct mfs_err *err);

/* Optional, for streaming: chunks [k, k + n) at once, back to back into out,
 * the length of each into lens (same text as n calls of render). */
typedef int (*mfs_chunks_fn)(struct mfs_model *m, const void *obj, uint64_t k, uint64_t n,
			     struct mfs_buf *out, uint64_t *lens, struct mfs_buf *scratch,
			     struct mfs_err *err);

/* The lengths of the chunks whose source bytes all lie in a hole of the
 * file (zeros: their text is known without reading them) into lens, the
 * others' as MFS_LEN_UNKNOWN; returns how many are unknown. */
#define MFS_LEN_UNKNOWN UINT64_MAX
typedef uint64_t (*mfs_zeros_fn)(struct mfs_model *m, const void *obj, uint64_t *lens);

struct mfs_chunked {
	pthread_mutex_t lock;
	pthread_mutex_t size_lock;  /* one size pass at a time (readers go on) */
	const void *obj;            /* passed to render */
	mfs_chunk_fn render;
	mfs_chunks_fn render_n;     /* NULL: windows render chunk by chunk */
	mfs_measure_fn measure;     /* NULL: the size renders every chunk */
	mfs_zeros_fn zeros;         /* NULL: no shortcut for a source all in a hole */
	uint64_t nparts;            /* slices of the work for measure */
	uint64_t nchunks;
	char *head;                 /* fixed prefix (may be empty), owned */
	size_t head_len;
	uint64_t *offs;             /* nchunks + 1 body offsets; offs[i] valid for i <= known */
	uint64_t known;
	bool sized;                 /* known == nchunks */
	/* Text kept from the size pass (view_keep.c), under lock: per window
	 * of MFS_KEEP_CHUNKS chunks, NULL once read through or dropped. */
	char **kept;
	uint64_t nkept;             /* windows */
	uint64_t kept_len;          /* bytes still kept */
	uint64_t kept_used;         /* when last read (monotonic seconds) */
	struct mfs_chunked *keep_prev, *keep_next;  /* views keeping text, oldest first */
	bool keep_linked;
	/* The runtime whose list holds this view and whose budget counts its
	 * kept text (set once, NULL: never kept): the reaper reaches views
	 * through that list, and a view freed with its model leaves it. */
	struct mfs_runtime *keep_rt;
};

int mfs_chunked_init(struct mfs_chunked *c, const void *obj, mfs_chunk_fn render,
		     uint64_t nchunks, const char *head, size_t head_len);
void mfs_chunked_destroy(struct mfs_chunked *c);
/* Exact size: renders every chunk not yet measured (on all cores when large). */
int mfs_chunked_size(struct mfs_model *m, struct mfs_chunked *c, uint64_t *size,
		     struct mfs_err *err);
ssize_t mfs_chunked_read(struct mfs_model *m, struct mfs_chunked *c, uint64_t off,
			 size_t len, char *buf, struct mfs_rcache *rc, struct mfs_err *err);

/* view_keep.c: the size pass of a view of MFS_KEEP_MIN_CHUNKS chunks or
 * more renders its text and keeps it, in windows of MFS_KEEP_CHUNKS chunks,
 * under one budget for all views. Returns 0 when sized and kept, 1 when not
 * tried (small, or the text would not fit: size it the two-pass way), or
 * -errno. */
#define MFS_KEEP_CHUNKS 64
#define MFS_KEEP_MIN_CHUNKS 32
int mfs_keep_pass(struct mfs_model *m, struct mfs_chunked *c, struct mfs_err *err);
/* Copy kept text from body offset body (inside chunk k) into buf, up to len
 * bytes or the end of k's window, freeing a window read through; 0 when
 * k's text is not kept. Caller holds c->lock. */
size_t mfs_keep_read(struct mfs_chunked *c, uint64_t k, uint64_t body, char *buf, size_t len);
/* Hand kept text [body, body + len) (cut at the end of the text) to send
 * in place, as pieces of the kept windows, under c->lock; then free the
 * windows read through. False, sending nothing, when any of it is not kept
 * or body is at the end. */
bool mfs_keep_send(struct mfs_chunked *c, uint64_t body, size_t len, mfs_send_fn send,
		   void *ctx);
/* Free what c keeps (mfs_chunked_destroy). */
void mfs_keep_drop(struct mfs_chunked *c);

#endif
