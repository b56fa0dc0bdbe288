/* Edits of a torch.save file as patches. */
#include <errno.h>

#include "pytorch.h"

int pt_edit(struct mfs_model *m, const struct mfs_edit *e, struct mfs_patch *p,
	    struct mfs_err *err)
{
	(void)m;
	(void)e;
	(void)p;
	return mfs_error(err, EACCES, "read-only");
}
