/* Logging: one function for every message, and the error lines users see in
 * MOUNTPOINT/.modelfs/errors ("<ISO time> <path>: <message>", newest last):
 * each refused change or unreadable file is one line, in the log and there. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"

#define ERRORS_MAX_LINES 1000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *logf;
static bool foreground, debug;  /* the mount's -f and -d */
static char *lines[ERRORS_MAX_LINES];
static size_t first, count;

void log_init(const struct fsopts *o)
{
	foreground = o->foreground;
	debug = o->debug;
	if (o->log_path) {
		logf = fopen(o->log_path, "ae");
		if (logf)
			setvbuf(logf, NULL, _IOLBF, 0);
	}
	if (!logf && !foreground)
		openlog("modelfs", LOG_PID, LOG_DAEMON);
}

void log_msg(int level, const char *fmt, ...)
{
	if (level == LOG_DEBUG && !debug)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&lock);
	if (logf)
		fprintf(logf, "modelfs: %s\n", buf);
	else if (foreground)
		fprintf(stderr, "modelfs: %s\n", buf);
	else
		syslog(level, "%s", buf);
	pthread_mutex_unlock(&lock);
}

void log_error(const struct inode *where, const char *name, int code, const char *msg)
{
	char path[4096];
	int n = where ? inode_path(where, path, sizeof(path)) : 0;
	if (n < 0)
		n = 0;
	if (name)
		snprintf(path + n, sizeof(path) - (size_t)n, "%s%s", n ? "/" : "", name);
	else
		path[n] = '\0';
	char when[40];
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	const char *what = msg && msg[0] ? msg : strerror(code);
	char *line;
	int n0 = (int)strlen(when) + 1;
	if (asprintf(&line, "%s %s: %s\n", when, path[0] ? path : ".", what) < 0)
		return;
	/* One event, one line, all UTF-8: names from files may hold control
	 * bytes and bytes that are not text. */
	char *end = line + strlen(line) - 1;  /* the newline stays */
	for (char *c = line; c < end;) {
		size_t u = mfs_utf8_char(c, (size_t)(end - c));
		if (u == 0 || (unsigned char)*c < 0x20 || *c == 0x7f) {
			*c = '?';
			u = 1;
		}
		c += u;
	}
	log_msg(LOG_ERR, "%.*s", (int)strlen(line + n0) - 1, line + n0);
	pthread_mutex_lock(&lock);
	if (count == ERRORS_MAX_LINES) {
		free(lines[first]);
		first = (first + 1) % ERRORS_MAX_LINES;
		count--;
	}
	lines[(first + count) % ERRORS_MAX_LINES] = line;
	count++;
	pthread_mutex_unlock(&lock);
}

char *errors_snapshot(size_t *len)
{
	pthread_mutex_lock(&lock);
	size_t total = 0;
	for (size_t k = 0; k < count; k++)
		total += strlen(lines[(first + k) % ERRORS_MAX_LINES]);
	char *buf = malloc(total + 1);
	if (buf) {
		size_t o = 0;
		for (size_t k = 0; k < count; k++) {
			const char *l = lines[(first + k) % ERRORS_MAX_LINES];
			size_t n = strlen(l);
			memcpy(buf + o, l, n);
			o += n;
		}
		buf[o] = '\0';
	}
	pthread_mutex_unlock(&lock);
	*len = buf ? total : 0;
	return buf;
}
