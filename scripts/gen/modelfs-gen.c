/* modelfs-gen: benchmark inputs written through modelfs's own codecs (a test
 * file reshaped through data.npy, a primitiv model packed with msgpack-c),
 * the sample sharded safetensors checkpoint (st_sample.c), the speed of the
 * GGUF dequantizers (dq_speed.c),
 * and page-cache helpers (resident bytes, eviction) for scripts/bench. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <msgpack.h>
#include <msgpack/fbuffer.h>

#include "codec.h"
#include "dq_speed.h"
#include "edit.h"
#include "model.h"
#include "st_sample.h"
#include "view.h"

#ifndef MFS_TEST_DATA_DIR
#define MFS_TEST_DATA_DIR "tests/data"
#endif

#define COLS 16384u              /* columns of every generated matrix */
#define CHUNK (16u << 20)        /* bytes written to the output at a time */

static const char *usage =
	"usage: modelfs-gen FORMAT OUT [MIB]     one tensor of about MIB MiB (default 1024)\n"
	"         FORMAT: primitiv (.param, float32), tennis (.tsm const, float32),\n"
	"                 daphne (.dbdf dense float32, with .meta), pmat (PLearn, float64);\n"
	"                 FORMAT-1g is the same with MIB 1024\n"
	"       modelfs-gen primitiv-100k OUT [N]  a primitiv .model of N small parameters\n"
	"       modelfs-gen copies DIR N           N copies of a small primitiv model\n"
	"       modelfs-gen safetensors-sample DIR the sample sharded safetensors checkpoint\n"
	"                                          (tests/data/safetensors/tiny)\n"
	"       modelfs-gen dequant-speed [MVALUES] M values/s of each GGUF dequantizer on one\n"
	"                                          core (MVALUES million values a run, default 64)\n"
	"       modelfs-gen resident FILE          bytes of FILE in the page cache\n"
	"       modelfs-gen evict FILE             drop FILE's clean pages from the page cache\n"
	"       modelfs-gen folios FILE            mean KiB of the page-cache folios holding FILE\n"
	"                                          (its first 256 MiB; 0 when /proc/kpageflags is\n"
	"                                          not readable)\n"
	"Test files come from $MFS_TEST_DATA (default " MFS_TEST_DATA_DIR ").\n";

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "modelfs-gen: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static const char *test_file(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("MFS_TEST_DATA");
	snprintf(buf, sizeof(buf), "%s/%s", root ? root : MFS_TEST_DATA_DIR, rel);
	return buf;
}

/* Whole file into memory; NULL with *len 0 if it does not exist. */
static uint8_t *load(const char *path, size_t *len, int must)
{
	*len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (must)
			die("cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) < 0)
		die("cannot stat %s: %s", path, strerror(errno));
	uint8_t *buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		die("out of memory reading %s", path);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0)
			die("cannot read %s: %s", path, n < 0 ? strerror(errno) : "short read");
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

static void write_all(int fd, const void *buf, size_t len, const char *path)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("cannot write %s: %s", path, strerror(errno));
		p += n;
		len -= (size_t)n;
	}
}

/* ---- values generated on the fly ------------------------------------------ */

static uint64_t mix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Element i, little-endian: weights of a trained layer look like this, small
 * values with every mantissa bit used (about 9 significant digits as float32
 * text, 17 as float64). */
static void element(uint64_t i, unsigned es, uint8_t out[8])
{
	uint64_t h = mix64(i);
	if (es == 4) {
		float v = (float)(int32_t)(uint32_t)(h >> 32) * (0.05f / 2147483648.0f);
		memcpy(out, &v, 4);
	} else {
		double v = (double)(int64_t)h * (0.05 / 9223372036854775808.0);
		memcpy(out, &v, 8);
	}
}

/* A .npy file of rows x COLS elements, generated as it is read. */
struct npy_gen {
	char head[128];
	size_t hlen;
	unsigned es;
	uint64_t size;
};

