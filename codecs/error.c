/* Error records: see error.h. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int mfs_error(struct mfs_err *err, int code, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
		err->code = code;
	}
	return -code;
}

int mfs_error_prefix(struct mfs_err *err, const char *fmt, ...)
{
	if (!err)
		return 0;
	char pre[MFS_ERRMSG_MAX], old[MFS_ERRMSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation is fine: the message is for people. */
	size_t pl = strlen(pre);
	if (pl > sizeof(err->msg) - 3)
		pl = sizeof(err->msg) - 3;
	memcpy(err->msg, pre, pl);
	memcpy(err->msg + pl, ": ", 2);
	size_t ol = strnlen(old, sizeof(old) - 1);
	if (ol > sizeof(err->msg) - pl - 3)
		ol = sizeof(err->msg) - pl - 3;
	memcpy(err->msg + pl + 2, old, ol);
	err->msg[pl + 2 + ol] = '\0';
	return -err->code;
}

void mfs_err_clear(struct mfs_err *err)
{
	if (err) {
		err->code = 0;
		err->msg[0] = '\0';
	}
}
