/* PLearn numbers: the value of a number token, the style a file writes its
 * reals in (%.18g or %.15g), formatting a number so that it reads back as
 * the same double (in the file's style where that style does), and reading the
 * elements of a tensor from the source (tokens, strided or '0'/'1' bytes). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bytes.h"
#include "numtext.h"
#include "plearn.h"

int plearn_num_value(const uint8_t *s, uint64_t len, double *out)
{
	const uint8_t *p = s;
	uint64_t n = len;
	bool neg = false;
	if (n && (*p == '-' || *p == '+')) {
		neg = *p == '-';
		p++, n--;
	}
	/* PLearn reads '?' and any nan as its missing value, a positive NaN. */
	if ((n == 1 && *p == '?') || (n == 3 && (p[0] | 0x20) == 'n' && (p[1] | 0x20) == 'a' &&
				      (p[2] | 0x20) == 'n')) {
		uint64_t bits = 0x7ff8000000000000ull;
		memcpy(out, &bits, sizeof(*out));
		return 0;
	}
	if (n == 3 && (p[0] | 0x20) == 'i' && (p[1] | 0x20) == 'n' && (p[2] | 0x20) == 'f') {
		*out = neg ? -INFINITY : INFINITY;
		return 0;
	}
	double v;
	int r = mfs_parse_f64((const char *)p, (size_t)n, &v);
	if (r == -ERANGE)
		v = INFINITY;  /* what C's strtod (PLearn's sscanf) gives */
	else if (r < 0)
		return r;
	*out = neg ? -v : v;
	return 0;
}

/* Significant digits of a decimal token (its mantissa). */
static unsigned sig_digits(const uint8_t *s, uint64_t len)
{
	unsigned n = 0;
	bool lead = true;
	for (uint64_t i = 0; i < len; i++) {
		uint8_t c = s[i];
		if (c == 'e' || c == 'E')
			break;
		if (c < '0' || c > '9')
			continue;
		if (c == '0' && lead)
			continue;
		lead = false;
		n++;
	}
	return n;
}

/* 18 or 15 when this token can only come from that style, else 0. */
static int token_style(const uint8_t *s, uint64_t len)
{
	bool real = false;
	for (uint64_t i = 0; i < len; i++)
		if (s[i] == '.' || s[i] == 'e' || s[i] == 'E')
			real = true;
	if (!real || len > 40)
		return 0;
	if (sig_digits(s, len) > 15)
		return 18;
	double v;
	if (plearn_num_value(s, len, &v) < 0 || !isfinite(v))
		return 0;
	char buf[48];
	int l = snprintf(buf, sizeof(buf), "%.18g", v);
	if (l > 0 && (uint64_t)l == len && !memcmp(buf, s, (size_t)len))
		return 0;  /* both styles write it this way */
	l = snprintf(buf, sizeof(buf), "%.15g", v);
	if (l > 0 && (uint64_t)l == len && !memcmp(buf, s, (size_t)len))
		return 15;
	return 0;      /* written by hand */
}

int plearn_style_detect(const uint8_t *b, uint64_t n, const uint64_t *toks, uint64_t ntoks)
{
	/* The first token that only one style writes decides; PLearn writes
	 * every real of a file with the same format. */
	for (uint64_t i = 0; i < ntoks; i++) {
		if (toks[i] >= n)
			continue;
		uint64_t l = plearn_scan_number(b, n, toks[i], NULL);
		int st = token_style(b + toks[i], l);
		if (st)
			return st;
	}
	return 0;
}

