/* baseline: what plain C does with the same numbers, for scripts/bench:
 * snprintf("%.9g" / "%.17g") over raw little-endian floats, the same after
 * a plain dequantization loop of ggml blocks (q8_0, q4_K, written from
 * ggml's format description), strtof / strtod over text, and zlib or
 * ISA-L inflating a raw deflate stream (an .npz member) with its CRC-32.
 * One core; prints values, bytes, seconds and rates. */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

static const char *usage =
	"usage: baseline fmt32 FILE [MAXBYTES [COLS]]   snprintf(\"%.9g\") over raw float32\n"
	"       baseline fmt64 FILE [MAXBYTES [COLS]]   snprintf(\"%.17g\") over raw float64\n"
	"       baseline parse32 TEXTFILE               strtof over blank-separated text\n"
	"       baseline parse64 TEXTFILE               strtod over blank-separated text\n"
	"       baseline q8_0 FILE [MAXBYTES [COLS]]    ggml q8_0 blocks dequantized, then %.9g\n"
	"       baseline q4_k FILE [MAXBYTES [COLS]]    ggml q4_K blocks dequantized, then %.9g\n"
	"       baseline inflate FILE OFFSET CSIZE [LIB] zlib (LIB zlib, the default) or ISA-L\n"
	"                                               (isal) inflating the raw deflate stream at\n"
	"                                               OFFSET (CSIZE bytes) into 1 MiB, with CRC-32\n"
	"       baseline deflate FILE LIB LEVEL         zlib or ISA-L (isal) deflating FILE at LEVEL,\n"
	"                                               256 KiB in, 64 KiB out at a time (CPU time)\n";

