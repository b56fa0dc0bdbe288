/* libFuzzer target for the safetensors codec: open, walk, rewrite and edit
 * a file or a sharded index in memory (fuzz_common.c). Under gcc it is
 * linked to replay.c instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_safetensors;

static const char *const names[] = {"fuzz.safetensors", "fuzz.safetensors.index.json"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_safetensors,
	.names = names,
	.nnames = sizeof(names) / sizeof(names[0]),
	.sidecar = false,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
