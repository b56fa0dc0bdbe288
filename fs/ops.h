/* The FUSE low-level operations, by file (ops_node.c, ops_dir.c,
 * ops_file.c); main.c puts them in the table. */
#ifndef MFS_OPS_H
#define MFS_OPS_H

#include "fs.h"

/* Find the child name of parent (+1 ref), or NULL with *err (positive). The
 * kind of parent decides where it comes from: SOURCE, a model, .modelfs. */
struct inode *child_lookup(struct inode *parent, const char *name, int *err);
struct mref;
/* The inode of node id of generation r in the model directory parent
 * (+1 ref), or NULL when out of memory. */
struct inode *vnode_child(struct inode *parent, struct mref *r, mfs_id id);
/* Reply to a request with an errno, logging unexpected failures. */
void reply_err(fuse_req_t req, int err);
bool is_model_dir(const struct inode *i);

void op_init(void *userdata, struct fuse_conn_info *conn);
/* dirops.c: route the mounted session's reads and writes through hooks
 * that make its INIT reply allow parallel lookups and listings in one
 * directory (libfuse 3.14 never says so). 0, or -errno. */
int dirops_install(struct fuse_session *se);
void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup);
void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets);
void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		struct fuse_file_info *fi);
void op_readlink(fuse_req_t req, fuse_ino_t ino);
void op_statfs(fuse_req_t req, fuse_ino_t ino);

void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
	       const char *newname, unsigned int flags);
void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname);
void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev);

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
	       struct fuse_file_info *fi);
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
	      struct fuse_file_info *fi);
void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* ops_xattr.c: user.modelfs.shape, .dtype, .offset on tensors and their
 * views; SOURCE entries' user.* attributes, read-only. */
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		 size_t size, int flags);
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* ops_file.c: open a view or scratch file for a handle (shared by open and
 * create); fills fi. */
int file_open(struct inode *i, struct fuse_file_info *fi);

#endif
