/* A member's new content compressed as it is made, in bounded memory: the
 * content a window at a time (the old content, inflated or copied, with
 * runs of new bytes written over it; or a source's bytes), deflated into
 * an output window at a time. A first pass at the edit learns the new
 * compressed length and CRC-32 (and keeps the compressed bytes when they
 * are few); when it could not keep them, the commit makes them again
 * through a generated span (edit.h) that runs the same steps, so makes the
 * same bytes, checked against the first pass's length and CRC-32. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bytes.h"
#include "guard.h"
#include "zip_impl.h"

#define WIN (256u << 10)        /* content made at a time */
#define OUT (64u << 10)         /* compressed bytes made at a time */
#define KEEP_MAX (4u << 20)     /* compressed bytes the first pass keeps, at most */
/* What a pump for member zm holds: its windows, a deflater and an inflate
 * stream (zip_flate.h). */
static uint64_t pump_mem(const struct mfs_zip_member *zm)
{
	return WIN + OUT + zip_deflater_mem(zm->flags) + zip_flate_size;
}

struct pump {
	const uint8_t *base;
	struct mfs_zip_member zm;
	struct mfs_zip_put put;
	uint64_t size;          /* content bytes */
	uint64_t pos;           /* content made so far */
	uint32_t crc;           /* of the content made */
	size_t run;             /* the first run that does not end before pos */
	struct zip_in in;       /* the old content of a deflated member */
	bool in_on, done;
	struct zip_deflater *def;   /* NULL: the member is stored */
	const uint8_t *next;        /* content in win not deflated yet */
	size_t avail;
	uint8_t *win, *out;
	size_t out_len;         /* compressed bytes in out */
	uint64_t made;          /* compressed bytes made, out's included */
	uint32_t ccrc;          /* their CRC-32 */
};

static void pump_free(struct pump *pu)
{
	if (pu->in_on)
		zip_in_end(&pu->in);
	zip_deflater_free(pu->def);
	free(pu->win);
	free(pu->out);
	memset(pu, 0, sizeof(*pu));
}

static int pump_init(struct pump *pu, const uint8_t *base, const struct mfs_zip_member *zm,
		     const struct mfs_zip_put *put, struct mfs_err *err)
{
	memset(pu, 0, sizeof(*pu));
	pu->base = base;
	pu->zm = *zm;
	pu->put = *put;
	pu->size = put->src.read ? put->src.size : zm->usize;
	pu->win = malloc(WIN);
	pu->out = malloc(OUT);
	int r = pu->win && pu->out ? 0 : mfs_error(err, ENOMEM, "out of memory");
	if (r == 0 && zm->method == 8 && !(pu->def = zip_deflater_new(zm->flags)))
		r = mfs_error(err, ENOMEM, "out of memory (deflate)");
	if (r == 0 && !put->src.read && zm->method == 8) {
		r = zip_in_start(&pu->in, err);
		pu->in_on = r == 0;
	}
	if (r < 0)
		pump_free(pu);
	return r;
}

/* The runs over content [pos, pos + n), written into dst (which holds it). */
static void overlay(struct pump *pu, uint8_t *dst, uint64_t n)
{
	const struct mfs_zip_put *put = &pu->put;
	uint64_t pos = pu->pos, end = pos + n;
	for (size_t k = pu->run; k < put->nruns && put->runs[k].off < end; k++) {
		const struct mfs_zip_run *r = &put->runs[k];
		uint64_t a = r->off > pos ? r->off : pos, b = r->off + r->len < end ? r->off + r->len : end;
		if (a >= b)
			continue;
		if (put->swap > 1)
			mfs_copy_swapped(dst + (a - pos), r->bytes, a - r->off, b - a, put->swap);
		else
			memcpy(dst + (a - pos), r->bytes + (a - r->off), (size_t)(b - a));
	}
	while (pu->run < put->nruns && put->runs[pu->run].off + put->runs[pu->run].len <= end)
		pu->run++;
}

/* The next n bytes of content into dst. Touches the source. */
static int content(struct pump *pu, uint8_t *dst, uint64_t n, struct mfs_err *err)
{
	int r = 0;
	if (pu->put.src.read)
		r = pu->put.src.read(pu->put.src.ctx, pu->pos, n, dst, err);
	else if (pu->zm.method == 8)
		r = zip_in_read(pu->base, &pu->zm, &pu->in, dst, n, err);
	else
		memcpy(dst, pu->base + pu->zm.data_off + pu->pos, (size_t)n);
	if (r < 0)
		return r;
	if (!pu->put.src.read)
		overlay(pu, dst, n);
	pu->crc = (uint32_t)crc32(pu->crc, dst, (uInt)n);
	pu->pos += n;
	return 0;
}

