// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a stream of perf events driven through the real sample
 * parsing (evsel__parse_sample of an evsel with defer_callchain) and the
 * real stitcher (util/deferred-callchain.c), the way util/session.c feeds
 * them: every event that parses goes through deferred_callchain__event(),
 * the one entry point (a record that fails to parse is skipped and counted),
 * user events (FINISHED_ROUND...) are skipped, and the end of input
 * flushes.
 *
 * Input: an 8-byte setup block, then perf events, each one a
 * struct perf_event_header and its payload, in host byte order.  The stream
 * ends at the first header whose size is smaller than a header, runs past
 * the input or is not a multiple of 8 (perf_session__process_event() aborts
 * there too).  An event smaller than session.c's perf_event__min_size[] for
 * its type is skipped, as session.c does.  Each event is copied to a buffer
 * of exactly header.size bytes, so that any read past it is caught by ASan.
 *
 * Setup block:
 *   [0] bit 0: PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER (snapshot)
 *       bit 1: no sample_id_all
 *       bit 2: unordered (config.ordered = false)
 *       bit 3: PERF_SAMPLE_IDENTIFIER
 *       bit 4: PERF_SAMPLE_ID
 *       bit 5: PERF_SAMPLE_CPU
 *       bit 6: PERF_SAMPLE_PERIOD
 *       bit 7: cross-endian (evsel->needs_swap)
 *   [1] reorder window in ms (0: default)
 *   [2] max_queue (0: default)
 *   [3] max_pending (0: default)
 *   [4] bit 0: no PERF_SAMPLE_TIME, bit 1: PERF_SAMPLE_ADDR,
 *       bit 2: the events known ahead first, as from a file mapped whole
 *       (deferred_callchain__ahead(), at the file offsets they come with),
 *       bit 3: all of them (else the first half), and said to be whole
 *   [5] sample_stack_user / 64 (0: 256 bytes)
 *   [6] bit 0: a memory budget for waiting samples of [7] * 256 bytes
 *       bit 1: live (config.live, as perf top)
 *   [7] see [6]
 *
 * Besides ASan/UBSan, the target checks what the stitcher promises: every
 * sample it is given comes out exactly once, with a callchain that can be
 * read in full, in time order none after its task's EXIT (which it passes
 * back, as every event but samples and records), and every deferred sample
 * is counted once as stitched, stitched late, fallen back or lost.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>

#include "util/debug.h"
#include "util/deferred-callchain.h"
#include "util/event.h"
#include "util/evlist.h"
#include "util/evsel.h"
#include "util/machine.h"
#include "util/sample.h"
#include "util/threads.h"
#include "util/unwind.h"
#include "arch/x86/include/uapi/asm/perf_regs.h"

#define SETUP_SIZE	8

struct fuzz_state {
	struct machine	machines[2];	/* host, one guest: keyed by pid */
	u64		queued;
	u64		delivered;
	u64		bad_records;
	u64		sink;
	u64		seq;		/* events given, as sample.file_offset */
	bool		ordered;
	struct {			/* the latest EXIT, then FORK, by tid % 64 */
		struct machine	*machine;
		u64		exit_seq;
		u64		fork_seq;	/* a FORK passed after that EXIT */
		u32		tid;
	} exits[64];
};

static FILE *devnull;

static void fail(const char *what, int err)
{
	fprintf(stderr, "deferred-stream: %s (%d)\n", what, err);
	abort();
}

static int deliver(struct deferred_callchain *dc __maybe_unused, union perf_event *event,
		   struct perf_sample *sample, struct machine *machine, void *data)
{
	struct fuzz_state *st = data;
	u64 i;

	if (event->header.type != PERF_RECORD_SAMPLE)
		fail("delivered an event that was never queued", event->header.type);
	st->delivered++;
	/*
	 * Samples may go out after their task's EXIT (their record may come
	 * after it), but not after a FORK reused the tid: the tool would
	 * resolve them against the new thread.
	 */
	if (st->ordered && st->exits[sample->tid % 64].fork_seq &&
	    st->exits[sample->tid % 64].exit_seq > sample->file_offset &&
	    st->exits[sample->tid % 64].tid == sample->tid &&
	    st->exits[sample->tid % 64].machine == machine)
		fail("sample of an exited task delivered after its tid's next FORK",
		     (int)sample->tid);
	if (sample->callchain) {
		/* A tool walks the whole chain: every entry must be readable. */
		for (i = 0; i < sample->callchain->nr; i++)
			st->sink += sample->callchain->ips[i];
		if (sample->deferred_callchain && sample->callchain->nr >= 2)
			fail("deferred sample delivered unresolved", 0);
	}
	return 0;
}

static const struct deferred_callchain_ops ops = {
	.sample	= deliver,
};

static struct machine *event_machine(struct fuzz_state *st, union perf_event *event)
{
	u16 cpumode = event->header.misc & PERF_RECORD_MISC_CPUMODE_MASK;

