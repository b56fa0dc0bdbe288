/* libFuzzer target for the PyTorch codec (torch.save zips and the legacy
 * stream): open, walk, rewrite and edit a file in memory (fuzz_common.c).
 * Under gcc it is linked to replay.c instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_pytorch;

/* The codec goes by content; the name is the usual one. */
static const char *const names[] = {"fuzz.pt"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_pytorch,
	.names = names,
	.nnames = 1,
	.sidecar = false,
	.lazy = true,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
