/* The rollback journal of in-place commits and the names of the commit
 * engine's files, shared by commit.c (which writes journals and
 * temporaries) and sweep.c (which finds leftovers). Not for codecs. */
#ifndef MFS_JOURNAL_H
#define MFS_JOURNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "edit.h"
#include "error.h"
#include "model.h"

#define MFS_JOURNAL_SUFFIX ".mfs-journal"
#define MFS_TMP_MARK ".mfs-tmp."
#define MFS_COPY_CHUNK (1u << 20)

/* ".<name>.mfs-journal", or ".mfs-<hash of name>.mfs-journal" when that
 * would be over 255 bytes. */
void mfs_journal_name(const char *name, char out[256]);
/* ".<name>.mfs-tmp.<12 hex of rnd>", or the hashed form. */
void mfs_tmp_name(const char *name, uint64_t rnd, char out[256]);
/* A name that is one entry of a directory: not empty, ".", ".." or with a
 * slash. */
bool mfs_one_component(const char *name);

/* An open file description's lock on the whole of fd (so that another
 * thread of this process sees it taken too): 0, or -1 with errno. */
int mfs_ofd_lock(int fd, bool exclusive, bool wait);

/* The journal of patch p over model m (its file's stat st) into jfd, a new
 * empty file: header, the old bytes of every span, CRC-32, end mark. */
int mfs_journal_write(int jfd, const struct stat *st, const struct mfs_model *m,
		      const struct mfs_patch *p, uint8_t *buf, struct mfs_err *err);

/* Roll back name in dirfd by journal jn, which the caller holds open and
 * locked as jfd (read-write), after every check; then remove it. 1 when
 * rolled back, 0 when it was removed unapplied (cut short before its patch
 * began, or about a file replaced since), MFS_JOURNAL_LEFT when left alone
 * (err says why), or -errno. */
int mfs_journal_settle(int dirfd, const char *jn, int jfd, const char *name,
		       struct mfs_err *err);
/* mfs_recover_file for the journal named jn beside name. */
int mfs_journal_recover(int dirfd, const char *jn, const char *name, struct mfs_err *err);

#endif