/* The next output window into pu->out (out_len bytes, maybe none); done
 * once the last is made. Touches the source. */
static int step(struct pump *pu, struct mfs_err *err)
{
	pu->out_len = 0;
	int r = 0;
	if (!pu->def) {  /* stored: the content is the data */
		uint64_t n = pu->size - pu->pos < OUT ? pu->size - pu->pos : OUT;
		r = content(pu, pu->out, n, err);
		pu->out_len = (size_t)n;
		pu->done = r == 0 && pu->pos == pu->size;
	} else {
		if (pu->avail == 0 && pu->pos < pu->size) {
			uint64_t n = pu->size - pu->pos < WIN ? pu->size - pu->pos : WIN;
			if ((r = content(pu, pu->win, n, err)) < 0)
				return r;
			pu->next = pu->win;
			pu->avail = (size_t)n;
		}
		uint8_t *o = pu->out;
		size_t room = OUT;
		int fr = zip_deflater_run(pu->def, &pu->next, &pu->avail, &o, &room,
					  pu->pos == pu->size);
		pu->out_len = OUT - room;
		if (fr == ZIP_FLATE_END)
			pu->done = true;
		else if (fr == ZIP_FLATE_BAD)
			return mfs_error(err, EIO, "internal error: deflate failed");
	}
	pu->made += pu->out_len;
	pu->ccrc = (uint32_t)crc32(pu->ccrc, pu->out, (uInt)pu->out_len);
	return r;
}

/* ---- the first pass -------------------------------------------------- */

struct first {
	struct pump pu;
	struct mfs_patch *p;
	uint8_t *kept;          /* the compressed bytes so far, while they fit */
	uint64_t kept_cap;      /* held in p */
	bool keeping;
	struct mfs_err *err;
};

static void drop_kept(struct first *f)
{
	free(f->kept);
	f->kept = NULL;
	mfs_patch_release(f->p, f->kept_cap);
	f->kept_cap = 0;
	f->keeping = false;
}

/* Room for the compressed bytes made so far among the kept ones, while
 * they fit within KEEP_MAX and what p may still hold. */
static bool keep_room(struct first *f)
{
	uint64_t need = f->pu.made;
	if (need <= f->kept_cap)
		return true;
	uint64_t cap = f->kept_cap ? f->kept_cap : OUT;
	while (cap < need)
		cap *= 2;
	uint8_t *k = NULL;
	if (cap <= KEEP_MAX && mfs_patch_hold(f->p, cap - f->kept_cap, "", NULL) == 0) {
		k = realloc(f->kept, (size_t)cap);
		if (!k)
			mfs_patch_release(f->p, cap - f->kept_cap);
	}
	if (!k)
		return false;
	f->kept = k;
	f->kept_cap = cap;
	return true;
}

static void keep_out(struct first *f)
{
	if (!f->keeping || !f->pu.out_len)
		return;
	if (!keep_room(f)) {
		drop_kept(f);
		return;
	}
	memcpy(f->kept + (f->pu.made - f->pu.out_len), f->pu.out, f->pu.out_len);
}

static int run_first(void *arg)
{
	struct first *f = arg;
	int r = 0;
	while (r == 0 && !f->pu.done)
		if ((r = step(&f->pu, f->err)) == 0)
			keep_out(f);
	return r;
}

/* ---- the second pass, as the commit writes ------------------------------ */

struct zgen {
	struct mfs_gen g;       /* first: the patch's */
	struct pump pu;         /* started on the first read */
	bool started;
	const uint8_t *base;
	struct mfs_zip_member zm;
	struct mfs_zip_put put;
	uint64_t clen;          /* what the first pass made */
	uint32_t ccrc;
	size_t used;            /* bytes of pu.out already read */
};

struct gen_call {
	struct zgen *z;
	uint64_t from, n;
	uint8_t *out;
	struct mfs_err *err;
};

/* The first pass's bytes again, or an error: never others. */
static int checked_step(struct zgen *z, struct mfs_err *err)
{
	if (z->pu.done)
		return mfs_error(err, EIO, "internal error: the member compressed again ended early, at byte %llu of %llu",
				 (unsigned long long)z->pu.made, (unsigned long long)z->clen);
	int r = step(&z->pu, err);
	z->used = 0;
	if (r == 0 && (z->pu.made > z->clen || (z->pu.done && (z->pu.made != z->clen ||
							       z->pu.ccrc != z->ccrc))))
		r = mfs_error(err, EIO, "internal error: the member compressed again differs from the first time (%llu bytes, %llu expected)",
			      (unsigned long long)z->pu.made, (unsigned long long)z->clen);
	return r;
}

