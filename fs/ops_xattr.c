/* Extended attributes: getxattr, listxattr, setxattr, removexattr.
 *
 * A tensor directory and each of its views (shape, dtype, values.txt, data,
 * data.npy, matrix.mtx) carry
 *   user.modelfs.shape   the `shape` file's text without its newline ("2 3")
 *   user.modelfs.dtype   the `dtype` file's text without its newline
 *   user.modelfs.offset  where the first element is in the source file, in
 *                        decimal bytes; only for raw dense storage (tensors
 *                        stored as text, sparse or in blocks have none)
 *   user.modelfs.storage the storage it shares with other tensors (a
 *                        PyTorch storage's key), where the format has one
 * Other model entries, .modelfs and editors' scratch files have none.
 * SOURCE entries shown as they are (directories, plain files, links) show
 * the user.* attributes of the source entry, read-only.
 *
 * Nothing can be set or removed: ENOTSUP, which cp -a, mv and tar skip in
 * silence (EACCES would make cp -a print an error for every file copied
 * into the mount). Names outside user.* are answered at once: security.*
 * and system.* (SELinux labels, POSIX ACLs) with ENOTSUP, as a file system
 * without them does, so that ls -l, which asks for both on every file,
 * stops asking after the first (it remembers ENOTSUP per device); others
 * (trusted.*) with ENODATA. The kernel asks for security.capability before
 * every write. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>

#include "model_fs.h"
#include "ops.h"

#define XA_SHAPE "user.modelfs.shape"
#define XA_DTYPE "user.modelfs.dtype"
#define XA_OFFSET "user.modelfs.offset"
#define XA_STORAGE "user.modelfs.storage"
/* The kernel's limit on one attribute's value and on a list of names. */
#define XA_SIZE_MAX 65536

/* The attributes of a model entry. */
struct xattrs {
	unsigned n;
	const char *names[4];
	char vals[4][1024];
	size_t lens[4];
};

static bool is_source(const struct inode *i)
{
	return i->kind == I_SDIR || i->kind == I_SFILE || i->kind == I_SLINK;
}

static void xattrs_add(struct xattrs *x, const char *name, const char *val, size_t len)
{
	x->names[x->n] = name;
	memcpy(x->vals[x->n], val, len);
	x->lens[x->n] = len;
	x->n++;
}

/* The attributes of a model entry (none but for tensors). 0 or -errno. */
static int model_xattrs(struct inode *i, struct xattrs *x)
{
	x->n = 0;
	if (i->kind != I_MODEL && !is_vnode(i))
		return 0;  /* .modelfs, scratch files */
	struct mfs_err err = {0};
	struct mref *r = fsmodel_current(i->fm, &err);
	if (!r)
		return -(err.code ? err.code : EIO);
	int ret = 0;
	mfs_id id = vnode_resolve(i, r);
	const struct mfs_tensor *t = id == MFS_NONE ? NULL : mfs_node_tensor(r->m, id);
	if (id == MFS_NONE) {
		ret = -ENOENT;
	} else if (t) {
		char buf[1024];
		size_t n = mfs_tensor_shape_text(t, buf, sizeof(buf));
		xattrs_add(x, XA_SHAPE, buf, n ? n - 1 : 0);
		const char *dt = mfs_tensor_dtype_name(t);
		xattrs_add(x, XA_DTYPE, dt, strlen(dt));
		if (!t->ops) {
			int k = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)t->off);
			xattrs_add(x, XA_OFFSET, buf, (size_t)k);
		}
		if (t->storage)  /* cut to the value's room, as the shape is */
			xattrs_add(x, XA_STORAGE, t->storage, strnlen(t->storage, sizeof(x->vals[0])));
	}
	mref_put(r);
	return ret;
}

/* A path to a SOURCE entry that the l*xattr calls take without following
 * the entry itself (the root is reached through its descriptor). */
static void source_path(const struct inode *i, char *buf, size_t size, bool *follow)
{
	struct fsstate *fs = i->fs;
	*follow = !i->parent;
	if (!i->parent)
		snprintf(buf, size, "/proc/self/fd/%d", fs->root_fd);
	else
		snprintf(buf, size, "/proc/self/fd/%d/%s", dir_fd(i->parent), i->name);
}

/* The user.* names of a SOURCE entry (NUL-separated, caller frees), or
 * NULL with *err. A file system without attributes has none. */
