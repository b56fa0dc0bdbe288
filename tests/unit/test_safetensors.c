/* Unit tests of the safetensors codec from files built here per the public
 * format: 8-byte little-endian header length, the JSON header (compact,
 * sorted keys, padded with spaces to a multiple of 8 as the reference
 * writer emits it, or unpadded), then the buffer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "helpers.h"
#include "safetensors.h"

/* A file of header text hdr (padded to 8 bytes when pad) and buffer data. */
static uint8_t *st_file(const char *hdr, bool pad, const void *data, size_t dlen, size_t *len)
{
	size_t h = strlen(hdr), n = pad ? (h + 7) / 8 * 8 : h;
	uint8_t *b = malloc(8 + n + dlen + 1);
	assert_non_null(b);
	mfs_put_le64(b, n);
	memcpy(b + 8, hdr, h);
	memset(b + 8 + h, ' ', n - h);
	if (dlen)
		memcpy(b + 8 + n, data, dlen);
	*len = 8 + n + dlen;
	return b;
}

static struct mfs_model *st_open(const char *hdr, bool pad, const void *data, size_t dlen)
{
	size_t len;
	uint8_t *b = st_file(hdr, pad, data, dlen, &len);
	struct mfs_model *m = topen_mem(b, len, "model.safetensors", NULL, 0);
	free(b);
	assert_string_equal(m->codec->name, "safetensors");
	return m;
}

/* Opening must fail with EINVAL (and a message). */
static void st_refused(const char *hdr, bool pad, const void *data, size_t dlen)
{
	size_t len;
	uint8_t *b = st_file(hdr, pad, data, dlen, &len);
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, b, len, "model.safetensors", NULL, 0, NULL, &err);
	if (r != -EINVAL)
		fail_msg("header %s: open gave %d (%s), not EINVAL", hdr, r, err.msg);
	assert_true(err.msg[0] != '\0');
	free(b);
}

static void check_list(struct mfs_model *m, const char *path, const char *expect)
{
	char *l = tlist(m, path);
	assert_string_equal(l, expect);
	free(l);
}

static const char basic_hdr[] =
	"{\"__metadata__\":{\"format\":\"pt\",\"note\":\"h\\u00e9\"},"
	"\"a.b\":{\"data_offsets\":[0,16],\"dtype\":\"F32\",\"shape\":[2,2]},"
	"\"a.b.c\":{\"data_offsets\":[16,24],\"dtype\":\"I64\",\"shape\":[]},"
	"\"x.shape\":{\"data_offsets\":[24,26],\"dtype\":\"U8\",\"shape\":[2]}}";

static void basic_data(uint8_t d[26])
{
	float f[4] = {1.5f, -2.0f, 0.1f, 3e38f};
	memcpy(d, f, 16);
	mfs_put_le64(d + 16, (uint64_t)-7);
	d[24] = 0;
	d[25] = 255;
}

static void test_tree(void **state)
{
	(void)state;
	uint8_t d[26];
	basic_data(d);
	for (int pad = 0; pad < 2; pad++) {
		struct mfs_model *m = st_open(basic_hdr, pad, d, sizeof(d));
		check_list(m, "", "header.json metadata tensors index");
		check_list(m, "metadata", "format note");
		tcheck(m, "metadata/format", "pt\n");
		tcheck(m, "metadata/note", "h\xc3\xa9\n");
		check_list(m, "tensors", "a x");
		check_list(m, "tensors/a/b", "shape dtype values.txt data data.npy c");
		tcheck(m, "tensors/a/b/values.txt", "1.5 -2\n0.1 3e+38\n");
		tcheck(m, "tensors/a/b/c/values.txt", "-7\n");
		tcheck(m, "tensors/a/b/c/shape", "\n");
		check_list(m, "tensors/x", "shape~1");
		tcheck(m, "tensors/x/shape~1/values.txt", "0\n255\n");
		size_t hl = strlen(basic_hdr), n = pad ? (hl + 7) / 8 * 8 : hl;
		char idx[512];
		snprintf(idx, sizeof(idx),
			 "a.b\tfloat32\t2 2\t%zu\t16\na.b.c\tint64\t\t%zu\t8\nx.shape\tuint8\t2\t%zu\t2\n",
			 8 + n, 8 + n + 16, 8 + n + 24);
		tcheck(m, "index", idx);
		size_t len;
		char *h = tread(m, "header.json", &len);
		assert_int_equal(len, n);
		assert_memory_equal(h, basic_hdr, hl);
		free(h);
		twalk(m);
		tclose(m);
	}
}

