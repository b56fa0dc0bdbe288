/* The codec table, made from registry.def (one line per codec). */
#include <stddef.h>

#include "codec.h"

#define MFS_CODEC(name) extern const struct mfs_codec mfs_codec_##name;
#include "../../registry.def"
#undef MFS_CODEC

int mfs_name_class_none(const char *name)
{
	(void)name;
	return 0;
}

const struct mfs_codec *const mfs_codecs[] = {
#define MFS_CODEC(name) &mfs_codec_##name,
#include "../../registry.def"
#undef MFS_CODEC
	NULL,
};
