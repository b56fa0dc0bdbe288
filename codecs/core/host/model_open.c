/* Opening a model: find the codec, map the source, read the sidecar, and let
 * the codec index it inside a SIGBUS guard. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "codec.h"
#include "guard.h"
#include "model_impl.h"
#include "siblings.h"
#include "tensor.h"
#include "view_impl.h"

#define SIDECAR_MAX (16u << 20)  /* a .meta file is a line of JSON */
/* Files up to this size are read into memory and closed: no descriptor and
 * no mapping per small model (a directory may hold 100k of them). */
#define SMALL_FILE (256u << 10)
/* A directory's listing is held while a model opens, up to this size. */
#define LISTING_MAX ((size_t)256 << 20)

bool mfs_has_ext(const char *name, const char *ext)
{
	if (!name)
		return false;
	size_t n = strlen(name), e = strlen(ext);
	return n > e && memcmp(name + n - e, ext, e) == 0;
}

const struct mfs_codec *mfs_probe(const uint8_t *head, size_t n, uint64_t size,
				  const char *name)
{
	const struct mfs_codec *best = NULL;
	int best_bid = 0;
	for (size_t i = 0; mfs_codecs[i]; i++) {
		int b = mfs_codecs[i]->bid(head, n, size, name);
		if (b > best_bid) {
			best_bid = b;
			best = mfs_codecs[i];
		}
	}
	return best;
}

static struct mfs_model *model_new(const char *name, struct mfs_runtime *rt)
{
	struct mfs_model *m = calloc(1, sizeof(*m));
	struct mfs_model_impl *im = calloc(1, sizeof(*im));
	if (!m || !im) {
		free(m);
		free(im);
		return NULL;
	}
	m->impl = im;
	m->rt = rt;
	m->fd = -1;
	im->dirfd = -1;
	static _Atomic uint64_t next_uid = 1;
	im->uid = next_uid++;
	mfs_arena_init(&im->arena);
	pthread_mutex_init(&im->cache_lock, NULL);
	m->name = mfs_model_strdup(m, name, strlen(name));
	if (!m->name || mfs_tensor_bands_init(m) < 0) {
		mfs_model_free(m);
		return NULL;
	}
	return m;
}

void mfs_model_free(struct mfs_model *m)
{
	if (!m)
		return;
	struct mfs_model_impl *im = m->impl;
	if (m->codec && m->codec->close)
		m->codec->close(m);
	for (uint32_t i = 0; i < m->ntensors; i++)
		mfs_tcache_free(m->tensors[i].cache);
	for (uint32_t i = 0; i < m->nframes; i++)
		mfs_frame_cache_free(m->frames[i].csv);
	if (im->map)
		munmap(im->map, im->map_len);
	free(im->owned);
	if (im->owns_fd && m->fd >= 0)
		close(m->fd);
	free(im->sidecar_buf);
	free(im->holes);
	free(im->slots);
	free(im->dupes);
	free(im->last);
	free(m->nodes);
	free(m->tensors);
	free(m->frames);
	pthread_mutex_destroy(&im->cache_lock);
	mfs_tensor_bands_free(m);
	mfs_arena_free(&im->arena);
	mfs_model_uncharge(m);
	free(im);
	free(m);
}

struct index_call {
	struct mfs_model *m;
	struct mfs_err *err;
};

static int index_fn(void *arg)
{
	struct index_call *c = arg;
	return c->m->codec->open(c->m, c->err);
}

/* Run the codec's indexer and check what it built. */
static int index_model(struct mfs_model *m, struct mfs_err *err)
{
	if (mfs_model_add_root(m) == MFS_NONE)
		return mfs_error(err, ENOMEM, "out of memory");
	struct index_call c = {m, err};
	int r = mfs_guarded(index_fn, &c, err);
	if (r == -ENOMEM && m->impl->build_err == ENOMEM)
		return mfs_model_build_error(m, err);  /* the index budget's message */
	if (r < 0)
		return r;
	r = mfs_model_build_error(m, err);
	if (r < 0)
		return r;
	/* Links may point anywhere in the tree: check them once it is built. */
	for (uint32_t i = 0; i < m->nnodes; i++)
		if (m->nodes[i].kind == MFS_K_LINK && !(m->nodes[i].flags & MFS_NF_TEXTLINK) &&
		    m->nodes[i].u.link >= m->nnodes)
			return mfs_error(err, EINVAL, "link to a node that does not exist");
	/* The building aid is not needed any more. */
	free(m->impl->last);
	m->impl->last = NULL;
	mfs_model_charge(m, -(int64_t)(m->impl->cap_nodes * sizeof(mfs_id)));
	return 0;
}

