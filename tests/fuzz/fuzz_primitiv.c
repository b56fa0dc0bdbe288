/* libFuzzer target for the primitiv codec: open, walk, rewrite and edit a model
 * in memory (fuzz_common.c). Under gcc it is linked to replay.c instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_primitiv;

static const char *const names[] = {"fuzz.model"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_primitiv,
	.names = names,
	.nnames = sizeof(names) / sizeof(names[0]),
	.sidecar = false,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
