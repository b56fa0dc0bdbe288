/* The .npy header: magic, version, length, and the Python dict literal
 * `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`, parsed
 * strictly (exactly those three keys, each once, literal values only; the
 * sizes may be Python 2 longs, `(2L, 3L)`), and written as numpy.save
 * writes it. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "npy_head.h"

struct lex {
	const char *p, *end;
	const char *start;  /* the dict's first byte, for offsets in messages */
	uint64_t base;      /* its offset in the file */
};

static void ws(struct lex *l)
{
	while (l->p < l->end && (*l->p == ' ' || *l->p == '\t' || *l->p == '\n' || *l->p == '\r'))
		l->p++;
}

static uint64_t at(const struct lex *l)
{
	return l->base + (uint64_t)(l->p - l->start);
}

static int expect(struct lex *l, char c, const char *what, struct mfs_err *err)
{
	ws(l);
	if (l->p >= l->end || *l->p != c) {
		char q[MFS_QUOTE_MAX];
		size_t n = l->p < l->end ? (size_t)(l->end - l->p) : 0;
		return mfs_error(err, EINVAL, "expected %s in the .npy header at byte %llu, found %s",
				 what, (unsigned long long)at(l), mfs_quote(q, l->p, n < 12 ? n : 12));
	}
	l->p++;
	return 0;
}

/* A quoted string without escapes: [*s, *s + *n). */
static int string(struct lex *l, const char **s, size_t *n, struct mfs_err *err)
{
	ws(l);
	if (l->p >= l->end || (*l->p != '\'' && *l->p != '"'))
		return expect(l, '\'', "a string", err);
	char quote = *l->p++;
	*s = l->p;
	while (l->p < l->end && *l->p != quote && *l->p != '\\' && *l->p != '\n')
		l->p++;
	if (l->p >= l->end || *l->p != quote)
		return mfs_error(err, EINVAL, "unterminated or escaped string in the .npy header at byte %llu",
				 (unsigned long long)at(l));
	*n = (size_t)(l->p - *s);
	l->p++;
	return 0;
}

static bool word(struct lex *l, const char *w)
{
	size_t n = strlen(w);
	if ((size_t)(l->end - l->p) < n || memcmp(l->p, w, n) != 0)
		return false;
	l->p += n;
	return true;
}

static int parse_bool(struct lex *l, bool *v, struct mfs_err *err)
{
	ws(l);
	if (word(l, "True"))
		*v = true;
	else if (word(l, "False"))
		*v = false;
	else
		return expect(l, 'T', "True or False for 'fortran_order'", err);
	return 0;
}

static int parse_shape(struct lex *l, struct mfs_npy_head *h, struct mfs_err *err)
{
	int r = expect(l, '(', "a tuple such as (2, 3) for 'shape'", err);
	bool comma = false;
	for (h->ndim = 0; r == 0;) {
		ws(l);
		if (l->p < l->end && *l->p == ')') {
			l->p++;
			/* (3) is an int to Python, not a tuple: it needs (3,). */
			if (h->ndim == 1 && !comma)
				return mfs_error(err, EINVAL, "'shape' (n) is not a tuple at byte %llu, expected (n,)",
						 (unsigned long long)at(l));
			return 0;
		}
		if (h->ndim == MFS_NPY_MAX_DIMS)
			return mfs_error(err, EINVAL, "'shape' has more than %u dimensions", MFS_NPY_MAX_DIMS);
		uint64_t v = 0;
		const char *s = l->p;
		while (l->p < l->end && *l->p >= '0' && *l->p <= '9') {
			if (v > (UINT64_MAX - 9) / 10)
				return mfs_error(err, EINVAL, "a size in 'shape' does not fit in 64 bits at byte %llu",
						 (unsigned long long)at(l));
			v = v * 10 + (uint64_t)(*l->p++ - '0');
		}
		if (l->p == s)
			return expect(l, '0', "a size in 'shape'", err);
		/* Python 2's long literal (NumPy there wrote (2L, 3L)), which
		 * numpy.load drops: a number then an L. */
		if (l->p < l->end && *l->p == 'L')
			l->p++;
		h->dims[h->ndim++] = v;
		ws(l);
		comma = l->p < l->end && *l->p == ',';
		if (comma)
			l->p++;
		else if (l->p >= l->end || *l->p != ')')
			r = expect(l, ')', "',' or ')' in 'shape'", err);
	}
	return r;
}

/* descr to dtype: '<' '|' '=' or '>' and a NumPy type code of a numeric
 * dtype modelfs has; else -ENOTSUP (strings, datetimes). */
static int descr_dtype(const char *s, size_t n, struct mfs_npy_head *h)
{
	char d[8];
	if (n < 2 || n > 4 || (s[0] != '<' && s[0] != '>' && s[0] != '|' && s[0] != '='))
		return -ENOTSUP;
	memcpy(d, s, n);
	d[0] = '<';
	enum mfs_dtype dt = mfs_dtype_from_npy(d, n);
	if (dt == MFS_DT_INVALID) {
		d[0] = '|';
		dt = mfs_dtype_from_npy(d, n);
	}
	if (dt == MFS_DT_INVALID)
		return -ENOTSUP;
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	h->dtype = (uint8_t)dt;
	h->bigendian = s[0] == '>' && di->size > 1;
	if (h->bigendian)
		h->swap = di->kind == MFS_DK_COMPLEX ? di->size / 2 : di->size;
	return 0;
}

