/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_DEFERRED_INDEX_H
#define __PERF_DEFERRED_INDEX_H

#include <linux/types.h>
#include <stdbool.h>

/*
 * Deferred user callchains known ahead.
 *
 * When perf reads a file mapped whole, every PERF_RECORD_CALLCHAIN_DEFERRED
 * is in memory before the first sample goes out.  The reader hands them here
 * ahead of their turn; the stitcher then finds a deferred sample's record
 * when the sample comes, and stitches it at once: nothing waits for a record
 * that the file is known to hold, or known not to hold.
 *
 * Records are keyed as the stitcher keys them, by task (its machine and tid,
 * as one u64) and cookie.  The kernel makes the cookie from the CPU and that
 * CPU's count of kernel entries (unwind_deferred_types.h: one per entry, a
 * CPU + 1 in the low half, so never 0), so a key names one kernel entry of
 * one task, and one record is emitted for it.  A second record with a known
 * key (perf record writes some twice, after a FINISHED_ROUND) is not added:
 * the first in the file is the one kept, the others are duplicates.
 *
 * Exec COMMs are noted too: the record of an execve is the new program's
 * _start, and the samples taken in the execve must go out after the exec's
 * COMM and MMAPs, which the stitcher's streaming rules do (see
 * deferred-callchain.h).  deferred_index__seal() marks that record, the
 * first of the exec'ing task after its COMM, as the streaming rules'.
 *
 * EXITs are noted, so that a sample with no record can still be counted as
 * one of a task that exited with that kernel entry (deferred_index__exited()).
 *
 * Memory: per record 56 bytes and 16 to 32 bytes of table (half full at
 * most); per EXIT 24 bytes; per exec COMM 24 bytes until the index is
 * sealed; deferred_index__bytes() says how much, for the caller to bound.
 * A record's user frames are not copied: they stay where the caller has
 * them (a file mapped whole, until the reader is done with it), which must
 * outlive the index's use.  Copying them doubled what the index costs in
 * memory and in page faults and left the frames colder than in the file,
 * next to the samples that want them.  Only a record with bad entries (see
 * deferred_index__copy_ips()) gets a copy, without them.
 */

/* A record known ahead. */
struct deferred_record {
	u64	task;		/* machine and tid, as the stitcher keys tasks */
	u64	cookie;		/* 0: a free slot (no cookie is 0) */
	u64	time;
	u64	file_offset;	/* where the kept one is: the others are duplicates */
	const u64 *ips;		/* user frames, without entries >= PERF_CONTEXT_MAX */
	u32	nr;
	u16	bad_ips;	/* entries >= PERF_CONTEXT_MAX dropped from ips */
	bool	seen;		/* the stitcher had it in its turn */
	bool	used;		/* a sample was stitched with it */
	bool	exec;		/* an execve's: the streaming rules decide */
};

struct deferred_index;

/**
 * deferred_index__new - an empty index
 *
 * Return: the index, or NULL when out of memory.
 */
struct deferred_index *deferred_index__new(void);

/**
 * deferred_index__delete - free an index and the frames it copied
 * @idx: the index, or NULL
 *
 * Return: nothing.
 */
void deferred_index__delete(struct deferred_index *idx);

/**
 * deferred_index__add - a record, ahead of its turn
 * @idx: the index, not sealed; records are added in file order
 * @task: its machine and tid, as deferred_index__find() will be asked
 * @cookie: its cookie, not 0
 * @time: its time
 * @file_offset: where it is in the file
 * @ips: its user frames, as the kernel wrote them; pointed to, not copied:
 *	 they must stay, unchanged, as long as the index is used
 * @nr: how many
 *
 * Entries >= PERF_CONTEXT_MAX (garbage in a return-address slot, seen on
 * s390 JIT code) are dropped, from a copy, and counted in the record's
 * bad_ips: as context markers they would end callchain resolution.
 *
 * Return: 0 (a record with a known key is not added), -EINVAL for cookie 0,
 * -ENOMEM.
 */
