/* modelfs-gen dequant-speed (dq_speed.c). */
#ifndef MFS_GEN_DQ_SPEED_H
#define MFS_GEN_DQ_SPEED_H

#include <stdint.h>

/* Dequantize at least mvalues million values of each GGUF type that has a
 * dequantizer, three times, and print the best rate of each; 0, or 1 with
 * a message. */
int dq_speed(uint64_t mvalues);

#endif
