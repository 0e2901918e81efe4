// SPDX-License-Identifier: GPL-2.0
/*
 * Stitching of deferred user callchains: see deferred-callchain.h for the
 * contract.  In short, a sample whose record is known ahead (the input's
 * records, util/deferred-index.c) is stitched when it comes; any other
 * sample goes through a reorder queue, and one whose user frames are
 * deferred waits on its task until the task's PERF_RECORD_CALLCHAIN_DEFERRED
 * with the same cookie shows up, or until the stream proves that it never
 * will.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bits.h>
#include <linux/err.h>
#include <linux/hash.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/log2.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "debug.h"
#include "deferred-callchain.h"
#include "deferred-index.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "machine.h"
#include "sample.h"
#include "thread.h"
#include "vdso.h"

/* The kernel never emits more than this many deferred user entries. */
#define DC_MAX_USER_FRAMES	512
/*
 * Records kept per task for samples that come after them: those of the
 * unwind path, and samples that ordered_events could only deliver late (on
 * real 7.2 data, a sample came after the record of the next kernel entry).
 */
#define DC_TASK_RECORDS		4

/*
 * Freed records are kept for the next ones, by their room for frames:
 * DC_RECORD_MIN_IPS, twice that, and so on up to DC_RECORD_MAX_IPS
 * (dc__alloc_record()).  One was malloc'd and freed for each kernel entry
 * otherwise: with the tasks, at 50,000 threads that took glibc's malloc
 * from 2.7% of perf script's CPU time without deferral to 4.2%.  Deeper
 * ones are malloc'd to fit, and freed.
 */
#define DC_RECORD_MIN_IPS	8
#define DC_RECORD_MAX_IPS	64
#define DC_RECORD_CLASSES	4	/* 8, 16, 32 and 64 frames */

/* One PERF_RECORD_CALLCHAIN_DEFERRED, shared by every sample it stitches. */
struct dc_record {
	int	refcnt;
	bool	used;
	union {
		u64			cookie;
		struct dc_record	*next;	/* dc->record_cache, once free */
	};
	u64	time;
	u64	nr;
	u64	ips[];
};

enum dc_state {
	DC_READY,	/* nothing deferred: deliver as parsed */
	DC_WAITING,	/* waiting on its task for a record */
	DC_STITCHED,	/* ->rec holds its user frames */
	DC_NO_RECORD,	/* no record will come: fall back */
	DC_EVENT,	/* not a sample: held for order, to ops->event */
};

/*
 * Why the stitcher drains its queue, as ordered_events says why it flushes
 * (enum oe_flush).  After each event, what the clock and the fates now known
 * settle goes out: the window after an EXIT is over, older records expire,
 * the queue is delivered up to its first waiting sample (or past it, over
 * the budget).  At the end of input everything goes: no record comes now.
 */
enum dc_flush {
	DC_FLUSH__SETTLED,	/* what the clock and the known fates settle */
	DC_FLUSH__FINAL,	/* end of input: everything held */
};

/* Why waiting samples left the reorder queue: the knob the warning names. */
#define DC_LATE_MEMORY	BIT(0)		/* call-graph.defer-memory */
#define DC_LATE_QUEUE	BIT(1)		/* call-graph.defer-queue */
#define DC_LATE_WINDOW	BIT(2)		/* call-graph.defer-window */
#define DC_LATE_FORK	BIT(3)		/* a FORK reused a held tid */

struct dc_task {
	/* dc->task_table's chain; dc->task_cache's once free. */
	struct hlist_node	hash_node;
	long			key;		/* dc_task__key() */
	struct list_head	pending;	/* dc_entry.task_node, oldest first */
	struct list_head	recent_node;	/* in dc->recent while ->recs are kept */
	struct list_head	exit_node;	/* in dc->exits once exited, samples waiting */
	struct dc_record	*recs[DC_TASK_RECORDS];	/* newest first */
	int			nr_recs;
	u64			last_cookie;	/* latest record, even once dropped */
	u64			last_time;
	bool			have_last;
	/* A deferred sample of a later kernel entry came after last_cookie's. */
	bool			superseded;
	/* Between its EXIT and the window's end; see dc__task_exit(). */
	bool			exited;
	u64			exit_time;
	int			pid;		/* its process, for de_thread() */
	/*
	 * In an execve past its COMM exec, until exec_cookie's record or a
	 * later entry's.  exec_cookie 0: none of its samples seen yet (no
	 * cookie is 0, get_cookie() sets the CPU + 1 in the low half), and
	 * only until the exec's last MMAP (dc__task_mmap()).
	 */
	bool			in_exec;
	/* Samples of it waited at the COMM: all go out with its record. */
	bool			exec_with_record;
	u64			exec_cookie;
};

/*
 * An event up to this size is copied into its entry; a bigger one (a sample
 * with a user stack snapshot, about 4 KiB with the default 2 KiB of stack)
 * is malloc'd beside it.  Samples with up to ~25 kernel frames fit (those
 * of the real 7.2 recordings are ~160 bytes).
 */
#define DC_INLINE_EVENT		256

struct dc_entry {
	/* dc->queue; empty once expired; dc->entry_cache once free. */
	struct list_head	queue_node;
	struct list_head	wait_node;	/* dc->waiting while DC_WAITING */
	struct list_head	task_node;	/* task->pending while DC_WAITING */
	struct dc_record	*rec;
	struct machine		*machine;
	u64			time;
	u64			cookie;
	int			pid;		/* its process: see dc__exec_ahead() */
	int			tid;
	u32			size;		/* bytes, with the event copy */
	enum dc_state		state:8;	/* 8 bits: the entry stays 368 bytes */
	/* Taken before its task's EXIT: the window after it settles it. */
	bool			exited;
	/* In an execve: goes out with its record (dc__task_exec()). */
	bool			at_exec;
	/* Kept in place in an execve: the exec's COMM, MMAPs go ahead of it. */
	bool			maps_ahead;
	u64			file_offset;	/* the caller's, for ops->parse */
	/* The copy of the event: ->inline_event, or malloc'd when bigger. */
	union perf_event	*event;
	u64			inline_event[DC_INLINE_EVENT / sizeof(u64)];
};

/*
 * Entries come in blocks, as ordered_events allocates its events
 * (util/ordered-events.c): a freed entry goes to dc->entry_cache and the
 * next one reuses it, so that a steady stream of waiting samples allocates
 * nothing and writes to memory still in cache.  Blocks are freed with the
 * stitcher.
 */
#define DC_BLOCK_SIZE		(64 * 1024)

struct dc_block {
	struct list_head	node;		/* dc->blocks */
	struct dc_entry		entries[];
};

#define DC_BLOCK_ENTRIES	((DC_BLOCK_SIZE - sizeof(struct dc_block)) / \
				 sizeof(struct dc_entry))

struct deferred_callchain {
	struct evlist			*evlist;
	struct deferred_callchain_ops	ops;
	void				*data;
	deferred_callchain__walk_t	walk;		/* the fallback, or NULL */
	struct deferred_callchain_config config;
	struct deferred_callchain_stats	stats;
	/*
	 * Tasks by machine pid and tid, chained as the kernel's hashtable.h
	 * chains (the task is its own node); DC_TASK_BITS_MIN bits at first,
	 * doubled when there are more tasks than buckets.
	 */
	struct hlist_head		*task_table;
	unsigned int			task_bits;
	unsigned int			nr_tasks;
	struct hlist_head		task_cache;	/* freed tasks, to reuse */
	struct dc_task			*last_task;	/* the last one found */
	struct list_head		queue;		/* held for order, oldest first */
	struct list_head		waiting;	/* DC_WAITING, oldest first */
	struct list_head		recent;		/* tasks with ->recs, oldest first */
	struct list_head		exits;		/* exited tasks that wait, oldest first */
	struct list_head		exits_held;	/* EXIT events behind late samples */
	u64				nr_queued;
	u64				nr_late;	/* pushed out of the queue, waiting */
	u64				nr_waiting;
	u64				waiting_bytes;	/* of the DC_WAITING entries */
	u64				held_bytes;	/* of every entry, queued or waiting */
	u64				now;
	u64				jump_time;	/* a time far ahead, not trusted yet */
	bool				have_now;
	bool				have_jump;
	bool				warned_cap;
	unsigned int			late_why;	/* DC_LATE_*: what pushed samples out */
	u64				*chain;		/* scratch ip_callchain */
	size_t				chain_alloc;	/* in u64 */
	struct list_head		blocks;		/* struct dc_block, newest first */
	struct list_head		entry_cache;	/* freed entries, to reuse */
	struct dc_record		*record_cache[DC_RECORD_CLASSES];	/* freed */
	unsigned int			block_left;	/* unused in the newest block */
	/*
	 * The input's records, known ahead (deferred_callchain__ahead()):
	 * a deferred sample whose record is there goes out at once, and
	 * the record skips the task table when its turn comes.  Every
	 * record of the input when known_whole: a sample with none there
	 * gets none.
	 */
	struct deferred_index		*known;
	bool				known_whole;
};

