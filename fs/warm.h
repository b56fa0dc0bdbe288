/* Second reads of large cached views at the page cache's full speed.
 *
 * The kernel moves a cached page to its active list on the page's second
 * use, one page at a time. FUSE's page cache holds 4 KiB pages (ext4 keeps
 * large folios, one move for hundreds of pages), so a second reader of a
 * 1 GiB view spent a third of its time on those moves (4.5 GB/s, then 6.5
 * from the third read on, like cat of a plain file). When a large view that
 * was read to its end is opened again, a child process of ours splices it
 * through the mount to /dev/null, which uses each page once more without
 * copying it: the pages move ahead of the reader, as its own pass would
 * move them.
 * A view read once is left alone (the kernel keeps use-once pages off the
 * active list on purpose). */
#ifndef MFS_WARM_H
#define MFS_WARM_H

#include <stdint.h>

#include "fs.h"

/* Views smaller than this are not worth a warming pass. */
#define WARM_MIN_BYTES (64u << 20)

/* i was opened again for reading (open file number fh), in generation
 * gen, its page cache kept: warm it if it was read through in that
 * generation (i->read_gen, set under i->lock by the read that reached its
 * end) and is large. The pass stops when that file is released (its
 * own open of the mount would make an unmount right after fail). */
void warm_on_open(struct inode *i, uint64_t gen, uint64_t size, uint64_t fh);
/* No warming from now on; wait (a second at most) for what runs, once the
 * mount is gone (a pass then ends at once). */
void warm_stop(void);

#endif
