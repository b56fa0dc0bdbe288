/* Unit tests of the PLearn codec over the real corpus: every file opens
 * with the tree docs/layout.md describes and the values its MANIFEST lists, and
 * round-trips byte for byte (views written back, tensors re-encoded). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "test_plearn.h"

/* Line idx of a file (the last one when idx < 0), without its newline. */
static char *line(struct mfs_model *m, const char *path, int idx)
{
	size_t len;
	char *s = tread(m, path, &len);
	int n = 0;
	for (size_t i = 0; i < len; i++)
		n += s[i] == '\n';
	if (idx < 0)
		idx = n + idx;
	char *p = s;
	for (int i = 0; i < idx; i++) {
		p = strchr(p, '\n');
		assert_non_null(p);
		p++;
	}
	char *e = strchr(p, '\n');
	size_t l = e ? (size_t)(e - p) : strlen(p);
	char *out = malloc(l + 1);
	assert_non_null(out);
	memcpy(out, p, l);
	out[l] = '\0';
	free(s);
	return out;
}

static void check_line(struct mfs_model *m, const char *path, int idx, const char *expect)
{
	char *l = line(m, path, idx);
	if (strcmp(l, expect) != 0)
		fail_msg("%s of %s line %d:\n  got    \"%s\"\n  expect \"%s\"", path, m->name, idx, l,
			 expect);
	free(l);
}

static void check_list(struct mfs_model *m, const char *path, const char *expect)
{
	char *l = tlist(m, path);
	if (strcmp(l, expect) != 0)
		fail_msg("listing %s of %s:\n  got    \"%s\"\n  expect \"%s\"", path, m->name, l, expect);
	free(l);
}

/* The text starts with prefix. */
static void check_prefix(struct mfs_model *m, const char *path, const char *prefix)
{
	size_t len;
	char *s = tread(m, path, &len);
	if (len < strlen(prefix) || memcmp(s, prefix, strlen(prefix)) != 0)
		fail_msg("%s of %s:\n  got    \"%.80s\"\n  expect \"%s...\"", path, m->name, s, prefix);
	free(s);
}

static void check_contains(struct mfs_model *m, const char *path, const char *needle)
{
	size_t len;
	char *s = tread(m, path, &len);
	if (!memmem(s, len, needle, strlen(needle)))
		fail_msg("%s of %s does not contain \"%s\"", path, m->name, needle);
	free(s);
}

static void check_link(struct mfs_model *m, const char *path, const char *target)
{
	mfs_id id = tnode(m, path);
	char t[4096];
	assert_int_equal(m->nodes[id].kind, MFS_K_LINK);
	assert_true(mfs_link_target(m, id, t, sizeof(t)) >= 0);
	if (strcmp(t, target) != 0)
		fail_msg("link %s of %s: got \"%s\", expect \"%s\"", path, m->name, t, target);
}

/* The first 8 bytes of a float64 `data` view hold v. */
static void check_data0(struct mfs_model *m, const char *path, double v)
{
	size_t len;
	char *d = tread(m, path, &len);
	assert_true(len >= 8);
	uint64_t bits, want;
	bits = mfs_le64(d);
	memcpy(&want, &v, 8);
	assert_int_equal(bits, want);
	free(d);
}

static size_t count_links(const struct mfs_model *m)
{
	size_t n = 0;
	for (mfs_id i = 0; i < m->nnodes; i++)
		n += m->nodes[i].kind == MFS_K_LINK;
	return n;
}

static const char tensor_views[] = "shape dtype values.txt data data.npy";

