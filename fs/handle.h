/* Open files by number: the kernel may send RELEASE while an interrupted
 * request of the same file is still being served (its process was killed),
 * so a request holds the open file it works on, and release frees it only
 * when the last one lets go. */
#ifndef MFS_HANDLE_H
#define MFS_HANDLE_H

#include <stdint.h>

struct fh;
/* A new open file (no descriptor, no model), or NULL. */
struct fh *fh_new(void);
/* Free an open file and what it holds (its writes, descriptor, read
 * cache, model references; its inode last). handle_put calls it for the
 * last reference of a registered one. */
void fh_destroy(struct fh *h);
/* Register h (which now holds one reference); returns its number for fi->fh. */
uint64_t handle_add(struct fh *h);
/* The open file numbered id, +1 reference, or NULL if it was released. */
struct fh *handle_get(uint64_t id);
/* Drop a reference; the last one frees it (fh_destroy). */
void handle_put(struct fh *h);
/* RELEASE: unregister id and return it (the registration's reference is the
 * caller's to drop). */
struct fh *handle_remove(uint64_t id);

#endif