/*
 * Every deferred sample and record looks up its task, and at 50,000
 * threads nearly every lookup is a cold one: through libbpf's hashmap,
 * whose entries are allocated apart from what they point to,
 * hashmap_find_entry() took 5.1% of perf script's CPU time, 3.2% without
 * deferral (bench/deferred).  Chaining
 * the tasks themselves costs one cache miss less each; freed tasks are
 * kept for the next, as entries are (dc__alloc_entry()).
 */
#define DC_TASK_BITS_MIN	6

static long dc_task__key(struct machine *machine, int tid)
{
	u32 pid = machine ? (u32)machine->pid : 0;

	return (long)(((u64)pid << 32) | (u32)tid);
}

struct deferred_callchain *deferred_callchain__new(struct evlist *evlist,
						   const struct deferred_callchain_ops *ops,
						   void *data)
{
	struct deferred_callchain *dc = zalloc(sizeof(*dc));

	if (!dc)
		return NULL;
	dc->task_bits = DC_TASK_BITS_MIN;
	dc->task_table = calloc(1UL << dc->task_bits, sizeof(*dc->task_table));
	if (!dc->task_table) {
		free(dc);
		return NULL;
	}
	dc->evlist = evlist;
	dc->ops = *ops;
	dc->data = data;
	INIT_LIST_HEAD(&dc->queue);
	INIT_LIST_HEAD(&dc->waiting);
	INIT_LIST_HEAD(&dc->recent);
	INIT_LIST_HEAD(&dc->exits);
	INIT_LIST_HEAD(&dc->exits_held);
	INIT_LIST_HEAD(&dc->blocks);
	INIT_LIST_HEAD(&dc->entry_cache);
	deferred_callchain_config__init(&dc->config);
	return dc;
}

void deferred_callchain__set_walk(struct deferred_callchain *dc, deferred_callchain__walk_t walk)
{
	dc->walk = walk;
}

void deferred_callchain__set_config(struct deferred_callchain *dc,
				    const struct deferred_callchain_config *config)
{
	dc->config = *config;
	if (!dc->config.max_queue)
		dc->config.max_queue = 1;
	if (!dc->config.max_pending)
		dc->config.max_pending = 1;
	if (!dc->config.max_pending_bytes)
		dc->config.max_pending_bytes = 1;
}

void deferred_callchain_config__init(struct deferred_callchain_config *config)
{
	*config = (struct deferred_callchain_config)DEFERRED_CALLCHAIN_CONFIG_DEFAULT;
}

static struct dc_record *dc_record__get(struct dc_record *rec)
{
	rec->refcnt++;
	return rec;
}

/* The cache class for @nr frames; DC_RECORD_CLASSES: deeper than any. */
static unsigned int dc_record__class(u64 nr)
{
	if (nr > DC_RECORD_MAX_IPS)
		return DC_RECORD_CLASSES;
	nr = roundup_pow_of_two(max_t(u64, nr, DC_RECORD_MIN_IPS));
	return ilog2(nr) - ilog2(DC_RECORD_MIN_IPS);
}

/* A record with room for @nr frames: a cached one of its class, if any. */
static struct dc_record *dc__alloc_record(struct deferred_callchain *dc, u64 nr)
{
	unsigned int class = dc_record__class(nr);
	struct dc_record *rec;

	if (class == DC_RECORD_CLASSES)
		return malloc(sizeof(*rec) + nr * sizeof(u64));
	rec = dc->record_cache[class];
	if (rec) {
		dc->record_cache[class] = rec->next;
		return rec;
	}
	return malloc(sizeof(*rec) + ((u64)DC_RECORD_MIN_IPS << class) * sizeof(u64));
}

static void dc_record__put(struct deferred_callchain *dc, struct dc_record *rec)
{
	unsigned int class;

	if (!rec || --rec->refcnt)
		return;
	if (!rec->used)
		dc->stats.orphans++;
	/* Its nr lost only bad entries: its room is its class's at least. */
	class = dc_record__class(rec->nr);
	if (class == DC_RECORD_CLASSES) {
		free(rec);
		return;
	}
	rec->next = dc->record_cache[class];
	dc->record_cache[class] = rec;
}

/* hash_for_each_safe() (linux/hashtable.h), for a table that grows. */
#define dc__for_each_task_safe(dc, bkt, tmp, task)				\
	for ((bkt) = 0; (bkt) < 1U << (dc)->task_bits; (bkt)++)			\
		hlist_for_each_entry_safe(task, tmp, &(dc)->task_table[bkt], hash_node)

static struct hlist_head *dc__task_bucket(struct deferred_callchain *dc, long key)
{
	return &dc->task_table[hash_64(key, dc->task_bits)];
}

/* More tasks than buckets: twice the buckets, or the chains grow if none. */
static void dc__grow_tasks(struct deferred_callchain *dc)
{
	unsigned int i, old = 1U << dc->task_bits;
	struct hlist_head *old_table = dc->task_table;
	struct hlist_node *tmp;
	struct dc_task *task;

	dc->task_table = calloc(2UL * old, sizeof(*dc->task_table));
	if (!dc->task_table) {
		dc->task_table = old_table;
		return;
	}
	dc->task_bits++;
	for (i = 0; i < old; i++) {
		hlist_for_each_entry_safe(task, tmp, &old_table[i], hash_node)
			hlist_add_head(&task->hash_node, dc__task_bucket(dc, task->key));
	}
	free(old_table);
}

static struct dc_task *dc_task__find(struct deferred_callchain *dc,
				     struct machine *machine, int tid, bool create)
{
	long key = dc_task__key(machine, tid);
	struct dc_task *task = dc->last_task;
	struct hlist_head *head;

	/* A kernel entry's samples and its record mostly come together. */
	if (task && task->key == key)
		return task;
	head = dc__task_bucket(dc, key);
	hlist_for_each_entry(task, head, hash_node) {
		if (task->key == key) {
			dc->last_task = task;
			return task;
		}
	}
	if (!create)
		return NULL;
	if (!hlist_empty(&dc->task_cache)) {
		task = hlist_entry(dc->task_cache.first, struct dc_task, hash_node);
		hlist_del(&task->hash_node);
		memset(task, 0, sizeof(*task));
	} else {
		task = zalloc(sizeof(*task));
		if (!task)
			return NULL;
	}
	INIT_LIST_HEAD(&task->pending);
	INIT_LIST_HEAD(&task->recent_node);
	INIT_LIST_HEAD(&task->exit_node);
	task->key = key;
	if (++dc->nr_tasks > 1U << dc->task_bits) {
		dc__grow_tasks(dc);
		head = dc__task_bucket(dc, key);
	}
	hlist_add_head(&task->hash_node, head);
	dc->last_task = task;
	return task;
}

static void dc_task__drop_records(struct deferred_callchain *dc, struct dc_task *task)
{
	list_del_init(&task->recent_node);
	while (task->nr_recs)
		dc_record__put(dc, task->recs[--task->nr_recs]);
}

/*
 * The window is over for @task's records: the older ones go, the latest
 * stays for samples of its own kernel entry until evidence ends it (a later
 * entry's sample or record, the task's exit, the end of input), however late
 * such a sample comes: on a loaded machine a task sat 274 ms in its
 * return-to-user path, sampled, after its record.  One record per task.
 */
static void dc_task__expire_records(struct deferred_callchain *dc, struct dc_task *task)
{
	struct dc_record *keep = NULL;
	int i;

	list_del_init(&task->recent_node);
	for (i = 0; i < task->nr_recs; i++) {
		if (!task->superseded && task->have_last &&
		    task->recs[i]->cookie == task->last_cookie)
			keep = dc_record__get(task->recs[i]);
	}
	while (task->nr_recs)
		dc_record__put(dc, task->recs[--task->nr_recs]);
	if (keep)
		task->recs[task->nr_recs++] = keep;
}

static struct dc_record *dc_task__find_record(struct dc_task *task, u64 cookie)
{
	int i;

	for (i = 0; i < task->nr_recs; i++) {
		if (task->recs[i]->cookie == cookie)
			return task->recs[i];
	}
	return NULL;
}

/* Keep @rec for samples that come after it; the task is now the newest. */
static void dc_task__keep_record(struct deferred_callchain *dc, struct dc_task *task,
				 struct dc_record *rec)
{
	int i = task->nr_recs;

	if (i == DC_TASK_RECORDS)
		dc_record__put(dc, task->recs[--i]);
	for (; i > 0; i--)
		task->recs[i] = task->recs[i - 1];
	task->recs[0] = dc_record__get(rec);
	task->nr_recs = min(task->nr_recs + 1, DC_TASK_RECORDS);
	list_move_tail(&task->recent_node, &dc->recent);
}

static int dc__chain_reserve(struct deferred_callchain *dc, size_t nr)
{
	u64 *chain;

	if (nr + 1 <= dc->chain_alloc)
		return 0;
	chain = realloc(dc->chain, (nr + 1) * sizeof(u64));
	if (!chain)
		return -ENOMEM;
	dc->chain = chain;
	dc->chain_alloc = nr + 1;
	return 0;
}

