/* PyTorch torch.save files, recognised by content: a zip whose first
 * record is `<top>/data.pkl` (or another record torch writes under one top
 * folder), or the legacy stream's pickled magic number. The codec table;
 * the layouts are pt_zip.c and pt_legacy.c, the tree pt_tree.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "pytorch.h"

/* The legacy stream's first pickle: 0x1950a86a20f9469cfc6c as a LONG1. */
static const uint8_t legacy_magic[12] = {0x8a, 0x0a, 0x6c, 0xfc, 0x9c, 0x46, 0xf9,
					 0x20, 0x6a, 0xa8, 0x50, 0x19};

bool pt_legacy_head(const uint8_t *head, size_t n)
{
	if (n < 2 + sizeof(legacy_magic) || head[0] != 0x80 || head[1] < 2 || head[1] > 5)
		return false;
	size_t at = 2;
	if (head[2] == 0x95)  /* protocol 4's FRAME */
		at += 9;
	return n >= at + sizeof(legacy_magic) && !memcmp(head + at, legacy_magic, sizeof(legacy_magic));
}

/* A record name torch.save writes under its top folder. */
static bool torch_record(const uint8_t *s, size_t n)
{
	static const char *const names[] = {"data.pkl", ".format_version", ".storage_alignment",
					    "byteorder", "version"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == n && !memcmp(names[i], s, n))
			return true;
	return n > 5 && !memcmp(s, "data/", 5);
}

bool pt_zip_head(const uint8_t *head, size_t n)
{
	if (n < 30 || memcmp(head, "PK\x03\x04", 4) != 0)
		return false;
	size_t nl = mfs_le16(head + 26);
	if (nl < 3 || 30 + nl > n)
		return false;
	const uint8_t *name = head + 30, *slash = memchr(name, '/', nl);
	if (!slash || slash == name)
		return false;
	size_t top = (size_t)(slash - name) + 1;
	return torch_record(name + top, nl - top);
}

static bool charge(void *ctx, int64_t bytes)
{
	return mfs_model_charge(ctx, bytes);
}

struct pk_budget pt_budget(struct mfs_model *m)
{
	return (struct pk_budget){charge, m};
}

static int pytorch_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	(void)size;
	(void)name;
	if (pt_legacy_head(head, n))
		return 96;
	if (pt_zip_head(head, n))
		return 48;
	return 0;
}

static int pytorch_open(struct mfs_model *m, struct mfs_err *err)
{
	struct pt *pt = calloc(1, sizeof(*pt));
	if (!pt)
		return mfs_error(err, ENOMEM, "out of memory");
	m->priv = pt;
	pt->pkl_member = UINT32_MAX;
	pt->legacy = pt_legacy_head(m->base, m->size < MFS_HEAD_MAX ? (size_t)m->size : MFS_HEAD_MAX);
	int r = pt->legacy ? pt_legacy_open(m, pt, err) : pt_zip_open(m, pt, err);
	return r < 0 ? r : pt_tree(m, pt, err);
}

static void pytorch_close(struct mfs_model *m)
{
	struct pt *pt = m->priv;
	if (!pt)
		return;
	for (uint32_t i = 0; i < pt->nviews; i++)
		free(pt->views[i].sizes);
	free(pt->views);
	free(pt->st);
	free(pt->st_hash);
	free(pt->rec_hash);
	pk_free(&pt->pk);
	free(pt->pkl_buf);
	mfs_zip_reader_free(pt->reader);
	mfs_zip_free(&pt->zip);
	free(pt);
	m->priv = NULL;
}

const struct mfs_codec mfs_codec_pytorch = {
	.name = "pytorch",
	.title = "PyTorch",
	.sidecar = NULL,
	.bid = pytorch_bid,
	.open = pytorch_open,
	.close = pytorch_close,
	.edit = pt_edit,
	/* read by content alone: a link and its target share one model */
	.name_class = mfs_name_class_none,
};