/* Up to max bytes of a file into memory (NUL-terminated). */
static char *load(const char *path, uint64_t max, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "baseline: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	size_t want = (uint64_t)st.st_size < max ? (size_t)st.st_size : (size_t)max;
	char *buf = malloc(want + 1);
	size_t got = 0;
	while (buf && got < want) {
		ssize_t n = read(fd, buf + got, want - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (!buf || got != want) {
		fprintf(stderr, "baseline: cannot read %s\n", path);
		exit(1);
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* This thread's CPU time: the loaded machine's wall clock aside. */
static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void report(uint64_t values, uint64_t bytes, double secs)
{
	printf("values=%llu bytes=%llu seconds=%.6f values_per_s=%.0f mb_per_s=%.2f\n",
	       (unsigned long long)values, (unsigned long long)bytes, secs,
	       (double)values / secs, (double)bytes / secs / 1e6);
}

/* Text as values.txt lays it out (COLS values a line, one space between),
 * into a 1 MiB buffer that is reused: only the formatting is measured. */
static int fmt(const char *path, unsigned es, uint64_t max, uint64_t cols)
{
	size_t len;
	char *raw = load(path, max, &len);
	uint64_t n = len / es, bytes = 0;
	enum { OUT = 1 << 20 };
	char *out = malloc(OUT);
	size_t used = 0;
	double t0 = now();
	for (uint64_t i = 0; i < n; i++) {
		if (used > OUT - 64) {
			bytes += used;
			used = 0;
		}
		int w;
		if (es == 4) {
			float v;
			memcpy(&v, raw + i * 4, 4);
			w = snprintf(out + used, 64, "%.9g", (double)v);
		} else {
			double v;
			memcpy(&v, raw + i * 8, 8);
			w = snprintf(out + used, 64, "%.17g", v);
		}
		used += (size_t)w;
		out[used++] = (i + 1) % cols ? ' ' : '\n';
	}
	bytes += used;
	report(n, bytes, now() - t0);
	free(out);
	free(raw);
	return 0;
}

static float half(const uint8_t *p)
{
	unsigned h = (unsigned)p[0] | (unsigned)p[1] << 8;
	unsigned e = (h >> 10) & 31, f = h & 1023;
	float v = e == 0 ? (float)f * 0x1p-24f
		: e == 31 ? (f ? __builtin_nanf("") : __builtin_inff())
		: (float)(f | 1024) * (float)(1u << e) * 0x1p-25f;
	return h & 0x8000 ? -v : v;
}

/* One block of q8_0 (f16 scale, 32 int8) or q4_K (f16 d and dmin, 12 bytes
 * of 6-bit scales and mins, 128 bytes of 4-bit values) to floats. */
static void dequant_q8_0(const uint8_t *b, float *y)
{
	float d = half(b);
	for (int i = 0; i < 32; i++)
		y[i] = d * (float)(int8_t)b[2 + i];
}

static void scale_min(int j, const uint8_t *q, unsigned *sc, unsigned *mn)
{
	if (j < 4) {
		*sc = q[j] & 63;
		*mn = q[j + 4] & 63;
	} else {
		*sc = (q[j + 4] & 15) | (q[j - 4] >> 6) << 4;
		*mn = (q[j + 4] >> 4) | (q[j] >> 6) << 4;
	}
}

static void dequant_q4_k(const uint8_t *b, float *y)
{
	float d = half(b), dmin = half(b + 2);
	const uint8_t *scales = b + 4, *q = b + 16;
	for (int j = 0; j < 8; j += 2, q += 32, y += 64) {
		unsigned s0, m0, s1, m1;
		scale_min(j, scales, &s0, &m0);
		scale_min(j + 1, scales, &s1, &m1);
		for (int l = 0; l < 32; l++) {
			y[l] = d * (float)s0 * (float)(q[l] & 15) - dmin * (float)m0;
			y[32 + l] = d * (float)s1 * (float)(q[l] >> 4) - dmin * (float)m1;
		}
	}
}

static int dequant_fmt(const char *path, bool k4, uint64_t max, uint64_t cols)
{
	size_t len;
	char *raw = load(path, max, &len);
	size_t bs = k4 ? 144 : 34, per = k4 ? 256 : 32;
	uint64_t nb = len / bs, bytes = 0, i = 0;
	enum { OUT = 1 << 20 };
	char *out = malloc(OUT);
	size_t used = 0;
	float y[256];
	bool show = getenv("BASELINE_SHOW") != NULL;  /* the text to stderr, to check it */
	double t0 = now();
	for (uint64_t b = 0; b < nb; b++) {
		if (k4)
			dequant_q4_k((const uint8_t *)raw + b * bs, y);
		else
			dequant_q8_0((const uint8_t *)raw + b * bs, y);
		for (size_t k = 0; k < per; k++, i++) {
			if (used > OUT - 64) {
				if (show)
					fwrite(out, 1, used, stderr);
				bytes += used;
				used = 0;
			}
			used += (size_t)snprintf(out + used, 64, "%.9g", (double)y[k]);
			out[used++] = (i + 1) % cols ? ' ' : '\n';
		}
	}
	if (show)
		fwrite(out, 1, used, stderr);
	bytes += used;
	report(i, bytes, now() - t0);
	free(out);
	free(raw);
	return 0;
}

static int parse(const char *path, unsigned es)
{
	size_t len;
	char *text = load(path, UINT64_MAX, &len);
	uint64_t n = 0;
	double sum = 0;
	char *p = text, *end;
	double t0 = now();
	for (;;) {
		double v = es == 4 ? (double)strtof(p, &end) : strtod(p, &end);
		if (end == p)
			break;
		sum += v;
		n++;
		p = end;
	}
	double secs = now() - t0;
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	if (*p) {
		fprintf(stderr, "baseline: %s: not a number at byte %zu\n", path, (size_t)(p - text));
		return 1;
	}
	report(n, len, secs);
	fprintf(stderr, "checksum %g\n", sum);
	free(text);
	return 0;
}

enum { INFLATE_OUT = 1 << 20 };

#ifdef HAVE_ISAL
/* ISA-L's isal_inflate over the stream, computing the CRC-32 as it goes. */
static int inflate_isal(const char *path, unsigned char *in, uint64_t csize, unsigned char *out)
{
	static struct inflate_state st;
	isal_inflate_init(&st);
	st.crc_flag = ISAL_GZIP_NO_HDR;
	uint64_t left = csize, bytes = 0;
	int r = ISAL_DECOMP_OK;
	double t0 = now(), c0 = cpu_now();
	while (r == ISAL_DECOMP_OK && st.block_state != ISAL_BLOCK_FINISH) {
		if (!st.avail_in && left) {
			st.next_in = in;
			st.avail_in = (uint32_t)(left < (1u << 31) ? left : (1u << 31));
			in += st.avail_in;
			left -= st.avail_in;
		} else if (!st.avail_in) {
			break;
		}
		st.next_out = out;
		st.avail_out = INFLATE_OUT;
		r = isal_inflate(&st);
		bytes += INFLATE_OUT - st.avail_out;
	}
	double secs = now() - t0, cpu = cpu_now() - c0;
	if (st.block_state != ISAL_BLOCK_FINISH) {
		fprintf(stderr, "baseline: %s: the stream does not inflate (%d)\n", path, r);
		return 1;
	}
	report(bytes / 4, bytes, secs);
	fprintf(stderr, "crc32 %08x cpu_seconds=%.6f\n", st.crc, cpu);
	return 0;
}
#endif

/* Inflate the raw deflate stream of csize bytes at off, 1 MiB at a time
 * into one buffer (as a reader streaming a member does), with the CRC-32
 * of what comes out, with zlib or (lib "isal") ISA-L. Reports the bytes
 * produced as values of 4 bytes. */
static int inflate_only(const char *path, uint64_t off, uint64_t csize, const char *lib)
{
	size_t len;
	char *raw = load(path, UINT64_MAX, &len);
	if (off > len || csize > len - off) {
		fprintf(stderr, "baseline: %s holds no %llu bytes at %llu\n", path,
			(unsigned long long)csize, (unsigned long long)off);
		return 1;
	}
	enum { OUT = INFLATE_OUT };
	unsigned char *out = malloc(OUT);
	if (!out)
		return 1;
	if (strcmp(lib, "isal") == 0) {
#ifdef HAVE_ISAL
		int r = inflate_isal(path, (unsigned char *)raw + off, csize, out);
		free(out);
		free(raw);
		return r;
#else
		fprintf(stderr, "baseline: built without ISA-L\n");
		return 1;
#endif
	}
	if (strcmp(lib, "zlib") != 0) {
		fputs(usage, stderr);
		return 2;
	}
	z_stream zs = {0};
	if (inflateInit2(&zs, -15) != Z_OK)
		return 1;
	unsigned char *in = (unsigned char *)raw + off;
	uint64_t left = csize, bytes = 0;
	uLong crc = crc32(0, NULL, 0);
	int zr = Z_OK;
	double t0 = now(), c0 = cpu_now();
	while (zr == Z_OK) {
		if (!zs.avail_in && left) {  /* avail_in holds 32 bits */
			zs.next_in = in;
			zs.avail_in = (uInt)(left < UINT32_MAX ? left : UINT32_MAX);
			in += zs.avail_in;
			left -= zs.avail_in;
		}
		zs.next_out = out;
		zs.avail_out = OUT;
		zr = inflate(&zs, Z_NO_FLUSH);
		crc = crc32(crc, out, (uInt)(OUT - zs.avail_out));
		bytes += OUT - zs.avail_out;
	}
	double secs = now() - t0, cpu = cpu_now() - c0;
	inflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		fprintf(stderr, "baseline: %s: the stream at %llu does not inflate (%d)\n", path,
			(unsigned long long)off, zr);
		return 1;
	}
	report(bytes / 4, bytes, secs);
	fprintf(stderr, "crc32 %08lx cpu_seconds=%.6f\n", crc, cpu);
	free(out);
	free(raw);
	return 0;
}

/* Deflate buf (n bytes) as the zip room compresses a rewritten member:
 * 256 KiB of content in, 64 KiB out at a time, raw deflate. *made: the
 * compressed length; the CPU seconds taken. */
enum { DEF_IN = 256 << 10, DEF_OUT = 64 << 10 };

static double deflate_zlib(const unsigned char *buf, uint64_t n, int level, uint64_t *made)
{
	static unsigned char out[DEF_OUT];
	z_stream zs = {0};
	if (deflateInit2(&zs, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		exit(1);
	uint64_t pos = 0, total = 0;
	double t0 = cpu_now();
	int zr = Z_OK;
	while (zr != Z_STREAM_END) {
		if (!zs.avail_in && pos < n) {
			zs.next_in = (Bytef *)buf + pos;
			zs.avail_in = (uInt)(n - pos < DEF_IN ? n - pos : DEF_IN);
			pos += zs.avail_in;
		}
		zs.next_out = out;
		zs.avail_out = DEF_OUT;
		zr = deflate(&zs, pos == n ? Z_FINISH : Z_NO_FLUSH);
		total += DEF_OUT - zs.avail_out;
	}
	double secs = cpu_now() - t0;
	deflateEnd(&zs);
	*made = total;
	return secs;
}

#ifdef HAVE_ISAL
static double deflate_isal(const unsigned char *buf, uint64_t n, int level, uint64_t *made)
{
	static unsigned char out[DEF_OUT];
	static const uint32_t lbuf[] = {ISAL_DEF_LVL0_DEFAULT, ISAL_DEF_LVL1_DEFAULT,
					ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};
	static struct isal_zstream zs;
	isal_deflate_init(&zs);
	zs.level = (uint32_t)level;
	zs.level_buf_size = lbuf[level];
	zs.level_buf = lbuf[level] ? malloc(lbuf[level]) : NULL;
	zs.gzip_flag = IGZIP_DEFLATE;
	uint64_t pos = 0, total = 0;
	double t0 = cpu_now();
	while (zs.internal_state.state != ZSTATE_END) {
		if (!zs.avail_in && pos < n) {
			zs.next_in = (uint8_t *)buf + pos;
			zs.avail_in = (uint32_t)(n - pos < DEF_IN ? n - pos : DEF_IN);
			pos += zs.avail_in;
		}
		zs.end_of_stream = pos == n;
		zs.next_out = out;
		zs.avail_out = DEF_OUT;
		if (isal_deflate(&zs) != COMP_OK)
			exit(1);
		total += DEF_OUT - zs.avail_out;
	}
	double secs = cpu_now() - t0;
	free(zs.level_buf);
	*made = total;
	return secs;
}
#endif

static int deflate_only(const char *path, const char *lib, int level)
{
	size_t len;
	unsigned char *raw = (unsigned char *)load(path, UINT64_MAX, &len);
	uint64_t made = 0;
	double secs;
	if (strcmp(lib, "zlib") == 0 && level >= -1 && level <= 9) {
		secs = deflate_zlib(raw, len, level, &made);
#ifdef HAVE_ISAL
	} else if (strcmp(lib, "isal") == 0 && level >= 0 && level <= ISAL_DEF_MAX_LEVEL) {
		secs = deflate_isal(raw, len, level, &made);
#endif
	} else {
		fputs(usage, stderr);
		return 2;
	}
	printf("bytes=%llu out_bytes=%llu ratio=%.4f seconds=%.6f mb_per_s=%.2f\n",
	       (unsigned long long)len, (unsigned long long)made, (double)made / (double)len, secs,
	       (double)len / secs / 1e6);
	free(raw);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && strcmp(argv[1], "deflate") == 0)
		return deflate_only(argv[2], argv[3], atoi(argv[4]));
	if (argc >= 5 && argc <= 6 && strcmp(argv[1], "inflate") == 0)
		return inflate_only(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10),
				    argc == 6 ? argv[5] : "zlib");
	if (argc < 3 || argc > 5) {
		fputs(usage, stderr);
		return 2;
	}
	uint64_t max = argc > 3 ? strtoull(argv[3], NULL, 10) : UINT64_MAX;
	uint64_t cols = argc > 4 ? strtoull(argv[4], NULL, 10) : 16384;
	if (max == 0)
		max = UINT64_MAX;
	if (cols == 0)
		cols = 1;
	if (strcmp(argv[1], "fmt32") == 0)
		return fmt(argv[2], 4, max, cols);
	if (strcmp(argv[1], "fmt64") == 0)
		return fmt(argv[2], 8, max, cols);
	if (strcmp(argv[1], "q8_0") == 0 || strcmp(argv[1], "q4_k") == 0)
		return dequant_fmt(argv[2], argv[1][1] == '4', max, cols);
	if (strcmp(argv[1], "parse32") == 0 && argc == 3)
		return parse(argv[2], 4);
	if (strcmp(argv[1], "parse64") == 0 && argc == 3)
		return parse(argv[2], 8);
	fputs(usage, stderr);
	return 2;
}
