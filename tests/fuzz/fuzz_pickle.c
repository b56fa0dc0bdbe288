/* libFuzzer target for the restricted pickle reader alone
 * (codecs/pytorch/pickle.h): any bytes are parsed; a refusal carries a
 * message, and a parsed pickle's values are all walked (every cell and
 * reference inside the tables, every string inside the bytes) and written
 * as Python's repr. Under gcc it is linked to replay.c instead. */
#include <stdio.h>
#include <stdlib.h>

#include "pickle.h"
#include "pt_repr.h"

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_pickle: %s\n", what);
		abort();
	}
}

static void walk(const struct pk *pk)
{
	check(pk->root < pk->nv, "the root is not a value");
	for (uint32_t i = 0; i < pk->nv; i++) {
		const struct pk_val *v = &pk->v[i];
		uint32_t n = 0;
		for (uint32_t c = v->head; c != PK_NIL; c = pk->c[c].next, n++)
			check(c < pk->nc && pk->c[c].v < pk->nv, "a cell outside the tables");
		check(n == v->n, "a container's count is not its cells'");
		uint32_t refs[3] = {v->a, v->b, v->c};
		for (int k = 0; k < 3; k++)
			check(refs[k] == PK_NIL || refs[k] < pk->nv, "a reference outside the table");
		check(v->off + v->len <= pk->size, "a value's span beyond the pickle");
		if (v->kind == PK_STR || v->kind == PK_BYTES || v->kind == PK_LONG) {
			uint64_t lim = (v->flags & PK_F_TEXT) ? pk->ntext : pk->size;
			check(v->u.s.off + v->u.s.len <= lim, "a string beyond its bytes");
		}
	}
	check(pk->nv <= pk->size + 1 && pk->nc <= pk->size, "more values than bytes");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pk pk;
	struct mfs_err err = {0};
	int r = pk_parse(&pk, data, size, NULL, &err);
	if (r < 0) {
		check(err.msg[0] != '\0', "a refusal without a message");
	} else {
		walk(&pk);
		struct pt_repr rp;
		pt_repr_init(&rp, pk.nv);
		const char *s;
		size_t n;
		pt_repr(&rp, &pk, pk.root, &s, &n, &err);
		pt_repr_free(&rp);
	}
	pk_free(&pk);
	return 0;
}
