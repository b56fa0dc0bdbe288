/* The FUSE layer's shared state: options, the inode table and what each
 * kind of inode refers to. Only fs/ includes libfuse; nothing here knows a
 * format (models are opaque mfs_model trees from codecs/).
 *
 * Locking order: an inode's lock, then the table lock (fs->lock), then a
 * model's lock; an inode's rlock is taken last and alone. A model's commit
 * mutex comes before all of them. No lock is held while replying to the
 * kernel, except a model's read lock around replies that splice its source.
 */
#ifndef MFS_FS_H
#define MFS_FS_H

#include <fuse_lowlevel.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>

#include "model.h"
#include "runtime.h"
#include "view.h"
#include "wbuf.h"

struct fsopts {
	char *source;
	char *mountpoint;
	char *log_path;
	double timeout;          /* entry/attr timeout for unchanged entries */
	uint64_t max_buffer;     /* bytes one written view may hold */
	uint64_t max_scratch;    /* bytes all editor scratch files may hold */
	uint64_t progress;       /* rewrites of files this large log their progress */
	uint64_t text_cache;     /* bytes of text views kept (MFS_TEXT_CACHE_DEFAULT) */
	uint64_t max_index;      /* bytes all models' indexes hold (MFS_INDEX_DEFAULT) */
	int ro;
	int foreground, debug, singlethread;
	int no_inplace;          /* always rewrite whole files (tests) */
	int no_fsync;            /* tests only: commits without fsync */
	int no_openat2;          /* tests only: links resolved by the walk (links.c) */
	int allow_other;
};

enum ikind {
	I_SDIR = 1,   /* a directory of SOURCE (the root included) */
	I_SFILE,      /* a file of SOURCE shown as it is (plain, or a model that failed) */
	I_SLINK,      /* a symbolic link of SOURCE (never followed) */
	I_MODEL,      /* a model file shown as a directory */
	I_VNODE,      /* a file node inside a model (a view) */
	I_VDIR,       /* a directory node inside a model */
	I_VLINK,      /* a link node inside a model */
	I_SCRATCH,    /* an editor's temporary file inside a model directory */
	I_META,       /* MOUNTPOINT/.modelfs */
	I_ERRORS,     /* MOUNTPOINT/.modelfs/errors */
};

struct mref;            /* a counted reference to a parsed model (model.c) */
struct fsmodel;         /* a source file shown as a model (model.c) */
struct scratch;         /* scratch.c */
struct pending;         /* pending writes of a view (pending.c) */
struct listing;         /* a directory listing (listing.h) */

struct inode {
	fuse_ino_t ino;
	struct fsstate *fs;       /* the mount it belongs to */
	struct inode *parent;     /* counted reference; NULL for the root */
	char *name;               /* as shown in the mount */
	enum ikind kind;
	uint64_t nlookup;         /* the kernel's references (fs->lock) */
	uint64_t refs;            /* our own references (fs->lock) */
	struct inode *hnext;      /* hash chain (fs->lock) */
	struct inode *kids;       /* children known to the table (fs->lock) */
	struct inode *sib_prev, *sib_next;  /* in the parent's kids (fs->lock) */

	pthread_mutex_t rlock;    /* guards gen, node and mtime (taken alone, briefly) */
	uint64_t gen;             /* I_V*: model generation node was resolved in */
	mfs_id node;              /* I_V*: node id in that generation */
	struct timespec mtime;    /* I_V*, I_MODEL: shown mtime (changes with content only) */

	pthread_mutex_t lock;     /* guards the fields below */
	int fd;                   /* I_SDIR: O_PATH descriptor */
	struct fsmodel *fm;       /* I_MODEL: its model; I_V*, I_SCRATCH: the model they are in */
	/* I_VNODE raw views: the kernel keeps one page cache per inode, so it
	 * holds one generation at a time: cache_gen's, filled by the
	 * cache_users open files of that generation. cache_first: the file
	 * that opened a new generation (its open drops the old pages) until
	 * its first read, which comes after that drop. */
	uint64_t cache_gen;
	uint32_t cache_users;
	const void *cache_first;
	/* I_VNODE: the last files opened for writing, by the thread that
	 * opened each: open(O_TRUNC) comes as OPEN, then a SETATTR of size 0
	 * from the same thread that names no file (op_init), which applies
	 * to that file. */
	struct writer_open { pid_t tid; uint64_t fh; } writers[4];
	unsigned writers_next;
	uint64_t read_gen;        /* I_VNODE: generation whose cached view was read to its end (warm.c) */
	struct pending *pend;     /* I_VNODE: writes not yet committed */
	struct scratch *scr;      /* I_SCRATCH */
	bool watched;             /* I_SDIR: inotify watch added */
	struct listing *snap;     /* directories: the listing readdir serves */
	uint64_t snap_gen;        /* model directories: the generation it shows */
	bool stale;               /* the entry is gone or changed type: answer ESTALE */
};