/* Every dtype, with bit patterns that matter (nan, inf, -0, subnormals). */
static void test_dtypes(void **state)
{
	(void)state;
	static const struct {
		const char *st, *name;
		size_t esize;
		uint8_t bytes[16];
		const char *values;
	} cases[] = {
		{"BOOL", "bool", 1, {0, 1}, "0\n1\n"},
		{"U8", "uint8", 1, {0, 255}, "0\n255\n"},
		{"I8", "int8", 1, {0x80, 0x7f}, "-128\n127\n"},
		{"U16", "uint16", 2, {0xff, 0xff, 1, 0}, "65535\n1\n"},
		{"I16", "int16", 2, {0, 0x80, 0xff, 0xff}, "-32768\n-1\n"},
		{"U32", "uint32", 4, {0xff, 0xff, 0xff, 0xff, 2}, "4294967295\n2\n"},
		{"I32", "int32", 4, {0, 0, 0, 0x80, 0xfe, 0xff, 0xff, 0xff}, "-2147483648\n-2\n"},
		{"U64", "uint64", 8, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
		 "18446744073709551615\n0\n"},
		{"I64", "int64", 8, {0, 0, 0, 0, 0, 0, 0, 0x80, 3}, "-9223372036854775808\n3\n"},
		{"F16", "float16", 2, {0x01, 0x00, 0x00, 0xfc}, "6e-08\n-inf\n"},
		{"BF16", "bfloat16", 2, {0x01, 0x00, 0x00, 0x80}, "9e-41\n-0\n"},
		{"BF16", "bfloat16", 2, {0xc0, 0x7f, 0x80, 0x7f}, "nan\ninf\n"},
		{"BF16", "bfloat16", 2, {0x80, 0x3f, 0x7f, 0x7f}, "1\n3.39e+38\n"},
		{"F32", "float32", 4, {0, 0, 0xc0, 0x7f, 1, 0, 0, 0}, "nan\n1e-45\n"},
		{"F64", "float64", 8, {0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0, 0, 0xf0, 0x7f},
		 "-0\ninf\n"},
		{"F8_E4M3", "float8_e4m3fn", 1, {0x01, 0x7f}, "0.002\nnan\n"},
		{"F8_E4M3", "float8_e4m3fn", 1, {0x7e, 0x80}, "450\n-0\n"},
		{"F8_E5M2", "float8_e5m2", 1, {0x01, 0x7c}, "2e-05\ninf\n"},
		{"F8_E5M2", "float8_e5m2", 1, {0xfc, 0x7b}, "-inf\n60000\n"},
		{"C64", "complex64", 8, {0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0}, "1-2j\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t n = strcmp(cases[i].st, "C64") ? 2 : 1;
		char hdr[200];
		snprintf(hdr, sizeof(hdr),
			 "{\"t\":{\"dtype\":\"%s\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}",
			 cases[i].st, n, n * cases[i].esize);
		struct mfs_model *m = st_open(hdr, true, cases[i].bytes, n * cases[i].esize);
		char dt[64];
		snprintf(dt, sizeof(dt), "%s\n", cases[i].name);
		tcheck(m, "tensors/t/dtype", dt);
		char *v = tread(m, "tensors/t/values.txt", NULL);
		if (strcmp(v, cases[i].values))
			fail_msg("%s: values.txt is \"%s\", expected \"%s\"", cases[i].st, v,
				 cases[i].values);
		free(v);
		twalk(m);
		tclose(m);
	}
}

/* Dtypes without a NumPy type: shape, dtype and data only. Sub-byte ones
 * (the reference library's bitsize) show the header's shape over their
 * packed bytes, whose length must be whole (its MisalignedSlice). */
static void test_opaque(void **state)
{
	(void)state;
	uint8_t d[15] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
	struct mfs_model *m = st_open(
		"{\"e\":{\"dtype\":\"F8_E8M0\",\"shape\":[2],\"data_offsets\":[0,2]},"
		"\"f4\":{\"dtype\":\"F4\",\"shape\":[3,2],\"data_offsets\":[2,5]},"
		"\"f6\":{\"dtype\":\"F6_E2M3\",\"shape\":[2,2],\"data_offsets\":[5,8]},"
		"\"g6\":{\"dtype\":\"F6_E3M2\",\"shape\":[4],\"data_offsets\":[8,11]},"
		"\"u\":{\"dtype\":\"F8_E4M3FNUZ\",\"shape\":[1],\"data_offsets\":[11,12]},"
		"\"z\":{\"dtype\":\"Q9_Xy\",\"shape\":[3],\"data_offsets\":[12,15]}}",
		false, d, sizeof(d));
	check_list(m, "tensors/e", "shape dtype data");
	tcheck(m, "tensors/e/dtype", "f8_e8m0\n");
	tcheck(m, "tensors/e/shape", "2\n");
	check_list(m, "tensors/f4", "shape dtype data");
	tcheck(m, "tensors/f4/dtype", "f4\n");
	tcheck(m, "tensors/f4/shape", "3 2\n");
	tcheck(m, "tensors/f4/data", "\x03\x04\x05");
	tcheck(m, "tensors/f6/shape", "2 2\n");
	tcheck(m, "tensors/f6/data", "\x06\x07\x08");
	tcheck(m, "tensors/g6/dtype", "f6_e3m2\n");
	tcheck(m, "tensors/g6/shape", "4\n");
	tcheck(m, "tensors/u/dtype", "f8_e4m3fnuz\n");
	tcheck(m, "tensors/z/dtype", "q9_xy\n");
	tcheck(m, "tensors/z/shape", "3\n");
	tcheck(m, "tensors/z/data", "\x0d\x0e\x0f");
	/* offsets: 8 + the 352 header bytes + data_offsets */
	tcheck(m, "index", "e\tf8_e8m0\t2\t360\t2\n" "f4\tf4\t3 2\t362\t3\n"
		"f6\tf6_e2m3\t2 2\t365\t3\n" "g6\tf6_e3m2\t4\t368\t3\n"
		"u\tf8_e4m3fnuz\t1\t371\t1\n" "z\tq9_xy\t3\t372\t3\n");
	tclose(m);
	/* A known sub-byte dtype has its size checked: 3 F4 are 12 bits, 3
	 * F6 18, which end inside a byte; 4 F4 are 2 bytes, not 3. */
	st_refused("{\"f4\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,2]}}", false, d,
		   2);
	st_refused("{\"f4\":{\"dtype\":\"F4\",\"shape\":[3],\"data_offsets\":[0,1]}}", false, d,
		   1);
	st_refused("{\"f6\":{\"dtype\":\"F6_E2M3\",\"shape\":[3],\"data_offsets\":[0,3]}}", false,
		   d, 3);
	st_refused("{\"f4\":{\"dtype\":\"F4\",\"shape\":[4],\"data_offsets\":[0,3]}}", false, d,
		   3);
}

static void test_refused(void **state)
{
	(void)state;
	uint8_t d[16] = {0};
	static const char *const bad[] = {
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,4]}}",   /* length */
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"    /* overlap */
		"\"b\":{\"dtype\":\"F32\",\"shape\":[3],\"data_offsets\":[0,12]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",   /* hole */
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}",   /* tail */
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[8],\"data_offsets\":[0,32]}}",  /* outside */
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[16,0]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[-4],\"data_offsets\":[0,16]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4.0],\"data_offsets\":[0,16]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,16]}}",
		"{\"a\":{\"dtype\":7,\"shape\":[4],\"data_offsets\":[0,16]}}",
		"{\"a\":{\"shape\":[4],\"data_offsets\":[0,16]}}",
		"{\"a\":[1]}",
		"{\"__metadata__\":{\"k\":1},"
		"\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}",
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}",  /* JSON */
		"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}} x",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		st_refused(bad[i], i % 2 == 0, d, i == 3 ? 8 : 16);
	/* Header lengths: past the end of the file, over the limit. */
	size_t len;
	uint8_t *b = st_file("{}", true, NULL, 0, &len);
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	mfs_put_le64(b, 9);
	assert_int_equal(mfs_model_open_mem(&m, b, len, "m.safetensors", NULL, 0, NULL, &err),
			 -EINVAL);
	mfs_put_le64(b, 100000001);
	assert_int_equal(mfs_model_open_mem(&m, b, len, "m.safetensors", NULL, 0, NULL, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "100000000"));
	free(b);
	/* A shape of more dimensions than ST_DIMS_MAX is refused before it is
	 * read; one of ST_DIMS_MAX reads. */
	for (unsigned nd = ST_DIMS_MAX; nd <= ST_DIMS_MAX + 1; nd++) {
		struct mfs_buf h = {0};
		const char *head = "{\"a\":{\"dtype\":\"F32\",\"shape\":[1";
		const char *tail = "],\"data_offsets\":[0,4]}}";
		assert_int_equal(mfs_buf_add(&h, head, strlen(head)), 0);
		for (unsigned k = 1; k < nd; k++)
			assert_int_equal(mfs_buf_add(&h, ",1", 2), 0);
		assert_int_equal(mfs_buf_add(&h, tail, strlen(tail) + 1), 0);
		if (nd > ST_DIMS_MAX) {
			st_refused(h.p, true, d, 4);
		} else {
			m = st_open(h.p, true, d, 4);
			assert_int_equal(m->tensors[0].ndim, nd);
			tclose(m);
		}
		mfs_buf_free(&h);
	}
	/* An empty file of tensors is fine. */
	m = st_open("{}", true, NULL, 0);
	check_list(m, "tensors", "");
	tcheck(m, "index", "");
	tclose(m);
}

