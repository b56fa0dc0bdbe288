/* Model stores made of links: the Hugging Face cache and Ollama. Their
 * blobs are named by their content's hash and shared by every snapshot or
 * manifest that names them, so a blob's own model directory is read-only:
 * an edit there would break its name and change every revision at once. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "fs.h"
#include "store.h"

static bool starts(const char *s, const char *prefix)
{
	return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "sha256-" and 64 lower-case hex digits: Ollama's blob name. */
static bool ollama_blob_name(const char *name)
{
	if (!starts(name, "sha256-") || strlen(name) != 7 + 64)
		return false;
	for (const char *c = name + 7; *c; c++)
		if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
			return false;
	return true;
}

bool store_blob(const struct inode *mi)
{
	const struct inode *dir = mi->parent;
	if (!dir || !dir->name || strcmp(dir->name, "blobs") != 0)
		return false;
	if (ollama_blob_name(mi->name))
		return true;
	const struct inode *repo = dir->parent;
	return repo && (starts(repo->name, "models--") || starts(repo->name, "datasets--") ||
			starts(repo->name, "spaces--"));
}

const char store_blob_msg[] =
	"a blob of a model store is read-only (shared by every snapshot or manifest that "
	"names it, and named by its hash): edit it through a snapshot or manifest name";

int store_refuse(const struct inode *mi)
{
	log_error(mi, NULL, EROFS, store_blob_msg);
	return -EROFS;
}