/* A structured descr, a list: its text up to the matching ']' (strings
 * hold no brackets in the descrs of interest). It names a dtype only when
 * it is exactly one's NumPy descr (complex32's, which data.npy writes). */
static int structured(struct lex *l, struct mfs_npy_head *h, struct mfs_err *err)
{
	const char *s = l->p;
	int depth = 0;
	for (; l->p < l->end; l->p++) {
		if (*l->p == '[')
			depth++;
		else if (*l->p == ']' && --depth == 0)
			break;
	}
	if (l->p >= l->end)
		return expect(l, ']', "']' closing the structured 'descr'", err);
	l->p++;
	h->structured = true;
	h->descr_off = (uint32_t)(at(l) - (uint64_t)(l->p - s));
	h->descr_len = (uint32_t)(l->p - s);
	enum mfs_dtype dt = mfs_dtype_from_npy(s, (size_t)(l->p - s));
	h->dtype = (uint8_t)(dt == MFS_DT_INVALID ? 0 : dt);
	return 0;
}

/* The dict: each of the three keys once, in any order, a trailing comma
 * allowed. A descr that is a list (structured) is not shown: -ENOTSUP
 * after the whole header is read (h->structured, h->dtype when the list is
 * one of modelfs's dtypes). */
static int parse_dict(struct lex *l, struct mfs_npy_head *h, struct mfs_err *err)
{
	int r = expect(l, '{', "'{'", err);
	unsigned seen = 0;
	const char *unsupported = NULL;
	size_t ulen = 0;
	while (r == 0) {
		ws(l);
		if (l->p < l->end && *l->p == '}') {
			l->p++;
			break;
		}
		const char *k;
		size_t kn;
		uint64_t kat = at(l);
		if ((r = string(l, &k, &kn, err)) < 0 || (r = expect(l, ':', "':'", err)) < 0)
			return r;
		unsigned bit;
		if (kn == 5 && !memcmp(k, "descr", 5)) {
			bit = 1;
			ws(l);
			if (l->p < l->end && *l->p == '[') {
				if ((r = structured(l, h, err)) < 0)
					return r;
			} else {
				const char *s;
				size_t n;
				if ((r = string(l, &s, &n, err)) < 0)
					return r;
				h->descr_off = (uint32_t)(at(l) - n - 1);
				h->descr_len = (uint32_t)n;
				if (descr_dtype(s, n, h) < 0)
					unsupported = s, ulen = n;
			}
		} else if (kn == 13 && !memcmp(k, "fortran_order", 13)) {
			bit = 2;
			r = parse_bool(l, &h->fortran, err);
		} else if (kn == 5 && !memcmp(k, "shape", 5)) {
			bit = 4;
			r = parse_shape(l, h, err);
		} else {
			char q[MFS_QUOTE_MAX];
			return mfs_error(err, EINVAL, "unexpected key %s in the .npy header at byte %llu, expected 'descr', 'fortran_order' and 'shape'",
					 mfs_quote(q, k, kn), (unsigned long long)kat);
		}
		if (r == 0 && (seen & bit))  /* k is one of the three names */
			return mfs_error(err, EINVAL, "the .npy header has the key '%.*s' twice (at byte %llu), expected each key once",
					 (int)kn, k, (unsigned long long)kat);
		seen |= bit;
		ws(l);
		if (r == 0 && l->p < l->end && *l->p == ',')
			l->p++;
		else if (r == 0 && (l->p >= l->end || *l->p != '}'))
			r = expect(l, '}', "',' or '}'", err);
	}
	if (r == 0 && seen != 7)
		return mfs_error(err, EINVAL, "the .npy header lacks '%s', expected 'descr', 'fortran_order' and 'shape'",
				 !(seen & 1) ? "descr" : !(seen & 2) ? "fortran_order" : "shape");
	if (r == 0 && unsupported) {
		char q[MFS_QUOTE_MAX];
		return mfs_error(err, ENOTSUP, "the .npy dtype %s is not shown",
				 mfs_quote(q, unsupported, ulen));
	}
	if (r == 0 && h->structured)
		return mfs_error(err, ENOTSUP, "a structured .npy dtype is not shown");
	return r;
}

