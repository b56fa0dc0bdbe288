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

bool mfs_st_is_index_name(const char *name)
{
	return mfs_has_ext(name, ".safetensors.index.json");
}

/* Whether the head looks like a safetensors header: a JSON object at byte 8
 * whose first member is a string key (or which is empty). */
static bool json_head(const uint8_t *h, size_t n)
{
	if (n < 10)
		return false;
	size_t i = skip_blank(h, 8, n);
	if (i >= n || h[i] != '{')
		return false;
	i = skip_blank(h, i + 1, n);
	return i >= n || h[i] == '"' || h[i] == '}';
}

/* A header length that fits the file and a JSON head: the content says
 * safetensors, whatever the name. A file named .safetensors (or an index)
 * bids whatever its bytes, so that open says why it is refused: a 5-byte
 * broken download, a zero header length, an HTML error page. */
static int st_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	if (mfs_st_is_index_name(name)) {
		size_t i = skip_blank(h, 0, n);
		return i < n && h[i] == '{' ? 16 : 8;
	}
	bool json = json_head(h, n);
	uint64_t hlen = n >= 8 ? mfs_le64(h) : 0;
	if (json && hlen >= 2 && hlen <= ST_HEADER_MAX && hlen <= size - 8)
		return 40;
	if (!mfs_has_ext(name, ".safetensors"))
		return 0;
	return json ? 16 : 8;
}

static int st_open(struct mfs_model *m, struct mfs_err *err)
{
	if (mfs_st_is_index_name(m->name))
		return mfs_st_open_index(m, err);
	return mfs_st_open_file(m, err);
}

/* A sharded index is read by its name (and checks its shards beside it). */
static int st_name_class(const char *name)
{
	return mfs_st_is_index_name(name);
}

const struct mfs_codec mfs_codec_safetensors = {
	.name = "safetensors",
	.title = "safetensors",
	.sidecar = NULL,
	.bid = st_bid,
	.open = st_open,
	.close = NULL,
	.edit = mfs_st_edit,
	.name_class = st_name_class,
};
