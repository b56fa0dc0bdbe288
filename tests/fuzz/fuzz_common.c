/* Common code of the libFuzzer targets (see fuzz_common.h): open a model from
 * the input, check its tree, read every view, rewrite every writable view
 * unchanged, apply one edit the input describes and open the result again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "edit.h"
#include "model.h"
#include "view.h"

#define VIEW_MAX (2u << 20)        /* views larger than this are not read */
/* nor text views of more elements (or entries, or rows): a few text chunks
 * (4096 elements each), so that chunk boundaries are crossed */
#define TEXT_ELEMS_MAX (1u << 16)
#define NEW_FILE_MAX (64u << 20)   /* a patched file larger than this is a finding */

/* What is being done, for the message of a broken contract. */
static struct {
	const char *codec, *stage;
	char path[512];
} ctx;

static void fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

static void fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "\nfuzz: %s:%d: %s, %s, %s: ", file, line, ctx.codec, ctx.stage,
		ctx.path[0] ? ctx.path : "(model)");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* MFS_FUZZ_VERBOSE=1 in the environment: say what each input does (to
 * explain a finding when replaying it); MFS_FUZZ_SAVE=FILE: also save the
 * file an edit produced. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	static int verbose = -1;
	if (verbose < 0)
		verbose = getenv("MFS_FUZZ_VERBOSE") != NULL;
	if (!verbose)
		return;
	va_list ap;
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

#define CHECK(cond, ...)                                         \
	do {                                                     \
		if (!(cond))                                     \
			fail(__FILE__, __LINE__, __VA_ARGS__);   \
	} while (0)

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	CHECK(p, "out of memory (%zu bytes)", n);
	return p;
}

/* An exact-size copy, so that the sanitizers see any read past its end. */
static uint8_t *dup_bytes(const uint8_t *p, size_t n)
{
	uint8_t *d = xmalloc(n);
	if (n)
		memcpy(d, p, n);
	return d;
}

static void set_path(const struct mfs_model *m, mfs_id id)
{
	if (mfs_node_path(m, id, ctx.path, sizeof(ctx.path)) < 0)
		snprintf(ctx.path, sizeof(ctx.path), "node %u", id);
}

/* ---- The edit script ----------------------------------------------------- */

struct script {
	const uint8_t *p;
	size_t n, pos;
};

/* Bytes of the script; zeros once it is used up. */
static uint8_t sc8(struct script *s)
{
	return s->pos < s->n ? s->p[s->pos++] : 0;
}

static uint64_t scn(struct script *s, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++)
		v |= (uint64_t)sc8(s) << (8 * i);
	return v;
}

/* ---- Growable output ----------------------------------------------------- */

struct gbuf {
	uint8_t *p;
	size_t len, cap;
};

/* Room for n more bytes at the end; returns where they go. */
static uint8_t *gspace(struct gbuf *g, size_t n)
{
	if (!g->p || g->len + n > g->cap) {
		size_t cap = g->cap ? g->cap : 256;
		while (cap < g->len + n)
			cap *= 2;
		uint8_t *p = realloc(g->p, cap);
		CHECK(p, "out of memory (%zu bytes)", cap);
		g->p = p;
		g->cap = cap;
	}
	g->len += n;
	return g->p + g->len - n;
}

static void gput(struct gbuf *g, const void *d, size_t n)
{
	uint8_t *p = gspace(g, n);
	if (n)
		memcpy(p, d, n);
}

static void gputs(struct gbuf *g, const char *s)
{
	gput(g, s, strlen(s));
}

/* ---- Content handed to mfs_view_write ------------------------------------ */

struct mem_content {
	const uint8_t *buf;
	uint64_t size;
};

static int mem_read(void *arg, uint64_t off, size_t len, void *buf)
{
	const struct mem_content *c = arg;
	CHECK(off <= c->size && len <= c->size - off,
	      "the core read content [%" PRIu64 ", +%zu) beyond its %" PRIu64 " bytes", off, len,
	      c->size);
	if (len)
		memcpy(buf, c->buf + off, len);
	return 0;
}

