/* Dotted tensor names split into directories (see dotted.h).
 *
 * The builder keeps a map (dirmap.h) from (parent node, kind, raw component)
 * to the node made for it: the node's name is escaped and possibly given a ~N
 * suffix by the core, so it cannot be found again from the raw bytes by
 * name alone. Directories and links have separate keys: a link never holds
 * children. A name below a link into the same sibling (sharded `a.b` and
 * `a.b.c` in one shard, `a.b` added first) is reached through that link
 * and adds nothing; otherwise a name that is both gets a directory and a
 * link, the later one with a ~1 suffix.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "buf.h"
#include "dirmap.h"
#include "dotted.h"
#include "model_impl.h"

enum { KEY_DIR = 0, KEY_LINK = 1 };

/* Directories made for components: at most DIRS_FREE, plus one per
 * DIR_BYTES bytes of the names added so far (real names make one per ten
 * bytes or more), and at most DEPTH_MAX for one name. Past either, the rest of
 * a name stays whole as its last component, separators and all: names
 * such as "a.a.a..." or "...." make as many directories as their bytes
 * allow, not one per byte, and no deeper tree than real names. */
#define DIRS_FREE 1024u
#define DIR_BYTES 4u
#define DEPTH_MAX 64u

struct mfs_dotted {
	struct mfs_model *m;
	mfs_id root;
	char seps[8];
	struct mfs_dirmap dirs_made;  /* components' directories and links */
	char *index;           /* the index file's text so far */
	size_t ilen, icap;
	uint64_t name_bytes;   /* of the names added so far */
	uint64_t dirs;         /* directories made for components */
	char *base;            /* root's path in the model, once a link needs it */
	int base_len;
	bool failed;
};

/* Out of memory: the open fails with ENOMEM, as for the mfs_add_* calls. */
static void no_memory(struct mfs_dotted *d)
{
	struct mfs_model_impl *im = d->m->impl;
	d->failed = true;
	if (!im->build_err) {
		im->build_err = ENOMEM;
		snprintf(im->build_msg, sizeof(im->build_msg), "out of memory");
	}
}

static bool reserve(struct mfs_dotted *d, char **buf, size_t *cap, size_t len, size_t more)
{
	if (d->failed)
		return false;
	if (MFS_ARRAY_RESERVE(*buf, len, *cap, more, 256) == 0)
		return true;
	no_memory(d);
	return false;
}

struct mfs_dotted *mfs_dotted_new(struct mfs_model *m, mfs_id root, const char *seps)
{
	struct mfs_dotted *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->m = m;
	d->root = root;
	snprintf(d->seps, sizeof(d->seps), "%s", seps);
	return d;
}

/* Remember node id as (parent, kind, s[0, n)). */
static void remember(struct mfs_dotted *d, mfs_id parent, uint32_t kind, const char *s,
		     size_t n, mfs_id id)
{
	if (id != MFS_NONE && !d->failed &&
	    mfs_dirmap_put(&d->dirs_made, parent, kind, s, n, id) < 0)
		no_memory(d);
}

static mfs_id recall(struct mfs_dotted *d, mfs_id parent, uint32_t kind, const char *s, size_t n)
{
	return mfs_dirmap_get(&d->dirs_made, parent, kind, s, n);
}

static bool is_view_name(const char *s, size_t n)
{
	static const char *const views[] = {"shape", "dtype", "values.txt", "data", "data.npy",
					    "matrix.mtx"};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (strlen(views[i]) == n && memcmp(views[i], s, n) == 0)
			return true;
	return false;
}

/* The raw name asked of the core for component s[0, n): a view's name gets
 * "~1", as a duplicate would (written to req); the core escapes the rest. */
static const char *request_name(const char *s, size_t *n, char req[16])
{
	if (!is_view_name(s, *n))
		return s;
	memcpy(req, s, *n);
	memcpy(req + *n, "~1", 2);
	*n += 2;
	return req;
}

/* Length of the component starting at s, up to end. */
static size_t comp_len(const struct mfs_dotted *d, const char *s, const char *end)
{
	const char *p = s;
	if (d->seps[0] && !d->seps[1]) {
		p = memchr(s, d->seps[0], (size_t)(end - s));
		return p ? (size_t)(p - s) : (size_t)(end - s);
	}
	size_t ns = strlen(d->seps);
	while (p < end && !memchr(d->seps, *p, ns))
		p++;
	return (size_t)(p - s);
}

