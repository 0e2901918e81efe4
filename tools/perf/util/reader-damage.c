// SPDX-License-Identifier: GPL-2.0
/*
 * Reading perf.data as untrusted input: the framing of events checked once,
 * resynchronized when lost, events handed out aligned, and what was lost
 * counted and said (see reader-damage.h for the contract).
 */
#include <byteswap.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <perf/event.h>
#include "attr-check.h"
#include "data.h"
#include "debug.h"
#include "env.h"
#include "event.h"
#include "evlist.h"
#include "header.h"
#include "session.h"
#include "reader-damage.h"

/*
 * Resynchronizing after an event header that cannot be right: how many
 * consecutive plausible events make an offset the framing again (one can be
 * there by chance in a sample's payload, four in a row of known types and
 * sizes, samples with a parsable timestamp, are not), and how far to look
 * for them (bounded: a resync costs at most RESYNC_MAX / 8 scans).
 */
#define RESYNC_EVENTS	4
#define RESYNC_MAX	(1024 * 1024)
/*
 * A pipe's samples checked one by one against their attrs, and the bytes
 * the attrs' check reads when one is not an attr's (header.c checks as
 * many of a file's).
 */
#define PIPE_CHECK_SAMPLES	256
#define PIPE_CHECK_BYTES	(256 * 1024)

/* Chunks of aligned copies: as ordered_events allocates its events. */
#define COPIES_CHUNK	(64 * 1024)

/*
 * A header that can start an event of size at most @left: the rules perf
 * record keeps (reader-damage.h), except the sizes of the three records
 * whose payload is not padded (HEADER_TRACING_DATA, COMPRESSED of perf
 * before COMPRESSED2, HEADER_FEATURE).
 */
static bool reader_damage__plausible_header(struct perf_session *session,
					    const struct perf_event_header *raw, u64 left)
{
	struct perf_event_header hdr;

	memcpy(&hdr, raw, sizeof(hdr));	/* @raw may be misaligned */
	if (session->header.needs_swap)
		perf_event_header__bswap(&hdr);
	if (hdr.size < sizeof(hdr) || hdr.size > left || hdr.type == 0)
		return false;
	if (hdr.type >= PERF_RECORD_MAX && hdr.type < PERF_RECORD_USER_TYPE_START)
		return false;
	if (hdr.type >= PERF_RECORD_HEADER_MAX)
		return false;
	if (hdr.size % sizeof(u64) && hdr.type != PERF_RECORD_HEADER_TRACING_DATA &&
	    hdr.type != PERF_RECORD_COMPRESSED && hdr.type != PERF_RECORD_HEADER_FEATURE)
		return false;
	return !perf_event__too_small((const union perf_event *)&hdr, NULL);
}

bool reader_damage__plausible(struct perf_session *session, const char *buf, u64 len)
{
	return len >= sizeof(struct perf_event_header) &&
	       reader_damage__plausible_header(session, (const void *)buf, len);
}

/*
 * Whether RESYNC_EVENTS plausible events start at @buf, @len bytes there
 * (known types, sane sizes, samples whose timestamp parses): 1 yes, 0 no,
 * -1 when more bytes are needed to tell (*@need: how many from @buf).
 * With @at_end the data ends after @len bytes: fewer events that end
 * exactly there will do, unless @whole.
 */
static int reader_damage__plausible_events(struct perf_session *session, const char *buf,
					   u64 len, bool at_end, bool whole, u64 *need)
{
	u64 head = 0, ts;
	int i;

	for (i = 0; i < RESYNC_EVENTS; i++) {
		struct perf_event_header hdr;

		if (head == len && at_end)
			return !whole && i > 0;
		if (head + sizeof(hdr) > len) {
			*need = head + sizeof(hdr);
			return at_end ? 0 : -1;
		}
		memcpy(&hdr, buf + head, sizeof(hdr));
		if (!reader_damage__plausible_header(session, &hdr, ULLONG_MAX))
			return 0;
		if (session->header.needs_swap)
			perf_event_header__bswap(&hdr);
		if (head + hdr.size > len) {
			*need = head + hdr.size;
			return at_end ? 0 : -1;
		}
		/*
		 * The timestamp is parsed in place: only at an aligned offset
		 * (evsel__parse_sample_timestamp() loads u64s).
		 */
		if (hdr.type == PERF_RECORD_SAMPLE && !session->header.needs_swap &&
		    IS_ALIGNED((uintptr_t)(buf + head), sizeof(u64)) &&
		    evlist__parse_sample_timestamp(session->evlist,
						   (union perf_event *)(buf + head), &ts) < -1)
			return 0;
		head += hdr.size;
	}
	return 1;
}

