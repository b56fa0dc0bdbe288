/* Ollama manifests: manifests/<registry>/<namespace>/<model>/<tag>, Docker
 * v2 JSON naming blobs/sha256-<hex> by media type (docs/layout.md "Links
 * and model stores"). A manifest is a read-only directory of relative
 * links into the store's blobs (the fs layer shows a GGUF blob reached
 * through `model` as its model directory) and `layers`, one line per
 * layer. The codec does no I/O: a blob is named, never read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codec.h"
#include "json.h"

#define MEDIA "application/vnd.ollama.image."
/* From inside the tag's directory up to the store: tag, model, namespace,
 * registry, manifests. */
#define TO_STORE "../../../../../blobs/"
#define DIGEST_LEN (7 + 64)  /* "sha256:" and 64 hex digits */
#define MANIFEST_MAX (16u << 20)  /* Ollama's are a few hundred bytes */

/* Whether the first n bytes hold needle. */
static bool has(const uint8_t *h, size_t n, const char *needle)
{
	size_t k = strlen(needle);
	for (size_t i = 0; i + k <= n; i++)
		if (memcmp(h + i, needle, k) == 0)
			return true;
	return false;
}

/* A JSON object naming schemaVersion and an Ollama layer's media type in
 * its first bytes (Ollama writes config before layers, both short). */
static int ollama_bid(const uint8_t *h, size_t n, uint64_t size, const char *name)
{
	(void)name;
	if (size > MANIFEST_MAX)
		return 0;
	size_t i = 0;
	while (i < n && (h[i] == ' ' || h[i] == '\n' || h[i] == '\r' || h[i] == '\t'))
		i++;
	if (i >= n || h[i] != '{' || !has(h, n, "\"schemaVersion\""))
		return 0;
	return has(h, n, "\"" MEDIA) ? 48 : 0;
}

static const char *str_of(const struct mfs_json *j, uint32_t obj, const char *key, size_t *len)
{
	uint32_t v = obj == MFS_JSON_NIL ? MFS_JSON_NIL : mfs_json_member(j, obj, key);
	if (v == MFS_JSON_NIL || j->v[v].type != MFS_JSON_STR)
		return NULL;
	*len = mfs_json_textlen(j, v);
	return mfs_json_text(j, v);
}

/* "sha256:<64 lower-case hex>": the blob's name sha256-<hex> into out. */
static bool blob_name(const char *d, size_t n, char out[DIGEST_LEN + 1])
{
	if (n != DIGEST_LEN || memcmp(d, "sha256:", 7) != 0)
		return false;
	for (size_t i = 7; i < n; i++)
		if (!((d[i] >= '0' && d[i] <= '9') || (d[i] >= 'a' && d[i] <= 'f')))
			return false;
	memcpy(out, d, n);
	out[6] = '-';
	out[n] = '\0';
	return true;
}

/* A link name for a layer: its media type after MEDIA (model, projector,
 * template, ...), or NULL for another kind. */
static const char *kind_of(const char *mt, size_t n, size_t *klen)
{
	size_t p = strlen(MEDIA);
	if (n <= p || memcmp(mt, MEDIA, p) != 0)
		return NULL;
	*klen = n - p;
	return mt + p;
}