static int write_view(struct mfs_model *m, mfs_id id, const uint8_t *buf, uint64_t len,
		      const struct mfs_extent *ext, size_t next, struct mfs_patch *p,
		      struct mfs_err *err)
{
	static const uint8_t empty[1];
	struct mem_content mc = {buf ? buf : empty, len};
	struct mfs_content c = {
		.size = len, .read = mem_read, .ctx = &mc, .ext = ext, .next = next,
	};
	/* As the mount does: values text checked in pieces as it is written (a
	 * third, then two), then committed with the values the checks parsed. */
	struct mfs_check st = {0};
	int r = 0;
	bool values = !ext && buf && m->nodes[id].view == MFS_V_VALUES;
	for (uint64_t k = 1, upto; values && k <= 2 && r == 0; k++)
		if ((upto = len * k / 3) > st.off)
			r = mfs_view_check_prefix(m, id, (const char *)buf + st.off,
						  (size_t)(upto - st.off), &st, err);
	c.checked = &st;
	if (r == 0)
		r = mfs_view_write(m, id, &c, p, err);
	mfs_check_reset(&st);
	CHECK(r <= 1 && r > -4096, "mfs_view_write returned %d", r);
	CHECK(r >= 0 || err->msg[0], "refused (%d) without a message", r);
	return r;
}

/* ---- Checking the tree and reading the views ----------------------------- */

static void check_tree(const struct mfs_model *m)
{
	CHECK(m->nnodes > 0 && m->nodes[MFS_ROOT].kind == MFS_K_DIR, "no root directory");
	for (mfs_id id = 0; id < m->nnodes; id++) {
		const struct mfs_node *n = &m->nodes[id];
		ctx.path[0] = '\0';
		if (n->kind == MFS_K_DIR) {
			uint32_t count = 0, dirs = 0;
			for (mfs_id c = n->first; c != MFS_NONE; c = m->nodes[c].next) {
				CHECK(c < m->nnodes && count < m->nnodes, "node %u: bad child list", id);
				CHECK(m->nodes[c].parent == id, "node %u: child %u has parent %u", id,
				      c, m->nodes[c].parent);
				count++;
				dirs += m->nodes[c].kind == MFS_K_DIR;
			}
			CHECK(count == n->nchild && dirs == n->ndirs,
			      "node %u: %u children (%u dirs) listed, %u (%u) counted", id, count,
			      dirs, n->nchild, n->ndirs);
		} else if (n->kind == MFS_K_FILE) {
			CHECK(n->view > MFS_V_NONE && n->view < MFS_V_COUNT, "node %u: view %u", id,
			      n->view);
		} else {
			CHECK(n->kind == MFS_K_LINK, "node %u: kind %u", id, n->kind);
		}
		if (id == MFS_ROOT)
			continue;
		size_t nl = strlen(n->name);
		CHECK(nl > 0 && nl <= 255 && !strchr(n->name, '/') && strcmp(n->name, ".") &&
			      strcmp(n->name, ".."),
		      "node %u: bad name '%s'", id, n->name);
		CHECK(n->parent < m->nnodes && m->nodes[n->parent].kind == MFS_K_DIR,
		      "node %u: parent %u is not a directory", id, n->parent);
		CHECK(mfs_lookup(m, n->parent, n->name) == id,
		      "node %u: its name '%s' finds node %u (names must be unique)", id, n->name,
		      mfs_lookup(m, n->parent, n->name));
		char path[4096];
		if (mfs_node_path(m, id, path, sizeof(path)) >= 0)
			CHECK(mfs_resolve(m, path) == id, "node %u: path %s resolves to %u", id,
			      path, mfs_resolve(m, path));
		if (n->kind == MFS_K_LINK) {
			int r = mfs_link_target(m, id, path, sizeof(path));
			CHECK(r >= 0 || r == -ENAMETOOLONG, "node %u: link target: %d", id, r);
		}
	}
}

