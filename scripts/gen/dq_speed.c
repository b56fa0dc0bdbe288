/* modelfs-gen dequant-speed: how fast each GGUF dequantizer runs on one
 * core, as the codec calls it (at most 4096 values a call, into a buffer
 * on the stack), over 1 MiB of random blocks (fixed seed) read round and
 * round. Prints one line per type: name and millions of values a second of
 * this thread's CPU time (the best of three runs, so that others' load
 * counts as little as it can). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dq_speed.h"
#include "gguf.h"

#define SRC_BYTES (1u << 20)

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* At least values dequantized from src, 4096 at a time; millions of
 * values a second. */
static double run(const struct ggml_type_info *ty, const uint8_t *src, uint64_t values)
{
	float tmp[4096];
	uint64_t per = sizeof(tmp) / sizeof(tmp[0]) / ty->blck, nsrc = SRC_BYTES / ty->bytes;
	volatile float sink = 0;
	double t0 = cpu_seconds();
	uint64_t done = 0;
	for (uint64_t b = 0; done < values; done += per * ty->blck) {
		if (b + per > nsrc)
			b = 0;
		ty->dequant(src + b * ty->bytes, tmp, per);
		sink += tmp[per * ty->blck - 1];
		b += per;
	}
	(void)sink;
	double t = cpu_seconds() - t0;
	return t > 0 ? (double)done / t / 1e6 : 0;
}

int dq_speed(uint64_t mvalues)
{
	uint8_t *src = malloc(SRC_BYTES);
	if (!src) {
		fprintf(stderr, "modelfs-gen: out of memory\n");
		return 1;
	}
	uint64_t s = 0x2545F4914F6CDD1Dull;
	for (size_t i = 0; i < SRC_BYTES; i++) {
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		src[i] = (uint8_t)(s >> 32);
	}
	printf("type\tMvalues/s\n");
	for (uint32_t id = 0; id < 256; id++) {
		const struct ggml_type_info *ty = mfs_ggml_type(id);
		if (!ty || !ty->dequant)
			continue;
		double best = 0;
		for (int k = 0; k < 3; k++) {
			double r = run(ty, src, mvalues * 1000000);
			best = r > best ? r : best;
		}
		printf("%s\t%.0f\n", ty->name, best);
	}
	free(src);
	return 0;
}
