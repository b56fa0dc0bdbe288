/* The quick look without a mount: `modelfs tree` (the tree with shapes
 * and dtypes in aligned columns) and `modelfs stats` (summary statistics
 * of a tensor, computed by codecs/core/stats.c). No libfuse here. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_impl.h"
#include "numtext.h"
#include "stats.h"
#include "view.h"

/* ---- tree ----------------------------------------------------------------- */

#define NAME_COL_MAX 60    /* the name column is at most this wide (longer names push) */
#define SHAPE_COL_MAX 24
#define VALUE_CHARS 40     /* a text file's value is cut here */

struct tree {
	struct mfs_model *m;
	bool all;              /* -a: tensor views too */
	uint64_t maxdepth;
	const char *top_name;  /* shown for the top node */
	size_t w0, w1, w2;     /* column widths (pass 1) */
};

struct tree_line {
	char name[8192];       /* indentation, name, "/" or " -> target" */
	char c1[512];          /* shape, value or size */
	char c2[64];           /* dtype */
	char c3[64];           /* note */
};

/* Display width of UTF-8 text (continuation bytes take no column). */
static size_t width(const char *s)
{
	size_t w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}

static bool is_dir_tensor(const struct mfs_model *m, mfs_id id, const struct mfs_tensor **t)
{
	const struct mfs_tensor *x = mfs_node_tensor(m, id);
	if (x && x->dir == id && m->nodes[id].kind == MFS_K_DIR) {
		*t = x;
		return true;
	}
	return false;
}

/* A view of the tensor its parent directory is: hidden without -a. */
static bool hidden(const struct tree *tr, mfs_id id)
{
	if (tr->all)
		return false;
	const struct mfs_node *n = &tr->m->nodes[id];
	const struct mfs_tensor *t = mfs_node_tensor(tr->m, id);
	return n->kind == MFS_K_FILE && t && t->dir == n->parent;
}

static mfs_id shown_from(const struct tree *tr, mfs_id c)
{
	while (c != MFS_NONE && hidden(tr, c))
		c = tr->m->nodes[c].next;
	return c;
}

static void shape_text(const struct mfs_tensor *t, char *out, size_t size)
{
	size_t o = 0;
	out[o++] = '[';
	for (uint32_t i = 0; i < t->ndim; i++) {
		if (o + 48 >= size) {
			o += (size_t)snprintf(out + o, size - o, ",...");
			break;
		}
		o += (size_t)snprintf(out + o, size - o, "%s%llu", i ? "," : "",
				      (unsigned long long)t->dims[i]);
	}
	snprintf(out + o, size - o, "]");
}

/* A one-value text file's first line, control bytes escaped, cut. */
static void value_text(const struct mfs_node *n, char *out, size_t size)
{
	const char *s = n->u.text.s;
	size_t len = (size_t)n->u.text.len;
	if (len && s[len - 1] == '\n')
		len--;
	size_t o = 0, chars = 0;
	bool cut = false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '\n' || chars >= VALUE_CHARS || o + 8 >= size) {
			cut = true;
			break;
		}
		if (c == '\t') {
			o += (size_t)snprintf(out + o, size - o, "\\t");
		} else if (c < 0x20 || c == 0x7f) {
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
			if ((c & 0xC0) == 0x80)
				continue;
		}
		chars++;
	}
	snprintf(out + o, size - o, "%s", cut ? "..." : "");
}

static int frame_of(const struct mfs_model *m, mfs_id id)
{
	for (uint32_t f = 0; f < m->nframes; f++)
		if (m->frames[f].dir == id)
			return (int)f;
	return -1;
}