/*
 * @skipped bytes from @offset skipped to find the framing again, @done
 * bytes of data read before: say so, count it, estimate the events lost
 * from the mean event size so far.
 */
static void reader_damage__count_resync(struct reader_damage *damage, const char *path,
					u64 offset, u64 skipped, u64 done)
{
	u64 avg = 0, lost;

	if (damage->nr_events && done > damage->resync_bytes)
		avg = (done - damage->resync_bytes) / damage->nr_events;
	avg = avg ?: sizeof(u64);
	lost = (skipped + avg - 1) / avg;
	pr_warning("WARNING: %s: bad event header at %#" PRIx64 ": skipped %" PRIu64
		   " bytes to %#" PRIx64 ", about %" PRIu64 " events lost\n",
		   path, offset, skipped, offset + skipped, lost);
	damage->nr_resyncs++;
	damage->resync_bytes += skipped;
	damage->resync_events += lost;
}

/* The size the header at @buf says (@buf may be misaligned). */
static u16 reader_damage__header_size(struct perf_session *session, const char *buf)
{
	struct perf_event_header hdr;

	memcpy(&hdr, buf, sizeof(hdr));
	return session->header.needs_swap ? bswap_16(hdr.size) : hdr.size;
}

/*
 * The file reader: the next offset below @limit from @buf where
 * RESYNC_EVENTS plausible events start, the header's own size first (a bad
 * type with a sane size: a flipped bit).  0 when there is none.  Events
 * are 8-byte aligned from the start of the data: so are the candidates.
 * @whole: the data ends at @len, but a run of events ending there is not
 * enough (the caller saw a cut: only whole runs tell it was not).
 */
static u64 reader_damage__resync_window(struct perf_session *session, const char *buf,
					u64 len, u64 left, bool whole, u64 limit)
{
	u64 head = 0, need;

	if (len < left)
		whole = true;	/* the window ends before the data */
	if (limit > RESYNC_MAX)
		limit = RESYNC_MAX;
	if (limit > len)
		limit = len;
	if (len >= sizeof(struct perf_event_header))
		head = reader_damage__header_size(session, buf);
	if (head && !(head % sizeof(u64)) && head < limit &&
	    reader_damage__plausible_events(session, buf + head, len - head,
					    /*at_end=*/true, whole, &need) == 1)
		return head;
	for (head = sizeof(u64); head < limit; head += sizeof(u64)) {
		if (reader_damage__plausible_events(session, buf + head, len - head,
						    /*at_end=*/true, whole, &need) == 1)
			return head;
	}
	return 0;
}

