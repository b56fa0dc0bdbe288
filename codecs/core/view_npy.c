/* data.npy: the NumPy v1.0 header of a tensor, and parsing the header of a
 * .npy file written by a user (any version, any key order). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "view_impl.h"

size_t mfs_npy_header(const struct mfs_tensor *t, char *h)
{
	const struct mfs_dtype_info *di = mfs_dtype_info((enum mfs_dtype)t->dtype);
	char dict[1024];
	int n = snprintf(dict, sizeof(dict), "{'descr': %s%s%s, 'fortran_order': %s, 'shape': (",
			 di->npy[0] == '[' ? "" : "'", di->npy, di->npy[0] == '[' ? "" : "'",
			 t->order == MFS_COL_MAJOR && t->ndim > 1 ? "True" : "False");
	for (uint32_t i = 0; i < t->ndim; i++)
		n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%llu", i ? ", " : "",
			      (unsigned long long)t->dims[i]);
	n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", t->ndim == 1 ? "," : "");
	/* Like numpy.save: room for the growing axis to gain digits in place,
	 * then spaces so that the data starts on a 64-byte boundary (aligned
	 * for mmap_mode='r'). The header is then byte-identical to NumPy's. */
	if (t->ndim > 0) {
		bool fortran = t->order == MFS_COL_MAJOR && t->ndim > 1;
		char num[24];
		int dl = snprintf(num, sizeof(num), "%llu",
				  (unsigned long long)t->dims[fortran ? t->ndim - 1 : 0]);
		for (int i = dl; i < 21; i++)
			dict[n++] = ' ';
	}
	size_t total = 10 + (size_t)n + 1;
	size_t padded = (total + 63) & ~(size_t)63;
	size_t hlen = padded - 10;
	memcpy(h, "\x93NUMPY\x01\x00", 8);
	mfs_put_le16(h + 8, (uint16_t)hlen);
	memcpy(h + 10, dict, (size_t)n);
	memset(h + 10 + n, ' ', hlen - (size_t)n - 1);
	h[padded - 1] = '\n';
	return padded;
}

static const char *skip_ws(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
		p++;
	return p;
}

/* The value text of key in a Python dict literal: [start, end). */
static int find_key(const char *d, const char *end, const char *key, const char **vs,
		    const char **ve)
{
	size_t kl = strlen(key);
	for (const char *p = d; p + kl + 2 <= end; p++) {
		if ((*p != '\'' && *p != '"') || memcmp(p + 1, key, kl) != 0 || p[kl + 1] != *p)
			continue;
		const char *q = skip_ws(p + kl + 2, end);
		if (q >= end || *q != ':')
			continue;
		q = skip_ws(q + 1, end);
		/* The value ends at the comma or brace that closes it. */
		int depth = 0;
		char quote = 0;
		const char *s = q;
		for (; q < end; q++) {
			if (quote) {
				if (*q == quote)
					quote = 0;
				continue;
			}
			if (*q == '\'' || *q == '"')
				quote = *q;
			else if (*q == '(' || *q == '[')
				depth++;
			else if (*q == ')' || *q == ']')
				depth--;
			else if ((*q == ',' || *q == '}') && depth == 0)
				break;
		}
		*vs = s;
		*ve = q;
		while (*ve > *vs && ((*ve)[-1] == ' '))
			(*ve)--;
		return 0;
	}
	return -1;
}

/* find_key for a key that must be there once: a dict literal with a key
 * twice means its last value to Python, which a reader taking the first
 * would get wrong. Returns 0, or -EINVAL with a message. */
static int find_key_once(const char *d, const char *end, const char *key, const char **vs,
			 const char **ve, struct mfs_err *err)
{
	char q[MFS_QUOTE_MAX], q2[MFS_QUOTE_MAX];
	const char *vs2, *ve2;
	if (find_key(d, end, key, vs, ve) < 0)
		return mfs_error(err, EINVAL, "expected a '%s' key in the .npy header, found %s",
				 key, mfs_quote(q, d, (size_t)(end - d)));
	if (find_key(*ve, end, key, &vs2, &ve2) == 0)
		return mfs_error(err, EINVAL, "the .npy header has the key '%s' twice (%s, then %s), "
				 "expected each key once", key, mfs_quote(q, *vs, (size_t)(*ve - *vs)),
				 mfs_quote(q2, vs2, (size_t)(ve2 - vs2)));
	return 0;
}

