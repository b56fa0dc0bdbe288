/* Errors that say what happened: an errno-like code plus a message, set where
 * the error is detected (libarchive's archive_set_error, libgit2's giterr). */
#ifndef MFS_ERROR_H
#define MFS_ERROR_H

#include <stddef.h>

#define MFS_ERRMSG_MAX 240

struct mfs_err {
	int code;                  /* positive errno value, 0 if none */
	char msg[MFS_ERRMSG_MAX];  /* human-readable, no trailing newline */
};

/* Record an error and return -code, so that callers can write
 *     return mfs_error(err, EINVAL, "expected %zu values, got %zu", a, b);
 * A NULL err is allowed (the message is dropped). */
int mfs_error(struct mfs_err *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the message already in err with more context ("param w: ..."). */
int mfs_error_prefix(struct mfs_err *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void mfs_err_clear(struct mfs_err *err);

#endif
