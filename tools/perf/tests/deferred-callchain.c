// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of util/deferred-callchain.c: the stitcher is driven directly with
 * hand-built samples and PERF_RECORD_CALLCHAIN_DEFERRED records, as a session
 * would feed it, and what it delivers is checked sample by sample.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "callchain.h"
#include "debug.h"
#include "deferred-callchain.h"
#include "dso.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "util/perf_regs.h"
#include "sample.h"
#include "sframe.h"
#include "sframe-build.h"
#include "unwind.h"
#include "symbol_conf.h"
#include "tests.h"
#include "thread.h"

#define KIP	0xffffffff81000000ULL	/* kernel frames */
#define UIP	0x0000555555550000ULL	/* user frames */
#define MAX_OUT	64
#define MS	1000000ULL

struct delivered {
	u32 tid;
	u32 cpu;
	u64 file_offset;
	u64 time;
	u16 type;
	u64 nr;
	u64 ips[32];
};

struct fixture {
	struct evlist *evlist;
	struct evsel *evsel;
	struct machine *machine;	/* NULL: no task lookup */
	struct deferred_callchain *dc;
	struct delivered out[MAX_OUT];
	int nr_out;
	int nr_fed;
	int nr_parsed;		/* by parse_again() */
	u64 bad_time;		/* parse_again() fails for events of this time */
	/* Not kept in out[]: samples checked as they come (many_tasks()). */
	bool count_only;
	int nr_stitched;
	int nr_unstitched;
	/* Events kept by feed() instead, for play(): a file's, known ahead. */
	bool keep;
	u64 *kept;
	size_t kept_len;	/* in u64 */
	u64 buf[1024];
};

static bool many_stitched(const struct ip_callchain *chain, u32 tid);

static int collect(struct deferred_callchain *dc __maybe_unused, union perf_event *event,
		   struct perf_sample *sample, struct machine *machine __maybe_unused,
		   void *data)
{
	struct fixture *f = data;
	struct delivered *d;

	if (f->count_only) {
		if (event->header.type != PERF_RECORD_SAMPLE)
			return 0;
		if (many_stitched(sample->callchain, sample->tid))
			f->nr_stitched++;
		else
			f->nr_unstitched++;
		return 0;
	}
	if (f->nr_out == MAX_OUT)
		return -ENOSPC;
	d = &f->out[f->nr_out++];
	d->tid = sample->tid;
	d->cpu = sample->cpu;
	d->file_offset = sample->file_offset;
	d->time = sample->time;
	d->type = event->header.type;
	d->nr = 0;
	if (event->header.type == PERF_RECORD_SAMPLE) {
		d->nr = min_t(u64, sample->callchain->nr, ARRAY_SIZE(d->ips));
		memcpy(d->ips, sample->callchain->ips, d->nr * sizeof(u64));
	}
	return 0;
}

static const struct deferred_callchain_ops collect_ops = {
	.sample	= collect,
};

/* As a session: other events are held in order behind waiting samples. */
static const struct deferred_callchain_ops collect_all_ops = {
	.sample	= collect,
	.event	= collect,
};

static u64 sample_type(bool snapshot)
{
	u64 type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;

	if (snapshot)
		type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	return type;
}

static int fixture__init(struct fixture *f, bool snapshot,
			 const struct deferred_callchain_config *config)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_type = sample_type(snapshot),
		.sample_id_all = 1,
		.defer_callchain = 1,
		.defer_output = 1,
	};

	memset(f, 0, sizeof(*f));
	if (snapshot) {
		/* x86_64's BP, SP, IP: the samples below give them in that order. */
		attr.sample_regs_user = perf_arch_snapshot_regs(EM_X86_64);
		attr.sample_stack_user = 256;
	}
	f->evlist = evlist__new();
	f->evsel = evsel__new(&attr);
	if (!f->evlist || !f->evsel)
		return -ENOMEM;
	evlist__add(f->evlist, f->evsel);
	f->dc = deferred_callchain__new(f->evlist, &collect_ops, f);
	if (!f->dc)
		return -ENOMEM;
	/* The session's fallback, as perf_session__deferred_callchain() sets it. */
	deferred_callchain__set_walk(f->dc, unwind__walk_deferred);
	if (config)
		deferred_callchain__set_config(f->dc, config);
	return 0;
}

/* The stitcher a session has: other events in order, not live. */
static int fixture__init_session(struct fixture *f,
				 const struct deferred_callchain_config *config)
{
	int ret = fixture__init(f, false, config);

	if (ret)
		return ret;
	deferred_callchain__delete(f->dc);
	f->dc = deferred_callchain__new(f->evlist, &collect_all_ops, f);
	if (!f->dc)
		return -ENOMEM;
	deferred_callchain__set_walk(f->dc, unwind__walk_deferred);
	if (config)
		deferred_callchain__set_config(f->dc, config);
	return 0;
}

static void fixture__exit(struct fixture *f)
{
	deferred_callchain__delete(f->dc);
	evlist__put(f->evlist);
	free(f->kept);
}

static int feed(struct fixture *f, union perf_event *event);

/* Keep @event for play(). */
static int keep(struct fixture *f, union perf_event *event)
{
	size_t n = event->header.size / sizeof(u64);
	u64 *kept = realloc(f->kept, (f->kept_len + n) * sizeof(u64));

	if (!kept)
		return -ENOMEM;
	memcpy(kept + f->kept_len, event, event->header.size);
	f->kept = kept;
	f->kept_len += n;
	return 0;
}

/*
 * The kept events as a session reads a file mapped whole: the first
 * @nr_ahead (all: -1) to deferred_callchain__ahead(), at the file offsets
 * feed() gives them, then all of them in their turn.
 */
static int play(struct fixture *f, int nr_ahead, bool whole)
{
	union perf_event *event;
	size_t pos;
	int i, ret = 0;

	f->keep = false;
	for (pos = 0, i = 0; pos < f->kept_len && i != nr_ahead; i++) {
		struct perf_sample sample;

		event = (union perf_event *)(f->kept + pos);
		perf_sample__init(&sample, /*all=*/true);
		ret = evsel__parse_sample(f->evsel, event, &sample);
		sample.file_offset = (f->nr_fed + i + 1) * 64;
		if (!ret)
			ret = deferred_callchain__ahead(f->dc, event, &sample, f->machine);
		perf_sample__exit(&sample);
		if (ret)
			return ret;
		pos += event->header.size / sizeof(u64);
	}
	deferred_callchain__ahead_end(f->dc, whole);
	for (pos = 0; !ret && pos < f->kept_len; pos += event->header.size / sizeof(u64)) {
		/* In f->buf, as the other events are fed. */
		memcpy(f->buf, f->kept + pos, ((union perf_event *)(f->kept + pos))->header.size);
		event = (union perf_event *)f->buf;
		ret = feed(f, event);
	}
	return ret;
}

/* Parse @event as a session does, then hand it to the stitcher. */
static int feed(struct fixture *f, union perf_event *event)
{
	struct perf_sample sample;
	int ret;

	if (f->keep)
		return keep(f, event);
	perf_sample__init(&sample, /*all=*/true);
	ret = evsel__parse_sample(f->evsel, event, &sample);
	/* Where a file would have it, and a caller's fix-up, as a session's. */
	sample.file_offset = ++f->nr_fed * 64;
	sample.cpu = 7;
	if (!ret)
		ret = deferred_callchain__event(f->dc, event, &sample, f->machine);
	/* What it passes the caller delivers: checked in order with the samples. */
	if (ret == DEFERRED_CALLCHAIN__PASS)
		ret = collect(f->dc, event, &sample, f->machine, f);
	perf_sample__exit(&sample);
	return ret;
}

