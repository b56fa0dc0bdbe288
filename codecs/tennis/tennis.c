/* TenniS module files (.tsm): the codec table, the bid (the code at offset
 * 4) and open, which reads the header and the module lists and hands each
 * node to tennis_tree.c. Nothing is decoded; edits are in tennis_edit.c. */
#include <errno.h>

#include "bytes.h"
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

static int tennis_open(struct mfs_model *m, struct mfs_err *err)
{
	struct tennis_rd r = {.m = m, .b = m->base, .size = m->size, .err = err};
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

	struct tennis_list in, out;
	r.pos = TENNIS_HEADER_LEN;
	tennis_where(&r, "module inputs");
	int rc = tennis_get_list(&r, &in);
	if (rc < 0)
		return rc;
	tennis_where(&r, "module outputs");
	rc = tennis_get_list(&r, &out);
	if (rc < 0)
		return rc;
	tennis_where(&r, "module");
	rc = tennis_get_count(&r, "node count", 8, &r.nnodes);
	if (rc < 0)
		return rc;
	rc = tennis_check_list(&r, "module input", &in);
	if (rc < 0)
		return rc;
	rc = tennis_check_list(&r, "module output", &out);
	if (rc < 0)
		return rc;
	tennis_add_list_text(&r, MFS_ROOT, "inputs", &in);
	tennis_add_list_text(&r, MFS_ROOT, "outputs", &out);

	/* Per node: its directory and its name, for by-name/ (the count was
	 * checked against the bytes left: 8 bytes or more per node). */
	size_t n = r.nnodes ? r.nnodes : 1;
	struct tennis_named *nm = mfs_model_alloc(m, n * sizeof(*nm));
	mfs_id *dirs = mfs_model_alloc(m, n * sizeof(*dirs));
	if (!nm || !dirs)
		return mfs_error(err, ENOMEM, "out of memory");
	uint32_t nnamed = 0;
	mfs_id nodes = mfs_add_dir(m, MFS_ROOT, "nodes", 5);
	for (uint32_t i = 0; i < r.nnodes; i++) {
		rc = tennis_read_node(&r, i, nodes, nm, &nnamed, dirs);
		if (rc < 0)
			return rc;
	}
	/* Bytes after the last node are kept as they are: the TenniS loader
	 * stops reading there too. */
	mfs_id byname = mfs_add_dir(m, MFS_ROOT, "by-name", 7);
	tennis_add_links(&r, byname, nm, nnamed, dirs);
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
	.name_class = mfs_name_class_none,
};
