/* Shared helpers for the unit tests (see helpers.h). */
#include "helpers.h"
#include "runtime.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *tdata(const char *rel)
{
	static _Thread_local char buf[4096];
	const char *root = getenv("MFS_TEST_DATA");
	if (!root)
		root = "tests/data";
	snprintf(buf, sizeof(buf), "%s/%s", root, rel);
	return buf;
}

uint8_t *tload(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		fail_msg("cannot open %s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	if (fread(buf, 1, (size_t)n, f) != (size_t)n)
		fail_msg("cannot read %s", path);
	fclose(f);
	buf[n] = 0;
	*len = (size_t)n;
	return buf;
}

/* Buffers that a model opened from memory refers to, freed with it. */
struct owned {
	struct mfs_model *m;
	uint8_t *buf, *side;
	struct owned *next;
};
static struct owned *owned_list;

/* One runtime for every model the helpers open, as fs/ has one per mount:
 * views render ahead and keep text as they do in a mount. Stopped at exit. */
static struct mfs_runtime *runtime;

static void runtime_free(void)
{
	mfs_runtime_free(runtime);
}

struct mfs_runtime *truntime(void)
{
	if (!runtime) {
		struct mfs_err err = {0};
		if (mfs_runtime_new(&runtime, NULL, &err) < 0)
			fail_msg("runtime: %s", err.msg);
		atexit(runtime_free);
	}
	return runtime;
}

static int open_rel(const char *rel, struct mfs_model **out, struct mfs_err *err)
{
	size_t len;
	uint8_t *buf = tload(tdata(rel), &len);
	const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	const struct mfs_codec *c = mfs_probe(buf, len < MFS_HEAD_MAX ? len : MFS_HEAD_MAX, len, name);
	uint8_t *side = NULL;
	size_t side_len = 0;
	if (c && c->sidecar) {
		char sp[4096];
		snprintf(sp, sizeof(sp), "%s%s", tdata(rel), c->sidecar);
		FILE *f = fopen(sp, "rb");
		if (f) {
			fclose(f);
			side = tload(sp, &side_len);
		}
	}
	int r = mfs_model_open_mem(out, buf, len, name, side, side_len, c, err);
	if (r < 0) {
		free(buf);
		free(side);
		return r;
	}
	mfs_model_set_runtime(*out, truntime());
	struct owned *o = malloc(sizeof(*o));
	assert_non_null(o);
	*o = (struct owned){*out, buf, side, owned_list};
	owned_list = o;
	return 0;
}

struct mfs_model *topen(const char *rel)
{
	struct mfs_model *m;
	struct mfs_err err = {0};
	int r = open_rel(rel, &m, &err);
	if (r < 0)
		fail_msg("open %s: %s (%d)", rel, err.msg, r);
	return m;
}

int topen_fail(const char *rel, struct mfs_err *err)
{
	struct mfs_model *m = NULL;
	int r = open_rel(rel, &m, err);
	if (r == 0) {
		tclose(m);
		fail_msg("open %s succeeded but should have failed", rel);
	}
	return r;
}

struct mfs_model *topen_mem(const void *buf, size_t len, const char *name,
			    const void *side, size_t side_len)
{
	uint8_t *b = malloc(len ? len : 1), *s = NULL;
	assert_non_null(b);
	memcpy(b, buf, len);
	if (side) {
		s = malloc(side_len ? side_len : 1);
		assert_non_null(s);
		memcpy(s, side, side_len);
	}
	struct mfs_model *m;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, b, len, name, s, side_len, NULL, &err);
	if (r < 0) {
		free(b);
		free(s);
		fail_msg("open %s from memory: %s (%d)", name, err.msg, r);
	}
	mfs_model_set_runtime(m, truntime());
	struct owned *o = malloc(sizeof(*o));
	assert_non_null(o);
	*o = (struct owned){m, b, s, owned_list};
	owned_list = o;
	return m;
}

int tst1_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	(void)size;
	(void)name;
	return n >= 4 && memcmp(h, "TST1", 4) == 0 ? 32 : 0;
}

struct mfs_model *topen_tst1(const struct mfs_codec *c, const char *name)
{
	static const uint8_t dummy[4] = "TST1";
	struct mfs_model *m;
	struct mfs_err err = {0};
	if (mfs_model_open_mem(&m, dummy, 4, name, NULL, 0, c, &err))
		fail_msg("open %s: %s", name, err.msg);
	return m;
}

void tclose(struct mfs_model *m)
{
	for (struct owned **p = &owned_list; *p; p = &(*p)->next) {
		if ((*p)->m == m) {
			struct owned *o = *p;
			*p = o->next;
			mfs_model_free(m);
			free(o->buf);
			free(o->side);
			free(o);
			return;
		}
	}
	mfs_model_free(m);
}