static void npy_init(struct npy_gen *g, unsigned es, uint64_t rows, int fortran)
{
	char dict[100];
	int n = snprintf(dict, sizeof(dict),
			 "{'descr': '<f%u', 'fortran_order': %s, 'shape': (%llu, %u), }", es,
			 fortran ? "True" : "False", (unsigned long long)rows, COLS);
	size_t total = 10 + (size_t)n + 1;
	total = (total + 63) / 64 * 64;
	memcpy(g->head, "\x93NUMPY\x01\x00", 8);
	g->head[8] = (char)((total - 10) & 0xff);
	g->head[9] = (char)((total - 10) >> 8);
	memset(g->head + 10, ' ', total - 10);
	memcpy(g->head + 10, dict, (size_t)n);
	g->head[total - 1] = '\n';
	g->hlen = total;
	g->es = es;
	g->size = total + rows * COLS * es;
}

/* struct mfs_content's read: header bytes, then elements (the order does not
 * matter: any values will do, as long as they are the same every time). */
static int npy_read(void *ctx, uint64_t off, size_t len, void *buf)
{
	const struct npy_gen *g = ctx;
	uint8_t *out = buf;
	while (len && off < g->hlen) {
		*out++ = (uint8_t)g->head[off++];
		len--;
	}
	uint64_t pos = off - g->hlen;
	while (len) {
		uint8_t e[8];
		unsigned in = (unsigned)(pos % g->es);
		element(pos / g->es, g->es, e);
		size_t n = g->es - in < len ? g->es - in : len;
		memcpy(out, e + in, n);
		out += n;
		pos += n;
		len -= n;
	}
	return 0;
}

/* ---- one tensor reshaped to about MIB MiB --------------------------------- */

struct format {
	const char *name;
	const char *src;     /* under tests/data */
	const char *tensor;  /* the tensor directory ("" = the model directory) */
	unsigned es;         /* element size the tensor gets */
};

static const struct format formats[] = {
	{"primitiv", "primitiv/param_2x3_nostats.param", "value", 4},
	{"tennis", "tennis/convnet_small.tsm", "nodes/0/params/value", 4},
	{"daphne", "daphne/generated/dense_f32_3x4.dbdf", "", 4},
	{"pmat", "plearn/pmat/linear_4x_2y.pmat", "", 8},
};

static const struct format *find_format(const char *name, uint64_t *mib)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		size_t n = strlen(formats[i].name);
		if (strncmp(name, formats[i].name, n) != 0)
			continue;
		if (name[n] == '\0')
			return &formats[i];
		if (strcmp(name + n, "-1g") == 0) {
			*mib = 1024;
			return &formats[i];
		}
	}
	return NULL;
}

static mfs_id view_of(const struct mfs_model *m, const char *tensor, const char *view)
{
	char path[256];
	snprintf(path, sizeof(path), "%s%s%s", tensor, *tensor ? "/" : "", view);
	return mfs_resolve(m, path);
}

/* Open a written file again with the codec, as modelfs will, and check the
 * tensor's element count. */
static void check_output(const char *out, const struct format *f, uint64_t nelem)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s", out);
	char *slash = strrchr(dir, '/');
	const char *name = out;
	if (slash) {
		*slash = '\0';
		name = slash + 1;
	} else {
		snprintf(dir, sizeof(dir), ".");
	}
	int dfd = open(*dir ? dir : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		die("cannot open %s: %s", dir, strerror(errno));
	struct mfs_model *m;
	struct mfs_err err = {0};
	if (mfs_model_open(&m, dfd, name, NULL, &err) < 0)
		die("%s does not open again: %s", out, err.msg);
	mfs_id id = view_of(m, f->tensor, "data");
	const struct mfs_tensor *t = id == MFS_NONE ? NULL : mfs_node_tensor(m, id);
	if (!t || t->nelem != nelem)
		die("%s opens, but its tensor %s does not have the new shape", out, f->tensor);
	printf("%s: %s, %u tensors, tensor '%s' %llu x %llu %s\n", out, m->codec->name,
	       m->ntensors, f->tensor, (unsigned long long)t->dims[0],
	       (unsigned long long)t->dims[1], f->es == 4 ? "float32" : "float64");
	mfs_model_free(m);
	close(dfd);
}

