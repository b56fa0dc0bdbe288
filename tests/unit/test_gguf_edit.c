/* Unit tests of the GGUF codec, writing and refusing: unchanged write-backs
 * change nothing; scalars and tensor bytes are patched in place; strings and
 * arrays of another length realign the data section (in place when it does
 * not move); bad values and read-only files are refused; malformed files
 * fail to open with a message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bytes.h"
#include "gguf.h"
#include "test_gguf.h"

static uint8_t tbytes[2 * 34 + 64];

/* A file with a name, a u32, a token array, a float array, an f32 tensor
 * and a q8_0 tensor. */
static uint8_t *sample(uint32_t align, const char *name, size_t *len)
{
	struct gw w;
	gw_init(&w, align);
	gw_kv_str(&w, "general.name", name);
	gw_key(&w, "llama.context_length", 4);
	gw_u32(&w, 2048);
	gw_key(&w, "tokenizer.ggml.tokens", 9);
	gw_u32(&w, 8);
	gw_u64(&w, 2);
	gw_str(&w, "<s>", 3);
	gw_str(&w, "</s>", 4);
	gw_key(&w, "scores", 9);
	gw_u32(&w, 6);
	gw_u64(&w, 2);
	float sc[2] = {0.5f, -1};
	gw_bytes(&w, sc, sizeof(sc));
	for (size_t i = 0; i < sizeof(tbytes); i++)
		tbytes[i] = (uint8_t)(i * 13 + 1);
	tbytes[1] = 0x3C;
	tbytes[35] = 0x3C;
	uint64_t ne[2] = {32, 2};
	gw_tensor(&w, "blk.0.q", 8, 2, ne, tbytes, 68);
	uint64_t ne1[1] = {16};
	gw_tensor(&w, "blk.0.norm", 0, 1, ne1, tbytes + 68, 64);
	return gw_finish(&w, len);
}

static struct mfs_model *open_sample(uint32_t align, const char *name, uint8_t **buf,
				     size_t *len)
{
	*buf = sample(align, name, len);
	return topen_mem(*buf, *len, "s.gguf", NULL, 0);
}

static uint8_t *write_ok(struct mfs_model *m, const char *path, const void *s, size_t n,
			 size_t *outlen)
{
	uint8_t *out = NULL;
	struct mfs_err err = {0};
	int r = twrite(m, path, s, n, &out, outlen, &err);
	if (r != 0)
		fail_msg("write %s: %d (%s)", path, r, err.msg);
	return out;
}

static void write_fails(struct mfs_model *m, const char *path, const char *s, int code)
{
	uint8_t *out = NULL;
	size_t outlen;
	struct mfs_err err = {0};
	int r = twrite(m, path, s, strlen(s), &out, &outlen, &err);
	if (r != code)
		fail_msg("write \"%s\" to %s: %d (%s), expected %d", s, path, r, err.msg, code);
	free(out);
}

/* The tensors of two files: same bytes at their data sections. */
static void same_tensors(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	struct mfs_model *ma = topen_mem(a, alen, "a.gguf", NULL, 0);
	struct mfs_model *mb = topen_mem(b, blen, "b.gguf", NULL, 0);
	const struct gguf_file *fa = ma->priv, *fb = mb->priv;
	assert_int_equal(fa->n_tensors, fb->n_tensors);
	assert_int_equal(fb->data % fb->alignment, 0);
	assert_int_equal(alen - fa->data, blen - fb->data);
	assert_memory_equal(a + fa->data, b + fb->data, alen - fa->data);
	tclose(ma);
	tclose(mb);
}

static void unchanged(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len;
	struct mfs_model *m = open_sample(32, "tiny", &buf, &len);
	const char *views[] = {"metadata/general.name", "metadata/llama.context_length",
			       "metadata/tokenizer.ggml.tokens", "metadata/scores/values.txt",
			       "tensors/blk/0/q/data", "tensors/blk/0/norm/values.txt"};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		size_t n;
		char *s = tread(m, views[i], &n);
		uint8_t *out = NULL;
		size_t outlen;
		struct mfs_err err = {0};
		int r = twrite(m, views[i], s, n, &out, &outlen, &err);
		assert_true(r == 1 || (r == 0 && outlen == len && memcmp(out, buf, len) == 0));
		free(out);
		free(s);
	}
	tclose(m);
	free(buf);
}

static void scalar_in_place(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len, n;
	struct mfs_model *m = open_sample(32, "tiny", &buf, &len);
	uint8_t *out = write_ok(m, "metadata/llama.context_length", "4096\n", 5, &n);
	assert_int_equal(n, len);
	const struct gguf_file *f = m->priv;
	assert_int_equal(mfs_le32(out + f->kv[1].val), 4096);
	assert_int_equal(memcmp(out, buf, f->kv[1].val), 0);
	free(out);
	write_fails(m, "metadata/llama.context_length", "-1\n", -ERANGE);
	write_fails(m, "metadata/llama.context_length", "abc\n", -EINVAL);
	tclose(m);
	free(buf);
}

