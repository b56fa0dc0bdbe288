/* Helpers shared by the PLearn tests (see test_plearn.h). */
#include "test_plearn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"

const char *const plt_corpus[] = {
	"plearn/psave/learners/AdaBoost.final_learner.psave",
	"plearn/psave/learners/BestAveragingPLearner_NNet.final_learner.psave",
	"plearn/psave/learners/ConstantRegressor.final_learner.psave",
	"plearn/psave/learners/DeepBeliefNet_minibatch.final_learner.psave",
	"plearn/psave/learners/GaussMix_diagonal.final_learner.psave",
	"plearn/psave/learners/GaussMix_general.final_learner.psave",
	"plearn/psave/learners/GaussMix_general_missing.final_learner.psave",
	"plearn/psave/learners/HyperLearner_DBN.final_learner.psave",
	"plearn/psave/learners/KernelRidgeRegressor.final_learner.psave",
	"plearn/psave/learners/LinearRegressor.final_learner.psave",
	"plearn/psave/learners/LinearRegressor.no_pointer_prefix.psave",
	"plearn/psave/learners/ModuleLearner_Greedy.final_learner.psave",
	"plearn/psave/learners/ModuleLearner_TwoRBMs.final_learner.psave",
	"plearn/psave/learners/NNet.final_learner.psave",
	"plearn/psave/learners/ParzenWindow.final_learner.psave",
	"plearn/psave/learners/StackedLearner_PCA.final_learner.psave",
	"plearn/psave/stats/VecStatsCollector.train_stats.psave",
	"plearn/psave/stats/poly2.amat.metadata.stats.psave",
	"plearn/psave/testers/PTester_LinearRegressor_oldstyle.tester.psave",
	"plearn/psave/tests/PLMathTest.psave",
	"plearn/psave/tests/PLStringutilsTest.psave",
	"plearn/psave/tests/VariablesTest.psave",
	"plearn/plearn/ChainedLearners_unsized_list.plearn",
	"plearn/plearn/LinearRegressor_with_comments.plearn",
	"plearn/plearn/linreg_minimal.plearn",
	"plearn/pmat/ConstantRegressor.test1_costs.pmat",
	"plearn/pmat/FileVMatrix_fvm1_with_nan.pmat",
	"plearn/pmat/LinearRegressor.test1_costs.pmat",
	"plearn/pmat/LinearRegressor.test1_outputs.pmat",
	"plearn/pmat/linear_4x_2y.pmat",
	"plearn/pmat/pyplot_data.pmat",
	"plearn/amat/1d_reg.amat",
	"plearn/amat/data2d_oldstyle_header.amat",
	"plearn/amat/linear_4x_2y.amat",
	"plearn/amat/linear_4x_2y.written_by_plearn.amat",
};
const size_t plt_ncorpus = sizeof(plt_corpus) / sizeof(plt_corpus[0]);

