/* The safetensors codec: recognising a file, and the codec table. The
 * header and tree are st_header.c's, edits st_edit.c's, sharded indexes
 * st_index.c's. */
#include <errno.h>
#include <string.h>

#include "bytes.h"
#include "safetensors.h"

static size_t skip_blank(const uint8_t *h, size_t i, size_t n)
{
	while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r'))
		i++;
	return i;
}

static bool has_suffix(const char *name, const char *suf)
{
	size_t n = strlen(name), s = strlen(suf);
	return n >= s && memcmp(name + n - s, suf, s) == 0;
}

bool mfs_st_is_index_name(const char *name)
{
	return has_suffix(name, ".safetensors.index.json");
}

/* A header length that fits the file, then a JSON object at byte 8 whose
 * first member is a string key (or which is empty). A length that does not
 * fit still bids by extension, so that open says why it is refused. */
static int st_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	if (mfs_st_is_index_name(name)) {
		size_t i = skip_blank(h, 0, n);
		return i < n && h[i] == '{' ? 16 : 0;
	}
	if (n < 10)
		return 0;
	uint64_t hlen = mfs_le64(h);
	size_t i = skip_blank(h, 8, n);
	if (i >= n || h[i] != '{')
		return 0;
	i = skip_blank(h, i + 1, n);
	if (i < n && h[i] != '"' && h[i] != '}')
		return 0;
	if (hlen >= 2 && hlen <= ST_HEADER_MAX && hlen <= size - 8)
		return 40;
	return has_suffix(name, ".safetensors") ? 16 : 0;
}

static int st_open(struct mfs_model *m, struct mfs_err *err)
{
	if (mfs_st_is_index_name(m->name))
		return mfs_st_open_index(m, err);
	return mfs_st_open_file(m, err);
}

const struct mfs_codec mfs_codec_safetensors = {
	.name = "safetensors",
	.sidecar = NULL,
	.bid = st_bid,
	.open = st_open,
	.close = NULL,
	.edit = mfs_st_edit,
};