/* What the reference library accepts beyond the common layout: fields of a
 * tensor entry it does not know (any JSON, ignored: they cost no node),
 * and a name or a metadata key given twice, of which the last counts (its
 * maps keep the last); the earlier entry must still be well formed. */
static void test_reference_rules(void **state)
{
	(void)state;
	uint8_t d[8] = {1, 0, 0, 0, 2, 0, 0, 0};
	struct mfs_model *m = st_open(
		"{\"__metadata__\":{\"k\":\"old\",\"j\":\"x\",\"k\":\"new\"},"
		"\"a\":{\"dtype\":\"I32\",\"shape\":[1],\"data_offsets\":[0,4],"
		"\"junk\":[0,[1,{\"x\":\"y\"}],\"\\u00e9\"],\"more\":{\"shape\":7}},"
		"\"b\":{\"dtype\":\"F64\",\"shape\":[9],\"data_offsets\":[0,72]},"
		"\"b\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[4,8]}}",
		true, d, sizeof(d));
	check_list(m, "metadata", "j k");
	tcheck(m, "metadata/k", "new\n");
	check_list(m, "tensors", "a b");
	tcheck(m, "tensors/a/values.txt", "1\n");
	tcheck(m, "tensors/b/values.txt", "2\n");
	tcheck(m, "index", "a\tint32\t1\t272\t4\nb\tint32\t\t276\t4\n");
	tclose(m);
	/* an earlier duplicate that is not a tensor entry is still refused */
	st_refused("{\"b\":7,\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}",
		   true, d, 8);
}