static char *source_list(const struct inode *i, size_t *len, int *err)
{
	char path[PATH_MAX + 64];
	bool follow;
	source_path(i, path, sizeof(path), &follow);
	char *all = malloc(XA_SIZE_MAX);
	char *out = malloc(XA_SIZE_MAX);
	if (!all || !out) {
		free(all);
		free(out);
		*err = ENOMEM;
		return NULL;
	}
	ssize_t n = follow ? listxattr(path, all, XA_SIZE_MAX) : llistxattr(path, all, XA_SIZE_MAX);
	if (n < 0 && (errno == ENOTSUP || errno == ENODATA))
		n = 0;
	if (n < 0) {
		*err = errno;
		free(all);
		free(out);
		return NULL;
	}
	size_t o = 0;
	for (size_t p = 0; p < (size_t)n;) {
		size_t l = strnlen(all + p, (size_t)n - p);
		if (strncmp(all + p, "user.", 5) == 0) {
			memcpy(out + o, all + p, l);
			out[o + l] = '\0';
			o += l + 1;
		}
		p += l + 1;
	}
	free(all);
	*len = o;
	return out;
}

/* Answer a query of a value or list: its size when size is 0, ERANGE
 * when it does not fit, else the bytes. */
static void reply_value(fuse_req_t req, size_t size, const void *v, size_t len)
{
	if (size == 0)
		fuse_reply_xattr(req, len);
	else if (size < len)
		reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, v, len);
}

static void source_getxattr(fuse_req_t req, struct inode *i, const char *name, size_t size)
{
	char path[PATH_MAX + 64];
	bool follow;
	source_path(i, path, sizeof(path), &follow);
	size_t cap = size == 0 || size > XA_SIZE_MAX ? XA_SIZE_MAX : size;
	char *buf = malloc(cap);
	if (!buf)
		return reply_err(req, ENOMEM);
	ssize_t n = follow ? getxattr(path, name, buf, cap) : lgetxattr(path, name, buf, cap);
	int e = errno;
	if (n < 0) {
		free(buf);
		return reply_err(req, e == ENOTSUP ? ENODATA : e);
	}
	reply_value(req, size, buf, (size_t)n);
	free(buf);
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fsstate *fs = req_fs(req);
	if (strncmp(name, "security.", 9) == 0 || strncmp(name, "system.", 7) == 0)
		return reply_err(req, ENOTSUP);
	if (strncmp(name, "user.", 5) != 0)
		return reply_err(req, ENODATA);
	struct inode *i = inode_get(fs, ino);
	if (!i)
		return reply_err(req, ESTALE);
	if (is_source(i)) {
		source_getxattr(req, i, name, size);
		inode_put(i);
		return;
	}
	struct xattrs x;
	int r = model_xattrs(i, &x);
	inode_put(i);
	if (r < 0)
		return reply_err(req, -r);
	for (unsigned k = 0; k < x.n; k++)
		if (strcmp(name, x.names[k]) == 0)
			return reply_value(req, size, x.vals[k], x.lens[k]);
	reply_err(req, ENODATA);
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fsstate *fs = req_fs(req);
	struct inode *i = inode_get(fs, ino);
	if (!i)
		return reply_err(req, ESTALE);
	if (is_source(i)) {
		size_t len = 0;
		int e = 0;
		char *list = source_list(i, &len, &e);
		inode_put(i);
		if (!list)
			return reply_err(req, e);
		reply_value(req, size, list, len);
		free(list);
		return;
	}
	struct xattrs x;
	int r = model_xattrs(i, &x);
	inode_put(i);
	if (r < 0)
		return reply_err(req, -r);
	char list[sizeof(XA_SHAPE) + sizeof(XA_DTYPE) + sizeof(XA_OFFSET) + sizeof(XA_STORAGE)];
	size_t len = 0;
	for (unsigned k = 0; k < x.n; k++) {
		size_t l = strlen(x.names[k]) + 1;  /* with its NUL */
		memcpy(list + len, x.names[k], l);
		len += l;
	}
	reply_value(req, size, list, len);
}

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		 size_t size, int flags)
{
	(void)ino;
	(void)name;
	(void)value;
	(void)size;
	(void)flags;
	reply_err(req, ENOTSUP);
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	(void)ino;
	(void)name;
	reply_err(req, ENOTSUP);
}
