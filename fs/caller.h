/* Acting as the user of a request: what a request creates in SOURCE
 * (files, directories, links, nodes) belongs to its caller, with the
 * caller's umask, and the kernel under SOURCE checks the caller's rights
 * again on names it changes. */
#ifndef MFS_CALLER_H
#define MFS_CALLER_H

#include <fuse_lowlevel.h>

/* At start, before threads: whether the daemon runs as root (it then
 * switches identity per request) and its own groups. */
void caller_init(void);
/* This thread takes the caller's file system identity (fsuid, fsgid and
 * supplementary groups) and a umask of 0, until caller_leave. 0 or
 * -errno (EPERM: the identity could not be taken; nothing was done). */
int caller_enter(fuse_req_t req);
void caller_leave(void);
/* The mode a new entry gets: mode without the caller's umask (the kernel
 * leaves the umask to us, FUSE_CAP_DONT_MASK). */
mode_t caller_mode(fuse_req_t req, mode_t mode);

#endif
