/* Dotted tensor names (docs/layout.md "Dotted tensor names"), shared by the
 * safetensors, GGUF and NumPy .npz codecs: a name such as
 * `model.layers.0.q_proj.weight` is split at each separator into a path of
 * directories under one directory (`tensors/`), the last component being the
 * tensor directory. A name that is also a prefix of another gives a tensor
 * directory that also holds sub-directories. A component equal to a view's
 * name (shape, dtype, values.txt, data, data.npy, matrix.mtx) is escaped like a
 * duplicate (`shape~1`); an empty component is `%`.
 *
 * The same name twice gives a second directory (`~1`). A link never holds
 * children: a link and a directory of the same path (sharded `a.b` and
 * `a.b.c`) are both kept, the later with `~1`.
 *
 * The builder also collects the `index` file: one line per tensor in the
 * order added, `<full name>\t<dtype>\t<shape>\t<offset or ->\t<length>\n`;
 * a tab, newline or backslash in a name is written `\t`, `\n`, `\\`.
 *
 * Building is O(total name length): the builder hashes (directory, raw
 * component) to the node made for it. A name makes at most 64 levels of
 * directories, and all names together at most 1024 plus one per 16 bytes
 * of names: past either limit (only hostile names reach them: "a.a.a...",
 * "...."), the rest of a name stays whole as its last component.
 */
#ifndef MFS_DOTTED_H
#define MFS_DOTTED_H

#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct mfs_dotted;

/* A builder of dotted names under directory root of m, split at every byte
 * in seps (".", or "./" for .npz members). NULL when memory ran out. */
struct mfs_dotted *mfs_dotted_new(struct mfs_model *m, mfs_id root, const char *seps);

/* Add tensor t under its raw name name[0, len). off is the source offset of
 * its first element, or UINT64_MAX when not stored as such (`-` in index);
 * bytes is the byte length of its elements. Returns the tensor directory's
 * id, or MFS_NONE (remembered failure, as mfs_add_*). */
mfs_id mfs_dotted_add(struct mfs_dotted *d, const char *name, size_t len,
		      const struct mfs_tensor *t, uint64_t off, uint64_t bytes);

/* For a codec that shows more than tensors by dotted names (PyTorch's
 * dicts): a directory under the name's path (the one a longer name made
 * there, if any, so that `a.b` and `a.b.c` share `a/b/`), or MFS_NONE. */
mfs_id mfs_dotted_add_dir(struct mfs_dotted *d, const char *name, size_t len);
/* The directory the name's last component goes in (made as needed), that
 * component in *last, *last_len, named as a tensor's would be (a view's
 * name such as `shape` as `shape~1`, in req): the codec adds its own node
 * there. */
mfs_id mfs_dotted_parent(struct mfs_dotted *d, const char *name, size_t len, char req[16],
			 const char **last, size_t *last_len);
/* An `index` line alone (a tensor the codec added elsewhere, under a name
 * of its own). */
void mfs_dotted_index(struct mfs_dotted *d, const char *name, size_t len,
		      const struct mfs_tensor *t, uint64_t off, uint64_t bytes);

/* Add, under the name's path, a relative symbolic link into a sibling model
 * directory (sharded safetensors): its target is as many `../` as lead out of
 * this model's directory, then `sibling`, then the link's own path from its
 * model directory (`../../../model-00001-of-00002.safetensors/tensors/a/b`).
 * sibling is the sibling's escaped name. A name below a link added before
 * into the same sibling (`a.b.c` after `a.b`) is reached through that link:
 * nothing is added, and that link's id is returned (add names in sorted
 * order for this to hold). Returns the link's id or MFS_NONE. */
mfs_id mfs_dotted_add_link(struct mfs_dotted *d, const char *name, size_t len,
			   const char *sibling);

/* Add the `index` text file to directory dir (read-only), with one line per
 * mfs_dotted_add so far, then free the builder. d may be NULL. Pass
 * dir = MFS_NONE to only free it. */
void mfs_dotted_finish(struct mfs_dotted *d, mfs_id dir);

#endif
