/* Source files shown as models: their parsed model, its generations, and
 * commits. A struct fsmodel lives inside the I_MODEL inode of the file. */
#ifndef MFS_MODEL_FS_H
#define MFS_MODEL_FS_H

#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "codec.h"
#include "fs.h"

/* What a shared generation was parsed from (share.h). */
struct share_key {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim, ctim;
	const struct mfs_codec *codec;
	int cls;                    /* the codec's name_class of the name */
};

/* A counted reference to one parsed generation of a model. */
struct mref {
	struct mfs_model *m;
	atomic_int refs;
	uint64_t gen;               /* unique in the process */
	atomic_int users;           /* models whose current generation it is: with
				     * more than one, a commit never patches in place */
	bool shared;                /* in share.c's table, as key */
	struct share_key key;
	struct mref *share_next;
};
struct mref *mref_hold(struct mref *r);
void mref_put(struct mref *r);

struct fsmodel {
	struct inode *inode;        /* its I_MODEL inode (which owns this) */
	pthread_mutex_t lock;       /* guards cur, st, side_st, gen, sidecar, stale */
	struct mref *cur;           /* the last generation parsed, or NULL */
	struct stat st;             /* the source version shown (parsed, or only bid on) */
	struct stat side_st;        /* its sidecar then (st_ino 0: none) */
	uint64_t gen;
	const char *sidecar;        /* the codec's sidecar suffix, or NULL (static) */
	bool stale;                 /* cur is not of version st: parse on next access */
	pthread_mutex_t commit;     /* one commit (or parse) at a time */
	pthread_rwlock_t rw;        /* readers (read lock) vs in-place patching */
	atomic_int open_views;      /* open files of its views: patch in place only
				     * when the committing one is the only one */
};

/* Classify the source entry name in directory dir (an I_SDIR inode): a
 * model, a plain file, a directory or a link. Returns the inode (+1 ref)
 * and fills st with the source entry's stat, or NULL with *err_out set to
 * a positive errno.
 *
 * A regular file that a codec bids on is a model. A listing reads only its
 * first bytes, and what it showed holds for later lookups of the name (see
 * verdict.h): the model is indexed when its contents are first needed
 * (fsmodel_current); if it fails then, the entry turns into a plain file
 * (its error is logged, the kernel's entry and its parent's listing are
 * dropped). A lookup of a name no listing showed (listing false) indexes
 * it at once: one that fails to parse is a plain file from the start. */
struct inode *source_child(struct inode *dir, const char *name, struct stat *st, bool listing,
			   int *err_out);
/* d_type of a source entry without parsing (for readdir): DT_UNKNOWN for a
 * file that may be a model but was not parsed yet. */
unsigned source_dtype(struct inode *dir, const char *name, unsigned char d_type);

/* The current generation of a model (+1 ref), parsing first if the source
 * changed or was only bid on. NULL when the file does not parse (err set,
 * ESTALE: the entry is a plain file now). */
struct mref *fsmodel_current(struct fsmodel *fm, struct mfs_err *err);
/* The node of an I_MODEL/I_VNODE inode in generation r, or MFS_NONE. */
mfs_id vnode_resolve(struct inode *i, struct mref *r);
/* Commit new content of node (resolved in the current generation) to the
 * source. own: open files of the model that the committer itself holds (1
 * for a file's flush, 0 for a rename over a view); with any other open, the
 * source is rewritten beside, never patched in place. Returns 0, 1 (nothing
 * to change) or -errno with err filled. */
int fsmodel_commit(struct fsmodel *fm, struct inode *vi, const struct mfs_content *c, int own,
		   struct mfs_err *err);
/* Re-check the source (after an inotify event, and when a view or model
 * directory is opened, so that the next access sees an outside change even
 * before its event arrives); invalidate kernel caches if it changed. */
void fsmodel_check(struct fsmodel *fm);
/* Workers rendering ahead for rc hold fm->rw as readers, as the reads do:
 * an in-place commit never changes the source under a render. */
void fsmodel_hold_reads(struct fsmodel *fm, struct mfs_rcache *rc);
/* The I_MODEL inode is freed: free its model. */
void fsmodel_inode_gone(struct inode *i);

#endif
