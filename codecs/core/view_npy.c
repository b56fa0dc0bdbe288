/* data.npy: the NumPy v1.0 header of a tensor, as numpy.save writes it (a
 * written data.npy is parsed by npy_head.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bytes.h"
#include "view_impl.h"

size_t mfs_npy_header(const struct mfs_tensor *t, char *h)
{
	const struct mfs_dtype_info *di = mfs_dtype_info(mfs_npy_dtype((enum mfs_dtype)t->dtype));
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