static void tree_line(const struct tree *tr, mfs_id id, uint64_t depth, struct tree_line *l)
{
	const struct mfs_model *m = tr->m;
	const struct mfs_node *n = &m->nodes[id];
	const char *name = depth ? n->name : tr->top_name;
	snprintf(l->name, sizeof(l->name), "%*s%s", (int)(depth > 1000 ? 2000 : depth * 2), "",
		 name);
	size_t used = strlen(l->name);
	char *end = l->name + used;
	size_t rest = sizeof(l->name) - used;
	l->c1[0] = l->c2[0] = l->c3[0] = '\0';
	const struct mfs_tensor *t;
	if (n->kind == MFS_K_DIR) {
		snprintf(end, rest, "/");
		int f;
		if (is_dir_tensor(m, id, &t)) {
			shape_text(t, l->c1, sizeof(l->c1));
			snprintf(l->c2, sizeof(l->c2), "%s", mfs_tensor_dtype_name(t));
			if (t->flags & MFS_TF_SPARSE)
				snprintf(l->c3, sizeof(l->c3), "sparse, %llu stored",
					 (unsigned long long)t->nnz);
		} else if ((f = frame_of(m, id)) >= 0) {
			snprintf(l->c1, sizeof(l->c1), "[%llu,%u]",
				 (unsigned long long)m->frames[f].nrows, m->frames[f].ncols);
			snprintf(l->c2, sizeof(l->c2), "frame");
		}
	} else if (n->kind == MFS_K_LINK) {
		char target[4096];
		if (mfs_link_target(m, id, target, sizeof(target)) > 0)
			snprintf(end, rest, " -> %s", target);
	} else if (n->view == MFS_V_TEXT) {
		value_text(n, l->c1, sizeof(l->c1));
	} else if (n->view == MFS_V_RAW) {
		snprintf(l->c1, sizeof(l->c1), "(%llu bytes)", (unsigned long long)n->u.raw.len);
	}
}

static size_t min_sz(size_t a, size_t b)
{
	return a < b ? a : b;
}

static void tree_emit(struct tree *tr, mfs_id id, uint64_t depth, bool print,
		      struct tree_line *l)
{
	tree_line(tr, id, depth, l);
	if (!print) {
		if ((l->c1[0] || l->c2[0]) && tr->w0 < width(l->name))
			tr->w0 = min_sz(width(l->name), NAME_COL_MAX);
		if (l->c2[0] && tr->w1 < width(l->c1))
			tr->w1 = min_sz(width(l->c1), SHAPE_COL_MAX);
		if (l->c3[0] && tr->w2 < width(l->c2))
			tr->w2 = width(l->c2);
		return;
	}
	fputs(l->name, stdout);
	if (l->c1[0] || l->c2[0]) {
		size_t w = width(l->name);
		printf("%*s%s", (int)(w < tr->w0 ? tr->w0 - w + 2 : 2), "", l->c1);
		if (l->c2[0]) {
			w = width(l->c1);
			printf("%*s%s", (int)(w < tr->w1 ? tr->w1 - w + 2 : 2), "", l->c2);
		}
		if (l->c3[0]) {
			w = width(l->c2);
			printf("%*s%s", (int)(w < tr->w2 ? tr->w2 - w + 2 : 2), "", l->c3);
		}
	}
	putchar('\n');
}

/* Depth first in file order, without recursion (a deep model needs no
 * deep stack): down to the first shown child, else on to the next shown
 * sibling, else up. Links are shown, not followed. */
static void tree_walk(struct tree *tr, mfs_id top, bool print, struct tree_line *l)
{
	const struct mfs_model *m = tr->m;
	mfs_id id = top;
	uint64_t depth = 0;
	tree_emit(tr, id, depth, print, l);
	for (;;) {
		mfs_id c = MFS_NONE;
		if (m->nodes[id].kind == MFS_K_DIR && depth < tr->maxdepth)
			c = shown_from(tr, m->nodes[id].first);
		if (c != MFS_NONE) {
			id = c;
			depth++;
			tree_emit(tr, id, depth, print, l);
			continue;
		}
		while (id != top) {
			mfs_id s = shown_from(tr, m->nodes[id].next);
			if (s != MFS_NONE) {
				id = s;
				tree_emit(tr, id, depth, print, l);
				break;
			}
			id = m->nodes[id].parent;
			depth--;
		}
		if (id == top)
			return;
	}
}

