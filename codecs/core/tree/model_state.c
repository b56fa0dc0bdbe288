/* A model's state beside its tree: the arena its nodes and names live in,
 * the first failure while building it, problems its open got past, and what
 * the host lends it (the check of a file beside the source; the runtime is
 * model_budget.c's). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model_impl.h"

void mfs_model_fail(struct mfs_model *m, int code, const char *msg)
{
	if (!m->impl->build_err) {
		m->impl->build_err = code;
		snprintf(m->impl->build_msg, sizeof(m->impl->build_msg), "%s", msg);
	}
}

int mfs_model_build_error(const struct mfs_model *m, struct mfs_err *err)
{
	if (!m->impl->build_err)
		return 0;
	return mfs_error(err, m->impl->build_err, "%s", m->impl->build_msg);
}

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

void mfs_model_note(struct mfs_model *m, const char *fmt, ...)
{
	if (m->note[0]) {
		m->more_notes++;
		return;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m->note, sizeof(m->note), fmt, ap);
	va_end(ap);
}

int mfs_model_check_sibling(struct mfs_model *m, const char *name, struct mfs_err *err)
{
	return m->impl->sibling ? m->impl->sibling(m, name, err) : 1;
}