int mfs_model_open_mem(struct mfs_model **out, const void *buf, size_t len,
		       const char *name, const void *side, size_t side_len,
		       const struct mfs_codec *codec, struct mfs_err *err)
{
	*out = NULL;
	if (!codec)
		codec = mfs_probe(buf, len < MFS_HEAD_MAX ? len : MFS_HEAD_MAX, len, name);
	if (!codec)
		return mfs_error(err, ENOTSUP, "not a recognised model file");
	struct mfs_model *m = model_new(name, NULL);
	if (!m)
		return mfs_error(err, ENOMEM, "out of memory");
	m->codec = codec;
	m->base = buf;
	m->size = len;
	if (side) {
		m->sidecar = side;
		m->sidecar_len = side_len;
		m->has_sidecar = true;
	}
	int r = index_model(m, err);
	if (r < 0) {
		mfs_model_free(m);
		return r;
	}
	*out = m;
	return 0;
}

static int add_hole(struct mfs_model_impl *im, size_t *cap, uint64_t a, uint64_t b)
{
	if (b - a < MFS_HOLE_MIN)
		return 0;
	if (MFS_ARRAY_RESERVE(im->holes, im->nholes, *cap, 1, 16) < 0)
		return -ENOMEM;
	im->holes[im->nholes++] = (struct mfs_hole){a, b};
	return 0;
}

/* The holes of the source open at fd (holes.c), with SEEK_DATA and
 * SEEK_HOLE. */
static void find_holes(struct mfs_model *m, int fd)
{
	struct mfs_model_impl *im = m->impl;
	size_t cap = 0;
	uint64_t pos = 0;
	while (pos < m->size && im->nholes < MFS_HOLES_MAX) {
		off_t d = lseek(fd, (off_t)pos, SEEK_DATA);
		uint64_t data = d < 0 ? m->size : (uint64_t)d;
		if (d < 0 && errno != ENXIO)
			break;  /* not told: no more holes known */
		if (data > m->size)
			data = m->size;
		if (data > pos && add_hole(im, &cap, pos, data) < 0)
			break;
		if (data >= m->size)
			break;
		off_t h = lseek(fd, (off_t)data, SEEK_HOLE);
		if (h < 0 || (uint64_t)h <= data)
			break;
		pos = (uint64_t)h;
	}
}

static int read_full(int fd, void *buf, size_t len, uint64_t off)
{
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, (char *)buf + got, len - got, (off_t)(off + got));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	return (int)got;
}

/* name in dirfd for reading: through the host's opener, else never
 * through a link. A descriptor or -errno. */
static int open_source(const struct mfs_opener *op, int dirfd, const char *name)
{
	if (op)
		return op->open(op->ctx, dirfd, name);
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

/* Read name + suffix beside the source, if it is a regular file. */
static int read_sidecar(struct mfs_model *m, int dirfd, const char *suffix, struct mfs_err *err)
{
	size_t nl = strlen(m->name), sl = strlen(suffix);
	char *path = malloc(nl + sl + 1);
	if (!path)
		return mfs_error(err, ENOMEM, "out of memory");
	memcpy(path, m->name, nl);
	memcpy(path + nl, suffix, sl + 1);
	int fd = open_source(m->impl->opener, dirfd, path);
	free(path);
	if (fd < 0)
		return 0;  /* no sidecar (or a link we do not follow) */
	struct stat st;
	int r = 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		goto out;
	if ((uint64_t)st.st_size > SIDECAR_MAX) {
		r = mfs_error(err, EFBIG, "the sidecar %s has %llu bytes, at most %u are supported", suffix,
			      (unsigned long long)st.st_size, SIDECAR_MAX);
		goto out;
	}
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		r = mfs_error(err, ENOMEM, "out of memory");
		goto out;
	}
	int n = read_full(fd, buf, (size_t)st.st_size, 0);
	if (n < 0) {
		free(buf);
		r = mfs_error(err, -n, "cannot read sidecar %s", suffix);
		goto out;
	}
	m->impl->sidecar_buf = buf;
	m->sidecar = buf;
	m->sidecar_len = (size_t)n;
	m->has_sidecar = true;
out:
	close(fd);
	return r;
}