size_t plt_reencode_all(struct mfs_model *m)
{
	for (uint32_t i = 0; i < m->ntensors; i++) {
		const struct mfs_tensor *t = &m->tensors[i];
		size_t bytes = (size_t)(t->nelem * t->esize);
		uint8_t *cur = malloc(bytes + 1);
		assert_non_null(cur);
		struct mfs_err err = {0};
		if (t->ops) {
			if (t->ops->read(m, t, 0, t->nelem, cur, &err) < 0)
				fail_msg("read tensor %u of %s: %s", i, m->name, err.msg);
		} else {
			memcpy(cur, m->base + t->off, bytes);
			if (t->swap)
				mfs_swap_elems(cur, bytes / t->swap, t->swap);
		}
		struct mfs_run run = {0, t->nelem, cur};
		struct mfs_edit e = {
			.kind = MFS_E_TENSOR,
			.node = t->dir,
			.tensor = i,
			.reshape = true,
			.dtype = (enum mfs_dtype)t->dtype,
			.ndim = t->ndim,
			.dims = t->dims,
			.runs = &run,
			.nruns = t->nelem ? 1 : 0,
		};
		struct mfs_patch p;
		mfs_patch_init(&p);
		int r = m->codec->edit(m, &e, &p, &err);
		if (r < 0)
			fail_msg("re-encode tensor %u of %s: %s", i, m->name, err.msg);
		/* Each span may only rewrite bytes with themselves. */
		for (size_t k = 0; k < p.n; k++) {
			const struct mfs_span *s = &p.spans[k];
			if (s->len != s->dlen || s->off + s->len > m->size ||
			    memcmp(m->base + s->off, s->data, (size_t)s->len) != 0)
				fail_msg("re-encoding tensor %u of %s changes bytes at %llu", i, m->name,
					 (unsigned long long)s->off);
		}
		if (p.n && mfs_patch_sort(&p, &err) < 0)
			fail_msg("re-encode tensor %u of %s: %s", i, m->name, err.msg);
		size_t outlen;
		uint8_t *out = tapply(&p, m->base, (size_t)m->size, &outlen);
		if (outlen != m->size || memcmp(out, m->base, outlen) != 0) {
			char path[512];
			mfs_node_path(m, t->dir, path, sizeof(path));
			fail_msg("re-encoding %s of %s changes the file", path, m->name);
		}
		free(out);
		mfs_patch_free(&p);
		free(cur);
	}
	return m->ntensors;
}

size_t plt_find(const uint8_t *hay, size_t n, const char *needle)
{
	const void *p = memmem(hay, n, needle, strlen(needle));
	if (!p)
		fail_msg("\"%s\" not found", needle);
	return (size_t)((const uint8_t *)p - hay);
}

uint8_t *plt_write(struct mfs_model *m, const char *path, const void *content, size_t len,
		   size_t *outlen)
{
	uint8_t *out = NULL;
	struct mfs_err err = {0};
	int r = twrite(m, path, content, len, &out, outlen, &err);
	if (r != 0)
		fail_msg("write %s of %s: %d (%s)", path, m->name, r, err.msg);
	return out;
}

uint8_t *plt_write_str(struct mfs_model *m, const char *path, const char *s, size_t *outlen)
{
	return plt_write(m, path, s, strlen(s), outlen);
}

void plt_write_fails(struct mfs_model *m, const char *path, const void *content, size_t len,
		     int code)
{
	uint8_t *out = NULL;
	size_t outlen;
	struct mfs_err err = {0};
	int r = twrite(m, path, content, len, &out, &outlen, &err);
	if (r != code) {
		free(out);
		fail_msg("write \"%.*s\" to %s: %d (%s), expected %d", (int)(len < 80 ? len : 80),
			 (const char *)content, path, r, err.msg, code);
	}
	if (!err.msg[0])
		fail_msg("write to %s refused without a message", path);
}

void plt_write_same(struct mfs_model *m, const char *path, const char *s)
{
	uint8_t *out = NULL;
	size_t outlen;
	struct mfs_err err = {0};
	int r = twrite(m, path, s, strlen(s), &out, &outlen, &err);
	if (r != 1) {
		free(out);
		fail_msg("write \"%s\" to %s: %d (%s), expected no change", s, path, r, err.msg);
	}
}

size_t plt_npy_f64(uint8_t *buf, size_t cap, const uint64_t *dims, uint32_t ndim,
		   const double *vals)
{
	char hdr[256], shape[128] = "";
	size_t sl = 0;
	uint64_t n = 1;
	for (uint32_t i = 0; i < ndim; i++) {
		sl += (size_t)snprintf(shape + sl, sizeof(shape) - sl, "%llu,%s",
				       (unsigned long long)dims[i], i + 1 < ndim ? " " : "");
		n *= dims[i];
	}
	if (ndim > 1)
		shape[sl - 1] = '\0';
	int hl = snprintf(hdr, sizeof(hdr), "{'descr': '<f8', 'fortran_order': False, 'shape': (%s), }",
			  shape);
	size_t total = 10 + (size_t)hl + 1;
	size_t pad = (64 - total % 64) % 64;
	size_t hlen = (size_t)hl + pad + 1;
	assert_true(10 + hlen + n * 8 <= cap);
	memcpy(buf, "\x93NUMPY\x01\x00", 8);
	buf[8] = (uint8_t)(hlen & 0xff);
	buf[9] = (uint8_t)(hlen >> 8);
	memcpy(buf + 10, hdr, (size_t)hl);
	memset(buf + 10 + hl, ' ', pad);
	buf[10 + hlen - 1] = '\n';
	for (uint64_t i = 0; i < n; i++) {
		uint64_t bits;
		memcpy(&bits, &vals[i], 8);
		mfs_put_le64(buf + 10 + hlen + 8 * i, bits);
	}
	return 10 + hlen + (size_t)n * 8;
}