struct fsstate {
	struct fsopts o;
	struct fuse_session *se;
	int root_fd;              /* O_PATH of SOURCE */
	struct inode *root;
	pthread_mutex_t lock;     /* the inode table */
	struct inode **table;
	size_t nbuckets, ninodes;
	atomic_uint_fast64_t scratch_bytes;
	int inotify_fd;
	uid_t uid;
	gid_t gid;
	bool no_opendir;          /* the kernel opens directories without us */
	struct mfs_runtime *rt;   /* the models' workers and kept text */
	/* What the layers above the inode table free with an inode (its model,
	 * scratch files, listing snapshot): set by main.c, so that inode.c
	 * calls nothing above it. */
	void (*inode_gone)(struct inode *i);
};

/* A mount's state, reached from a request (the session's userdata), from
 * any of its inodes (i->fs), or passed to the threads it starts. */
static inline struct fsstate *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static inline bool is_vnode(const struct inode *i)
{
	return i->kind == I_VNODE || i->kind == I_VDIR || i->kind == I_VLINK;
}

/* inode.c */
/* A source directory inode's O_PATH descriptor. */
int dir_fd(struct inode *dir);
/* A real (not O_PATH) descriptor of a source directory, for fsync. */
int dir_open(struct inode *dir);
struct timespec inode_mtime(struct inode *i);
void inode_set_mtime(struct inode *i, struct timespec t);
struct inode *inode_get(struct fsstate *fs, fuse_ino_t ino);  /* +1 ref, or NULL */
void inode_ref(struct inode *i);                         /* +1 ref on one held */
void inode_put(struct inode *i);
/* Find or create the child (parent, name, kind); +1 ref. The class of the
 * kind (dir, file, link) is part of the key: a file shown as a directory
 * and as a plain file gets two inode numbers. */
struct inode *inode_child(struct inode *parent, const char *name, enum ikind kind);
/* The number (parent, name, kind) gets unless it collides (for readdir
 * entries that are not looked up). */
fuse_ino_t inode_number(const struct inode *parent, const char *name, enum ikind kind);
/* The existing child (parent, name, kind), +1 ref, or NULL (never creates). */
struct inode *inode_find_child(struct inode *parent, const char *name, enum ikind kind);
void inode_lookup_ref(struct inode *i);                  /* the kernel gained a reference */
void inode_lookup_put(struct inode *i);                  /* the same, and inode_put */
void inode_forget(struct inode *i, uint64_t n);
int inode_path(const struct inode *i, char *buf, size_t size);  /* relative to the mount */
/* A SOURCE entry was renamed: i is now newname in np (numbers stay). */
int inode_rename(struct inode *i, struct inode *np, const char *newname);
int inode_table_init(struct fsstate *fs);
void inode_insert_root(struct fsstate *fs, struct inode *root);
/* Call fn on every inode of a model, on every child of parent, or on every
 * inode of the table (under the table lock: fn must not lock it; it costs
 * what it visits). */
void inode_foreach(struct fsstate *fs, void (*fn)(struct inode *, void *), void *arg);
void inode_foreach_model(struct fsmodel *fm, void (*fn)(struct inode *, void *), void *arg);
void inode_foreach_in(struct inode *parent, void (*fn)(struct inode *, void *), void *arg);

/* listing.c: drop a directory's listing snapshot (its entries changed
 * through us; the kernel drops its own cache for changes it made). */
void dir_changed(struct inode *dir);
void listing_put(struct listing *l);

/* log.c: a line in the log, and in .modelfs/errors when it is an error. */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_error(const struct inode *where, const char *name, int code, const char *msg);
/* .modelfs/errors content snapshot (caller frees). */
char *errors_snapshot(size_t *len);
void log_init(const struct fsopts *o);

/* notify.c: kernel cache invalidation from a thread of its own. */
void notify_inval_inode(fuse_ino_t ino);
void notify_inval_entry(fuse_ino_t parent, const char *name);
/* The same, waiting until the kernel has dropped the entry (at most ms:
 * the kernel may wait for the caller's own request). */
void notify_inval_entry_wait(fuse_ino_t parent, const char *name, int ms);
int notify_start(struct fuse_session *se);
void notify_stop(void);
/* watch.c: source changes seen by inotify. */
int watch_start(struct fsstate *fs);
void watch_dir(struct inode *dir);
void watch_stop(struct fsstate *fs);

#endif
