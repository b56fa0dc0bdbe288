/* The GGUF writer of the unit tests (test_gguf.h), from the specification. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "test_gguf.h"

/* Capacities grow by doubling: a buffer's capacity is the power of two at
 * or above its length (a 100k-string array stays linear, also under ASan,
 * whose realloc always copies). */
static size_t cap_of(size_t len)
{
	size_t c = 64;
	while (c < len)
		c *= 2;
	return c;
}

static void append(uint8_t **buf, size_t *len, const void *p, size_t n)
{
	if (!*buf || cap_of(*len + n + 1) != cap_of(*len + 1)) {
		*buf = realloc(*buf, cap_of(*len + n + 1));
		assert_non_null(*buf);
	}
	if (n)
		memcpy(*buf + *len, p, n);
	*len += n;
}

void gw_init(struct gw *w, uint32_t align)
{
	memset(w, 0, sizeof(*w));
	w->align = align;
	w->version = 3;
}

void gw_bytes(struct gw *w, const void *p, size_t n)
{
	append(&w->kv, &w->kvlen, p, n);
}

void gw_u32(struct gw *w, uint32_t v)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	gw_bytes(w, b, 4);
}

void gw_u64(struct gw *w, uint64_t v)
{
	gw_u32(w, (uint32_t)v);
	gw_u32(w, (uint32_t)(v >> 32));
}

void gw_str(struct gw *w, const char *s, size_t n)
{
	gw_u64(w, n);
	gw_bytes(w, s, n);
}

void gw_key(struct gw *w, const char *key, uint32_t vt)
{
	gw_str(w, key, strlen(key));
	gw_u32(w, vt);
	w->nkv++;
}

void gw_kv_str(struct gw *w, const char *key, const char *val)
{
	gw_key(w, key, 8);
	gw_str(w, val, strlen(val));
}

void gw_tensor(struct gw *w, const char *name, uint32_t ty, uint32_t ndim, const uint64_t *ne,
	       const void *raw, size_t n)
{
	/* The tensor infos are written through the key-value helpers into a
	 * second buffer. */
	uint8_t *kv = w->kv;
	size_t kvlen = w->kvlen, nkv = w->nkv;
	w->kv = w->ti;
	w->kvlen = w->tilen;
	gw_str(w, name, strlen(name));
	gw_u32(w, ndim);
	for (uint32_t i = 0; i < ndim; i++)
		gw_u64(w, ne[i]);
	gw_u32(w, ty);
	while (w->datalen % w->align) {
		uint8_t z = 0;
		append(&w->data, &w->datalen, &z, 1);
	}
	gw_u64(w, w->datalen);
	w->ti = w->kv;
	w->tilen = w->kvlen;
	w->kv = kv;
	w->kvlen = kvlen;
	w->nkv = nkv;
	w->nti++;
	append(&w->data, &w->datalen, raw, n);
}

uint8_t *gw_finish(struct gw *w, size_t *len)
{
	uint8_t *out = NULL;
	size_t n = 0;
	uint8_t head[24] = {'G', 'G', 'U', 'F'};
	size_t nkv = w->nkv + (w->align != 32);
	for (int i = 0; i < 4; i++)
		head[4 + i] = (uint8_t)(w->version >> (8 * i));
	for (int i = 0; i < 8; i++) {
		head[8 + i] = (uint8_t)((uint64_t)w->nti >> (8 * i));
		head[16 + i] = (uint8_t)((uint64_t)nkv >> (8 * i));
	}
	append(&out, &n, head, 24);
	if (w->align != 32) {
		struct gw a;
		gw_init(&a, 32);
		gw_key(&a, "general.alignment", 4);
		gw_u32(&a, w->align);
		append(&out, &n, a.kv, a.kvlen);
		free(a.kv);
	}
	append(&out, &n, w->kv, w->kvlen);
	append(&out, &n, w->ti, w->tilen);
	while (n % w->align) {
		uint8_t z = 0;
		append(&out, &n, &z, 1);
	}
	append(&out, &n, w->data, w->datalen);
	free(w->kv);
	free(w->ti);
	free(w->data);
	*len = n;
	return out;
}