int mfs_npy_parse(const uint8_t *buf, uint64_t len, struct mfs_npy_head *h, struct mfs_err *err)
{
	memset(h, 0, sizeof(*h));
	if (len < 6 || memcmp(buf, "\x93NUMPY", 6) != 0) {
		char q[MFS_QUOTE_MAX];
		size_t n = len < 8 ? (size_t)len : 8;
		return mfs_error(err, EINVAL, "not a .npy file: expected \"\\x93NUMPY\" at byte 0, found %s (%llu bytes)",
				 mfs_quote(q, buf, n), (unsigned long long)len);
	}
	if (len < 10)
		return mfs_error(err, EINVAL, "truncated: a .npy header needs 10 bytes, there are %llu",
				 (unsigned long long)len);
	h->major = buf[6];
	if ((h->major != 1 && h->major != 2 && h->major != 3) || buf[7] != 0)
		return mfs_error(err, EINVAL, ".npy format version %u.%u, expected 1.0, 2.0 or 3.0",
				 buf[6], buf[7]);
	uint64_t start = h->major == 1 ? 10 : 12;
	if (len < start)
		return mfs_error(err, EINVAL, "truncated: a .npy %u.0 header needs %llu bytes, the file has %llu",
				 h->major, (unsigned long long)start, (unsigned long long)len);
	uint64_t hlen = h->major == 1 ? mfs_le16(buf + 8) : mfs_le32(buf + 8);
	if (hlen > MFS_NPY_HEADER_MAX)
		return mfs_error(err, EINVAL, "the .npy header is %llu bytes, at most %u are supported",
				 (unsigned long long)hlen, MFS_NPY_HEADER_MAX);
	if (hlen > len - start)
		return mfs_error(err, EINVAL, "truncated: the .npy header says %llu bytes of header at byte %llu, the file has %llu",
				 (unsigned long long)hlen, (unsigned long long)start,
				 (unsigned long long)len);
	const char *d = (const char *)buf + start;
	struct lex l = {d, d + hlen, d, start};
	ws(&l);
	h->dict_off = (uint32_t)(start + (uint64_t)(l.p - d));
	int r = parse_dict(&l, h, err);
	if (r < 0 && !(r == -ENOTSUP && h->structured && h->dtype))
		return r;
	int verdict = r;
	h->dict_len = (uint32_t)(start + (uint64_t)(l.p - d)) - h->dict_off;
	ws(&l);
	if (l.p != l.end)
		return mfs_error(err, EINVAL, "unexpected bytes after the .npy header's dict at byte %llu",
				 (unsigned long long)at(&l));
	h->data_off = start + hlen;
	uint64_t n = 1;
	for (uint32_t i = 0; i < h->ndim; i++)
		if (!mfs_mul_ok(n, h->dims[i], &n))
			return mfs_error(err, EINVAL, "the .npy shape overflows 64 bits");
	h->nelem = n;
	if (!mfs_mul_ok(n, mfs_dtype_info(h->dtype)->size, &h->bytes))
		return mfs_error(err, EINVAL, "the .npy array is more than 2^64 bytes");
	return verdict;
}

size_t mfs_npy_write_header(uint8_t major, enum mfs_dtype dt, bool bigendian, bool fortran,
			    uint32_t ndim, const uint64_t *dims, uint8_t *out, size_t size)
{
	const struct mfs_dtype_info *di = mfs_dtype_info(dt);
	if (!di->npy || ndim > MFS_NPY_MAX_DIMS)
		return 0;
	fortran = fortran && ndim > 1;
	char dict[1024];
	int n;
	if (di->npy[0] == '[') {  /* a structured descr (complex32's), as it is */
		n = snprintf(dict, sizeof(dict), "{'descr': %s, ", di->npy);
	} else {
		char order = di->size > 1 ? (bigendian ? '>' : '<') : di->npy[0];
		n = snprintf(dict, sizeof(dict), "{'descr': '%c%s', ", order, di->npy + 1);
	}
	n += snprintf(dict + n, sizeof(dict) - (size_t)n, "'fortran_order': %s, 'shape': (",
		      fortran ? "True" : "False");
	for (uint32_t i = 0; i < ndim; i++)  /* 32 x 22 bytes: within dict */
		n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s%llu", i ? ", " : "",
			      (unsigned long long)dims[i]);
	n += snprintf(dict + n, sizeof(dict) - (size_t)n, "%s), }", ndim == 1 ? "," : "");
	/* As numpy.save (1.24 on): room for the growing axis (the last in
	 * Fortran order, else the first) to gain digits up to 21 in place, then
	 * spaces to a multiple of 64 and a newline: the header is NumPy's own,
	 * byte for byte, and the data aligned for mmap_mode='r'. */
	size_t grow = 0;
	if (ndim) {
		char num[24];
		int dl = snprintf(num, sizeof(num), "%llu",
				  (unsigned long long)dims[fortran ? ndim - 1 : 0]);
		grow = dl < 21 ? (size_t)(21 - dl) : 0;
	}
	size_t pre = major == 1 ? 10 : 12;
	size_t total = pre + (size_t)n + grow + 1;
	size_t padded = (total + 63) & ~(size_t)63;
	if (padded > size || (major == 1 && padded - pre > 65535))
		return 0;
	memcpy(out, "\x93NUMPY", 6);
	out[6] = major;
	out[7] = 0;
	if (major == 1)
		mfs_put_le16(out + 8, (uint16_t)(padded - pre));
	else
		mfs_put_le32(out + 8, (uint32_t)(padded - pre));
	memcpy(out + pre, dict, (size_t)n);
	memset(out + pre + n, ' ', padded - pre - (size_t)n - 1);
	out[padded - 1] = '\n';
	return padded;
}