s64 reader_damage__frame(struct reader_damage *damage, struct perf_session *session,
			 const char *buf, u64 len, u64 offset, u64 data_offset, u64 data_end,
			 const char *path)
{
	struct perf_event_header hdr = { .size = 0 };
	u64 left = data_end - offset, skip, next;

	/* The data ends inside the event at @buf: a cut, or a bad size. */
	if (left >= sizeof(hdr)) {
		if (len < sizeof(hdr))
			return 0;	/* remap first */
		memcpy(&hdr, buf, sizeof(hdr));
		if (session->header.needs_swap)
			perf_event_header__bswap(&hdr);
	}
	if (left < sizeof(hdr) || hdr.size > left) {
		/* Not a cut if whole events follow: a bad size. */
		skip = reader_damage__resync_window(session, buf, len, left, true, ULLONG_MAX);
		if (!skip) {
			damage->cut_event = offset;
			damage->cut_event_size = hdr.size;
			return -ENODATA;
		}
		goto skipped;
	}

	/*
	 * The header is not plausible, or its size is and the header after it
	 * is not: either the size is wrong (the events go on inside the event
	 * it frames, skip to them) or the damage is after it (read it).
	 */
	if (!reader_damage__plausible_header(session, (const void *)buf, len)) {
		skip = reader_damage__resync_window(session, buf, len, left, false, ULLONG_MAX);
	} else {
		next = hdr.size;
		if (next + sizeof(hdr) > len ||
		    reader_damage__plausible_header(session, (const void *)(buf + next),
						    len - next))
			return 0;
		skip = reader_damage__resync_window(session, buf, len, left, false, next);
	}
	if (!skip)
		return 0;	/* no framing found: the event's parser decides */
skipped:
	reader_damage__count_resync(damage, path, offset, skip, offset - data_offset);
	return skip;
}

/* Pipes: @size bytes to @dst, the bytes read ahead first. */
static ssize_t reader_damage__pipe_read(struct reader_damage_ahead *pa,
					struct perf_session *session, void *dst, size_t size)
{
	size_t n = pa->len - pa->pos;
	ssize_t err;

	if (n > size)
		n = size;
	if (n) {
		memcpy(dst, pa->buf + pa->pos, n);
		pa->pos += n;
	}
	if (n == size)
		return size;
	if (pa->eof)
		return 0;
	err = perf_data__read(session->data, dst + n, size - n);
	return err <= 0 ? err : (ssize_t)size;
}

/* Room for @more bytes after len, the bytes before pos dropped. */
static int reader_damage__ahead_room(struct reader_damage_ahead *pa, size_t more)
{
	size_t cap;
	char *buf;

	if (pa->pos) {
		memmove(pa->buf, pa->buf + pa->pos, pa->len - pa->pos);
		pa->len -= pa->pos;
		pa->pos = 0;
	}
	if (pa->len + more <= pa->cap)
		return 0;
	cap = pa->cap ? pa->cap * 2 : 65536;
	while (cap < pa->len + more)
		cap *= 2;
	buf = realloc(pa->buf, cap);
	if (!buf)
		return -ENOMEM;
	pa->buf = buf;
	pa->cap = cap;
	return 0;
}

/* Read ahead until @want bytes from pos are there, or the pipe ends. */
static int reader_damage__ahead_fill(struct reader_damage_ahead *pa,
				     struct perf_session *session, u64 want)
{
	while (!pa->eof && pa->len - pa->pos < want) {
		ssize_t ret;

		if (pa->len + sizeof(u64) > pa->cap &&
		    reader_damage__ahead_room(pa, sizeof(u64)))
			return -ENOMEM;
		/* 8 bytes at a time: the pipe may end after any whole event. */
		ret = perf_data__read(session->data, pa->buf + pa->len, sizeof(u64));
		if (ret < 0)
			return -EIO;
		if (ret == 0)
			pa->eof = true;
		else
			pa->len += sizeof(u64);
	}
	return 0;
}

/* Hand @len bytes out again, before what was read ahead. */
static int reader_damage__ahead_unread(struct reader_damage_ahead *pa, const void *bytes,
				       size_t len)
{
	if (reader_damage__ahead_room(pa, len))
		return -ENOMEM;
	memmove(pa->buf + len, pa->buf, pa->len);
	memcpy(pa->buf, bytes, len);
	pa->len += len;
	return 0;
}

/*
 * The offset from pos, below @limit, where RESYNC_EVENTS plausible events
 * start, reading ahead as needed; @first (when not 0) is tried first.
 * 0 when there is none.
 */
static u64 reader_damage__ahead_find_events(struct reader_damage_ahead *pa,
					    struct perf_session *session, u64 first, u64 limit)
{
	u64 c = first ?: sizeof(u64), need, avail;
	int r;