mfs_id tnode(const struct mfs_model *m, const char *path)
{
	mfs_id id = mfs_resolve(m, path);
	if (id == MFS_NONE)
		fail_msg("no node %s in %s", path, m->name);
	return id;
}

char *tread(struct mfs_model *m, const char *path, size_t *len)
{
	mfs_id id = tnode(m, path);
	struct mfs_err err = {0};
	uint64_t size;
	if (mfs_view_size(m, id, &size, &err) < 0)
		fail_msg("size of %s: %s", path, err.msg);
	char *buf = malloc((size_t)size + 1);
	assert_non_null(buf);
	/* Read in odd-sized pieces to exercise chunk boundaries. */
	struct mfs_rcache *rc = mfs_rcache_new();
	uint64_t off = 0;
	while (off < size) {
		size_t want = (size_t)(size - off < 70001 ? size - off : 70001);
		ssize_t n = mfs_view_read(m, id, off, want, buf + off, rc, &err);
		if (n <= 0)
			fail_msg("read %s at %llu: %s (%zd)", path, (unsigned long long)off, err.msg, n);
		off += (uint64_t)n;
	}
	ssize_t n = mfs_view_read(m, id, size, 16, buf, rc, &err);
	mfs_rcache_free(rc);
	if (n != 0)
		fail_msg("read %s past its size %llu returned %zd", path, (unsigned long long)size, n);
	buf[size] = '\0';
	if (len)
		*len = (size_t)size;
	return buf;
}

void tcheck(struct mfs_model *m, const char *path, const char *expect)
{
	size_t len;
	char *got = tread(m, path, &len);
	if (len != strlen(expect) || memcmp(got, expect, len) != 0)
		fail_msg("%s of %s:\n  got    \"%s\"\n  expect \"%s\"", path, m->name, got, expect);
	free(got);
}

char *tlist(const struct mfs_model *m, const char *path)
{
	mfs_id dir = tnode(m, path);
	size_t cap = 64, len = 0;
	char *s = malloc(cap);
	assert_non_null(s);
	s[0] = '\0';
	for (mfs_id c = m->nodes[dir].first; c != MFS_NONE; c = m->nodes[c].next) {
		size_t nl = strlen(m->nodes[c].name);
		while (len + nl + 2 > cap) {
			cap *= 2;
			s = realloc(s, cap);
			assert_non_null(s);
		}
		if (len)
			s[len++] = ' ';
		memcpy(s + len, m->nodes[c].name, nl + 1);
		len += nl;
	}
	return s;
}

uint8_t *tapply(const struct mfs_patch *p, const uint8_t *base, size_t size, size_t *outlen)
{
	uint64_t n = mfs_patch_new_size(p, size);
	uint8_t *out = malloc((size_t)n + 1);
	assert_non_null(out);
	mfs_patch_read(p, base, size, 0, n, out);
	*outlen = (size_t)n;
	return out;
}

struct mem_content {
	const uint8_t *buf;
};

static int mem_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	struct mem_content *c = ctx;
	memcpy(buf, c->buf + off, len);
	return 0;
}

static uint8_t *last_side;
static size_t last_side_len;

const uint8_t *tlast_sidecar(size_t *len)
{
	*len = last_side_len;
	return last_side;
}

int twrite(struct mfs_model *m, const char *path, const void *content, size_t len,
	   uint8_t **out, size_t *outlen, struct mfs_err *err)
{
	mfs_id id = tnode(m, path);
	struct mem_content mc = {content};
	struct mfs_content c = {.size = len, .read = mem_read, .ctx = &mc};
	struct mfs_patch p;
	mfs_patch_init(&p);
	free(last_side);
	last_side = NULL;
	last_side_len = 0;
	int r = mfs_view_write(m, id, &c, &p, err);
	if (r == 0) {
		*out = tapply(&p, m->base, (size_t)m->size, outlen);
		if (p.has_sidecar) {
			last_side = malloc(p.sidecar_len + 1);
			assert_non_null(last_side);
			memcpy(last_side, p.sidecar, p.sidecar_len);
			last_side[p.sidecar_len] = 0;
			last_side_len = p.sidecar_len;
		}
	}
	mfs_patch_free(&p);
	return r;
}