/* Apply a write, reopen the result, and hand both back. */
static struct mfs_model *st_write(struct mfs_model *m, const char *path, const char *text,
				  uint8_t **out, size_t *len)
{
	struct mfs_err err = {0};
	int r = twrite(m, path, text, strlen(text), out, len, &err);
	if (r != 0)
		fail_msg("write %s: %d %s", path, r, err.msg);
	return topen_mem(*out, *len, "model.safetensors", NULL, 0);
}

static void test_edit_values(void **state)
{
	(void)state;
	uint8_t d[26];
	basic_data(d);
	size_t flen;
	uint8_t *file = st_file(basic_hdr, true, d, sizeof(d), &flen);
	struct mfs_model *m = topen_mem(file, flen, "model.safetensors", NULL, 0);
	uint8_t *out;
	size_t len;
	struct mfs_model *m2 = st_write(m, "tensors/a/b/values.txt", "1.5 -2\n0.25 1\n", &out, &len);
	assert_int_equal(len, flen);
	assert_memory_equal(out, file, flen - 26 + 8);  /* header and first two floats */
	assert_int_equal(mfs_le32(out + flen - 26 + 8), bits32(0.25f));
	tcheck(m2, "tensors/a/b/values.txt", "1.5 -2\n0.25 1\n");
	tclose(m2);
	free(out);
	/* The same values change nothing. */
	struct mfs_err err = {0};
	const char *same = "1.5 -2\n0.1 3e+38\n";
	assert_int_equal(twrite(m, "tensors/a/b/values.txt", same, strlen(same), &out, &len, &err),
			 1);
	/* Out of range and wrong counts are refused. */
	assert_int_equal(twrite(m, "tensors/x/shape~1/values.txt", "1\n256\n", 6, &out, &len, &err),
			 -ERANGE);
	assert_int_equal(twrite(m, "tensors/a/b/values.txt", "1 2 3\n", 6, &out, &len, &err),
			 -EINVAL);
	tclose(m);
	free(file);
}

