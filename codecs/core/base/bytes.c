/* Byte order of whole elements (bytes.h). */
#include "bytes.h"

void mfs_swap_elems(void *buf, uint64_t n, unsigned esize)
{
	uint8_t *b = buf;
	switch (esize) {
	case 2:
		for (uint64_t i = 0; i < n; i++)
			mfs_put_le16(b + 2 * i, __builtin_bswap16(mfs_le16(b + 2 * i)));
		break;
	case 4:
		for (uint64_t i = 0; i < n; i++)
			mfs_put_le32(b + 4 * i, __builtin_bswap32(mfs_le32(b + 4 * i)));
		break;
	case 8:
		for (uint64_t i = 0; i < n; i++)
			mfs_put_le64(b + 8 * i, __builtin_bswap64(mfs_le64(b + 8 * i)));
		break;
	default:
		for (uint64_t i = 0; i < n; i++)
			for (unsigned k = 0; k < esize / 2; k++) {
				uint8_t t = b[i * esize + k];
				b[i * esize + k] = b[i * esize + esize - 1 - k];
				b[i * esize + esize - 1 - k] = t;
			}
	}
}