/* Whether a view is small enough to read (rendering is bounded too). */
static bool in_budget(const struct mfs_model *m, mfs_id id)
{
	const struct mfs_node *n = &m->nodes[id];
	const struct mfs_tensor *t = mfs_node_tensor(m, id);
	switch (n->view) {
	case MFS_V_VALUES:
		return t->nelem <= TEXT_ELEMS_MAX;
	case MFS_V_MTX:
		return t->nnz <= TEXT_ELEMS_MAX && t->ndim && t->dims[0] <= TEXT_ELEMS_MAX;
	case MFS_V_CSV: {
		const struct mfs_frame *f = &m->frames[n->u.frame];
		return f->nrows <= TEXT_ELEMS_MAX &&
		       f->nrows * (f->ncols ? f->ncols : 1) <= TEXT_ELEMS_MAX;
	}
	case MFS_V_DATA:
	case MFS_V_NPY:
		return t->nelem * t->esize <= VIEW_MAX;
	default:
		return true;
	}
}

/* Set from fuzz_target.lazy for the input being run. */
static bool eio_ok;

/* The whole content of a file node, read in pieces of `piece` bytes, plus a
 * random-access read that must agree; NULL if it is over budget (or, for a
 * lazy target, when the stored data turns out corrupt: EIO). */
static uint8_t *read_view(struct mfs_model *m, mfs_id id, size_t piece, uint64_t probe,
			  uint64_t *len)
{
	struct mfs_err err = {0};
	uint64_t size;
	mfs_view_size_cheap(m, id);
	int r = mfs_view_size(m, id, &size, &err);
	if (r == -EIO && eio_ok)
		return NULL;
	CHECK(r == 0, "size: %s (%d)", err.msg, r);
	if (size > VIEW_MAX)
		return NULL;
	uint8_t *buf = xmalloc((size_t)size);
	struct mfs_rcache *rc = mfs_rcache_new();
	CHECK(rc, "out of memory");
	for (uint64_t off = 0; off < size;) {
		size_t want = size - off < piece ? (size_t)(size - off) : piece;
		ssize_t got = mfs_view_read(m, id, off, want, buf + off, rc, &err);
		if (got == -EIO && eio_ok) {
			mfs_rcache_free(rc);
			free(buf);
			return NULL;
		}
		CHECK(got == (ssize_t)want, "read [%" PRIu64 ", +%zu) of %" PRIu64 ": %zd (%s)", off,
		      want, size, got, err.msg);
		off += want;
	}
	uint8_t tail[16];
	ssize_t got = mfs_view_read(m, id, size, sizeof(tail), tail, rc, &err);
	CHECK(got == 0, "read at the end (%" PRIu64 ") returned %zd (%s)", size, got, err.msg);
	mfs_rcache_free(rc);
	if (size) {
		/* A reader that jumps straight into the middle sees the same bytes. */
		uint8_t part[4099];
		uint64_t off = probe % size;
		size_t want = size - off < sizeof(part) ? (size_t)(size - off) : sizeof(part);
		got = mfs_view_read(m, id, off, want, part, NULL, &err);
		CHECK(got == (ssize_t)want && !memcmp(part, buf + off, want),
		      "read [%" PRIu64 ", +%zu) without a cache differs (%zd: %s)", off, want, got,
		      err.msg);
	}
	uint64_t again;
	r = mfs_view_size(m, id, &again, &err);
	CHECK(r == 0 && again == size, "size changed from %" PRIu64 " to %" PRIu64 " (%d)", size,
	      again, r);
	*len = size;
	return buf;
}

/* A writable view and the content it showed. */
struct kept {
	mfs_id id;
	uint8_t *buf;
	uint64_t len;
};

struct walk {
	struct kept *v;
	size_t n, cap;
};

static void walk_free(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->v[i].buf);
	free(w->v);
}

/* Read every file node; keep the content of writable ones when w is given. */
static void walk_model(struct mfs_model *m, size_t piece, uint64_t probe, struct walk *w)
{
	check_tree(m);
	for (mfs_id id = 0; id < m->nnodes; id++) {
		const struct mfs_node *n = &m->nodes[id];
		if (n->kind != MFS_K_FILE || !in_budget(m, id))
			continue;
		set_path(m, id);
		uint64_t len;
		uint8_t *buf = read_view(m, id, piece, probe + id, &len);
		if (!buf)
			continue;
		if (!w || !(n->flags & MFS_NF_WRITABLE)) {
			free(buf);
			continue;
		}
		if (w->n == w->cap) {
			w->cap = w->cap ? w->cap * 2 : 16;
			w->v = realloc(w->v, w->cap * sizeof(*w->v));
			CHECK(w->v, "out of memory");
		}
		w->v[w->n++] = (struct kept){id, buf, len};
	}
	ctx.path[0] = '\0';
}

