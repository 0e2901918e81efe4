// SPDX-License-Identifier: GPL-2.0
/*
 * Unwinding corpus: frames of every shape SFrame must describe.  Runs for
 * argv[1] milliseconds of CPU time.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

int lib_call(int (*cb)(int), int n);
int asm_call(int (*cb)(int), int n);

volatile unsigned long sink;
static volatile int in_handler;

__attribute__((noinline)) int spin(int n)
{
	unsigned long s = 0;

	for (int i = 0; i < n * 100; i++)
		s += (unsigned long)i * i;
	sink += s;
	return (int)s & 1;
}

/* Keeps its frame pointer even at -O2. */
__attribute__((noinline, optimize("no-omit-frame-pointer"))) int with_fp(int n)
{
	return spin(n) + 1;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) int without_fp(int n)
{
	return with_fp(n) + 1;
}

/* A VLA makes the CFA FP based in the middle of the function. */
__attribute__((noinline)) int vla(int n)
{
	volatile char buf[n + 16];

	buf[0] = n;
	return without_fp(n) + buf[0];
}

__attribute__((noinline, cold)) void cold_note(int n)
{
	sink += n;
}

/* The branch calling a cold function goes to split.cold, a separate FDE. */
__attribute__((noinline)) int split(int n)
{
	if (n > 1000) {
		unsigned long s = 0;

		cold_note(n);
		for (int i = 0; i < n * 100; i++)
			s ^= (unsigned long)i * n;
		sink += s;
		return spin(n) + 2;
	}
	return vla(n) + 1;
}

static int (*volatile recp)(int, int);

__attribute__((noinline)) int recurse(int depth, int n)
{
	int r;

	if (!depth)
		return (sink & 1) ? split(n * 21) : split(n);
	r = recp(depth - 1, n);
	sink += r;
	return r + 1;
}

static int cb(int n)
{
	return recurse(8, n);
}

static void handler(int sig)
{
	(void)sig;
	if (in_handler)
		return;
	in_handler = 1;
	recurse(4, 30);
	in_handler = 0;
}

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	double until = argc > 1 ? atof(argv[1]) : 500;
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };

	recp = recurse;
	signal(SIGPROF, handler);
	setitimer(ITIMER_PROF, &it, NULL);
	while (cpu_ms() < until) {
		recurse(30, 50);
		lib_call(cb, 40);
		asm_call(cb, 40);
	}
	return 0;
}