int mfs_model_open(struct mfs_model **out, int dirfd, const char *name,
		   const struct mfs_codec *codec, struct mfs_err *err)
{
	return mfs_model_open_as(out, dirfd, name, name, codec, err);
}

static int check_sibling(struct mfs_model *m, const char *name, struct mfs_err *err);
static int check_listed(struct mfs_model *m, const char *name, struct mfs_err *err);

/* The first names a codec asks about are checked by their bytes; beyond
 * this many, by the directory's one listing (MFS_SIBLING_PROBES, model.h). */
struct sibling_state {
	uint32_t probes;
	bool unlisted;                /* the listing failed: probe every name */
	struct mfs_siblings *listed;
	size_t held;                  /* charged for the listing */
};

/* mfs_model_open_as, with the runtime whose index budget the model is
 * charged to as it is built (NULL: none). */
static int open_file(struct mfs_model **out, struct mfs_runtime *rt, int dirfd, const char *path,
		     const char *name, const struct mfs_codec *codec, const struct mfs_opener *op,
		     struct mfs_err *err)
{
	*out = NULL;
	int fd = open_source(op, dirfd, path);
	if (fd < 0)
		return mfs_error(err, -fd, "cannot open: %s", strerror(-fd));
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return mfs_error(err, ENOTSUP, "not a regular file");
	}
	uint64_t size = (uint64_t)st.st_size;
	if (!codec) {
		uint8_t head[MFS_HEAD_MAX];
		int n = read_full(fd, head, sizeof(head), 0);
		if (n < 0) {
			close(fd);
			return mfs_error(err, -n, "cannot read: %s", strerror(-n));
		}
		codec = mfs_probe(head, (size_t)n, size, name);
		if (!codec) {
			close(fd);
			return mfs_error(err, ENOTSUP, "not a recognised model file");
		}
	}
	struct mfs_model *m = model_new(name, rt);
	if (!m) {
		close(fd);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	m->codec = codec;
	m->fd = fd;
	m->impl->owns_fd = true;
	m->size = size;
	m->dev = (uint64_t)st.st_dev;
	m->ino = (uint64_t)st.st_ino;
	if (size && size <= SMALL_FILE) {
		uint8_t *buf = mfs_model_charge(m, (int64_t)size) ? malloc((size_t)size) : NULL;
		int n = buf ? read_full(fd, buf, (size_t)size, 0) : -ENOMEM;
		if (n != (int)size) {
			free(buf);
			mfs_model_free(m);
			return mfs_error(err, n < 0 ? -n : EIO, "cannot read the file");
		}
		m->impl->owned = buf;
		m->base = buf;
		close(fd);
		m->fd = -1;
	} else if (size) {
		if (size > SIZE_MAX) {
			mfs_model_free(m);
			return mfs_error(err, EFBIG, "file too large to map");
		}
		void *p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED) {
			int e = errno;
			mfs_model_free(m);
			return mfs_error(err, e, "cannot map the file: %s", strerror(e));
		}
		/* Indexing hops from header to header: no readahead of the data. */
		madvise(p, (size_t)size, MADV_RANDOM);
		find_holes(m, fd);
		m->impl->map = p;
		m->impl->map_len = (size_t)size;
		m->base = p;
	}
	int r = 0;
	m->impl->opener = op;
	if (codec->sidecar) {
		m->beside = true;  /* even when it has none: another directory may */
		r = read_sidecar(m, dirfd, codec->sidecar, err);
	}
	struct sibling_state sib = {0};
	m->impl->dirfd = dirfd;
	m->impl->sibling = check_listed;
	m->impl->sibling_ctx = &sib;
	if (r == 0)
		r = index_model(m, err);
	m->impl->dirfd = -1;
	m->impl->sibling = NULL;
	m->impl->sibling_ctx = NULL;
	mfs_siblings_free(sib.listed);
	mfs_model_charge(m, -(int64_t)sib.held);
	m->impl->opener = NULL;
	if (r < 0) {
		mfs_model_free(m);
		return r;
	}
	/* Views read tensors front to back. */
	if (m->impl->map)
		madvise(m->impl->map, m->impl->map_len, MADV_NORMAL);
	*out = m;
	return 0;
}