static int gen_tensor(const struct format *f, const char *out, uint64_t mib)
{
	size_t len, side_len;
	const char *src = test_file(f->src);
	uint8_t *buf = load(src, &len, 1);
	char sp[4200];
	const char *name = strrchr(f->src, '/') + 1;
	const struct mfs_codec *c = mfs_probe(buf, len < MFS_HEAD_MAX ? len : MFS_HEAD_MAX, len,
					      name);
	if (!c)
		die("%s is not recognised by any codec", src);
	snprintf(sp, sizeof(sp), "%s%s", src, c->sidecar ? c->sidecar : "");
	uint8_t *side = c->sidecar ? load(sp, &side_len, 0) : NULL;
	struct mfs_model *m;
	struct mfs_err err = {0};
	if (mfs_model_open_mem(&m, buf, len, name, side, side ? side_len : 0, c, &err) < 0)
		die("cannot open %s: %s", src, err.msg);
	mfs_id npy = view_of(m, f->tensor, "data.npy");
	if (npy == MFS_NONE)
		die("%s has no tensor at '%s'", src, f->tensor);
	const struct mfs_tensor *t = mfs_node_tensor(m, npy);

	uint64_t nelem = (mib << 20) / f->es;
	struct npy_gen g;
	npy_init(&g, f->es, nelem / COLS, t->order == MFS_COL_MAJOR);
	struct mfs_content content = {.size = g.size, .read = npy_read, .ctx = &g};
	struct mfs_patch p;
	mfs_patch_init(&p);
	int r = mfs_view_write(m, npy, &content, &p, &err);
	if (r != 0)
		die("reshaping %s through data.npy failed: %s", src, r > 0 ? "nothing changed" : err.msg);

	/* Stream the patched source out in pieces (the patch holds the new
	 * tensor once; the output is never held whole). */
	uint64_t size = mfs_patch_new_size(&p, m->size);
	int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		die("cannot create %s: %s", out, strerror(errno));
	uint8_t *chunk = malloc(CHUNK);
	if (!chunk)
		die("out of memory");
	for (uint64_t off = 0; off < size; off += CHUNK) {
		uint64_t n = size - off < CHUNK ? size - off : CHUNK;
		mfs_patch_read(&p, m->base, m->size, off, n, chunk);
		write_all(fd, chunk, (size_t)n, out);
	}
	if (close(fd) < 0)
		die("cannot write %s: %s", out, strerror(errno));
	free(chunk);
	if (c->sidecar && (p.has_sidecar || side)) {
		snprintf(sp, sizeof(sp), "%s%s", out, c->sidecar);
		fd = open(sp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die("cannot create %s: %s", sp, strerror(errno));
		if (p.has_sidecar)
			write_all(fd, p.sidecar, p.sidecar_len, sp);
		else
			write_all(fd, side, side_len, sp);
		close(fd);
	}
	mfs_patch_free(&p);
	mfs_model_free(m);
	free(buf);
	free(side);
	check_output(out, f, nelem);
	return 0;
}

/* ---- a primitiv model of many small parameters ---------------------------- */

/* Model: ce N, N x (array<str> key path, Parameter); Parameter: Tensor value
 * (Shape: fixarray of ce dims, ce batch; bin payload), ce 0 stats. Every
 * uint32 in the 5-byte form, as primitiv writes and requires; bin and str
 * headers in the shortest form (msgpack-c's own choice). */
static int pack_model(msgpack_packer *pk, uint32_t n)
{
	static const uint32_t shapes[4][4] = {{1, 16}, {2, 4, 4}, {2, 2, 8}, {3, 2, 2, 4}};
	int r = msgpack_pack_fix_uint32(pk, 0);
	r |= msgpack_pack_fix_uint32(pk, 1);
	r |= msgpack_pack_fix_uint32(pk, 0x300);
	r |= msgpack_pack_fix_uint32(pk, n);
	for (uint32_t i = 0; i < n && r == 0; i++) {
		char layer[16], param[16];
		int ll = snprintf(layer, sizeof(layer), "layer%04u", i / 100);
		int pl = snprintf(param, sizeof(param), "w%02u", i % 100);
		r |= msgpack_pack_array(pk, 2);
		r |= msgpack_pack_str(pk, (size_t)ll);
		r |= msgpack_pack_str_body(pk, layer, (size_t)ll);
		r |= msgpack_pack_str(pk, (size_t)pl);
		r |= msgpack_pack_str_body(pk, param, (size_t)pl);
		const uint32_t *s = shapes[i % 4];
		r |= msgpack_pack_array(pk, s[0]);
		for (uint32_t d = 1; d <= s[0]; d++)
			r |= msgpack_pack_fix_uint32(pk, s[d]);
		r |= msgpack_pack_fix_uint32(pk, 1);   /* batch */
		uint8_t data[16 * 4];
		for (uint64_t k = 0; k < 16; k++)
			element((uint64_t)i * 16 + k, 4, data + k * 4);
		r |= msgpack_pack_bin(pk, sizeof(data));
		r |= msgpack_pack_bin_body(pk, data, sizeof(data));
		r |= msgpack_pack_fix_uint32(pk, 0);   /* no stats */
	}
	return r;
}

static int gen_primitiv_many(const char *out, uint32_t n)
{
	FILE *f = fopen(out, "wb");
	if (!f)
		die("cannot create %s: %s", out, strerror(errno));
	msgpack_packer pk;
	msgpack_packer_init(&pk, f, msgpack_fbuffer_write);
	if (pack_model(&pk, n) != 0 || fclose(f) != 0)
		die("cannot write %s: %s", out, strerror(errno));
	/* It must open with the codec, with every tensor. */
	size_t len;
	uint8_t *buf = load(out, &len, 1);
	struct mfs_model *m;
	struct mfs_err err = {0};
	const char *name = strrchr(out, '/') ? strrchr(out, '/') + 1 : out;
	if (mfs_model_open_mem(&m, buf, len, name, NULL, 0, NULL, &err) < 0)
		die("%s does not open: %s", out, err.msg);
	if (m->ntensors != n || mfs_resolve(m, "params/layer0000/w00/value/values.txt") == MFS_NONE)
		die("%s opens, but not with the tensors written", out);
	printf("%s: %s, %u tensors, %u nodes, %zu bytes\n", out, m->codec->name, m->ntensors,
	       m->nnodes, len);
	mfs_model_free(m);
	free(buf);
	return 0;
}

/* ---- a directory of small models ----------------------------------------- */

static int gen_copies(const char *dir, unsigned long n)
{
	size_t len;
	uint8_t *buf = load(test_file("primitiv/mlp_adam_2steps.model"), &len, 1);
	if (mkdir(dir, 0755) < 0 && errno != EEXIST)
		die("cannot create %s: %s", dir, strerror(errno));
	for (unsigned long i = 0; i < n; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/model_%05lu.model", dir, i);
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0)
			die("cannot create %s: %s", path, strerror(errno));
		write_all(fd, buf, len, path);
		close(fd);
	}
	printf("%s: %lu copies of mlp_adam_2steps.model (%zu bytes each)\n", dir, n, len);
	free(buf);
	return 0;
}