/* Writing back what a view shows changes nothing. */
static void rewrite_all(struct mfs_model *m, const struct walk *w)
{
	for (size_t i = 0; i < w->n; i++) {
		const struct kept *k = &w->v[i];
		set_path(m, k->id);
		struct mfs_patch p;
		struct mfs_err err = {0};
		mfs_patch_init(&p);
		int r = write_view(m, k->id, k->buf, k->len, NULL, 0, &p, &err);
		if (r != 1) {
			say("fuzz: content: \"%.*s\"\n", (int)(k->len < 2000 ? k->len : 2000),
			    (const char *)k->buf);
			for (size_t j = 0; r == 0 && j < p.n; j++)
				say("fuzz: span [%" PRIu64 ", +%" PRIu64 ") <- %" PRIu64 " bytes\n",
				    p.spans[j].off, p.spans[j].len, p.spans[j].dlen);
		}
		CHECK(r == 1, "writing back its own %" PRIu64 " bytes returned %d (%s, %zu spans)",
		      k->len, r, err.msg, p.n);
		mfs_patch_free(&p);
	}
	ctx.path[0] = '\0';
}

/* ---- Generating new content ---------------------------------------------- */

/* Values that sit on the edges of some dtype, or are not numbers at all. */
static const char *const odd_values[] = {
	"0", "-0", "1", "-1", "+1", "nan", "-nan", "NaN", "inf", "-inf", "Infinity", "1e308",
	"1e309", "4.9e-324", "2e-324", "2.2250738585072014e-308", "3.4028235e38",
	"3.4028236e38", "1.4e-45", "65504", "65520", "6e-8", "127", "128", "-128", "-129",
	"255", "256", "32767", "32768", "-32769", "65535", "65536", "2147483647",
	"2147483648", "-2147483649", "4294967295", "4294967296", "9223372036854775807",
	"9223372036854775808", "-9223372036854775809", "18446744073709551615",
	"18446744073709551616", "0.1", "0.30000000000000004", "1.5", "0x10", "1e", "e5", ".",
	"-", "1.2.3", "1+2j", "-1.5-0.5j", "nanj", "1j", "true", "False", "1_000", "00", "",
};
#define N_ODD (sizeof(odd_values) / sizeof(odd_values[0]))

static void gen_number(struct gbuf *g, struct script *s, enum mfs_dtype dt)
{
	char tmp[96];
	uint8_t how = sc8(s);
	switch (how % 5) {
	case 0:
		gputs(g, odd_values[sc8(s) % N_ODD]);
		break;
	case 1: {
		int64_t v = (int64_t)scn(s, 8);
		snprintf(tmp, sizeof(tmp), "%" PRId64, v >> (sc8(s) % 64));
		gputs(g, tmp);
		break;
	}
	case 2: {
		uint64_t bits = scn(s, 8);
		double d;
		memcpy(&d, &bits, sizeof(d));
		snprintf(tmp, sizeof(tmp), "%.*g", 1 + sc8(s) % 17, d);
		gputs(g, tmp);
		break;
	}
	case 3: {
		uint32_t bits = (uint32_t)scn(s, 4);
		float f;
		memcpy(&f, &bits, sizeof(f));
		snprintf(tmp, sizeof(tmp), "%.9g", (double)f);
		gputs(g, tmp);
		break;
	}
	default:
		snprintf(tmp, sizeof(tmp), "%d", (int8_t)sc8(s));
		gputs(g, tmp);
	}
	if ((dt == MFS_DT_C32 || dt == MFS_DT_C64 || dt == MFS_DT_C128) && (how & 0x80)) {
		snprintf(tmp, sizeof(tmp), "%+gj", (double)(int8_t)sc8(s) / 4);
		gputs(g, tmp);
	}
}

/* Text of numbers: one per element of the view's tensor (or one or two
 * more or fewer), or a single value for a text file. */