/*
 * A sample taken in the kernel (@nr_kernel frames; 0: in user mode) whose
 * user part is deferred under @cookie.  With @stack, a user register and
 * stack snapshot follows: a frame pointer chain of @stack[0] frames.
 */
static int sample_of(struct fixture *f, u32 pid, u32 tid, u64 time, int nr_kernel,
		     u64 cookie, const u64 *stack)
{
	u64 *p = f->buf + 1;
	union perf_event *event = (union perf_event *)f->buf;
	int i;

	*p++ = nr_kernel ? KIP : UIP;			/* ip */
	*p++ = ((u64)tid << 32) | pid;			/* pid, tid */
	*p++ = time;
	*p++ = (nr_kernel ? nr_kernel + 1 : 0) + 2;	/* callchain nr */
	if (nr_kernel) {
		*p++ = PERF_CONTEXT_KERNEL;
		for (i = 0; i < nr_kernel; i++)
			*p++ = KIP + i;
	}
	*p++ = PERF_CONTEXT_USER_DEFERRED;
	*p++ = cookie;
	if (stack) {
		/* regs: abi, bp, sp, ip; then size, data[256], dyn_size */
		u64 sp = 0x7ffd0000;

		*p++ = PERF_SAMPLE_REGS_ABI_64;
		*p++ = sp + 16;
		*p++ = sp;
		*p++ = UIP + 0x100;
		*p++ = 256;
		memset(p, 0, 256);
		/* frames at sp+16, sp+32, ...: saved bp, return address */
		for (i = 0; i < (int)stack[0]; i++) {
			p[2 + 2 * i] = sp + 16 * (i + 2);
			p[3 + 2 * i] = UIP + 0x200 + i;
		}
		/* the last frame's saved bp points out of the snapshot */
		p[2 + 2 * (i - 1)] = sp + 4096;
		p += 256 / sizeof(u64);
		*p++ = 256;
	}
	event->header.type = PERF_RECORD_SAMPLE;
	event->header.misc = nr_kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
	event->header.size = (u8 *)p - (u8 *)f->buf;
	return feed(f, event);
}

/* A sample of a task that is its process's leader (pid == tid). */
static int sample(struct fixture *f, u32 tid, u64 time, int nr_kernel, u64 cookie,
		  const u64 *stack)
{
	return sample_of(f, tid, tid, time, nr_kernel, cookie, stack);
}

/* The record of one kernel entry: @nr user frames UIP+1.. */
static int record(struct fixture *f, u32 tid, u64 time, u64 cookie, u64 nr)
{
	union perf_event *event = (union perf_event *)f->buf;
	u64 *p = f->buf + 1;
	u64 i;

	*p++ = cookie;
	*p++ = nr;
	for (i = 0; i < nr; i++)
		*p++ = UIP + 1 + i;
	*p++ = ((u64)tid << 32) | tid;	/* sample_id: pid, tid */
	*p++ = time;			/* sample_id: time */
	event->header.type = PERF_RECORD_CALLCHAIN_DEFERRED;
	event->header.misc = PERF_RECORD_MISC_USER;
	event->header.size = (u8 *)p - (u8 *)f->buf;
	return feed(f, event);
}

static int task_event(struct fixture *f, u32 type, u32 tid, u64 time)
{
	union perf_event *event = (union perf_event *)f->buf;
	u64 *p;

	memset(f->buf, 0, sizeof(f->buf));
	event->fork.pid = tid;
	event->fork.tid = tid;
	event->fork.ppid = 1;
	event->fork.ptid = 1;
	event->fork.time = time;
	p = (u64 *)((u8 *)f->buf + sizeof(struct perf_record_fork));
	*p++ = ((u64)tid << 32) | tid;
	*p++ = time;
	event->header.type = type;
	event->header.size = (u8 *)p - (u8 *)f->buf;
	return feed(f, event);
}

/* PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC of (@pid, @tid). */
static int comm_exec(struct fixture *f, u32 pid, u32 tid, u64 time)
{
	union perf_event *event = (union perf_event *)f->buf;
	u64 *p;

	memset(f->buf, 0, sizeof(f->buf));
	event->comm.pid = pid;
	event->comm.tid = tid;
	strcpy(event->comm.comm, "newprog");
	p = (u64 *)((u8 *)f->buf + offsetof(struct perf_record_comm, comm) + 8);
	*p++ = ((u64)tid << 32) | pid;
	*p++ = time;
	event->header.type = PERF_RECORD_COMM;
	event->header.misc = PERF_RECORD_MISC_COMM_EXEC;
	event->header.size = (u8 *)p - (u8 *)f->buf;
	return feed(f, event);
}

static int task_exit(struct fixture *f, u32 tid, u64 time)
{
	return task_event(f, PERF_RECORD_EXIT, tid, time);
}

static int task_fork(struct fixture *f, u32 tid, u64 time)
{
	return task_event(f, PERF_RECORD_FORK, tid, time);
}

/* Do @nr @ips end with @nr_user stitched user frames? */
static bool ips_stitched(const u64 *ips, u64 nr, u64 nr_user)
{
	u64 i, base;

	if (nr < nr_user + 1)
		return false;
	base = nr - nr_user;
	if (ips[base - 1] != PERF_CONTEXT_USER)
		return false;
	for (i = 0; i < nr_user; i++) {
		if (ips[base + i] != UIP + 1 + i)
			return false;
	}
	return true;
}

/* Does delivered sample @d end with @nr_user stitched user frames? */
static bool stitched(const struct delivered *d, u64 nr_user)
{
	return d->type == PERF_RECORD_SAMPLE && ips_stitched(d->ips, d->nr, nr_user);
}

static bool lost(const struct delivered *d)
{
	return d->nr && d->ips[d->nr - 1] == PERF_CONTEXT_USER_DEFERRED;
}

static const struct deferred_callchain_stats *stats(struct fixture *f)
{
	return deferred_callchain__stats(f->dc);
}

#define CHECK(cond) TEST_ASSERT_VAL(#cond, cond)

static int test__deferred_in_order(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 10, 1 * MS, 3, 0x100000001, NULL));
	CHECK(!sample(&f, 10, 2 * MS, 0, 0x100000001, NULL));
	CHECK(f.nr_out == 0);
	CHECK(!record(&f, 10, 3 * MS, 0x100000001, 4));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 2);
	CHECK(stitched(&f.out[0], 4) && f.out[0].nr == 4 + 4 + 1);
	CHECK(f.out[0].ips[0] == PERF_CONTEXT_KERNEL);
	/* A user-mode sample is just the user frames. */
	CHECK(stitched(&f.out[1], 4) && f.out[1].nr == 5);
	CHECK(f.out[0].time < f.out[1].time);
	CHECK(stats(&f)->stitched == 2 && stats(&f)->records == 1);
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_late(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	/* Samples of the unwind path come after their own record. */
	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x200000001, NULL));
	CHECK(!record(&f, 10, 2 * MS, 0x200000001, 3));
	CHECK(!sample(&f, 10, 3 * MS, 5, 0x200000001, NULL));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 2);
	CHECK(stitched(&f.out[0], 3) && stitched(&f.out[1], 3));
	CHECK(stats(&f)->stitched == 1 && stats(&f)->stitched_late == 1);
	CHECK(stats(&f)->orphans == 0);
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_duplicate(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x300000001, NULL));
	CHECK(!record(&f, 10, 2 * MS, 0x300000001, 3));
	CHECK(!record(&f, 10, 2 * MS, 0x300000001, 3));
	CHECK(!sample(&f, 10, 3 * MS, 2, 0x400000001, NULL));
	CHECK(!record(&f, 10, 4 * MS, 0x400000001, 2));
	/* An old record showing up again after a newer one. */
	CHECK(!record(&f, 10, 2 * MS, 0x300000001, 3));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 2);
	CHECK(stitched(&f.out[0], 3) && stitched(&f.out[1], 2));
	CHECK(stats(&f)->duplicates == 2 && stats(&f)->records == 2);
	CHECK(stats(&f)->stitched == 2);
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_lost(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	/* A record of a later kernel entry proves the earlier one lost. */
	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x500000001, NULL));
	CHECK(!sample(&f, 10, 2 * MS, 2, 0x600000001, NULL));
	CHECK(!record(&f, 10, 3 * MS, 0x600000001, 2));
	CHECK(f.nr_out == 2);
	CHECK(lost(&f.out[0]) && f.out[0].nr == 2 + 1 + 1);
	CHECK(stitched(&f.out[1], 2));
	/* A record nobody waits for, then the end of input. */
	CHECK(!sample(&f, 11, 4 * MS, 1, 0x700000001, NULL));
	CHECK(!record(&f, 12, 5 * MS, 0x800000001, 1));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 3 && lost(&f.out[2]));
	CHECK(stats(&f)->lost == 2 && stats(&f)->stitched == 1);
	fixture__exit(&f);
	return TEST_OK;
}