int cli_tree(const struct cli_cmd *cmd, const struct cli_args *a)
{
	(void)cmd;
	const char *file = a->pos[0];
	char *path = cli_norm_path(a->npos > 1 ? a->pos[1] : "");
	if (!path)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	struct cli_model cm;
	struct tree_line *l = NULL;
	char *top_name = NULL;
	mfs_id top;
	int ret = cli_open_node(&cm, file, path, false, false, &top);
	if (ret != CLI_OK)
		goto out;
	/* The top line names what was asked for: FILE, or PATH in it. */
	top_name = *path ? strdup(path) : strdup(file);
	l = malloc(sizeof(*l));
	if (!top_name || !l) {
		ret = cli_failf(file, path, ENOMEM, "out of memory");
		goto out;
	}
	for (size_t n = strlen(top_name); n > 1 && top_name[n - 1] == '/'; n--)
		top_name[n - 1] = '\0';
	struct tree tr = {.m = cm.m, .all = a->flag['a'], .maxdepth = UINT64_MAX,
			  .top_name = top_name};
	if (a->flag['L'])
		tr.maxdepth = strtoull(a->arg['L'], NULL, 10);
	tree_walk(&tr, top, false, l);
	tree_walk(&tr, top, true, l);
	ret = cli_finish_output(file, path);
out:
	free(l);
	free(top_name);
	cli_close(&cm);
	free(path);
	return ret;
}

/* ---- stats ---------------------------------------------------------------- */

/* A float bound as its dtype writes it: the bound is one of the tensor's
 * values, so the shortest float64 text reads back to it exactly. */
static size_t fmt_in_dtype(enum mfs_dtype dt, double v, char *out)
{
	char t[MFS_NUM_MAX];
	uint8_t e[16];
	size_t l = mfs_fmt_f64(t, v);
	if (mfs_parse_elem(dt, t, l, e))
		return mfs_fmt_f64(out, v);
	return mfs_fmt_elem(out, dt, e);
}

static void fmt_bound(const struct mfs_stats *s, bool is_max, char out[MFS_NUM_MAX + 1])
{
	size_t n;
	double v = is_max ? s->max : s->min;
	if (!s->n)
		n = (size_t)snprintf(out, MFS_NUM_MAX + 1, "nan");
	else if (s->exact && s->is_signed)
		n = mfs_fmt_i64(out, is_max ? s->imax : s->imin);
	else if (s->exact)
		n = mfs_fmt_u64(out, is_max ? s->umax : s->umin);
	else if (mfs_dtype_info(s->dtype)->kind == MFS_DK_FLOAT)
		n = fmt_in_dtype(s->dtype, v, out);
	else
		n = mfs_fmt_f64(out, v);
	out[n] = '\0';
}

static void fmt_double(double v, char out[MFS_NUM_MAX + 1])
{
	out[mfs_fmt_f64(out, v)] = '\0';
}

static int stats_tensor(struct cli_model *cm, const char *path, const struct mfs_tensor *t)
{
	struct mfs_stats s;
	struct mfs_err err = {0};
	if (mfs_tensor_stats(cm->m, t, &s, &err) < 0)
		return cli_fail(cm->file, path, &err);
	char lo[MFS_NUM_MAX + 1], hi[MFS_NUM_MAX + 1], mean[MFS_NUM_MAX + 1],
		sd[MFS_NUM_MAX + 1];
	fmt_bound(&s, false, lo);
	fmt_bound(&s, true, hi);
	fmt_double(s.mean, mean);
	fmt_double(s.std, sd);
	fputs("shape ", stdout);
	for (uint32_t i = 0; i < t->ndim; i++)
		printf(" %llu", (unsigned long long)t->dims[i]);
	printf("\ndtype  %s\n", mfs_tensor_dtype_name(t));
	if (s.magnitude)
		printf("of     |z|\n");
	printf("count  %llu\n", (unsigned long long)s.count);
	if (t->flags & MFS_TF_SPARSE)
		printf("stored %llu\n", (unsigned long long)t->nnz);
	printf("nan    %llu\ninf    %llu\nmin    %s\nmax    %s\nmean   %s\nstd    %s\n",
	       (unsigned long long)s.nan, (unsigned long long)(s.posinf + s.neginf), lo, hi,
	       mean, sd);
	return cli_finish_output(cm->file, path);
}

#define FCOLS 9
static const char *const frame_heads[FCOLS] = {"column", "dtype", "count", "nan", "inf",
					       "min",    "max",   "mean",  "std"};

