/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_READER_DAMAGE_H
#define __PERF_READER_DAMAGE_H

#include <stdbool.h>
#include <stdio.h>
#include <linux/types.h>

struct perf_session;
struct perf_sample;
union perf_event;

/*
 * Reading perf.data as untrusted input.
 *
 * The session's readers (the file reader's windows, the pipe reader) frame
 * the data into events by the sizes their headers say.  perf record always
 * writes a size that is a multiple of 8 (perf_event_header.size of kernel
 * records is u64-aligned: perf_output_begin() rounds up; perf's own records
 * are written padded, PERF_ALIGN), of a known type, at least the type's
 * minimum (perf_event__too_small()).  A header that breaks one of these
 * rules, or a size after which no such header follows, is damage: a file
 * cut short, a bit flipped, a header never rewritten by a killed perf
 * record.
 *
 * Validate once, then trust: this module checks the framing of each event
 * before the session reads it (reader_damage__frame() for the file reader,
 * reader_damage__read_pipe_event() for pipes), and when the framing is lost
 * it finds it again, bounded (RESYNC_MAX bytes), at the next offset where
 * RESYNC_EVENTS consecutive events are plausible, skipping the damaged bytes
 * with a warning.  What it hands on is an event whose header is plausible
 * and whose size lies within the data; what the payload says is for the
 * parsers (evsel__parse_sample() and the event handlers) to check.
 *
 * It also says what was lost: the counters of struct reader_damage, one
 * warning per kind at the end of the data (reader_damage__end_of_data())
 * and the "Damaged input" block of perf report --stats.
 *
 * And it hands out events 8-byte aligned: a record whose size is not a
 * multiple of 8 (PERF_RECORD_COMPRESSED of perf before COMPRESSED2 did that
 * legitimately) leaves the events after it at misaligned addresses of the
 * mapped file, and every reader of a union perf_event loads u64s from them.
 * Those are copied (reader_damage__align()); aligned events, all of them in
 * what perf record writes, are read in place as before.
 */

/**
 * struct reader_damage_copies - aligned copies of misaligned events.
 *
 * A chunk of memory the copies are carved from, 8-byte aligned (malloc());
 * chunks are chained and freed together by reader_damage__release().
 */
struct reader_damage_copies {
	/** @next: The chunk filled before this one. */
	struct reader_damage_copies	*next;
	/** @size: Bytes of @data. */
	size_t				size;
	/** @used: Bytes of @data handed out. */
	size_t				used;
	/** @data: The copies. */
	u64				data[];
};

/**
 * struct reader_damage_ahead - bytes of a pipe read ahead.
 *
 * A pipe reads forward only: the bytes read ahead to check the next header,
 * or to resynchronize, are kept here and handed out before the pipe's own.
 */
struct reader_damage_ahead {
	/** @buf: The bytes read ahead. */
	char	*buf;
	/** @pos: Next byte to hand out. */
	size_t	pos;
	/** @len: End of what was read ahead. */
	size_t	len;
	/** @cap: Size of @buf. */
	size_t	cap;
	/** @eof: The pipe ended after @len. */
	bool	eof;
};

/**
 * struct reader_damage - the reader's state for untrusted input: what it
 * found wrong, what it skipped, and the buffers it reads through.
 *
 * A field of the session (perf_session.damage): the counters describe the
 * session's input as a whole (the file header, the data, each reader of a
 * directory), not an evlist's events as events_stats does (those are also
 * kept per hists), and they are set by the header reader (util/header.c:
 * the data end, the CPU count) as well as by the event readers.
 */