	while (c < limit) {
		if (reader_damage__ahead_fill(pa, session, c + sizeof(struct perf_event_header)))
			return 0;
		avail = pa->len - pa->pos;
		if (avail <= c)
			return 0;
		r = reader_damage__plausible_events(session, pa->buf + pa->pos + c, avail - c,
						    pa->eof, /*whole=*/false, &need);
		if (r < 0 && need <= RESYNC_MAX) {
			if (reader_damage__ahead_fill(pa, session, c + need))
				return 0;
			continue;
		}
		if (r == 1)
			return c;
		if (c == first) {
			first = 0;
			c = sizeof(u64);
		} else {
			c += sizeof(u64);
		}
	}
	return 0;
}

/*
 * Pipes: the header @hdr just read (as it came) cannot be right.  Read
 * ahead, bounded, for the next offset where several consecutive events are
 * plausible, first where the header's own size points; the bytes from there
 * on are read again from the look-ahead.  False when there is none.
 */
static bool reader_damage__pipe_resync(struct reader_damage *damage,
				       struct perf_session *session,
				       const struct perf_event_header *hdr, u64 *head)
{
	struct reader_damage_ahead *pa = &damage->ahead;
	struct perf_event_header h = *hdr;
	u64 c, first;

	/* The header goes back in front of what was read ahead. */
	if (reader_damage__ahead_unread(pa, &h, sizeof(h)))
		return false;
	if (session->header.needs_swap)
		perf_event_header__bswap(&h);
	first = h.size >= sizeof(h) && !(h.size % sizeof(u64)) ? h.size : 0;
	c = reader_damage__ahead_find_events(pa, session, first, RESYNC_MAX);
	if (!c)
		return false;
	pa->pos += c;
	reader_damage__count_resync(damage, "pipe", *head, c, *head);
	*head += c;
	return true;
}

/*
 * Pipes: @event, just read whole, has a plausible size, but the header
 * after it is not plausible, or it is a sample that does not parse at that
 * size.  The size may be what is wrong, the events going on inside it (as
 * reader_damage__frame() finds in files): look for them there first, from
 * the bytes in hand.  True when it resynchronized inside the event, which is
 * then skipped; false to read it (the damage, if any, is after it: the next
 * call resynchronizes).
 */
static bool reader_damage__pipe_bad_size(struct reader_damage *damage,
					 struct perf_session *session,
					 union perf_event *event, u64 *head)
{
	struct reader_damage_ahead *pa = &damage->ahead;
	struct perf_event_header next;
	u32 size = event->header.size;
	u64 c, ts;

	/* Their payload follows them in the pipe, read by their tool: not ahead. */
	if (event->header.type == PERF_RECORD_HEADER_TRACING_DATA ||
	    event->header.type == PERF_RECORD_AUXTRACE)
		return false;
	if (size <= sizeof(next) || reader_damage__ahead_fill(pa, session, sizeof(next)) ||
	    pa->len - pa->pos < sizeof(next))
		return false;
	memcpy(&next, pa->buf + pa->pos, sizeof(next));
	if (reader_damage__plausible_header(session, &next, ULLONG_MAX) &&
	    (event->header.type != PERF_RECORD_SAMPLE || session->header.needs_swap ||
	     evlist__parse_sample_timestamp(session->evlist, event, &ts) >= -1))
		return false;

	/* The event goes back in front of what was read ahead. */
	if (reader_damage__ahead_unread(pa, event, size))
		return false;
	c = reader_damage__ahead_find_events(pa, session, 0, size);
	if (!c) {
		pa->pos += size;
		return false;
	}
	pa->pos += c;
	reader_damage__count_resync(damage, "pipe", *head, c, *head);
	*head += c;
	return true;
}

/*
 * Pipes: a pipe's attrs come as HEADER_ATTR events before any sample, so
 * the file's check at open (header.c) cannot see their samples.  The
 * first samples are checked one at a time as they come: nothing is read
 * ahead while each is some attr's as it says, so the reader of a live
 * pipe waits for nothing.  The first one that no attr claims (a
 * sample_type bit damaged) has the file's check run on it and on the
 * bytes after it, read ahead: the attrs that contradict their samples
 * take the layout they parse with, before this sample is framed
 * (reader_damage__pipe_bad_size() parses it) or delivered.  The first
 * records are checked as they come too, for the attr that has none of
 * the samples: the dummy event of -a, whose records carry the tasks and
 * their deferred callchains (attr_check__pipe_record()).
 */