static void test_linear_regressor(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/LinearRegressor.final_learner.psave");
	check_list(m, "", "class include_bias cholesky weight_decay output_learned_weights weights AIC "
		   "BIC resid_variance random_gen stage n_examples inputsize targetsize weightsize "
		   "forget_when_training_set_changes nstages report_progress verbosity nservers "
		   "save_trainingset_prefix test_minibatch_size "
		   "use_a_separate_random_generator_for_testing encoding");
	tcheck(m, "class", "LinearRegressor\n");
	tcheck(m, "encoding", "ascii\n");
	check_list(m, "weights", tensor_views);
	tcheck(m, "weights/shape", "3 2\n");
	tcheck(m, "weights/dtype", "float64\n");
	tcheck(m, "weights/values.txt", "5.673646409480401 9.88961990926601\n"
					"10.782982211875417 17.900656890875144\n"
					"99.76151962528407 47.687964753081914\n");
	check_data0(m, "weights/data", 5.67364640948040133);
	tcheck(m, "AIC", "6.23533365254733773\n");
	tcheck(m, "resid_variance/shape", "2\n");
	tcheck(m, "resid_variance/values.txt", "22.671118781182813\n458.1697397251787\n");
	tcheck(m, "random_gen", "*0\n");
	tcheck(m, "n_examples", "150\n");
	tcheck(m, "save_trainingset_prefix", "\"\"\n");
	tcheck(m, "use_a_separate_random_generator_for_testing", "1827\n");
	size_t len;
	char *npy = tread(m, "weights/data.npy", &len);
	assert_memory_equal(npy, "\x93NUMPY", 6);
	assert_true(len >= 48 + 10);
	uint64_t last = mfs_le64(npy + len - 8);
	double v = 47.6879647530819142;
	assert_memory_equal(&last, &v, 8);
	free(npy);
	tclose(m);
}

static void test_no_pointer_prefix(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/LinearRegressor.no_pointer_prefix.psave");
	tcheck(m, "class", "LinearRegressor\n");
	tcheck(m, "weights/shape", "5 1\n");
	check_line(m, "weights/values.txt", 0, "2.1960427386808896");
	check_line(m, "weights/values.txt", 1, "-1.0415408968918314");
	tcheck(m, "resid_variance/values.txt", "-3.918103175237775e-09\n");
	tcheck(m, "AIC", "-16.4363107085968032\n");
	tclose(m);
}

static void test_nnet(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/NNet.final_learner.psave");
	tcheck(m, "class", "NNet\n");
	tcheck(m, "paramsvalues/shape", "384\n");
	check_line(m, "paramsvalues/values.txt", 0, "0.01536044891306461");
	check_line(m, "paramsvalues/values.txt", -1, "0.6982488604617534");
	tcheck(m, "optimizer/class", "GradientOptimizer\n");
	tcheck(m, "optimizer/lr_schedule/shape", "0 0\n");
	tcheck(m, "optimizer/lr_schedule/values.txt", "");
	tcheck(m, "random_gen/class", "PRandom\n");
	tcheck(m, "random_gen/seed", "1827\n");
	tcheck(m, "cost_funcs", "1 [ \"NLL\" ]\n");
	tcheck(m, "first_hidden_layer", "*0\n");
	tclose(m);
}

static void test_module_learner(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/ModuleLearner_TwoRBMs.final_learner.psave");
	tcheck(m, "class", "ModuleLearner\n");
	tcheck(m, "module/class", "NetworkModule\n");
	check_list(m, "module/modules", "0 1 2 3 4 5 6 7");
	tcheck(m, "module/modules/0/class", "RBMModule\n");
	tcheck(m, "module/modules/0/connection/class", "RBMMatrixConnection\n");
	tcheck(m, "module/modules/0/connection/weights/shape", "10 5\n");
	char *l = line(m, "module/modules/0/connection/weights/values.txt", 0);
	assert_memory_equal(l, "-0.2503302921636112 ", 20);
	free(l);
	/* *5 is defined in the visible layer, referenced after it. */
	tcheck(m, "module/modules/0/visible_layer/random_gen/class", "PRandom\n");
	check_link(m, "module/modules/0/hidden_layer/random_gen", "../visible_layer/random_gen");
	check_link(m, "module/modules/0/connection/random_gen", "../visible_layer/random_gen");
	assert_int_equal(count_links(m), 15);
	check_prefix(m, "module/ports", "8 [ (\"input\" , \"rbm_1.visible\" )(\"\" , \"nll.target\" )");
	tcheck(m, "cost_ports", "3 [ \"NLL\" \"class_error\" \"mse\" ]\n");
	tcheck(m, "weight_ports/shape", "0\n");
	tclose(m);
}

static void test_module_learner_greedy(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/ModuleLearner_Greedy.final_learner.psave");
	tcheck(m, "class", "HyperLearner\n");
	tcheck(m, "tester/learner/class", "ModuleLearner\n");
	check_link(m, "learner", "tester/learner");
	tcheck(m, "strategy/0/class", "HyperSetOption\n");
	check_contains(m, "strategy/4/options", "(\"cost_ports\" , \"[ \\\"NLL\\\" ]\" )");
	tclose(m);
}

