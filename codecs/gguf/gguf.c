/* GGUF (`.gguf`, llama.cpp and ggml models): the codec table. Parsing is in
 * gguf_parse.c, the tree in gguf_tree.c, edits in gguf_edit.c, the ggml
 * types and dequantizers in gguf_types.c and dequant.c. */
#include <errno.h>
#include <string.h>

#include "gguf.h"

static int gguf_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	(void)size;
	bool ext = mfs_has_ext(name, ".gguf");
	if (n >= 4 && memcmp(head, "GGUF", 4) == 0)
		return 32 + (ext ? 8 : 0);
	/* A .gguf without the magic bids by its name, so that open says why
	 * it is not one. */
	return ext ? 8 : 0;
}

static int gguf_open(struct mfs_model *m, struct mfs_err *err)
{
	struct gguf_file *f = mfs_model_alloc(m, sizeof(*f));
	if (!f)
		return mfs_error(err, ENOMEM, "out of memory");
	int r = mfs_gguf_parse(m, f, err);
	if (r < 0)
		return r;
	m->priv = f;
	return mfs_gguf_tree(m, f, err);
}

const struct mfs_codec mfs_codec_gguf = {
	.name = "gguf",
	.title = "GGUF",
	.bid = gguf_bid,
	.open = gguf_open,
	.edit = mfs_gguf_edit,
	.name_class = mfs_name_class_none,
};
