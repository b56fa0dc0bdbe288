/* TenniS module files (.tsm): recognising them by the code at offset 4 and
 * indexing their structure into the tree of docs/layout.md "TenniS". Nothing is
 * decoded here; edits are turned into patches in tennis_edit.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "numtext.h"
#include "tennis.h"

/* TenniS's DTYPE enum (include/core/dtype.h upstream) and type_bytes(). */
static const struct tennis_type types[] = {
	[0] = {MFS_DT_VOID, 0, NULL},
	[1] = {MFS_DT_I8, 1, NULL},
	[2] = {MFS_DT_U8, 1, NULL},
	[3] = {MFS_DT_I16, 2, NULL},
	[4] = {MFS_DT_U16, 2, NULL},
	[5] = {MFS_DT_I32, 4, NULL},
	[6] = {MFS_DT_U32, 4, NULL},
	[7] = {MFS_DT_I64, 8, NULL},
	[8] = {MFS_DT_U64, 8, NULL},
	[9] = {MFS_DT_F16, 2, NULL},
	[10] = {MFS_DT_F32, 4, NULL},
	[11] = {MFS_DT_F64, 8, NULL},      /* the seed's 6 is a typo */
	[12] = {MFS_DT_OPAQUE, 8, "ptr"},  /* sizeof(void *) of the writer */
	[13] = {MFS_DT_CHAR8, 1, NULL},
	[14] = {MFS_DT_CHAR16, 2, NULL},
	[15] = {MFS_DT_CHAR32, 4, NULL},
	[16] = {MFS_DT_OPAQUE, 1, "unknown8"},
	[17] = {MFS_DT_OPAQUE, 2, "unknown16"},
	[18] = {MFS_DT_OPAQUE, 4, "unknown32"},
	[19] = {MFS_DT_OPAQUE, 8, "unknown64"},
	[20] = {MFS_DT_OPAQUE, 16, "unknown128"},
	[21] = {MFS_DT_BOOL, 1, NULL},
	[22] = {MFS_DT_C32, 4, NULL},
	[23] = {MFS_DT_C64, 8, NULL},
	[24] = {MFS_DT_C128, 16, NULL},
	[25] = {MFS_DT_OPAQUE, 1, "sink8q0"},
	[26] = {MFS_DT_OPAQUE, 1, "sink8q1"},
	[27] = {MFS_DT_OPAQUE, 1, "sink8q2"},
	[28] = {MFS_DT_OPAQUE, 1, "sink8q3"},
	[29] = {MFS_DT_OPAQUE, 1, "sink8q4"},
	[30] = {MFS_DT_OPAQUE, 1, "sink8q5"},
	[31] = {MFS_DT_OPAQUE, 1, "sink8q6"},
	[32] = {MFS_DT_OPAQUE, 1, "sink8q7"},
};
#define NTYPES (sizeof(types) / sizeof(types[0]))

const struct tennis_type *tennis_type_of(unsigned code)
{
	return code < NTYPES ? &types[code] : NULL;
}

int tennis_code(enum mfs_dtype dt)
{
	/* Types without values (void, char16/32, opaque) have no meaning to
	 * convert to; each numeric dtype has exactly one code. */
	if (!mfs_dtype_info(dt)->numeric)
		return -1;
	for (unsigned c = 0; c < NTYPES; c++)
		if (types[c].dtype == dt)
			return (int)c;
	return -1;
}

static int tennis_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	(void)size;
	/* The code is the evidence; the extension only adds to it (a .tsm may
	 * be called anything). A .tsm without the code bids by its name, so
	 * that open says why it is not one. */
	bool ext = mfs_has_ext(name, ".tsm");
	if (n < 8 || mfs_le32(head + 4) != TENNIS_CODE)
		return ext ? 8 : 0;
	return 32 + (ext ? 8 : 0);
}

/* ---- reading ------------------------------------------------------------- */

struct rd {
	struct mfs_model *m;
	const uint8_t *b;
	uint64_t pos, size;
	uint32_t nnodes;
	struct mfs_err *err;
	char where[160];   /* what is being read, for messages */
};

/* u32 count + count u32 node indices, at off. */
struct list {
	uint32_t n;
	uint64_t off;
};