#define WINDOW	DEFERRED_CALLCHAIN_WINDOW_NS

static int test__deferred_exit(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 11, 1 * MS, 2, 0xa00000001, NULL));
	CHECK(!sample(&f, 10, 2 * MS, 2, 0x900000001, NULL));
	/* The EXIT goes on at once; tid 10's sample waits on. */
	CHECK(!task_exit(&f, 10, 3 * MS));
	CHECK(f.nr_out == 1 && f.out[0].type == PERF_RECORD_EXIT);
	/* Its record comes after its EXIT (7.2, -a, exit_group()): stitched. */
	CHECK(!record(&f, 10, 3 * MS + 50 * 1000, 0x900000001, 2));
	CHECK(f.nr_out == 1);
	CHECK(!record(&f, 11, 4 * MS, 0xa00000001, 1));
	CHECK(f.nr_out == 3);
	CHECK(f.out[1].tid == 11 && stitched(&f.out[1], 1));
	CHECK(f.out[2].tid == 10 && stitched(&f.out[2], 2));
	/* No record in the window after tid 12's EXIT: its sample is lost. */
	CHECK(!sample(&f, 12, 5 * MS, 2, 0xb00000001, NULL));
	CHECK(!task_exit(&f, 12, 6 * MS));
	CHECK(f.nr_out == 4 && f.out[3].type == PERF_RECORD_EXIT);
	/* Records of another task move the clock: to the window's end... */
	CHECK(!record(&f, 13, 5 * MS + WINDOW, 0xc00000001, 1));
	CHECK(f.nr_out == 4);
	/* ...and past the window after the EXIT. */
	CHECK(!record(&f, 13, 6 * MS + WINDOW + 1, 0xd00000001, 1));
	CHECK(f.nr_out == 5 && f.out[4].tid == 12 && lost(&f.out[4]));
	CHECK(stats(&f)->exited == 1 && stats(&f)->lost == 1);
	CHECK(stats(&f)->stitched == 2 && stats(&f)->delivered_late == 0);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_tid_reuse(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 30, 1 * MS, 2, 0xe00000001, NULL));
	CHECK(!sample(&f, 10, 2 * MS, 2, 0xf00000001, NULL));
	CHECK(!task_exit(&f, 10, 3 * MS));
	CHECK(f.nr_out == 1 && f.out[0].type == PERF_RECORD_EXIT);
	/*
	 * Tid 10 is forked again before its old task's record came: the old
	 * task's sample goes out first (taken out from behind tid 30's),
	 * then the FORK.
	 */
	CHECK(!task_fork(&f, 10, 4 * MS));
	CHECK(f.nr_out == 3 && f.out[1].tid == 10 && lost(&f.out[1]));
	CHECK(f.out[2].type == PERF_RECORD_FORK);
	CHECK(!sample(&f, 10, 5 * MS, 1, 0x1000000001, NULL));
	CHECK(!record(&f, 10, 6 * MS, 0x1000000001, 3));
	CHECK(f.nr_out == 4 && f.out[3].tid == 10 && stitched(&f.out[3], 3));
	/* Tid 30's, out of the queue since the FORK, goes out late. */
	CHECK(!record(&f, 30, 7 * MS, 0xe00000001, 2));
	CHECK(f.nr_out == 5 && f.out[4].tid == 30 && stitched(&f.out[4], 2));
	CHECK(stats(&f)->delivered_late == 1 && stats(&f)->stitched == 2);
	CHECK(stats(&f)->exited == 1 && stats(&f)->lost == 1);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_window(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;

	deferred_callchain_config__init(&config);
	config.window_ns = 10 * MS;
	config.live = true;
	CHECK(!fixture__init(&f, false, &config));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0xb00000001, NULL));
	CHECK(!sample(&f, 11, 2 * MS, 2, 0xc00000001, NULL));
	CHECK(!record(&f, 11, 3 * MS, 0xc00000001, 1));
	CHECK(f.nr_out == 0);
	/* Live (perf top): past the window it stops holding the others. */
	CHECK(!sample(&f, 11, 20 * MS, 2, 0xd00000001, NULL));
	CHECK(f.nr_out == 1 && f.out[0].tid == 11);
	/* Its record comes at last (a task blocked in a syscall). */
	CHECK(!record(&f, 10, 2000 * MS, 0xb00000001, 2));
	CHECK(f.nr_out == 2 && f.out[1].tid == 10 && stitched(&f.out[1], 2));
	CHECK(stats(&f)->delivered_late == 1 && stats(&f)->stitched == 2);
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 3 && lost(&f.out[2]));
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * Off-CPU: a task switched out in a blocking read gets its record when it
 * runs again, 2 s later.  Not live, its sample holds the later ones until
 * then, whatever the window; over the budget it stops holding them.
 */
static int test__deferred_offcpu(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;
	u64 ms, per;
	int i;

	deferred_callchain_config__init(&config);
	config.window_ns = 10 * MS;
	CHECK(!fixture__init(&f, false, &config));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0xb00000001, NULL));
	for (ms = 10; ms < 400; ms += 10) {
		CHECK(!sample(&f, 11, ms * MS, 1, 0xc00000000ULL | ms, NULL));
		CHECK(!record(&f, 11, ms * MS + 1, 0xc00000000ULL | ms, 1));
	}
	CHECK(f.nr_out == 0);
	CHECK(!record(&f, 10, 2000 * MS, 0xb00000001, 2));
	CHECK(f.nr_out == 40 && stitched(&f.out[0], 2) && f.out[0].tid == 10);
	for (i = 1; i < f.nr_out; i++)
		CHECK(f.out[i - 1].time < f.out[i].time && stitched(&f.out[i], 1));
	CHECK(stats(&f)->delivered_late == 0 && stats(&f)->max_queued == 40);
	/* What one held sample takes, about. */
	per = stats(&f)->max_held_bytes / 40;
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);

	/* A budget of about ten held samples. */
	config.max_pending_bytes = 10 * per;
	CHECK(!fixture__init(&f, false, &config));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0xb00000001, NULL));
	for (ms = 10; ms < 400; ms += 10) {
		CHECK(!sample(&f, 11, ms * MS, 1, 0xc00000000ULL | ms, NULL));
		CHECK(!record(&f, 11, ms * MS + 1, 0xc00000000ULL | ms, 1));
	}
	CHECK(f.nr_out == 39 && f.out[0].tid == 11);
	CHECK(stats(&f)->max_held_bytes <= config.max_pending_bytes + 2 * per);
	CHECK(!record(&f, 10, 2000 * MS, 0xb00000001, 2));
	CHECK(f.nr_out == 40 && f.out[39].tid == 10 && stitched(&f.out[39], 2));
	CHECK(stats(&f)->delivered_late == 1 && stats(&f)->evicted == 0);
	{
		char buf[256];

		CHECK(deferred_callchain__order_warning(f.dc, buf, sizeof(buf)) &&
		      strstr(buf, "call-graph.defer-memory"));
	}
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * An exec by a non-leader thread, fs/exec.c de_thread(): thread 21 of
 * process 20 execs; the old leader's EXIT, then the COMM exec of (20, 20),
 * no FORK; the execve's samples carry tid 21, then 20, one cookie; the
 * record comes with tid 20 past the window after the EXIT.  As a session
 * feeds it: other events held in order.
 */
