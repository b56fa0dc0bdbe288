/* Parsed generations shared by the names of one file: a link shown as a
 * model and the file it leads to (both shown) read one parse, with one
 * set of caches, as long as both show the same version of the file read
 * the same way (share.c). */
#ifndef MFS_SHARE_H
#define MFS_SHARE_H

#include <stdbool.h>
#include <sys/stat.h>

#include "model_fs.h"

/* The generation parsed already from this version of the file (st: its
 * stat) by codec c under a name read the same way as name (+1 ref), or
 * NULL. */
struct mref *share_find(const struct stat *st, const struct mfs_codec *c, const char *name);
/* Offer r, just parsed from version st under name, to the file's other
 * names: kept in the table while r lives, unless its tree depends on
 * more than the file and the way its name reads (mfs_codec.name_class). */
void share_offer(struct mref *r, const struct stat *st, const char *name);
/* Drop a reference to a shared r; true when it was the last one (r is then
 * out of the table, for the caller to free). */
bool share_release(struct mref *r);
/* After a commit of fm from generation r: the other names showing r are
 * given to check (the model layer's fsmodel_check: their source was
 * replaced under them), so that they read the commit too. */
void share_check_others(struct fsmodel *fm, struct mref *r, void (*check)(struct fsmodel *));

#endif
