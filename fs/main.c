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

#include "caller.h"
#include "cli.h"
#include "codec.h"
#include "commit.h"
#include "detach.h"
#include "fs.h"
#include "links.h"
#include "model_fs.h"
#include "ops.h"
#include "pending.h"
#include "scratch.h"
#include "source.h"
#include "view.h"
#include "warm.h"


/* The --help text: the formats (from the codec table), then every option,
 * with its default in brackets. Kept in step with the option tables below
 * and with the man page (fs/modelfs.1). */
static const char usage_head[] =
	"usage: modelfs [options] SOURCE MOUNTPOINT\n"
	"\n"
	"Shows SOURCE at MOUNTPOINT with every model file as a directory of its\n"
	"contents. Formats:";
static const char usage[] =
	"\n"
	"Unmount with fusermount3 -u MOUNTPOINT (or umount MOUNTPOINT as root).\n"
	"See modelfs(1).\n"
	"\n"
	"options (default in brackets):\n"
	"    -h, --help             this help\n"
	"    -V, --version          version\n"
	"    -f                     stay in the foreground [off: detach once mounted]\n"
	"    -d, -o debug           log every FUSE request (implies -f) [off]\n"
	"    -s                     one thread only [off]\n"
	"    -r, -o ro              read-only mount [off]\n"
	"    -o rw                  read-write mount [on]\n"
	"    -o allow_other         let other users in; the kernel checks permissions\n"
	"                           (default_permissions is always on) [off]\n"
	"    -o log=FILE            log to FILE, appending [stderr with -f, else syslog]\n"
	"    -o timeout=SECONDS     kernel cache time of names and attributes; changes\n"
	"                           are invalidated when they happen [86400]\n"
	"    -o max_buffer=BYTES    most bytes written to one view before it is closed,\n"
	"                           and the largest size a write may give a smaller\n"
	"                           view; beyond it writes fail with EFBIG; also what\n"
	"                           a commit may hold besides the written bytes [1G]\n"
	"    -o max_scratch=BYTES   most bytes held by editor scratch files in model\n"
	"                           directories, all together; then ENOSPC [256M]\n"
	"    -o text_cache=BYTES    most bytes of text views kept from their size pass\n"
	"                           for the reads that follow, all together; 0: none\n"
	"                           [a sixteenth of the memory, at most 1G]\n"
	"    -o max_index=BYTES     most bytes the indexes of open models hold (parsed\n"
	"                           headers, trees), all together; an open that would\n"
	"                           need more fails with ENOMEM [a quarter of the memory]\n"
	"                           (BYTES: a number with an optional k, M, G or T)\n"
	"    -o progress=BYTES      a commit that rewrites a file of at least BYTES logs\n"
	"                           its progress, every quarter of BYTES [1G]\n"
	"    -o no_inplace          commit every change by rewriting the whole file [off]\n"
	"    -o no_fsync            commit without fsync; not crash-safe, for tests [off]\n"
	"    -o no_openat2          resolve links in SOURCE as without openat2, for tests [off]\n"
	"\n"
	"libfuse options:\n"
	"    -o max_threads=N       most worker threads [10]\n"
	"    -o max_idle_threads=N  most idle worker threads kept [-1: all]\n"
	"    -o clone_fd            one /dev/fuse descriptor per thread [off]\n"
	"    -o allow_root          let root in besides the mounting user [off]\n"
	"    -o auto_unmount        unmount when modelfs exits [off]\n"
	"    -o fsname=NAME         source shown in mount tables [SOURCE's full path]\n"
	"    -o subtype=NAME        type shown in mount tables as fuse.NAME [modelfs]\n"
	"    -o OPTION              other options go to libfuse (see mount.fuse3(8))\n"
	"\n"
	"mount(8) options: dev, nodev, suid, nosuid, exec, noexec, sync, async,\n"
	"dirsync, atime and noatime go to the kernel [nosuid,nodev]; defaults,\n"
	"auto, noauto, user, users, nouser, owner, group, nofail, _netdev, relatime,\n"
	"norelatime, strictatime, nostrictatime, lazytime, nolazytime, diratime,\n"
	"nodiratime, iversion, noiversion, mand, nomand, silent, loud, comment=...\n"
	"and x-... are accepted and ignored (fstab: SOURCE MOUNTPOINT fuse.modelfs\n"
	"ro,noauto 0 0).\n";

enum { KEY_HELP, KEY_VERSION, KEY_RO, KEY_RW, KEY_ALLOW_OTHER, KEY_IGNORE };