static int test__deferred_exec(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;
	u64 ms;
	int i;

	CHECK(!fixture__init_session(&f, NULL));
	CHECK(!sample_of(&f, 20, 21, 1 * MS, 2, 0x5100000002, NULL));
	CHECK(!sample_of(&f, 20, 20, 2 * MS, 2, 0x5200000001, NULL));
	CHECK(!task_exit(&f, 20, 3 * MS));
	/* The old leader's last record, after its EXIT (do_exit()). */
	CHECK(!record(&f, 20, 3 * MS + 50000, 0x5200000001, 1));
	CHECK(!sample_of(&f, 20, 20, 4 * MS, 2, 0x5100000002, NULL));
	CHECK(f.nr_out == 0);
	/*
	 * Tid 21's sample moves to 20; the execve's samples leave the queue
	 * (they go out with their record, after the new program's maps):
	 * the old leader's sample and its EXIT go out, then the COMM.
	 */
	CHECK(!comm_exec(&f, 20, 20, 5 * MS));
	CHECK(stats(&f)->exec_moved == 1 && f.nr_out == 3);
	CHECK(f.out[0].tid == 20 && stitched(&f.out[0], 1));
	CHECK(f.out[1].type == PERF_RECORD_EXIT && f.out[2].type == PERF_RECORD_COMM);
	/* The execve goes on past the window after the EXIT. */
	for (ms = 10; ms < 400; ms += 20) {
		CHECK(!sample_of(&f, 20, 20, ms * MS, 1, 0x5100000002, NULL));
		CHECK(!sample(&f, 30, ms * MS + 1, 1, 0x5300000000ULL | ms, NULL));
		CHECK(!record(&f, 30, ms * MS + 2, 0x5300000000ULL | ms, 1));
	}
	/* Task 30's, in order: the execve's do not hold them. */
	CHECK(f.nr_out == 23);
	for (i = 4; i < f.nr_out; i++)
		CHECK(f.out[i].tid == 30 && f.out[i - 1].time < f.out[i].time);
	CHECK(!record(&f, 20, 400 * MS, 0x5100000002, 1));
	CHECK(f.nr_out == 45 && f.out[23].tid == 21);
	for (i = 23; i < f.nr_out; i++)
		CHECK(stitched(&f.out[i], 1) && (i == 23 || f.out[i].tid == 20));
	CHECK(stats(&f)->exec_late == 22 && stats(&f)->delivered_late == 0);
	CHECK(stats(&f)->lost == 0);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * A single-threaded exec: task 40 is switched out inside its execve before
 * the COMM exec (preempted in the ELF loader), task 41 samples, then the
 * COMM and the record (the new program's _start).  Nothing else of process
 * 40 lies between: the execve's sample keeps its place in time order and
 * the COMM goes ahead of it (perf sched timehist needs the order).
 */
static int test__deferred_exec_in_place(struct test_suite *t __maybe_unused,
					int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init_session(&f, NULL));
	CHECK(!sample(&f, 40, 1 * MS, 2, 0x6100000001, NULL));
	CHECK(!sample(&f, 41, 2 * MS, 1, 0x6200000001, NULL));
	CHECK(!record(&f, 41, 2 * MS + 1, 0x6200000001, 1));
	/* The COMM goes ahead of the waiting sample: out at once. */
	CHECK(!comm_exec(&f, 40, 40, 3 * MS));
	CHECK(f.nr_out == 1 && f.out[0].type == PERF_RECORD_COMM);
	CHECK(!record(&f, 40, 4 * MS, 0x6100000001, 1));
	CHECK(f.nr_out == 3);
	CHECK(f.out[1].tid == 40 && f.out[1].time == 1 * MS && stitched(&f.out[1], 1));
	CHECK(f.out[2].tid == 41 && f.out[2].time == 2 * MS && stitched(&f.out[2], 1));
	CHECK(stats(&f)->exec_maps_ahead == 1 && stats(&f)->exec_late == 0);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * Samples of a task past release_task() (sched_switch in do_task_dead())
 * carry tid -1: settled at once, never waiting, never holding.
 */
static int test__deferred_no_tid(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample_of(&f, -1, -1, 1 * MS, 2, 0x6100000001, NULL));
	CHECK(f.nr_out == 1 && lost(&f.out[0]));
	CHECK(!sample(&f, 10, 2 * MS, 2, 0x6200000001, NULL));
	CHECK(!sample_of(&f, -1, -1, 3 * MS, 2, 0x6300000001, NULL));
	CHECK(f.nr_out == 1 && stats(&f)->max_pending == 1);
	CHECK(!record(&f, 10, 4 * MS, 0x6200000001, 1));
	CHECK(f.nr_out == 3 && stitched(&f.out[1], 1) && lost(&f.out[2]));
	CHECK(stats(&f)->exited == 2 && stats(&f)->lost == 2);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_record_life(struct test_suite *t __maybe_unused,
				      int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;
	u64 ms;

	deferred_callchain_config__init(&config);
	config.window_ns = 10 * MS;
	CHECK(!fixture__init(&f, false, &config));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x2100000001, NULL));
	CHECK(!record(&f, 10, 2 * MS, 0x2100000001, 2));
	/* Task 11 moves the clock 40 windows on. */
	for (ms = 10; ms <= 400; ms += 10) {
		CHECK(!sample(&f, 11, ms * MS, 1, 0x2200000000ULL | ms, NULL));
		CHECK(!record(&f, 11, ms * MS + 1, 0x2200000000ULL | ms, 1));
	}
	/* Same cookie, 400 ms after its record: the record is still there. */
	CHECK(!sample(&f, 10, 402 * MS, 1, 0x2100000001, NULL));
	/* A later kernel entry of task 10 ends that record's life. */
	CHECK(!sample(&f, 10, 403 * MS, 1, 0x2300000001, NULL));
	CHECK(!sample(&f, 10, 404 * MS + 20 * MS, 1, 0x2100000001, NULL));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(stats(&f)->stitched_late == 1 && stats(&f)->lost == 2);
	CHECK(f.nr_out == 1 + 40 + 3);
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_clock(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;

	deferred_callchain_config__init(&config);
	config.window_ns = 10 * MS;
	CHECK(!fixture__init(&f, false, &config));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x3100000001, NULL));
	/* One damaged time: not trusted, the waiting sample stays queued. */
	CHECK(!sample(&f, 12, 1ULL << 62, 1, 0x3200000001, NULL));
	CHECK(!sample(&f, 11, 3 * MS, 1, 0x3300000001, NULL));
	CHECK(!record(&f, 11, 4 * MS, 0x3300000001, 1));
	CHECK(stats(&f)->bad_times == 1 && f.nr_out == 0);
	CHECK(!record(&f, 10, 5 * MS, 0x3100000001, 1));
	CHECK(f.nr_out == 1 && f.out[0].tid == 10 && stats(&f)->delivered_late == 0);
	/* A jump that the next event confirms is followed. */
	CHECK(!sample(&f, 11, 9000 * MS, 1, 0x3400000001, NULL));
	CHECK(!sample(&f, 11, 9001 * MS, 1, 0x3400000001, NULL));
	CHECK(!sample(&f, 13, 9002 * MS, 1, 0x3500000001, NULL));
	CHECK(!sample(&f, 13, 9100 * MS, 1, 0x3600000001, NULL));
	/* No new damage counted, nothing delivered out of order. */
	CHECK(stats(&f)->bad_times == 1 && stats(&f)->delivered_late == 0);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_cap(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;
	u32 tid;

	deferred_callchain_config__init(&config);
	config.max_pending = 4;
	config.max_queue = 6;
	CHECK(!fixture__init(&f, false, &config));
	for (tid = 1; tid <= 10; tid++)
		CHECK(!sample(&f, tid, tid * MS, 1, 0x1000000000ULL | tid, NULL));
	CHECK(stats(&f)->evicted == 6 && stats(&f)->max_pending == 5);
	CHECK(stats(&f)->max_queued <= 7);
	CHECK(!record(&f, 10, 11 * MS, 0x1000000000ULL | 10, 1));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 10);
	CHECK(stitched(&f.out[9], 1) && f.out[9].tid == 10);
	CHECK(lost(&f.out[0]) && stats(&f)->lost == 9);
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * A sample the queue budget pushed out, whose record comes after its
 * task's EXIT (do_exit() writes the EXIT before the last record): the
 * EXIT goes out after it, so that the tool drops the thread only then.  A
 * FORK reusing a tid whose EXIT is held sends that EXIT out first.
 */
