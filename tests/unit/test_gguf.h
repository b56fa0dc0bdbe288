/* Helpers of the GGUF unit tests: a GGUF writer following the public
 * specification (ggml's docs/gguf.md), independent of the codec. */
#ifndef TEST_GGUF_H
#define TEST_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "helpers.h"

struct gw {
	uint8_t *kv;          /* key-value bytes so far */
	size_t kvlen, nkv;
	uint8_t *ti;          /* tensor infos so far */
	size_t tilen, nti;
	uint8_t *data;        /* tensor data (relative offsets) */
	size_t datalen;
	uint32_t align;
	uint32_t version;
};

void gw_init(struct gw *w, uint32_t align);
/* Raw bytes appended to the key-value section (a value after gw_key). */
void gw_bytes(struct gw *w, const void *p, size_t n);
void gw_u32(struct gw *w, uint32_t v);
void gw_u64(struct gw *w, uint64_t v);
void gw_str(struct gw *w, const char *s, size_t n);
/* A key and its value type. */
void gw_key(struct gw *w, const char *key, uint32_t vt);
/* A whole string pair. */
void gw_kv_str(struct gw *w, const char *key, const char *val);
/* A tensor of ggml type ty with dims ne (GGUF order) and raw bytes. */
void gw_tensor(struct gw *w, const char *name, uint32_t ty, uint32_t ndim, const uint64_t *ne,
	       const void *raw, size_t n);
/* The file (caller frees); general.alignment is added first when align != 32. */
uint8_t *gw_finish(struct gw *w, size_t *len);

/* Half-float bits of small exact values used by the tests. */
#define H_1 0x3C00u
#define H_2 0x4000u
#define H_HALF 0x3800u
#define H_QUARTER 0x3400u
#define H_M1 0xBC00u

#endif