/*
 * Build the callchain @sample leaves with: its own entries up to the
 * PERF_CONTEXT_USER_DEFERRED marker, then the user frames: @ips (its
 * record's) when DC_STITCHED, else the caller's walk of the snapshot
 * (dc->walk) or a bare marker.
 */
static int dc__build_chain(struct deferred_callchain *dc, enum dc_state state,
			   const u64 *ips, u64 nr, struct machine *machine,
			   struct perf_sample *sample)
{
	u64 nr_kernel = sample->callchain->nr - 2;
	size_t pos = nr_kernel;
	int n = 0;

	if (dc__chain_reserve(dc, nr_kernel + 1 + nr))
		return -ENOMEM;
	memcpy(dc->chain + 1, sample->callchain->ips, nr_kernel * sizeof(u64));

	if (state == DC_STITCHED) {
		if (nr) {
			dc->chain[1 + pos++] = PERF_CONTEXT_USER;
			memcpy(dc->chain + 1 + pos, ips, nr * sizeof(u64));
			pos += nr;
		}
	} else {
		enum deferred_callchain_walk how = DEFERRED_CALLCHAIN_WALK_FP;

		/* The walk writes after the PERF_CONTEXT_USER it gets. */
		if (dc->walk && !dc__chain_reserve(dc, pos + 2 + DC_MAX_USER_FRAMES))
			n = dc->walk(machine, sample, dc->chain + 2 + pos, DC_MAX_USER_FRAMES,
				     &how);
		if (n > 0) {
			if (how == DEFERRED_CALLCHAIN_WALK_STYLE)
				dc->stats.fallback_style++;
			else if (how == DEFERRED_CALLCHAIN_WALK_SFRAME)
				dc->stats.fallback_sframe++;
			else
				dc->stats.fallback_fp++;
			dc->chain[1 + pos++] = PERF_CONTEXT_USER;
			pos += n;
		} else {
			/* A bare marker: shown as "[user stack lost]". */
			dc->stats.lost++;
			dc->chain[1 + pos++] = PERF_CONTEXT_USER_DEFERRED;
		}
	}
	dc->chain[0] = pos;
	sample->callchain = (struct ip_callchain *)dc->chain;
	sample->merged_callchain = true;
	sample->deferred_callchain = false;
	return 0;
}

/*
 * Hand @sample, parsed from @event, to ops->sample with its callchain
 * complete: @ips are its user frames when DC_STITCHED.
 */
static int dc__deliver(struct deferred_callchain *dc, union perf_event *event,
		       struct perf_sample *sample, struct machine *machine,
		       enum dc_state state, const u64 *ips, u64 nr)
{
	int ret;

	if (!sample->evsel)
		sample->evsel = evlist__id2evsel(dc->evlist, sample->id);
	if (state != DC_READY) {
		ret = dc__build_chain(dc, state, ips, nr, machine, sample);
		if (ret)
			return ret;
	}
	return dc->ops.sample(dc, event, sample, machine, dc->data);
}

/* Without ops->parse: as perf top parses, by the evlist. */
static int dc__parse(struct deferred_callchain *dc, union perf_event *event, u64 file_offset,
		     struct perf_sample *sample)
{
	int ret;

	if (dc->ops.parse)
		return dc->ops.parse(dc, event, file_offset, sample, dc->data);
	ret = evlist__parse_sample(dc->evlist, event, sample);
	sample->file_offset = file_offset;
	return ret;
}

/*
 * A held event goes out parsed again, as ordered_events delivers its
 * events: an entry keeps the event's bytes only.  Keeping the caller's
 * struct perf_sample too (336 bytes) nearly doubled it, and with 3,000
 * tasks the held entries pushed the tool's callchain tree out of the
 * cache: a second parse costs less than those misses (bench/deferred).
 */
static int dc_entry__deliver(struct deferred_callchain *dc, struct dc_entry *e)
{
	struct perf_sample sample;
	int ret;

	perf_sample__init(&sample, /*all=*/false);
	ret = dc__parse(dc, e->event, e->file_offset, &sample);
	if (ret) {
		/* It parsed when it came: the caller's parse changed. */
		pr_warning("WARNING: at offset %#" PRIx64 ": %s held for deferred callchains does not parse again (%d): dropped\n",
			   e->file_offset, perf_event__name(e->event->header.type), ret);
		dc->stats.unparsed++;
		ret = 0;
	} else if (e->state == DC_EVENT) {
		ret = dc->ops.event(dc, e->event, &sample, e->machine, dc->data);
	} else {
		ret = dc__deliver(dc, e->event, &sample, e->machine, e->state,
				  e->rec ? e->rec->ips : NULL, e->rec ? e->rec->nr : 0);
	}
	perf_sample__exit(&sample);
	return ret;
}

/* A free entry: a cached one, else the next of the newest block. */
static struct dc_entry *dc__alloc_entry(struct deferred_callchain *dc)
{
	struct dc_block *block;
	struct dc_entry *e;

	if (!list_empty(&dc->entry_cache)) {
		e = list_first_entry(&dc->entry_cache, struct dc_entry, queue_node);
		list_del(&e->queue_node);
		return e;
	}
	if (!dc->block_left) {
		block = malloc(DC_BLOCK_SIZE);
		if (!block)
			return NULL;
		list_add(&block->node, &dc->blocks);
		dc->block_left = DC_BLOCK_ENTRIES;
	}
	block = list_first_entry(&dc->blocks, struct dc_block, node);
	return &block->entries[DC_BLOCK_ENTRIES - dc->block_left--];
}

/* What @e holds goes; @e itself stays in its block. */
static void dc_entry__exit(struct deferred_callchain *dc, struct dc_entry *e)
{
	dc->held_bytes -= e->size;
	list_del(&e->wait_node);
	dc_record__put(dc, e->rec);
	if (e->event != (union perf_event *)e->inline_event)
		free(e->event);
}

/* @e is out of every list but its wait_node's: back to the cache. */
static void dc_entry__free(struct deferred_callchain *dc, struct dc_entry *e)
{
	dc_entry__exit(dc, e);
	list_add(&e->queue_node, &dc->entry_cache);
}

/*
 * A waiting sample the budget pushed out of the queue goes out after
 * events that came after it.  Its task's EXIT must not be one of them:
 * the tool drops an exited task's thread (machine__process_exit_event()),
 * and the sample would resolve against a new one, without comm or maps.
 * So while any such sample waits, EXITs are held, in order, and follow
 * the queue once the last one is out.  An execve's samples out of the
 * queue (dc__task_exec()) do not count: they go out after the COMM, in
 * the maps the exec brings, and the EXIT before them is the old leader's
 * (de_thread()).  Keeping every exited thread for the whole session
 * instead (symbol_conf.keep_exited_threads) made perf script 7% slower
 * with 50,000 short-lived tasks.
 */
static bool dc__hold_exit(struct deferred_callchain *dc, struct dc_entry *e)
{
	if (!dc->nr_late || e->state != DC_EVENT || e->event->header.type != PERF_RECORD_EXIT)
		return false;
	list_add_tail(&e->queue_node, &dc->exits_held);
	return true;
}

/* No sample is late now: the held EXITs go out behind what is queued. */
static void dc__release_exits(struct deferred_callchain *dc)
{
	struct dc_entry *e, *tmp;

	list_for_each_entry_safe(e, tmp, &dc->exits_held, queue_node) {
		/* The queue stays in time order: see dc__task_mmap(). */
		e->time = max(e->time, dc->now);
		list_move_tail(&e->queue_node, &dc->queue);
		dc->nr_queued++;
	}
}

/*
 * A FORK or COMM of @tid while the EXIT of the task that had it is held:
 * a new task has the tid (a FORK reusing it, or de_thread() giving it to
 * the thread that exec'd), so the EXIT goes first, else the tool would
 * drop the new task's thread.  Held EXITs are older than all that is
 * queued (they were at its head, or it was empty), so this keeps order.
 */
static int dc__release_exit_of(struct deferred_callchain *dc, struct machine *machine, int tid)
{
	struct dc_entry *e, *tmp;
	int ret = 0;

	list_for_each_entry_safe(e, tmp, &dc->exits_held, queue_node) {
		if (e->machine != machine || (int)e->event->fork.tid != tid)
			continue;
		list_del_init(&e->queue_node);
		ret = dc_entry__deliver(dc, e);
		dc_entry__free(dc, e);
		if (ret)
			break;
	}
	return ret;
}

/*
 * The fate of a waiting sample is known: stitched with @rec, or no record.
 * A sample still in the queue is delivered when it reaches the head; one the
 * window already pushed out is delivered now, out of order.
 */
static int dc__resolve(struct deferred_callchain *dc, struct dc_entry *e,
		       struct dc_record *rec)
{
	bool late = list_empty(&e->queue_node);
	int ret = 0;