/* Whether link is one into sibling[0, sl). */
static bool into(const struct mfs_dotted *d, const struct mfs_dirmap_entry *link,
		 const char *sibling, size_t sl)
{
	return link && mfs_dirmap_kept_is(&d->dirs_made, link, sibling, sl);
}

/* The link made before for a proper prefix of the name p[0, end) below dir
 * into the same sibling, or MFS_NONE. The sibling's directory for that
 * prefix holds the rest of the name (the same dotted layout), so the name
 * is reached through it. */
static mfs_id link_below(struct mfs_dotted *d, mfs_id dir, const char *p, const char *end,
			 const char *sibling, size_t sl)
{
	for (;;) {
		size_t n = comp_len(d, p, end);
		if (p + n == end)
			return MFS_NONE;
		struct mfs_dirmap_entry *f[2];
		mfs_dirmap_find2(&d->dirs_made, dir, p, n, f);
		if (into(d, f[KEY_LINK], sibling, sl))
			return f[KEY_LINK]->id;
		if (!f[KEY_DIR])
			return MFS_NONE;
		dir = f[KEY_DIR]->id;
		p += n + 1;
	}
}

/* Where a name goes: the directory of every component but the last, made
 * as needed, and the last component (the rest of the name once no more
 * directories may be made); fresh when that directory was made for this
 * name (nothing is below it yet). With a sibling (a link's), via is the
 * link of a prefix into the same sibling when there is one: then nothing
 * is made. */
struct place {
	mfs_id dir, via;
	const char *last;
	size_t last_len;
	bool fresh;
};

/* The place of name[0, len); dir MFS_NONE after a failure. One probe per
 * component finds both its directory and its link. */
static struct place walk(struct mfs_dotted *d, const char *name, size_t len, const char *sibling)
{
	struct place pl = {MFS_NONE, MFS_NONE, NULL, 0, false};
	if (!d || d->failed)
		return pl;
	const char *p = name, *end = name + len;
	size_t sl = sibling ? strlen(sibling) : 0;
	mfs_id dir = d->root;
	for (unsigned depth = 0;; depth++) {
		size_t n = comp_len(d, p, end);
		bool last = p + n == end;
		struct mfs_dirmap_entry *f[2] = {NULL, NULL};
		if (!last && !pl.fresh)
			mfs_dirmap_find2(&d->dirs_made, dir, p, n, f);
		if (sibling && into(d, f[KEY_LINK], sibling, sl)) {
			pl.via = f[KEY_LINK]->id;
			return pl;
		}
		mfs_id c = f[KEY_DIR] ? f[KEY_DIR]->id : MFS_NONE;
		if (!last && (depth == DEPTH_MAX ||
			      (c == MFS_NONE &&
			       d->dirs >= DIRS_FREE + (d->name_bytes + len) / DIR_BYTES))) {
			if (sibling && c != MFS_NONE)
				pl.via = link_below(d, c, p + n + 1, end, sibling, sl);
			if (pl.via != MFS_NONE)
				return pl;
			last = true;
		}
		if (last) {
			d->name_bytes += len;
			pl.dir = dir;
			pl.last = p;
			pl.last_len = (size_t)(end - p);
			return pl;
		}
		if (c == MFS_NONE) {
			d->dirs++;
			char req[16];
			size_t rl = n;
			const char *r = request_name(p, &rl, req);
			c = mfs_add_dir(d->m, dir, r, rl);
			if (c == MFS_NONE)
				return pl;
			remember(d, dir, KEY_DIR, p, n, c);
			pl.fresh = true;
		}
		dir = c;
		p += n + 1;
	}
}

/* Add bytes to the index text. */
static void index_put(struct mfs_dotted *d, const char *s, size_t n)
{
	if (!n || !reserve(d, &d->index, &d->icap, d->ilen, n))
		return;
	memcpy(d->index + d->ilen, s, n);
	d->ilen += n;
}

