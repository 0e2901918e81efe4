/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_DEFERRED_CALLCHAIN_H
#define __PERF_DEFERRED_CALLCHAIN_H

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * Stitching of deferred user callchains.
 *
 * With attr.defer_callchain the kernel ends a sample's callchain with
 * PERF_CONTEXT_USER_DEFERRED and a cookie instead of the user frames.  The
 * user frames come later, once per kernel entry, in one
 * PERF_RECORD_CALLCHAIN_DEFERRED (cookie, nr, ips[nr]) emitted when the task
 * returns to user space; every sample taken in that kernel entry shares it.
 *
 * This module joins them.  Feed it every event of a session in delivery
 * order through deferred_callchain__event(); it hands samples back to
 * ops->sample with complete callchains (kernel frames, PERF_CONTEXT_USER,
 * user frames):
 *
 *  - Matching is keyed by (machine, tid, cookie) and is O(1): one hash
 *    lookup per sample or record, no rescans, no re-parsing per record.
 *
 *  - A record may precede samples of its own kernel entry (samples taken in
 *    the unwind path itself are timestamped after it, and ordered_events may
 *    deliver a sample late): these still stitch ("stitched late").  A
 *    task's latest record is kept until evidence ends its kernel entry: a
 *    deferred sample of the task with another cookie taken after it, a
 *    record of a later entry, the task's exit, or the end of input; not a
 *    clock (on a loaded 7.2 machine samples came 274 ms after their own
 *    record).  The few records before it are kept for window_ns.
 *
 *  - A sample waits for its record until the record comes, or until the
 *    stream proves it never will: window_ns passed after the task's exit
 *    (on 7.2 the record of a task's last kernel entry can come after its
 *    EXIT), a record of a later kernel entry of the same task arrives, the
 *    pending cap evicts it, or the input ends.  The EXIT goes to
 *    ops->event after the task's samples, even one the budget pushed out
 *    of the queue, so that they resolve against the task's thread, which
 *    the tool drops at the EXIT; without ops->event the tool must keep
 *    exited threads (symbol_conf.keep_exited_threads).  A sample that
 *    gets no record then gets the user frames the caller's walk finds in
 *    its user stack snapshot (deferred_callchain__set_walk(): the
 *    session's is unwind__walk_deferred(), the unwind styles the user
 *    named, else SFrame then frame pointers); this module unwinds
 *    nothing itself.
 *    Without a walk, or when it finds nothing, the callchain ends with a
 *    bare PERF_CONTEXT_USER_DEFERRED, which callchain resolution shows as
 *    "[user stack lost]".
 *
 *  - Samples are delivered in their own order through a reorder queue.  A
 *    waiting sample holds the ones behind it until its fate is known, not
 *    for a time: a task switched out in a blocking call (off-CPU,
 *    sched_switch) gets its record only when it runs again, seconds later.
 *    Only the budget bounds that: the bytes of everything held
 *    (max_pending_bytes) and the samples queued (max_queue); past it the
 *    oldest waiting sample leaves the queue and is delivered, late, when its
 *    fate is known: counted, and deferred_callchain__order_warning() names
 *    the knob.  A live tool (config.live, perf top) and streams not in time
 *    order bound the holding by window_ns instead.
 *
 *  - Tasks as the kernel hands tids over: an EXIT settles, after window_ns,
 *    the samples taken before it only (a task seen after its EXIT is a new
 *    one); a COMM exec of (P, P) moves the waiting samples of the other
 *    threads of P to P (de_thread(): the exec'ing thread takes the
 *    leader's tid, no FORK); a sample with tid -1 (a task past
 *    release_task()) is settled at once.  The samples of an execve (one
 *    user frame, the new program's _start) keep their place in time order
 *    and the exec's COMM and MMAPs, held with them, go ahead of them; only
 *    when another thread of the process comes between (de_thread()) do they
 *    go out after the exec, with their record.  See the comments at each
 *    rule for the kernel invariant it relies on.
 *
 *  - Duplicate records (same task and cookie as one kept) are dropped and
 *    counted; a record whose nr does not fit its size is rejected by sample
 *    parsing before it gets here.
 *
 *  - Records known ahead: when the caller can read the input's records before
 *    their turn (a file mapped whole), it hands them in first
 *    (deferred_callchain__ahead()).  A deferred sample whose record is
 *    known is stitched when it comes, and one with none known, when every
 *    record is, falls back at once: neither waits, nor holds the samples
 *    behind it, nor needs its task followed.  The kernel's record of a
 *    kernel entry is the true one however late it comes, so the rules
 *    above that prove a record lost (the window after an EXIT, a later
 *    entry's record, the budget) only apply to the samples left to them:
 *    those of an execve (their record must go out after the exec's COMM
 *    and MMAPs, which these rules see to) and, when not every record
 *    could be read ahead, those whose record was not.  The reader may then
 *    drop a known record when it reads it (deferred_callchain__known_at()):
 *    "stitched late" is told by time and file offset, as ordered_events
 *    would have delivered the two.
 *
 * Memory: what is known ahead (bounded by max_pending_bytes too, see
 * deferred-index.h), the samples held, waiting or queued behind a waiting one, with
 * their snapshots and the other events held with them (bounded in bytes by
 * max_pending_bytes; the waiting ones in number by max_pending, the queued
 * ones by max_queue), and per task its latest record (plus a few older
 * ones for window_ns).
 *
 * Nothing here depends on the sample order within the file other than that
 * the caller delivers events in time order (ordered_events); without it the
 * queue keeps arrival order.
 */

union perf_event;
struct perf_sample;
struct machine;
struct evlist;
struct deferred_callchain;

struct deferred_callchain_stats {
	u64 samples;		/* samples carrying PERF_CONTEXT_USER_DEFERRED */
	u64 records;		/* PERF_RECORD_CALLCHAIN_DEFERRED accepted */
	u64 stitched;		/* samples merged with a record that followed them */
	u64 stitched_late;	/* samples merged with a record that preceded them */
	u64 fallback_fp;	/* no record: snapshot walked with frame pointers */
	u64 lost;		/* no record and no snapshot: "[user stack lost]" */
	u64 delivered_late;	/* delivered after later samples (window) */
	u64 evicted;		/* released early by the pending cap */
	u64 exited;		/* of the lost/fallback ones: their task exited */
	u64 duplicates;		/* records dropped as duplicates or stale */
	u64 orphans;		/* records no sample matched */
	u64 no_tid;		/* records without a task id (no sample_id_all) */
	u64 max_pending;	/* most samples waiting for a record at once */
	u64 max_queued;		/* most samples held by the reorder queue at once */
	u64 fallback_sframe;	/* no record: user frames walked with SFrame */
	u64 bad_user_ips;	/* record entries >= PERF_CONTEXT_MAX, dropped */
	u64 bad_times;		/* times far ahead of their neighbours, not trusted */
	u64 max_pending_bytes;	/* most bytes held by waiting samples at once */
	u64 max_held_bytes;	/* most bytes held at once, queued samples too */
	u64 exec_moved;		/* waiting samples moved to their leader's tid at exec */
	u64 exec_late;		/* samples of an execve, delivered with its record */
	u64 exec_maps_ahead;	/* exec COMM, MMAPs moved ahead of the execve's samples */
	u64 unparsed;		/* held events that did not parse again: dropped */
	u64 fallback_style;	/* no record: snapshot walked by the named styles */
};

struct deferred_callchain_config {
	u64 window_ns;		/* reorder window; how long older records are kept */
	u64 max_queue;		/* samples held for ordering, at most */
	u64 max_pending;	/* samples waiting for their record, at most */
	u64 max_pending_bytes;	/* and the bytes they hold (snapshots), at most */
	/*
	 * Events arrive in time order (ordered_events): only then do a
	 * record of a later kernel entry, or the window after the task's
	 * EXIT, prove that a sample's record is lost.
	 */
	bool ordered;
	/*
	 * A live tool (perf top): a waiting sample holds the later ones for
	 * window_ns at most, so that they show while they matter.  Otherwise
	 * it holds them until its fate is known, within the budget.
	 */
	bool live;
};

/* Defaults, chosen from real 7.2 recordings: records came <= ~100 ms late. */
#define DEFERRED_CALLCHAIN_WINDOW_NS	(250ULL * 1000 * 1000)
/* A count bound besides the bytes: the bytes (max_pending_bytes) govern. */
#define DEFERRED_CALLCHAIN_MAX_QUEUE	(16 * 1024 * 1024)
#define DEFERRED_CALLCHAIN_MAX_PENDING	(1024 * 1024)
/*
 * 512 MiB: ~115k samples with the default 2 KiB snapshot (~4.5 KiB each),
 * ~1.4M without one (~370 bytes: an entry with its copy of the event);
 * real 7.2 recordings never had more than a few thousand waiting.
 */
#define DEFERRED_CALLCHAIN_MAX_PENDING_BYTES	(512ULL << 20)

/* An initializer of struct deferred_callchain_config with the defaults. */
#define DEFERRED_CALLCHAIN_CONFIG_DEFAULT {				\
	.window_ns		= DEFERRED_CALLCHAIN_WINDOW_NS,		\
	.max_queue		= DEFERRED_CALLCHAIN_MAX_QUEUE,		\
	.max_pending		= DEFERRED_CALLCHAIN_MAX_PENDING,	\
	.max_pending_bytes	= DEFERRED_CALLCHAIN_MAX_PENDING_BYTES,	\
	.ordered		= true,					\
}

/**
 * typedef deferred_callchain__deliver_t - how the module hands events back
 * @dc: the stitcher
 * @event: the event, the caller's or the module's copy of it
 * @sample: as the caller parsed it, or, when it had to wait, as ops->parse
 *	parsed the copy again; its callchain may point to memory owned by
 *	the module, valid until the callback returns
 * @machine: the machine the caller gave with the event
 * @data: the caller's, from deferred_callchain__new()
 *
 * Return: 0, or a negative error code, which stops the stitcher and is
 * returned to the caller of deferred_callchain__event() or
 * deferred_callchain__flush().
 */
typedef int (*deferred_callchain__deliver_t)(struct deferred_callchain *dc,
					      union perf_event *event,
					      struct perf_sample *sample,
					      struct machine *machine,
					      void *data);

/**
 * typedef deferred_callchain__parse_t - parse an event the module held
 * @dc: the stitcher
 * @event: the module's copy of an event given to deferred_callchain__event()
 * @file_offset: the sample.file_offset the caller gave with it
 * @sample: initialized (perf_sample__init()), to fill in
 * @data: the caller's, from deferred_callchain__new()
 *
 * A held event keeps its bytes only, as ordered_events keeps its events:
 * it is parsed again when it goes out, as the caller parsed it the first
 * time, fix-ups included (perf_session__parse_sample()).
 *
 * Return: 0, or a negative error code: the event is then dropped, counted
 * and warned about (it parsed when it came).
 */
typedef int (*deferred_callchain__parse_t)(struct deferred_callchain *dc,
					    union perf_event *event, u64 file_offset,
					    struct perf_sample *sample, void *data);

/*
 * Samples come back through ops->sample.  Every other event the caller
 * delivers itself when deferred_callchain__event() says PASS, so that no
 * caller needs to know which events the module cares about; with
 * ops->event, an event that comes while samples are held is held behind
 * them instead, and handed back to ops->event in its turn: samples then
 * resolve against the comm, maps and threads of their own time (a sample
 * held while its task execs keeps its old comm and maps).  Without it (perf
 * top, live) events pass at once.
 */
struct deferred_callchain_ops {
	/* Every sample, with its complete callchain. */
	deferred_callchain__deliver_t	sample;
	/* Optional: any other event, in order behind the held samples. */
	deferred_callchain__deliver_t	event;
	/* Optional: how held events are parsed again; else evlist__parse_sample(). */
	deferred_callchain__parse_t	parse;
};

/**
 * enum deferred_callchain_walk - how a walk found a sample's user frames
 * @DEFERRED_CALLCHAIN_WALK_FP: frame pointers alone
 * @DEFERRED_CALLCHAIN_WALK_SFRAME: SFrame rows (then frame pointers)
 * @DEFERRED_CALLCHAIN_WALK_STYLE: the unwind styles the user named
 *
 * Each is counted apart: "fell back (fp)", "(sframe)", "(unwind-style)".
 */
enum deferred_callchain_walk {
	DEFERRED_CALLCHAIN_WALK_FP,
	DEFERRED_CALLCHAIN_WALK_SFRAME,
	DEFERRED_CALLCHAIN_WALK_STYLE,
};

/**
 * typedef deferred_callchain__walk_t - the user frames of a sample whose
 *	record never came, from its user stack snapshot
 * @machine: the machine the caller gave with the sample
 * @sample: the sample; a snapshot is PERF_SAMPLE_REGS_USER with
 *	    PERF_SAMPLE_STACK_USER, and it may have none
 * @ips: where the frames go, the sampled user IP first, as in a record
 * @max: room in @ips
 * @how: set to how the frames were found when any were
 *
 * The unwinder is the caller's, so that the stitcher sits below the
 * unwinders: it only joins.
 *
 * Return: how many frames were written to @ips; 0 (or a negative error
 * code) when none: the sample then ends with a bare marker.
 */
typedef int (*deferred_callchain__walk_t)(struct machine *machine,
					  struct perf_sample *sample,
					  u64 *ips, int max,
					  enum deferred_callchain_walk *how);

/**
 * deferred_callchain__new - a stitcher with the default config
 * @evlist: the session's events, to find a sample's evsel by its id
 * @ops: where samples (and, with ops->event, other events) go back
 * @data: handed to @ops
 *
 * The module reads no perf config itself: the tool hands it its settings
 * (call-graph.defer-*, read into callchain_param by perf_callchain_config())
 * with deferred_callchain__set_config().
 *
 * Return: the stitcher, or NULL when out of memory.
 */
struct deferred_callchain *deferred_callchain__new(struct evlist *evlist,
						   const struct deferred_callchain_ops *ops,
						   void *data);
/**
 * deferred_callchain__delete - free a stitcher and what it still holds
 * @dc: the stitcher, or NULL
 *
 * Samples still held are freed undelivered: call deferred_callchain__flush()
 * first to deliver them.
 *
 * Return: nothing.
 */
void deferred_callchain__delete(struct deferred_callchain *dc);

/**
 * deferred_callchain_config__init - the defaults above, events in time order
 * @config: filled in
 *
 * Return: nothing.
 */
void deferred_callchain_config__init(struct deferred_callchain_config *config);
/**
 * deferred_callchain__set_walk - the fallback of samples without a record
 * @dc: the stitcher
 * @walk: the caller's snapshot walk, or NULL for none (a bare marker)
 *
 * Return: nothing.
 */
void deferred_callchain__set_walk(struct deferred_callchain *dc, deferred_callchain__walk_t walk);

/**
 * deferred_callchain__set_config - take the tool's settings
 * @dc: the stitcher
 * @config: copied; a bound of 0 is taken as 1
 *
 * Return: nothing.
 */
void deferred_callchain__set_config(struct deferred_callchain *dc,
				    const struct deferred_callchain_config *config);

/* deferred_callchain__event(): the caller delivers the event itself. */
#define DEFERRED_CALLCHAIN__PASS	1

/**
 * deferred_callchain__event - the one way in
 * @dc: the stitcher
 * @event: the event, in delivery order
 * @sample: @event parsed, as ops->parse parses it (its file_offset too)
 * @machine: the machine the event belongs to, handed back with it
 *
 * Every event of the session read from its input, in delivery order,
 * parsed into @sample, once the caller stitches.  An event that must wait
 * is copied and parsed again when it goes out; one that nothing waits
 * ahead of is handed back at once, uncopied, with the caller's @sample,
 * which is left as it was.  A sample that does not come from the bytes of
 * @event (synthesized by an auxtrace decoder, pointing into its buffers)
 * cannot wait: the caller delivers it itself.  What the module does with
 * each event:
 *
 *  - PERF_RECORD_SAMPLE (deferred or not, so that order is kept): queued,
 *    handed back to ops->sample in order, complete.
 *  - PERF_RECORD_CALLCHAIN_DEFERRED: taken; stitches the task's samples.
 *  - PERF_RECORD_EXIT: the task's waiting samples wait on for window_ns
 *    (their record may come after the EXIT), then fall back.  The EXIT
 *    goes out after them, held while any sample out of the queue waits.
 *  - PERF_RECORD_FORK: a tid reused while its exited task still has
 *    samples waiting: those get no record.  A FORK or COMM of a tid whose
 *    old task's EXIT is held sends that EXIT out first.
 *  - PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC: see de_thread above.
 *  - these and anything else: held behind the held samples, to
 *    ops->event, when the caller gave one; else PASS, the caller delivers
 *    it now (without ops->event, a FORK first sends out the samples still
 *    queued of the tid's earlier task).
 *
 * Return: 0 when the module took the event, DEFERRED_CALLCHAIN__PASS when
 * the caller must deliver it now, a negative error code on failure (out of
 * memory, or what an ops callback returned).
 */
int deferred_callchain__event(struct deferred_callchain *dc, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine);
/**
 * deferred_callchain__ahead - an event of the input, before its turn
 * @dc: the stitcher, before any event was given to deferred_callchain__event()
 * @event: a PERF_RECORD_CALLCHAIN_DEFERRED, a PERF_RECORD_COMM (of an
 *	   exec: the record of the execve is left to the streaming rules) or
 *	   a PERF_RECORD_EXIT (to count the samples with no record of a task
 *	   that exited); other events are ignored
 * @sample: @event parsed, its file_offset as it will be given in its turn
 *	    (a PERF_RECORD_EXIT's is not looked at: the EXIT says it all)
 * @machine: the machine it will be given with
 *
 * Events are given in file order.  A record's user frames are not copied:
 * @event must stay in memory, unchanged, until deferred_callchain__flush()
 * (a file mapped whole does, until the reader is done).  Records with a
 * (machine, tid, cookie) already known are duplicates: the first is kept,
 * and the one at its file_offset counts as the record when its turn comes.
 *
 * What is known ahead counts against config.max_pending_bytes: past it,
 * nothing more is taken, and the caller stops.
 *
 * Return: 0; -EINVAL for a record that says no task (no sample_id_all):
 * it is not known ahead, and the caller must not say whole to
 * deferred_callchain__ahead_end(); -E2BIG past the budget, -ENOMEM: the
 * caller stops giving events ahead.
 */
int deferred_callchain__ahead(struct deferred_callchain *dc, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine);
/**
 * deferred_callchain__ahead_end - no more events ahead
 * @dc: the stitcher
 * @whole: every record of the input was given to deferred_callchain__ahead()
 *
 * Return: nothing.
 */
void deferred_callchain__ahead_end(struct deferred_callchain *dc, bool whole);

/**
 * deferred_callchain__known_at - may the reader drop the record it reads
 * @dc: the stitcher, its events ahead ended
 * @file_offset: where the reader is, a PERF_RECORD_CALLCHAIN_DEFERRED; the
 *		 reader goes forward through the file
 *
 * A record known ahead stitches its samples as they come: the reader need
 * not queue, parse and deliver it in its turn.  It counts as having had
 * its turn.
 *
 * Return: true when the record at @file_offset was known ahead and the
 * streaming rules do not need it: the caller drops it; false: the caller
 * delivers it as any other.
 */
bool deferred_callchain__known_at(struct deferred_callchain *dc, u64 file_offset);

/**
 * deferred_callchain__flush - end of input: deliver everything still held
 * @dc: the stitcher
 *
 * The samples still waiting get no record now: they go out with their
 * snapshot and a bare PERF_CONTEXT_USER_DEFERRED, in order.  The records
 * known ahead are forgotten: their frames are the caller's, which may go.
 *
 * Return: 0, or the first negative error code of an ops callback.
 */
int deferred_callchain__flush(struct deferred_callchain *dc);

/**
 * deferred_callchain__stats - what the stitcher counted
 * @dc: the stitcher
 *
 * Return: its counters, valid as long as @dc.
 */
const struct deferred_callchain_stats *
deferred_callchain__stats(const struct deferred_callchain *dc);
/**
 * deferred_callchain_stats__any - was anything deferred seen at all
 * @stats: the counters
 *
 * Return: true when a deferred sample or record was seen.
 */
bool deferred_callchain_stats__any(const struct deferred_callchain_stats *stats);
/**
 * deferred_callchain_stats__fprintf - the counters, one per line
 * @stats: the counters
 * @fp: where to
 * @prefix: at the start of each line (indentation)
 *
 * Return: the number of characters printed.
 */
size_t deferred_callchain_stats__fprintf(const struct deferred_callchain_stats *stats,
					 FILE *fp, const char *prefix);
/**
 * deferred_callchain_stats__warning - when many samples got no record
 * @stats: the counters
 * @buf: where the warning is written
 * @size: of @buf
 *
 * Return: @buf with a one-line warning when 1% or more of the deferred
 * samples got no record, else NULL.
 */
const char *deferred_callchain_stats__warning(const struct deferred_callchain_stats *stats,
					      char *buf, size_t size);
/**
 * deferred_callchain__order_warning - when samples went out of time order
 * @dc: the stitcher
 * @buf: where the warning is written
 * @size: of @buf
 *
 * Samples go out of time order when the budget was too small to hold them.
 *
 * Return: @buf with a one-line warning naming the knob to raise, or NULL
 * when every sample went out in order.
 */
const char *deferred_callchain__order_warning(const struct deferred_callchain *dc,
					      char *buf, size_t size);

#endif /* __PERF_DEFERRED_CALLCHAIN_H */
