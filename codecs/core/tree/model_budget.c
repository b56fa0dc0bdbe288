/* What a model's index holds, charged to its runtime's index budget
 * (runtime.h): the tree's arrays, hash tables and arena, each charged
 * before it grows, and what a codec holds while it opens the model
 * (mfs_model_charge). A model without a runtime counts what it holds, and
 * is charged for it, unrefused, when it is given one. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "model_impl.h"
#include "runtime_impl.h"

static bool take(struct mfs_runtime *rt, uint64_t bytes)
{
	uint64_t used = atomic_load(&rt->index_used), now;
	do {
		if (!mfs_add_ok(used, bytes, &now) || now > rt->index_budget)
			return false;
	} while (!atomic_compare_exchange_weak(&rt->index_used, &used, now));
	return true;
}

bool mfs_model_charge(struct mfs_model *m, int64_t bytes)
{
	struct mfs_model_impl *im = m->impl;
	if (bytes < 0) {
		uint64_t b = (uint64_t)-bytes;
		if (b > im->charged)
			b = im->charged;
		im->charged -= b;
		if (m->rt)
			atomic_fetch_sub(&m->rt->index_used, b);
		return true;
	}
	if (m->rt && !take(m->rt, (uint64_t)bytes)) {
		char msg[160];
		snprintf(msg, sizeof(msg), "out of memory for indexes: %llu bytes more would take "
			 "those of open models over their limit of %llu (max_index)",
			 (unsigned long long)bytes, (unsigned long long)m->rt->index_budget);
		mfs_model_fail(m, ENOMEM, msg);
		return false;
	}
	im->charged += (uint64_t)bytes;
	return true;
}

bool mfs_model_charge_growth(struct mfs_model *m, size_t cap, size_t newcap, size_t elem)
{
	if (newcap <= cap)
		return true;
	uint64_t b;
	if (!mfs_mul_ok(newcap - cap, elem, &b) || b > INT64_MAX) {
		mfs_model_fail(m, ENOMEM, "out of memory");
		return false;
	}
	return mfs_model_charge(m, (int64_t)b);
}

/* The arena its nodes and names live in, charged before it grows. */
void *mfs_model_alloc(struct mfs_model *m, size_t size)
{
	struct mfs_arena *a = &m->impl->arena;
	size_t grows = mfs_arena_growth(a, size ? size : 1);
	if (grows && (grows > INT64_MAX || !mfs_model_charge(m, (int64_t)grows))) {
		mfs_model_fail(m, ENOMEM, "out of memory");
		return NULL;
	}
	void *p = mfs_arena_alloc(a, size ? size : 1);
	if (!p)
		mfs_model_fail(m, ENOMEM, "out of memory");
	return p;
}

char *mfs_model_strdup(struct mfs_model *m, const char *s, size_t len)
{
	if (len == SIZE_MAX)
		return NULL;
	char *p = mfs_model_alloc(m, len + 1);
	if (p) {
		memcpy(p, s, len);
		p[len] = '\0';
	}
	return p;
}

void mfs_model_set_runtime(struct mfs_model *m, struct mfs_runtime *rt)
{
	if (!m->rt && rt)
		atomic_fetch_add(&rt->index_used, m->impl->charged);
	m->rt = rt;
}

void mfs_model_uncharge(struct mfs_model *m)
{
	mfs_model_charge(m, -(int64_t)m->impl->charged);
}
