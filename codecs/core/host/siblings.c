/* A directory's names, one getdents pass, hashed for lookups. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "bytes.h"
#include "siblings.h"

struct mfs_siblings {
	char *pool;       /* each name, NUL-terminated, its d_type byte before it */
	size_t plen, pcap;
	size_t n;         /* names in pool */
	struct slot {
		uint32_t at;  /* the name's offset in pool; 0: empty */
		uint32_t h;
	} *slots;
	size_t nslots;    /* a power of two, at least twice n */
};

/* A hash table of n names takes at most this many bytes besides the names. */
#define TABLE_BYTES(n) (((n) * 4 + 16) * sizeof(struct slot))

static int add(struct mfs_siblings *s, const char *name, unsigned char type, size_t max)
{
	size_t len = strlen(name);
	if (s->plen + len + 2 > UINT32_MAX || s->plen + len + 2 + TABLE_BYTES(s->n + 1) > max)
		return -ENOMEM;
	if (MFS_ARRAY_RESERVE(s->pool, s->plen, s->pcap, len + 2, 4096) < 0)
		return -ENOMEM;
	s->pool[s->plen] = (char)type;
	memcpy(s->pool + s->plen + 1, name, len + 1);
	s->plen += len + 2;
	s->n++;
	return 0;
}

static uint32_t name_hash(const char *name, size_t len)
{
	return (uint32_t)mfs_hash64(name, len, 0x5e);
}

/* The names of pool in a table of at least twice as many slots. */
static int index_names(struct mfs_siblings *s)
{
	size_t n = 16;
	while (n < s->n * 2)
		n *= 2;
	s->slots = calloc(n, sizeof(*s->slots));
	if (!s->slots)
		return -ENOMEM;
	s->nslots = n;
	for (size_t off = 0; off < s->plen;) {
		const char *name = s->pool + off + 1;
		size_t len = strlen(name);
		uint32_t h = name_hash(name, len);
		size_t j = h & (n - 1);
		while (s->slots[j].at)
			j = (j + 1) & (n - 1);
		s->slots[j] = (struct slot){(uint32_t)(off + 1), h};
		off += len + 2;
	}
	return 0;
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
	r = index_names(s);
	if (r < 0) {
		mfs_siblings_free(s);
		return r;
	}
	*bytes = s->pcap + s->nslots * sizeof(*s->slots) + sizeof(*s);
	*out = s;
	return 0;
}

int mfs_siblings_type(const struct mfs_siblings *s, const char *name)
{
	uint32_t h = name_hash(name, strlen(name));
	for (size_t j = h & (s->nslots - 1); s->slots[j].at; j = (j + 1) & (s->nslots - 1))
		if (s->slots[j].h == h && strcmp(s->pool + s->slots[j].at, name) == 0)
			return (unsigned char)s->pool[s->slots[j].at - 1];
	return -1;
}

void mfs_siblings_free(struct mfs_siblings *s)
{
	if (!s)
		return;
	free(s->pool);
	free(s->slots);
	free(s);
}