static int test__deferred_exit_held(struct test_suite *t __maybe_unused,
				    int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;
	int i;

	deferred_callchain_config__init(&config);
	config.max_queue = 2;
	CHECK(!fixture__init_session(&f, &config));
	CHECK(!sample(&f, 40, 1 * MS, 1, 0x4000000001, NULL));
	CHECK(!sample(&f, 10, 2 * MS, 1, 0x1100000001, NULL));
	for (i = 0; i < 4; i++) {
		CHECK(!sample(&f, 20, (3 + i) * MS, 1, 0x2000000001ULL + i, NULL));
		CHECK(!record(&f, 20, (3 + i) * MS + 1, 0x2000000001ULL + i, 1));
	}
	/* Both waiting samples are out of the queue, tid 20's went out. */
	CHECK(f.nr_out == 4 && f.out[3].tid == 20);
	CHECK(!task_exit(&f, 10, 8 * MS));
	CHECK(f.nr_out == 4);
	CHECK(!record(&f, 10, 8 * MS + 50000, 0x1100000001, 2));
	/* Tid 40's still waits: tid 10's EXIT is held behind it too. */
	CHECK(f.nr_out == 5 && f.out[4].tid == 10 && stitched(&f.out[4], 2));
	CHECK(!task_exit(&f, 30, 9 * MS));
	CHECK(!task_fork(&f, 10, 10 * MS));
	CHECK(f.nr_out == 7 && f.out[5].type == PERF_RECORD_EXIT && f.out[5].tid == 10);
	CHECK(f.out[6].type == PERF_RECORD_FORK);
	/* Tid 40's goes out, then the EXIT held for it. */
	CHECK(!record(&f, 40, 11 * MS, 0x4000000001, 1));
	CHECK(!sample(&f, 20, 12 * MS, 1, 0x2000000005, NULL));
	CHECK(!record(&f, 20, 12 * MS + 1, 0x2000000005, 1));
	CHECK(f.nr_out == 10 && f.out[7].tid == 40 && stitched(&f.out[7], 1));
	CHECK(f.out[8].type == PERF_RECORD_EXIT && f.out[8].tid == 30);
	CHECK(f.out[9].tid == 20);
	CHECK(stats(&f)->delivered_late == 2);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_cross_cpu(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;
	int i;

	/* Interleaved tasks, records arriving in another order. */
	CHECK(!fixture__init(&f, false, NULL));
	CHECK(!sample(&f, 20, 1 * MS, 2, 0x11, NULL));
	CHECK(!sample(&f, 21, 2 * MS, 2, 0x12, NULL));
	CHECK(!sample(&f, 20, 3 * MS, 0, 0x11, NULL));
	CHECK(!sample(&f, 22, 4 * MS, 3, 0x13, NULL));
	CHECK(!record(&f, 22, 5 * MS, 0x13, 3));
	CHECK(!record(&f, 21, 6 * MS, 0x12, 2));
	CHECK(f.nr_out == 0);
	CHECK(!record(&f, 20, 7 * MS, 0x11, 1));
	CHECK(f.nr_out == 4);
	for (i = 1; i < f.nr_out; i++)
		CHECK(f.out[i - 1].time < f.out[i].time);
	CHECK(stitched(&f.out[0], 1) && stitched(&f.out[1], 2));
	CHECK(stitched(&f.out[2], 1) && stitched(&f.out[3], 3));
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);
	return TEST_OK;
}

/* Each task's record of many_tasks(): some deeper than a cached record. */
static u64 many_depth(u32 tid)
{
	return tid % 7 ? (tid % 5) * 13 + 1 : 100;
}

static u64 many_cookie(u32 tid)
{
	return ((u64)tid << 32) | 1;
}

static bool many_stitched(const struct ip_callchain *chain, u32 tid)
{
	return chain && ips_stitched(chain->ips, chain->nr, many_depth(tid));
}

#define MANY_TASKS	300

/*
 * More tasks at once than the stitcher's first table has buckets, twice:
 * the table grows while samples wait, the tasks of the first round exit
 * and those of the second take their place, records come in another
 * order than their samples, some deeper than a cached record.  Each
 * sample still gets its own task's frames.
 */
static int test__deferred_many_tasks(struct test_suite *t __maybe_unused,
				     int s __maybe_unused)
{
	struct fixture f;
	u64 time = 0;
	int round;
	u32 tid;

	CHECK(!fixture__init(&f, false, NULL));
	f.count_only = true;
	for (round = 0; round < 2; round++) {
		u32 first = 100 + round * MANY_TASKS, end = first + MANY_TASKS;

		for (tid = first; tid < end; tid++)
			CHECK(!sample(&f, tid, ++time * 1000, 1, many_cookie(tid), NULL));
		CHECK(f.nr_stitched == round * MANY_TASKS);
		/* The first task's record last: all wait behind its sample. */
		for (tid = end - 1; tid >= first; tid--)
			CHECK(!record(&f, tid, ++time * 1000, many_cookie(tid), many_depth(tid)));
		CHECK(f.nr_stitched == (round + 1) * MANY_TASKS);
		for (tid = first; tid < end; tid++)
			CHECK(!task_exit(&f, tid, ++time * 1000));
		/* The window after the EXITs ends: those tasks go. */
		time += WINDOW / 1000 + 1;
		CHECK(!record(&f, 1, time * 1000, ((u64)(round + 1) << 48) | 1, 1));
	}
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_stitched == 2 * MANY_TASKS && f.nr_unstitched == 0);
	CHECK(stats(&f)->stitched == 2 * MANY_TASKS && stats(&f)->lost == 0);
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_malformed(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	union perf_event *event;
	struct perf_sample data;
	struct fixture f;
	u64 *p;

	CHECK(!fixture__init(&f, false, NULL));
	event = (union perf_event *)f.buf;
	/* nr = 0 is legal: a task with no user frames to show. */
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x21, NULL));
	CHECK(!record(&f, 10, 2 * MS, 0x21, 0));
	CHECK(f.nr_out == 1 && f.out[0].nr == 3);
	/* nr beyond the record's size must not be read. */
	p = f.buf + 1;
	*p++ = 0x22;
	*p++ = 1000;
	*p++ = UIP;
	*p++ = 10;
	*p++ = 3 * MS;
	event->header.type = PERF_RECORD_CALLCHAIN_DEFERRED;
	event->header.misc = PERF_RECORD_MISC_USER;
	event->header.size = (u8 *)p - (u8 *)f.buf;
	perf_sample__init(&data, /*all=*/true);
	CHECK(evsel__parse_sample(f.evsel, event, &data) == -EFAULT);
	/* nr = 1, but no room left for the sample_id trailer. */
	f.buf[2] = 1;
	event->header.size -= 8;
	CHECK(evsel__parse_sample(f.evsel, event, &data) == -EFAULT);
	/* Too short for even cookie and nr. */
	event->header.size = sizeof(event->header) + 8;
	CHECK(evsel__parse_sample(f.evsel, event, &data) == -EFAULT);
	perf_sample__exit(&data);
	/* A record with the 510 entries the kernel allows. */
	CHECK(!sample(&f, 10, 4 * MS, 2, 0x23, NULL));
	CHECK(!record(&f, 10, 5 * MS, 0x23, 510));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 2 && f.out[1].nr == ARRAY_SIZE(f.out[1].ips));
	CHECK(stats(&f)->stitched == 2);
	fixture__exit(&f);
	return TEST_OK;
}

