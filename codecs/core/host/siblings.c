/* A directory's names, one getdents pass, sorted for binary search. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bisect.h"
#include "buf.h"
#include "siblings.h"

struct mfs_siblings {
	char *pool;       /* each name, NUL-terminated, its d_type byte before it */
	size_t plen, pcap;
	uint32_t *at;     /* offsets of the names in pool, sorted by name */
	size_t n, cap;
};

static int add(struct mfs_siblings *s, const char *name, unsigned char type, size_t max)
{
	size_t len = strlen(name);
	if (s->plen + len + 2 > UINT32_MAX || s->plen + len + 2 + (s->n + 1) * 4 > max)
		return -ENOMEM;
	if (MFS_ARRAY_RESERVE(s->pool, s->plen, s->pcap, len + 2, 4096) < 0 ||
	    MFS_ARRAY_RESERVE(s->at, s->n, s->cap, 1, 1024) < 0)
		return -ENOMEM;
	s->pool[s->plen] = (char)type;
	memcpy(s->pool + s->plen + 1, name, len + 1);
	s->at[s->n++] = (uint32_t)(s->plen + 1);
	s->plen += len + 2;
	return 0;
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const char *pool = ctx;
	return strcmp(pool + *(const uint32_t *)a, pool + *(const uint32_t *)b);
}

int mfs_siblings_read(struct mfs_siblings **out, int dirfd, size_t max, size_t *bytes)
{
	*out = NULL;
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	DIR *dir = fdopendir(fd);
	if (!dir) {
		int e = errno;
		close(fd);
		return -e;
	}
	struct mfs_siblings *s = calloc(1, sizeof(*s));
	int r = s ? 0 : -ENOMEM;
	struct dirent *de;
	errno = 0;
	while (r == 0 && (de = readdir(dir)))
		r = add(s, de->d_name, de->d_type, max);
	if (r == 0 && errno)
		r = -errno;
	closedir(dir);
	if (r < 0) {
		mfs_siblings_free(s);
		return r;
	}
	qsort_r(s->at, s->n, sizeof(*s->at), by_name, s->pool);
	*bytes = s->pcap + s->cap * sizeof(*s->at) + sizeof(*s);
	*out = s;
	return 0;
}

struct probe {
	const struct mfs_siblings *s;
	const char *name;
};

static bool before(const void *ctx, uint64_t i)
{
	const struct probe *p = ctx;
	return strcmp(p->s->pool + p->s->at[i], p->name) < 0;
}

int mfs_siblings_type(const struct mfs_siblings *s, const char *name)
{
	struct probe p = {s, name};
	uint64_t i = mfs_partition(s->n, before, &p);
	if (i == s->n || strcmp(s->pool + s->at[i], name) != 0)
		return -1;
	return (unsigned char)s->pool[s->at[i] - 1];
}

void mfs_siblings_free(struct mfs_siblings *s)
{
	if (!s)
		return;
	free(s->pool);
	free(s->at);
	free(s);
}
