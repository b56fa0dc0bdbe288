/* Unit tests of codecs/core/fdio.c, the one loop of whole reads, writes
 * and copies: a write larger than a pipe holds (the kernel cuts it short,
 * the loop goes on), writes at the file position and at an offset, a read
 * past the end (-EIO), and copies of ranges between files, unaligned and
 * past the end of the source. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fdio.h"
#include "helpers.h"

#define BIG (1u << 20)  /* more than a pipe's 64 KiB */

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131 + seed + (i >> 9));
}

struct drain {
	int fd;
	uint8_t *got;
	int r;
};

static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	d->r = mfs_read_all(d->fd, d->got, BIG, MFS_AT_POS);
	return NULL;
}

static void test_pipe_short_writes(void **state)
{
	(void)state;
	int p[2];
	assert_int_equal(pipe(p), 0);
	uint8_t *buf = malloc(BIG), *got = malloc(BIG);
	fill(buf, BIG, 7);
	struct drain d = {p[0], got, 1};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, drain_pipe, &d), 0);
	assert_int_equal(mfs_write_all(p[1], buf, BIG, MFS_AT_POS), 0);
	pthread_join(t, NULL);
	assert_int_equal(d.r, 0);
	assert_memory_equal(buf, got, BIG);
	close(p[1]);
	/* the writer is gone: a read of more ends with -EIO */
	assert_int_equal(mfs_read_all(p[0], got, 1, MFS_AT_POS), -EIO);
	close(p[0]);
	assert_int_equal(mfs_write_all(-1, buf, 1, 0), -EBADF);
	free(buf);
	free(got);
}

static int tmpfd(void)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	int fd = dup(fileno(f));
	fclose(f);
	return fd;
}

static void test_offsets(void **state)
{
	(void)state;
	int fd = tmpfd();
	uint8_t a[300], b[300];
	fill(a, sizeof(a), 1);
	assert_int_equal(mfs_write_all(fd, a, 100, MFS_AT_POS), 0);
	assert_int_equal(mfs_write_all(fd, a + 100, 200, 100), 0);
	assert_int_equal(mfs_read_all(fd, b, 300, 0), 0);
	assert_memory_equal(a, b, 300);
	assert_int_equal(mfs_read_all(fd, b, 2, 299), -EIO);
	assert_int_equal(mfs_read_all(fd, b, 0, 1000), 0);
	close(fd);
}

static void test_copy_range(void **state)
{
	(void)state;
	int src = tmpfd(), dst = tmpfd();
	size_t n = 3 * MFS_COPY_BUF + 12345;
	uint8_t *a = malloc(n), *b = malloc(n);
	char *buf = malloc(MFS_COPY_BUF);
	fill(a, n, 3);
	assert_int_equal(mfs_write_all(src, a, n, 0), 0);
	/* offsets at different places in a page: spliced through a pipe */
	assert_int_equal(mfs_copy_range(src, 17, dst, 5, n - 17, buf), 0);
	assert_int_equal(mfs_read_all(dst, b, n - 17, 5), 0);
	assert_memory_equal(a + 17, b, n - 17);
	/* at the same place: copy_file_range */
	assert_int_equal(mfs_copy_range(src, 17, dst, 4096 + 17, n - 17, buf), 0);
	assert_int_equal(mfs_read_all(dst, b, n - 17, 4096 + 17), 0);
	assert_memory_equal(a + 17, b, n - 17);
	/* the source ends first */
	assert_int_equal(mfs_copy_range(src, n - 10, dst, 0, 11, buf), -EIO);
	/* to a pipe, where copy_file_range cannot copy: through buf */
	int p[2];
	assert_int_equal(pipe(p), 0);
	assert_int_equal(mfs_copy_range(src, 1, p[1], 0, 1000, buf), -ESPIPE);
	close(p[0]);
	close(p[1]);
	close(src);
	close(dst);
	free(a);
	free(b);
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pipe_short_writes),
		cmocka_unit_test(test_offsets),
		cmocka_unit_test(test_copy_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
