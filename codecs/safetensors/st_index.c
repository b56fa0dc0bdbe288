/* A sharded checkpoint's index, `<prefix>.safetensors.index.json`
 * ({"metadata": {...}, "weight_map": {"<name>": "<shard file>"}}): shown
 * as metadata/<key> (each value's JSON text, read-only) and tensors/ whose
 * entries are relative links into the shards' model directories.
 *
 * Each shard is opened once (by the core: a codec does no I/O) to check
 * that it is a safetensors file; the tensors of a shard that is missing or
 * does not parse are left out, with a note. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "dotted.h"
#include "safetensors.h"

/* The shards named so far, and whether each opened. */
struct shards {
	struct shard { const char *name; size_t len; bool ok; } *v;
	size_t n, cap;
};

static void add_metadata(struct mfs_model *m, const struct mfs_json *j, uint32_t node)
{
	mfs_id md = mfs_add_dir(m, MFS_ROOT, "metadata", 8);
	if (node == MFS_JSON_NIL || j->v[node].type != MFS_JSON_OBJ)
		return;
	for (uint32_t c = j->v[node].first; c != MFS_JSON_NIL; c = j->v[c].next)
		mfs_add_text(m, md, mfs_json_key(j, c), j->v[c].keylen,
			     (const char *)m->base + j->v[c].at, j->v[c].span, 0);
}

/* A shard is a file beside the index: a name, not a path. */
static bool plain_file_name(const char *s, size_t n)
{
	if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	return !memchr(s, '/', n) && !memchr(s, '\0', n);
}

/* Shard s[0, n), checked on its first mention (noted if it does not open),
 * or NULL when memory ran out. */
static const struct shard *shard_of(struct mfs_model *m, struct shards *sh, const char *s,
				    size_t n)
{
	for (size_t i = sh->n; i-- > 0;)
		if (sh->v[i].len == n && !memcmp(sh->v[i].name, s, n))
			return &sh->v[i];
	char *name = mfs_model_strdup(m, s, n);
	if (!name || MFS_ARRAY_RESERVE(sh->v, sh->n, sh->cap, 1, 8) < 0)
		return NULL;
	struct mfs_err err = {0};
	int r = mfs_model_check_sibling(m, name, &err);
	if (r == -ENOMEM)
		return NULL;
	if (r < 0) {
		char q[MFS_QUOTE_MAX];
		mfs_model_note(m, "shard %s: %s; its tensors are not shown", mfs_quote(q, s, n),
			       err.msg);
	}
	sh->v[sh->n] = (struct shard){name, n, r >= 0};
	return &sh->v[sh->n++];
}

/* A weight_map entry, sorted by name. */
struct entry {
	const char *name;
	size_t len;
	uint32_t c;
};

static int by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int r = memcmp(x->name, y->name, x->len < y->len ? x->len : y->len);
	if (!r)
		r = (x->len > y->len) - (x->len < y->len);
	/* A name given twice: the first in the file first (qsort is not stable). */
	return r ? r : (x->c > y->c) - (x->c < y->c);
}

/* weight_map's entries sorted by name, so that a name comes before the
 * longer names it is a prefix of (`a.b` before `a.b.c`): those in the same
 * shard are then reached through its link. NULL when out of memory. */
static struct entry *sorted_entries(const struct mfs_json *j, uint32_t map, size_t *n)
{
	*n = 0;
	for (uint32_t c = j->v[map].first; c != MFS_JSON_NIL; c = j->v[c].next)
		(*n)++;
	struct entry *e = malloc((*n ? *n : 1) * sizeof(*e));
	if (!e)
		return NULL;
	size_t i = 0;
	for (uint32_t c = j->v[map].first; c != MFS_JSON_NIL; c = j->v[c].next)
		e[i++] = (struct entry){mfs_json_key(j, c), j->v[c].keylen, c};
	qsort(e, *n, sizeof(*e), by_name);
	return e;
}

static int add_links(struct mfs_model *m, const struct mfs_json *j, uint32_t map)
{
	struct shards sh = {0};
	int r = 0;
	mfs_id td = mfs_add_dir(m, MFS_ROOT, "tensors", 7);
	size_t ne;
	struct entry *es = sorted_entries(j, map, &ne);
	struct mfs_dotted *d = es ? mfs_dotted_new(m, td, ".") : NULL;
	if (!d) {
		free(es);
		return -ENOMEM;
	}
	for (size_t i = 0; i < ne; i++) {
		uint32_t c = es[i].c;
		char q[MFS_QUOTE_MAX];
		bool str = j->v[c].type == MFS_JSON_STR;
		const char *s = str ? mfs_json_text(j, c) : "";
		size_t n = str ? j->v[c].textlen : 0;
		if (!plain_file_name(s, n)) {
			mfs_model_note(m, "weight_map %s: not the name of a shard file beside "
				       "the index", mfs_quote(q, mfs_json_key(j, c), j->v[c].keylen));
			continue;
		}
		const struct shard *f = shard_of(m, &sh, s, n);
		if (!f) {
			r = -ENOMEM;
			break;
		}
		if (f->ok)
			mfs_dotted_add_link(d, mfs_json_key(j, c), j->v[c].keylen, f->name);
	}
	mfs_dotted_finish(d, MFS_NONE);
	free(es);
	free(sh.v);
	return r < 0 ? r : 0;
}

int mfs_st_open_index(struct mfs_model *m, struct mfs_err *err)
{
	struct mfs_json j;
	int r = 0;
	if (mfs_json_parse(&j, m->base, m->size) < 0) {
		r = mfs_error(err, EINVAL, "the index is not valid JSON: %s", j.err);
	} else {
		uint32_t map = mfs_json_member(&j, 0, "weight_map");
		if (j.v[0].type != MFS_JSON_OBJ || map == MFS_JSON_NIL ||
		    j.v[map].type != MFS_JSON_OBJ) {
			r = mfs_error(err, EINVAL, "the index has no \"weight_map\" object");
		} else {
			add_metadata(m, &j, mfs_json_member(&j, 0, "metadata"));
			if (add_links(m, &j, map) < 0)
				r = mfs_error(err, ENOMEM, "out of memory");
		}
	}
	mfs_json_free(&j);
	return r;
}
