/* Numbers as text: shortest round-trip formatting and strict parsing.
 *
 * Formatting writes the shortest decimal that reads back to the same value of
 * the element's own type (float32 0.1 is "0.1"), in the style of Python's
 * repr without the ".0": fixed notation when the decimal exponent e of
 * d.ddd x 10^e is in [-4, 16), else "1.5e+38" / "1e-05" (sign and at least two
 * exponent digits). Special values: "nan", "-nan" (sign bit set), "inf",
 * "-inf", "-0". Integers in decimal, bool as 0/1, complex as "re+imj".
 * No function writes a NUL; each returns the length of the text, at most
 * MFS_NUM_MAX. out must have room for MFS_NUM_MAX bytes: the bytes after the
 * text may be overwritten (fixed-size stores are faster).
 *
 * Parsing takes one token (no surrounding blanks) and returns 0, -EINVAL when
 * the token is not a number of that type, or -ERANGE when it is a number that
 * the type cannot hold (1e39 into float32, 256 into uint8, 1.5 into int32 is
 * -EINVAL). Floats accept decimal and scientific forms, "nan", "inf",
 * "infinity" in any case with an optional sign; values that underflow round
 * to zero or a subnormal as IEEE says. Integers accept an optional sign
 * (no '+' check beyond that), decimal digits only.
 *
 * Thread-safe, no allocation (but for float128 tokens over 255 bytes,
 * copied for strtold). Floats are formatted by Dragonbox and parsed by
 * fast_float (Debian's libdragonbox-dev and libfast-float-dev) behind a small
 * C++ shim; float16, and float32 but for subnormals and powers of two, find
 * their shortest decimals here; float128 goes through glibc (numtext_ld.c).
 */
#ifndef MFS_NUMTEXT_H
#define MFS_NUMTEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

#define MFS_NUM_MAX 64  /* enough for any element, complex256 (59) included */

size_t mfs_fmt_f16(char *out, uint16_t bits);
size_t mfs_fmt_f32(char *out, float v);
size_t mfs_fmt_f64(char *out, double v);
size_t mfs_fmt_i64(char *out, int64_t v);
size_t mfs_fmt_u64(char *out, uint64_t v);
/* n float32s from src (native byte order, any alignment), each as
 * mfs_fmt_f32 writes it and followed by sep; returns the length of it all.
 * out must have room for n * (MFS_NUM_MAX + 1) bytes, and bytes past the
 * text may be overwritten, as above. Faster than mfs_fmt_f32 in a loop. */
size_t mfs_fmt_f32_run(char *out, const void *src, size_t n, char sep);
/* The length mfs_fmt_f32/f64 give the float with these bits, without
 * writing it (sizing a text view). */
size_t mfs_len_f32(uint32_t bits);
size_t mfs_len_f64(uint64_t bits);

int mfs_parse_f16(const char *s, size_t n, uint16_t *out);
int mfs_parse_f32(const char *s, size_t n, float *out);
int mfs_parse_f64(const char *s, size_t n, double *out);
int mfs_parse_i64(const char *s, size_t n, int64_t min, int64_t max, int64_t *out);
int mfs_parse_u64(const char *s, size_t n, uint64_t max, uint64_t *out);
/* The start of a token, s < end, when it is a plain number ([+-]? then a
 * digit or '.', in range): parsed as far as it goes; returns where it
 * stopped, or NULL (not a plain number, or out of range). The token is that
 * value when a separator or end follows; otherwise, and on NULL,
 * mfs_parse_f32/f64 of the whole token gives the answer. */
const char *mfs_parse_f32_prefix(const char *s, const char *end, float *out);
const char *mfs_parse_f64_prefix(const char *s, const char *end, double *out);
/* Float32 values of a text in a row from s, as mfs_parse_f32_prefix takes
 * them, each followed by a separator (sep[c] != 0; blanks before a value
 * are skipped): up to max of them into out (little-endian). Returns how
 * many; *stop is just after the last one, *nl the newlines before it. It
 * stops early at anything else (the caller goes on from *stop); where that
 * is not worth doing on this machine, at once. */
