/* modelfs: mount a directory of model files, each shown as a directory tree
 * of its contents. Options, the session and its threads. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "commit.h"
#include "fs.h"
#include "ops.h"

struct fsstate fs;

static const char usage[] =
	"usage: modelfs [options] SOURCE MOUNTPOINT\n"
	"\n"
	"Shows SOURCE at MOUNTPOINT with every model file (primitiv, PLearn, DAPHNE,\n"
	"TenniS) as a directory of its contents. Unmount with fusermount3 -u MOUNTPOINT.\n"
	"\n"
	"options:\n"
	"    -h, --help             this help\n"
	"    -V, --version          version\n"
	"    -f                     stay in the foreground\n"
	"    -d                     debug output (implies -f)\n"
	"    -s                     one thread only\n"
	"    -o ro                  read-only mount\n"
	"    -o allow_other         let other users in (default_permissions is then on)\n"
	"    -o log=FILE            log to FILE (default: stderr in the foreground, else syslog)\n"
	"    -o timeout=SECONDS     kernel cache time of names and attributes (default 86400;\n"
	"                           changes are invalidated when they happen)\n"
	"    -o max_buffer=BYTES    most bytes written to one view before it is closed\n"
	"                           (default 1G; beyond it writes fail with EFBIG)\n"
	"    -o max_scratch=BYTES   most bytes held by editor scratch files in model\n"
	"                           directories, all together (default 256M; then ENOSPC)\n"
	"    -o no_inplace          commit every change by rewriting the whole file\n"
	"    -o <fuse options>      passed to libfuse (see mount.fuse3(8))\n";

enum { KEY_HELP, KEY_VERSION, KEY_RO, KEY_ALLOW_OTHER };

struct cli {
	char *source;
	char *max_buffer, *max_scratch;
	int help, version;
};
static struct cli cli;

#define OPT(t, p) {t, offsetof(struct fsopts, p), 1}
static const struct fuse_opt fs_opts[] = {
	{"log=%s", offsetof(struct fsopts, log_path), 0},
	{"timeout=%lf", offsetof(struct fsopts, timeout), 0},
	OPT("no_inplace", no_inplace),
	OPT("no_fsync", no_fsync),
	FUSE_OPT_END,
};
static const struct fuse_opt cli_opts[] = {
	{"max_buffer=%s", offsetof(struct cli, max_buffer), 0},
	{"max_scratch=%s", offsetof(struct cli, max_scratch), 0},
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_END,
};

static int cli_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	(void)data;
	(void)out;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (!cli.source) {
			cli.source = strdup(arg);
			return 0;  /* ours: SOURCE */
		}
		return 1;  /* MOUNTPOINT: libfuse's */
	case KEY_HELP:
		cli.help = 1;
		return 0;
	case KEY_VERSION:
		cli.version = 1;
		return 0;
	case KEY_RO:
		fs.o.ro = 1;
		return 1;  /* the kernel enforces it too */
	case KEY_ALLOW_OTHER:
		fs.o.allow_other = 1;
		return 1;
	default:
		return 1;
	}
}

static int parse_size(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	case 't': case 'T': v <<= 40; end++; break;
	}
	if (*end)
		return -1;
	*out = v;
	return 0;
}

static void fuse_logger(enum fuse_log_level level, const char *fmt, va_list ap)
{
	char buf[1024];
	vsnprintf(buf, sizeof(buf), fmt, ap);
	size_t n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	log_msg(level <= FUSE_LOG_ERR ? LOG_ERR : level >= FUSE_LOG_DEBUG ? LOG_DEBUG : LOG_INFO,
		"%s", buf);
}

/* Leftover temporary and journal files of commits cut short: roll back,
 * remove. The root now; every other directory in the background. */
static void recover_tree(int dfd, int depth, bool root_only)
{
	struct mfs_err err = {0};
	if (mfs_recover_dir(dfd, &err) < 0)
		log_msg(LOG_ERR, "recovery: %s", err.msg);
	if (root_only || depth > 64)
		return;
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			recover_tree(sub, depth + 1, false);
			close(sub);
		}
	}
	closedir(d);
}

static void *recover_thread(void *arg)
{
	(void)arg;
	int fd = openat(fs.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		recover_tree(fd, 0, false);
		close(fd);
	}
	return NULL;
}

static void raise_fd_limit(void)
{
	struct rlimit lim;
	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < lim.rlim_max) {
		lim.rlim_cur = lim.rlim_max;
		setrlimit(RLIMIT_NOFILE, &lim);
	}
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.statfs = op_statfs,
	.create = op_create,
};

/* Parses the command line, mounts and serves until unmounted; the exit
 * status (0, 1 for a failure, 2 for a usage error). */