static void test_dbn(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/DeepBeliefNet_minibatch.final_learner.psave");
	tcheck(m, "class", "DeepBeliefNet\n");
	tcheck(m, "connections/0/class", "RBMMatrixConnection\n");
	tcheck(m, "connections/0/weights/shape", "100 2\n");
	check_line(m, "connections/0/weights/values.txt", 0, "1.2985731885522456 1.36455047376715");
	tcheck(m, "final_module/modules/0/weights/shape", "2 100\n");
	check_prefix(m, "final_module/modules/0/weights/values.txt", "0.053625869742823656 ");
	check_link(m, "random_gen", "layers/0/random_gen");
	tclose(m);
}

static void test_hyper_learner(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/HyperLearner_DBN.final_learner.psave");
	tcheck(m, "class", "HyperLearner\n");
	/* learner = *5 ->DeepBeliefNet( first, learner = *5 later: links. */
	tcheck(m, "tester/learner/class", "DeepBeliefNet\n");
	check_link(m, "learner", "tester/learner");
	check_link(m, "strategy/0/best_learner", "../../tester/learner");
	tcheck(m, "strategy/0/class", "HyperOptimize\n");
	tcheck(m, "strategy/0/best_objective", "0.614096318051678636\n");
	tcheck(m, "tester/dataset/data/shape", "2 3\n");
	/* A matrix of pairs is a text file. */
	tcheck(m, "tester/splitter/splits", "1  2  [ \n(0 , 1 )\t(0 , 1 )\t\n]\n");
	tclose(m);
}

static void test_gaussmix(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/GaussMix_diagonal.final_learner.psave");
	tcheck(m, "alpha/shape", "5\n");
	check_line(m, "alpha/values.txt", 0, "0.38639999073242204");
	tcheck(m, "center/shape", "5 4\n");
	check_prefix(m, "center/values.txt", "-0.05910047332452727 ");
	tcheck(m, "diags/shape", "5 4\n");
	check_prefix(m, "diags/values.txt", "0.8059108228591957 ");
	tcheck(m, "sigma/shape", "0\n");
	tcheck(m, "sigma/values.txt", "");
	tcheck(m, "eigenvectors/shape", "0\n");
	tcheck(m, "eigenvalues/shape", "0 0\n");
	tcheck(m, "predictor_part/values.txt", "0\n0\n");
	tcheck(m, "type", "\"diagonal\"\n");
	tclose(m);

	m = topen("plearn/psave/learners/GaussMix_general.final_learner.psave");
	tcheck(m, "eigenvalues/shape", "5 3\n");
	check_prefix(m, "eigenvalues/values.txt", "2536.591144516139 ");
	check_list(m, "eigenvectors", "0 1 2 3 4");
	tcheck(m, "eigenvectors/0/shape", "3 4\n");
	check_prefix(m, "eigenvectors/0/values.txt", "0.0009486648273780559 ");
	tcheck(m, "center/shape", "5 4\n");
	tclose(m);

	m = topen("plearn/psave/learners/GaussMix_general_missing.final_learner.psave");
	tcheck(m, "sigma/shape", "0\n");
	check_list(m, "eigenvectors", "0");
	tcheck(m, "eigenvectors/0/shape", "4 4\n");
	tcheck(m, "eigenvalues/shape", "1 4\n");
	check_prefix(m, "eigenvalues/values.txt", "13661.891009168201 ");
	tclose(m);
}

static void test_kernel_ridge(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/KernelRidgeRegressor.final_learner.psave");
	tcheck(m, "kernel/class", "GaussianKernel\n");
	tcheck(m, "params/shape", "225 2\n");
	check_line(m, "params/values.txt", 0, "1366617.6428814242 -6185966.429741493");
	tcheck(m, "training_inputs/class", "MemoryVMatrix\n");
	tcheck(m, "training_inputs/data/shape", "225 1\n");
	check_line(m, "training_inputs/data/values.txt", 0, "6.47353946821334");
	tclose(m);
}