static void test_edit_bf16_f8(void **state)
{
	(void)state;
	uint8_t d[4] = {0};
	struct mfs_model *m = st_open(
		"{\"b\":{\"data_offsets\":[0,2],\"dtype\":\"BF16\",\"shape\":[1]},"
		"\"f\":{\"data_offsets\":[2,4],\"dtype\":\"F8_E4M3\",\"shape\":[2]}}",
		true, d, sizeof(d));
	uint8_t *out;
	size_t len;
	/* 1.00390625 is halfway between bf16 1 and 1.0078125: ties to even. */
	struct mfs_model *m2 = st_write(m, "tensors/b/values.txt", "1.00390625\n", &out, &len);
	assert_int_equal(mfs_le16(out + len - 4), 0x3f80);
	tclose(m2);
	free(out);
	m2 = st_write(m, "tensors/f/values.txt", "-448\n0.001953125\n", &out, &len);
	assert_int_equal(out[len - 2], 0xfe);
	assert_int_equal(out[len - 1], 0x01);
	tclose(m2);
	free(out);
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "tensors/f/values.txt", "500\n0\n", 6, &out, &len, &err),
			 -ERANGE);
	assert_int_equal(twrite(m, "tensors/b/values.txt", "1e39\n", 5, &out, &len, &err),
			 -ERANGE);
	/* The largest values as values.txt shows them read back to themselves. */
	m2 = st_write(m, "tensors/f/values.txt", "450\n-450\n", &out, &len);
	assert_int_equal(out[len - 2], 0x7e);
	assert_int_equal(out[len - 1], 0xfe);
	tclose(m2);
	free(out);
	m2 = st_write(m, "tensors/b/values.txt", "3.39e+38\n", &out, &len);
	assert_int_equal(mfs_le16(out + len - 4), 0x7f7f);
	tclose(m2);
	free(out);
	tclose(m);
}

