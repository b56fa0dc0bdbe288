/* A sharded checkpoint's index, `<prefix>.safetensors.index.json`
 * ({"metadata": {...}, "weight_map": {"<name>": "<shard file>"}}): shown
 * as metadata/<key> (each value's JSON text, read-only) and tensors/ whose
 * entries are relative links into the shards' model directories.
 *
 * Each shard named is checked once (by the core: a codec does no I/O): the
 * first 1,024 by their first bytes, the rest by the directory's one listing
 * (mfs_model_check_sibling), and the entries naming it are sorted, not
 * searched: an index of N names and S shards opens in O(N log N) with at
 * most 1,024 small reads.
 * The tensors of a shard that is missing or not a safetensors file are
 * left out, with a note; a shard is parsed when it is looked up itself
 * (one whose header is then refused is a plain file with its own errors
 * line, and links into it dangle). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dotted.h"
#include "safetensors.h"

static void add_metadata(struct mfs_model *m, const struct mfs_json *j, uint32_t node)
{
	mfs_id md = mfs_add_dir(m, MFS_ROOT, "metadata", 8);
	if (node == MFS_JSON_NIL || j->v[node].type != MFS_JSON_OBJ)
		return;
	for (uint32_t c = j->v[node].first; c != MFS_JSON_NIL; c = j->v[c].next)
		mfs_add_text(m, md, mfs_json_key(j, c), mfs_json_keylen(j, c),
			     (const char *)m->base + j->v[c].at, j->v[c].span, 0);
}

/* A shard is a file beside the index: a name, not a path. */
static bool plain_file_name(const char *s, size_t n)
{
	if (!n || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
		return false;
	return !memchr(s, '/', n) && !memchr(s, '\0', n);
}

/* A weight_map entry: its tensor name, its shard's name, and whether that
 * shard is there. */
struct entry {
	const char *name, *shard;
	size_t len, slen;
	uint32_t c;
	bool ok;
};

static int cmp_bytes(const char *a, size_t an, const char *b, size_t bn)
{
	int r = memcmp(a, b, an < bn ? an : bn);
	return r ? r : (an > bn) - (an < bn);
}

static int by_name(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int r = cmp_bytes(x->name, x->len, y->name, y->len);
	/* A name given twice: the first in the file first (qsort is not stable). */
	return r ? r : (x->c > y->c) - (x->c < y->c);
}

static int by_shard(const void *a, const void *b)
{
	const struct entry *const *x = a, *const *y = b;
	return cmp_bytes((*x)->shard, (*x)->slen, (*y)->shard, (*y)->slen);
}

/* Check each shard once, however many entries name it (entries sorted by
 * shard name through a table of pointers): its first bytes read, nothing
 * parsed (a shard is parsed when it is itself looked up). A shard that is
 * not there or not safetensors is noted, and its entries are not ok. */
static int check_shards(struct mfs_model *m, struct entry *e, size_t n)
{
	int64_t held = (int64_t)((n ? n : 1) * sizeof(struct entry *));
	struct entry **by = mfs_model_charge(m, held) ? malloc((size_t)held) : NULL;
	if (!by)
		return -ENOMEM;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (e[i].shard)
			by[k++] = &e[i];
	qsort(by, k, sizeof(*by), by_shard);
	size_t i = 0;
	while (i < k) {
		size_t end = i + 1;
		while (end < k && by_shard(&by[i], &by[end]) == 0)
			end++;
		struct mfs_err err = {0};
		char *name = mfs_model_strdup(m, by[i]->shard, by[i]->slen);
		int r = name ? mfs_model_check_sibling(m, name, &err) : -ENOMEM;
		if (r == -ENOMEM)
			break;
		if (r < 0) {
			char q[MFS_QUOTE_MAX];
			mfs_model_note(m, "shard %s: %s; its tensors are not shown",
				       mfs_quote(q, by[i]->shard, by[i]->slen), err.msg);
		}
		for (; i < end; i++) {
			by[i]->shard = name;
			by[i]->ok = r >= 0;
		}
	}
	free(by);
	mfs_model_charge(m, -held);
	return i < k ? -ENOMEM : 0;
}

/* weight_map's entries sorted by name, so that a name comes before the
 * longer names it is a prefix of (`a.b` before `a.b.c`): those in the same
 * shard are then reached through its link. A value that is not the name of
 * a file beside the index is noted, its entry left without a shard. NULL
 * when out of memory. */
static struct entry *sorted_entries(struct mfs_model *m, const struct mfs_json *j, uint32_t map,
				    size_t *n)
{
	*n = j->v[map].count;
	struct entry *e = malloc((*n ? *n : 1) * sizeof(*e));
	if (!e)
		return NULL;
	size_t i = 0;
	for (uint32_t c = j->v[map].first; c != MFS_JSON_NIL; c = j->v[c].next, i++) {
		bool str = j->v[c].type == MFS_JSON_STR;
		const char *s = str ? mfs_json_text(j, c) : "";
		size_t sl = str ? mfs_json_textlen(j, c) : 0;
		e[i] = (struct entry){mfs_json_key(j, c), s, mfs_json_keylen(j, c), sl, c, false};
		if (!plain_file_name(s, sl)) {
			char q[MFS_QUOTE_MAX];
			mfs_model_note(m, "weight_map %s: not the name of a shard file beside "
				       "the index", mfs_quote(q, e[i].name, e[i].len));
			e[i].shard = NULL;
		}
	}
	qsort(e, *n, sizeof(*e), by_name);
	return e;
}

static int add_links(struct mfs_model *m, const struct mfs_json *j, uint32_t map)
{
	mfs_id td = mfs_add_dir(m, MFS_ROOT, "tensors", 7);
	size_t ne;
	int64_t held = (int64_t)((j->v[map].count + 1) * sizeof(struct entry));
	struct entry *es = mfs_model_charge(m, held) ? sorted_entries(m, j, map, &ne) : NULL;
	if (!es) {
		mfs_model_charge(m, -held);
		return -ENOMEM;
	}
	struct mfs_dotted *d = NULL;
	int r = check_shards(m, es, ne);
	if (r == 0 && !(d = mfs_dotted_new(m, td, ".")))
		r = -ENOMEM;
	for (size_t i = 0; i < ne && r == 0; i++)
		if (es[i].ok)
			mfs_dotted_add_link(d, es[i].name, es[i].len, es[i].shard);
	mfs_dotted_finish(d, MFS_NONE);
	free(es);
	mfs_model_charge(m, -held);
	return r;
}

static bool charge(void *ctx, int64_t bytes)
{
	return mfs_model_charge(ctx, bytes);
}

int mfs_st_open_index(struct mfs_model *m, struct mfs_err *err)
{
	struct mfs_json j;
	int r = 0;
	const struct mfs_json_opts o = {.keep = mfs_json_keep_shallow, .charge = charge, .ctx = m};
	if (mfs_json_parse_opts(&j, m->base, m->size, &o) < 0) {
		r = j.oom ? mfs_error(err, ENOMEM, "out of memory")
			  : mfs_error(err, EINVAL, "the index is not valid JSON: %s", j.err);
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
