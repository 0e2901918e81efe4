// SPDX-License-Identifier: GPL-2.0
/*
 * Workloads with a known user stack, for deferred callchains.
 *
 * Build: gcc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
 *        -pthread -o dwork THIS_FILE
 *
 *   dwork recurse [-d DEPTH] [-s SECONDS]
 *	one thread: main -> recurse x (DEPTH + 1) -> work_loop -> syscalls
 *	and user-space spinning. Deep stacks: DEPTH 300 (beyond perf's 127)
 *	or 600 (beyond the kernel's 510 deferred entries).
 *   dwork threads [-t THREADS] [-d DEPTH] [-s SECONDS]
 *	THREADS threads, thread i: thread_main -> recurse x (DEPTH + 3i + 1)
 *	-> work_loop, flipping its CPU affinity between CPU 0 and CPU 1
 *	every round so that it migrates all the time; up to 64 threads.
 *   dwork exit [-t THREADS] [-d DEPTH] [-s SECONDS]
 *	waves of THREADS short-lived threads; each ends with a raw exit()
 *	right after a long read(), from the bottom of its recursion, and the
 *	process ends with a raw exit_group() in the same way: samples taken
 *	in the exit paths never get a deferred user callchain.
 *
 * Each thread prints "thread INDEX TID DEPTH" (the number of recurse
 * frames it has is DEPTH + 1) so that a test can check every sample; TID
 * is the one perf records, also inside a pid namespace (unshare -p).
 *
 * Syscalls are raw inline-asm syscalls and there is no libc call in the
 * measured loop, so that the frame-pointer chain is intact everywhere
 * (the guest's libc has no frame pointers). Leaf functions touch a
 * volatile stack slot so that gcc gives them a real frame.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define noinline	__attribute__((noinline))
#define MAX_THREADS	128
#define BUF_SIZE	(1 << 20)

enum mode { MODE_RECURSE, MODE_THREADS, MODE_EXIT };

static enum mode g_mode;
static double g_seconds = 1.0;
static int g_depth = 40;
static int g_nthreads = 4;
static int g_fd_null = -1, g_fd_zero = -1;
static char *g_bufs[MAX_THREADS];
volatile unsigned long g_sink;

static noinline long raw_syscall3(long nr, long a, long b, long c)
{
	volatile long slot = nr;	/* forces a real frame in this leaf */
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"(slot), "D"(a), "S"(b), "d"(c)
			  : "rcx", "r11", "memory");
	return ret;
}

static noinline double now(void)
{
	struct timespec ts;

	/* a real syscall, not the vDSO */
	raw_syscall3(SYS_clock_gettime, CLOCK_MONOTONIC, (long)&ts, 0);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static noinline void cheap_syscalls(int n)
{
	for (int i = 0; i < n; i++) {
		raw_syscall3(SYS_getppid, 0, 0, 0);
		raw_syscall3(SYS_write, g_fd_null, (long)"x", 1);
	}
}

static noinline void long_read(int idx)
{
	/* several samples inside one kernel entry: one shared cookie */
	raw_syscall3(SYS_read, g_fd_zero, (long)g_bufs[idx < 0 ? MAX_THREADS - 1 : idx],
		     BUF_SIZE);
}

static noinline void user_spin(int n)
{
	volatile int slot = n;	/* forces a real frame in this leaf */
	unsigned long x = 0;

	n = slot;
	for (int i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	g_sink += x;
}

static noinline void migrate(int round)
{
	unsigned long mask = 1UL << (round & 1);

	raw_syscall3(SYS_sched_setaffinity, 0, sizeof(mask), (long)&mask);
}

static noinline void work_loop(int idx)
{
	double end = now() + g_seconds;
	int round = 0;

	while (now() < end) {
		cheap_syscalls(50);
		long_read(idx);
		user_spin(50000);
		if (g_mode == MODE_THREADS)
			migrate(round++);
	}
	if (g_mode == MODE_EXIT) {
		long_read(idx);
		raw_syscall3(idx < 0 ? SYS_exit_group : SYS_exit, 0, 0, 0);
	}
}

static noinline void recurse(int idx, int d)
{
	if (d > 0)
		recurse(idx, d - 1);
	else
		work_loop(idx);
	g_sink++;	/* no tail call */
}

/*
 * The tid perf records is the one of the pid namespace perf runs in, not
 * gettid() inside an unshared pid namespace: /proc/thread-self, read
 * through a /proc mounted outside that namespace, names the former.
 */
static long global_tid(void)
{
	char link[64];
	ssize_t n = readlink("/proc/thread-self", link, sizeof(link) - 1);
	char *task;

	if (n > 0) {
		link[n] = '\0';
		task = strstr(link, "/task/");
		if (task)
			return atol(task + 6);
	}
	return (long)syscall(SYS_gettid);
}

static void announce(int idx, int depth)
{
	printf("thread %d %ld %d\n", idx, global_tid(), depth);
	fflush(stdout);
}

static noinline void *thread_main(void *arg)
{
	int idx = (int)(long)arg;
	int depth = g_depth + 3 * (idx % 16);

	announce(idx, depth);
	recurse(idx, depth);
	return NULL;
}

static int run_threads(int n, int first)
{
	pthread_t th[MAX_THREADS];

	for (int i = 0; i < n; i++)
		if (pthread_create(&th[i], NULL, thread_main, (void *)(long)(first + i))) {
			perror("pthread_create");
			return 1;
		}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

static int usage(const char *prog)
{
	fprintf(stderr, "%s recurse|threads|exit [-t threads] [-d depth] [-s seconds]\n",
		prog);
	return 2;
}

int main(int argc, char **argv)
{
	int opt;

	if (argc < 2)
		return usage(argv[0]);
	if (!strcmp(argv[1], "recurse"))
		g_mode = MODE_RECURSE;
	else if (!strcmp(argv[1], "threads"))
		g_mode = MODE_THREADS;
	else if (!strcmp(argv[1], "exit"))
		g_mode = MODE_EXIT;
	else
		return usage(argv[0]);
	optind = 2;
	while ((opt = getopt(argc, argv, "t:s:d:")) != -1) {
		switch (opt) {
		case 't':
			g_nthreads = atoi(optarg);
			break;
		case 's':
			g_seconds = atof(optarg);
			break;
		case 'd':
			g_depth = atoi(optarg);
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (g_nthreads < 1 || g_nthreads > MAX_THREADS / 2 || g_depth < 0)
		return usage(argv[0]);
	g_fd_null = open("/dev/null", O_WRONLY);
	g_fd_zero = open("/dev/zero", O_RDONLY);
	if (g_fd_null < 0 || g_fd_zero < 0) {
		perror("open");
		return 1;
	}
	for (int i = 0; i < MAX_THREADS; i++) {
		g_bufs[i] = malloc(BUF_SIZE);
		if (!g_bufs[i])
			return 1;
	}

	switch (g_mode) {
	case MODE_RECURSE:
		announce(0, g_depth);
		recurse(0, g_depth);
		break;
	case MODE_THREADS:
		if (run_threads(g_nthreads, 0))
			return 1;
		break;
	case MODE_EXIT:
		/* two waves of short-lived threads, then the process itself */
		g_seconds /= 4;
		if (run_threads(g_nthreads, 0) || run_threads(g_nthreads, g_nthreads))
			return 1;
		announce(-1, g_depth);
		recurse(-1, g_depth);	/* ends in exit_group() */
		break;
	}
	return 0;
}