struct reader_damage {
	/** @data_end: Where the data really ends (file offset), when cut short. */
	u64	data_end;
	/** @header_data_end: Where the file header says the data ends. */
	u64	header_data_end;
	/** @no_header_size: The header's data size is 0 (perf record killed). */
	bool	no_header_size;
	/** @no_features: Feature sections missing: never written or cut off. */
	bool	no_features;
	/** @cut_event: File offset of an event cut by the end of the data. */
	u64	cut_event;
	/** @cut_event_size: The size that event's header says. */
	u32	cut_event_size;
	/** @nr_events: Events read from the data (whole ones). */
	u64	nr_events;
	/** @nr_bad_samples: Samples whose fields do not parse, skipped. */
	u32	nr_bad_samples;
	/** @first_bad_sample: File offset of the first of them. */
	u64	first_bad_sample;
	/** @nr_bad_records: Other records whose sample_id does not parse. */
	u32	nr_bad_records;
	/** @first_bad_record: File offset of the first of them. */
	u64	first_bad_record;
	/** @nr_resyncs: Event headers that lost the framing, skipped over. */
	u32	nr_resyncs;
	/** @resync_bytes: Bytes skipped to find the framing again. */
	u64	resync_bytes;
	/** @resync_events: About how many events those bytes held. */
	u64	resync_events;
	/** @stopped: Processing stopped on an error: the output is partial. */
	bool	stopped;
	/** @stop_offset: File offset of the event it stopped at. */
	u64	stop_offset;
	/**
	 * @nr_cpus_from_samples: The header has no CPU count (HEADER_NRCPUS):
	 * MAX_NR_CPUS bounds the samples' CPUs while reading, then the count
	 * is that of the samples.
	 */
	bool	nr_cpus_from_samples;
	/** @nr_cpus_seen: The highest CPU of a sample plus one. */
	u32	nr_cpus_seen;
	/**
	 * @pipe_samples_checked: A pipe's first samples checked against
	 * their attrs as they came (reader_damage__read_pipe_event()).
	 */
	u32	pipe_samples_checked;
	/**
	 * @pipe_records_checked: A pipe's first records (but samples)
	 * checked against the sampleless attrs as they came.
	 */
	u32	pipe_records_checked;
	/** @nr_misaligned: Events copied because they were misaligned. */
	u64	nr_misaligned;
	/** @copies: Aligned copies of misaligned events, newest chunk first. */
	struct reader_damage_copies	*copies;
	/** @ahead: Bytes of a pipe read ahead. */
	struct reader_damage_ahead	ahead;
};

/**
 * reader_damage__plausible - whether a header can start an event
 * @session: the session (byte order)
 * @buf: the header, in the data
 * @len: the bytes from @buf to the end of the data
 *
 * reader_damage__frame() reads the event at its position without
 * resynchronizing when its header is plausible and so is the header its
 * size points to (or the data ends there).  For a look at the data ahead
 * of the reader, which must frame it as the reader will.
 *
 * Return: true when the header at @buf is plausible and its event ends
 * within @len bytes.
 */
bool reader_damage__plausible(struct perf_session *session, const char *buf, u64 len);

/**
 * reader_damage__frame - check the framing of the event at a file reader's
 * position, resynchronizing when it is lost.
 * @damage: the session's reader state (counts what is skipped or cut)
 * @session: the session (byte order, evlist: a sample's timestamp parses)
 * @buf: the bytes at the reader's position (an 8-byte aligned offset from
 *	 the start of the data, as every event's is)
 * @len: how many of them are mapped (0 when the position is past the window)
 * @offset: the file offset of @buf
 * @data_offset: the file offset where the data starts
 * @data_end: the file offset where the data ends (@offset + @len or more)
 * @path: the file, for the warnings
 *
 * The event at @buf is read when its header is plausible (a known type, a
 * size that is a multiple of 8 and at least the type's minimum) and the
 * header its size points to is too.  When not, either the size is wrong and
 * the events go on inside the event it frames, or the header itself is
 * damaged: the next offset, within the window, where RESYNC_EVENTS
 * consecutive events are plausible is looked for, the header's own size
 * first.  An event that runs past the end of the data is a cut unless whole
 * events follow inside it.
 *
 * Return: 0 to read the event at @buf (or to remap first, when its header is
 * not mapped); > 0 bytes to skip, a multiple of 8, to the next plausible
 * event (warned and counted); -ENODATA when the data ends inside the event
 * at @buf and nothing plausible follows (counted as a cut): stop reading.
 */
s64 reader_damage__frame(struct reader_damage *damage, struct perf_session *session,
			 const char *buf, u64 len, u64 offset, u64 data_offset, u64 data_end,
			 const char *path);

