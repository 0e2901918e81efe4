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
 * The task lifecycle modes (issue #24) run -n ROUNDS rounds of fixed work
 * instead of a wall time, so that a recording has its events by
 * construction however slow the guest is; -n also bounds recurse, threads
 * and exit (rounds of work_loop) when given. recurse and threads also
 * take -U MS and -K MS: each thread goes on with rounds past -n until it
 * has used MS milliseconds of user (-U) and kernel (-K) CPU time, so that
 * a cpu-clock recording has its samples (cpu-clock samples CPU time)
 * however fast or slow the host is; without -n, -U and -K alone bound
 * the run (never -s: a wall time is what they replace). -R KIB sets the
 * size of each round's long read() of /dev/zero (1024 KiB by default): a
 * bigger read is a longer kernel entry, with more samples sharing its one
 * deferred user callchain.
 *   dwork offcpu [-n ROUNDS] [-d DEPTH]
 *	two threads (main, index 0, and a waker, index 1) blocking in turn
 *	below their recursion: each round main waits on a pipe the waker
 *	answers, sleeps in nanosleep() and waits on a futex the waker wakes;
 *	in the middle round the waker answers after 1.2 s (a read blocked
 *	more than a second). For -e sched:sched_switch: every block is a
 *	switch out in a kernel entry whose record comes when the task runs
 *	again.
 *   dwork signal [-n SIGNALS] [-d DEPTH]
 *	SIGALRM (ITIMER_REAL) and SIGPROF (ITIMER_PROF) every millisecond,
 *	handled on a sigaltstack by a handler that makes syscalls and spins,
 *	until SIGNALS were handled; main makes syscalls and spins meanwhile.
 *   dwork fault [-n ROUNDS] [-d DEPTH]
 *	each round read()s /dev/zero into FAULT_PAGES fresh anonymous pages:
 *	the page faults are taken inside read() (for -e page-faults).
 *   dwork exec [-n GENERATIONS] [-d DEPTH]
 *	an exec storm: each generation vfork()s a child that execs
 *	"dwork exec -n 0" (a short run), then starts a thread that, below
 *	its recursion, execs "dwork exec -n GENERATIONS-1" while the leader
 *	keeps making syscalls: the kernel's de_thread() kills the leader and
 *	hands its tid to the exec'ing thread.
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
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define noinline	__attribute__((noinline))
#define MAX_THREADS	128
#define BUF_SIZE	(1 << 20)	/* default of the long read */
#define FAULT_PAGES	64
#define ALTSTACK_SIZE	(64 << 10)

enum mode { MODE_RECURSE, MODE_THREADS, MODE_EXIT, MODE_OFFCPU, MODE_SIGNAL, MODE_FAULT,
	    MODE_EXEC };

static enum mode g_mode;
static double g_seconds = 1.0;
static int g_depth = 40;
static int g_nthreads = 4;
static int g_rounds = -1;		/* -n: rounds instead of seconds */
static long g_user_ms, g_kern_ms;	/* -U, -K: at least this CPU time */
static long g_read_size = BUF_SIZE;	/* -R: bytes of the long read */
static const char *g_self;		/* argv[0], for exec mode */
static int g_pipe_ab[2], g_pipe_ba[2];	/* offcpu: main -> waker, waker -> main */
static int g_futex;			/* offcpu: main waits, the waker wakes */
static int g_signals;			/* signal: handled so far (atomic) */
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

/* this thread's user (0) and kernel (1) CPU time so far, in ms */
static noinline void cpu_ms(long ms[2])
{
	struct rusage ru;

	/* a raw syscall: libc has no frame pointers (see above) */
	raw_syscall3(SYS_getrusage, RUSAGE_THREAD, (long)&ru, 0);
	ms[0] = ru.ru_utime.tv_sec * 1000 + ru.ru_utime.tv_usec / 1000;
	ms[1] = ru.ru_stime.tv_sec * 1000 + ru.ru_stime.tv_usec / 1000;
}

/*
 * This thread has used -U ms of user and -K ms of kernel CPU time since
 * START, its work loop's start: exec and ld.so's page faults before it
 * are not the recursion's (they took two thirds of a :k run's kernel
 * time in the guest, more on a slower host).
 */
static noinline int cpu_done(const long start[2])
{
	long ms[2];

	if (!g_user_ms && !g_kern_ms)
		return 1;
	cpu_ms(ms);
	return ms[0] - start[0] >= g_user_ms && ms[1] - start[1] >= g_kern_ms;
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
		     g_read_size);
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

static noinline long raw_syscall6(long nr, long a, long b, long c, long d, long e,
				 long f)
{
	volatile long slot = nr;	/* forces a real frame in this leaf */
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long ret;

	__asm__ volatile ("syscall" : "=a"(ret) : "a"(slot), "D"(a), "S"(b), "d"(c),
			  "r"(r10), "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

static noinline void sleep_ns(long ns)
{
	struct timespec ts = { ns / 1000000000, ns % 1000000000 };

	raw_syscall3(SYS_nanosleep, (long)&ts, 0, 0);
}

static noinline void pipe_put(int fd, char c)
{
	raw_syscall3(SYS_write, fd, (long)&c, 1);
}

static noinline char pipe_get(int fd)
{
	char c = 0;

	/* blocks, switched out, until the other thread writes */
	raw_syscall3(SYS_read, fd, (long)&c, 1);
	return c;
}

static noinline void futex_block(void)
{
	while (!__atomic_load_n(&g_futex, __ATOMIC_ACQUIRE))
		raw_syscall6(SYS_futex, (long)&g_futex, FUTEX_WAIT_PRIVATE, 0, 0, 0, 0);
}

static noinline void futex_release(void)
{
	__atomic_store_n(&g_futex, 1, __ATOMIC_RELEASE);
	raw_syscall6(SYS_futex, (long)&g_futex, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
}

/* offcpu, main: one blocking pipe read, one nanosleep, one futex wait a round */
static noinline void offcpu_main(void)
{
	for (int round = 0; round < g_rounds; round++) {
		pipe_put(g_pipe_ab[1], round == g_rounds / 2 ? 'L' : 'p');
		pipe_get(g_pipe_ba[0]);
		sleep_ns(200000);
		__atomic_store_n(&g_futex, 0, __ATOMIC_RELEASE);
		pipe_put(g_pipe_ab[1], 'f');
		futex_block();
	}
	pipe_put(g_pipe_ab[1], 'q');
}

/* offcpu, the waker: answers main, once 1.2 s late */
static noinline void offcpu_waker(void)
{
	for (;;) {
		switch (pipe_get(g_pipe_ab[0])) {
		case 'L':
			sleep_ns(1200000000);
			/* fall through */
		case 'p':
			pipe_put(g_pipe_ba[1], 'p');
			break;
		case 'f':
			sleep_ns(100000);
			futex_release();
			break;
		default:
			return;
		}
	}
}

/* fault: every page of a fresh mapping faults inside read() */
static noinline void fault_read(void)
{
	long len = FAULT_PAGES * 4096L;
	long p = raw_syscall6(SYS_mmap, 0, len, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p < 0 && p > -4096)
		return;
	raw_syscall3(SYS_read, g_fd_zero, p, len);
	g_sink += ((volatile char *)p)[len - 1];
	raw_syscall3(SYS_munmap, p, len, 0);
}

/* exec: the thread's exec of the next generation, from below its recursion */
static noinline void exec_next(void)
{
	char n[16], d[16];
	char *argv[] = { (char *)g_self, "exec", "-n", n, "-d", d, NULL };

	snprintf(n, sizeof(n), "%d", g_rounds - 1);
	snprintf(d, sizeof(d), "%d", g_depth);
	raw_syscall3(SYS_execve, (long)g_self, (long)argv, (long)environ);
	_exit(127);
}

static noinline void work_round(int idx, int round)
{
	cheap_syscalls(50);
	long_read(idx);
	user_spin(50000);
	if (g_mode == MODE_THREADS)
		migrate(round);
}

static noinline void work_loop(int idx)
{
	double end = g_rounds < 0 ? now() + g_seconds : 0;
	long start[2] = { 0, 0 };
	int round;

	switch (g_mode) {
	case MODE_OFFCPU:
		if (idx == 0)
			offcpu_main();
		else
			offcpu_waker();
		return;
	case MODE_SIGNAL:
		for (round = 0; __atomic_load_n(&g_signals, __ATOMIC_RELAXED) < g_rounds; round++)
			work_round(idx, round);
		return;
	case MODE_FAULT:
		for (round = 0; round < g_rounds; round++)
			fault_read();
		return;
	case MODE_EXEC:
		if (g_rounds == 0) {		/* the vfork child, the last one */
			for (round = 0; round < 2; round++)
				work_round(idx, round);
		} else if (idx == 0) {		/* the leader, until de_thread() */
			for (;;) {
				cheap_syscalls(10);
				user_spin(10000);
			}
		} else {
			work_round(idx, 0);
			exec_next();
		}
		return;
	default:
		break;
	}
	if (g_user_ms || g_kern_ms)
		cpu_ms(start);
	for (round = 0; g_rounds < 0 ? now() < end : round < g_rounds || !cpu_done(start); round++)
		work_round(idx, round);
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

static noinline void on_signal(int sig)
{
	(void)sig;
	/* on the sigaltstack: syscalls and spinning in the handler */
	cheap_syscalls(5);
	user_spin(20000);
	__atomic_add_fetch(&g_signals, 1, __ATOMIC_RELAXED);
}

static int setup_signals(void)
{
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	struct sigaction sa;
	stack_t ss;

	ss.ss_sp = malloc(ALTSTACK_SIZE);
	ss.ss_size = ALTSTACK_SIZE;
	ss.ss_flags = 0;
	if (!ss.ss_sp || sigaltstack(&ss, NULL))
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) || sigaction(SIGPROF, &sa, NULL))
		return -1;
	if (setitimer(ITIMER_REAL, &it, NULL) || setitimer(ITIMER_PROF, &it, NULL))
		return -1;
	return 0;
}

static void stop_signals(void)
{
	struct itimerval off = { { 0, 0 }, { 0, 0 } };

	setitimer(ITIMER_REAL, &off, NULL);
	setitimer(ITIMER_PROF, &off, NULL);
}

static int run_offcpu(void)
{
	pthread_t waker;

	if (pipe(g_pipe_ab) || pipe(g_pipe_ba)) {
		perror("pipe");
		return 1;
	}
	if (pthread_create(&waker, NULL, thread_main, (void *)1L)) {
		perror("pthread_create");
		return 1;
	}
	announce(0, g_depth);
	recurse(0, g_depth);
	pthread_join(waker, NULL);
	return 0;
}

static int run_exec(void)
{
	pthread_t th;
	pid_t pid;

	if (g_rounds <= 0) {
		announce(0, g_depth);
		recurse(0, g_depth);
		return 0;
	}
	pid = vfork();
	if (pid == 0) {
		char d[16];
		char *argv[] = { (char *)g_self, "exec", "-n", "0", "-d", d, NULL };

		snprintf(d, sizeof(d), "%d", g_depth);
		execve(g_self, argv, environ);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, NULL, 0) != pid) {
		perror("vfork");
		return 1;
	}
	if (pthread_create(&th, NULL, thread_main, (void *)1L)) {
		perror("pthread_create");
		return 1;
	}
	announce(0, g_depth);
	recurse(0, g_depth);	/* until the thread's exec kills this one */
	return 1;
}

static int usage(const char *prog)
{
	fprintf(stderr, "%s MODE [-t threads] [-d depth] [-s seconds] [-n rounds] [-U ms] [-K ms] [-R KiB]\n"
		"MODE: recurse threads exit offcpu signal fault exec\n", prog);
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
	else if (!strcmp(argv[1], "offcpu"))
		g_mode = MODE_OFFCPU;
	else if (!strcmp(argv[1], "signal"))
		g_mode = MODE_SIGNAL;
	else if (!strcmp(argv[1], "fault"))
		g_mode = MODE_FAULT;
	else if (!strcmp(argv[1], "exec"))
		g_mode = MODE_EXEC;
	else
		return usage(argv[0]);
	g_self = argv[0];
	optind = 2;
	while ((opt = getopt(argc, argv, "t:s:d:n:U:K:R:")) != -1) {
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
		case 'n':
			g_rounds = atoi(optarg);
			break;
		case 'U':
			g_user_ms = atol(optarg);
			break;
		case 'K':
			g_kern_ms = atol(optarg);
			break;
		case 'R':
			g_read_size = atol(optarg) * 1024;
			break;
		default:
			return usage(argv[0]);
		}
	}
	if (g_nthreads < 1 || g_nthreads > MAX_THREADS / 2 || g_depth < 0 ||
	    g_read_size <= 0)
		return usage(argv[0]);
	if (g_mode >= MODE_OFFCPU && g_rounds < 0)
		g_rounds = 100;
	/*
	 * -U/-K without -n: rounds until the CPU time, not -s's default
	 * second of wall time, which would silently ignore them (and give
	 * a loaded machine's run fewer samples).
	 */
	if ((g_user_ms || g_kern_ms) && g_rounds < 0)
		g_rounds = 0;
	g_fd_null = open("/dev/null", O_WRONLY);
	g_fd_zero = open("/dev/zero", O_RDONLY);
	if (g_fd_null < 0 || g_fd_zero < 0) {
		perror("open");
		return 1;
	}
	for (int i = 0; i < MAX_THREADS; i++) {
		g_bufs[i] = malloc(g_read_size);
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
	case MODE_OFFCPU:
		return run_offcpu();
	case MODE_SIGNAL:
		if (setup_signals()) {
			perror("signals");
			return 1;
		}
		announce(0, g_depth);
		recurse(0, g_depth);
		stop_signals();
		break;
	case MODE_FAULT:
		announce(0, g_depth);
		recurse(0, g_depth);
		break;
	case MODE_EXEC:
		return run_exec();
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
