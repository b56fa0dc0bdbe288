/* Common code of the libFuzzer targets (one per codec): split an input into a
 * model, an optional sidecar and an edit script, then open, walk, rewrite and
 * edit the model in memory, checking the core's and the codecs' contracts.
 */
#ifndef MFS_FUZZ_COMMON_H
#define MFS_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codec.h"

/* An input is  MODEL [SIDE_MARK SIDECAR] [EDIT_MARK SCRIPT]:  the first
 * EDIT_MARK ends the model (and sidecar); SIDE_MARK is looked for only by
 * targets whose codec has a sidecar. Without a script, one is derived from a
 * hash of the input. tests/fuzz/fuzz.dict gives libFuzzer both marks. */
#define FUZZ_SIDE_MARK "#mfs-fuzz:side#"
#define FUZZ_EDIT_MARK "#mfs-fuzz:edit#"

struct fuzz_target {
	const struct mfs_codec *codec;
	/* File names to open the model under (formats that go by extension);
	 * with more than one, the script's first byte picks one. */
	const char *const *names;
	unsigned nnames;
	bool sidecar;   /* split a sidecar off at FUZZ_SIDE_MARK */
	/* Data is decoded only when read (compressed members): a view of data
	 * that turns out corrupt may fail with EIO after a good open. */
	bool lazy;
};

/* Run one input. Returns 0; a broken contract prints what and aborts. */
int fuzz_one(const struct fuzz_target *ft, const uint8_t *data, size_t size);

/* Defined by each target; called by libFuzzer or by replay.c. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