int deferred_index__add(struct deferred_index *idx, u64 task, u64 cookie, u64 time,
			u64 file_offset, const u64 *ips, u64 nr);

/**
 * deferred_index__copy_ips - a record's user frames, without bad entries
 * @dst: room for @nr
 * @src: the frames as the kernel wrote them
 * @nr: how many
 *
 * Garbage in a return-address slot (seen on s390 JIT code) can read as a
 * context marker (>= PERF_CONTEXT_MAX), which would make callchain
 * resolution drop the whole chain: that entry only is dropped.  The one
 * rule for records known ahead and records in their turn.
 *
 * Return: how many frames were copied; @nr less that were dropped.
 */
u64 deferred_index__copy_ips(u64 *dst, const u64 *src, u64 nr);

/**
 * deferred_index__add_exec - an exec COMM, ahead of its turn
 * @idx: the index, not sealed
 * @task: the machine and pid of the process, which after the exec is also
 *	  the tid of the exec'ing thread (de_thread())
 * @time: the COMM's time
 *
 * Return: 0, or -ENOMEM.
 */
int deferred_index__add_exec(struct deferred_index *idx, u64 task, u64 time);

/**
 * deferred_index__add_exit - an EXIT, ahead of its turn
 * @idx: the index, not sealed
 * @task: the machine and tid of the task
 * @time: the EXIT's time
 *
 * Return: 0, or -ENOMEM.
 */
int deferred_index__add_exit(struct deferred_index *idx, u64 task, u64 time);

/**
 * deferred_index__bytes - the memory the index takes
 * @idx: the index
 *
 * Return: its bytes, the table's and the copies' included.
 */
u64 deferred_index__bytes(const struct deferred_index *idx);

/**
 * deferred_index__seal - every record, exec COMM and EXIT is in
 * @idx: the index
 *
 * Marks the record of each execve: for each exec COMM, the earliest record
 * of its @task at or after the COMM's time (the exec'ing thread returns to
 * user space through the new program's _start).  The exec COMMs are freed.
 *
 * Return: nothing.
 */
void deferred_index__seal(struct deferred_index *idx);

/**
 * deferred_index__find - the record of a task's kernel entry
 * @idx: the index
 * @task: machine and tid
 * @cookie: the entry's cookie
 *
 * Return: the record, valid as long as @idx, or NULL.
 */
struct deferred_record *deferred_index__find(const struct deferred_index *idx,
					     u64 task, u64 cookie);

/**
 * deferred_index__exited - whether a task's kernel entry was its last
 * @idx: the index, sealed
 * @task: machine and tid
 * @time: the time of a sample of it, in a kernel entry with no record
 *
 * A tid is reused once its task is gone: the first EXIT at or after @time is
 * that of the task of the sample.  A record of the task between the two is
 * of a later kernel entry: the sample's entry returned to user space then,
 * and its record was lost, not cut off by the exit.
 *
 * The EXITs are sorted on the first call.
 *
 * Return: true when the index has an EXIT of @task at or after @time and
 * no record of @task at or after @time before it.
 */
bool deferred_index__exited(struct deferred_index *idx, u64 task, u64 time);

/**
 * deferred_index__next_at - the record at a file offset, reading forward
 * @idx: the index
 * @file_offset: where the reader is, further on than at the last call
 *
 * For a reader going through the file in order: the records before
 * @file_offset are passed for good.
 *
 * Return: the kept record at @file_offset, or NULL (another event, or a
 * duplicate).
 */
struct deferred_record *deferred_index__next_at(struct deferred_index *idx, u64 file_offset);

/**
 * deferred_index__orphans - the records seen that stitched nothing
 * @idx: the index
 *
 * Records marked exec are not counted: the streaming rules count them.
 *
 * Return: how many records were seen but never used.
 */
u64 deferred_index__orphans(const struct deferred_index *idx);

#endif /* __PERF_DEFERRED_INDEX_H */