static int mount_main(struct fuse_args *a, struct fuse_cmdline_opts *co)
{
	fs.o.timeout = 86400.0;
	fs.o.max_buffer = 1ull << 30;
	fs.o.max_scratch = 256ull << 20;
	fs.inotify_fd = -1;
	if (fuse_opt_parse(a, &cli, cli_opts, cli_proc) < 0 ||
	    fuse_opt_parse(a, &fs.o, fs_opts, NULL) < 0)
		return 2;
	if (cli.help) {
		fputs(usage, stdout);
		printf("\nlibfuse options:\n");
		fuse_lowlevel_help();
		return 0;
	}
	if (cli.version) {
		printf("modelfs %s (libfuse %s)\n", MODELFS_VERSION, fuse_pkgversion());
		return 0;
	}
	if ((cli.max_buffer && parse_size(cli.max_buffer, &fs.o.max_buffer) < 0) ||
	    (cli.max_scratch && parse_size(cli.max_scratch, &fs.o.max_scratch) < 0)) {
		fprintf(stderr, "modelfs: bad size in -o max_buffer/max_scratch\n");
		return 2;
	}
	if (fuse_parse_cmdline(a, co) != 0)
		return 2;
	if (!cli.source || !co->mountpoint) {
		fputs(usage, stderr);
		return 2;
	}
	fs.o.foreground = co->foreground;
	fs.o.debug = co->debug;
	fs.o.singlethread = co->singlethread;
	fs.o.mountpoint = co->mountpoint;
	fs.o.source = realpath(cli.source, NULL);
	if (!fs.o.source) {
		fprintf(stderr, "modelfs: %s: %s\n", cli.source, strerror(errno));
		return 1;
	}
	fs.root_fd = open(fs.o.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs.root_fd < 0) {
		fprintf(stderr, "modelfs: %s: %s\n", fs.o.source, strerror(errno));
		return 1;
	}
	fs.uid = getuid();
	fs.gid = getgid();
	raise_fd_limit();
	log_init();
	fuse_set_log_func(fuse_logger);
	inode_table_init();
	fs.root = calloc(1, sizeof(*fs.root));
	fs.root->ino = FUSE_ROOT_ID;
	fs.root->name = strdup("");
	fs.root->kind = I_SDIR;
	fs.root->fd = -1;
	fs.root->refs = 1;
	fs.root->nlookup = 1;
	fs.root->node = MFS_NONE;
	pthread_mutex_init(&fs.root->lock, NULL);
	pthread_mutex_init(&fs.root->rlock, NULL);
	inode_insert_root(fs.root);

	/* Names of the mount; other users only with the kernel checking
	 * permissions (and we always ask it to). */
	char fsname[PATH_MAX + 32];
	snprintf(fsname, sizeof(fsname), "-ofsname=modelfs,subtype=modelfs,default_permissions");
	if (fuse_opt_add_arg(a, fsname) != 0)
		return 1;
	if (!fs.o.ro) {
		int rfd = openat(fs.root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rfd >= 0) {
			recover_tree(rfd, 0, true);
			close(rfd);
		}
	}

	int ret = 1;
	fs.se = fuse_session_new(a, &ops, sizeof(ops), NULL);
	if (!fs.se)
		goto out;
	if (fuse_set_signal_handlers(fs.se) != 0)
		goto out_session;
	if (fuse_session_mount(fs.se, co->mountpoint) != 0)
		goto out_signals;
	if (fuse_daemonize(co->foreground) != 0)
		goto out_unmount;
	/* Threads start after daemonizing (fork keeps only the caller). */
	notify_start();
	if (watch_start() < 0)
		log_msg(LOG_WARNING, "inotify unavailable: outside changes show after timeouts");
	pthread_t rt;
	if (!fs.o.ro && pthread_create(&rt, NULL, recover_thread, NULL) == 0)
		pthread_detach(rt);
	log_msg(LOG_INFO, "mounted %s on %s", fs.o.source, co->mountpoint);
	if (co->singlethread) {
		ret = fuse_session_loop(fs.se);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();
		fuse_loop_cfg_set_clone_fd(lc, co->clone_fd);
		if (co->max_threads > 0 && co->max_threads != UINT_MAX)  /* set by -o max_threads */
			fuse_loop_cfg_set_max_threads(lc, co->max_threads);
		fuse_loop_cfg_set_idle_threads(lc, co->max_idle_threads);
		ret = fuse_session_loop_mt(fs.se, lc);
		fuse_loop_cfg_destroy(lc);
	}
	watch_stop();
	notify_stop();
	/* Ended by a signal (SIGINT, SIGTERM, SIGHUP) is a clean unmount. */
	if (ret == SIGINT || ret == SIGTERM || ret == SIGHUP || ret == -SIGINT ||
	    ret == -SIGTERM || ret == -SIGHUP)
		ret = 0;
out_unmount:
	fuse_session_unmount(fs.se);
out_signals:
	fuse_remove_signal_handlers(fs.se);
out_session:
	fuse_session_destroy(fs.se);
out:
	return ret ? 1 : 0;
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts co = {0};
	int ret = mount_main(&args, &co);
	free(co.mountpoint);
	fuse_opt_free_args(&args);
	return ret;
}