static void reader_damage__pipe_check_attrs(struct reader_damage *damage,
					    struct perf_session *session,
					    const union perf_event *event)
{
	struct reader_damage_ahead *pa = &damage->ahead;
	u32 size = event->header.size;
	struct perf_event_header h;
	u64 len = 0;
	char *buf;

	if (session->header.needs_swap)
		return;
	if (event->header.type != PERF_RECORD_SAMPLE) {
		if (damage->pipe_records_checked < PIPE_CHECK_SAMPLES) {
			damage->pipe_records_checked++;
			attr_check__pipe_record(session, event);
		}
		return;
	}
	if (damage->pipe_samples_checked >= PIPE_CHECK_SAMPLES)
		return;
	if (attr_check__sample_claimed(session->evlist, event)) {
		damage->pipe_samples_checked++;
		return;
	}
	damage->pipe_samples_checked = PIPE_CHECK_SAMPLES;
	/*
	 * Whole events ahead, up to the first whose payload follows it in
	 * the pipe, read by its tool (HEADER_TRACING_DATA, AUXTRACE): not a
	 * byte of that is read ahead.
	 */
	while (size + len < PIPE_CHECK_BYTES) {
		if (reader_damage__ahead_fill(pa, session, len + sizeof(h)) ||
		    pa->len - pa->pos < len + sizeof(h))
			break;
		memcpy(&h, pa->buf + pa->pos + len, sizeof(h));
		if (h.type == PERF_RECORD_HEADER_TRACING_DATA || h.type == PERF_RECORD_AUXTRACE ||
		    h.size < sizeof(h) ||
		    reader_damage__ahead_fill(pa, session, len + h.size) ||
		    pa->len - pa->pos < len + h.size)
			break;
		len += h.size;
	}
	buf = malloc(size + len);
	if (!buf)
		return;
	memcpy(buf, event, size);
	memcpy(buf + size, pa->buf + pa->pos, len);
	attr_check__pipe(session, buf, size + len);
	free(buf);
}

int reader_damage__read_pipe_event(struct reader_damage *damage, struct perf_session *session,
				   void **bufp, u32 *buf_size, u64 *head)
{
	struct reader_damage_ahead *pa = &damage->ahead;
	union perf_event *event;
	ssize_t err;
	u32 size;

more:
	event = *bufp;
	err = reader_damage__pipe_read(pa, session, event, sizeof(struct perf_event_header));
	if (err <= 0) {
		if (err < 0)
			pr_err("failed to read event header\n");
		return err;
	}

	if (!reader_damage__plausible_header(session, &event->header, ULLONG_MAX)) {
		if (reader_damage__pipe_resync(damage, session, &event->header, head))
			goto more;
		pr_err("%#" PRIx64 ": bad event header\n", *head);
		return -EINVAL;
	}

	if (session->header.needs_swap)
		perf_event_header__bswap(&event->header);

	size = event->header.size;
	if (size > *buf_size) {
		void *new = realloc(*bufp, size);

		if (!new) {
			pr_err("failed to allocate memory to read event\n");
			return -ENOMEM;
		}
		*bufp = new;
		*buf_size = size;
		event = new;
	}

	if (size > sizeof(struct perf_event_header)) {
		err = reader_damage__pipe_read(pa, session, (void *)event + sizeof(event->header),
					       size - sizeof(event->header));
		if (err <= 0) {
			if (err == 0) {
				pr_err("unexpected end of event stream\n");
				damage->cut_event = *head;
				damage->cut_event_size = size;
				return 0;
			}
			pr_err("failed to read event data\n");
			return err;
		}
	}

	reader_damage__pipe_check_attrs(damage, session, event);
	if (reader_damage__pipe_bad_size(damage, session, event, head))
		goto more;
	return size;
}