/* One row per column of a frame; columns without numbers show '-'. */
static int stats_frame(struct cli_model *cm, const char *path, const struct mfs_frame *f)
{
	struct mfs_model *m = cm->m;
	size_t rows = (size_t)f->ncols + 1;
	char(*cell)[FCOLS][MFS_NUM_MAX + 1] = calloc(rows, sizeof(*cell));
	if (!cell)
		return cli_failf(cm->file, path, ENOMEM, "out of memory");
	size_t w[FCOLS] = {0};
	int ret = CLI_OK;
	for (size_t r = 0; r < rows; r++) {
		const struct mfs_tensor *t = r ? &m->tensors[f->cols[r - 1]] : NULL;
		if (!t) {
			for (int k = 0; k < FCOLS; k++)
				snprintf(cell[r][k], sizeof(cell[r][k]), "%s", frame_heads[k]);
		} else {
			snprintf(cell[r][0], sizeof(cell[r][0]), "%s", f->labels[r - 1]);
			snprintf(cell[r][1], sizeof(cell[r][1]), "%s", mfs_tensor_dtype_name(t));
			struct mfs_stats s;
			struct mfs_err err = {0};
			if (!mfs_stats_supported((enum mfs_dtype)t->dtype)) {
				snprintf(cell[r][2], sizeof(cell[r][2]), "%llu",
					 (unsigned long long)t->nelem);
				for (int k = 3; k < FCOLS; k++)
					snprintf(cell[r][k], sizeof(cell[r][k]), "-");
			} else if (mfs_tensor_stats(m, t, &s, &err) < 0) {
				char where[4096];
				if (mfs_node_path(m, t->dir, where, sizeof(where)) < 0)
					snprintf(where, sizeof(where), "%s", path);
				ret = cli_fail(cm->file, where, &err);
				goto out;
			} else {
				snprintf(cell[r][2], sizeof(cell[r][2]), "%llu",
					 (unsigned long long)s.count);
				snprintf(cell[r][3], sizeof(cell[r][3]), "%llu",
					 (unsigned long long)s.nan);
				snprintf(cell[r][4], sizeof(cell[r][4]), "%llu",
					 (unsigned long long)(s.posinf + s.neginf));
				fmt_bound(&s, false, cell[r][5]);
				fmt_bound(&s, true, cell[r][6]);
				fmt_double(s.mean, cell[r][7]);
				fmt_double(s.std, cell[r][8]);
			}
		}
		for (int k = 0; k < FCOLS; k++)
			if (width(cell[r][k]) > w[k])
				w[k] = width(cell[r][k]);
	}
	for (size_t r = 0; r < rows; r++) {
		for (int k = 0; k < FCOLS; k++) {
			fputs(cell[r][k], stdout);
			if (k + 1 < FCOLS)
				printf("%*s", (int)(w[k] - width(cell[r][k]) + 2), "");
		}
		putchar('\n');
	}
	ret = cli_finish_output(cm->file, path);
out:
	free(cell);
	return ret;
}

int cli_stats(const struct cli_cmd *cmd, const struct cli_args *a)
{
	(void)cmd;
	const char *file = a->pos[0];
	char *path = cli_norm_path(a->pos[1]);
	if (!path)
		return cli_failf(file, NULL, ENOMEM, "out of memory");
	struct cli_model cm;
	mfs_id id;
	int ret = cli_open_node(&cm, file, path, false, false, &id);
	if (ret != CLI_OK)
		goto out;
	struct mfs_model *m = cm.m;
	const struct mfs_tensor *t = mfs_node_tensor(m, id);
	int f = frame_of(m, id);
	if (m->nodes[id].kind == MFS_K_FILE && m->nodes[id].view == MFS_V_CSV)
		f = (int)m->nodes[id].u.frame;
	if (t)
		ret = stats_tensor(&cm, path, t);
	else if (f >= 0)
		ret = stats_frame(&cm, path, &m->frames[f]);
	else
		ret = cli_failf(file, path, EINVAL,
				"not a tensor (give a tensor directory, one of its views, or a frame)");
out:
	cli_close(&cm);
	free(path);
	return ret;
}