/* The first #op / #name of a node, when it is one CHAR8 field. */
struct str {
	uint64_t field, data, len;   /* field 0: none */
};

/* One field of a packed tensor, as read. */
struct field {
	uint64_t off;       /* the dtype byte */
	uint64_t data;      /* the first data byte */
	uint64_t nelem;
	uint8_t code;
	uint32_t ndim;
	uint64_t dims[TENNIS_MAX_DIMS];
};

/* A node's #name, for by-name/. */
struct named {
	const uint8_t *s;
	uint64_t len;
	uint32_t node;
	bool dup;
};

static void set_where(struct rd *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_where(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->where, sizeof(r->where), fmt, ap);
	va_end(ap);
}

static uint64_t left(const struct rd *r)
{
	return r->size - r->pos;
}

static int truncated(struct rd *r, const char *what, uint64_t need)
{
	return mfs_error(r->err, EINVAL, "%s: %s needs %llu bytes at offset %llu, %llu left",
			 r->where, what, (unsigned long long)need, (unsigned long long)r->pos,
			 (unsigned long long)left(r));
}

static int get_u32(struct rd *r, const char *what, uint32_t *v)
{
	*v = 0;  /* on every path: compilers cannot tell that errors are < 0 */
	if (left(r) < 4)
		return truncated(r, what, 4);
	*v = mfs_le32(r->b + r->pos);
	r->pos += 4;
	return 0;
}

/* A count of items that take at least each bytes, checked against the bytes
 * left before anything is built for them. */
static int get_count(struct rd *r, const char *what, uint64_t each, uint32_t *n)
{
	uint64_t at = r->pos;
	int rc = get_u32(r, what, n);
	if (rc < 0)
		return rc;
	uint64_t need = (uint64_t)*n * each;  /* < 2^32 * 2^32: no overflow */
	if (need > left(r))
		return mfs_error(r->err, EINVAL,
				 "%s: %s %u at offset %llu needs at least %llu bytes, %llu left",
				 r->where, what, *n, (unsigned long long)at, (unsigned long long)need,
				 (unsigned long long)left(r));
	return 0;
}

static int get_list(struct rd *r, struct list *l)
{
	int rc = get_count(r, "index count", 4, &l->n);
	if (rc < 0)
		return rc;
	l->off = r->pos;
	r->pos += (uint64_t)l->n * 4;
	return 0;
}

static int check_list(struct rd *r, const char *what, const struct list *l)
{
	for (uint32_t i = 0; i < l->n; i++) {
		uint32_t v = mfs_le32(r->b + l->off + 4 * (uint64_t)i);
		if (v >= r->nnodes)
			return mfs_error(r->err, EINVAL,
					 "%s %u at offset %llu: node index %u is beyond the %u nodes",
					 what, i, (unsigned long long)(l->off + 4 * (uint64_t)i), v,
					 r->nnodes);
	}
	return 0;
}

/* The indices of a list as one line of text. */
static mfs_id add_list_text(struct rd *r, mfs_id dir, const char *name, const struct list *l)
{
	char *s = mfs_model_alloc(r->m, (size_t)l->n * 11 + 1);
	if (!s)
		return MFS_NONE;
	size_t n = 0;
	for (uint32_t i = 0; i < l->n; i++) {
		if (i)
			s[n++] = ' ';
		n += mfs_fmt_u64(s + n, mfs_le32(r->b + l->off + 4 * (uint64_t)i));
	}
	return mfs_add_text(r->m, dir, name, strlen(name), s, n, 0);
}

/* A name from the file, fit for a message: control bytes as '?', at most 40
 * bytes (not cutting a UTF-8 character). */
static void show_name(char out[48], const uint8_t *s, uint64_t len)
{
	size_t n = len > 40 ? 40 : (size_t)len;
	if (n < len)
		while (n && (s[n] & 0xC0) == 0x80)
			n--;
	for (size_t i = 0; i < n; i++)
		out[i] = (s[i] < 0x20 || s[i] == 0x7F) ? '?' : (char)s[i];
	if (n < len)
		memcpy(out + n, "...", 4);
	else
		out[n] = '\0';
}

static const char *type_name(const struct tennis_type *ty)
{
	return ty->name ? ty->name : mfs_dtype_info((enum mfs_dtype)ty->dtype)->name;
}