/* A longer name moves the data section to the next multiple of the
 * alignment; the tensors keep their bytes. */
static void string_rewrite(void **state)
{
	(void)state;
	for (uint32_t align = 32; align <= 64; align *= 2) {
		uint8_t *buf;
		size_t len, n;
		struct mfs_model *m = open_sample(align, "tiny", &buf, &len);
		const char *nm = "a much longer name than before, to move the data section";
		uint8_t *out = write_ok(m, "metadata/general.name", nm, strlen(nm), &n);
		same_tensors(buf, len, out, n);
		struct mfs_model *m2 = topen_mem(out, n, "s.gguf", NULL, 0);
		char expect[128];
		snprintf(expect, sizeof(expect), "%s\n", nm);
		tcheck(m2, "metadata/general.name", expect);
		tcheck(m2, "metadata/llama.context_length", "2048\n");
		tclose(m2);
		free(out);
		tclose(m);
		free(buf);
	}
}

/* One byte longer: the key-value section still ends within the padding, so
 * the file keeps its size and layout (patched in place). */
static void string_within_padding(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len, n;
	struct mfs_model *m = open_sample(32, "tiny", &buf, &len);
	const struct gguf_file *f = m->priv;
	if (f->data == f->ti_end) {  /* no padding: another name length */
		tclose(m);
		free(buf);
		m = open_sample(32, "tin", &buf, &len);
		f = m->priv;
	}
	assert_true(f->data > f->ti_end);
	uint8_t *out = write_ok(m, "metadata/general.name", "tiny!", 5, &n);
	assert_int_equal(n, len);
	same_tensors(buf, len, out, n);
	free(out);
	tclose(m);
	free(buf);
}

static void token_edit(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len, n;
	struct mfs_model *m = open_sample(32, "tiny", &buf, &len);
	const char *t = "\"<bos>\"\n\"</s>\"\n\"\\n\\\"x\"\n";
	uint8_t *out = write_ok(m, "metadata/tokenizer.ggml.tokens", t, strlen(t), &n);
	same_tensors(buf, len, out, n);
	struct mfs_model *m2 = topen_mem(out, n, "s.gguf", NULL, 0);
	tcheck(m2, "metadata/tokenizer.ggml.tokens", t);
	tclose(m2);
	free(out);
	write_fails(m, "metadata/tokenizer.ggml.tokens", "\"a\"\nb\n", -EINVAL);
	write_fails(m, "metadata/tokenizer.ggml.tokens", "\"a\" \"b\"\n", -EINVAL);
	tclose(m);
	free(buf);
}

static void tensor_edits(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len, n;
	struct mfs_model *m = open_sample(32, "tiny", &buf, &len);
	const struct gguf_file *f = m->priv;
	uint8_t blocks[68];
	memcpy(blocks, tbytes, 68);
	blocks[5] ^= 0xFF;
	uint8_t *out = write_ok(m, "tensors/blk/0/q/data", blocks, 68, &n);
	assert_int_equal(n, len);
	assert_memory_equal(out + f->data + f->ti[0].rel, blocks, 68);
	free(out);
	write_fails(m, "tensors/blk/0/q/data", "short", -EINVAL);
	write_fails(m, "tensors/blk/0/q/values.txt", "1", -EACCES);
	write_fails(m, "tensors/blk/0/q/data.npy", "1", -EACCES);
	char vals[16 * 4];
	size_t vl = 0;
	for (int i = 0; i < 16; i++)
		vl += (size_t)snprintf(vals + vl, sizeof(vals) - vl, "%d\n", i % 2);
	out = write_ok(m, "tensors/blk/0/norm/values.txt", vals, vl, &n);
	float one;
	memcpy(&one, out + f->data + f->ti[1].rel + 4, 4);
	assert_true(one == 1.0f);
	free(out);
	tclose(m);
	free(buf);
}

static void alignment_read_only(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len;
	struct mfs_model *m = open_sample(64, "tiny", &buf, &len);
	tcheck(m, "metadata/general.alignment", "64\n");
	write_fails(m, "metadata/general.alignment", "32\n", -EACCES);
	write_fails(m, "alignment", "32\n", -EACCES);
	tclose(m);
	free(buf);
}

static void bad(const uint8_t *b, size_t n, const char *what)
{
	uint8_t *copy = malloc(n ? n : 1);
	memcpy(copy, b, n);
	struct mfs_model *m = NULL;
	struct mfs_err err = {0};
	int r = mfs_model_open_mem(&m, copy, n, "x.gguf", NULL, 0, NULL, &err);
	if (r != -EINVAL)
		fail_msg("%s: open gave %d (%s), expected -EINVAL", what, r, err.msg);
	assert_true(err.msg[0] != '\0');
	free(copy);
}