/* The full name in the index: tab, newline and backslash as \t, \n, \\ so
 * that each tensor stays one line of tab-separated fields. */
static void index_name(struct mfs_dotted *d, const char *name, size_t len)
{
	size_t start = 0;
	for (size_t i = 0; i < len; i++) {
		const char *esc = name[i] == '\t' ? "\\t" : name[i] == '\n' ? "\\n"
				: name[i] == '\\' ? "\\\\" : NULL;
		if (!esc)
			continue;
		index_put(d, name + start, i - start);
		index_put(d, esc, 2);
		start = i + 1;
	}
	index_put(d, name + start, len - start);
}

static void index_line(struct mfs_dotted *d, const char *name, size_t len,
		       const struct mfs_tensor *t, uint64_t off, uint64_t bytes)
{
	char buf[64];
	index_name(d, name, len);
	index_put(d, "\t", 1);
	const char *dt = mfs_tensor_dtype_name(t);
	index_put(d, dt, strlen(dt));
	index_put(d, "\t", 1);
	for (uint32_t i = 0; i < t->ndim; i++) {
		int n = snprintf(buf, sizeof(buf), "%s%" PRIu64, i ? " " : "", t->dims[i]);
		index_put(d, buf, (size_t)n);
	}
	int n = off == UINT64_MAX ? snprintf(buf, sizeof(buf), "\t-\t%" PRIu64 "\n", bytes)
				  : snprintf(buf, sizeof(buf), "\t%" PRIu64 "\t%" PRIu64 "\n", off,
					     bytes);
	index_put(d, buf, (size_t)n);
}

mfs_id mfs_dotted_add(struct mfs_dotted *d, const char *name, size_t len,
		      const struct mfs_tensor *t, uint64_t off, uint64_t bytes)
{
	struct place pl = walk(d, name, len, NULL);
	if (pl.dir == MFS_NONE)
		return MFS_NONE;
	index_line(d, name, len, t, off, bytes);
	/* A directory made for a longer name becomes this tensor's directory;
	 * a second tensor of the same name gets its own (~N). */
	mfs_id c = pl.fresh ? MFS_NONE : recall(d, pl.dir, KEY_DIR, pl.last, pl.last_len);
	if (c != MFS_NONE && !mfs_node_tensor(d->m, c))
		return mfs_attach_tensor(d->m, c, t) < 0 ? MFS_NONE : c;
	char req[16];
	size_t rl = pl.last_len;
	const char *r = request_name(pl.last, &rl, req);
	mfs_id id = mfs_add_tensor(d->m, pl.dir, r, rl, t);
	if (c == MFS_NONE)
		remember(d, pl.dir, KEY_DIR, pl.last, pl.last_len, id);
	return id;
}

mfs_id mfs_dotted_add_dir(struct mfs_dotted *d, const char *name, size_t len)
{
	struct place pl = walk(d, name, len, NULL);
	if (pl.dir == MFS_NONE)
		return MFS_NONE;
	mfs_id c = pl.fresh ? MFS_NONE : recall(d, pl.dir, KEY_DIR, pl.last, pl.last_len);
	if (c != MFS_NONE)
		return c;
	char req[16];
	size_t rl = pl.last_len;
	const char *r = request_name(pl.last, &rl, req);
	c = mfs_add_dir(d->m, pl.dir, r, rl);
	if (c != MFS_NONE)
		remember(d, pl.dir, KEY_DIR, pl.last, pl.last_len, c);
	return c;
}

mfs_id mfs_dotted_parent(struct mfs_dotted *d, const char *name, size_t len, char req[16],
			 const char **last, size_t *last_len)
{
	struct place pl = walk(d, name, len, NULL);
	*last_len = pl.last_len;
	*last = pl.dir == MFS_NONE ? pl.last : request_name(pl.last, last_len, req);
	return pl.dir;
}

void mfs_dotted_index(struct mfs_dotted *d, const char *name, size_t len,
		      const struct mfs_tensor *t, uint64_t off, uint64_t bytes)
{
	if (d && !d->failed)
		index_line(d, name, len, t, off, bytes);
}

