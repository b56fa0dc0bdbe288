/* libFuzzer target for the DAPHNE codec: open (with a .meta sidecar split off
 * the input), walk, rewrite and edit a model in memory (fuzz_common.c). Under
 * gcc it is linked to replay.c instead. */
#include "fuzz_common.h"

extern const struct mfs_codec mfs_codec_daphne;

static const char *const names[] = {"fuzz.dbdf"};

static const struct fuzz_target target = {
	.codec = &mfs_codec_daphne,
	.names = names,
	.nnames = sizeof(names) / sizeof(names[0]),
	.sidecar = true,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(&target, data, size);
}
