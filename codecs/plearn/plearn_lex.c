/* PLearn tokens: where a number, a bare word or a quoted string ends, and
 * the binary type codes of plearn_binary (PLearn's PStream). */
#include <string.h>

#include "plearn.h"

bool plearn_tok_end(uint8_t c)
{
	/* PLearn's word separators " \t\n\r)]};,:|#", the openers that start
	 * the next item, and every control byte (binary headers). */
	return c <= 0x20 || c == 0x7f || strchr("()[]{}\",;:|#=", c) != NULL;
}

static bool digit(uint8_t c)
{
	return c >= '0' && c <= '9';
}

static bool word_ci(const uint8_t *b, uint64_t n, uint64_t pos, const char *w)
{
	size_t l = strlen(w);
	if (n - pos < l)
		return false;
	for (size_t i = 0; i < l; i++) {
		uint8_t c = b[pos + i];
		if (c >= 'A' && c <= 'Z')
			c = (uint8_t)(c - 'A' + 'a');
		if (c != (uint8_t)w[i])
			return false;
	}
	return true;
}

uint64_t plearn_scan_number(const uint8_t *b, uint64_t n, uint64_t pos, bool *uint)
{
	uint64_t p = pos;
	bool only_digits = true;
	if (uint)
		*uint = false;
	if (p < n && (b[p] == '-' || b[p] == '+')) {
		p++;
		only_digits = false;
	}
	if (p >= n)
		return 0;
	if (b[p] == '?') {
		p++;
		only_digits = false;
	} else if (word_ci(b, n, p, "nan") || word_ci(b, n, p, "inf")) {
		p += 3;
		only_digits = false;
	} else {
		uint64_t d1 = 0, d2 = 0;
		while (p < n && digit(b[p]))
			p++, d1++;
		if (p < n && b[p] == '.') {
			only_digits = false;
			p++;
			while (p < n && digit(b[p]))
				p++, d2++;
		}
		if (d1 + d2 == 0)
			return 0;
		if (p < n && (b[p] == 'e' || b[p] == 'E')) {
			only_digits = false;
			p++;
			if (p < n && (b[p] == '-' || b[p] == '+'))
				p++;
			uint64_t d3 = 0;
			while (p < n && digit(b[p]))
				p++, d3++;
			if (!d3)
				return 0;
		}
	}
	if (p < n && !plearn_tok_end(b[p]))
		return 0;
	if (uint)
		*uint = only_digits;
	return p - pos;
}

uint64_t plearn_scan_word(const uint8_t *b, uint64_t n, uint64_t pos)
{
	uint64_t p = pos;
	while (p < n && !plearn_tok_end(b[p]))
		p++;
	return p - pos;
}

uint64_t plearn_scan_string(const uint8_t *b, uint64_t n, uint64_t pos)
{
	/* PLearn escapes only '"' and '\\' when writing; a reader takes the
	 * byte after any backslash literally. */
	uint64_t p = pos + 1;
	while (p < n) {
		if (b[p] == '\\')
			p += 2;
		else if (b[p] == '"')
			return p + 1 - pos;
		else
			p++;
	}
	return 0;
}

unsigned plearn_bin_size(uint8_t code)
{
	switch (code) {
	case 0x01: case 0x02:
		return 1;
	case 0x03: case 0x04: case 0x05: case 0x06:
		return 2;
	case 0x07: case 0x08: case 0x0B: case 0x0C: case 0x0E: case 0x0F:
		return 4;
	case 0x10: case 0x11: case 0x16: case 0x17: case 0x18: case 0x19:
		return 8;
	default:
		return 0;
	}
}

enum mfs_dtype plearn_bin_dtype(uint8_t code)
{
	switch (code) {
	case 0x01: return MFS_DT_I8;    /* char is signed char */
	case 0x02: return MFS_DT_U8;
	case 0x03: case 0x04: return MFS_DT_I16;
	case 0x05: case 0x06: return MFS_DT_U16;
	case 0x07: case 0x08: return MFS_DT_I32;
	case 0x0B: case 0x0C: return MFS_DT_U32;
	case 0x0E: case 0x0F: return MFS_DT_F32;
	case 0x10: case 0x11: return MFS_DT_F64;
	case 0x16: case 0x17: return MFS_DT_I64;
	case 0x18: case 0x19: return MFS_DT_U64;
	case 0x30: return MFS_DT_BOOL;
	default: return MFS_DT_INVALID;
	}
}

bool plearn_bin_be(uint8_t code)
{
	switch (code) {
	case 0x04: case 0x06: case 0x08: case 0x0C: case 0x0F: case 0x11: case 0x17: case 0x19:
		return true;
	default:
		return false;
	}
}
