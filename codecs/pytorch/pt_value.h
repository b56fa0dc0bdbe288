/* A pickled scalar given a new value (pt_value.c): the text a user wrote
 * parsed as the value's own Python type, encoded as the opcode of the
 * same family (text opcodes for protocol 0's, binary ones otherwise), and
 * the pickle's bytes made again with only that opcode replaced. */
#ifndef MFS_PT_VALUE_H
#define MFS_PT_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "pickle.h"

/* The pickle pk with value v (a PK_INT, PK_LONG, PK_BOOL, PK_FLOAT, PK_STR
 * or PK_BYTES) set to the value of text[0, len): its new bytes into *out
 * (malloc'd) and *outlen. Every other value keeps its value: the places
 * that took v from the memo (GET) get v's old opcode in place of the GET,
 * and a FRAME around a changed opcode its new length. 0, or -EINVAL (not
 * a value of that type) / -ERANGE (a float beyond float64) with a message,
 * -ENOMEM. */
int pt_value_rewrite(const struct pk *pk, uint32_t v, const char *text, size_t len,
		     uint8_t **out, uint64_t *outlen, struct mfs_err *err);

#endif