size_t plearn_fmt_num(char *out, double v, int style, bool as_int)
{
	if (isnan(v)) {
		memcpy(out, "nan", 3);
		return 3;
	}
	if (isinf(v)) {
		memcpy(out, v < 0 ? "-inf" : "inf", v < 0 ? 4 : 3);
		return v < 0 ? 4 : 3;
	}
	/* An integer token stays an integer; -0 is not one (it would read back
	 * as +0). %.18g reads back as the same double, so a file in that style
	 * keeps it; any other style (%.15g, hand-written digits) would lose
	 * digits, so the number is written as its shortest round-trip decimal. */
	bool whole = as_int && v == trunc(v) && fabs(v) < 9.2e18 && !(v == 0 && signbit(v));
	if (!whole && style != 18)
		return mfs_fmt_f64(out, v);
	char buf[48];
	int l = whole ? snprintf(buf, sizeof(buf), "%lld", (long long)v)
		      : snprintf(buf, sizeof(buf), "%.18g", v);
	if (l < 0)
		l = 0;
	memcpy(out, buf, (size_t)l);
	return (size_t)l;
}

/* ---- Reading tensor elements ---------------------------------------------- */

static int read_elems(const struct mfs_model *m, const struct mfs_tensor *t, uint64_t first,
		      uint64_t count, void *out, struct mfs_err *err)
{
	const struct plearn_model *pm = m->priv;
	if (!t->tag || t->tag > pm->ntens)
		return mfs_error(err, EIO, "internal error: tensor without a record");
	const struct plearn_tens *pt = &pm->tens[t->tag - 1];
	uint8_t *o = out;
	for (uint64_t k = 0; k < count; k++) {
		uint64_t e = first + k;
		uint64_t idx = (e / pt->cols) * pt->mod + e % pt->cols;
		switch (pt->kind) {
		case PLEARN_T_TOKENS: {
			uint64_t ti = pt->base + idx, off, len;
			double v;
			if (ti >= pm->nnum || (off = pm->num[ti]) >= m->size ||
			    !(len = plearn_scan_number(m->base, m->size, off, NULL)) ||
			    plearn_num_value(m->base + off, len, &v) < 0)
				return mfs_error(err, EIO, "element %llu is no longer a number",
						 (unsigned long long)e);
			uint64_t bits;
			memcpy(&bits, &v, 8);
			mfs_put_le64(o + 8 * k, bits);
			break;
		}
		case PLEARN_T_BOOL: {
			uint64_t off = pt->base + idx;
			if (off >= m->size || (m->base[off] != '0' && m->base[off] != '1'))
				return mfs_error(err, EIO, "element %llu is no longer '0' or '1'",
						 (unsigned long long)e);
			o[k] = (uint8_t)(m->base[off] - '0');
			break;
		}
		default: {
			unsigned es = pt->esize;
			uint64_t off = pt->base + idx * es;
			if (off > m->size || m->size - off < es)
				return mfs_error(err, EIO, "element %llu lies beyond the end of the file",
						 (unsigned long long)e);
			memcpy(o + es * k, m->base + off, es);
			if (pt->be)
				mfs_swap_elems(o + es * k, 1, es);
			break;
		}
		}
	}
	return 0;
}

const struct mfs_tensor_ops plearn_tensor_ops = {
	.read = read_elems,
};

uint64_t plearn_add_tens(struct plearn_model *pm, const struct plearn_tens *t)
{
	if (pm->ntens == pm->captens) {
		size_t cap = pm->captens;
		if (cap >= UINT32_MAX / 2 || MFS_ARRAY_RESERVE(pm->tens, pm->ntens, cap, 1, 32) < 0)
			return 0;
		pm->captens = (uint32_t)cap;
	}
	pm->tens[pm->ntens++] = *t;
	return pm->ntens;
}

uint64_t plearn_add_text(struct plearn_model *pm, const struct plearn_text *t)
{
	if (pm->ntexts == pm->captexts) {
		size_t cap = pm->captexts;
		if (cap >= UINT32_MAX / 2 || MFS_ARRAY_RESERVE(pm->texts, pm->ntexts, cap, 1, 64) < 0)
			return 0;
		pm->captexts = (uint32_t)cap;
	}
	pm->texts[pm->ntexts++] = *t;
	return pm->ntexts;
}
