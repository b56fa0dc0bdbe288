/* libFuzzer target for the NumPy codec (.npy and .npz): open, walk, rewrite
 * and edit a file in memory (fuzz_common.c). Under gcc it is linked to
 * replay.c instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_numpy;

/* The script's first byte picks the name: a zip is the codec's only when
 * called .npz. */
static const char *const names[] = {"fuzz.npy", "fuzz.npz"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_numpy,
	.names = names,
	.nnames = sizeof(names) / sizeof(names[0]),
	.sidecar = false,
	.lazy = true,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