	list_del_init(&e->task_node);
	list_del_init(&e->wait_node);
	dc->nr_waiting--;
	dc->waiting_bytes -= e->size;
	if (rec) {
		e->rec = dc_record__get(rec);
		rec->used = true;
		e->state = DC_STITCHED;
	} else {
		e->state = DC_NO_RECORD;
		if (e->exited)
			dc->stats.exited++;
	}
	if (late && (e->at_exec || e->maps_ahead)) {
		/*
		 * The samples of an execve resolve in the maps the exec
		 * brings (their record is the new program's _start): those
		 * MMAPs came before this record, but may still be held
		 * behind another waiting sample.  Back in the queue at the
		 * record's place: out after them.  One the budget pushed out
		 * (dc__drain()) no longer holds an EXIT back.
		 */
		dc->stats.exec_late++;
		list_add_tail(&e->queue_node, &dc->queue);
		dc->nr_queued++;
		if (!e->at_exec && !--dc->nr_late)
			dc__release_exits(dc);
	} else if (late) {
		dc->stats.delivered_late++;
		ret = dc_entry__deliver(dc, e);
		dc_entry__free(dc, e);
		/* After it: it came before any EXIT held for it. */
		if (!--dc->nr_late)
			dc__release_exits(dc);
	}
	return ret;
}

static void dc_task__free(struct deferred_callchain *dc, struct dc_task *task)
{
	if (dc->last_task == task)
		dc->last_task = NULL;
	hlist_del(&task->hash_node);
	dc->nr_tasks--;
	list_del(&task->exit_node);
	dc_task__drop_records(dc, task);
	hlist_add_head(&task->hash_node, &dc->task_cache);
}

/*
 * The window after @task's EXIT is over: its samples taken before the EXIT
 * get no record now; they fall back.  Samples taken after it belong to a new
 * task with the same tid that no FORK announced: a non-leader thread that
 * exec'd and took its leader's tid in de_thread() (see dc__task_exec()).
 * They wait on; the task stays, alive.  Without any, @task goes.
 */
static int dc_task__settle(struct deferred_callchain *dc, struct dc_task *task)
{
	struct dc_entry *e, *tmp;
	int ret = 0;

	list_for_each_entry_safe(e, tmp, &task->pending, task_node) {
		if (!e->exited)
			continue;
		ret = dc__resolve(dc, e, NULL);
		if (ret)
			return ret;
	}
	/* Alive again: samples, or a record for later ones, after the EXIT. */
	if (!list_empty(&task->pending) ||
	    (task->have_last && task->last_time > task->exit_time)) {
		task->exited = false;
		list_del_init(&task->exit_node);
		return 0;
	}
	dc_task__free(dc, task);
	return 0;
}

/*
 * Must the waiting sample @e at the head of the queue stop holding the
 * samples behind it?  Its record comes when its task returns to user space
 * (kernel/unwind/deferred.c: the unwind runs as task work on the way out),
 * which for a task switched out in a blocking call is when it runs again:
 * seconds later for a blocked read.  So, in time order, it holds them until
 * its fate is known (its record, a later record of its task, its task's
 * exit, the end of input), not for a time; only the budget bounds that:
 * the bytes of everything held (call-graph.defer-memory) and the number of
 * samples queued (call-graph.defer-queue).  Then it leaves the queue, to be
 * delivered out of order once its fate is known, counted and warned about.
 * A live tool (perf top) shows samples while they matter: for it, and
 * without time order (where nothing is evidence), a sample holds the others
 * for the window at most.
 */
static bool dc__queue_over(struct deferred_callchain *dc, struct dc_entry *e)
{
	if (dc->nr_queued > dc->config.max_queue) {
		dc->late_why |= DC_LATE_QUEUE;
		return true;
	}
	/* Over budget, and samples wait behind it that delivery would free. */
	if (dc->held_bytes > dc->config.max_pending_bytes && dc->held_bytes > dc->waiting_bytes) {
		dc->late_why |= DC_LATE_MEMORY;
		return true;
	}
	if ((dc->config.live || !dc->config.ordered) &&
	    dc->now - e->time > dc->config.window_ns) {
		dc->late_why |= DC_LATE_WINDOW;
		return true;
	}
	return false;
}

static int dc__drain(struct deferred_callchain *dc, enum dc_flush why)
{
	const bool all = why == DC_FLUSH__FINAL;
	const u64 window = dc->config.window_ns;
	int ret = 0;

	/* The window after a task's EXIT is over: no record of it comes now. */
	while (!list_empty(&dc->exits)) {
		struct dc_task *task = list_first_entry(&dc->exits, struct dc_task, exit_node);

		if (!all && dc->now - task->exit_time <= window)
			break;
		ret = dc_task__settle(dc, task);
		if (ret)
			return ret;
	}

	while (!list_empty(&dc->recent)) {
		struct dc_task *task = list_first_entry(&dc->recent, struct dc_task, recent_node);

		if (!all && dc->now - task->recs[0]->time <= window)
			break;
		if (all)
			dc_task__drop_records(dc, task);
		else
			dc_task__expire_records(dc, task);
	}

	while (!list_empty(&dc->queue)) {
		struct dc_entry *e = list_first_entry(&dc->queue, struct dc_entry, queue_node);

		if (e->state == DC_WAITING) {
			if (!all && !dc__queue_over(dc, e))
				break;
			/* Out of the queue, still waiting on its task. */
			list_del_init(&e->queue_node);
			dc->nr_queued--;
			dc->nr_late++;
			continue;
		}
		list_del_init(&e->queue_node);
		dc->nr_queued--;
		if (dc__hold_exit(dc, e))
			continue;
		ret = dc_entry__deliver(dc, e);
		dc_entry__free(dc, e);
		if (ret)
			break;
	}
	return ret;
}

/*
 * The stitcher's clock ("now", which the window is measured against) is the
 * latest event time.  The invariant it relies on: ordered_events delivers in
 * time order, so a real time T is followed by times >= T (less the few
 * events it delivers late, which are behind the clock by at most its flush
 * interval, far less than DC_CLOCK_JUMP windows).  A time more than
 * DC_CLOCK_JUMP windows ahead of the clock followed by one near the clock
 * again breaks that: it was damage (a flipped bit, 2^62), counted, and
 * counts as the clock's own; had the clock taken it, every waiting sample
 * would leave the queue at once and every older record expire.  When the
 * next event agrees with it, the stream did jump (an idle gap, a pause) and
 * the clock follows.  Returns the time to use for the event.
 */
#define DC_CLOCK_JUMP	8

static u64 dc__advance(struct deferred_callchain *dc, u64 time)
{
	u64 window = dc->config.window_ns;
	u64 jump = window > ULLONG_MAX / DC_CLOCK_JUMP ? ULLONG_MAX : window * DC_CLOCK_JUMP;

	if (time == (u64)-1)
		return time;
	if (!dc->have_now || time <= dc->now || time - dc->now <= jump) {
		if (dc->have_jump) {
			dc->stats.bad_times++;
			dc->have_jump = false;
		}
		if (time > dc->now)
			dc->now = time;
		dc->have_now = true;
		return time;
	}
	if (dc->have_jump &&
	    (time > dc->jump_time ? time - dc->jump_time : dc->jump_time - time) <= jump) {
		/* Two in a row far ahead, and close together: believe them. */
		dc->now = max(time, dc->jump_time);
		dc->have_jump = false;
		return time;
	}
	dc->jump_time = time;
	dc->have_jump = true;
	return dc->now;
}

/*
 * Deliver the queue up to and including @last; samples still waiting ahead
 * of it are taken out, to be delivered late once their fate is known.
 */
static int dc__deliver_through(struct deferred_callchain *dc, struct dc_entry *last)
{
	bool done = false;
	int ret = 0;

	while (!done && !ret && !list_empty(&dc->queue)) {
		struct dc_entry *e = list_first_entry(&dc->queue, struct dc_entry, queue_node);

		done = e == last;
		list_del_init(&e->queue_node);
		dc->nr_queued--;
		if (e->state == DC_WAITING) {
			dc->late_why |= DC_LATE_FORK;
			dc->nr_late++;
			continue;
		}
		if (dc__hold_exit(dc, e))
			continue;
		ret = dc_entry__deliver(dc, e);
		dc_entry__free(dc, e);
	}
	return ret;
}

/*
 * A PERF_RECORD_EXIT.  It does not prove that the task's waiting samples
 * get no record: kernel/exit.c do_exit() calls perf_event_exit_task(),
 * which writes the EXIT, before unwind_deferred_task_exit(), which writes
 * the record of the last kernel entry (on 7.2 with -a it came ~50 us AFTER
 * the EXIT).  So in time order they wait on, for the window after the
 * EXIT (dc__drain()), and the EXIT waits behind them in the queue, or,
 * for a sample already out of it, until that one is out (dc__hold_exit()):
 * the tool's thread goes only after them.  While anything is held, or a
 * record of the task is kept, the task is kept for that window, so that a
 * FORK reusing its tid finds what is left of it.
 * Without time order the EXIT proves nothing; the samples wait as any do.
 */
