/* Node names: escaping and the sibling hash (names.c). Core only. */
#ifndef MFS_NAMES_H
#define MFS_NAMES_H

#include "model.h"

/* Escaped, unique name for a new child of parent, in the model's arena;
 * *hash: its sibling hash, for mfs_names_insert. */
char *mfs_unique_name(struct mfs_model *m, mfs_id parent, const char *raw, size_t len,
		      uint32_t *hash);
/* Index node id (its parent and name are set; hash from mfs_unique_name) in
 * the sibling hash. */
int mfs_names_insert(struct mfs_model *m, mfs_id id, uint32_t hash);

#endif
