/* Acting as the caller (caller.h). Linux keeps fsuid, fsgid and, at the
 * raw system call, the supplementary groups per thread: a worker thread
 * takes the caller's for the one system call that creates or changes a
 * name, and takes the daemon's back. glibc's setgroups() would change
 * every thread; syscall(SYS_setgroups) changes this one. The umask is per
 * file system context, which each worker thread unshares once (CLONE_FS)
 * to set a umask of 0: the mode passed is already masked with the
 * caller's umask. */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caller.h"

#define GROUPS_ON_STACK 64

static bool as_root;         /* the daemon runs as root: switch per request */
static uid_t own_uid;
static gid_t own_gid;
static gid_t *own_groups;
static int own_ngroups;
static __thread bool own_fs;     /* this thread has its own umask (0) */
static __thread bool switched;   /* this thread holds a caller's identity */

void caller_init(void)
{
	as_root = geteuid() == 0;
	own_uid = geteuid();
	own_gid = getegid();
	int n = getgroups(0, NULL);
	if (n > 0) {
		own_groups = malloc((size_t)n * sizeof(gid_t));
		if (own_groups)
			own_ngroups = getgroups(n, own_groups);
		if (own_ngroups < 0)
			own_ngroups = 0;
	}
}

static int set_groups(int n, const gid_t *g)
{
	return syscall(SYS_setgroups, (size_t)n, g) < 0 ? -errno : 0;
}

/* The caller's supplementary groups (from /proc, by libfuse); none when
 * they cannot be read (a caller in another pid namespace): fewer rights,
 * never more. */
static int take_groups(fuse_req_t req)
{
	gid_t stack[GROUPS_ON_STACK], *g = stack;
	int n = fuse_req_getgroups(req, GROUPS_ON_STACK, stack);
	if (n > GROUPS_ON_STACK) {
		g = malloc((size_t)n * sizeof(gid_t));
		int m = g ? fuse_req_getgroups(req, n, g) : -1;
		if (m != n) {
			free(g);
			g = stack;
			n = 0;
		}
	}
	if (n < 0)
		n = 0;
	int r = set_groups(n, g);
	if (g != stack)
		free(g);
	return r;
}

int caller_enter(fuse_req_t req)
{
	if (!own_fs) {
		/* once per thread; without it the process umask would change */
		if (unshare(CLONE_FS) == 0)
			umask(0);
		own_fs = true;
	}
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	if (!as_root || (ctx->uid == own_uid && ctx->gid == own_gid))
		return 0;
	if (take_groups(req) < 0)
		return -EPERM;
	setfsgid(ctx->gid);
	setfsuid(ctx->uid);
	switched = true;
	/* setfs*id tell no error: read them back */
	if ((uid_t)setfsuid((uid_t)-1) != ctx->uid || (gid_t)setfsgid((gid_t)-1) != ctx->gid) {
		caller_leave();
		return -EPERM;
	}
	return 0;
}

void caller_leave(void)
{
	if (!switched)
		return;
	setfsuid(own_uid);
	setfsgid(own_gid);
	set_groups(own_ngroups, own_groups);
	switched = false;
}

mode_t caller_mode(fuse_req_t req, mode_t mode)
{
	return mode & ~fuse_req_ctx(req)->umask;
}