static void test_stacked_adaboost(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/StackedLearner_PCA.final_learner.psave");
	check_list(m, "base_learners", "0");
	tcheck(m, "base_learners/0/class", "PCA\n");
	tcheck(m, "base_learners/0/eigenvecs/shape", "2 4\n");
	tcheck(m, "combiner/class", "LinearRegressor\n");
	tcheck(m, "combiner/weights/shape", "3 2\n");
	check_prefix(m, "combiner/weights/values.txt", "16.006906133333352 ");
	tclose(m);

	m = topen("plearn/psave/learners/AdaBoost.final_learner.psave");
	tcheck(m, "class", "HyperLearner\n");
	tcheck(m, "tester/learner/class", "AdaBoost\n");
	check_list(m, "tester/learner/weak_learners", "0 1 2 3 4");
	tcheck(m, "tester/learner/weak_learners/0/class", "RegressionTree\n");
	tcheck(m, "tester/learner/voting_weights/shape", "5\n");
	check_line(m, "tester/learner/voting_weights/values.txt", 0, "1.1367987780603979");
	tcheck(m, "tester/dataset/class", "MemoryVMatrix\n");
	tcheck(m, "tester/dataset/data/shape", "200 6\n");
	tcheck(m, "tester/dataset/fieldinfos",
	       "6 [ \"x1\" 0 \"x2\" 0 \"x3\" 0 \"x4\" 0 \"y1\" 0 \"target\" 0 ]\n");
	check_link(m, "learner", "tester/learner");
	assert_int_equal(count_links(m), 7);
	tclose(m);

	m = topen("plearn/psave/learners/ConstantRegressor.final_learner.psave");
	tcheck(m, "constant_output/shape", "1\n");
	tcheck(m, "constant_output/values.txt", "10.23882762939765\n");
	tcheck(m, "save_trainingset_prefix", "\"\"\n");
	tclose(m);

	m = topen("plearn/psave/learners/BestAveragingPLearner_NNet.final_learner.psave");
	check_list(m, "learner_set", "0 1 2 3 4");
	tcheck(m, "learner_set/0/class", "NNet\n");
	tcheck(m, "learner_set/0/optimizer/class", "GradientOptimizer\n");
	tclose(m);
}

static void test_parzen(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/learners/ParzenWindow.final_learner.psave");
	tcheck(m, "alpha/shape", "150\n");
	check_line(m, "alpha/values.txt", 0, "0.00666666666666667");
	tcheck(m, "center/shape", "150 4\n");
	check_line(m, "center/values.txt", 0, "0.6628 1.0628 117.1038 46.5579");
	tclose(m);
}

static void test_tester_and_stats(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/testers/PTester_LinearRegressor_oldstyle.tester.psave");
	tcheck(m, "class", "PTester\n");
	tcheck(m, "dataset/class", "AutoVMatrix\n");
	tcheck(m, "dataset/specification", "\"data.amat\"\n");
	tcheck(m, "splitter/splits", "1  2  [ \n0 : 0.75  \t0.75 : 1  \t\n]\n");
	tcheck(m, "statmask/shape", "0\n");
	tcheck(m, "learner/AIC", "nan\n");
	tcheck(m, "learner/weights/shape", "0 0\n");
	tcheck(m, "learner/resid_variance/shape", "0\n");
	tcheck(m, "template_stats_collector", "*0\n");
	tclose(m);

	m = topen("plearn/psave/stats/VecStatsCollector.train_stats.psave");
	tcheck(m, "fieldnames", "1 [ \"mse\" ]\n");
	check_list(m, "stats", "0");
	tcheck(m, "stats/0/class", "StatsCollector\n");
	tcheck(m, "stats/0/nnonmissing_", "98\n");
	tcheck(m, "stats/0/sum_", "2288.14624163606777\n");
	check_prefix(m, "stats/0/counts", "{0 : 1 0 0 0 1 , 0.0436211272393489807 : 1 1 ");
	tcheck(m, "cov/shape", "0 0\n");
	tclose(m);

	m = topen("plearn/psave/stats/poly2.amat.metadata.stats.psave");
	check_list(m, "", "0 1 encoding");
	tcheck(m, "0/class", "StatsCollector\n");
	tcheck(m, "0/sum_", "10.107999999999997\n");
	check_contains(m, "0/counts", ", 3.4028234663852886e+38 : 0 0 0 0 0 }\n");
	tcheck(m, "1/sum_", "-0.643999999999998241\n");
	tclose(m);
}

