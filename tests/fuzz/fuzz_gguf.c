/* libFuzzer target for the GGUF codec: open, walk, rewrite and edit a model
 * in memory (fuzz_common.c). Under gcc it is linked to replay.c instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_gguf;

static const char *const names[] = {"fuzz.gguf"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_gguf,
	.names = names,
	.nnames = sizeof(names) / sizeof(names[0]),
	.sidecar = false,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