static void test_edit_metadata(void **state)
{
	(void)state;
	uint8_t d[26];
	basic_data(d);
	size_t flen;
	uint8_t *file = st_file(basic_hdr, true, d, sizeof(d), &flen);
	uint64_t n = mfs_le64(file);
	struct mfs_model *m = topen_mem(file, flen, "model.safetensors", NULL, 0);
	uint8_t *out;
	size_t len;
	/* Shorter: in place, padded with spaces, the rest of the text kept. */
	struct mfs_model *m2 = st_write(m, "metadata/format", "p\n", &out, &len);
	assert_int_equal(len, flen);
	assert_int_equal(mfs_le64(out), n);
	assert_non_null(memmem(out, len, "{\"__metadata__\":{\"format\":\"p\",\"note\"", 36));
	tcheck(m2, "metadata/format", "p\n");
	tcheck(m2, "tensors/a/b/values.txt", "1.5 -2\n0.1 3e+38\n");
	tclose(m2);
	free(out);
	/* Longer than the padding: the header grows to a multiple of 8. */
	const char *big = "a much longer value with \"quotes\" and a\ttab";
	m2 = st_write(m, "metadata/format", big, &out, &len);
	assert_true(mfs_le64(out) > n);
	assert_int_equal(mfs_le64(out) % 8, 0);
	assert_int_equal(len, flen + (mfs_le64(out) - n));
	char want[128];
	snprintf(want, sizeof(want), "%s\n", big);
	tcheck(m2, "metadata/format", want);
	tcheck(m2, "metadata/note", "h\xc3\xa9\n");
	tcheck(m2, "tensors/a/b/c/values.txt", "-7\n");
	tclose(m2);
	free(out);
	/* Not UTF-8: refused. */
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "metadata/format", "\xff\n", 2, &out, &len, &err), -EINVAL);
	tclose(m);
	free(file);
}

/* A .npy file of float32 values with shape dims (row-major). */
static uint8_t *npy_f32(const uint64_t *dims, unsigned nd, const float *v, size_t *len)
{
	char dict[128];
	int k = snprintf(dict, sizeof(dict), "{'descr': '<f4', 'fortran_order': False, 'shape': (");
	size_t n = 1;
	for (unsigned i = 0; i < nd; i++) {
		k += snprintf(dict + k, sizeof(dict) - (size_t)k, "%llu,%s",
			      (unsigned long long)dims[i], i + 1 < nd ? " " : "");
		n *= dims[i];
	}
	k += snprintf(dict + k, sizeof(dict) - (size_t)k, "), }");
	size_t hl = ((size_t)k + 10 + 1 + 63) / 64 * 64 - 10;
	uint8_t *b = malloc(10 + hl + n * 4);
	memcpy(b, "\x93NUMPY\x01\x00", 8);
	mfs_put_le16(b + 8, (uint16_t)hl);
	memset(b + 10, ' ', hl);
	memcpy(b + 10, dict, (size_t)k);
	b[10 + hl - 1] = '\n';
	memcpy(b + 10 + hl, v, n * 4);
	*len = 10 + hl + n * 4;
	return b;
}

