/* A model's state beside its tree: the first failure while building it,
 * problems its open got past, and what the host lends it (the check of a
 * file beside the source; the runtime, and the arena its nodes and names
 * live in, are model_budget.c's). */
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