/**
 * reader_damage__read_pipe_event - read the next event of a pipe, framed.
 * @damage: the session's reader state (its look-ahead buffer, the counters)
 * @session: the session (its data, byte order and evlist)
 * @bufp: the event buffer, grown (realloc()) to hold the event
 * @buf_size: the size of *@bufp, updated when it grows
 * @head: the pipe offset of the event; moved past bytes skipped
 *
 * Reads the header, resynchronizing when it is not plausible (from bytes
 * read ahead: a pipe does not seek), then the payload, then reads the next
 * header ahead (no read more per event: the next call takes it from there)
 * to check the size: when the next header is not plausible, or a sample
 * does not parse at that size, the framing is looked for inside the event
 * first.  Before that, the first samples are checked against their attrs
 * (a pipe's attrs came as events: the file's check at open saw no
 * sample): the first that no attr parses as it says has the check run on
 * it and the bytes read ahead after it (attr_check__pipe()).  The payload
 * of HEADER_TRACING_DATA and AUXTRACE follows them in the pipe, read by
 * their handlers: nothing is read ahead of those.
 *
 * Return: the event's size (> 0), the event in *@bufp with its header in
 * host byte order; 0 at the end of the pipe (an event cut by it counted);
 * a negative errno when the reading must stop there (-ENOMEM: out of
 * memory; -EINVAL: a header that nothing plausible follows; a read error).
 */
int reader_damage__read_pipe_event(struct reader_damage *damage, struct perf_session *session,
				   void **bufp, u32 *buf_size, u64 *head);

/**
 * reader_damage__align - the event at @event, 8-byte aligned.
 * @damage: the session's reader state (holds the copies)
 * @event: an event in the mapped data, whole (@size bytes are there)
 * @size: its size, as its header says in host byte order
 * @keep: the copy must live until reader_damage__release() (the tool
 *	  queues events: ordered events point to them until delivered);
 *	  false: until the next call (the event is processed before it)
 *
 * Return: @event when it is aligned (no copy: what perf record writes);
 * else an aligned copy of it; NULL when out of memory.
 */
union perf_event *reader_damage__align(struct reader_damage *damage, const void *event,
				       u16 size, bool keep);

/**
 * reader_damage__skip_event - count an event whose fields do not parse.
 * @damage: the session's reader state
 * @session: the session (its evlist's stats count bad deferred records)
 * @event: the event
 * @file_offset: its file offset
 * @err: what its parser said
 *
 * A sample or record whose fields do not parse (a callchain nr past the
 * event, a sample_id trailer cut short, an id that no attr has) is skipped
 * and counted, whatever the layout of the file (one event, several, pipe),
 * so that one bad event does not end the session.  Said once, at the end
 * (reader_damage__end_of_data()); each one with -v.
 *
 * Return: 0, to go on with the next event.
 */
int reader_damage__skip_event(struct reader_damage *damage, struct perf_session *session,
			      union perf_event *event, u64 file_offset, int err);

/**
 * reader_damage__stop - an error stops the reading at @file_offset.
 * @damage: the session's reader state
 * @err: the error
 * @file_offset: where the reading stops
 *
 * What was read before is still worth having: the output is marked partial
 * and the caller flushes what is queued (ordered events, the stitcher) as at
 * the end of the data.
 *
 * Return: 0 to end as at the end of the data; @err when nothing was read,
 * or memory ran out.
 */
int reader_damage__stop(struct reader_damage *damage, int err, u64 file_offset);

/**
 * reader_damage__end_of_data - the data is read: say what was lost.
 * @damage: the session's reader state
 * @session: the session (its env gets the CPU count of the samples)
 *
 * The CPU count the header did not have is now that of the samples (perf
 * report --sort cpu, perf script --cpu, the tools that size per-CPU tables
 * after the session), then one warning per kind of damage.
 *
 * Return: nothing.
 */
void reader_damage__end_of_data(struct reader_damage *damage, struct perf_session *session);

/**
 * reader_damage__release - free the reader's buffers
 * @damage: the session's reader state
 *
 * Once the events in them are delivered (after the final flush); the
 * counters stay.
 *
 * Return: nothing.
 */
void reader_damage__release(struct reader_damage *damage);

/**
 * reader_damage__damaged - whether anything of the input was lost.
 * @damage: the session's reader state
 *
 * Return: true when the data was cut, events were skipped or the reading
 * stopped on an error.
 */
bool reader_damage__damaged(const struct reader_damage *damage);

/**
 * reader_damage__fprintf - the "Damaged input" block of perf report --stats.
 * @damage: the session's reader state
 * @session: the session (the feature sections and attrs its header skipped)
 * @fp: where to print
 *
 * Return: the number of characters printed (0 when nothing was damaged).
 */
size_t reader_damage__fprintf(const struct reader_damage *damage,
			      struct perf_session *session, FILE *fp);

#endif /* __PERF_READER_DAMAGE_H */