static int dc__task_exit(struct deferred_callchain *dc, struct machine *machine, int tid,
			 u64 time)
{
	bool held = !list_empty(&dc->queue) || !list_empty(&dc->waiting);
	struct dc_task *task;
	struct dc_entry *e;

	/* tid -1: the kernel could not name the task (perf_event_tid()). */
	if (tid == -1)
		return 0;
	task = dc_task__find(dc, machine, tid, /*create=*/held && dc->config.ordered);
	if (!task)
		return held && dc->config.ordered ? -ENOMEM : 0;
	/*
	 * Only the samples held now are the exiting task's: with time order,
	 * a later one of this tid is a new task's (de_thread(), or a FORK
	 * reusing the tid).  An EXIT again (the new task's) marks its own.
	 */
	list_for_each_entry(e, &task->pending, task_node)
		e->exited = true;
	if (!dc->config.ordered)
		return 0;
	/*
	 * Nothing held and no record kept: nothing to wait for or to know
	 * the task by.  With a record kept, the task stays for the window
	 * too: a copy of that record written after a FINISHED_ROUND (seen on
	 * 7.2) is then known as a duplicate, not taken for a new task's.
	 */
	if (!held && !task->nr_recs && !task->have_last) {
		dc_task__free(dc, task);
		return 0;
	}
	task->exited = true;
	task->exit_time = time != (u64)-1 ? time : dc->now;
	list_move_tail(&task->exit_node, &dc->exits);
	return 0;
}

/* Move waiting sample @e to @task's list, which is in time order. */
static void dc_task__adopt(struct dc_task *task, struct dc_entry *e)
{
	struct dc_entry *pos;

	list_del(&e->task_node);
	list_for_each_entry_reverse(pos, &task->pending, task_node) {
		if (pos->time <= e->time) {
			list_add(&e->task_node, &pos->task_node);
			return;
		}
	}
	list_add(&e->task_node, &task->pending);
}

/*
 * The oldest sample of @leader's execve still in the queue, at the COMM exec
 * of process @pid, if the exec's COMM and MMAPs can go ahead of it: only
 * events of process @pid itself resolve against its comm and maps, so they
 * may pass anything but those.  Not past another thread of @pid, or the
 * old leader's EXIT (de_thread()): an EXIT after the COMM would drop the
 * new program's thread (machine__process_exit_event()).  Nor when the tool
 * does not take events back (ops->event): then the COMM is not held.
 */
static struct dc_entry *dc__exec_ahead(struct deferred_callchain *dc, struct machine *machine,
				       struct dc_task *leader, int pid)
{
	struct dc_entry *first = NULL, *e;

	if (!dc->ops.event)
		return NULL;
	list_for_each_entry(e, &leader->pending, task_node) {
		if (e->exited)
			continue;
		/* Moved from another thread's tid: de_thread(). */
		if (e->tid != pid)
			return NULL;
		if (!first && !list_empty(&e->queue_node))
			first = e;
	}
	if (!first)
		return NULL;
	e = first;
	list_for_each_entry_from(e, &dc->queue, queue_node) {
		if (e->machine != machine || e->pid != pid)
			continue;
		if (e->state != DC_WAITING || e->tid != pid || e->cookie != first->cookie)
			return NULL;
	}
	return first;
}

/*
 * A PERF_RECORD_COMM with PERF_RECORD_MISC_COMM_EXEC of (@pid, @tid).  An
 * exec by a thread other than the leader, fs/exec.c de_thread(): it waits
 * until every other thread, the leader included, has exited (do_exit()
 * writes their EXITs before exit_notify() lets it go on), then
 * exchange_tids() gives the exec'ing thread the leader's tid, and
 * begin_new_exec() writes the COMM exec with that tid (__set_task_comm(),
 * perf_event_comm()); there is no FORK.  Its kernel entry (the execve) goes
 * on: its samples before exchange_tids() carry its old tid, those after it
 * the leader's, all with one cookie (it is the task_struct's unwind_info,
 * kernel/unwind/deferred.c), and the record comes on the way out to the new
 * program (one frame, its _start) with the leader's tid.  So at the COMM
 * exec of (P, P) the samples still waiting on another thread of process P,
 * taken while it was alive, move to task P: after de_thread() only the
 * exec'ing thread is alive, and cookies are unique per kernel entry
 * (get_cookie()), so matching by cookie stays exact.  Samples of the
 * threads that exited stay with them, for the window after their EXIT.
 */
static int dc__task_exec(struct deferred_callchain *dc, struct machine *machine, int pid,
			 int tid, struct dc_entry **ahead)
{
	long key = dc_task__key(machine, tid);
	struct dc_task *leader, *task;
	struct hlist_node *tmp;
	struct dc_entry *e, *n;
	unsigned int bkt;

	*ahead = NULL;
	if (pid != tid || pid == -1)
		return 0;
	/* Found or made before the walk: adding a task may resize the table. */
	leader = dc_task__find(dc, machine, tid, /*create=*/true);
	if (!leader)
		return -ENOMEM;
	leader->pid = pid;
	/* Still in the execve: see dc__task_mmap(). */
	leader->in_exec = true;
	leader->exec_with_record = false;
	leader->exec_cookie = 0;
	if (!dc->nr_waiting)
		return 0;
	dc__for_each_task_safe(dc, bkt, tmp, task) {
		if (task == leader || task->pid != pid ||
		    (u64)task->key >> 32 != (u64)key >> 32)
			continue;
		list_for_each_entry_safe(e, n, &task->pending, task_node) {
			if (e->exited)
				continue;
			dc_task__adopt(leader, e);
			dc->stats.exec_moved++;
		}
		/* Its tid went to the old leader, released in de_thread(). */
		if (list_empty(&task->pending) && !task->exited)
			dc_task__free(dc, task);
	}
	/*
	 * The samples of the execve itself: their record is the new
	 * program's (its _start, unwound on the way out of the execve), whose
	 * addresses resolve only in the maps the exec brings, after this
	 * COMM.  When nothing else of process @pid lies between the first
	 * of them and this COMM (dc__exec_ahead()), they keep their place in
	 * time order and the COMM, then the exec's MMAPs, go ahead of them
	 * (@ahead, dc__task_mmap()), as when none came before the COMM: a
	 * tool that needs the order (perf sched timehist) gets it.  Else
	 * (de_thread(): the old leader's EXIT is in between, and must stay
	 * before the COMM that gives its tid to the new program) they leave
	 * the queue and go back in at their record's place (dc__resolve()),
	 * after the exec's MMAPs, with the new comm ("delivered with exec"):
	 * the rest keeps its order and the comm and maps of its time.  So do
	 * the execve's samples that come later, until its record
	 * (dc__queue()), so that they keep their order among themselves.
	 */
	*ahead = dc__exec_ahead(dc, machine, leader, pid);
	list_for_each_entry(e, &leader->pending, task_node) {
		if (e->exited)
			continue;
		leader->exec_cookie = e->cookie;
		if (*ahead) {
			e->maps_ahead = true;
			continue;
		}
		leader->exec_with_record = true;
		if (list_empty(&e->queue_node))
			continue;
		list_del_init(&e->queue_node);
		dc->nr_queued--;
		e->at_exec = true;
	}
	return 0;
}

/* The bytes of @event from @p, a field of it, to its end. */
static size_t dc__event_bytes_from(const union perf_event *event, const char *p)
{
	size_t off = p - (const char *)event;

	return event->header.size > off ? event->header.size - off : 0;
}

/*
 * A PERF_RECORD_MMAP or MMAP2 of @tid, of @name (@len bytes at most): the
 * sample it must go ahead of in the queue, if any.  The COMM exec and the
 * exec's MMAPs are all written inside the execve: begin_new_exec() drops
 * the old mm (exec_mmap()) and sets the comm (perf_event_comm()), then
 * load_elf_binary() maps the program, its interpreter and, last, the vdso
 * (ARCH_SETUP_ADDITIONAL_PAGES(): _install_special_mapping() calls
 * perf_event_mmap() too); the task's own mmaps come once it is back in
 * user space.  So a kernel sample of the task between its COMM exec and
 * its [vdso] MMAP is of the execve, whatever its cookie, and so are the
 * later ones with its cookie.  Their record is the new program's _start,
 * in maps that do not exist at their time (the task has no other): the
 * exec's MMAPs go ahead of them in the queue, and they keep their place
 * in time order.  Past the [vdso] MMAP with no such sample, the execve's
 * cookie cannot be told from a later entry's: the task is out of it.
 */
static struct dc_entry *dc__task_mmap(struct deferred_callchain *dc, struct machine *machine,
				      int tid, const char *name, size_t len)
{
	struct dc_task *task;
	struct dc_entry *e;

	if (tid == -1)
		return NULL;
	task = dc_task__find(dc, machine, tid, /*create=*/false);
	if (!task || !task->in_exec)
		return NULL;
	if (!task->exec_cookie) {
		if (len >= sizeof(VDSO__MAP_NAME) &&
		    !memcmp(name, VDSO__MAP_NAME, sizeof(VDSO__MAP_NAME)))
			task->in_exec = false;
		return NULL;
	}
	/* Oldest first: pending is in time order. */
	list_for_each_entry(e, &task->pending, task_node) {
		if (e->maps_ahead && !list_empty(&e->queue_node))
			return e;
	}
	return NULL;
}

