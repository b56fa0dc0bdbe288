/* `modelfs set FILE PATH [VALUE]`: new content for a view, from stdin or
 * VALUE, checked and committed by the same engine as a mount's commit on
 * close (mfs_view_write, then mfs_commit; see fs/fsmodel.c fsmodel_commit).
 * No libfuse here. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "cli_impl.h"
#include "commit.h"
#include "fdio.h"
#include "view.h"

/* The new content: stdin (a regular file is read where it lies), or VALUE
 * and a newline. */
struct input {
	int fd;              /* >= 0: pread from fd at base */
	uint64_t base;
	struct mfs_buf text; /* else held here */
	uint64_t len;
};

static int input_read(void *ctx, uint64_t off, size_t len, void *out)
{
	struct input *in = ctx;
	if (in->fd < 0) {
		memcpy(out, in->text.p + off, len);
		return 0;
	}
	return mfs_read_all(in->fd, out, len, (int64_t)(in->base + off));
}

static int input_load(struct input *in, const char *value)
{
	memset(in, 0, sizeof(*in));
	in->fd = -1;
	if (value) {
		if (mfs_buf_add(&in->text, value, strlen(value)) < 0 ||
		    mfs_buf_add(&in->text, "\n", 1) < 0)
			return -ENOMEM;
		in->len = in->text.len;
		return 0;
	}
	struct stat st;
	if (fstat(STDIN_FILENO, &st) < 0)
		return -errno;
	off_t pos = S_ISREG(st.st_mode) ? lseek(STDIN_FILENO, 0, SEEK_CUR) : -1;
	if (pos >= 0) {
		in->fd = STDIN_FILENO;
		in->base = (uint64_t)pos;
		in->len = st.st_size > pos ? (uint64_t)(st.st_size - pos) : 0;
		return 0;
	}
	for (;;) {
		if (mfs_buf_reserve(&in->text, 65536) < 0)
			return -ENOMEM;
		struct mfs_buf *t = &in->text;
		ssize_t n = read(STDIN_FILENO, t->p + t->len, t->cap - t->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		t->len += (size_t)n;
		in->len = t->len;
	}
}

int cli_set(const struct cli_cmd *cmd, const struct cli_args *a)
{
	(void)cmd;
	const char *file = a->pos[0];
	char *path = cli_norm_path(a->pos[1]);
	if (!path)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	struct cli_model cm;
	struct input in = {.fd = -1};
	struct mfs_patch p;
	mfs_patch_init(&p);
	mfs_id id;
	int ret = cli_open_node(&cm, file, path, true, true, &id);
	if (ret != CLI_OK)
		goto out;
	struct mfs_model *m = cm.m;
	struct mfs_err err = {0};
	/* As the mount: the views of a read-only source are read-only. */
	if (faccessat(cm.dirfd, cm.base, W_OK, AT_EACCESS) < 0) {
		ret = cli_failf(file, path, errno, "the model file is not writable: %s",
				strerror(errno));
		goto out;
	}
	int r = input_load(&in, a->npos > 2 ? a->pos[2] : NULL);
	if (r < 0) {
		ret = cli_failf(file, path, -r, "cannot read the new content: %s", strerror(-r));
		goto out;
	}
	struct mfs_content c = {
		.size = in.len, .read = input_read, .ctx = &in, .ext = NULL, .next = 0,
	};
	r = mfs_view_write(m, id, &c, &p, &err);
	if (r < 0) {
		ret = cli_fail(file, path, &err);
		goto out;
	}
	if (r == 0) {
		struct mfs_commit_opts o = {.no_inplace = a->flag['I']};
		if (mfs_commit(cm.dirfd, m, &p, &o, &err) < 0) {
			ret = cli_fail(file, path, &err);
			goto out;
		}
	}
	ret = CLI_OK;  /* r == 1: the content changes nothing; nothing is written */
out:
	mfs_patch_free(&p);
	mfs_buf_free(&in.text);
	cli_close(&cm);
	free(path);
	return ret;
}