int mfs_npy_parse_header(const char *buf, size_t len, struct mfs_npy_info *info,
			 struct mfs_err *err)
{
	char q[MFS_QUOTE_MAX];
	memset(info, 0, sizeof(*info));
	if (len < 10 || memcmp(buf, "\x93NUMPY", 6) != 0)
		return mfs_error(err, EINVAL, "not a .npy file: expected \"\\x93NUMPY\" at byte 0, found %s",
				 mfs_quote(q, buf, len < 6 ? len : 6));
	uint8_t major = (uint8_t)buf[6];
	size_t hlen, start;
	if (major == 1) {
		hlen = mfs_le16(buf + 8);
		start = 10;
	} else if (major == 2 || major == 3) {
		if (len < 12)
			return mfs_error(err, EINVAL, "truncated: a .npy %u.0 header needs 12 bytes, the file has %zu",
					 major, len);
		hlen = mfs_le32(buf + 8);
		start = 12;
	} else {
		return mfs_error(err, EINVAL, ".npy format version %u, expected 1, 2 or 3", major);
	}
	if (hlen > len - start)
		return mfs_error(err, EINVAL,
				 "truncated: the .npy header says %zu bytes of header at byte %zu, the file has %zu",
				 hlen, start, len);
	const char *d = buf + start, *end = d + hlen;
	info->data_off = start + hlen;
	const char *vs, *ve;
	int e;
	/* descr */
	if ((e = find_key_once(d, end, "descr", &vs, &ve, err)) < 0)
		return e;
	char descr[128];
	size_t dl = (size_t)(ve - vs);
	if (dl >= sizeof(descr) || ((*vs == '\'' || *vs == '"') && dl < 2))
		return mfs_error(err, EINVAL, ".npy dtype %s is not supported", mfs_quote(q, vs, dl));
	if (*vs == '\'' || *vs == '"') {
		memcpy(descr, vs + 1, dl - 2);
		descr[dl - 2] = '\0';
	} else {
		memcpy(descr, vs, dl);
		descr[dl] = '\0';
	}
	info->dtype = mfs_dtype_from_npy(descr, strlen(descr));
	if (info->dtype == MFS_DT_INVALID)
		return mfs_error(err, EINVAL,
				 ".npy dtype %s is not supported (expected a little-endian number type: bool, int, uint, float or complex)",
				 mfs_quote(q, descr, strlen(descr)));
	/* fortran_order */
	if ((e = find_key_once(d, end, "fortran_order", &vs, &ve, err)) < 0)
		return e;
	if (ve - vs == 4 && memcmp(vs, "True", 4) == 0)
		info->fortran = true;
	else if (!(ve - vs == 5 && memcmp(vs, "False", 5) == 0))
		return mfs_error(err, EINVAL, ".npy 'fortran_order' is %s, expected True or False",
				 mfs_quote(q, vs, (size_t)(ve - vs)));
	/* shape */
	if ((e = find_key_once(d, end, "shape", &vs, &ve, err)) < 0)
		return e;
	if (*vs != '(' || ve[-1] != ')')
		return mfs_error(err, EINVAL, ".npy 'shape' is %s, expected a tuple such as (2, 3)",
				 mfs_quote(q, vs, (size_t)(ve - vs)));
	for (const char *p = vs + 1; p < ve - 1;) {
		p = skip_ws(p, ve - 1);
		if (p >= ve - 1)
			break;
		uint64_t v = 0;
		const char *r = p;
		while (r < ve - 1 && *r >= '0' && *r <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return mfs_error(err, EINVAL, ".npy 'shape' %s: a size does not fit in 64 bits",
						 mfs_quote(q, vs, (size_t)(ve - vs)));
			v = v * 10 + (uint64_t)(*r - '0');
			r++;
		}
		if (r == p)
			return mfs_error(err, EINVAL, ".npy 'shape' is %s, expected a tuple of sizes such as (2, 3)",
					 mfs_quote(q, vs, (size_t)(ve - vs)));
		if (info->ndim == 32)
			return mfs_error(err, EINVAL, ".npy 'shape' has more than 32 dimensions, at most 32 are supported");
		info->dims[info->ndim++] = v;
		r = skip_ws(r, ve - 1);
		if (r < ve - 1 && *r == ',')
			r++;
		p = r;
	}
	return 0;
}