/* What the command line says beyond struct fsopts. */
struct cli {
	struct fsopts *o;             /* -o ro, rw and allow_other land here */
	char *source;
	char *max_buffer, *max_scratch, *text_cache, *max_index, *progress;
	int help, version;
	int has_fsname, has_subtype;  /* given by the user: ours are not added */
};

#define OPT(t, p) {t, offsetof(struct fsopts, p), 1}
static const struct fuse_opt fs_opts[] = {
	{"log=%s", offsetof(struct fsopts, log_path), 0},
	{"timeout=%lf", offsetof(struct fsopts, timeout), 0},
	OPT("no_inplace", no_inplace),
	OPT("no_fsync", no_fsync),
	OPT("no_openat2", no_openat2),
	FUSE_OPT_END,
};
static const struct fuse_opt cli_opts[] = {
	{"max_buffer=%s", offsetof(struct cli, max_buffer), 0},
	{"max_scratch=%s", offsetof(struct cli, max_scratch), 0},
	{"text_cache=%s", offsetof(struct cli, text_cache), 0},
	{"max_index=%s", offsetof(struct cli, max_index), 0},
	{"progress=%s", offsetof(struct cli, progress), 0},
	{"fsname=", offsetof(struct cli, has_fsname), 1},
	{"subtype=", offsetof(struct cli, has_subtype), 1},
	FUSE_OPT_KEY("fsname=", FUSE_OPT_KEY_KEEP),
	FUSE_OPT_KEY("subtype=", FUSE_OPT_KEY_KEEP),
	FUSE_OPT_KEY("-h", KEY_HELP),
	FUSE_OPT_KEY("--help", KEY_HELP),
	FUSE_OPT_KEY("-V", KEY_VERSION),
	FUSE_OPT_KEY("--version", KEY_VERSION),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("-r", KEY_RO),
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("comment=", KEY_IGNORE),
	FUSE_OPT_END,
};

/* Options mount(8) and fstab lines may hand on (through mount.fuse3, which
 * drops only user, nouser, users, auto, noauto, nofail and _netdev) that
 * neither libfuse nor the kernel's FUSE mount takes: accepted and ignored,
 * so that an fstab line written for any file system works here. Those
 * libfuse knows (ro, rw, dev, suid, exec, sync, async, dirsync, atime and
 * their no- forms) go on to the kernel. */
static const char *const ignored_mount_opts[] = {
	"defaults", "auto", "noauto", "user", "users", "nouser", "owner", "group",
	"nofail", "_netdev", "relatime", "norelatime", "strictatime", "nostrictatime",
	"lazytime", "nolazytime", "diratime", "nodiratime", "iversion", "noiversion",
	"mand", "nomand", "silent", "loud",
};

static bool ignored_mount_opt(const char *arg)
{
	if (strncmp(arg, "x-", 2) == 0)  /* x-systemd.*, x-gvfs-*: userspace only */
		return true;
	for (size_t k = 0; k < sizeof(ignored_mount_opts) / sizeof(ignored_mount_opts[0]); k++)
		if (strcmp(arg, ignored_mount_opts[k]) == 0)
			return true;
	return false;
}

static int cli_proc(void *data, const char *arg, int key, struct fuse_args *out)
{
	struct cli *cli = data;
	(void)out;
	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		if (!cli->source) {
			cli->source = strdup(arg);
			return 0;  /* ours: SOURCE */
		}
		return 1;  /* MOUNTPOINT: libfuse's */
	case FUSE_OPT_KEY_OPT:
		return ignored_mount_opt(arg) ? 0 : 1;
	case KEY_HELP:
		cli->help = 1;
		return 0;
	case KEY_VERSION:
		cli->version = 1;
		return 0;
	case KEY_RO:
		cli->o->ro = 1;
		return 1;  /* the kernel enforces it too */
	case KEY_RW:
		cli->o->ro = 0;  /* the last of ro and rw wins, as in mount(8) */
		return 1;
	case KEY_ALLOW_OTHER:
		cli->o->allow_other = 1;
		return 1;
	case KEY_IGNORE:
		return 0;
	default:
		return 1;
	}
}