static void test_tests(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/psave/tests/PLMathTest.psave");
	check_prefix(m, "results", "{\"DOUBLE_TO_INT\" : 86 [ 0 0 1 0 0 1 1 -1 ");
	check_contains(m, "results", " 0 1 -1 nan inf -inf ] , \"dilogarithm\" : ");
	tclose(m);

	m = topen("plearn/psave/tests/VariablesTest.psave");
	check_prefix(m, "results_mat", "{\"logadd_binary\" : 3  5  [ \n0.689299342300172868 \t");
	check_contains(m, "results_mat", ", \"logadd_per_column\" : 1  5  [ ");
	check_contains(m, "results_mat", "\"unfolded_argmin\" : 3  1  [ \n3 \t\n2 \t\n4 \t\n]\n}\n");
	tcheck(m, "save", "1\n");
	tclose(m);

	m = topen("plearn/psave/tests/PLStringutilsTest.psave");
	check_list(m, "", "class save save_path encoding");
	tcheck(m, "class", "PLStringutilsTest\n");
	tcheck(m, "save", "1\n");
	tcheck(m, "save_path", "\"\"\n");
	tclose(m);
}

static void test_scripts(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/plearn/LinearRegressor_with_comments.plearn");
	check_list(m, "", "class include_bias cholesky weight_decay encoding");
	tcheck(m, "include_bias", "1\n");
	tcheck(m, "weight_decay", "1e-6\n");
	tclose(m);

	m = topen("plearn/plearn/linreg_minimal.plearn");
	check_list(m, "", "class weight_decay encoding");
	tcheck(m, "weight_decay", "1e-6\n");
	tclose(m);

	m = topen("plearn/plearn/ChainedLearners_unsized_list.plearn");
	check_list(m, "learners", "0 1");
	check_list(m, "learners/0", "class");
	tcheck(m, "learners/0/class", "NormalizationLearner\n");
	tcheck(m, "learners/1/class", "LinearRegressor\n");
	tcheck(m, "learners/1/weight_decay", "1e-6\n");
	tclose(m);
}

struct pmat_case {
	const char *rel, *shape, *row0, *rowlast;
};

