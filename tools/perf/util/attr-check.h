/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_ATTR_CHECK_H
#define __PERF_ATTR_CHECK_H

#include <stdbool.h>
#include <linux/types.h>

struct evlist;
struct perf_session;
union perf_event;

/*
 * The attrs checked against their samples.
 *
 * A sample carries no description of itself: evsel__parse_sample() takes
 * its layout from the attr's sample_type, and one wrong bit there misreads
 * every sample of that attr (a field read where another is, the fields
 * after it shifted) or refuses them all.  The kernel writes a sample as
 * exactly the fields of its sample_type, in the order of
 * perf_output_sample(), padded to u64 (perf_prepare_sample() sizes the
 * header by the same walk): a layout is the samples' when every one adds
 * up to its header's size, with plausible values where the fields have a
 * shape (pid/tid, CPU, callchain context markers, page sizes).
 *
 * Validate once, then trust: the samples at the start of the data are
 * checked once, when the attrs are read; an attr that they contradict
 * takes the layout, one sample_type bit away (or another attr's), that
 * they parse with, and the reader trusts it from then on: nothing per
 * sample.  An attr whose ids no sample has takes the ids of the samples
 * no attr has that parse as its own: by layout, else by order (perf
 * record opens the events of one attr after the other, and the kernel
 * numbers events as they are opened, perf_event_alloc(): an attr's ids
 * are a block).
 * An attr without samples (the dummy event of -a) is checked by its
 * records' sample_id, which perf record lays out alike for every attr.
 *
 * What is changed is warned about, naming the attr, and counted in struct
 * perf_header (damaged_sample_types, damaged_ids): the "Damaged input"
 * block of perf report --stats.
 */

/**
 * attr_check__file - a file's attrs against its samples
 * @session: the session, its attrs and data section read from the header
 * @fd: the file
 *
 * Checks the attrs' sample_type against the first samples of the data
 * (swapped u64 by u64 in a file of the other byte order, as the session
 * swaps a sample), and their ids against the ids of the samples and
 * records in the whole data.
 *
 * Return: nothing: what cannot be read is left as the header says.
 */
void attr_check__file(struct perf_session *session, int fd);

/**
 * attr_check__pipe - a pipe's attrs against its samples
 * @session: the session, its attrs read (HEADER_ATTR events)
 * @buf: whole events, in host byte order, from a sample on
 * @len: how many bytes (at most the first 256 KiB are read)
 *
 * What attr_check__file() does for a file, but the ids: a pipe's come
 * with its attrs.
 *
 * Return: nothing.
 */
void attr_check__pipe(struct perf_session *session, const void *buf, u64 len);

/**
 * attr_check__pipe_record - a pipe's sampleless attr against a record
 * @session: the session, its attrs read (HEADER_ATTR events)
 * @event: a record other than a sample, whole, in host byte order
 *
 * An attr without samples (the dummy event of -a, whose records carry the
 * task and deferred callchain records) cannot be checked against samples.
 * perf record gives every attr the same sample_id fields: when the other
 * attrs agree on theirs, this attr's differ by one bit, and @event, one of
 * its records by its id, does not parse with its own but does with
 * theirs, it takes theirs.  attr_check__file() checks such an attr at
 * open.
 *
 * Return: nothing.
 */
void attr_check__pipe_record(struct perf_session *session, const union perf_event *event);

/**
 * attr_check__sample_claimed - whether some attr parses a sample as it says
 * @evlist: the session's attrs
 * @event: a PERF_RECORD_SAMPLE, whole, in host byte order
 *
 * The check attr_check__pipe() makes of many samples, of one: its fields
 * add up to its size with plausible values, under the sample_type of the
 * attr its id names (of the one attr, with one).
 *
 * Return: true when one does.
 */
bool attr_check__sample_claimed(struct evlist *evlist, const union perf_event *event);

#endif /* __PERF_ATTR_CHECK_H */