/* ---- plearn_binary builder ------------------------------------------------ */

void pb_raw(struct pb *p, const void *s, size_t n)
{
	tappend(&p->b, &p->n, &p->cap, s, n);
}

void pb_str(struct pb *p, const char *s)
{
	pb_raw(p, s, strlen(s));
}

uint8_t pb_code(const struct pb *p, uint8_t le_code)
{
	static const uint8_t be[256] = {
		[0x01] = 0x01, [0x02] = 0x02, [0x03] = 0x04, [0x05] = 0x06, [0x07] = 0x08,
		[0x0B] = 0x0C, [0x0E] = 0x0F, [0x10] = 0x11, [0x16] = 0x17, [0x18] = 0x19,
		[0x30] = 0x30, [0xFF] = 0xFF, [0xFE] = 0xFE,
	};
	return p->be ? be[le_code] : le_code;
}

static void put_num(struct pb *p, uint64_t bits, unsigned size)
{
	uint8_t b[8];
	for (unsigned i = 0; i < size; i++)
		b[p->be ? size - 1 - i : i] = (uint8_t)(bits >> (8 * i));
	pb_raw(p, b, size);
}

void pb_int(struct pb *p, int32_t v)
{
	uint8_t c = pb_code(p, 0x07);
	pb_raw(p, &c, 1);
	put_num(p, (uint32_t)v, 4);
}

void pb_i64(struct pb *p, int64_t v)
{
	uint8_t c = pb_code(p, 0x16);
	pb_raw(p, &c, 1);
	put_num(p, (uint64_t)v, 8);
}

void pb_double(struct pb *p, double v)
{
	uint64_t bits;
	memcpy(&bits, &v, 8);
	uint8_t c = pb_code(p, 0x10);
	pb_raw(p, &c, 1);
	put_num(p, bits, 8);
}

void pb_float(struct pb *p, float v)
{
	uint32_t bits;
	memcpy(&bits, &v, 4);
	uint8_t c = pb_code(p, 0x0E);
	pb_raw(p, &c, 1);
	put_num(p, bits, 4);
}

void pb_def(struct pb *p, int32_t id)
{
	pb_str(p, "*");
	pb_int(p, id);
	pb_str(p, "->");
}

void pb_ref(struct pb *p, int32_t id)
{
	pb_str(p, "*");
	pb_int(p, id);
	pb_str(p, " ");
}

void pb_seq(struct pb *p, uint8_t le_code, uint32_t len)
{
	uint8_t h[2] = {p->be ? 0x13 : 0x12, pb_code(p, le_code)};
	pb_raw(p, h, 2);
	put_num(p, len, 4);
}

void pb_mat(struct pb *p, uint8_t le_code, int32_t l, int32_t w)
{
	uint8_t h[2] = {p->be ? 0x15 : 0x14, pb_code(p, le_code)};
	pb_raw(p, h, 2);
	put_num(p, (uint32_t)l, 4);
	put_num(p, (uint32_t)w, 4);
}

void pb_f64s(struct pb *p, const double *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t bits;
		memcpy(&bits, &v[i], 8);
		put_num(p, bits, 8);
	}
}

void pb_i32s(struct pb *p, const int32_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_num(p, (uint32_t)v[i], 4);
}
