/* primitiv codec, private parts shared by its files: the stored Shape and
 * Tensor, the checked readers of primitiv's objects (primitiv_parse.c), the
 * tree built from them (primitiv_tree.c) and the patches for edits
 * (primitiv_edit.c); the codec table, bid and open are primitiv.c's. The
 * MessagePack cursor is primitiv_wire.h. */
#ifndef MFS_PRIMITIV_H
#define MFS_PRIMITIV_H

#include <stdbool.h>
#include <stdint.h>

#include "codec.h"
#include "primitiv_wire.h"

#define PRIMITIV_HEAD_LEN 15
#define PRIMITIV_MAX_DIMS 8           /* primitiv's Shape::MAX_DEPTH */
/* Each level of a key path costs at least 2 bytes of a path name ("x/"), so
 * deeper trees could not be reached through a PATH_MAX path anyway; real
 * models nest a handful of levels. */
#define PRIMITIV_KEY_DEPTH_MAX 1024

enum primitiv_data_type {
	PRIMITIV_SHAPE = 0x000,
	PRIMITIV_TENSOR = 0x100,
	PRIMITIV_PARAMETER = 0x200,
	PRIMITIV_MODEL = 0x300,
	PRIMITIV_OPTIMIZER = 0x400,
};

/* Node tags of optimizer configs: source offset of the value << 2 | kind. */
enum { PRIMITIV_CFG_UINT = 1, PRIMITIV_CFG_FLOAT = 2 };

/* A Shape as stored: dims (trailing 1s stripped by primitiv) and batch. */
struct primitiv_shape {
	uint64_t off;           /* source offset of the dims array */
	uint32_t ndims, batch;
	uint32_t dims[PRIMITIV_MAX_DIMS];
};

/* A Tensor as stored: its Shape, then a bin of float32 little-endian. */
struct primitiv_tensor {
	struct primitiv_shape s;
	uint64_t data, len;     /* the bin payload */
};
/* ---- primitiv_parse.c ---------------------------------------------------- */

/* A name from the file made fit for a one-line message: at most 40 bytes,
 * control characters as '?'. */
const char *primitiv_msg_name(const uint8_t *p, uint64_t len, char out[48]);
/* A Shape at c->pos: at most PRIMITIV_MAX_DIMS dims, none of them 0. */
int primitiv_read_shape(struct primitiv_cur *c, struct primitiv_shape *s);
/* Elements of a stored shape (dims times batch); false on overflow. */
bool primitiv_shape_nelem(const struct primitiv_shape *s, uint64_t *n);
/* A Tensor at c->pos: its Shape, then a bin of exactly that many float32s. */
int primitiv_read_tensor(struct primitiv_cur *c, struct primitiv_tensor *t);

/* ---- primitiv_tree.c ----------------------------------------------------- */

/* The model's view of a stored tensor (dims needs PRIMITIV_MAX_DIMS + 1). */
void primitiv_tensor_desc(const struct primitiv_tensor *pt, struct mfs_tensor *t, uint64_t dims[]);
void primitiv_add_batch(struct mfs_model *m, const struct primitiv_shape *s);
/* A Parameter read at c->pos and added under dir. */
int primitiv_read_parameter(struct mfs_model *m, struct primitiv_cur *c, mfs_id dir);
/* A Model: its parameters under params/, by key path. */
int primitiv_read_model(struct mfs_model *m, struct primitiv_cur *c);
/* An Optimizer's uint_configs (is_float false) or float_configs. */
int primitiv_read_configs(struct mfs_model *m, struct primitiv_cur *c, bool is_float);

/* ---- primitiv_edit.c ----------------------------------------------------- */

int primitiv_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		  struct mfs_err *err);

#endif
