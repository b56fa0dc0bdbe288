/* The only list of codecs. Order does not decide (the highest bid does); it
 * is the order of the cheapest and most certain bidders first. */
#include <stddef.h>

#include "codec.h"

/* Each codec file defines one table: */
/* extern const struct mfs_codec mfs_codec_<name>; */
extern const struct mfs_codec mfs_codec_primitiv;
extern const struct mfs_codec mfs_codec_tennis;
extern const struct mfs_codec mfs_codec_daphne;
extern const struct mfs_codec mfs_codec_plearn;

const struct mfs_codec *const mfs_codecs[] = {
	&mfs_codec_primitiv,
	&mfs_codec_tennis,
	&mfs_codec_daphne,
	&mfs_codec_plearn,
	NULL,
};