static void gen_values(struct gbuf *g, struct script *s, const struct mfs_tensor *t)
{
	static const char *const seps[] = {" ", "\n", ",", "\t", ", ", "\r\n", "  "};
	enum mfs_dtype dt = t ? (enum mfs_dtype)t->dtype : MFS_DT_F64;
	uint64_t count = t ? t->nelem : 1;
	uint8_t adj = sc8(s);
	if (t && t->dtype == MFS_DT_CHAR8) {
		size_t n = adj & 0x80 ? (size_t)t->nelem : sc8(s);
		for (size_t i = 0; i < n; i++) {
			uint8_t c = sc8(s);
			gput(g, &c, 1);
		}
		return;
	}
	if (adj % 8 == 6 && count)
		count--;
	else if (adj % 8 == 7)
		count++;
	const char *sep = seps[(adj >> 3) % (sizeof(seps) / sizeof(seps[0]))];
	for (uint64_t i = 0; i < count; i++) {
		if (i)
			gputs(g, sep);
		gen_number(g, s, dt);
	}
	if (adj & 0x80)
		gputs(g, "\n");
}

static const char *const npy_descrs[] = {
	"|i1", "|u1", "<i2", "<u2", "<i4", "<u4", "<i8", "<u8", "<f2", "<f4", "<f8", "|b1",
	"<c8", "<c16", "[('re', '<f2'), ('im', '<f2')]", ">f4", "=i4", "|f4", "<S4", "<U1",
	"O", "'<f4'",
};
#define N_DESCR (sizeof(npy_descrs) / sizeof(npy_descrs[0]))

/* A .npy file: the view's own dtype and shape, or others the script picks,
 * with element bytes from the script. */
static void gen_npy(struct gbuf *g, struct script *s, const struct mfs_tensor *t)
{
	uint8_t how = sc8(s);
	const char *own = t ? mfs_dtype_info((enum mfs_dtype)t->dtype)->npy : NULL;
	const char *descr = (how & 1) && own ? own : npy_descrs[sc8(s) % N_DESCR];
	bool fortran = (how & 2) ? t && t->order == MFS_COL_MAJOR && t->ndim > 1 : (how & 4);
	uint64_t dims[8];
	uint32_t ndim;
	/* The tensor's own shape (when its data would fit in a view we read),
	 * or a small one. */
	if ((how & 8) && t && t->ndim <= 8 && t->nelem <= VIEW_MAX / 16) {
		ndim = t->ndim;
		memcpy(dims, t->dims, ndim * sizeof(*dims));
	} else {
		ndim = sc8(s) % 5;
		for (uint32_t i = 0; i < ndim; i++)
			dims[i] = sc8(s) % 9;
	}
	uint64_t n = 1;
	for (uint32_t i = 0; i < ndim; i++)
		n *= dims[i];
	enum mfs_dtype dt = mfs_dtype_from_npy(descr, strlen(descr));
	unsigned es = dt != MFS_DT_INVALID ? mfs_dtype_info(dt)->size : 4;

	char dict[640];
	int dl = snprintf(dict, sizeof(dict), "{'descr': %s%s%s, 'fortran_order': %s, 'shape': (",
			  descr[0] == '[' || descr[0] == '\'' ? "" : "'", descr,
			  descr[0] == '[' || descr[0] == '\'' ? "" : "'", fortran ? "True" : "False");
	for (uint32_t i = 0; i < ndim; i++)
		dl += snprintf(dict + dl, sizeof(dict) - (size_t)dl, "%s%" PRIu64, i ? ", " : "",
			       dims[i]);
	dl += snprintf(dict + dl, sizeof(dict) - (size_t)dl, "%s), }", ndim == 1 ? "," : "");
	bool v2 = how & 0x10;
	size_t pre = v2 ? 12 : 10;
	size_t hlen = ((pre + (size_t)dl + 1 + 63) & ~(size_t)63) - pre;
	uint8_t head[12] = {0x93, 'N', 'U', 'M', 'P', 'Y', v2 ? 2 : 1, 0};
	head[8] = (uint8_t)hlen;
	head[9] = (uint8_t)(hlen >> 8);
	gput(g, head, pre);
	gput(g, dict, (size_t)dl);
	for (size_t i = (size_t)dl; i + 1 < hlen; i++)
		gputs(g, " ");
	gputs(g, "\n");

	uint64_t bytes = n * es;
	if (how & 0x80)
		bytes = (sc8(s) & 1) ? bytes + 1 : (bytes ? bytes - 1 : 0);
	/* Element bytes: the rest of the script over and over (zeros without). */
	size_t from = s->pos, avail = s->n - s->pos;
	uint8_t *b = gspace(g, (size_t)bytes);
	for (uint64_t i = 0; i < bytes; i++) {
		uint8_t c = avail ? s->p[from + i % avail] : 0;
		/* small values (0, 1, -0.0 ...) when asked */
		b[i] = how & 0x20 ? (uint8_t)(c & 0x81) : c;
	}
	s->pos = s->n;
}

