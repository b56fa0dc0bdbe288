/* Leaving the foreground in the caller's session (detach.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "detach.h"

/* Standard input, output and error to /dev/null. */
static void stdio_to_null(void)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	for (int k = 0; k < 3; k++)
		if (fd != k)
			dup2(fd, k);
	if (fd > 2)
		close(fd);
}

/* The working directory to /, holding no directory busy (as libfuse: a
 * failure is no failure). */
static void to_root(void)
{
	if (chdir("/") < 0)
		return;
}

int detach(bool foreground)
{
	if (foreground) {
		to_root();
		return 0;
	}
	int done[2];
	if (pipe2(done, O_CLOEXEC) < 0) {
		fprintf(stderr, "modelfs: cannot detach: %s\n", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "modelfs: cannot detach: %s\n", strerror(errno));
		close(done[0]);
		close(done[1]);
		return -1;
	}
	if (pid > 0) {
		/* The parent exits once the child is ready: the mount is up when
		 * the command returns. */
		char c;
		close(done[1]);
		ssize_t n;
		do
			n = read(done[0], &c, 1);
		while (n < 0 && errno == EINTR);
		_exit(n == 1 ? 0 : 1);
	}
	close(done[0]);
	if (setpgid(0, 0) < 0) {
		fprintf(stderr, "modelfs: cannot detach: %s\n", strerror(errno));
		return -1;
	}
	to_root();
	stdio_to_null();
	char c = 1;
	ssize_t n = write(done[1], &c, 1);
	close(done[1]);
	return n == 1 ? 0 : -1;
}
