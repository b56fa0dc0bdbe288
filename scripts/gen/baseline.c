/* baseline: what plain C does with the same numbers, for scripts/bench:
 * snprintf("%.9g" / "%.17g") over raw little-endian floats, the same after
 * a plain dequantization loop of ggml blocks (q8_0, q4_K, written from
 * ggml's format description), strtof / strtod over text, and zlib
 * inflating a raw deflate stream (an .npz member) with its CRC-32. One
 * core; prints values, bytes, seconds and rates. */
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

static const char *usage =
	"usage: baseline fmt32 FILE [MAXBYTES [COLS]]   snprintf(\"%.9g\") over raw float32\n"
	"       baseline fmt64 FILE [MAXBYTES [COLS]]   snprintf(\"%.17g\") over raw float64\n"
	"       baseline parse32 TEXTFILE               strtof over blank-separated text\n"
	"       baseline parse64 TEXTFILE               strtod over blank-separated text\n"
	"       baseline q8_0 FILE [MAXBYTES [COLS]]    ggml q8_0 blocks dequantized, then %.9g\n"
	"       baseline q4_k FILE [MAXBYTES [COLS]]    ggml q4_K blocks dequantized, then %.9g\n"
	"       baseline inflate FILE OFFSET CSIZE      zlib inflating the raw deflate stream at\n"
	"                                               OFFSET (CSIZE bytes) into 1 MiB, with CRC-32\n";

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

/* Inflate the raw deflate stream of csize bytes at off, 1 MiB at a time
 * into one buffer (as a reader streaming a member does), with the CRC-32
 * of what comes out. Reports the bytes produced as values of 4 bytes. */
static int inflate_only(const char *path, uint64_t off, uint64_t csize)
{
	size_t len;
	char *raw = load(path, UINT64_MAX, &len);
	if (off > len || csize > len - off) {
		fprintf(stderr, "baseline: %s holds no %llu bytes at %llu\n", path,
			(unsigned long long)csize, (unsigned long long)off);
		return 1;
	}
	enum { OUT = 1 << 20 };
	unsigned char *out = malloc(OUT);
	z_stream zs = {0};
	if (!out || inflateInit2(&zs, -15) != Z_OK)
		return 1;
	unsigned char *in = (unsigned char *)raw + off;
	uint64_t left = csize, bytes = 0;
	uLong crc = crc32(0, NULL, 0);
	int zr = Z_OK;
	double t0 = now();
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
	double secs = now() - t0;
	inflateEnd(&zs);
	if (zr != Z_STREAM_END) {
		fprintf(stderr, "baseline: %s: the stream at %llu does not inflate (%d)\n", path,
			(unsigned long long)off, zr);
		return 1;
	}
	report(bytes / 4, bytes, secs);
	fprintf(stderr, "crc32 %08lx\n", crc);
	free(out);
	free(raw);
	return 0;
}

int main(int argc, char **argv)
{
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
	if (strcmp(argv[1], "inflate") == 0 && argc == 5)
		return inflate_only(argv[2], strtoull(argv[3], NULL, 10), strtoull(argv[4], NULL, 10));
	if (strcmp(argv[1], "parse32") == 0 && argc == 3)
		return parse(argv[2], 4);
	if (strcmp(argv[1], "parse64") == 0 && argc == 3)
		return parse(argv[2], 8);
	fputs(usage, stderr);
	return 2;
}