/* One layer (or the config): its link, and its line in `layers`. */
static int add_layer(struct mfs_model *m, const struct mfs_json *j, uint32_t o, bool config,
		     char *lines, size_t *used, size_t cap, struct mfs_err *err)
{
	size_t mlen = 0, dlen = 0, klen = 0;
	const char *mt = str_of(j, o, "mediaType", &mlen), *dg = str_of(j, o, "digest", &dlen);
	uint32_t sz = mfs_json_member(j, o, "size");
	char blob[DIGEST_LEN + 1], target[sizeof(TO_STORE) + DIGEST_LEN];
	if (!mt || !dg || !blob_name(dg, dlen, blob))
		return mfs_error(err, EINVAL, "a layer without a media type or a sha256 digest");
	const char *kind = config ? "config" : kind_of(mt, mlen, &klen);
	if (config)
		klen = 6;
	if (kind) {
		int t = snprintf(target, sizeof(target), TO_STORE "%s", blob);
		mfs_add_link_text(m, MFS_ROOT, kind, klen, target, (size_t)t);
	}
	if (config)
		return 0;  /* `layers` lists the layers only */
	const char *size = sz == MFS_JSON_NIL || j->v[sz].type != MFS_JSON_NUM ? "-"
			   : (const char *)m->base + j->v[sz].at;
	size_t slen = sz == MFS_JSON_NIL || j->v[sz].type != MFS_JSON_NUM ? 1 : j->v[sz].span;
	int w = snprintf(lines + *used, cap - *used, "%.*s\t%.*s\t%.*s\n", (int)mlen, mt, (int)dlen,
			 dg, (int)slen, size);
	if (w < 0 || (size_t)w >= cap - *used)
		return mfs_error(err, EINVAL, "too many layers");
	*used += (size_t)w;
	return 0;
}

static int ollama_open(struct mfs_model *m, struct mfs_err *err)
{
	struct mfs_json j = {0};
	if (mfs_json_parse(&j, m->base, (size_t)m->size) < 0) {
		int r = mfs_error(err, j.oom ? ENOMEM : EINVAL, "not a manifest: %s", j.err);
		mfs_json_free(&j);
		return r;
	}
	int r = 0;
	uint32_t ver = j.v[0].type == MFS_JSON_OBJ ? mfs_json_member(&j, 0, "schemaVersion")
						    : MFS_JSON_NIL;
	uint32_t cfg = ver == MFS_JSON_NIL ? MFS_JSON_NIL : mfs_json_member(&j, 0, "config");
	uint32_t lay = ver == MFS_JSON_NIL ? MFS_JSON_NIL : mfs_json_member(&j, 0, "layers");
	if (ver == MFS_JSON_NIL || j.v[ver].span != 1 || m->base[j.v[ver].at] != '2')
		r = mfs_error(err, EINVAL, "not a manifest of schemaVersion 2");
	else if (lay == MFS_JSON_NIL || j.v[lay].type != MFS_JSON_ARR)
		r = mfs_error(err, EINVAL, "a manifest without layers");
	/* A line is at most a media type, a digest and a size: bounded by
	 * the manifest's own bytes. */
	size_t cap = (size_t)m->size + 64, used = 0;
	char *lines = r == 0 && mfs_model_charge(m, (int64_t)cap) ? malloc(cap) : NULL;
	if (r == 0 && !lines)
		r = mfs_error(err, ENOMEM, "out of memory");
	if (r == 0 && cfg != MFS_JSON_NIL && j.v[cfg].type == MFS_JSON_OBJ)
		r = add_layer(m, &j, cfg, true, lines, &used, cap, err);
	for (uint32_t c = r == 0 ? j.v[lay].first : MFS_JSON_NIL; c != MFS_JSON_NIL && r == 0;
	     c = j.v[c].next)
		r = j.v[c].type == MFS_JSON_OBJ ? add_layer(m, &j, c, false, lines, &used, cap, err)
						: mfs_error(err, EINVAL, "a layer that is not an object");
	if (r == 0 && used)
		mfs_add_text(m, MFS_ROOT, "layers", 6, lines, used - 1, 0);
	if (lines) {
		free(lines);
		mfs_model_charge(m, -(int64_t)cap);
	}
	mfs_json_free(&j);
	return r;
}

const struct mfs_codec mfs_codec_ollama = {
	.name = "ollama",
	.title = "Ollama manifests",
	.sidecar = NULL,
	.bid = ollama_bid,
	.open = ollama_open,
	.close = NULL,
	.edit = NULL,
};
