/* Parallel lookups and listings in one directory.
 *
 * The kernel serializes every lookup and readdir of a directory (a mutex
 * per directory inode) unless the INIT reply carries FUSE_PARALLEL_DIROPS.
 * libfuse before 3.17 asks for FUSE_CAP_PARALLEL_DIROPS by default but
 * never puts the flag in its reply, so there one file's parse (a lookup
 * indexes a model) held up every other name of its directory. The session's
 * reads and writes go through the hooks below, which pass everything on
 * unchanged except that reply, where the flag is set when the kernel
 * offered it (op_init asks for the capability). */
#include <linux/fuse.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/uio.h>
#include <syslog.h>
#include <unistd.h>

#include "fs.h"
#include "ops.h"

/* The INIT request seen (its unique and the kernel's flags) until its reply
 * is written: the first request and reply of a session, one per process. */
static _Atomic uint64_t init_unique;
static _Atomic uint32_t init_flags;
static atomic_bool init_seen, init_done;

static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	(void)userdata;
	ssize_t n = read(fd, buf, len);
	if (n >= (ssize_t)(sizeof(struct fuse_in_header) + sizeof(struct fuse_init_in)) &&
	    !atomic_load(&init_seen)) {
		const struct fuse_in_header *h = buf;
		const struct fuse_init_in *in = (const void *)(h + 1);
		if (h->opcode == FUSE_INIT) {
			atomic_store(&init_unique, h->unique);
			atomic_store(&init_flags, in->flags);
			atomic_store(&init_seen, true);
		}
	}
	return n;
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	if (atomic_load(&init_seen) && !atomic_load(&init_done) && count >= 2 &&
	    iov[0].iov_len >= sizeof(struct fuse_out_header) &&
	    iov[1].iov_len >= offsetof(struct fuse_init_out, flags) + sizeof(uint32_t)) {
		const struct fuse_out_header *o = iov[0].iov_base;
		if (o->unique == atomic_load(&init_unique) && o->error == 0) {
			struct fuse_init_out *out = iov[1].iov_base;
			atomic_store(&init_done, true);
			if (atomic_load(&init_flags) & FUSE_PARALLEL_DIROPS) {
				out->flags |= FUSE_PARALLEL_DIROPS;
				log_msg(LOG_DEBUG, "parallel lookups and listings in a directory: on");
			}
		}
	}
	return writev(fd, iov, count);
}

static ssize_t io_splice(int fdin, off_t *offin, int fdout, off_t *offout, size_t len,
			 unsigned int flags, void *userdata)
{
	(void)userdata;
	return splice(fdin, offin, fdout, offout, len, flags);
}

int dirops_install(struct fuse_session *se)
{
	static const struct fuse_custom_io io = {
		.read = io_read,
		.writev = io_writev,
		.splice_receive = io_splice,
		.splice_send = io_splice,
	};
	return fuse_session_custom_io(se, &io, fuse_session_fd(se));
}