/* Append s[0, n) to buf at *pos (size bytes); false when it does not fit. */
static bool append(char *buf, size_t size, size_t *pos, const char *s, size_t n)
{
	if (*pos + n >= size)
		return false;
	memcpy(buf + *pos, s, n);
	*pos += n;
	buf[*pos] = '\0';
	return true;
}

/* Path of a name's components inside a model directory as the dotted rule
 * names them (escaped, view names with ~1), without uniqueness suffixes. */
static bool dotted_path(const struct mfs_dotted *d, const char *name, size_t len, char *buf,
			size_t size, size_t *pos)
{
	const char *p = name, *end = name + len;
	for (;;) {
		size_t n = comp_len(d, p, end);
		char esc[300];
		size_t el = mfs_escape_name(p, n, esc);
		if (is_view_name(p, n))
			memcpy(esc + el, "~1", 3), el += 2;
		if (!append(buf, size, pos, "/", 1) || !append(buf, size, pos, esc, el))
			return false;
		if (p + n == end)
			return true;
		p += n + 1;
	}
}

/* The root's path in the model ("tensors"), made once; NULL when too long. */
static const char *base_path(struct mfs_dotted *d, int *len)
{
	if (!d->base) {
		char buf[4096];
		int bl = mfs_node_path(d->m, d->root, buf, sizeof(buf));
		if (bl < 0 || !(d->base = malloc((size_t)bl + 1))) {
			no_memory(d);
			return NULL;
		}
		memcpy(d->base, buf, (size_t)bl + 1);
		d->base_len = bl;
	}
	*len = d->base_len;
	return d->base;
}

mfs_id mfs_dotted_add_link(struct mfs_dotted *d, const char *name, size_t len,
			   const char *sibling)
{
	struct place pl = walk(d, name, len, sibling);
	if (pl.via != MFS_NONE || pl.dir == MFS_NONE)
		return pl.via;
	/* Out of the link's directory and of the model directory, into the
	 * sibling, then down the same path. */
	char target[4096] = "";
	size_t pos = 0;
	uint32_t ups = 1;
	for (mfs_id i = pl.dir; i != MFS_ROOT && i < d->m->nnodes; i = d->m->nodes[i].parent)
		ups++;
	for (uint32_t i = 0; i < ups; i++)
		if (!append(target, sizeof(target), &pos, "../", 3))
			return MFS_NONE;
	int bl;
	const char *base = base_path(d, &bl);
	if (!base || !append(target, sizeof(target), &pos, sibling, strlen(sibling)) ||
	    (bl && (!append(target, sizeof(target), &pos, "/", 1) ||
		    !append(target, sizeof(target), &pos, base, (size_t)bl))) ||
	    !dotted_path(d, name, len, target, sizeof(target), &pos))
		return MFS_NONE;
	if (!pl.fresh && recall(d, pl.dir, KEY_LINK, pl.last, pl.last_len) != MFS_NONE)
		return MFS_NONE;  /* the same name twice: the first one stands */
	char req[16];
	size_t rl = pl.last_len;
	const char *r = request_name(pl.last, &rl, req);
	mfs_id id = mfs_add_link_text(d->m, pl.dir, r, rl, target, pos);
	remember(d, pl.dir, KEY_LINK, pl.last, pl.last_len, id);
	struct mfs_dirmap_entry *e =
		id == MFS_NONE ? NULL
			       : mfs_dirmap_find(&d->dirs_made, pl.dir, KEY_LINK, pl.last, pl.last_len);
	if (e && !d->failed && mfs_dirmap_keep(&d->dirs_made, e, sibling, strlen(sibling)) < 0)
		no_memory(d);
	return id;
}

void mfs_dotted_finish(struct mfs_dotted *d, mfs_id dir)
{
	if (!d)
		return;
	if (dir != MFS_NONE && !d->failed) {
		/* mfs_add_text appends the last newline itself. */
		size_t n = d->ilen ? d->ilen - 1 : 0;
		mfs_id id = mfs_add_text(d->m, dir, "index", 5, d->index ? d->index : "", n, 0);
		if (id != MFS_NONE && !d->ilen)
			d->m->nodes[id].u.text.len = 0;
	}
	mfs_dirmap_free(&d->dirs_made);
	free(d->base);
	free(d->index);
	free(d);
}