/*
 * A PERF_RECORD_FORK: the tool is about to give its tid a new thread, so
 * what is left here of an earlier task with that tid goes out first: its
 * waiting samples with what they have, and the queue up to its last
 * sample.  The queue is searched whether or not the task is still known:
 * its samples may sit behind another task's waiting one however long ago
 * it exited (one damaged time is enough).  FORKs are rare next to samples.
 */
static int dc__task_fork(struct deferred_callchain *dc, struct machine *machine, int tid)
{
	struct dc_task *task = dc_task__find(dc, machine, tid, /*create=*/false);
	struct dc_entry *e, *last = NULL;
	int ret;

	if (task && task->exited) {
		ret = dc_task__settle(dc, task);
		if (ret)
			return ret;
	}
	/* Events held in order (ops->event): the FORK waits behind them. */
	if (dc->ops.event)
		return 0;
	list_for_each_entry_reverse(e, &dc->queue, queue_node) {
		if (e->tid == tid && e->machine == machine) {
			last = e;
			break;
		}
	}
	return last ? dc__deliver_through(dc, last) : 0;
}

/*
 * A SAMPLE whose fate is known when it comes (nothing deferred, or its
 * record came first) and that nothing waits ahead of: delivered at once,
 * from the caller's parsed sample: no copy, no second parse.  The caller's
 * @sample is left as it was.
 */
static int dc__deliver_now(struct deferred_callchain *dc, union perf_event *event,
			   struct perf_sample *sample, struct machine *machine,
			   enum dc_state state, const u64 *ips, u64 nr)
{
	struct ip_callchain *callchain = sample->callchain;
	bool deferred = sample->deferred_callchain;
	int ret;

	ret = dc__deliver(dc, event, sample, machine, state, ips, nr);
	sample->callchain = callchain;
	sample->merged_callchain = false;
	sample->deferred_callchain = deferred;
	return ret ?: dc__drain(dc, DC_FLUSH__SETTLED);
}

/* The process @event is of: a sample's, or the one the event itself names. */
static int dc__event_pid(const union perf_event *event, const struct perf_sample *sample)
{
	switch (event->header.type) {
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		return event->fork.pid;
	case PERF_RECORD_COMM:
		return event->comm.pid;
	case PERF_RECORD_MMAP:
		return event->mmap.pid;
	case PERF_RECORD_MMAP2:
		return event->mmap2.pid;
	default:
		return sample->pid;
	}
}

/* A copy of @event at the tail of the reorder queue: parsed again to go out. */
static struct dc_entry *dc_entry__new(struct deferred_callchain *dc, union perf_event *event,
				      struct perf_sample *sample, struct machine *machine,
				      u64 time, enum dc_state state)
{
	struct dc_entry *e = dc__alloc_entry(dc);
	u32 size = sizeof(*e);

	if (!e)
		return NULL;
	memset(e, 0, offsetof(struct dc_entry, file_offset));
	e->event = (union perf_event *)e->inline_event;
	if (event->header.size > sizeof(e->inline_event)) {
		e->event = malloc(event->header.size);
		if (!e->event) {
			list_add(&e->queue_node, &dc->entry_cache);
			return NULL;
		}
		size += event->header.size;
	}
	memcpy(e->event, event, event->header.size);
	/* Parsing swapped parts of a cross-endian sample in place: undone. */
	if (event->header.type == PERF_RECORD_SAMPLE && sample->evsel && sample->evsel->needs_swap)
		evsel__unswap_sample(sample, event, e->event);
	e->file_offset = sample->file_offset;
	INIT_LIST_HEAD(&e->wait_node);
	INIT_LIST_HEAD(&e->task_node);
	e->machine = machine;
	e->size = size;
	e->time = time;
	e->pid = dc__event_pid(event, sample);
	e->tid = sample->tid;
	e->cookie = sample->deferred_cookie;
	e->state = state;
	dc->held_bytes += e->size;
	if (dc->held_bytes > dc->stats.max_held_bytes)
		dc->stats.max_held_bytes = dc->held_bytes;
	list_add_tail(&e->queue_node, &dc->queue);
	if (++dc->nr_queued > dc->stats.max_queued)
		dc->stats.max_queued = dc->nr_queued;
	return e;
}

/*
 * Any other event (COMM, MMAP, FORK, EXIT, ...) while samples are held: it
 * waits behind them, when the tool takes events back (ops->event), so that
 * they resolve against the comm, maps and threads of their own time: a
 * sample held while its task execs keeps its old comm and maps, a reused
 * tid's FORK comes after the old task's samples.  An exec's COMM and MMAPs
 * go ahead of the execve's samples that keep their place (@ahead,
 * dc__task_exec(), dc__task_mmap()), taking their time so that the queue
 * stays in time order.
 */
static int dc__hold_event(struct deferred_callchain *dc, union perf_event *event,
			  struct perf_sample *sample, struct machine *machine, u64 ts,
			  struct dc_entry *ahead)
{
	struct dc_entry *e;

	if (!dc->ops.event)
		return DEFERRED_CALLCHAIN__PASS;
	/* Nothing queued: it goes on, but an EXIT behind a late sample. */
	if (list_empty(&dc->queue) &&
	    !(dc->nr_late && event->header.type == PERF_RECORD_EXIT))
		return DEFERRED_CALLCHAIN__PASS;
	e = dc_entry__new(dc, event, sample, machine, ts != (u64)-1 ? ts : dc->now, DC_EVENT);
	if (!e)
		return -ENOMEM;
	/* Unless the budget pushed it out of the queue meanwhile. */
	if (ahead && !list_empty(&ahead->queue_node)) {
		list_move_tail(&e->queue_node, &ahead->queue_node);
		e->time = ahead->time;
		dc->stats.exec_maps_ahead++;
	}
	return dc__drain(dc, DC_FLUSH__SETTLED);
}

/*
 * A deferred sample of a file whose records are known ahead
 * (deferred_callchain__ahead()): its fate now.  DC_STITCHED with *@known
 * when its task's record of the entry is known; DC_NO_RECORD when every
 * record of the input is known and none is its; DC_WAITING, the streaming
 * rules decide, for an execve's record (which must go out after the exec's
 * COMM and MMAPs) or when not every record is known.
 */
static enum dc_state dc__known(struct deferred_callchain *dc, struct perf_sample *sample,
			       struct machine *machine, struct deferred_record **known)
{
	struct deferred_record *r;

	r = deferred_index__find(dc->known, dc_task__key(machine, sample->tid),
				 sample->deferred_cookie);
	if (!r && sample->tid != sample->pid) {
		/*
		 * A non-leader thread's execve: de_thread() gave it the
		 * leader's tid before it returned to user space.
		 */
		r = deferred_index__find(dc->known, dc_task__key(machine, sample->pid),
					 sample->deferred_cookie);
		if (r && !r->exec)
			r = NULL;
	}
	if (r && r->exec)
		return DC_WAITING;
	if (r) {
		*known = r;
		r->used = true;
		/*
		 * Late when its record goes out before it: ordered_events
		 * delivers by time, then in file order; unordered, in file
		 * order.  Not when the record had its turn: the reader may
		 * have dropped it on the way in (deferred_callchain__known_at()).
		 */
		if (dc->config.ordered ? r->time < sample->time ||
					 (r->time == sample->time &&
					  r->file_offset < sample->file_offset) :
		    r->file_offset < sample->file_offset)
			dc->stats.stitched_late++;
		else
			dc->stats.stitched++;
		return DC_STITCHED;
	}
	if (!dc->known_whole)
		return DC_WAITING;
	if (deferred_index__exited(dc->known, dc_task__key(machine, sample->tid), sample->time))
		dc->stats.exited++;
	return DC_NO_RECORD;
}

/* A known record, for a sample held in the queue: as dc__record() makes them. */
static struct dc_record *dc__record_of(struct deferred_callchain *dc,
				       const struct deferred_record *known)
{
	struct dc_record *rec = dc__alloc_record(dc, known->nr);

	if (!rec)
		return NULL;
	rec->refcnt = 1;
	rec->used = true;
	rec->cookie = known->cookie;
	rec->time = known->time;
	rec->nr = known->nr;
	/* A record of no frames has no copy. */
	if (known->nr)
		memcpy(rec->ips, known->ips, known->nr * sizeof(u64));
	return rec;
}

/* A SAMPLE: delivered now, or into the reorder queue. */
static int dc__queue(struct deferred_callchain *dc, union perf_event *event,
		     struct perf_sample *sample, struct machine *machine)
{
	struct deferred_record *known = NULL;
	enum dc_state state = DC_READY;
	struct dc_record *rec = NULL;
	struct dc_task *task = NULL;
	struct dc_entry *e;
	int ret = 0;
	u64 ts, time;

