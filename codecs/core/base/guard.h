/* Safe reads of mapped source files: a file truncated by someone else while
 * mapped raises SIGBUS on access; inside mfs_guarded() that becomes -EIO with
 * a message instead of killing the daemon. */
#ifndef MFS_GUARD_H
#define MFS_GUARD_H

#include "error.h"

/* Run fn(arg) and return its result, or -EIO if it touched a mapping past the
 * end of its file. fn must not hold locks or own memory that a jump out of it
 * would leak (model building allocates from the model, which the caller frees
 * on error). Nested calls are fine. */
int mfs_guarded(int (*fn)(void *arg), void *arg, struct mfs_err *err);
/* Install the SIGBUS handler again, in front of one installed since (a test
 * framework's, which then gets the faults outside mfs_guarded());
 * mfs_guarded() installs it once by itself. */
void mfs_guard_install(void);

#endif
