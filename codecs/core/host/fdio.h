/* Whole reads and writes of a descriptor: the one loop that retries what
 * the kernel cut short (EINTR, short counts), for the commit engine and the
 * command line. */
#ifndef MFS_FDIO_H
#define MFS_FDIO_H

#include <stddef.h>
#include <stdint.h>

/* MFS_AT_POS as off: at the descriptor's file position (write/read), not
 * at an offset (pwrite/pread). */
#define MFS_AT_POS (-1)

/* All len bytes of buf to fd at off: 0 or -errno. */
int mfs_write_all(int fd, const void *buf, size_t len, int64_t off);
/* All len bytes of fd at off into buf: 0, -EIO when the file ends first,
 * or -errno. */
int mfs_read_all(int fd, void *buf, size_t len, int64_t off);

/* The copy's pieces: what one copy_file_range is asked for, and the size of
 * buf (the copy through memory where the kernel cannot copy). */
#define MFS_COPY_PIECE (64u << 20)
#define MFS_COPY_BUF (1u << 20)

/* [off, off + len) of src to dst at doff, the one copy of the commit
 * engine (rewrites, rollbacks): by copy_file_range where dst's file system
 * does more with it than copy through memory (a reflink, a copy on the
 * server) or off and doff are at the same place in a page; else, or for
 * what the kernel refuses, by splice through a pipe of MFS_COPY_BUF bytes;
 * else through buf (MFS_COPY_BUF bytes). 0, -EIO
 * when src ends first, or -errno. */
int mfs_copy_range(int src, uint64_t off, int dst, uint64_t doff, uint64_t len, char *buf);

#endif