/* ---- page cache ------------------------------------------------------------ */

static int resident(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open %s: %s", path, strerror(errno));
	if (st.st_size == 0) {
		printf("0\n");
		return 0;
	}
	/* Mapping a file does not read it: mincore reports what is cached. */
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("cannot map %s: %s", path, strerror(errno));
	long pg = sysconf(_SC_PAGESIZE);
	size_t npages = ((size_t)st.st_size + (size_t)pg - 1) / (size_t)pg;
	unsigned char *vec = malloc(npages);
	if (!vec || mincore(p, (size_t)st.st_size, vec) < 0)
		die("mincore %s: %s", path, strerror(errno));
	unsigned long long in = 0;
	for (size_t i = 0; i < npages; i++)
		in += vec[i] & 1;
	printf("%llu\n", in * (unsigned long long)pg);
	free(vec);
	munmap(p, (size_t)st.st_size);
	close(fd);
	return 0;
}

static int evict(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die("cannot open %s: %s", path, strerror(errno));
	/* Only clean pages can be dropped: write back what was just written. */
	if (fdatasync(fd) < 0)
		die("fdatasync %s: %s", path, strerror(errno));
	int r = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	if (r != 0)
		die("posix_fadvise %s: %s", path, strerror(r));
	close(fd);
	return 0;
}