/* Is c a separator of values text (mfs_next_token's blanks)? */
static bool sep_char(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',';
}

/* The old content with one to four of its tokens replaced. */
static void gen_tokens(struct gbuf *g, struct script *s, const struct kept *k,
		       const struct mfs_tensor *t)
{
	struct gbuf cur = {0};
	gput(&cur, k->buf, (size_t)k->len);
	unsigned times = 1 + sc8(s) % 4;
	for (unsigned it = 0; it < times; it++) {
		size_t ntok = 0;
		for (size_t i = 0; i < cur.len; i++)
			ntok += !sep_char(cur.p[i]) && (i == 0 || sep_char(cur.p[i - 1]));
		if (ntok == 0)
			break;
		size_t want = (size_t)scn(s, 2) % ntok, seen = 0, st = 0, en = 0;
		for (size_t i = 0; i < cur.len; i++) {
			if (!sep_char(cur.p[i]) && (i == 0 || sep_char(cur.p[i - 1]))) {
				if (seen++ == want) {
					st = i;
					for (en = i; en < cur.len && !sep_char(cur.p[en]); en++)
						;
					break;
				}
			}
		}
		struct gbuf next = {0};
		gput(&next, cur.p, st);
		gen_number(&next, s, t ? (enum mfs_dtype)t->dtype : MFS_DT_F64);
		gput(&next, cur.p + en, cur.len - en);
		free(cur.p);
		cur = next;
	}
	gput(g, cur.p, cur.len);
	free(cur.p);
}

/* Merge overlapping or touching ranges (sorted by offset). */
static size_t merge_extents(struct mfs_extent *e, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && e[j].off < e[j - 1].off; j--) {
			struct mfs_extent x = e[j];
			e[j] = e[j - 1];
			e[j - 1] = x;
		}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && e[i].off <= e[k - 1].off + e[k - 1].len) {
			uint64_t end = e[i].off + e[i].len;
			if (end > e[k - 1].off + e[k - 1].len)
				e[k - 1].len = end - e[k - 1].off;
			continue;
		}
		e[k++] = e[i];
	}
	return k;
}

enum { E_RAW, E_OVERWRITE, E_SPLICE, E_VALUES, E_NPY, E_TOKENS, E_MODES };

/* ---- Editing ------------------------------------------------------------- */

/* Apply p to m's bytes, open the result with the same codec (it must open),
 * read it all, and write the same content to the same view again: that must
 * change nothing. */
