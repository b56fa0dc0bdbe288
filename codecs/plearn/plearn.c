/* The PLearn codec: .psave/.plearn serialized objects (plearn_ascii and
 * plearn_binary), .pmat binary matrices and .amat text matrices. Bidding,
 * and the entry points that hand each kind of file to its part. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "plearn.h"

static bool ident_start(uint8_t c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

static bool ident(uint8_t c)
{
	return ident_start(c) || (c >= '0' && c <= '9') || c == ':';
}

/* Does the head look like PLearn serialization: "*N ->", "Class(", "N [",
 * "L W [", "[" or a binary sequence, after blanks and comments? Running
 * out of head while it still looks right counts as yes. */
static bool plausible(const uint8_t *h, size_t n, uint64_t size)
{
	size_t q = 0;
	for (;;) {
		while (q < n && (plearn_blank(h[q]) || h[q] == ';' || h[q] == ','))
			q++;
		if (q < n && h[q] == '#') {
			while (q < n && h[q] != '\n')
				q++;
			continue;
		}
		break;
	}
	if (q >= n)
		return n < size;
	uint8_t c = h[q];
	if (c == '[' || (c >= 0x12 && c <= 0x15))
		return true;
	if (c == '*') {
		q++;
		while (q < n && plearn_blank(h[q]))
			q++;
		return q >= n || (h[q] >= '0' && h[q] <= '9') || plearn_bin_size(h[q]);
	}
	if (ident_start(c)) {
		while (q < n && ident(h[q]))
			q++;
		while (q < n && plearn_blank(h[q]))
			q++;
		return q >= n || h[q] == '(';
	}
	for (int dims = 0; dims < 2; dims++) {
		size_t s = q;
		while (q < n && h[q] >= '0' && h[q] <= '9')
			q++;
		if (q == s)
			return false;
		while (q < n && plearn_blank(h[q]))
			q++;
		if (q >= n || h[q] == '[')
			return true;
	}
	return false;
}

static int plearn_bid(const uint8_t *head, size_t n, uint64_t size, const char *name)
{
	/* The .pmat header is the only magic; the others go by extension. */
	if (n >= 7 && !memcmp(head, "MATRIX ", 7))
		return 56 + (mfs_has_ext(name, ".pmat") ? 8 : 0);
	if (mfs_has_ext(name, ".pmat") || mfs_has_ext(name, ".amat"))
		return 8;
	/* Any .psave or .plearn bids, so that one that cannot be read is
	 * reported, not passed through silently; plausible first bytes add
	 * evidence. */
	if (mfs_has_ext(name, ".psave") || mfs_has_ext(name, ".plearn"))
		return plausible(head, n, size) ? 16 : 8;
	return 0;
}

static int plearn_open(struct mfs_model *m, struct mfs_err *err)
{
	struct plearn_model *pm = calloc(1, sizeof(*pm));
	if (!pm)
		return mfs_error(err, ENOMEM, "out of memory");
	m->priv = pm;
	if ((m->size >= 7 && !memcmp(m->base, "MATRIX ", 7)) || mfs_has_ext(m->name, ".pmat")) {
		pm->format = PLEARN_PMAT;
		return plearn_pmat_open(m, pm, err);
	}
	if (mfs_has_ext(m->name, ".amat")) {
		pm->format = PLEARN_AMAT;
		return plearn_amat_open(m, pm, err);
	}
	pm->format = PLEARN_PSAVE;
	return plearn_psave_open(m, pm, err);
}

static void plearn_close(struct mfs_model *m)
{
	struct plearn_model *pm = m->priv;
	if (!pm)
		return;
	free(pm->num);
	free(pm->tens);
	free(pm->texts);
	free(pm);
	m->priv = NULL;
}

static int plearn_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
		       struct mfs_err *err)
{
	const struct plearn_model *pm = m->priv;
	switch (e->kind) {
	case MFS_E_TEXT:
		return plearn_text_edit(m, e, p, err);
	case MFS_E_TENSOR:
		if (pm->format == PLEARN_PMAT)
			return plearn_pmat_edit(m, e, p, err);
		return plearn_tensor_edit(m, e, p, err);
	default:
		return mfs_error(err, EINVAL, "PLearn files have no sparse tensors");
	}
}

const struct mfs_codec mfs_codec_plearn = {
	.name = "plearn",
	.title = "PLearn",
	.sidecar = NULL,
	.bid = plearn_bid,
	.open = plearn_open,
	.close = plearn_close,
	.edit = plearn_edit,
};
