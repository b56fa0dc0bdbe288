/* Standalone driver for the fuzz targets (libgit2's standalone_driver): runs
 * LLVMFuzzerTestOneInput on every file of the directories (or the files)
 * given, in name order, so that saved corpora are regression tests. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

/* Run one file; returns 0, or -1 if it cannot be read. */
static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);
	for (;;) {
		if (!buf) {
			fclose(f);
			fprintf(stderr, "replay: %s: out of memory\n", path);
			return -1;
		}
		len += fread(buf + len, 1, cap - len, f);
		if (len < cap)
			break;
		cap *= 2;
		uint8_t *nb = realloc(buf, cap);
		if (!nb)
			free(buf);
		buf = nb;
	}
	int bad = ferror(f);
	fclose(f);
	if (bad) {
		free(buf);
		fprintf(stderr, "replay: %s: read error\n", path);
		return -1;
	}
	/* An exact-size copy: reads past the end are caught by the sanitizers. */
	uint8_t *in = malloc(len ? len : 1);
	if (!in) {
		free(buf);
		return -1;
	}
	memcpy(in, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(in, len);
	free(in);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Run every regular file of dir; returns how many, or -1. */
static long run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			char **nn = realloc(names, cap * sizeof(*names));
			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_names);
	long done = 0;
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(path) < 0)
				done = -1;
			else if (done >= 0)
				done++;
		}
		free(names[i]);
	}
	free(names);
	return done;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s DIR|FILE...\n", argv[0]);
		return 2;
	}
	long total = 0;
	int status = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		long n;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
			n = run_dir(argv[i]);
		else
			n = run_file(argv[i]) < 0 ? -1 : 1;
		if (n < 0)
			status = 1;
		else
			total += n;
	}
	printf("replay: %ld input(s) ran\n", total);
	if (total == 0) {
		fprintf(stderr, "replay: no inputs\n");
		return 1;
	}
	return status;
}