static int read_field(struct rd *r, struct field *f)
{
	if (left(r) < TENNIS_FIELD_HEAD)
		return truncated(r, "dtype and dims count", TENNIS_FIELD_HEAD);
	f->off = r->pos;
	f->code = r->b[r->pos];
	const struct tennis_type *ty = tennis_type_of(f->code);
	if (!ty)
		return mfs_error(r->err, EINVAL, "%s: unknown dtype code %u at offset %llu",
				 r->where, f->code, (unsigned long long)f->off);
	f->ndim = mfs_le32(r->b + r->pos + 1);
	r->pos += TENNIS_FIELD_HEAD;
	if ((uint64_t)f->ndim * 4 > left(r))
		return mfs_error(r->err, EINVAL, "%s: dims count %u needs %llu bytes, %llu left",
				 r->where, f->ndim, (unsigned long long)f->ndim * 4,
				 (unsigned long long)left(r));
	if (f->ndim > TENNIS_MAX_DIMS)
		return mfs_error(r->err, EINVAL, "%s: %u dimensions, at most %u are supported",
				 r->where, f->ndim, TENNIS_MAX_DIMS);
	f->nelem = 1;
	for (uint32_t k = 0; k < f->ndim; k++) {
		f->dims[k] = mfs_le32(r->b + r->pos + 4 * (uint64_t)k);
		if (!mfs_mul_ok(f->nelem, f->dims[k], &f->nelem))
			return mfs_error(r->err, EINVAL, "%s: shape at offset %llu overflows 64 bits",
					 r->where, (unsigned long long)r->pos);
	}
	r->pos += 4 * (uint64_t)f->ndim;
	uint64_t bytes;
	if (!mfs_mul_ok(f->nelem, ty->size, &bytes))
		return mfs_error(r->err, EINVAL, "%s: %llu %s elements overflow 64 bits",
				 r->where, (unsigned long long)f->nelem, type_name(ty));
	if (bytes > left(r))
		return mfs_error(r->err, EINVAL, "%s: %llu %s elements need %llu bytes, %llu left",
				 r->where, (unsigned long long)f->nelem, type_name(ty),
				 (unsigned long long)bytes, (unsigned long long)left(r));
	f->data = r->pos;
	r->pos += bytes;
	return 0;
}

static void add_field(struct rd *r, mfs_id parent, const char *name, size_t len,
		      const struct field *f)
{
	const struct tennis_type *ty = tennis_type_of(f->code);
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)ty->dtype);
	struct mfs_tensor t;
	memset(&t, 0, sizeof(t));
	t.dtype = ty->dtype;
	t.order = MFS_ROW_MAJOR;
	t.ndim = f->ndim;
	t.esize = ty->size;
	t.dims = f->dims;
	t.off = f->data;
	t.tname = ty->name;
	t.tag = f->off;
	/* Any shape and any numeric TenniS dtype can be written back; char16/32
	 * bytes can be overwritten in place; pointers and opaque types are
	 * shown only. */
	if (di->numeric)
		t.flags = MFS_TF_WRITABLE | MFS_TF_RESHAPE | MFS_TF_RETYPE;
	else if (di->kind == MFS_DK_CHAR)
		t.flags = MFS_TF_WRITABLE;
	mfs_add_tensor(r->m, parent, name, len, &t);
}

static void note_string(struct str *s, const struct field *f)
{
	if (s->field)
		return;  /* the loader takes the first of duplicates too */
	s->field = f->off;
	s->data = f->data;
	s->len = f->nelem;
}

/* The params of node `node`: checked, and added under dir unless dir is
 * MFS_NONE (the first pass, which finds #op and #name). */
