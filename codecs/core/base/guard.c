/* SIGBUS guard for reads of mapped files (see guard.h). */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>

#include "guard.h"

struct guard {
	sigjmp_buf jb;
	struct guard *prev;
};

static _Thread_local struct guard *top;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct sigaction previous;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (top)
		siglongjmp(top->jb, 1);
	/* Not a guarded read: behave as if we had never been installed. */
	if (previous.sa_flags & SA_SIGINFO) {
		if (previous.sa_sigaction) {
			previous.sa_sigaction(sig, si, uc);
			return;
		}
	} else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
		previous.sa_handler(sig);
		return;
	}
	signal(SIGBUS, SIG_DFL);
	raise(SIGBUS);
}

static void install(void)
{
	struct sigaction sa, now;
	if (sigaction(SIGBUS, NULL, &now) == 0 && (now.sa_flags & SA_SIGINFO) &&
	    now.sa_sigaction == on_sigbus)
		return;  /* ours already: chaining to ourselves would loop */
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_sigbus;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, &previous);
}

void mfs_guard_install(void)
{
	pthread_once(&once, install);
	install();
}

int mfs_guarded(int (*fn)(void *arg), void *arg, struct mfs_err *err)
{
	pthread_once(&once, install);
	struct guard g;
	g.prev = top;
	/* The mask is not saved (a syscall on every call). SIGBUS is
	 * delivered with SA_NODEFER, but a sanitizer's own handler, or ours
	 * installed again through signal() by a test framework, blocks it
	 * while the handler runs: unblocked here, on the rare way back, so
	 * that a second fault is caught as the first. */
	if (sigsetjmp(g.jb, 0)) {
		sigset_t bus;
		sigemptyset(&bus);
		sigaddset(&bus, SIGBUS);
		pthread_sigmask(SIG_UNBLOCK, &bus, NULL);
		top = g.prev;
		return mfs_error(err, EIO, "the source file shrank while it was being read");
	}
	top = &g;
	int r = fn(arg);
	top = g.prev;
	return r;
}