static void reader_damage__free_copies(struct reader_damage_copies *c)
{
	while (c) {
		struct reader_damage_copies *next = c->next;

		free(c);
		c = next;
	}
}

union perf_event *reader_damage__align(struct reader_damage *damage, const void *event,
				       u16 size, bool keep)
{
	struct reader_damage_copies *c = damage->copies;
	size_t need = round_up(size, sizeof(u64));
	void *copy;

	if (IS_ALIGNED((uintptr_t)event, sizeof(u64)))
		return (union perf_event *)event;

	if (!keep && c) {
		/* The copy before is processed: reuse the newest chunk. */
		reader_damage__free_copies(c->next);
		c->next = NULL;
		c->used = 0;
	}
	if (!c || c->size - c->used < need) {
		size_t chunk = max_t(size_t, COPIES_CHUNK, need);

		c = malloc(sizeof(*c) + chunk);
		if (!c) {
			pr_err("failed to allocate memory to align an event\n");
			return NULL;
		}
		c->next = damage->copies;
		c->size = chunk;
		c->used = 0;
		damage->copies = c;
	}
	copy = (void *)c->data + c->used;
	c->used += need;
	memcpy(copy, event, size);
	damage->nr_misaligned++;
	return copy;
}

int reader_damage__skip_event(struct reader_damage *damage, struct perf_session *session,
			      union perf_event *event, u64 file_offset, int err)
{
	pr_debug("at offset %#" PRIx64 ": can't parse %s (%u) sample, err = %d: skipped\n",
		 file_offset, perf_event__name(event->header.type),
		 event->header.type, err);

	switch (event->header.type) {
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		pr_warning_once("WARNING: at offset %#" PRIx64 ": bad CALLCHAIN_DEFERRED skipped\n",
				file_offset);
		evlist__stats(session->evlist)->nr_bad_deferred++;
		break;
	case PERF_RECORD_SAMPLE:
		if (!damage->nr_bad_samples++)
			damage->first_bad_sample = file_offset;
		break;
	default:
		if (!damage->nr_bad_records++)
			damage->first_bad_record = file_offset;
		break;
	}
	return 0;
}

int reader_damage__stop(struct reader_damage *damage, int err, u64 file_offset)
{
	if (err == -ENOMEM || !damage->nr_events)
		return err;
	damage->stopped = true;
	damage->stop_offset = file_offset;
	return 0;
}

bool reader_damage__damaged(const struct reader_damage *damage)
{
	return damage->data_end || damage->cut_event || damage->cut_event_size ||
	       damage->nr_bad_samples || damage->nr_resyncs ||
	       damage->nr_bad_records || damage->stopped;
}

void reader_damage__end_of_data(struct reader_damage *damage, struct perf_session *session)
{
	struct perf_env *env = perf_session__env(session);
	const char *path = session->data ? session->data->path : "perf.data";

	if (!strcmp(path, "-"))
		path = "the pipe";

	/*
	 * Not under the tables sized by a count (CPU topology, domains): a
	 * crafted pipe can have them parsed with the host's count.
	 */
	if (damage->nr_cpus_from_samples && damage->nr_cpus_seen &&
	    !env->cpu && !env->cpu_domain) {
		env->nr_cpus_avail = damage->nr_cpus_seen;
		env->nr_cpus_online = damage->nr_cpus_seen;
		ui__warning("%s has no CPU count: %u CPUs, from the samples.\n",
			    path, damage->nr_cpus_seen);
	}

	if (damage->no_header_size) {
		ui__warning("%s: the header's data size is 0 (perf record killed?): read %" PRIu64
			    " events up to the end of the file at %#" PRIx64 ".\n",
			    path, damage->nr_events, damage->data_end);
	} else if (damage->data_end) {
		ui__warning("%s is truncated: data ends at %#" PRIx64 ", the header says %#" PRIx64
			    "; read %" PRIu64 " events.\n",
			    path, damage->data_end, damage->header_data_end, damage->nr_events);
	} else if (damage->cut_event || damage->cut_event_size) {
		ui__warning("%s is truncated: the event at %#" PRIx64
			    " (%u bytes) runs past the end of the data; read %" PRIu64 " events.\n",
			    path, damage->cut_event, damage->cut_event_size, damage->nr_events);
	}
	if (damage->nr_resyncs) {
		ui__warning("%u bad event headers: skipped %" PRIu64 " bytes, about %" PRIu64
			    " events lost.\n",
			    damage->nr_resyncs, damage->resync_bytes, damage->resync_events);
	}
	if (damage->nr_bad_samples) {
		ui__warning("%u samples could not be parsed, first at offset %#" PRIx64
			    ": skipped (-v lists them).\n",
			    damage->nr_bad_samples, damage->first_bad_sample);
	}
	if (damage->nr_bad_records) {
		ui__warning("%u records could not be parsed, first at offset %#" PRIx64
			    ": skipped (-v lists them).\n",
			    damage->nr_bad_records, damage->first_bad_record);
	}
	if (damage->stopped) {
		ui__warning("Processing stopped at offset %#" PRIx64 " after %" PRIu64
			    " events: the output is partial.\n",
			    damage->stop_offset, damage->nr_events);
	}
}