int mfs_model_open_as(struct mfs_model **out, int dirfd, const char *path, const char *name,
		      const struct mfs_codec *codec, struct mfs_err *err)
{
	return open_file(out, NULL, dirfd, path, name, codec, NULL, err);
}

int mfs_model_open_rt(struct mfs_model **out, struct mfs_runtime *rt, int dirfd,
		      const char *name, const struct mfs_codec *codec, struct mfs_err *err)
{
	return open_file(out, rt, dirfd, name, name, codec, NULL, err);
}

int mfs_model_open_with(struct mfs_model **out, struct mfs_runtime *rt, int dirfd,
			const char *name, const struct mfs_opener *op, struct mfs_err *err)
{
	return open_file(out, rt, dirfd, name, name, NULL, op, err);
}

/* m->impl->sibling while the codec opens m (mfs_model_check_sibling). */
static int check_sibling(struct mfs_model *m, const char *name, struct mfs_err *err)
{
	m->beside = true;
	int fd = open_source(m->impl->opener, m->impl->dirfd, name);
	if (fd < 0)
		return mfs_error(err, -fd, "cannot open: %s", strerror(-fd));
	struct stat st;
	uint8_t head[MFS_HEAD_MAX];
	int r = fstat(fd, &st) < 0 ? mfs_error(err, errno, "cannot stat: %s", strerror(errno)) : 0;
	if (r == 0 && !S_ISREG(st.st_mode))
		r = mfs_error(err, ENOTSUP, "not a regular file");
	size_t n = r == 0 && (uint64_t)st.st_size < sizeof(head) ? (size_t)st.st_size : sizeof(head);
	int got = r == 0 ? read_full(fd, head, n, 0) : 0;
	close(fd);
	if (r == 0 && got != (int)n)
		r = mfs_error(err, EIO, "cannot read");
	/* Its bytes alone decide (no name): a shard named with the format's
	 * extension bids whatever its bytes, which says nothing here. */
	if (r == 0 && mfs_probe(head, n, (uint64_t)st.st_size, NULL) != m->codec)
		r = mfs_error(err, EINVAL, "not a %s file", m->codec->name);
	return r;
}

/* The sibling check past the first MFS_SIBLING_PROBES names: a regular file
 * in the directory's listing is taken as it is (its bytes are checked when
 * it is looked up itself); a name not there is missing; a link, or an entry
 * whose type the file system does not give, is checked as the first ones. */
static int check_listed(struct mfs_model *m, const char *name, struct mfs_err *err)
{
	struct sibling_state *st = m->impl->sibling_ctx;
	m->beside = true;
	if (st->probes < MFS_SIBLING_PROBES || st->unlisted) {
		st->probes++;
		return check_sibling(m, name, err);
	}
	if (!st->listed) {
		size_t bytes = 0;
		if (mfs_siblings_read(&st->listed, m->impl->dirfd, LISTING_MAX, &bytes) < 0 ||
		    !mfs_model_charge(m, (int64_t)bytes)) {
			mfs_siblings_free(st->listed);
			st->listed = NULL;
			st->unlisted = true;
			return check_sibling(m, name, err);
		}
		st->held = bytes;
	}
	int t = mfs_siblings_type(st->listed, name);
	if (t < 0)
		return mfs_error(err, ENOENT, "cannot open: %s", strerror(ENOENT));
	if (t == DT_REG)
		return 0;
	if (t == DT_LNK || t == DT_UNKNOWN)
		return check_sibling(m, name, err);
	return mfs_error(err, ENOTSUP, "not a regular file");
}