static void reopen(const struct fuzz_target *ft, struct mfs_model *m, const char *name,
		   const struct mfs_patch *p, const struct kept *k, const uint8_t *content,
		   uint64_t clen, size_t piece)
{
	for (size_t i = 0; i < p->n; i++)
		CHECK(p->spans[i].off <= m->size && p->spans[i].len <= m->size - p->spans[i].off &&
			      (i == 0 || p->spans[i].off >= p->spans[i - 1].off + p->spans[i - 1].len),
		      "span %zu [%" PRIu64 ", +%" PRIu64 ") is beyond the file or out of order", i,
		      p->spans[i].off, p->spans[i].len);
	uint64_t nsize = mfs_patch_new_size(p, m->size);
	CHECK(nsize <= NEW_FILE_MAX, "the patched file has %" PRIu64 " bytes", nsize);
	uint8_t *nbuf = xmalloc((size_t)nsize);
	mfs_patch_read(p, m->base, m->size, 0, nsize, nbuf);
	uint8_t *side = NULL;
	size_t side_len = 0;
	if (p->has_sidecar) {
		side = dup_bytes(p->sidecar, p->sidecar_len);
		side_len = p->sidecar_len;
	} else if (m->has_sidecar) {
		side = dup_bytes(m->sidecar, m->sidecar_len);
		side_len = m->sidecar_len;
	}
	const char *save = getenv("MFS_FUZZ_SAVE");
	FILE *f = save ? fopen(save, "wb") : NULL;
	if (f) {
		fwrite(nbuf, 1, (size_t)nsize, f);
		fclose(f);
	}
	char path[4096];
	int pl = mfs_node_path(m, k->id, path, sizeof(path));
	uint8_t view = m->nodes[k->id].view;

	ctx.stage = "reopen after an edit";
	struct mfs_model *nm;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&nm, nbuf, (size_t)nsize, name, side, side_len, ft->codec,
				   &err);
	CHECK(r == 0, "the edit was accepted but the new file does not open: %s (%d)", err.msg, r);
	walk_model(nm, piece, nsize, NULL);

	ctx.stage = "same edit again";
	mfs_id id = pl >= 0 ? mfs_resolve(nm, path) : MFS_NONE;
	if (id != MFS_NONE && nm->nodes[id].kind == MFS_K_FILE && nm->nodes[id].view == view &&
	    (nm->nodes[id].flags & MFS_NF_WRITABLE)) {
		set_path(nm, id);
		struct mfs_patch p2;
		mfs_patch_init(&p2);
		r = write_view(nm, id, content, clen, NULL, 0, &p2, &err);
		/* A text value may have changed kind (PLearn text that was
		 * binary-coded bytes now shows as a number): it may refuse. */
		bool text = view == MFS_V_TEXT || view == MFS_V_RAW;
		CHECK(r == 1 || (text && r < 0),
		      "writing the same %" PRIu64 " bytes again returned %d (%s, %zu spans)", clen, r,
		      err.msg, p2.n);
		mfs_patch_free(&p2);
	}
	mfs_model_free(nm);
	free(side);
	free(nbuf);
}

/* Write new content, made from the script, to one writable view. */
static void edit_one(const struct fuzz_target *ft, struct mfs_model *m, const char *name,
		     const struct walk *w, struct script *s, size_t piece)
{
	if (!w->n)
		return;
	const struct kept *k = &w->v[scn(s, 2) % w->n];
	const struct mfs_tensor *t = mfs_node_tensor(m, k->id);
	unsigned mode = sc8(s) % E_MODES;
	struct gbuf g = {0};
	struct mfs_extent ext[4];
	size_t next = 0;
	bool use_ext = false;

	set_path(m, k->id);
	ctx.stage = "edit";
	switch (mode) {
	case E_RAW:
		gput(&g, s->p + s->pos, s->n - s->pos);
		s->pos = s->n;
		break;
	case E_OVERWRITE: {
		/* Same size, a few bytes overwritten (dd conv=notrunc). */
		gput(&g, k->buf, (size_t)k->len);
		uint8_t how = sc8(s);
		use_ext = how & 0x80;
		for (unsigned i = 0; i < 1u + how % 4 && g.len; i++) {
			size_t off = (size_t)(scn(s, 4) % g.len), n = 1 + sc8(s) % 16;
			if (n > g.len - off)
				n = g.len - off;
			for (size_t j = 0; j < n; j++)
				g.p[off + j] = sc8(s);
			ext[next++] = (struct mfs_extent){off, n};
		}
		next = merge_extents(ext, next);
		break;
	}
	case E_SPLICE: {
		size_t a = (size_t)(scn(s, 4) % (k->len + 1));
		size_t b = a + (size_t)(scn(s, 2) % (k->len - a + 1));
		size_t n = sc8(s) % 64;
		gput(&g, k->buf, a);
		for (size_t i = 0; i < n; i++) {
			uint8_t c = sc8(s);
			gput(&g, &c, 1);
		}
		gput(&g, k->buf + b, (size_t)k->len - b);
		break;
	}
	case E_VALUES:
		gen_values(&g, s, m->nodes[k->id].view == MFS_V_VALUES ? t : NULL);
		break;
	case E_NPY:
		gen_npy(&g, s, t);
		break;
	default:
		gen_tokens(&g, s, k, t);
	}

	struct mfs_patch p;
	struct mfs_err err = {0};
	mfs_patch_init(&p);
	int r = write_view(m, k->id, g.p, g.len, use_ext ? ext : NULL, use_ext ? next : 0, &p,
			   &err);
	say("fuzz: edit %s (mode %u, %zu bytes%s): %d %s\n", ctx.path, mode, g.len,
	    use_ext ? ", extents" : "", r, r < 0 ? err.msg : "");
	say("fuzz: content: \"%.*s\"\n", (int)(g.len < 2000 ? g.len : 2000), (const char *)g.p);
	for (size_t i = 0; r == 0 && i < p.n; i++)
		say("fuzz: span [%" PRIu64 ", +%" PRIu64 ") <- \"%.*s\"\n", p.spans[i].off,
		    p.spans[i].len, (int)(p.spans[i].dlen < 200 ? p.spans[i].dlen : 200),
		    (const char *)p.spans[i].data);
	if (r == 0)
		reopen(ft, m, name, &p, k, g.p, g.len, piece);
	mfs_patch_free(&p);
	free(g.p);
}