void reader_damage__release(struct reader_damage *damage)
{
	reader_damage__free_copies(damage->copies);
	damage->copies = NULL;
	zfree(&damage->ahead.buf);
	memset(&damage->ahead, 0, sizeof(damage->ahead));
}

size_t reader_damage__fprintf(const struct reader_damage *damage,
			      struct perf_session *session, FILE *fp)
{
	unsigned int damaged_features = perf_header__nr_damaged_features(&session->header);
	size_t ret;

	/* A CPU count taken from the samples is said even if nothing was lost. */
	if (!reader_damage__damaged(damage) && !damage->nr_cpus_from_samples &&
	    !damaged_features && !session->header.damaged_attrs &&
	    !session->header.damaged_sample_types && !session->header.damaged_ids)
		return 0;
	ret = fprintf(fp, "\nDamaged input:\n");
	ret += fprintf(fp, "  %-24s %10" PRIu64 "\n", "events read", damage->nr_events);
	ret += fprintf(fp, "  %-24s %10u\n", "unparsable samples", damage->nr_bad_samples);
	ret += fprintf(fp, "  %-24s %10u\n", "unparsable records", damage->nr_bad_records);
	ret += fprintf(fp, "  %-24s %10" PRIu64 "\n", "bytes cut off",
		       damage->header_data_end > damage->data_end ?
		       damage->header_data_end - damage->data_end : 0);
	ret += fprintf(fp, "  %-24s %10u\n", "partial last event",
		       damage->cut_event || damage->cut_event_size);
	ret += fprintf(fp, "  %-24s %10u\n", "bad event headers", damage->nr_resyncs);
	ret += fprintf(fp, "  %-24s %10" PRIu64 "\n", "bytes skipped", damage->resync_bytes);
	ret += fprintf(fp, "  %-24s %10u\n", "no header data size", damage->no_header_size);
	ret += fprintf(fp, "  %-24s %10u\n", "stopped on an error", damage->stopped);
	ret += fprintf(fp, "  %-24s %10u\n", "damaged features", damaged_features);
	ret += fprintf(fp, "  %-24s %10u\n", "attrs found by layout",
		       session->header.damaged_attrs);
	ret += fprintf(fp, "  %-24s %10u\n", "sample_types from samples",
		       session->header.damaged_sample_types);
	ret += fprintf(fp, "  %-24s %10u\n", "attr ids from samples",
		       session->header.damaged_ids);
	if (damage->nr_misaligned)
		ret += fprintf(fp, "  %-24s %10" PRIu64 "\n", "misaligned events copied",
			       damage->nr_misaligned);
	if (damage->nr_cpus_from_samples)
		ret += fprintf(fp, "  %-24s %10u\n", "CPUs from the samples", damage->nr_cpus_seen);
	return ret;
}