static int run_gen(void *arg)
{
	struct gen_call *a = arg;
	struct zgen *z = a->z;
	int r = 0;
	while (r == 0 && a->n) {
		/* Compressed bytes [at, at + out_len) are in out. */
		uint64_t at = z->pu.made - z->pu.out_len, end = z->pu.made;
		if (a->from >= end || z->used == z->pu.out_len) {
			r = checked_step(z, a->err);
			continue;
		}
		size_t k = (size_t)(a->from - at), n = z->pu.out_len - k;
		if (n > a->n)
			n = (size_t)a->n;
		memcpy(a->out, z->pu.out + k, n);
		z->used = k + n;
		a->out += n;
		a->from += n;
		a->n -= n;
	}
	return r;
}

static int gen_read(struct mfs_gen *g, uint64_t from, uint64_t n, uint8_t *out,
		    struct mfs_err *err)
{
	struct zgen *z = (struct zgen *)g;
	uint64_t at = z->pu.made - z->pu.out_len;
	if (z->started && from < at + z->used) {  /* behind: start over */
		pump_free(&z->pu);
		z->started = false;
	}
	if (!z->started) {
		int r = pump_init(&z->pu, z->base, &z->zm, &z->put, err);
		if (r < 0)
			return r;
		z->started = true;
		z->used = 0;
	}
	struct gen_call a = {z, from, n, out, err};
	return mfs_guarded(run_gen, &a, err);
}

static void gen_free(struct mfs_gen *g)
{
	struct zgen *z = (struct zgen *)g;
	if (z->started)
		pump_free(&z->pu);
	free(z);
}

/* What put asks of member zm is something a pump can make. */
static int check_put(const struct mfs_zip_member *zm, const struct mfs_zip_put *put,
		     struct mfs_err *err)
{
	if (zm->method != 0 && zm->method != 8)
		return mfs_error(err, ENOTSUP, "the member's compression method %u cannot be written",
				 (unsigned)zm->method);
	if (put->src.read)
		return 0;
	if (zm->method == 0 && zm->csize != zm->usize)
		return mfs_error(err, EINVAL, "the member is stored but says %llu bytes compressed and %llu uncompressed",
				 (unsigned long long)zm->csize, (unsigned long long)zm->usize);
	uint64_t end = 0;
	for (size_t k = 0; k < put->nruns; k++) {
		const struct mfs_zip_run *r = &put->runs[k];
		if (r->off < end || r->off > zm->usize || r->len > zm->usize - r->off)
			return mfs_error(err, EINVAL, "internal error: a run of new bytes at %llu is out of order or beyond the member",
					 (unsigned long long)r->off);
		end = r->off + r->len;
	}
	return 0;
}

int zip_compress(struct mfs_patch *p, const uint8_t *base, const struct mfs_zip_member *zm,
		 const struct mfs_zip_put *put, struct zip_new *nw, struct mfs_err *err)
{
	struct first f = {.p = p, .keeping = true, .err = err};
	int r = check_put(zm, put, err);
	if (r < 0)
		return r;
	r = mfs_patch_hold(p, pump_mem(zm), "compressing the member again", err);
	if (r < 0)
		return r;
	if ((r = pump_init(&f.pu, base, zm, put, err)) == 0) {
		r = mfs_guarded(run_first, &f, err);
		nw->usize = f.pu.size;
		nw->clen = f.pu.made;
		nw->crc = f.pu.crc;
		nw->ccrc = f.pu.ccrc;
		pump_free(&f.pu);
	}
	mfs_patch_release(p, pump_mem(zm));
	nw->data = NULL;
	nw->gen = NULL;
	uint8_t *kept = f.keeping ? f.kept : NULL;
	f.kept = NULL;
	drop_kept(&f);  /* (kept is moved into the patch below, or freed) */
	if (r == 0 && kept && nw->clen <= mfs_patch_room(p)) {
		uint8_t *d = mfs_patch_keep(p, nw->clen);
		if (d)
			memcpy(d, kept, (size_t)nw->clen);
		nw->data = d;
		r = d ? 0 : mfs_error(err, ENOMEM, "out of memory");
	}
	free(kept);
	if (r < 0 || nw->data)
		return r;
	/* Made again as the commit writes them. */
	struct zgen *z = calloc(1, sizeof(*z));
	if (!z || (r = mfs_patch_hold(p, pump_mem(zm), "compressing the member again", err)) < 0) {
		free(z);
		return r < 0 ? r : mfs_error(err, ENOMEM, "out of memory");
	}
	*z = (struct zgen){.g = {.read = gen_read, .free = gen_free}, .base = base, .zm = *zm,
			   .put = *put, .clen = nw->clen, .ccrc = nw->ccrc};
	nw->gen = &z->g;
	return 0;
}