/* The strings fuse_opt_parse and cli_proc copied into c. */
static void cli_free(struct cli *c)
{
	free(c->source);
	free(c->max_buffer);
	free(c->max_scratch);
	free(c->text_cache);
	free(c->max_index);
	free(c->progress);
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

/* A journal the sweep left alone (or could not recover): a line in the log
 * and in .modelfs/errors, under the path of the file it sits beside. */
static void recover_report(void *ctx, const char *name, const struct mfs_err *err)
{
	const char *dir = ctx;
	char path[4096];
	snprintf(path, sizeof(path), "%s%s%s", dir, dir[0] ? "/" : "", name);
	log_error(NULL, path, err->code, err->msg);
}

/* Leftover temporary and journal files of commits cut short: roll back,
 * remove. The root before the mount (self, not below); every other
 * directory in the background (below, not self). rel: the directory's path
 * in SOURCE ("" for the root). */
static void recover_tree(int dfd, const char *rel, int depth, bool self, bool below)
{
	struct mfs_err err = {0};
	if (self && mfs_recover_dir(dfd, recover_report, (void *)rel, &err) < 0)
		log_msg(LOG_ERR, "recovery: %s", err.msg);
	if (!below || depth > 64)
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
		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
		    src_hidden(dfd, e->d_name))
			continue;
		int sub = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		char *path = NULL;
		if (sub >= 0 && asprintf(&path, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name) >= 0)
			recover_tree(sub, path, depth + 1, true, true);
		free(path);
		if (sub >= 0)
			close(sub);
	}
	closedir(d);
}

