/* What a file of SOURCE was found to be at one version of it (device,
 * inode, size and mtime): a plain file (it failed to parse, or no codec bids
 * on its name and first bytes), or a model candidate that a listing showed as a
 * directory without parsing it. Kept per (directory, name), so that a
 * directory of many files costs one probe each, a failure is reported once,
 * and a name shows what listings said of it even after the kernel forgot
 * its inode (until its contents are first read). Thread-safe. */
#ifndef MFS_VERDICT_H
#define MFS_VERDICT_H

#include <fuse_lowlevel.h>
#include <sys/stat.h>

enum verdict {
	VERDICT_NONE,        /* nothing known of this version */
	VERDICT_PLAIN,       /* not a model (reported when it failed to parse) */
	VERDICT_CANDIDATE,   /* a codec bids on it; not parsed yet */
};

/* The verdict on name in directory dir at version st; with sidecar, the
 * candidate's codec's sidecar suffix (or NULL). */
enum verdict verdict_get(fuse_ino_t dir, const char *name, const struct stat *st,
			 const char **sidecar);
/* Record one (sidecar: a static string, or NULL); returns the verdict on
 * this version before. */
enum verdict verdict_set(fuse_ino_t dir, const char *name, const struct stat *st,
			 enum verdict v, const char *sidecar);

#endif