/* ---- One input ------------------------------------------------------------- */

static const uint8_t *find(const uint8_t *p, size_t n, const char *mark)
{
	return memmem(p, n, mark, strlen(mark));
}

int fuzz_one(const struct fuzz_target *ft, const uint8_t *data, size_t size)
{
	static const size_t pieces[] = {65536, 4093, 70001, 333};
	const uint8_t *end = data + size, *mark;
	size_t mlen = size;
	struct script s = {0};
	uint8_t derived[16];
	eio_ok = ft->lazy;
	if ((mark = find(data, size, FUZZ_EDIT_MARK))) {
		mlen = (size_t)(mark - data);
		s.p = mark + strlen(FUZZ_EDIT_MARK);
		s.n = (size_t)(end - s.p);
	} else {
		/* No script: derive one from the input (FNV-1a, then splitmix64). */
		uint64_t h = 0xcbf29ce484222325ull;
		for (size_t i = 0; i < size; i++)
			h = (h ^ data[i]) * 0x100000001b3ull;
		for (size_t i = 0; i < sizeof(derived); i++) {
			h += 0x9e3779b97f4a7c15ull;
			uint64_t z = h;
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
			z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
			derived[i] = (uint8_t)(z ^ (z >> 31));
		}
		s.p = derived;
		s.n = sizeof(derived);
	}
	const uint8_t *side_at = NULL;
	size_t side_len = 0;
	if (ft->sidecar && (mark = find(data, mlen, FUZZ_SIDE_MARK))) {
		side_at = mark + strlen(FUZZ_SIDE_MARK);
		side_len = mlen - (size_t)(side_at - data);
		mlen = (size_t)(mark - data);
	}
	const char *name = ft->names[ft->nnames > 1 ? sc8(&s) % ft->nnames : 0];
	uint8_t opts = sc8(&s);
	size_t piece = pieces[opts % 4];
	uint64_t probe = scn(&s, 4);

	ctx.codec = ft->codec->name;
	ctx.stage = "open";
	ctx.path[0] = '\0';
	uint8_t *buf = dup_bytes(data, mlen);
	uint8_t *side = side_at ? dup_bytes(side_at, side_len) : NULL;
	struct mfs_model *m;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, buf, mlen, name, side, side_len, ft->codec, &err);
	say("fuzz: open %s (%zu bytes, sidecar %zu): %d %s\n", name, mlen, side_len, r, err.msg);
	CHECK(r <= 0 && r > -4096, "open returned %d", r);
	if (r < 0) {
		CHECK(err.msg[0] || r == -ENOTSUP, "refused (%d) without a message", r);
		free(buf);
		free(side);
		return 0;
	}
	struct walk w = {0};
	ctx.stage = "walk";
	walk_model(m, piece, probe, &w);
	ctx.stage = "write back unchanged";
	rewrite_all(m, &w);
	edit_one(ft, m, name, &w, &s, piece);
	walk_free(&w);
	mfs_model_free(m);
	free(buf);
	free(side);
	return 0;
}