/* A caller's parse, as perf_session__parse_sample(): its fix-up included. */
static int parse_again(struct deferred_callchain *dc __maybe_unused, union perf_event *event,
		       u64 file_offset, struct perf_sample *sample, void *data)
{
	struct fixture *f = data;
	int ret = evsel__parse_sample(f->evsel, event, sample);

	f->nr_parsed++;
	if (ret)
		return ret;
	if (sample->time == f->bad_time)
		return -EFAULT;
	sample->file_offset = file_offset;
	sample->cpu = 7;
	return 0;
}

static const struct deferred_callchain_ops collect_parse_ops = {
	.sample	= collect,
	.event	= collect,
	.parse	= parse_again,
};

static int test__deferred_parse_again(struct test_suite *t __maybe_unused,
				      int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init(&f, false, NULL));
	deferred_callchain__delete(f.dc);
	f.dc = deferred_callchain__new(f.evlist, &collect_parse_ops, &f);
	CHECK(f.dc);
	/* Its record came first, nothing held: out at once, as it came. */
	CHECK(!record(&f, 11, 1 * MS, 0x100000001, 2));
	CHECK(!sample(&f, 11, 2 * MS, 0, 0x100000001, NULL));
	CHECK(f.nr_out == 1 && f.nr_parsed == 0 && stitched(&f.out[0], 2));
	CHECK(f.out[0].file_offset == 2 * 64 && f.out[0].cpu == 7);
	/* Held: a waiting sample, and a FORK and a sample behind it. */
	CHECK(!sample(&f, 10, 3 * MS, 2, 0x200000001, NULL));
	CHECK(!task_fork(&f, 12, 4 * MS));
	CHECK(!sample(&f, 12, 5 * MS, 2, 0x300000001, NULL));
	CHECK(!record(&f, 12, 6 * MS, 0x300000001, 3));
	CHECK(f.nr_out == 1);
	CHECK(!record(&f, 10, 7 * MS, 0x200000001, 4));
	CHECK(f.nr_out == 4 && f.nr_parsed == 3);
	/* Each parsed again from its own bytes, with the caller's fix-up. */
	CHECK(stitched(&f.out[1], 4) && f.out[1].tid == 10 && f.out[1].time == 3 * MS);
	CHECK(f.out[2].type == PERF_RECORD_FORK && f.out[2].tid == 12);
	CHECK(stitched(&f.out[3], 3) && f.out[3].tid == 12);
	CHECK(f.out[1].file_offset == 3 * 64 && f.out[2].file_offset == 4 * 64 &&
	      f.out[3].file_offset == 5 * 64);
	CHECK(f.out[1].cpu == 7 && f.out[2].cpu == 7 && f.out[3].cpu == 7);
	/* One that does not parse again is dropped and counted, not the rest. */
	f.bad_time = 9 * MS;
	CHECK(!sample(&f, 10, 8 * MS, 2, 0x400000001, NULL));
	CHECK(!sample(&f, 12, 9 * MS, 2, 0x500000001, NULL));
	CHECK(!sample(&f, 13, 10 * MS, 2, 0x600000001, NULL));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 6 && stats(&f)->unparsed == 1);
	CHECK(f.out[4].time == 8 * MS && lost(&f.out[4]));
	CHECK(f.out[5].time == 10 * MS && lost(&f.out[5]));
	fixture__exit(&f);
	return TEST_OK;
}

static int test__deferred_snapshot(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	const u64 frames[] = { 3 };
	struct fixture f;
	u64 *ips;

	/* No record: the user stack snapshot is walked with frame pointers. */
	CHECK(!fixture__init(&f, true, NULL));
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x31, frames));
	CHECK(!deferred_callchain__flush(f.dc));
	CHECK(f.nr_out == 1);
	ips = f.out[0].ips;
	CHECK(f.out[0].nr == 3 + 1 + 1 + 3);
	CHECK(ips[3] == PERF_CONTEXT_USER && ips[4] == UIP + 0x100);
	CHECK(ips[5] == UIP + 0x200 && ips[6] == UIP + 0x201 && ips[7] == UIP + 0x202);
	CHECK(stats(&f)->fallback_fp == 1 && stats(&f)->lost == 0);
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * The SFrame fallback needs a dso with .sframe on disk: a small ELF file of
 * one PT_LOAD (file offset 0 at vaddr 0) and a v2 AMD64 .sframe of two
 * functions without frame pointers, F1 [0x1000, 0x1020) with the CFA at
 * SP + 8 (a leaf) and F2 [0x1020, 0x1040) with the CFA at SP + 16 (one
 * push).  Code at 0x2000 has no row.  The file is mapped at SF_MAP.
 */
#define SF_MAP		0x400000ULL
#define SF_SEC		0x3000
#define SF_PC(vaddr)	(SF_MAP + (vaddr))
#define SF_SP		0x7ffd0000ULL

/* Two functions of one SP-based row each, CFA SP + 8 and SP + 16. */
static size_t sf_section(u8 *buf, size_t size)
{
	static const struct sframe_build_fre row8[] = { { .cfa = 8 } };
	static const struct sframe_build_fre row16[] = { { .cfa = 16 } };
	static const struct sframe_build_fde fdes[] = {
		{ .start = 0x1000, .size = 0x20, .nr_fres = 1, .fres = row8 },
		{ .start = 0x1020, .size = 0x20, .nr_fres = 1, .fres = row16 },
	};
	struct sframe_build b = {
		.version = SFRAME_VERSION_2, .abi = SFRAME_ABI_AMD64_ENDIAN_LITTLE,
		.addr = SF_SEC, .nr_fdes = ARRAY_SIZE(fdes), .fdes = fdes,
	};
	long n = sframe_build__section(&b, buf, size);

	return n < 0 ? 0 : n;
}

static int sf_write_elf(char *path)
{
	static u8 sec[128];
	size_t size = sf_section(sec, sizeof(sec));
	int fd, ret;

	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	ret = sframe_build__write_elf(fd, EM_X86_64, SF_SEC, sec, size);
	close(fd);
	return ret;
}