static void *recover_thread(void *arg)
{
	struct fsstate *fs = arg;
	int fd = openat(fs->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		recover_tree(fd, "", 0, false, true);
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
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.setxattr = op_setxattr,
	.removexattr = op_removexattr,
};

/* The usage text, its list of formats the codec table's titles in bidding
 * order, wrapped at 79 columns. */
static void print_usage(FILE *f)
{
	size_t col = sizeof(usage_head) - 1 - (strrchr(usage_head, '\n') - usage_head + 1);
	fputs(usage_head, f);
	for (size_t i = 0; mfs_codecs[i]; i++) {
		/* A codec without its title (test_registry fails) shows its name. */
		const char *t = mfs_codecs[i]->title ? mfs_codecs[i]->title : mfs_codecs[i]->name;
		size_t w = strlen(t) + 2;  /* a space before, a comma or period after */
		if (col + w > 79) {
			fputs("\n", f);
			col = 0;
		} else {
			fputc(' ', f);
			col++;
		}
		fprintf(f, "%s%c", t, mfs_codecs[i + 1] ? ',' : '.');
		col += w - 1;
	}
	fputs(usage, f);
}

/* Parses the options into fs->o: 0 to go on, else the exit status plus one
 * (1 for --help/--version, 2 for a failure, 3 for a usage error). */
static int parse_options(struct fsstate *fs, struct cli *cli, struct fuse_args *a,
			 struct fuse_cmdline_opts *co)
{
	cli->o = &fs->o;
	fs->o.timeout = 86400.0;
	fs->o.max_buffer = 1ull << 30;
	fs->o.max_scratch = 256ull << 20;
	fs->o.progress = 1ull << 30;
	fs->o.text_cache = MFS_TEXT_CACHE_DEFAULT;
	fs->o.max_index = MFS_INDEX_DEFAULT;
	if (fuse_opt_parse(a, cli, cli_opts, cli_proc) < 0 ||
	    fuse_opt_parse(a, &fs->o, fs_opts, NULL) < 0)
		return 3;
	if (cli->help) {
		print_usage(stdout);
		putchar('\n');
		cli_usage(stdout);
		return 1;
	}
	if (cli->version) {
		printf("modelfs %s (libfuse %s)\n", MODELFS_VERSION, fuse_pkgversion());
		return 1;
	}
	if ((cli->max_buffer && parse_size(cli->max_buffer, &fs->o.max_buffer) < 0) ||
	    (cli->max_scratch && parse_size(cli->max_scratch, &fs->o.max_scratch) < 0) ||
	    (cli->progress && parse_size(cli->progress, &fs->o.progress) < 0)) {
		fprintf(stderr, "modelfs: bad size in -o max_buffer/max_scratch/progress\n");
		return 3;
	}
	if (cli->text_cache) {
		if (parse_size(cli->text_cache, &fs->o.text_cache) < 0) {
			fprintf(stderr, "modelfs: bad size in -o text_cache\n");
			return 3;
		}
	}
	if (cli->max_index &&
	    (parse_size(cli->max_index, &fs->o.max_index) < 0 || !fs->o.max_index)) {
		fprintf(stderr, "modelfs: bad size in -o max_index (at least 1)\n");
		return 3;
	}
	if (fuse_parse_cmdline(a, co) != 0)
		return 3;
	if (!cli->source || !co->mountpoint) {
		print_usage(stderr);
		return 3;
	}
	fs->o.foreground = co->foreground;
	fs->o.debug = co->debug;
	fs->o.singlethread = co->singlethread;
	fs->o.mountpoint = co->mountpoint;
	return 0;
}

/* Opens SOURCE; -1 (with a message on stderr) when it cannot. */
static int open_source(struct fsstate *fs, const struct cli *cli)
{
	fs->o.source = realpath(cli->source, NULL);
	if (!fs->o.source) {
		fprintf(stderr, "modelfs: %s: %s\n", cli->source, strerror(errno));
		return -1;
	}
	fs->root_fd = open(fs->o.source, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fs->root_fd < 0) {
		fprintf(stderr, "modelfs: %s: %s\n", fs->o.source, strerror(errno));
		return -1;
	}
	int r = src_hide_mountpoint(fs->o.source, fs->o.mountpoint);
	if (r < 0) {
		fprintf(stderr, "modelfs: %s: %s\n", fs->o.mountpoint, strerror(-r));
		return -1;
	}
	return 0;
}

/* The root inode, in the inode table; -1 when out of memory. */
static int make_root(struct fsstate *fs)
{
	fs->root = calloc(1, sizeof(*fs->root));
	if (!fs->root || !(fs->root->name = strdup(""))) {
		fprintf(stderr, "modelfs: out of memory\n");
		return -1;
	}
	fs->root->ino = FUSE_ROOT_ID;
	fs->root->kind = I_SDIR;
	fs->root->fd = -1;
	fs->root->refs = 1;
	fs->root->nlookup = 1;
	fs->root->node = MFS_NONE;
	pthread_mutex_init(&fs->root->lock, NULL);
	pthread_mutex_init(&fs->root->rlock, NULL);
	inode_insert_root(fs, fs->root);
	return 0;
}

/* Names of the mount: SOURCE's full path as its source in mount tables
 * (so that umount SOURCE, df, and mount -a, which compares sources, work
 * as for other file systems), fuse.modelfs as its type, unless the user
 * named them; other users only with the kernel checking permissions
 * (and we always ask it to). 0, or -1 when out of memory. */
static int add_mount_names(const struct fsstate *fs, const struct cli *cli, struct fuse_args *a)
{
	char fsname[PATH_MAX + 16];
	snprintf(fsname, sizeof(fsname), "fsname=%s", fs->o.source);
	char *mopts = NULL;
	int oerr = cli->has_fsname ? 0 : fuse_opt_add_opt_escaped(&mopts, fsname);
	if (!oerr && !cli->has_subtype)
		oerr = fuse_opt_add_opt(&mopts, "subtype=modelfs");
	if (!oerr)
		oerr = fuse_opt_add_opt(&mopts, "default_permissions");
	if (!oerr && (fuse_opt_add_arg(a, "-o") != 0 || fuse_opt_add_arg(a, mopts) != 0))
		oerr = -1;
	free(mopts);
	return oerr ? -1 : 0;
}

/* Runs the session's loop until unmounted or signalled; libfuse's status. */
static int serve(struct fsstate *fs, struct fuse_cmdline_opts *co)
{
	/* libfuse's messages went to stderr until now (a bad option or mount
	 * point is reported where the command was typed, also through
	 * mount(8)); from here on they go to the log, as ours do. */
	fuse_set_log_func(fuse_logger);
	/* Threads start after daemonizing (fork keeps only the caller). */
	notify_start(fs->se);
	if (watch_start(fs) < 0)
		log_msg(LOG_WARNING, "inotify unavailable: outside changes show after timeouts");
	pthread_t rt;
	if (!fs->o.ro && pthread_create(&rt, NULL, recover_thread, fs) == 0)
		pthread_detach(rt);
	log_msg(LOG_INFO, "mounted %s on %s", fs->o.source, co->mountpoint);
	int ret;
	if (co->singlethread) {
		ret = fuse_session_loop(fs->se);
	} else {
		struct fuse_loop_config *lc = fuse_loop_cfg_create();
		if (!lc) {
			log_msg(LOG_ERR, "out of memory");
			ret = 1;
			goto out;
		}
		fuse_loop_cfg_set_clone_fd(lc, co->clone_fd);
		if (co->max_threads > 0 && co->max_threads != UINT_MAX)  /* set by -o max_threads */
			fuse_loop_cfg_set_max_threads(lc, co->max_threads);
		if (co->max_idle_threads != UINT_MAX)  /* -1, the default: libfuse's own */
			fuse_loop_cfg_set_idle_threads(lc, co->max_idle_threads);
		ret = fuse_session_loop_mt(fs->se, lc);
		fuse_loop_cfg_destroy(lc);
	}
out:
	watch_stop(fs);
	notify_stop();
	/* Ended by a signal (SIGINT, SIGTERM, SIGHUP) is a clean unmount. */
	if (ret == SIGINT || ret == SIGTERM || ret == SIGHUP || ret == -SIGINT ||
	    ret == -SIGTERM || ret == -SIGHUP)
		ret = 0;
	return ret;
}

/* Everything the session needs before it starts: the log, the inode table
 * and its root, the core's runtime, the mount's names, and the leftovers of
 * cut-short commits in SOURCE's root rolled back. 0, or -1 with a message on
 * stderr. */
/* An inode leaves the table: what it holds of the layers above it. */
static void inode_gone(struct inode *i)
{
	pending_free(i->pend);
	i->pend = NULL;
	fsmodel_inode_gone(i);
	scratch_free(i->fs, i->scr);
	listing_put(i->snap);
}

static int prepare(struct fsstate *fs, const struct cli *cli, struct fuse_args *a)
{
	fs->inode_gone = inode_gone;
	fs->uid = getuid();
	fs->gid = getgid();
	caller_init();
	raise_fd_limit();
	log_init(&fs->o);
	link_walk_only(fs->o.no_openat2);
	struct mfs_runtime_opts rto = {.text_cache = fs->o.text_cache,
				       .max_index = fs->o.max_index};
	struct mfs_err err = {0};
	if (inode_table_init(fs) < 0 || mfs_runtime_new(&fs->rt, &rto, &err) < 0) {
		fprintf(stderr, "modelfs: out of memory\n");
		return -1;
	}
	if (make_root(fs) < 0 || add_mount_names(fs, cli, a) < 0)
		return -1;
	if (!fs->o.ro) {
		int rfd = openat(fs->root_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rfd >= 0) {
			recover_tree(rfd, "", 0, true, false);
			close(rfd);
		}
	}
	return 0;
}

/* Parses the command line, mounts and serves until unmounted; the exit
 * status (0, 1 for a failure, 2 for a usage error). */
static int mount_main(struct fsstate *fs, struct fuse_args *a, struct fuse_cmdline_opts *co)
{
	fs->inotify_fd = -1;
	struct cli cli = {0};
	int pr = parse_options(fs, &cli, a, co);
	int ok = pr == 0 && open_source(fs, &cli) == 0 && prepare(fs, &cli, a) == 0;
	cli_free(&cli);
	if (!ok) {
		mfs_runtime_free(fs->rt);
		return pr ? pr - 1 : 1;
	}
	int ret = 1;
	fs->se = fuse_session_new(a, &ops, sizeof(ops), fs);
	if (!fs->se)
		goto out;
	if (fuse_set_signal_handlers(fs->se) != 0)
		goto out_session;
	if (fuse_session_mount(fs->se, co->mountpoint) != 0)
		goto out_signals;
	if (dirops_install(fs->se) < 0)
		log_msg(LOG_WARNING, "lookups in one directory wait for each other");
	if (detach(co->foreground) == 0)
		ret = serve(fs, co);
	fuse_session_unmount(fs->se);
out_signals:
	fuse_remove_signal_handlers(fs->se);
out_session:
	fuse_session_destroy(fs->se);
	warm_stop();
out:
	mfs_runtime_free(fs->rt);  /* no request comes any more */
	fs->rt = NULL;
	return ret ? 1 : 0;
}

int main(int argc, char *argv[])
{
	if (argc > 1 && cli_is_command(argv[1]))
		return cli_main(argc, argv);
	/* The mount's state: every part reaches it through the session's
	 * userdata, an inode's back pointer, or the arguments of the threads
	 * it starts. It lives in this frame until the process exits (exit, not
	 * return, keeps the frame: what the mount holds is never freed one
	 * piece at a time, and stays reachable to the end). */
	struct fsstate fs = {0};
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts co = {0};
	int ret = mount_main(&fs, &args, &co);
	free(co.mountpoint);
	fuse_opt_free_args(&args);
	exit(ret);
}