static int walk_params(struct rd *r, uint32_t node, uint32_t nparams, mfs_id dir,
		       struct str *op, struct str *name)
{
	for (uint32_t j = 0; j < nparams; j++) {
		set_where(r, "node %u param %u", node, j);
		uint32_t nl, nf;
		int rc = get_u32(r, "name length", &nl);
		if (rc < 0)
			return rc;
		if (nl > left(r))
			return truncated(r, "name", nl);
		const char *pn = (const char *)r->b + r->pos;
		r->pos += nl;
		char shown[48];
		show_name(shown, (const uint8_t *)pn, nl);
		set_where(r, "node %u param '%s'", node, shown);
		rc = get_count(r, "field count", TENNIS_FIELD_HEAD, &nf);
		if (rc < 0)
			return rc;
		/* One field is the tensor itself; else a directory of fields
		 * (empty for none). */
		mfs_id pdir = MFS_NONE;
		if (dir != MFS_NONE && nf != 1)
			pdir = mfs_add_dir(r->m, dir, pn, nl);
		for (uint32_t k = 0; k < nf; k++) {
			struct field f;
			if (nf != 1)
				set_where(r, "node %u param '%s' field %u", node, shown, k);
			rc = read_field(r, &f);
			if (rc < 0)
				return rc;
			if (dir == MFS_NONE) {
				if (nf == 1 && f.code == TENNIS_CHAR8 && nl == 3 && !memcmp(pn, "#op", 3))
					note_string(op, &f);
				if (nf == 1 && f.code == TENNIS_CHAR8 && nl == 5 && !memcmp(pn, "#name", 5))
					note_string(name, &f);
			} else if (nf == 1) {
				add_field(r, dir, pn, nl, &f);
			} else {
				char kn[16];
				int kl = snprintf(kn, sizeof(kn), "%u", k);
				add_field(r, pdir, kn, (size_t)kl, &f);
			}
		}
	}
	return 0;
}

static mfs_id add_string(struct rd *r, mfs_id dir, const char *name, const struct str *s)
{
	if (!s->field)
		return MFS_NONE;
	mfs_id id = mfs_add_text(r->m, dir, name, strlen(name), (const char *)r->b + s->data,
				 (size_t)s->len, MFS_NF_WRITABLE);
	mfs_set_tag(r->m, id, TENNIS_TAG(TENNIS_TAG_STRING, s->field));
	return id;
}

/* Node i at r->pos: checked in a first pass, then added under nodes. */
static int read_node(struct rd *r, uint32_t i, mfs_id nodes, struct named *nm, uint32_t *nnamed,
		     mfs_id *dirs)
{
	struct str op = {0}, name = {0};
	struct list in;
	uint32_t nparams;
	set_where(r, "node %u", i);
	int rc = get_count(r, "param count", 8, &nparams);
	if (rc < 0)
		return rc;
	uint64_t params = r->pos;
	rc = walk_params(r, i, nparams, MFS_NONE, &op, &name);
	if (rc < 0)
		return rc;
	set_where(r, "node %u inputs", i);
	rc = get_list(r, &in);
	if (rc < 0)
		return rc;
	char what[32];
	snprintf(what, sizeof(what), "node %u input", i);
	rc = check_list(r, what, &in);
	if (rc < 0)
		return rc;
	uint64_t end = r->pos;

	char dn[16];
	int dl = snprintf(dn, sizeof(dn), "%u", i);
	mfs_id dir = mfs_add_dir(r->m, nodes, dn, (size_t)dl);
	dirs[i] = dir;
	add_string(r, dir, "op", &op);
	add_string(r, dir, "name", &name);
	add_list_text(r, dir, "inputs", &in);
	mfs_id pdir = mfs_add_dir(r->m, dir, "params", 6);
	if (name.field)
		nm[(*nnamed)++] = (struct named){r->b + name.data, name.len, i, false};
	if (pdir == MFS_NONE)
		return 0;  /* out of memory: the core reports it */
	r->pos = params;
	rc = walk_params(r, i, nparams, pdir, NULL, NULL);
	r->pos = end;
	return rc;
}

static int cmp_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	uint64_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->s, y->s, (size_t)n) : 0;
	if (c)
		return c;
	if (x->len != y->len)
		return x->len < y->len ? -1 : 1;
	return (x->node > y->node) - (x->node < y->node);
}

static int cmp_node(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	return (x->node > y->node) - (x->node < y->node);
}