/* A sample with user regs @ip, @sp (SF_SP) and @bp, and the stack @words. */
static int sf_sample(struct fixture *f, u64 time, u64 cookie, u64 ip, u64 bp,
		     const u64 *words, int nr_words)
{
	union perf_event *event = (union perf_event *)f->buf;
	u64 *p = f->buf + 1;

	*p++ = KIP;
	*p++ = ((u64)10 << 32) | 10;		/* pid, tid */
	*p++ = time;
	*p++ = 5;				/* callchain */
	*p++ = PERF_CONTEXT_KERNEL;
	*p++ = KIP;
	*p++ = KIP + 1;
	*p++ = PERF_CONTEXT_USER_DEFERRED;
	*p++ = cookie;
	*p++ = PERF_SAMPLE_REGS_ABI_64;
	*p++ = bp;
	*p++ = SF_SP;
	*p++ = ip;
	*p++ = 256;
	memset(p, 0, 256);
	memcpy(p, words, nr_words * sizeof(u64));
	p += 256 / sizeof(u64);
	*p++ = 256;
	event->header.type = PERF_RECORD_SAMPLE;
	event->header.misc = PERF_RECORD_MISC_KERNEL;
	event->header.size = (u8 *)p - (u8 *)f->buf;
	return feed(f, event);
}

/* Does @d end with PERF_CONTEXT_USER and the @nr user frames @ips? */
static bool user_frames(const struct delivered *d, const u64 *ips, u64 nr)
{
	return d->nr == 4 + nr && d->ips[3] == PERF_CONTEXT_USER &&
	       !memcmp(d->ips + 4, ips, nr * sizeof(u64));
}

/*
 * How the session's walk (unwind__walk_deferred()) is to be set up: as by
 * default, or with the unwind style "sframe-only" named and the frames shown
 * callee or caller first (callchain_param.order, which the unwinders follow).
 */
enum sf_walk {
	SF_WALK_DEFAULT,
	SF_WALK_STYLE,
	SF_WALK_STYLE_CALLER,
};

/* The walk's results for the three samples of sf_walk_samples(). */
static bool sf_walk_check(struct fixture *f, struct machine *machine, enum sf_walk how)
{
	const u64 full[] = {
		SF_PC(0x1004), SF_PC(0x1024), SF_PC(0x2010), SF_PC(0x2050), SF_PC(0x2080),
	};
	const u64 fp_only[] = { SF_PC(0x2008), SF_PC(0x2050), SF_PC(0x2080) };
	/* As the unwind styles give them: callers' PCs inside their call. */
	const u64 rows[] = { SF_PC(0x1004), SF_PC(0x1023), SF_PC(0x200f) };

	if (how != SF_WALK_DEFAULT) {
		/* sframe-only stops where SFrame rows end: no frame pointers. */
		return user_frames(&f->out[0], rows, ARRAY_SIZE(rows)) &&
		       user_frames(&f->out[1], rows, ARRAY_SIZE(rows)) &&
		       user_frames(&f->out[2], fp_only, 1) &&
		       stats(f)->fallback_style == 3 && stats(f)->fallback_sframe == 0 &&
		       stats(f)->fallback_fp == 0;
	}
	/* SFrame through F1 and F2, then frame pointers: 5 frames. */
	return user_frames(&f->out[0], full, ARRAY_SIZE(full)) &&
	       /* The chain ends at a "return address" outside any code. */
	       user_frames(&f->out[1], full, 3) &&
	       /* No .sframe row on the way: the plain frame pointer walk. */
	       user_frames(&f->out[2], fp_only, ARRAY_SIZE(fp_only)) &&
	       stats(f)->fallback_sframe == 2 && stats(f)->fallback_fp == 1 &&
	       stats(f)->fallback_style == 0 && machine->sframe_stats.fp_frames == 2;
}

static int sf_walk_samples(enum sf_walk how)
{
	/*
	 * F1 (CFA sp+8) returns to F2 at SP, F2 (CFA sp+16) to 0x2010 at
	 * SP+16, code without a row; BP (unchanged, neither saves it) holds
	 * a frame pointer chain from there: SP+32 -> SP+48 -> out of the
	 * snapshot.
	 */
	const u64 stack[] = {
		SF_PC(0x1024), 0, SF_PC(0x2010), 0,
		SF_SP + 48, SF_PC(0x2050), SF_SP + 4096, SF_PC(0x2080),
	};
	enum unwind_style styles[MAX_UNWIND_STYLE];
	enum chain_order order = callchain_param.order;
	u64 bad_ra[ARRAY_SIZE(stack)];
	char path[] = "/tmp/perf-test-sframe-XXXXXX";
	struct thread *thread = NULL;
	struct machine machine;
	struct dso *dso = NULL;
	struct map *map = NULL;
	struct fixture f;
	int ret = TEST_FAIL;

	if (sf_write_elf(path)) {
		pr_debug("cannot write %s\n", path);
		return TEST_FAIL;
	}
	memcpy(bad_ra, stack, sizeof(stack));
	bad_ra[5] = 0x77770000;			/* not mapped: not code */

	if (machine__init(&machine, "", HOST_KERNEL_ID))
		goto out_unlink;
	thread = machine__findnew_thread(&machine, 10, 10);
	dso = dso__new(path);
	map = dso ? map__new2(SF_MAP, dso) : NULL;
	if (!thread || !map)
		goto out;
	map__set_end(map, SF_MAP + 0x10000);
	if (maps__insert(thread__maps(thread), map))
		goto out;

	if (fixture__init(&f, true, NULL))
		goto out;
	f.machine = &machine;
	/* perf test runs each case in a child of its own: restored anyway. */
	memcpy(styles, symbol_conf.unwind_style, sizeof(styles));
	if (how != SF_WALK_DEFAULT) {
		memset(symbol_conf.unwind_style, 0, sizeof(symbol_conf.unwind_style));
		symbol_conf.unwind_style[0] = UNWIND_STYLE_SFRAME_ONLY;
	}
	if (how == SF_WALK_STYLE_CALLER)
		callchain_param.order = ORDER_CALLER;
	if (sf_sample(&f, 1 * MS, 0x41, SF_PC(0x1004), SF_SP + 32, stack, ARRAY_SIZE(stack)) ||
	    sf_sample(&f, 2 * MS, 0x42, SF_PC(0x1004), SF_SP + 32, bad_ra, ARRAY_SIZE(bad_ra)) ||
	    sf_sample(&f, 3 * MS, 0x43, SF_PC(0x2008), SF_SP + 32, stack, ARRAY_SIZE(stack)) ||
	    deferred_callchain__flush(f.dc) || f.nr_out != 3)
		goto out_fixture;
	if (sf_walk_check(&f, &machine, how))
		ret = TEST_OK;
out_fixture:
	memcpy(symbol_conf.unwind_style, styles, sizeof(styles));
	callchain_param.order = order;
	if (ret != TEST_OK) {
		pr_debug("delivered %d, fallback sframe %" PRIu64 " fp %" PRIu64 " style %" PRIu64 "\n",
			 f.nr_out, stats(&f)->fallback_sframe, stats(&f)->fallback_fp,
			 stats(&f)->fallback_style);
	}
	fixture__exit(&f);
out:
	map__put(map);
	dso__put(dso);
	thread__put(thread);
	machine__exit(&machine);
out_unlink:
	unlink(path);
	return ret;
}

static int test__deferred_snapshot_sframe(struct test_suite *t __maybe_unused,
					  int s __maybe_unused)
{
	return sf_walk_samples(SF_WALK_DEFAULT);
}

/*
 * With unwind styles named (unwind.style, --unwind-style) the walk is
 * theirs: "sframe-only" here, whose frames stop where the rows do, and in
 * the order of a record whichever order perf shows callchains in.
 */
static int test__deferred_snapshot_style(struct test_suite *t __maybe_unused,
					 int s __maybe_unused)
{
	int ret = sf_walk_samples(SF_WALK_STYLE);

	return ret == TEST_OK ? sf_walk_samples(SF_WALK_STYLE_CALLER) : ret;
}

/*
 * A file mapped whole: its records known ahead.  Each sample goes out as it
 * comes, stitched, or with no record at once; a record of another task
 * with the sample's cookie does not stitch it; a duplicate is counted.
 */