	ts = dc__advance(dc, sample->time);
	time = ts != (u64)-1 ? ts : dc->now;
	if (sample->deferred_callchain && sample->callchain && sample->callchain->nr >= 2 &&
	    sample->tid == (u32)-1) {
		/*
		 * A task past release_task(), switched out for the last time
		 * in do_task_dead(): perf_event_tid() gives -1 for a task whose
		 * pid is gone (!pid_alive()), and such a task never returns
		 * to user space for a record.  Settled at once, counted as an
		 * exited task's; no task is keyed on tid -1.
		 */
		dc->stats.samples++;
		dc->stats.exited++;
		state = DC_NO_RECORD;
	} else if (sample->deferred_callchain && sample->callchain &&
		   sample->callchain->nr >= 2) {
		dc->stats.samples++;
		/* Known ahead: no task to follow, nothing to wait for. */
		state = dc->known ? dc__known(dc, sample, machine, &known) : DC_WAITING;
	}
	if (state == DC_WAITING) {
		task = dc_task__find(dc, machine, sample->tid, /*create=*/true);
		if (!task)
			return -ENOMEM;
		task->pid = sample->pid;
		rec = dc_task__find_record(task, sample->deferred_cookie);
		if (rec) {
			/* Taken in the unwind path, after its own record. */
			rec->used = true;
			state = DC_STITCHED;
			dc->stats.stitched_late++;
		} else {
			/*
			 * A kernel entry after the latest record's: that
			 * record's entry is over, its samples all came.
			 */
			if (task->have_last && time > task->last_time) {
				task->superseded = true;
				if (list_empty(&task->recent_node))
					dc_task__drop_records(dc, task);
			}
			state = DC_WAITING;
		}
	}
	if (state != DC_WAITING && list_empty(&dc->queue)) {
		if (known)
			return dc__deliver_now(dc, event, sample, machine, state,
					       known->ips, known->nr);
		return dc__deliver_now(dc, event, sample, machine, state,
				       rec ? rec->ips : NULL, rec ? rec->nr : 0);
	}

	e = dc_entry__new(dc, event, sample, machine, time, state);
	if (!e)
		return -ENOMEM;
	if (rec)
		e->rec = dc_record__get(rec);
	if (known) {
		e->rec = dc__record_of(dc, known);
		if (!e->rec)
			return -ENOMEM;
	}
	if (state == DC_WAITING) {
		/* Delivered late, from before its task's EXIT. */
		e->exited = task->exited && time <= task->exit_time;
		/* In user space, with no sample of the execve seen: it is over. */
		if (task->in_exec && !task->exec_cookie && sample->cpumode == PERF_RECORD_MISC_USER)
			task->in_exec = false;
		if (task->in_exec && (!task->exec_cookie || e->cookie == task->exec_cookie)) {
			task->exec_cookie = e->cookie;
			if (task->exec_with_record) {
				/* Goes out with its record: see dc__task_exec(). */
				list_del_init(&e->queue_node);
				dc->nr_queued--;
				e->at_exec = true;
			} else {
				/* Keeps its place: see dc__task_mmap(). */
				e->maps_ahead = true;
			}
		}
		list_add_tail(&e->task_node, &task->pending);
		list_add_tail(&e->wait_node, &dc->waiting);
		if (++dc->nr_waiting > dc->stats.max_pending)
			dc->stats.max_pending = dc->nr_waiting;
		dc->waiting_bytes += e->size;
		if (dc->waiting_bytes > dc->stats.max_pending_bytes)
			dc->stats.max_pending_bytes = dc->waiting_bytes;
	}
	while (!ret && (dc->nr_waiting > dc->config.max_pending ||
			(dc->waiting_bytes > dc->config.max_pending_bytes && dc->nr_waiting > 1))) {
		struct dc_entry *old = list_first_entry(&dc->waiting, struct dc_entry, wait_node);

		if (!dc->warned_cap && dc->nr_waiting > dc->config.max_pending) {
			pr_warning("WARNING: more than %" PRIu64 " samples wait for deferred callchains: releasing the oldest without user frames (call-graph.defer-max-pending)\n",
				   dc->config.max_pending);
			dc->warned_cap = true;
		} else if (!dc->warned_cap) {
			pr_warning("WARNING: samples waiting for deferred callchains take more than %"
				   PRIu64 " MiB: releasing the oldest without user frames (call-graph.defer-memory)\n",
				   dc->config.max_pending_bytes >> 20);
			dc->warned_cap = true;
		}
		dc->stats.evicted++;
		ret = dc__resolve(dc, old, NULL);
	}
	return ret ?: dc__drain(dc, DC_FLUSH__SETTLED);
}

/* A record known ahead has its turn: counted as dc__record() counts one. */
static void dc__known_seen(struct deferred_callchain *dc, struct deferred_record *known)
{
	known->seen = true;
	dc->stats.records++;
	dc->stats.bad_user_ips += known->bad_ips;
}

static int dc__record(struct deferred_callchain *dc, struct perf_sample *sample,
		      struct machine *machine)
{
	struct dc_entry *e, *tmp;
	struct dc_record *rec;
	struct dc_task *task;
	u64 cookie = sample->deferred_cookie;
	u64 nr = sample->callchain->nr, ts;
	bool stale;
	int ret = 0;

	ts = dc__advance(dc, sample->time);
	if (sample->tid == (u32)-1) {
		/* Without sample_id_all nothing says whose record this is. */
		dc->stats.no_tid++;
		return 0;
	}
	if (dc->known) {
		struct deferred_record *known;

		known = deferred_index__find(dc->known, dc_task__key(machine, sample->tid), cookie);
		if (known && !known->exec) {
			/* Its samples were stitched, or will be, as they come. */
			if (known->seen || known->file_offset != sample->file_offset)
				dc->stats.duplicates++;
			else
				dc__known_seen(dc, known);
			return dc__drain(dc, DC_FLUSH__SETTLED);
		}
	}
	task = dc_task__find(dc, machine, sample->tid, /*create=*/true);
	if (!task)
		return -ENOMEM;
	/*
	 * The kernel emits one record per kernel entry.  The same cookie again
	 * is a duplicate (seen after FINISHED_ROUND on real 7.2 kernels).
	 */
	if (dc_task__find_record(task, cookie) ||
	    (task->have_last && cookie == task->last_cookie)) {
		dc->stats.duplicates++;
		return 0;
	}
	/* Older than the newest record: delivered late, proves nothing. */
	stale = task->have_last && ts < task->last_time;
	dc->stats.records++;

	rec = dc__alloc_record(dc, nr);
	if (!rec)
		return -ENOMEM;
	rec->refcnt = 1;
	rec->used = false;
	rec->cookie = cookie;
	rec->time = ts;
	rec->nr = deferred_index__copy_ips(rec->ips, sample->callchain->ips, nr);
	dc->stats.bad_user_ips += nr - rec->nr;

	list_for_each_entry_safe(e, tmp, &task->pending, task_node) {
		if (e->cookie == cookie) {
			dc->stats.stitched++;
			ret = dc__resolve(dc, e, rec);
		} else if (!stale && dc->config.ordered && e->time <= rec->time) {
			/* A later kernel entry returned: this one never will. */
			ret = dc__resolve(dc, e, NULL);
		}
		if (ret)
			break;
	}

	/* The execve returned to user space, or a later entry did. */
	if (cookie == task->exec_cookie || !stale)
		task->in_exec = false;
	dc_task__keep_record(dc, task, rec);
	if (!stale) {
		task->last_cookie = cookie;
		task->last_time = rec->time;
		task->have_last = true;
		task->superseded = false;
	}
	dc_record__put(dc, rec);
	return ret ?: dc__drain(dc, DC_FLUSH__SETTLED);
}

int deferred_callchain__event(struct deferred_callchain *dc, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine)
{
	struct dc_entry *ahead = NULL;
	int ret = 0;
	u64 ts;

	if (event->header.type == PERF_RECORD_SAMPLE)
		return dc__queue(dc, event, sample, machine);
	if (event->header.type == PERF_RECORD_CALLCHAIN_DEFERRED)
		return dc__record(dc, sample, machine);
	/* The clock moves once per event: see dc__advance(). */
	ts = dc__advance(dc, sample->time);
	switch (event->header.type) {
	case PERF_RECORD_EXIT:
		ret = dc__task_exit(dc, machine, event->fork.tid, ts);
		break;
	case PERF_RECORD_FORK:
		ret = dc__task_fork(dc, machine, event->fork.tid) ?:
		      dc__release_exit_of(dc, machine, event->fork.tid);
		break;
	case PERF_RECORD_MMAP:
		ahead = dc__task_mmap(dc, machine, event->mmap.tid, event->mmap.filename,
				      dc__event_bytes_from(event, event->mmap.filename));
		break;
	case PERF_RECORD_MMAP2:
		ahead = dc__task_mmap(dc, machine, event->mmap2.tid, event->mmap2.filename,
				      dc__event_bytes_from(event, event->mmap2.filename));
		break;
	case PERF_RECORD_COMM:
		ret = dc__release_exit_of(dc, machine, event->comm.tid);
		/* The execve's samples: the COMM goes ahead, or they leave the queue. */
		if (!ret && (event->header.misc & PERF_RECORD_MISC_COMM_EXEC))
			ret = dc__task_exec(dc, machine, event->comm.pid, event->comm.tid,
					    &ahead) ?:
			      dc__drain(dc, DC_FLUSH__SETTLED);
		break;
	default:
		break;
	}
	return ret ?: dc__hold_event(dc, event, sample, machine, ts, ahead);
}