	if (cpumode == PERF_RECORD_MISC_GUEST_KERNEL || cpumode == PERF_RECORD_MISC_GUEST_USER)
		return &st->machines[1];
	return &st->machines[0];
}

static void setup_attr(struct perf_event_attr *attr, const u8 *s)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_CALLCHAIN;
	if (!(s[4] & 1))
		attr->sample_type |= PERF_SAMPLE_TIME;
	if (s[4] & 2)
		attr->sample_type |= PERF_SAMPLE_ADDR;
	if (s[0] & 1) {
		attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->sample_regs_user = (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) |
					 (1ULL << PERF_REG_X86_IP);
		attr->sample_stack_user = s[5] ? s[5] * 64U : 256;
	}
	if (s[0] & 8)
		attr->sample_type |= PERF_SAMPLE_IDENTIFIER;
	if (s[0] & 16)
		attr->sample_type |= PERF_SAMPLE_ID;
	if (s[0] & 32)
		attr->sample_type |= PERF_SAMPLE_CPU;
	if (s[0] & 64)
		attr->sample_type |= PERF_SAMPLE_PERIOD;
	attr->sample_id_all = !(s[0] & 2);
	attr->defer_callchain = 1;
	attr->defer_output = 1;
}

/* session.c's perf_event__min_size[], for the types handled here. */
static u32 min_size(u32 type)
{
	switch (type) {
	case PERF_RECORD_MMAP:
		return offsetof(struct perf_record_mmap, filename) + 1;
	case PERF_RECORD_MMAP2:
		return offsetof(struct perf_record_mmap2, filename) + 1;
	case PERF_RECORD_COMM:
		return offsetof(struct perf_record_comm, comm) + 1;
	case PERF_RECORD_LOST:
		return sizeof(struct perf_record_lost);
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		return sizeof(struct perf_record_fork);
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		return sizeof(struct perf_event_header) + sizeof(u64);
	default:
		return 0;
	}
}

static void process(struct fuzz_state *st, struct evsel *evsel,
		    struct deferred_callchain *dc, union perf_event *event)
{
	struct machine *machine = event_machine(st, event);
	struct perf_sample sample;
	int ret = 0;

	/* Like perf_session__process_event: user events have no sample. */
	if (event->header.type >= PERF_RECORD_USER_TYPE_START)
		return;
	if (event->header.size < min_size(event->header.type))
		return;

	perf_sample__init(&sample, /*all=*/true);
	if (evsel__parse_sample(evsel, event, &sample)) {
		if (event->header.type == PERF_RECORD_CALLCHAIN_DEFERRED)
			st->bad_records++;
		goto out;
	}
	/* Every event goes in, as util/session.c hands them over. */
	if (event->header.type == PERF_RECORD_SAMPLE)
		st->queued++;
	sample.file_offset = ++st->seq;
	ret = deferred_callchain__event(dc, event, &sample, machine);
	if (ret < 0)
		fail("stitcher failed", ret);
	if (ret == DEFERRED_CALLCHAIN__PASS &&
	    (event->header.type == PERF_RECORD_SAMPLE ||
	     event->header.type == PERF_RECORD_CALLCHAIN_DEFERRED))
		fail("stitcher passed an event it must take", event->header.type);
	if (ret == DEFERRED_CALLCHAIN__PASS && event->header.type == PERF_RECORD_EXIT) {
		st->exits[event->fork.tid % 64].machine = machine;
		st->exits[event->fork.tid % 64].exit_seq = st->seq;
		st->exits[event->fork.tid % 64].fork_seq = 0;
		st->exits[event->fork.tid % 64].tid = event->fork.tid;
	}
	if (ret == DEFERRED_CALLCHAIN__PASS && event->header.type == PERF_RECORD_FORK &&
	    st->exits[event->fork.tid % 64].tid == event->fork.tid &&
	    st->exits[event->fork.tid % 64].machine == machine)
		st->exits[event->fork.tid % 64].fork_seq = st->seq;
out:
	perf_sample__exit(&sample);
}

/*
 * The events as a session walking a file mapped whole hands them ahead:
 * those process() gives the stitcher, at the same offsets, up to @limit
 * bytes of input.  Whole when every one was taken and the walk went to the
 * end.  @data is the input copied whole and aligned, kept until the
 * stitcher's flush, as a session keeps its mapping: the records' frames
 * are read there (deferred_callchain__ahead()).
 */
