/* The .meta sidecar of a .dbdf file, read and written with the core's JSON
 * (json.h: strict, bounded depth; hand-written pretty-printed files read
 * fine) in the form DAPHNE's writer gives it (nlohmann::json::dump():
 * compact, keys sorted, no newline). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daphne.h"
#include "json.h"

#define NIL MFS_JSON_NIL

/* Parse a sidecar, whose top level must be an object; 0 or -1 (j->err). */
static int jparse(struct mfs_json *j, const uint8_t *src, size_t len)
{
	if (mfs_json_parse(j, src, len) < 0)
		return -1;
	if (j->v[0].type != MFS_JSON_OBJ) {
		snprintf(j->err, sizeof(j->err), "the top level is not an object");
		return -1;
	}
	return 0;
}

struct daphne_label *daphne_meta_labels(struct mfs_model *m, uint64_t ncols)
{
	struct mfs_json j = {0};
	struct daphne_label *out = NULL;
	if (!m->has_sidecar || jparse(&j, m->sidecar, m->sidecar_len) < 0)
		goto done;
	uint32_t schema = mfs_json_member(&j, 0, "schema");
	if (schema == NIL || j.v[schema].type != MFS_JSON_ARR || j.v[schema].count != ncols)
		goto done;
	out = mfs_model_alloc(m, (size_t)(ncols ? ncols : 1) * sizeof(*out));
	if (!out)
		goto done;
	uint64_t i = 0;
	for (uint32_t c = j.v[schema].first; c != NIL; c = j.v[c].next, i++) {
		out[i] = (struct daphne_label){NULL, 0};
		uint32_t l = j.v[c].type == MFS_JSON_OBJ ? mfs_json_member(&j, c, "label") : NIL;
		if (l != NIL && j.v[l].type == MFS_JSON_STR) {
			out[i].s = mfs_model_strdup(m, mfs_json_text(&j, l), mfs_json_textlen(&j, l));
			out[i].len = mfs_json_textlen(&j, l);
		}
	}
done:
	mfs_json_free(&j);
	return out;
}

void daphne_meta_check(struct mfs_model *m, uint64_t rows, uint64_t cols)
{
	struct mfs_json j = {0};
	if (!m->has_sidecar)
		return;
	if (jparse(&j, m->sidecar, m->sidecar_len) < 0) {
		mfs_model_note(m, "%s%s: %s; ignored", m->name,
			       m->codec->sidecar, j.err);
		mfs_json_free(&j);
		return;
	}
	static const char *const keys[2] = {"numRows", "numCols"};
	const uint64_t want[2] = {rows, cols};
	for (int k = 0; k < 2; k++) {
		uint32_t c = mfs_json_member(&j, 0, keys[k]);
		if (c == NIL)
			continue;
		char num[24];
		int l = snprintf(num, sizeof(num), "%llu", (unsigned long long)want[k]);
		uint8_t type = j.v[c].type;
		if (type != MFS_JSON_NUM || mfs_json_textlen(&j, c) != (size_t)l ||
		    memcmp(mfs_json_text(&j, c), num, (size_t)l) != 0) {
			char q[MFS_QUOTE_MAX];
			mfs_model_note(m, "%s%s: %s is %s, expected %s (the file's)",
				       m->name, m->codec->sidecar, keys[k],
				       type == MFS_JSON_NUM || type == MFS_JSON_STR
					       ? mfs_quote(q, mfs_json_text(&j, c), mfs_json_textlen(&j, c))
					       : "not a number", num);
			break;
		}
	}
	mfs_json_free(&j);
}

bool daphne_meta_has(const uint8_t *side, size_t len, const char *key)
{
	struct mfs_json j = {0};
	bool has = false;
	if (side && jparse(&j, side, len) == 0) {
		uint32_t c = mfs_json_member(&j, 0, key);
		has = c != NIL && j.v[c].type == MFS_JSON_NUM;
	}
	mfs_json_free(&j);
	return has;
}

int daphne_meta_rewrite(const uint8_t *side, size_t len, const struct daphne_meta_set *set,
			uint8_t **out, size_t *outlen, struct mfs_err *err)
{
	struct mfs_json j;
	if (jparse(&j, side, len) < 0) {
		int r = mfs_error(err, EINVAL, "the .meta sidecar is not valid JSON (%s), so it cannot be kept in step",
				  j.err);
		mfs_json_free(&j);
		return r;
	}
	if ((set->set_rows && mfs_json_set_number(&j, 0, "numRows", set->rows) < 0) ||
	    (set->set_cols && mfs_json_set_number(&j, 0, "numCols", set->cols) < 0) ||
	    (set->set_nnz && mfs_json_set_number(&j, 0, "numNonZeros", set->nnz) < 0)) {
		mfs_json_free(&j);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	struct mfs_buf o = {0};
	int r = mfs_json_dump_sorted(&j, 0, &o);
	mfs_json_free(&j);
	if (r < 0) {
		mfs_buf_free(&o);
		return mfs_error(err, ENOMEM, "out of memory");
	}
	*out = (uint8_t *)o.p;
	*outlen = o.len;
	return 0;
}
