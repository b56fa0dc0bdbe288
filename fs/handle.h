/* Open files by number: the kernel may send RELEASE while an interrupted
 * request of the same file is still being served (its process was killed),
 * so a request holds the open file it works on, and release frees it only
 * when the last one lets go. */
#ifndef MFS_HANDLE_H
#define MFS_HANDLE_H

#include <stdint.h>

struct fh;
/* Register h (which now holds one reference); returns its number for fi->fh. */
uint64_t handle_add(struct fh *h);
/* The open file numbered id, +1 reference, or NULL if it was released. */
struct fh *handle_get(uint64_t id);
/* Drop a reference; the last one frees it (handle_free_fn). */
void handle_put(struct fh *h);
/* RELEASE: unregister id and return it (the registration's reference is the
 * caller's to drop). */
struct fh *handle_remove(uint64_t id);

#endif
