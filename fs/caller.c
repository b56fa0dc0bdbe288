/* Acting as the caller (caller.h). Linux keeps fsuid, fsgid and, at the
 * raw system call, the supplementary groups per thread: a worker thread
 * takes the caller's for the one system call that creates or changes a
 * name, and takes the daemon's back. glibc's setgroups() would change
 * every thread; syscall(SYS_setgroups) changes this one. The umask is per
 * file system context, which each worker thread unshares once (CLONE_FS)
 * to set a umask of 0: the mode passed is already masked with the
 * caller's umask. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "caller.h"

#define GROUPS_ON_STACK 64
#define GROUPS_MAX 4096            /* groups taken from a caller at most */
#define GROUPS_TEXT (GROUPS_MAX * 11 + 4096)  /* /proc status read for them */

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

/* The "Groups:" line of the caller's /proc/TID/status into g (at most max;
 * the count, or -1 when the line is missing, longer than max or not read
 * whole). Read here, not with fuse_req_getgroups, whose search of the file
 * runs past the end of its buffer (libfuse 3.14: the text is not
 * terminated). */
static int read_groups(pid_t tid, gid_t *g, int max)
{
	char path[64], buf[GROUPS_TEXT];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	size_t len = 0;
	ssize_t k;
	while (len < sizeof(buf) - 1 && (k = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)k;
	close(fd);
	buf[len] = '\0';
	const char *p = strstr(buf, "\nGroups:");
	if (!p)
		return -1;
	p += 8;
	int n = 0;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		char *end;
		unsigned long v = strtoul(p, &end, 10);
		if (n == max)
			return -1;
		g[n++] = (gid_t)v;
		p = end;
	}
	/* a line cut by the buffer could end in part of a number: refused */
	return *p == '\n' ? n : -1;
}

/* The caller's supplementary groups (from /proc); none when they cannot be
 * read (a caller in another pid namespace, more groups than GROUPS_MAX):
 * fewer rights, never more. */
static int take_groups(fuse_req_t req)
{
	gid_t stack[GROUPS_ON_STACK], *g = stack;
	pid_t tid = fuse_req_ctx(req)->pid;
	int n = read_groups(tid, stack, GROUPS_ON_STACK);
	if (n < 0 && (g = malloc(GROUPS_MAX * sizeof(gid_t))) != NULL)
		n = read_groups(tid, g, GROUPS_MAX);
	if (!g)
		g = stack;
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