static void malformed(void **state)
{
	(void)state;
	uint8_t *buf;
	size_t len;
	buf = sample(32, "tiny", &len);
	struct mfs_model *m = topen_mem(buf, len, "s.gguf", NULL, 0);
	const struct gguf_file *f = m->priv;
	uint64_t kv2 = f->kv[2].val, ti0 = f->kv_end, rel1 = f->ti_end - 8;
	tclose(m);
	uint8_t *b = malloc(len);
	for (size_t cut = 4; cut < len; cut += 7)
		bad(buf, cut, "truncated");
	memcpy(b, buf, len);
	mfs_put_le32(b + 4, 1);
	bad(b, len, "version 1");
	mfs_put_le32(b + 4, 0x03000000u);
	bad(b, len, "big-endian");
	memcpy(b, buf, len);
	mfs_put_le64(b + 16, UINT64_MAX / 2);
	bad(b, len, "huge key-value count");
	memcpy(b, buf, len);
	mfs_put_le32(b + kv2, 13);
	bad(b, len, "unknown array element type");
	memcpy(b, buf, len);
	mfs_put_le64(b + kv2 + 4, 1ull << 60);
	bad(b, len, "huge array count");
	memcpy(b, buf, len);
	mfs_put_le64(b + ti0, 1ull << 40);
	bad(b, len, "tensor name past the end");
	memcpy(b, buf, len);
	mfs_put_le64(b + rel1, 8);
	bad(b, len, "misaligned tensor offset");
	memcpy(b, buf, len);
	mfs_put_le64(b + rel1, 1ull << 20);
	bad(b, len, "tensor past the end");
	memcpy(b, buf, len);
	mfs_put_le32(b + rel1 - 4, 99);
	bad(b, len, "unknown ggml type");
	free(b);
	free(buf);
}

static void robust(void **state)
{
	(void)state;
	tmutate("gguf/tiny_llama.gguf", (unsigned)tcount(3000, 10, 10));
}

/* An empty array of strings is an empty file, not a lone newline (which is
 * no JSON literal); writing it back, empty or as a newline, changes
 * nothing; an early check of a line into it is safe; lines fill it and a
 * newline empties a full one. */
static void empty_string_array(void **state)
{
	(void)state;
	struct gw w;
	gw_init(&w, 32);
	gw_kv_str(&w, "general.name", "e");
	gw_key(&w, "none", 9);
	gw_u32(&w, 8);
	gw_u64(&w, 0);
	gw_key(&w, "two", 9);
	gw_u32(&w, 8);
	gw_u64(&w, 2);
	gw_str(&w, "a", 1);
	gw_str(&w, "b", 1);
	size_t len, n;
	uint8_t *buf = gw_finish(&w, &len);
	struct mfs_model *m = topen_mem(buf, len, "e.gguf", NULL, 0);
	char *s = tread(m, "metadata/none", &n);
	assert_int_equal(n, 0);
	free(s);
	uint8_t *out = NULL;
	struct mfs_err err = {0};
	assert_int_equal(twrite(m, "metadata/none", "", 0, &out, &n, &err), 1);
	assert_int_equal(twrite(m, "metadata/none", "\n", 1, &out, &n, &err), 1);
	struct mfs_check st = {0};
	assert_int_equal(mfs_view_check_prefix(m, tnode(m, "metadata/none"), "\"x\"\n", 4, &st,
						&err),
			 0);
	mfs_check_reset(&st);
	out = write_ok(m, "metadata/none", "\"x\"\n\"y\"\n", 8, &n);
	struct mfs_model *m2 = topen_mem(out, n, "e.gguf", NULL, 0);
	tcheck(m2, "metadata/none", "\"x\"\n\"y\"\n");
	tcheck(m2, "metadata/two", "\"a\"\n\"b\"\n");
	tclose(m2);
	free(out);
	out = write_ok(m, "metadata/two", "\n", 1, &n);
	m2 = topen_mem(out, n, "e.gguf", NULL, 0);
	tcheck(m2, "metadata/two", "");
	const struct gguf_file *f = m2->priv;
	assert_int_equal(mfs_le64(out + f->kv[2].val + 4), 0);  /* its count */
	tclose(m2);
	free(out);
	tclose(m);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(unchanged),
		cmocka_unit_test(scalar_in_place),
		cmocka_unit_test(string_rewrite),
		cmocka_unit_test(string_within_padding),
		cmocka_unit_test(token_edit),
		cmocka_unit_test(empty_string_array),
		cmocka_unit_test(tensor_edits),
		cmocka_unit_test(alignment_read_only),
		cmocka_unit_test(malformed),
		cmocka_unit_test(robust),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
