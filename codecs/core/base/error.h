/* Errors that say what happened: an errno-like code plus a message, set where
 * the error is detected (libarchive's archive_set_error, libgit2's giterr);
 * and helpers that word the parts of a message the same way everywhere
 * (codecs/README.md: how to write one). */
#ifndef MFS_ERROR_H
#define MFS_ERROR_H

#include <stddef.h>
#include <stdint.h>

#define MFS_ERRMSG_MAX 512

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

/* s[0, n) quoted for a message: "abc", at most 40 bytes of it (then "..."),
 * control bytes and bytes that are not UTF-8 as \xNN, '"' and '\\' after a
 * backslash. out must hold MFS_QUOTE_MAX bytes; returns out. */
#define MFS_QUOTE_MAX 176
/* Bytes of the UTF-8 character at s[0, n) (1 to 4); 0 when they are not
 * one (a stray or overlong byte, a surrogate, a cut character). */
size_t mfs_utf8_char(const void *s, size_t n);
const char *mfs_quote(char *out, const void *s, size_t n);

/* A shape as "2 3 4" ("()" for a scalar), cut with "..." to fit
 * out[MFS_SHAPE_TEXT]; returns out. */
#define MFS_SHAPE_TEXT 96
const char *mfs_shape_text(char *out, uint32_t ndim, const uint64_t *dims);
/* A refused number of a dtype: mfs_value_error (dtype.h). */

#endif
