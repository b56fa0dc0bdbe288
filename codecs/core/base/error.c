/* Error records and message helpers: see error.h. */
#include "error.h"

#include <errno.h>
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

size_t mfs_utf8_char(const void *s, size_t n)
{
	const unsigned char *b = s;
	if (n == 0)
		return 0;
	if (b[0] < 0x80)
		return 1;
	size_t len;
	unsigned min;
	unsigned cp;
	if (b[0] >= 0xC2 && b[0] <= 0xDF) {
		len = 2, min = 0x80, cp = b[0] & 0x1F;
	} else if (b[0] >= 0xE0 && b[0] <= 0xEF) {
		len = 3, min = 0x800, cp = b[0] & 0x0F;
	} else if (b[0] >= 0xF0 && b[0] <= 0xF4) {
		len = 4, min = 0x10000, cp = b[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((b[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (b[i] & 0x3F);
	}
	/* overlong forms, UTF-16 surrogates and beyond U+10FFFF are not UTF-8 */
	if (cp < min || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
		return 0;
	return len;
}

const char *mfs_quote(char *out, const void *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *b = s;
	size_t k = 0, show = n > 40 ? 40 : n;
	if (show < n)
		while (show && (b[show] & 0xC0) == 0x80)
			show--;  /* not in the middle of a UTF-8 character */
	out[k++] = '"';
	for (size_t i = 0; i < show; i++) {
		unsigned char c = b[i];
		size_t u = c >= 0x80 ? mfs_utf8_char(b + i, show - i) : 1;
		if (u > 1) {
			memcpy(out + k, b + i, u);  /* a whole UTF-8 character */
			k += u;
			i += u - 1;
		} else if (c == '"' || c == '\\') {
			out[k++] = '\\';
			out[k++] = (char)c;
		} else if (c < 0x20 || c == 0x7f || u == 0) {
			out[k++] = '\\';
			out[k++] = 'x';
			out[k++] = hex[c >> 4];
			out[k++] = hex[c & 15];
		} else {
			out[k++] = (char)c;
		}
	}
	out[k++] = '"';
	if (show < n) {
		memcpy(out + k, "...", 3);
		k += 3;
	}
	out[k] = '\0';
	return out;
}

const char *mfs_shape_text(char *out, uint32_t ndim, const uint64_t *dims)
{
	if (ndim == 0)
		return strcpy(out, "()");
	size_t k = 0;
	for (uint32_t i = 0; i < ndim; i++) {
		char num[24];
		size_t l = (size_t)snprintf(num, sizeof(num), "%llu", (unsigned long long)dims[i]);
		if (k + l + 5 > MFS_SHAPE_TEXT) {
			memcpy(out + k, "...", 3);
			k += 3;
			break;
		}
		if (i)
			out[k++] = ' ';
		memcpy(out + k, num, l);
		k += l;
	}
	out[k] = '\0';
	return out;
}