static void test_reshape(void **state)
{
	(void)state;
	uint8_t d[26];
	basic_data(d);
	struct mfs_model *m = st_open(basic_hdr, true, d, sizeof(d));
	uint64_t dims[2] = {3, 2};
	float v[6] = {1, 2, 3, 4, 5, 6};
	size_t nl;
	uint8_t *npy = npy_f32(dims, 2, v, &nl);
	uint8_t *out;
	size_t len;
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "tensors/a/b/data.npy", npy, nl, &out, &len, &err), 0);
	struct mfs_model *m2 = topen_mem(out, len, "model.safetensors", NULL, 0);
	tcheck(m2, "tensors/a/b/shape", "3 2\n");
	tcheck(m2, "tensors/a/b/values.txt", "1 2\n3 4\n5 6\n");
	tcheck(m2, "tensors/a/b/c/values.txt", "-7\n");
	tcheck(m2, "tensors/x/shape~1/values.txt", "0\n255\n");
	assert_non_null(strstr((char *)out + 8, "\"a.b\":{\"data_offsets\":[0,24],\"dtype\":\"F32\","
					       "\"shape\":[3,2]}"));
	assert_non_null(strstr((char *)out + 8, "\"data_offsets\":[24,32]"));
	tclose(m2);
	free(out);
	free(npy);
	tclose(m);
}

static void test_sharded_index(void **state)
{
	(void)state;
	const char *idx = "{\n  \"metadata\": {\"total_size\": 16060522496, \"s\": \"x\"},\n"
			  "  \"weight_map\": {\n"
			  "    \"model.embed.weight.scale\": \"model-00001-of-00002.safetensors\",\n"
			  "    \"model.embed.weight\": \"model-00001-of-00002.safetensors\",\n"
			  "    \"model.embed.weight.other\": \"model-00002-of-00002.safetensors\",\n"
			  "    \"model.layers.0.shape\": \"model-00002-of-00002.safetensors\",\n"
			  "    \"lm_head\": \"model-00002-of-00002.safetensors\",\n"
			  "    \"evil\": \"../etc\",\n"
			  "    \"odd\": 3\n  }\n}\n";
	struct mfs_model *m = topen_mem(idx, strlen(idx), "model.safetensors.index.json", NULL, 0);
	assert_string_equal(m->codec->name, "safetensors");
	check_list(m, "", "metadata tensors");
	tcheck(m, "metadata/total_size", "16060522496\n");
	tcheck(m, "metadata/s", "\"x\"\n");
	check_list(m, "tensors", "lm_head model");
	char t[512];
	assert_true(mfs_link_target(m, tnode(m, "tensors/model/embed/weight"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../../model-00001-of-00002.safetensors/tensors/model/embed/weight");
	/* weight.scale, in the same shard, is reached through weight's link
	 * (listed before it in the map); weight.other, in another, beside it */
	check_list(m, "tensors/model/embed", "weight weight~1");
	check_list(m, "tensors/model/embed/weight~1", "other");
	assert_true(mfs_link_target(m, tnode(m, "tensors/model/embed/weight~1/other"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../../../model-00002-of-00002.safetensors/tensors/model/embed/weight/"
			       "other");
	assert_true(mfs_link_target(m, tnode(m, "tensors/model/layers/0/shape~1"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../../../../model-00002-of-00002.safetensors/tensors/model/layers/0/"
			       "shape~1");
	assert_true(mfs_link_target(m, tnode(m, "tensors/lm_head"), t, sizeof(t)) > 0);
	assert_string_equal(t, "../../model-00002-of-00002.safetensors/tensors/lm_head");
	assert_non_null(strstr(m->note, "evil"));
	twalk(m);
	tclose(m);
}

static void test_fixture(void **state)
{
	(void)state;
	struct mfs_model *m = topen("safetensors/tiny/model-00001-of-00002.safetensors");
	twalk(m);
	tclose(m);
	m = topen("safetensors/tiny/model.safetensors.index.json");
	twalk(m);
	tclose(m);
	tmutate("safetensors/tiny/model-00001-of-00002.safetensors", 300);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tree),
		cmocka_unit_test(test_dtypes),
		cmocka_unit_test(test_opaque),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_reference_rules),
		cmocka_unit_test(test_edit_values),
		cmocka_unit_test(test_edit_bf16_f8),
		cmocka_unit_test(test_edit_metadata),
		cmocka_unit_test(test_reshape),
		cmocka_unit_test(test_sharded_index),
		cmocka_unit_test(test_fixture),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