/* The mean size of the folios that cache the file's first 256 MiB, from the
 * page frames /proc/self/pagemap gives for a mapping of it and their flags
 * in /proc/kpageflags (both need CAP_SYS_ADMIN). A cached file's pages are
 * mapped as they are; one not cached is read in by the faults. A copy per
 * folio rather than per page is what makes a re-read of ext4's large
 * folios faster than one of 4 KiB pages. */
static int folios(const char *path)
{
	enum { KPF_HEAD = 15, KPF_TAIL = 16 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		die("cannot open %s: %s", path, strerror(errno));
	size_t len = (size_t)st.st_size < (256u << 20) ? (size_t)st.st_size : (256u << 20);
	long pg = sysconf(_SC_PAGESIZE);
	int pm = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	int kf = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (len == 0 || pm < 0 || kf < 0) {
		printf("0\n");
		return 0;
	}
	volatile unsigned char *p = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		die("cannot map %s: %s", path, strerror(errno));
	unsigned sum = 0;
	for (size_t o = 0; o < len; o += (size_t)pg)
		sum += p[o];
	(void)sum;
	size_t npages = len / (size_t)pg, pages = 0, starts = 0;
	for (size_t k = 0; k < npages; k++) {
		uint64_t e, f;
		off_t at = (off_t)(((uintptr_t)p / (uintptr_t)pg + k) * 8);
		if (pread(pm, &e, 8, at) != 8 || !(e >> 63) || !(e & ((1ull << 55) - 1)))
			continue;  /* not present, or no frame numbers for us */
		if (pread(kf, &f, 8, (off_t)((e & ((1ull << 55) - 1)) * 8)) != 8)
			continue;
		pages++;
		starts += !(f & (1ull << KPF_TAIL));
	}
	printf("%.1f\n", starts ? (double)pages * (double)pg / 1024.0 / (double)starts : 0.0);
	munmap((void *)p, len);
	close(pm);
	close(kf);
	close(fd);
	return 0;
}

static uint64_t number(const char *s, const char *what)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || end == s || v == 0)
		die("bad %s '%s'", what, s);
	return v;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && argc <= 3 && strcmp(argv[1], "dequant-speed") == 0)
		return dq_speed(argc == 3 ? number(argv[2], "count") : 64);
	if (argc < 3) {
		fputs(usage, stderr);
		return 2;
	}
	const char *cmd = argv[1], *arg = argv[2];
	if (strcmp(cmd, "resident") == 0)
		return resident(arg);
	if (strcmp(cmd, "evict") == 0)
		return evict(arg);
	if (strcmp(cmd, "folios") == 0)
		return folios(arg);
	if (strcmp(cmd, "safetensors-sample") == 0 && argc == 3)
		return gen_st_sample(arg);
	if (strcmp(cmd, "copies") == 0 && argc == 4)
		return gen_copies(arg, (unsigned long)number(argv[3], "count"));
	if (strcmp(cmd, "primitiv-100k") == 0 && argc <= 4) {
		uint64_t n = argc == 4 ? number(argv[3], "count") : 100000;
		if (n > UINT32_MAX)
			die("too many parameters: %s", argv[3]);
		return gen_primitiv_many(arg, (uint32_t)n);
	}
	uint64_t mib = 1024;
	const struct format *f = find_format(cmd, &mib);
	if (f && argc <= 4) {
		if (argc == 4)
			mib = number(argv[3], "size in MiB");
		return gen_tensor(f, arg, mib);
	}
	fputs(usage, stderr);
	return 2;
}