static void test_pmat(void **state)
{
	(void)state;
	static const struct pmat_case cases[] = {
		{"ConstantRegressor.test1_costs.pmat", "100 1\n", "13.114425508896256", "34.19404747501949"},
		{"FileVMatrix_fvm1_with_nan.pmat", "13 3\n", "1 2 3", "21 nan 23"},
		{"LinearRegressor.test1_costs.pmat", "50 5\n",
		 "564.6285094118567 564.6285094118567 6.235333652547338 6.355759064311188 6.295546358429263",
		 "13.738027340232152 13.738027340232152 6.235333652547338 6.355759064311188 6.295546358429263"},
		{"LinearRegressor.test1_outputs.pmat", "50 2\n", "16.580272708047264 -6.697864406530135",
		 "30.058914794542723 19.56932441899627"},
		{"linear_4x_2y.pmat", "200 6\n", "-0.67651 -0.35493 -6.9319 -1.70795 -35.92331 -7.30157",
		 "0.40603 -0.89005 -6.87037 -0.07932 -79.19492 -52.98556"},
		{"pyplot_data.pmat", "194 3\n", "1 0.5 1", "0.46154 0.5 0"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char rel[256];
		snprintf(rel, sizeof(rel), "plearn/pmat/%s", cases[i].rel);
		struct mfs_model *m = topen(rel);
		check_list(m, "", "shape dtype values.txt data data.npy header");
		tcheck(m, "shape", cases[i].shape);
		tcheck(m, "dtype", "float64\n");
		check_line(m, "values.txt", 0, cases[i].row0);
		check_line(m, "values.txt", -1, cases[i].rowlast);
		size_t hl, dl;
		char *h = tread(m, "header", &hl);
		assert_int_equal(hl, 64);
		assert_memory_equal(h, m->base, 64);
		assert_memory_equal(h, "MATRIX ", 7);
		free(h);
		char *d = tread(m, "data", &dl);
		assert_int_equal(dl, m->size - 64);
		assert_memory_equal(d, m->base + 64, dl);
		free(d);
		tclose(m);
	}
	/* row 2 of fvm1 is 11 NaN 13, NaN stored as 00 .. f8 7f */
	struct mfs_model *m = topen("plearn/pmat/FileVMatrix_fvm1_with_nan.pmat");
	check_line(m, "values.txt", 2, "11 nan 13");
	assert_memory_equal(m->base + 64 + 7 * 8, "\0\0\0\0\0\0\xf8\x7f", 8);
	tclose(m);
}

static void test_amat(void **state)
{
	(void)state;
	struct mfs_model *m = topen("plearn/amat/1d_reg.amat");
	check_list(m, "", "shape dtype values.txt data data.npy header");
	tcheck(m, "shape", "5 2\n");
	tcheck(m, "values.txt", "0 3\n0.5 4\n1 5\n2 6\n3 7.5\n");
	tcheck(m, "header", "#size: 5 2\n#: x y     \n#sizes: 1 1 0\n\n");
	tclose(m);

	m = topen("plearn/amat/linear_4x_2y.amat");
	tcheck(m, "shape", "200 6\n");
	tcheck(m, "header", "#size: 200 6\n#:x1 x2 x3 x4 y1 y2\n");
	check_line(m, "values.txt", 0, "-0.67651 -0.35493 -6.9319 -1.70795 -35.92331 -7.30157");
	tclose(m);

	m = topen("plearn/amat/linear_4x_2y.written_by_plearn.amat");
	tcheck(m, "shape", "200 6\n");
	tcheck(m, "header", "#size: 200 6\n#: 0 1 2 3 4 5 \n#sizes: 4 2 0 0\n");
	check_line(m, "values.txt", 0, "-0.67651 -0.35493 -6.9319 -1.70795 -35.92331 -7.30157");
	tclose(m);

	m = topen("plearn/amat/data2d_oldstyle_header.amat");
	tcheck(m, "shape", "36 3\n");
	tcheck(m, "header", "36 3\n");
	check_line(m, "values.txt", 0, "-0.71333337 0.24666667 0");
	tclose(m);

	/* String cells: not a matrix this codec shows; passes through. */
	struct mfs_err err = {0};
	assert_int_equal(topen_fail("plearn/amat/data_with_strings.amat", &err), -ENOTSUP);
}

/* Every corpus file: walks cleanly, its views written back change
 * nothing, and every tensor re-encodes to the same bytes. */
static void test_round_trip(void **state)
{
	(void)state;
	for (size_t i = 0; i < plt_ncorpus; i++) {
		struct mfs_model *m = topen(plt_corpus[i]);
		assert_true(twalk(m) > 1);
		assert_true(trewrite_all(m) > 0);
		plt_reencode_all(m);
		tclose(m);
	}
}

static void test_bid(void **state)
{
	(void)state;
	const struct mfs_codec *c;
	const char *obj = "*1 ->Foo(\nx = 1 )\n";
	c = mfs_probe((const uint8_t *)obj, strlen(obj), strlen(obj), "a.psave");
	assert_non_null(c);
	assert_string_equal(c->name, "plearn");
	assert_null(mfs_probe((const uint8_t *)obj, strlen(obj), strlen(obj), "a.txt"));
	const char *hdr = "MATRIX 1 1 DOUBLE LITTLE_ENDIAN";
	c = mfs_probe((const uint8_t *)hdr, strlen(hdr), 72, "anything");
	assert_non_null(c);
	assert_string_equal(c->name, "plearn");
	const char *txt = "hello world\n";
	/* By extension, any .psave bids (low): one that does not parse is
	 * reported with a reason, not passed through silently. */
	c = mfs_probe((const uint8_t *)txt, strlen(txt), strlen(txt), "notes.psave");
	assert_non_null(c);
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, txt, strlen(txt), "notes.psave", NULL, 0, NULL, &err);
	assert_true(r < 0 && r != -ENOTSUP);
	assert_true(err.msg[0] != '\0');
	const char *vec = "# a comment\n2 [ Foo() Bar() ]";
	assert_non_null(mfs_probe((const uint8_t *)vec, strlen(vec), strlen(vec), "v.plearn"));
	const char *mat = "3  2  [\n1\t2\t\n]";
	assert_non_null(mfs_probe((const uint8_t *)mat, strlen(mat), strlen(mat), "m.psave"));
	assert_non_null(mfs_probe((const uint8_t *)"x", 1, 1, "m.amat"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_linear_regressor),
		cmocka_unit_test(test_no_pointer_prefix),
		cmocka_unit_test(test_nnet),
		cmocka_unit_test(test_module_learner),
		cmocka_unit_test(test_module_learner_greedy),
		cmocka_unit_test(test_dbn),
		cmocka_unit_test(test_hyper_learner),
		cmocka_unit_test(test_gaussmix),
		cmocka_unit_test(test_kernel_ridge),
		cmocka_unit_test(test_stacked_adaboost),
		cmocka_unit_test(test_parzen),
		cmocka_unit_test(test_tester_and_stats),
		cmocka_unit_test(test_tests),
		cmocka_unit_test(test_scripts),
		cmocka_unit_test(test_pmat),
		cmocka_unit_test(test_amat),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_bid),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