int deferred_callchain__ahead(struct deferred_callchain *dc, union perf_event *event,
			      struct perf_sample *sample, struct machine *machine)
{
	if (!dc->known) {
		dc->known = deferred_index__new();
		if (!dc->known)
			return -ENOMEM;
	}
	/*
	 * What is known ahead counts against the bytes samples may hold
	 * (call-graph.defer-memory): past it, the rest of the input is left
	 * to the streaming rules, which hold only what is in flight.
	 */
	if (deferred_index__bytes(dc->known) > dc->config.max_pending_bytes)
		return -E2BIG;
	switch (event->header.type) {
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		/* Without sample_id_all nothing says whose record this is. */
		if (sample->tid == (u32)-1 || !sample->callchain)
			return -EINVAL;
		return deferred_index__add(dc->known, dc_task__key(machine, sample->tid),
					   sample->deferred_cookie, sample->time,
					   sample->file_offset, sample->callchain->ips,
					   sample->callchain->nr);
	case PERF_RECORD_COMM:
		if (!(event->header.misc & PERF_RECORD_MISC_COMM_EXEC))
			return 0;
		return deferred_index__add_exec(dc->known, dc_task__key(machine, event->comm.pid),
						sample->time);
	case PERF_RECORD_EXIT:
		return deferred_index__add_exit(dc->known, dc_task__key(machine, event->fork.tid),
						event->fork.time);
	default:
		return 0;
	}
}

bool deferred_callchain__known_at(struct deferred_callchain *dc, u64 file_offset)
{
	struct deferred_record *known;

	if (!dc->known)
		return false;
	known = deferred_index__next_at(dc->known, file_offset);
	if (!known || known->exec || known->seen)
		return false;
	dc__known_seen(dc, known);
	return true;
}

void deferred_callchain__ahead_end(struct deferred_callchain *dc, bool whole)
{
	if (!dc->known) {
		dc->known = deferred_index__new();
		if (!dc->known)
			return;
	}
	deferred_index__seal(dc->known);
	dc->known_whole = whole;
}

int deferred_callchain__flush(struct deferred_callchain *dc)
{
	struct dc_entry *e, *tmp;
	int ret;

	if (dc->known)
		dc->stats.orphans += deferred_index__orphans(dc->known);

	/* Oldest first: the ones already out of the queue go out now. */
	list_for_each_entry_safe(e, tmp, &dc->waiting, wait_node) {
		ret = dc__resolve(dc, e, NULL);
		if (ret)
			goto out;
	}
	/* None waits now: no EXIT is held (dc__hold_exit()). */
	dc->nr_late = 0;
	dc__release_exits(dc);
	ret = dc__drain(dc, DC_FLUSH__FINAL);
out:
	/*
	 * The frames of the records known ahead are the caller's
	 * (deferred_callchain__ahead()), which may go with the end of the
	 * input: none is looked at again.
	 */
	deferred_index__delete(dc->known);
	dc->known = NULL;
	dc->known_whole = false;
	return ret;
}

void deferred_callchain__delete(struct deferred_callchain *dc)
{
	struct dc_block *block, *tmp_block;
	struct dc_entry *e, *tmp;
	struct hlist_node *tmp_node;
	struct dc_task *task;
	unsigned int bkt, i;

	if (!dc)
		return;
	list_for_each_entry_safe(e, tmp, &dc->queue, queue_node)
		dc_entry__exit(dc, e);
	list_for_each_entry_safe(e, tmp, &dc->waiting, wait_node)
		dc_entry__exit(dc, e);
	list_for_each_entry_safe(e, tmp, &dc->exits_held, queue_node)
		dc_entry__exit(dc, e);
	list_for_each_entry_safe(block, tmp_block, &dc->blocks, node)
		free(block);
	dc__for_each_task_safe(dc, bkt, tmp_node, task) {
		dc_task__drop_records(dc, task);
		free(task);
	}
	hlist_for_each_entry_safe(task, tmp_node, &dc->task_cache, hash_node)
		free(task);
	/* Last: dropping the records above puts them back in the cache. */
	for (i = 0; i < DC_RECORD_CLASSES; i++) {
		while (dc->record_cache[i]) {
			struct dc_record *rec = dc->record_cache[i];

			dc->record_cache[i] = rec->next;
			free(rec);
		}
	}
	deferred_index__delete(dc->known);
	free(dc->task_table);
	free(dc->chain);
	free(dc);
}

const struct deferred_callchain_stats *
deferred_callchain__stats(const struct deferred_callchain *dc)
{
	return &dc->stats;
}

bool deferred_callchain_stats__any(const struct deferred_callchain_stats *stats)
{
	return stats->samples || stats->records || stats->duplicates || stats->no_tid;
}

size_t deferred_callchain_stats__fprintf(const struct deferred_callchain_stats *s,
					 FILE *fp, const char *prefix)
{
	const struct {
		const char *name;
		u64 val;
	} rows[] = {
		{ "deferred samples",		s->samples },
		{ "deferred records",		s->records },
		{ "stitched",			s->stitched },
		{ "stitched late",		s->stitched_late },
		{ "fell back (fp)",		s->fallback_fp },
		{ "fell back (sframe)",		s->fallback_sframe },
		{ "fell back (unwind-style)",	s->fallback_style },
		{ "user stack lost",		s->lost },
		{ "  of which task exited",	s->exited },
		{ "delivered out of order",	s->delivered_late },
		{ "evicted by cap",		s->evicted },
		{ "duplicate records",		s->duplicates },
		{ "orphan records",		s->orphans },
		{ "records without tid",	s->no_tid },
		{ "max pending",		s->max_pending },
		{ "max queued",			s->max_queued },
		{ "max pending KiB",		s->max_pending_bytes >> 10 },
		{ "max held KiB",		s->max_held_bytes >> 10 },
		{ "moved at exec",		s->exec_moved },
		{ "delivered with exec",	s->exec_late },
		{ "exec maps ahead",		s->exec_maps_ahead },
		{ "bad user entries dropped",	s->bad_user_ips },
		{ "damaged times not trusted",	s->bad_times },
		{ "held, did not parse again",	s->unparsed },
	};
	size_t i, printed = 0;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		printed += fprintf(fp, "%s%-24s %10" PRIu64 "\n", prefix, rows[i].name,
				   rows[i].val);
	return printed;
}

const char *deferred_callchain_stats__warning(const struct deferred_callchain_stats *s,
					      char *buf, size_t size)
{
	u64 bad = s->lost + s->fallback_fp + s->fallback_sframe + s->fallback_style;

	/* Exiting tasks never get a record: a few are expected. */
	if (!s->samples || bad * 100 < s->samples)
		return NULL;
	scnprintf(buf, size,
		  "%" PRIu64 " of %" PRIu64 " deferred samples (%.1f%%) got no user callchain record: %"
		  PRIu64 " fell back to frame pointers, %" PRIu64 " to SFrame, %" PRIu64
		  " to the unwind styles named, %" PRIu64 " lost their user stack",
		  bad, s->samples, 100.0 * bad / s->samples, s->fallback_fp,
		  s->fallback_sframe, s->fallback_style, s->lost);
	return buf;
}

const char *deferred_callchain__order_warning(const struct deferred_callchain *dc,
					      char *buf, size_t size)
{
	const struct deferred_callchain_stats *s = &dc->stats;
	const char *why = "a reused tid (FORK) sent a task's samples ahead of others";
	char knob[96];

	if (!s->delivered_late)
		return NULL;
	if (dc->late_why & DC_LATE_MEMORY) {
		scnprintf(knob, sizeof(knob), "the samples held took %" PRIu64 " MiB: raise call-graph.defer-memory",
			  dc->config.max_pending_bytes >> 20);
		why = knob;
	} else if (dc->late_why & DC_LATE_QUEUE) {
		scnprintf(knob, sizeof(knob), "%" PRIu64 " samples were held: raise call-graph.defer-queue",
			  dc->config.max_queue);
		why = knob;
	} else if (dc->late_why & DC_LATE_WINDOW) {
		scnprintf(knob, sizeof(knob), "their record came over %" PRIu64 " ms late: raise call-graph.defer-window",
			  dc->config.window_ns / 1000000);
		why = knob;
	}
	scnprintf(buf, size, "%" PRIu64 " samples were delivered out of time order while they waited for their deferred callchain (%s)",
		  s->delivered_late, why);
	return buf;
}
