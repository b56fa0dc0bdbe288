/* Editor scratch files (swap, backup, temporary files) inside model
 * directories: they live only in memory, within a mount-wide cap
 * (-o max_scratch), and renaming one over a view writes that view. */
#ifndef MFS_SCRATCH_H
#define MFS_SCRATCH_H

#include <sys/stat.h>

#include "fs.h"
#include "wbuf.h"

struct scratch {
	struct wbuf *buf;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	struct timespec mtime, ctime;
	bool linked;              /* still has a name (an internal reference holds the inode) */
};

/* Create scratch file name in model directory dir (+1 ref). */
struct inode *scratch_create(struct inode *dir, const char *name, mode_t mode, uid_t uid,
			     gid_t gid, int *err);
/* The linked scratch file name in dir (+1 ref), or NULL. */
struct inode *scratch_find(struct inode *dir, const char *name);
int scratch_write(struct inode *si, uint64_t off, const void *data, size_t len);
int scratch_truncate(struct inode *si, uint64_t size);
/* Remove the name (the data lives on while open). */
void scratch_unlink(struct inode *si);
/* Rename a scratch file within the model's directories. */
int scratch_rename(struct inode *si, struct inode *newdir, const char *newname);
void scratch_stat(struct inode *si, struct stat *st);
/* Free s, returning its bytes to fs's scratch budget. */
void scratch_free(struct fsstate *fs, struct scratch *s);
/* Names of the linked scratch files in dir, for readdir (caller frees each
 * and the array). */
char **scratch_list(struct inode *dir, size_t *n);

#endif