static void ahead(struct fuzz_state *st, struct evsel *evsel, struct deferred_callchain *dc,
		  u8 *data, size_t size, size_t limit, bool whole)
{
	u64 seq = 0;

	while (size >= sizeof(struct perf_event_header) && limit >= sizeof(struct perf_event_header)) {
		union perf_event *event = (union perf_event *)data;
		struct perf_event_header hdr = event->header;
		struct perf_sample sample;
		int ret;

		if (hdr.size < sizeof(hdr) || hdr.size > size || hdr.size % sizeof(u64) ||
		    hdr.size > limit)
			break;
		if (hdr.type < PERF_RECORD_USER_TYPE_START && hdr.size >= min_size(hdr.type)) {
			perf_sample__init(&sample, /*all=*/true);
			if (!evsel__parse_sample(evsel, event, &sample)) {
				sample.file_offset = ++seq;
				ret = deferred_callchain__ahead(dc, event, &sample,
								event_machine(st, event));
				if (ret == -ENOMEM)
					fail("out of memory", ret);
				if (ret)
					whole = false;
			} else if (hdr.type == PERF_RECORD_CALLCHAIN_DEFERRED) {
				whole = false;
			}
			perf_sample__exit(&sample);
		}
		data += hdr.size;
		size -= hdr.size;
		limit -= hdr.size;
	}
	deferred_callchain__ahead_end(dc, whole && size < sizeof(struct perf_event_header));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct deferred_callchain_stats *stats;
	struct deferred_callchain_config config;
	struct perf_event_attr attr;
	struct fuzz_state st;
	struct evlist *evlist;
	struct evsel *evsel;
	struct deferred_callchain *dc;
	u8 *whole_input = NULL;
	char buf[256];
	const u8 *s = data;
	int ret;

	if (size < SETUP_SIZE)
		return -1;
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	verbose = -1;

	memset(&st, 0, sizeof(st));
	st.machines[0].pid = HOST_KERNEL_ID;
	st.machines[1].pid = 1000;
	/* The SFrame fallback looks the task up: no thread is ever found. */
	threads__init(&st.machines[0].threads);
	threads__init(&st.machines[1].threads);

	setup_attr(&attr, s);
	evlist = evlist__new();
	evsel = evsel__new(&attr);
	if (!evlist || !evsel)
		fail("out of memory", -ENOMEM);
	evlist__add(evlist, evsel);
	evsel->needs_swap = !!(s[0] & 128);
	dc = deferred_callchain__new(evlist, &ops, &st);
	if (!dc)
		fail("out of memory", -ENOMEM);
	/* The session's fallback walk, as perf_session__deferred_callchain() sets it. */
	deferred_callchain__set_walk(dc, unwind__walk_deferred);
	/* Every field set: the defaults first, then what the input says. */
	deferred_callchain_config__init(&config);
	config.window_ns = s[1] ? s[1] * 1000000ULL : DEFERRED_CALLCHAIN_WINDOW_NS;
	config.max_queue = s[2] ? s[2] : DEFERRED_CALLCHAIN_MAX_QUEUE;
	config.max_pending = s[3] ? s[3] : DEFERRED_CALLCHAIN_MAX_PENDING;
	/* A small memory budget now and then, so that it evicts too. */
	config.max_pending_bytes = s[6] & 1 ? (u64)s[7] * 256 : DEFERRED_CALLCHAIN_MAX_PENDING_BYTES;
	config.ordered = !(s[0] & 4);
	/* perf top's holding, bounded by the window. */
	config.live = !!(s[6] & 2);
	st.ordered = config.ordered;
	deferred_callchain__set_config(dc, &config);

	data += SETUP_SIZE;
	size -= SETUP_SIZE;
	if (s[4] & 4) {
		/* Sizes are multiples of 8: the events in it stay aligned. */
		whole_input = malloc(size ?: 1);
		if (!whole_input)
			fail("out of memory", -ENOMEM);
		memcpy(whole_input, data, size);
		ahead(&st, evsel, dc, whole_input, size, s[4] & 8 ? size : size / 2,
		      !!(s[4] & 8));
	}
	while (size >= sizeof(struct perf_event_header)) {
		struct perf_event_header hdr;
		union perf_event *event;

		memcpy(&hdr, data, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > size || hdr.size % sizeof(u64))
			break;
		event = malloc(hdr.size);
		if (!event)
			fail("out of memory", -ENOMEM);
		memcpy(event, data, hdr.size);
		process(&st, evsel, dc, event);
		free(event);
		data += hdr.size;
		size -= hdr.size;
	}

	ret = deferred_callchain__flush(dc);
	if (ret)
		fail("flush failed", ret);
	free(whole_input);
	if (st.delivered != st.queued)
		fail("events lost or delivered twice", (int)(st.queued - st.delivered));
	stats = deferred_callchain__stats(dc);
	if (stats->stitched + stats->stitched_late + stats->fallback_fp +
	    stats->fallback_sframe + stats->fallback_style + stats->lost != stats->samples)
		fail("deferred samples not accounted for", (int)stats->samples);
	if (deferred_callchain_stats__any(stats)) {
		deferred_callchain_stats__fprintf(stats, devnull, "  ");
		deferred_callchain_stats__warning(stats, buf, sizeof(buf));
	}
	deferred_callchain__delete(dc);
	evlist__put(evlist);
	threads__exit(&st.machines[0].threads);
	threads__exit(&st.machines[1].threads);
	return 0;
}