size_t mfs_parse_f32_run(const char *s, const char *end, const uint8_t sep[256], void *out,
			 size_t max, const char **stop, uint64_t *nl);

/* bfloat16, float8_e4m3fn (no inf; nan is S.1111.111; largest 448) and
 * float8_e5m2 (IEEE-like; largest 57344), by their bits: shortest text that
 * reads back, and parsing to nearest, ties to even. "inf" into
 * float8_e4m3fn is -ERANGE, like any finite value beyond a type's range. */
size_t mfs_fmt_bf16(char *out, uint16_t bits);
size_t mfs_fmt_f8e4m3(char *out, uint8_t bits);
size_t mfs_fmt_f8e5m2(char *out, uint8_t bits);
int mfs_parse_bf16(const char *s, size_t n, uint16_t *out);
int mfs_parse_f8e4m3(const char *s, size_t n, uint8_t *out);
int mfs_parse_f8e5m2(const char *s, size_t n, uint8_t *out);
/* Their values, exact in a float (NaN keeps the sign). */
float mfs_bf16_to_f32(uint16_t bits);
float mfs_f8e4m3_to_f32(uint8_t bits);
float mfs_f8e5m2_to_f32(uint8_t bits);

/* The same types as float32 (data.npy shows them so: NumPy has none of
 * them). Widening is exact, a NaN keeping its sign and payload; narrowing
 * rounds to nearest, ties to even, gives each widened value its bits back,
 * and is -ERANGE (*bad: the index) for a finite value beyond the type's
 * range or an infinity float8_e4m3fn lacks. Elements little-endian; the
 * float32 values as host-order bits. */
enum mfs_mini { MFS_MINI_NONE, MFS_MINI_BF16, MFS_MINI_E4M3, MFS_MINI_E5M2 };
void mfs_mini_widen(enum mfs_mini type, const void *src, uint32_t *out, size_t n);
int mfs_mini_narrow(enum mfs_mini type, const uint32_t *in, void *dst, size_t n, size_t *bad);

/* float128, NumPy's long double as x86-64 writes it (<f16): the x87
 * extended format in the first 10 of 16 bytes (64-bit significand with an
 * explicit integer bit, 15-bit exponent and the sign), then 6 bytes of
 * padding that hold nothing (NumPy leaves whatever memory held). Text is
 * the shortest decimal that reads back to the same value, in the layout
 * above (up to 21 digits, exponents up to 4 digits); parsing rounds to
 * nearest and writes zero padding. An encoding no x87 stores (an integer
 * bit that disagrees with the exponent: unnormals, pseudo-NaNs) is a NaN
 * of its sign, as glibc prints it. Other platforms store other formats
 * under the same descr (aarch64 and s390x IEEE binary128, ppc64le a pair
 * of doubles): mfs_f128_x87 tells from a sample of elements whether they
 * are x87 numbers. Only on a host whose long double is x87 (x86-64):
 * elsewhere mfs_f128_x87 is false and the other functions are not used. */
size_t mfs_fmt_f128(char *out, const void *src);
int mfs_parse_f128(const char *s, size_t n, void *dst);
double mfs_f128_to_f64(const void *src);
/* Whether n 16-byte elements at src (little-endian: big-endian ones
 * swapped first) read as x87 extended numbers rather than IEEE binary128:
 * every one is an encoding an x87 stores (integer bit set exactly when the
 * exponent is not zero), and no fewer of them have a plausible magnitude as
 * x87 (zero with zero padding, or a binary exponent within 2^+-1100) than
 * as binary128 (zero, or an exponent within 2^+-1100 there). */
bool mfs_f128_x87(const void *src, size_t n);

/* IEEE binary16 conversions; to-half rounds to nearest, ties to even. */
float mfs_f16_to_f32(uint16_t h);
uint16_t mfs_f64_to_f16(double d);

/* One element of any dtype as text and back: mfs_fmt_elem, mfs_parse_elem
 * (dtype.h, through the dtype's row). */

#endif