size_t twalk(struct mfs_model *m)
{
	struct mfs_rcache *rc = mfs_rcache_new();
	char buf[65536];
	size_t visited = 0;
	for (mfs_id id = 0; id < m->nnodes; id++) {
		const struct mfs_node *n = &m->nodes[id];
		visited++;
		if (n->kind == MFS_K_LINK) {
			char t[4096];
			if (mfs_link_target(m, id, t, sizeof(t)) < 0)
				fail_msg("link %u of %s has no target", id, m->name);
			continue;
		}
		if (n->kind != MFS_K_FILE)
			continue;
		struct mfs_err err = {0};
		uint64_t size;
		if (mfs_view_size(m, id, &size, &err) < 0)
			fail_msg("size of node %u (%s) of %s: %s", id, n->name, m->name, err.msg);
		uint64_t off = 0;
		while (off < size) {
			ssize_t r = mfs_view_read(m, id, off, sizeof(buf), buf, rc, &err);
			if (r <= 0)
				fail_msg("read node %u (%s) of %s at %llu: %s", id, n->name, m->name,
					 (unsigned long long)off, err.msg);
			off += (uint64_t)r;
		}
	}
	mfs_rcache_free(rc);
	return visited;
}

void tappend(uint8_t **b, size_t *n, size_t *cap, const void *p, size_t len)
{
	if (*n + len > *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		while (nc < *n + len)
			nc *= 2;
		*b = realloc(*b, nc);
		assert_non_null(*b);
		*cap = nc;
	}
	if (len)
		memcpy(*b + *n, p, len);
	*n += len;
}

size_t tmutate_mem(const void *orig, size_t len, const char *name, unsigned iterations)
{
	uint8_t *buf = malloc(len + 1);
	assert_non_null(buf);
	size_t opened = 0;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (unsigned it = 0; it < iterations; it++) {
		size_t n = len;
		memcpy(buf, orig, len);
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		if (it % 3 == 0) {
			n = len ? (size_t)((seed >> 33) % len) : 0;  /* truncate */
		} else {
			unsigned flips = 1 + (unsigned)((seed >> 20) % 4);
			for (unsigned k = 0; k < flips && len; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				size_t pos = (size_t)((seed >> 33) % len);
				buf[pos] = (it % 3 == 1) ? (uint8_t)(buf[pos] ^ (1u << (seed & 7)))
							 : (uint8_t)(seed >> 13);
			}
		}
		struct mfs_model *m = NULL;
		struct mfs_err err = {0};
		const struct mfs_codec *c = mfs_probe(buf, n < MFS_HEAD_MAX ? n : MFS_HEAD_MAX, n, name);
		if (!c)
			continue;
		int r = mfs_model_open_mem(&m, buf, n, name, NULL, 0, c, &err);
		if (r < 0) {
			if (!err.msg[0])
				fail_msg("%s mutation %u failed (%d) without a message", name, it, r);
			continue;
		}
		opened++;
		twalk(m);
		mfs_model_free(m);
	}
	free(buf);
	return opened;
}

size_t tmutate(const char *rel, unsigned iterations)
{
	size_t len;
	uint8_t *orig = tload(tdata(rel), &len);
	const char *name = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	size_t opened = tmutate_mem(orig, len, name, iterations);
	free(orig);
	return opened;
}

size_t trewrite_all(struct mfs_model *m)
{
	size_t count = 0;
	for (mfs_id id = 0; id < m->nnodes; id++) {
		const struct mfs_node *n = &m->nodes[id];
		if (n->kind != MFS_K_FILE || !(n->flags & MFS_NF_WRITABLE))
			continue;
		char path[4096];
		assert_true(mfs_node_path(m, id, path, sizeof(path)) >= 0);
		size_t len;
		char *content = tread(m, path, &len);
		uint8_t *out = NULL;
		size_t outlen = 0;
		struct mfs_err err = {0};
		int r = twrite(m, path, content, len, &out, &outlen, &err);
		if (r != 1)
			fail_msg("writing %s of %s back unchanged: %d (%s)", path, m->name, r, err.msg);
		free(content);
		count++;
	}
	return count;
}

void tsame_outside(const uint8_t *old, size_t old_size, const uint8_t *new_, size_t new_size,
		   size_t off, size_t old_len, size_t new_len)
{
	assert_true(off + old_len <= old_size);
	assert_int_equal(new_size, old_size - old_len + new_len);
	if (memcmp(old, new_, off) != 0)
		fail_msg("bytes before offset %zu changed", off);
	if (memcmp(old + off + old_len, new_ + off + new_len, old_size - off - old_len) != 0)
		fail_msg("bytes after the edited span [%zu, %zu) changed", off, off + old_len);
}

uint64_t trand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

size_t tcount(size_t full, unsigned quick_div, unsigned san_div)
{
	size_t div = 1;
	const char *q = getenv("MFS_TEST_QUICK");
	if (q && *q && strcmp(q, "0"))
		div = quick_div;
	(void)san_div;  /* unused without a sanitizer */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	div *= san_div;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
	div *= san_div;
#endif
#endif
	return full / div ? full / div : 1;
}
