/* The codec interface: one table per format (libarchive's bidding formats,
 * squashfuse's decompressor table). registry.def is the only list of codecs.
 *
 * Flow: the core reads the first bytes of a file and asks every codec to bid;
 * the highest bid wins. open() then indexes the structure only (where each
 * tensor's bytes are), checking every count and size against the bytes left
 * before use; nothing is decoded until a view is read. edit() turns a change
 * of one node into a patch over the source bytes.
 *
 * Codecs never print, never touch FUSE and never do I/O: the core hands them
 * the source bytes (m->base, m->size) and the sidecar, if any.
 */
#ifndef MFS_CODEC_H
#define MFS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "edit.h"
#include "model.h"

#define MFS_HEAD_MAX 512   /* bytes a codec's bid() sees at most */

struct mfs_codec {
	const char *name;     /* its registry.def name: "primitiv", "gguf", ... */
	const char *title;    /* the format as its users name it, for --help: "GGUF" */
	const char *sidecar;  /* suffix of a sidecar file kept in step (".meta"), or NULL */

	/* 0 = not mine; else roughly the bits of evidence verified (a 4-byte magic
	 * is 32, a matching extension 8). head holds min(size, MFS_HEAD_MAX)
	 * bytes; name is the file name (last component). A file named with the
	 * format's own extension (mfs_has_ext) bids whatever its bytes, even
	 * none: open() then says why it is not one (such a file is always
	 * reported, never passed through silently). Cheap:
	 * called for every file of a listed directory. */
	int (*bid)(const uint8_t *head, size_t n, uint64_t size, const char *name);

	/* Build m->nodes / m->tensors (mfs_add_*) from m->base, m->size and the
	 * sidecar. Return 0, or -errno with a message; -ENOTSUP means "a valid
	 * file of the format that is not shown" (a .npy of strings) and passes
	 * it through without an error line: a file that does not parse is
	 * -EINVAL. */
	int (*open)(struct mfs_model *m, struct mfs_err *err);

	/* Free m->priv (optional). */
	void (*close)(struct mfs_model *m);

	/* Express edit e (see edit.h) as a patch over the source: the spans it
	 * replaces, including length fields that depend on it, and the new
	 * sidecar content when one must follow. Bytes not in a span are kept, so
	 * an unchanged file is byte-identical. Refuse what the format cannot
	 * hold with -EINVAL / -ERANGE and a message. */
	int (*edit)(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		    struct mfs_err *err);

	/* edit() takes same-shape tensor edits of raw-storage tensors whose runs
	 * have no bytes but an e->gather (edit.h), as mfs_patch_raw_runs does.
	 * Without it, an array written in the order opposite to storage has its
	 * changed values copied into the patch. */
	bool gathered_runs;

	/* Set when the tree depends on the file's bytes and on its name only
	 * through this: the way of reading the name asks for (a number, 0 for
	 * the plain one; a sharded index's name is another). A model opened
	 * without anything beside its file (mfs_model.beside) may then be
	 * shared by every name of that file with the same codec and class (a
	 * link and the file it leads to). NULL: never shared. */
	int (*name_class)(const char *name);
};

/* name_class for a codec whose tree never depends on the name. */
int mfs_name_class_none(const char *name);

extern const struct mfs_codec *const mfs_codecs[];  /* NULL-terminated */

/* Whether the file name ends in ext (".npy", ".safetensors.index.json")
 * after at least one byte of its own: a name that is only the extension,
 * a dotfile such as ".npy", has none. name may be NULL (no name). The one
 * name test of bids (and of the commit engine's own file names). */
bool mfs_has_ext(const char *name, const char *ext);

/* The codec that bids highest on a file, or NULL. */
const struct mfs_codec *mfs_probe(const uint8_t *head, size_t n, uint64_t size,
				  const char *name);

/* Open name in dirfd (O_NOFOLLOW: a symbolic link is never parsed), map it,
 * read the codec's sidecar, and index it. codec NULL probes. Returns 0,
 * -ENOTSUP (not a model), or -errno with a message. */
int mfs_model_open(struct mfs_model **out, int dirfd, const char *name,
		   const struct mfs_codec *codec, struct mfs_err *err);
/* Same, for the file at path in dirfd shown to the codec as name (which
 * decides by name where a format has no magic, and names the sidecar). The
 * commit engine validates a temporary file this way. */
int mfs_model_open_as(struct mfs_model **out, int dirfd, const char *path, const char *name,
		      const struct mfs_codec *codec, struct mfs_err *err);
/* mfs_model_open with the model's runtime given from the start (as
 * mfs_model_set_runtime does after an open): what its index holds is
 * charged to rt's index budget as it is built, and an open that would take
 * the indexes of rt's models over it fails with ENOMEM and a message
 * saying so. */
int mfs_model_open_rt(struct mfs_model **out, struct mfs_runtime *rt, int dirfd,
		      const char *name, const struct mfs_codec *codec, struct mfs_err *err);
/* How a host opens a model's file and the files read beside it (a
 * sharded index's shards, the sidecar): open(ctx, dirfd, name) gives a
 * descriptor of a regular file opened for reading, or -errno. Without one
 * (NULL), openat with O_NOFOLLOW: a symbolic link is never followed. A
 * host that shows links as models resolves them itself (fs/links.c). */
struct mfs_opener {
	int (*open)(void *ctx, int dirfd, const char *name);
	void *ctx;
};
/* mfs_model_open_rt, the file and its siblings opened through op (NULL:
 * the default). */
int mfs_model_open_with(struct mfs_model **out, struct mfs_runtime *rt, int dirfd,
			const char *name, const struct mfs_opener *op, struct mfs_err *err);
/* Index bytes held in memory (tests, fuzzing, validation). The buffers must
 * outlive the model. side may be NULL (no sidecar). */
int mfs_model_open_mem(struct mfs_model **out, const void *buf, size_t len,
		       const char *name, const void *side, size_t side_len,
		       const struct mfs_codec *codec, struct mfs_err *err);
void mfs_model_free(struct mfs_model *m);

#endif
