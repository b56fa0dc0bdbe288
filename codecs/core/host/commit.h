/* Committing a patch to a source file, crash-safely (SQLite's atomic commit):
 *
 * - full rewrite: the new content is written beside the file under a private
 *   temporary name (the unchanged bytes copied by mfs_copy_range), fsynced, checked by indexing it again with the
 *   same codec and against an outside write to the old file meanwhile,
 *   renamed over the original (mode and owner kept), and the directory is
 *   fsynced;
 * - in place, when every span keeps its length: the old bytes go to a
 *   rollback journal beside the file (fsynced), the file is patched and
 *   fsynced, then the journal is removed. A journal found later means the
 *   patch may be half done: mfs_recover_*() writes the old bytes back.
 *   When the journal's name is taken by one left alone (see below), the
 *   commit rewrites the file instead.
 *
 * After a crash at any moment the file holds the old or the new content.
 * A sidecar in the patch is replaced afterwards by temporary file + rename.
 */
#ifndef MFS_COMMIT_H
#define MFS_COMMIT_H

#include <stdbool.h>
#include <sys/stat.h>

#include "edit.h"
#include "model.h"

struct mfs_commit_opts {
	bool no_inplace;    /* always rewrite the whole file */
	bool no_fsync;      /* tests only: skip fsync (not crash-safe) */
	/* A full rewrite of a new file of progress_min bytes or more calls
	 * progress (when set) after every progress_step bytes written (at
	 * least 1 MiB) and once at the end: name, bytes written, new size. */
	void (*progress)(void *ctx, const char *name, uint64_t done, uint64_t total);
	void *progress_ctx;
	uint64_t progress_min, progress_step;
	/* Set: m->name in dirfd is a symbolic link to the file m was indexed
	 * from, whose stat this is (the caller resolved the link). The new
	 * content becomes a regular file renamed over the link, never a patch
	 * in place: the file the link leads to is left byte-identical. */
	const struct stat *link_target;
	/* The source's name in dirfd, when it is not m->name: a model shared
	 * by the names of one file is committed through the name written to. */
	const char *name;
};

/* Apply p, made against model m, to m->name (opts->name) in dirfd (or in the place of
 * the link of that name: opts->link_target). m->fd must be the source that
 * m was indexed from. */
int mfs_commit(int dirfd, const struct mfs_model *m, const struct mfs_patch *p,
	       const struct mfs_commit_opts *opts, struct mfs_err *err);

/* Journals are trusted only as this process's own (codecs/README, "How a
 * commit travels"): one that is not (a link, not a regular file, another
 * owner, a mode other than 0600, more than one link, an old format) or
 * that fails a check of its content (lengths, CRC-32, the file's size) is
 * left in place, never applied: MFS_JOURNAL_LEFT, with err saying why (the
 * caller reports it; the file is read as it is). */
#define MFS_JOURNAL_LEFT 2

/* Roll back an interrupted in-place patch of name (one entry of dirfd), if
 * its journal says so, and remove the journal. Returns 1 if something was
 * rolled back, 0 if not, MFS_JOURNAL_LEFT, or -errno. */
int mfs_recover_file(int dirfd, const char *name, struct mfs_err *err);
/* A journal's lock is held by its commit from its creation until it is
 * removed: recovery leaves a locked journal alone (-EBUSY), so neither
 * another process nor another thread rolls back a commit under way.
 * mfs_journal_abandoned: 1 when name has a journal of ours that recovery
 * would roll back and nobody holds (a commit cut short: the file may be
 * half patched until a recovery), 0 when not, MFS_JOURNAL_LEFT for one
 * recovery leaves alone, -EBUSY while a commit holds one. */
int mfs_journal_abandoned(int dirfd, const char *name, struct mfs_err *err);
/* Recover every journal and remove every leftover temporary file of ours
 * in dirfd; report (when set) is called for each journal left alone or
 * that could not be recovered, with the name of the file it sits beside.
 * Returns the number rolled back, or -errno when dirfd cannot be listed. */
typedef void mfs_recover_report(void *ctx, const char *name, const struct mfs_err *err);
int mfs_recover_dir(int dirfd, mfs_recover_report *report, void *ctx, struct mfs_err *err);
/* Names of our temporary and journal files (hidden from the mount). */
bool mfs_private_name(const char *name);

#endif