/* by-name/<name> -> ../nodes/<i> for the names that occur once. */
static void add_links(struct rd *r, mfs_id byname, struct named *nm, uint32_t n,
		      const mfs_id *dirs)
{
	qsort(nm, n, sizeof(*nm), cmp_name);
	for (uint32_t i = 1; i < n; i++) {
		if (nm[i].len == nm[i - 1].len &&
		    (!nm[i].len || !memcmp(nm[i].s, nm[i - 1].s, (size_t)nm[i].len)))
			nm[i].dup = nm[i - 1].dup = true;
	}
	qsort(nm, n, sizeof(*nm), cmp_node);
	for (uint32_t i = 0; i < n; i++)
		if (!nm[i].dup)
			mfs_add_link(r->m, byname, (const char *)nm[i].s, (size_t)nm[i].len,
				     dirs[nm[i].node]);
}

static int tennis_open(struct mfs_model *m, struct mfs_err *err)
{
	struct rd r = {.m = m, .b = m->base, .size = m->size, .err = err};
	if (m->size < 8)
		return mfs_error(err, EINVAL, "not a TenniS module: %llu bytes, the code 0x%08x is at offset 4",
				 (unsigned long long)m->size, TENNIS_CODE);
	if (mfs_le32(m->base + 4) != TENNIS_CODE)
		return mfs_error(err, EINVAL, "not a TenniS module: 0x%08x at offset 4, expected the code 0x%08x",
				 mfs_le32(m->base + 4), TENNIS_CODE);
	if (m->size < TENNIS_HEADER_LEN)
		return mfs_error(err, EINVAL, "header: needs %u bytes, the file has %llu",
				 TENNIS_HEADER_LEN, (unsigned long long)m->size);
	mfs_id hdr = mfs_add_dir(m, MFS_ROOT, "header", 6);
	mfs_id id = mfs_add_textf(m, hdr, "fake", MFS_NF_WRITABLE, "%u", mfs_le32(m->base));
	mfs_set_tag(m, id, TENNIS_TAG(TENNIS_TAG_FAKE, 0));
	mfs_add_textf(m, hdr, "code", 0, "0x%08x", TENNIS_CODE);
	id = mfs_add_raw(m, hdr, "reserved", 8, TENNIS_RESERVED_OFF, TENNIS_RESERVED_LEN,
			 MFS_NF_WRITABLE);
	mfs_set_tag(m, id, TENNIS_TAG(TENNIS_TAG_RESERVED, TENNIS_RESERVED_OFF));

	struct list in, out;
	r.pos = TENNIS_HEADER_LEN;
	set_where(&r, "module inputs");
	int rc = get_list(&r, &in);
	if (rc < 0)
		return rc;
	set_where(&r, "module outputs");
	rc = get_list(&r, &out);
	if (rc < 0)
		return rc;
	set_where(&r, "module");
	rc = get_count(&r, "node count", 8, &r.nnodes);
	if (rc < 0)
		return rc;
	rc = check_list(&r, "module input", &in);
	if (rc < 0)
		return rc;
	rc = check_list(&r, "module output", &out);
	if (rc < 0)
		return rc;
	add_list_text(&r, MFS_ROOT, "inputs", &in);
	add_list_text(&r, MFS_ROOT, "outputs", &out);

	/* Per node: its directory and its name, for by-name/ (the count was
	 * checked against the bytes left: 8 bytes or more per node). */
	size_t n = r.nnodes ? r.nnodes : 1;
	struct named *nm = mfs_model_alloc(m, n * sizeof(*nm));
	mfs_id *dirs = mfs_model_alloc(m, n * sizeof(*dirs));
	if (!nm || !dirs)
		return mfs_error(err, ENOMEM, "out of memory");
	uint32_t nnamed = 0;
	mfs_id nodes = mfs_add_dir(m, MFS_ROOT, "nodes", 5);
	for (uint32_t i = 0; i < r.nnodes; i++) {
		rc = read_node(&r, i, nodes, nm, &nnamed, dirs);
		if (rc < 0)
			return rc;
	}
	/* Bytes after the last node are kept as they are: the TenniS loader
	 * stops reading there too. */
	mfs_id byname = mfs_add_dir(m, MFS_ROOT, "by-name", 7);
	add_links(&r, byname, nm, nnamed, dirs);
	return 0;
}

const struct mfs_codec mfs_codec_tennis = {
	.name = "tennis",
	.title = "TenniS",
	.sidecar = NULL,
	.bid = tennis_bid,
	.open = tennis_open,
	.close = NULL,
	.edit = tennis_edit,
};