static int test__deferred_ahead(struct test_suite *t __maybe_unused, int s __maybe_unused)
{
	struct fixture f;

	CHECK(!fixture__init_session(&f, NULL));
	f.keep = true;
	CHECK(!sample(&f, 10, 1 * MS, 2, 0x7100000001, NULL));
	CHECK(!sample(&f, 11, 2 * MS, 1, 0x7200000001, NULL));
	CHECK(!sample(&f, 12, 3 * MS, 1, 0x7300000001, NULL));
	CHECK(!sample(&f, 13, 4 * MS, 1, 0x7400000001, NULL));
	CHECK(!record(&f, 11, 5 * MS, 0x7200000001, 2));
	/* Task 14's entry with task 13's cookie: not task 13's record. */
	CHECK(!record(&f, 14, 6 * MS, 0x7400000001, 1));
	CHECK(!record(&f, 10, 7 * MS, 0x7100000001, 3));
	CHECK(!record(&f, 10, 7 * MS, 0x7100000001, 3));
	/* Taken in the unwind path, after its own record. */
	CHECK(!sample(&f, 10, 8 * MS, 2, 0x7100000001, NULL));
	CHECK(f.nr_out == 0);
	CHECK(!play(&f, -1, true));
	CHECK(f.nr_out == 5);
	CHECK(f.out[0].tid == 10 && stitched(&f.out[0], 3));
	CHECK(f.out[1].tid == 11 && stitched(&f.out[1], 2));
	CHECK(f.out[2].tid == 12 && lost(&f.out[2]));
	CHECK(f.out[3].tid == 13 && lost(&f.out[3]));
	CHECK(f.out[4].tid == 10 && stitched(&f.out[4], 3));
	CHECK(stats(&f)->stitched == 2 && stats(&f)->stitched_late == 1);
	CHECK(stats(&f)->lost == 2 && stats(&f)->records == 3);
	CHECK(stats(&f)->duplicates == 1);
	CHECK(stats(&f)->max_pending == 0 && stats(&f)->max_queued == 0);
	CHECK(!deferred_callchain__flush(f.dc));
	/* Task 14's record stitched nothing. */
	CHECK(stats(&f)->orphans == 1);
	fixture__exit(&f);
	return TEST_OK;
}

/*
 * Records known ahead, with what the streaming rules keep: an execve's
 * record (its samples go out after the exec's COMM), and a record the look
 * ahead did not reach (it stopped: damage, or the budget).
 */
static int test__deferred_ahead_streams(struct test_suite *t __maybe_unused,
					int s __maybe_unused)
{
	struct deferred_callchain_config config;
	struct fixture f;
	struct perf_sample parsed;
	union perf_event *event;

	/* As test__deferred_exec_in_place(), every record known ahead. */
	CHECK(!fixture__init_session(&f, NULL));
	f.keep = true;
	CHECK(!sample(&f, 40, 1 * MS, 2, 0x6100000001, NULL));
	CHECK(!sample(&f, 41, 2 * MS, 1, 0x6200000001, NULL));
	CHECK(!record(&f, 41, 2 * MS + 1, 0x6200000001, 1));
	CHECK(!comm_exec(&f, 40, 40, 3 * MS));
	CHECK(!record(&f, 40, 4 * MS, 0x6100000001, 1));
	CHECK(!play(&f, -1, true));
	CHECK(f.nr_out == 3 && f.out[0].type == PERF_RECORD_COMM);
	CHECK(f.out[1].tid == 40 && f.out[1].time == 1 * MS && stitched(&f.out[1], 1));
	CHECK(f.out[2].tid == 41 && f.out[2].time == 2 * MS && stitched(&f.out[2], 1));
	CHECK(stats(&f)->exec_maps_ahead == 1 && stats(&f)->max_pending == 1);
	CHECK(stats(&f)->stitched == 2 && stats(&f)->records == 2);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);

	/* The look ahead stopped before task 51's record: it waits for it. */
	CHECK(!fixture__init_session(&f, NULL));
	f.keep = true;
	CHECK(!sample(&f, 50, 1 * MS, 2, 0x7500000001, NULL));
	CHECK(!sample(&f, 51, 2 * MS, 2, 0x7600000001, NULL));
	CHECK(!record(&f, 50, 3 * MS, 0x7500000001, 2));
	CHECK(!record(&f, 51, 4 * MS, 0x7600000001, 3));
	CHECK(!play(&f, 3, false));
	CHECK(f.nr_out == 2);
	CHECK(f.out[0].tid == 50 && stitched(&f.out[0], 2));
	CHECK(f.out[1].tid == 51 && stitched(&f.out[1], 3));
	CHECK(stats(&f)->stitched == 2 && stats(&f)->records == 2);
	CHECK(stats(&f)->max_pending == 1 && stats(&f)->lost == 0);
	CHECK(!deferred_callchain__flush(f.dc));
	fixture__exit(&f);

	/* Past call-graph.defer-memory nothing more is known ahead. */
	deferred_callchain_config__init(&config);
	config.max_pending_bytes = 1;
	CHECK(!fixture__init_session(&f, &config));
	f.keep = true;
	CHECK(!record(&f, 50, 3 * MS, 0x7500000001, 2));
	event = (union perf_event *)f.kept;
	perf_sample__init(&parsed, /*all=*/true);
	CHECK(!evsel__parse_sample(f.evsel, event, &parsed));
	CHECK(deferred_callchain__ahead(f.dc, event, &parsed, NULL) == -E2BIG);
	perf_sample__exit(&parsed);
	fixture__exit(&f);
	return TEST_OK;
}

static struct test_case tests__deferred_callchain[] = {
	TEST_CASE("Stitch samples followed by their record", deferred_in_order),
	TEST_CASE("Stitch samples that follow their record", deferred_late),
	TEST_CASE("Drop duplicate and stale records", deferred_duplicate),
	TEST_CASE("Release samples whose record is lost", deferred_lost),
	TEST_CASE("Samples of an exiting task wait the window", deferred_exit),
	TEST_CASE("A reused tid: the old task's samples first", deferred_tid_reuse),
	TEST_CASE("Reorder window and late delivery", deferred_window),
	TEST_CASE("Off-CPU: a blocked task's sample holds the others", deferred_offcpu),
	TEST_CASE("Exec by a non-leader thread (de_thread)", deferred_exec),
	TEST_CASE("An execve's samples keep their place", deferred_exec_in_place),
	TEST_CASE("Samples of a released task (tid -1)", deferred_no_tid),
	TEST_CASE("A record lives until evidence ends it", deferred_record_life),
	TEST_CASE("One damaged time does not move the clock", deferred_clock),
	TEST_CASE("Pending and queue caps", deferred_cap),
	TEST_CASE("An EXIT waits for its task's late samples", deferred_exit_held),
	TEST_CASE("Interleaved tasks across CPUs", deferred_cross_cpu),
	TEST_CASE("More tasks at once than the first table holds", deferred_many_tasks),
	TEST_CASE("Malformed and boundary records", deferred_malformed),
	TEST_CASE("Held events are parsed again as the caller parsed them", deferred_parse_again),
	TEST_CASE("Records known ahead: samples go out as they come", deferred_ahead),
	TEST_CASE("Records known ahead: what the streaming rules keep", deferred_ahead_streams),
	TEST_CASE("Frame pointer walk of a stack snapshot", deferred_snapshot),
	TEST_CASE("SFrame walk of a stack snapshot", deferred_snapshot_sframe),
	TEST_CASE("A stack snapshot walked with the unwind styles named", deferred_snapshot_style),
	{	.name = NULL, }
};

struct test_suite suite__deferred_callchain = {
	.desc = "Deferred callchains",
	.test_cases = tests__deferred_callchain,
};
