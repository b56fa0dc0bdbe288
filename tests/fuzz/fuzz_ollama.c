/* libFuzzer target for the Ollama manifest codec: open and walk a
 * manifest in memory (fuzz_common.c). Under gcc it is linked to replay.c
 * instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_ollama;

static const char *const names[] = {"latest"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_ollama,
	.names = names,
	.nnames = sizeof(names) / sizeof(names[0]),
	.sidecar = false,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
