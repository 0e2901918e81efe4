// SPDX-License-Identifier: GPL-2.0
/*
 * The attrs checked against their samples: see attr-check.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/align.h>
#include <linux/bitops.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/zalloc.h>
#include <internal/evlist.h>
#include <internal/evsel.h>

#include "attr-check.h"
#include "debug.h"
#include "event.h"
#include "evlist.h"
#include "evsel.h"
#include "header.h"
#include "memswap.h"
#include "session.h"
#include "../perf.h"

/*
 * The first samples of the data are checked: as many as ATTR_CHECK_BYTES
 * hold, at most ATTR_CHECK_SAMPLES; the whole data for ids, at most
 * ATTR_CHECK_IDS of samples and ATTR_CHECK_REC_IDS of records.
 */
#define ATTR_CHECK_BYTES	(256 * 1024)
#define ATTR_CHECK_SAMPLES	256
#define ATTR_CHECK_IDS		1024
#define ATTR_CHECK_REC_IDS	64

struct attr_check {
	const union perf_event	*samples[ATTR_CHECK_SAMPLES];
	int			nr;
	bool			*claimed;	/* per sample: some evsel parses it */
	bool			swapped;	/* samples of a file of the other byte order */
};

static bool attr_check__pid(u32 pid)
{
	/* PID_MAX_LIMIT is 4M; -1 is a task the kernel could not name. */
	return pid <= (4U << 20) || pid == (u32)-1;
}

static bool attr_check__regs(const __u64 *w, u32 n, u32 *i, u64 mask)
{
	u64 abi;

	if (*i >= n)
		return false;
	abi = w[(*i)++];
	if (abi > PERF_SAMPLE_REGS_ABI_64)
		return false;
	if (abi)
		*i += hweight64(mask);
	return *i <= n;
}

/*
 * The u32 that comes first in memory in the u64 @w, as the kernel wrote
 * it: in a sample of the other byte order, swapped u64 by u64 as
 * perf_event__all64_swap() swaps it, the second one.
 */
static u32 attr_check__first32(u64 w, bool swapped)
{
	return swapped ? w >> 32 : (u32)w;
}

/*
 * Whether the sample @ev parses with @type and the rest of @attr exactly,
 * with plausible values; its time in @time (0: none).  @swapped: its u64s
 * swapped from the other byte order (perf_event__all64_swap()).
 */
static bool attr_check__sample(const union perf_event *ev, u64 type,
			       const struct perf_event_attr *attr, u64 *time, bool swapped)
{
	const __u64 *w = ev->sample.array;
	u32 n = (ev->header.size - sizeof(ev->header)) / sizeof(u64), i = 0;
	u64 v, fmt = attr->read_format;

	*time = 0;
	if (type & ~(PERF_SAMPLE_MAX - 1) || ev->header.size % sizeof(u64))
		return false;
	/* The fixed u64s up to PERIOD, in perf_output_sample()'s order. */
	if (type & PERF_SAMPLE_IDENTIFIER)
		i++;
	/* IP, the address of any architecture: no shape to check. */
	i += !!(type & PERF_SAMPLE_IP);
	if (type & PERF_SAMPLE_TID) {
		if (i >= n || !attr_check__pid(w[i]) || !attr_check__pid(w[i] >> 32))
			return false;
		i++;
	}
	if (type & PERF_SAMPLE_TIME) {
		if (i >= n)
			return false;
		*time = w[i++];
	}
	i += !!(type & PERF_SAMPLE_ADDR) + !!(type & PERF_SAMPLE_ID) +
	     !!(type & PERF_SAMPLE_STREAM_ID);
	if (type & PERF_SAMPLE_CPU) {
		/* u32 cpu, u32 res: res is 0. */
		if (i >= n || attr_check__first32(w[i], !swapped) ||
		    attr_check__first32(w[i], swapped) >= MAX_NR_CPUS)
			return false;
		i++;
	}
	i += !!(type & PERF_SAMPLE_PERIOD);
	if (type & PERF_SAMPLE_READ) {
		u32 each = 1 + !!(fmt & PERF_FORMAT_ID) + !!(fmt & PERF_FORMAT_LOST);
		u32 times = !!(fmt & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			    !!(fmt & PERF_FORMAT_TOTAL_TIME_RUNNING);

		if (fmt & PERF_FORMAT_GROUP) {
			if (i >= n || !w[i] || w[i] > n)
				return false;
			i += 1 + times + w[i] * each;
		} else {
			i += times + each;
		}
	}
	if (type & PERF_SAMPLE_CALLCHAIN) {
		if (i >= n || w[i] > n - i - 1)
			return false;
		v = w[i++];
		/* perf_callchain_store_context() leads every chain. */
		if (v && i < n && w[i] < PERF_CONTEXT_MAX)
			return false;
		i += v;
	}
	if (type & PERF_SAMPLE_RAW) {
		/* u32 size, its bytes: the kernel pads them to u64. */
		if (i >= n || (4 + attr_check__first32(w[i], swapped)) % sizeof(u64))
			return false;
		i += (4 + (u64)attr_check__first32(w[i], swapped)) / sizeof(u64);
	}
	if (type & PERF_SAMPLE_BRANCH_STACK) {
		if (i >= n || w[i] > n)
			return false;
		v = w[i++];
		i += !!(attr->branch_sample_type & PERF_SAMPLE_BRANCH_HW_INDEX);
		i += v * (3 + !!(attr->branch_sample_type & PERF_SAMPLE_BRANCH_COUNTERS));
	}
	if ((type & PERF_SAMPLE_REGS_USER) &&
	    !attr_check__regs(w, n, &i, attr->sample_regs_user))
		return false;
	if (type & PERF_SAMPLE_STACK_USER) {
		if (i >= n)
			return false;
		v = w[i++];
		if (v) {
			if (v % sizeof(u64) || v / sizeof(u64) >= n - i)
				return false;
			i += v / sizeof(u64);
			if (w[i++] > v)		/* dyn_size */
				return false;
		}
	}
	i += !!(type & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT)) +
	     !!(type & PERF_SAMPLE_DATA_SRC) + !!(type & PERF_SAMPLE_TRANSACTION);
	if ((type & PERF_SAMPLE_REGS_INTR) &&
	    !attr_check__regs(w, n, &i, attr->sample_regs_intr))
		return false;
	i += !!(type & PERF_SAMPLE_PHYS_ADDR) + !!(type & PERF_SAMPLE_CGROUP);
	if (type & PERF_SAMPLE_DATA_PAGE_SIZE) {
		if (i >= n || (w[i] & (w[i] - 1)))
			return false;
		i++;
	}
	if (type & PERF_SAMPLE_CODE_PAGE_SIZE) {
		if (i >= n || (w[i] & (w[i] - 1)))
			return false;
		i++;
	}
	if (type & PERF_SAMPLE_AUX) {
		if (i >= n || w[i] % sizeof(u64) || w[i] / sizeof(u64) >= n - i)
			return false;
		i += 1 + w[i] / sizeof(u64);
	}
	return i == n;
}

/* The word of a sample where @type puts the id, -1: none. */
static int attr_check__id_pos(u64 type)
{
	if (type & PERF_SAMPLE_IDENTIFIER)
		return 0;
	if (!(type & PERF_SAMPLE_ID))
		return -1;
	return hweight64(type & (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				 PERF_SAMPLE_ADDR));
}

/* With several attrs, @ev is @evsel's by its id, where @id_pos puts it. */
static bool attr_check__is_evsels(struct evlist *evlist, struct evsel *evsel,
				  const union perf_event *ev, int id_pos)
{
	u32 n = (ev->header.size - sizeof(ev->header)) / sizeof(u64);

	if (evlist__nr_entries(evlist) < 2)
		return true;
	return id_pos >= 0 && (u32)id_pos < n &&
	       evlist__id2evsel_strict(evlist, ev->sample.array[id_pos]) == evsel;
}

/*
 * Samples of @evsel with @type that parse plausibly: with several attrs,
 * those whose id (where @type puts it) is one of @evsel's; their times
 * going backwards, a tie-breaker, in @back.  Marks them claimed.
 */
static int attr_check__score(struct attr_check *ac, struct evlist *evlist,
			     struct evsel *evsel, u64 type, int *back)
{
	int i, good = 0, id_pos = attr_check__id_pos(type);
	u64 prev = 0, time;

	*back = 0;
	for (i = 0; i < ac->nr; i++) {
		const union perf_event *ev = ac->samples[i];

		if (!attr_check__is_evsels(evlist, evsel, ev, id_pos))
			continue;
		if (!attr_check__sample(ev, type, &evsel->core.attr, &time, ac->swapped))
			continue;
		good++;
		ac->claimed[i] = true;
		if (time < prev)
			(*back)++;
		prev = time;
	}
	return good;
}

/*
 * The candidates in the order a tie is settled in: fields whose values
 * have a shape first (monotone times, pids, CPUs, callchain markers),
 * then the plain u64s perf record sets most.
 */
static const u8 attr_check__bits[] = {
	2, 1, 0, 5, 16, 7, 8, 6, 9, 3, 4, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 22, 23, 24,
};

/*
 * How well a layout fits: samples parsed, then times that go forward,
 * then the fields with a shape that every one of them passed, then IP
 * (perf record always samples it).
 */
static int attr_check__key(u64 type, int score, int back)
{
	return score * 32 + 16 * ((type & PERF_SAMPLE_TIME) && score && back * 4 <= score) +
	       8 * !!(type & PERF_SAMPLE_TID) + 4 * !!(type & PERF_SAMPLE_CPU) +
	       2 * !!(type & PERF_SAMPLE_CALLCHAIN) + !!(type & PERF_SAMPLE_IP);
}

/* The best layout found so far for an evsel's samples, and how many tie with it. */
struct attr_check_best {
	u64	type;
	int	score;		/* samples that parse with it */
	int	key;		/* attr_check__key() */
	int	others;		/* other one-bit candidates as good */
};

/* Try @cand as @evsel's sample_type; @ties: count the equally good ones. */
static void attr_check__try(struct attr_check *ac, struct evlist *evlist, struct evsel *evsel,
			    u64 cand, struct attr_check_best *best, bool ties)
{
	int back, score = attr_check__score(ac, evlist, evsel, cand, &back);
	int key = attr_check__key(cand, score, back);

	if (key > best->key)
		*best = (struct attr_check_best){ .type = cand, .score = score, .key = key };
	else if (ties && score && key == best->key)
		best->others++;
}

/* The sample_type the samples of @evsel parse with best; their number in @best_score. */
static u64 attr_check__best(struct attr_check *ac, struct evlist *evlist,
			    struct evsel *evsel, int *best_score, int *others)
{
	u64 cur = evsel->core.attr.sample_type, cand;
	struct attr_check_best best = { .type = cur };
	struct evsel *other;
	int back;
	size_t b;

	best.score = attr_check__score(ac, evlist, evsel, cur, &back);
	best.key = attr_check__key(cur, best.score, back);
	for (b = 0; b <= ARRAY_SIZE(attr_check__bits); b++) {
		/* Last: unknown bits all cleared. */
		cand = b < ARRAY_SIZE(attr_check__bits) ? cur ^ (1ULL << attr_check__bits[b]) :
							    cur & (PERF_SAMPLE_MAX - 1);
		if (cand != cur)
			attr_check__try(ac, evlist, evsel, cand, &best, /*ties=*/true);
	}
	/* Another attr's layout: a sample_type damaged in more than one bit. */
	evlist__for_each_entry(evlist, other) {
		cand = other->core.attr.sample_type;
		if (cand != cur && cand != best.type)
			attr_check__try(ac, evlist, evsel, cand, &best, /*ties=*/false);
	}
	*best_score = best.score;
	*others = best.others;
	return best.type;
}

#define ATTR_CHECK_SAMPLE_ID	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | \
				 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/*
 * The sample_id fields perf record gives every attr (see below), as the
 * attrs but @evsel agree on them; -1: they do not, or there are none.
 */
static u64 attr_check__others_sample_id(struct evlist *evlist, struct evsel *evsel)
{
	struct evsel *other;
	u64 want = -1ULL;

	evlist__for_each_entry(evlist, other) {
		u64 bits = other->core.attr.sample_type & ATTR_CHECK_SAMPLE_ID;

		if (other == evsel)
			continue;
		if (want != -1ULL && bits != want)
			return -1ULL;
		want = bits;
	}
	return want;
}

/* @evsel read with @type from now on: the layout the check found. */
static void attr_check__set_type(struct evsel *evsel, u64 type)
{
	evsel->core.attr.sample_type = type;
	evsel->sample_size = __evsel__sample_size(type);
	evsel__calc_id_pos(evsel);
}

/*
 * An attr without samples to check (the dummy event of -a, which carries
 * the side-band records) still lays out the sample_id of its records:
 * perf record gives every attr the same sample_id fields, and the reader
 * takes one id_hdr_size for all records (evlist__id_hdr_size()).  When
 * the others agree and its fields differ from theirs by one bit, that bit
 * is the damage.
 */
static void attr_check__sample_id(struct perf_session *session, struct attr_check *ac)
{
	struct evlist *evlist = session->evlist;
	struct evsel *evsel;
	int back;

	evlist__for_each_entry(evlist, evsel) {
		u64 mine = evsel->core.attr.sample_type & ATTR_CHECK_SAMPLE_ID, want;

		if (!evsel->core.attr.sample_id_all ||
		    attr_check__score(ac, evlist, evsel, evsel->core.attr.sample_type, &back))
			continue;
		want = attr_check__others_sample_id(evlist, evsel);
		if (want == -1ULL || hweight64(mine ^ want) != 1)
			continue;
		pr_warning("WARNING: %s: attr %d (%s) has no samples to check its sample_type %#"
			   PRIx64
			   " against, and its sample_id fields are one bit (%#" PRIx64
			   ") off the other attrs': taking theirs\n",
			   perf_header__path(&session->header), evsel->core.idx, evsel__name(evsel),
			   (u64)evsel->core.attr.sample_type, mine ^ want);
		attr_check__set_type(evsel, evsel->core.attr.sample_type ^ mine ^ want);
		session->header.damaged_sample_types++;
	}
}

/*
 * The u64s of a record's body before its sample_id, for the records whose
 * body has a fixed size (or says its size: CALLCHAIN_DEFERRED's nr); -1
 * for the others (names and paths padded to u64).
 */
static int attr_check__record_body(const union perf_event *ev, u32 n)
{
	switch (ev->header.type) {
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
		return 3;
	case PERF_RECORD_LOST:
		return 2;
	case PERF_RECORD_LOST_SAMPLES:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return 1;
	case PERF_RECORD_SWITCH:
		return 0;
	case PERF_RECORD_CALLCHAIN_DEFERRED:
		/* cookie, nr, then nr ips */
		return n >= 2 && ev->sample.array[1] <= n - 2 ? 2 + (int)ev->sample.array[1] : -1;
	default:
		return -1;
	}
}

/*
 * Whether the sample_id of the record @ev is @evsel's under @type: the
 * fields perf_evsel__parse_id_sample() reads back from the record's end
 * fit it (exactly, for a body of known size), its pid/tid and CPU have
 * their shape, and its id is one of @evsel's.
 */
static bool attr_check__record(struct evlist *evlist, struct evsel *evsel,
			       const union perf_event *ev, u64 type)
{
	const __u64 *w = ev->sample.array;
	u32 n = (ev->header.size - sizeof(ev->header)) / sizeof(u64);
	u32 k = hweight64(type & ATTR_CHECK_SAMPLE_ID);
	int body = attr_check__record_body(ev, n);
	u64 id = 0;

	if (!(type & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) || k > n ||
	    (body >= 0 && (u32)body + k != n))
		return false;
	w += n;
	if (type & PERF_SAMPLE_IDENTIFIER)
		id = *--w;
	if (type & PERF_SAMPLE_CPU) {
		--w;
		if ((u32)*w >= MAX_NR_CPUS || *w >> 32)
			return false;
	}
	if (type & PERF_SAMPLE_STREAM_ID)
		--w;
	if (type & PERF_SAMPLE_ID)
		id = *--w;
	if (type & PERF_SAMPLE_TIME)
		--w;
	if (type & PERF_SAMPLE_TID) {
		--w;
		if (!attr_check__pid((u32)*w) || !attr_check__pid(*w >> 32))
			return false;
	}
	return evlist__id2evsel_strict(evlist, id) == evsel;
}

void attr_check__pipe_record(struct perf_session *session, const union perf_event *event)
{
	struct evlist *evlist = session->evlist;
	struct evsel *evsel;

	if (event->header.type == PERF_RECORD_SAMPLE ||
	    event->header.type >= PERF_RECORD_USER_TYPE_START ||
	    event->header.size % sizeof(u64) || evlist__nr_entries(evlist) < 2)
		return;
	evlist__for_each_entry(evlist, evsel) {
		u64 cur = evsel->core.attr.sample_type, mine = cur & ATTR_CHECK_SAMPLE_ID;
		u64 want = attr_check__others_sample_id(evlist, evsel);

		if (!evsel->core.attr.sample_id_all || want == -1ULL ||
		    hweight64(mine ^ want) != 1 ||
		    !attr_check__record(evlist, evsel, event, cur ^ mine ^ want) ||
		    attr_check__record(evlist, evsel, event, cur))
			continue;
		pr_warning("WARNING: %s: the records of attr %d (%s) do not parse with its sample_type %#"
			   PRIx64 ", and its sample_id fields are one bit (%#" PRIx64
			   ") off the other attrs', with which they do: taking theirs\n",
			   perf_header__path(&session->header), evsel->core.idx, evsel__name(evsel),
			   cur, mine ^ want);
		attr_check__set_type(evsel, evsel->core.attr.sample_type ^ mine ^ want);
		evlist__set_id_pos(evlist);
		evlist__combined_sample_type(evlist);
		perf_session__set_id_hdr_size(session);
		session->header.damaged_sample_types++;
		return;
	}
}

/*
 * The ids of the attrs found from their samples.  With several attrs a
 * sample is its attr's by the id it carries (PERF_SAMPLE_IDENTIFIER or
 * ID): one damaged ids section and every sample of that attr has an id
 * no attr has.  Such an id goes to the attr whose own ids claim no sample
 * (its section is the damaged one) and whose layout parses the samples
 * of that id, when only one does; attrs of one layout (two events
 * recorded alike) are told apart by the order the kernel gave the ids in:
 * perf record opens the attrs one after the other, each takes the next
 * ids (perf_event_alloc()), as many as its ids section has slots.
 */
struct attr_check_id {
	u64	id;
	u64	evsels;		/* bit per evsel index that parses its samples */
};

static int attr_check_id__cmp(const void *a, const void *b)
{
	const struct attr_check_id *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int attr_check__set_ids(struct evlist *evlist, struct evsel *evsel,
			       const u64 *ids, int nr)
{
	int i;

	perf_evsel__free_id(&evsel->core);
	if (perf_evsel__alloc_id(&evsel->core, 1, nr))
		return -ENOMEM;
	for (i = 0; i < nr; i++)
		perf_evlist__id_add(evlist__core(evlist), &evsel->core, 0, i, ids[i]);
	return 0;
}

/*
 * The events in @buf, @len bytes of a file of the other byte order, in
 * this one: their headers, then every u64 after (perf_event__all64_swap(),
 * what the session does to a sample before parsing it), up to the first
 * event that is not whole.
 */
static void attr_check__swap_events(u8 *buf, u64 len)
{
	u64 off = 0;

	while (off + sizeof(struct perf_event_header) <= len) {
		union perf_event *ev = (void *)(buf + off);

		perf_event_header__bswap(&ev->header);
		if (ev->header.size < sizeof(ev->header) || ev->header.size > len - off ||
		    ev->header.size % sizeof(u64))
			return;
		mem_bswap_64((void *)ev + sizeof(ev->header), ev->header.size - sizeof(ev->header));
		off += ev->header.size;
	}
}

static void attr_check__ids(struct perf_session *session, struct attr_check *ac, int fd)
{
	struct perf_header *ph = &session->header;
	struct evlist *evlist = session->evlist;
	u64 rec[ATTR_CHECK_REC_IDS];
	int is_pos = -2, nr_rec = 0;
	u8 *buf = NULL;
	u64 pos = 0;
	int nr = evlist__nr_entries(evlist), id_pos = -1, nr_ids = 0, i, j, back;
	struct attr_check_id *ids = NULL;
	u64 suspects = 0, given = 0, by_order = 0, by_records = 0;
	struct evsel *evsel;
	u64 **new = NULL;
	int *nr_new = NULL;

	if (nr < 2 || nr > 64)
		return;
	evlist__for_each_entry(evlist, evsel) {
		int at = attr_check__id_pos(evsel->core.attr.sample_type);

		if (at < 0 || (id_pos >= 0 && at != id_pos))
			return;
		id_pos = at;
		if (!evsel->core.attr.sample_id_all || (is_pos != -2 && evsel->is_pos != is_pos))
			is_pos = -1;
		else if (is_pos == -2)
			is_pos = evsel->is_pos;
		if (!attr_check__score(ac, evlist, evsel, evsel->core.attr.sample_type, &back))
			suspects |= 1ULL << evsel->core.idx;
	}
	/* The whole data: an attr's other ids show up with their CPUs, later. */
	ids = calloc(ATTR_CHECK_IDS, sizeof(*ids));
	buf = malloc(ATTR_CHECK_BYTES);
	if (!ids || !buf)
		goto out;
	while (pos < ph->data_size) {
		u64 len = min_t(u64, ph->data_size - pos, ATTR_CHECK_BYTES), off = 0;

		if (pread(fd, buf, len, ph->data_offset + pos) != (ssize_t)len)
			break;
		if (ac->swapped)
			attr_check__swap_events(buf, len);
		while (off + sizeof(struct perf_event_header) <= len) {
			const union perf_event *ev = (const void *)(buf + off);
			u32 n;
			u64 id, ok = 0, t;

			/*
			 * perf record writes records of whole u64s: past one
			 * that is not, the rest is not read in place (UBSan:
			 * misaligned); the ids seen so far are what there is.
			 */
			if (!IS_ALIGNED(off, sizeof(u64)))
				goto scanned;
			n = (ev->header.size - sizeof(ev->header)) / sizeof(u64);
			if (ev->header.size < sizeof(ev->header))
				goto scanned;
			if (ev->header.size > len - off)
				break;
			off += ev->header.size;
			if (ev->header.type != PERF_RECORD_SAMPLE) {
				/*
				 * A record's sample_id: its id is the is_pos-th
				 * u64 from the end, counting from 1, as
				 * evlist__event2id() reads it.
				 */
				if (ev->header.type >= PERF_RECORD_USER_TYPE_START || is_pos < 1 ||
				    (u32)is_pos > n || nr_rec >= ATTR_CHECK_REC_IDS)
					continue;
				id = ev->sample.array[n - is_pos];
				if (!id || evlist__id2evsel_strict(evlist, id))
					continue;
				for (j = 0; j < nr_rec && rec[j] != id; j++)
					;
				if (j == nr_rec)
					rec[nr_rec++] = id;
				continue;
			}
			if ((u32)id_pos >= n)
				continue;
			id = ev->sample.array[id_pos];
			if (evlist__id2evsel_strict(evlist, id))
				continue;
			evlist__for_each_entry(evlist, evsel) {
				if ((suspects >> evsel->core.idx & 1) &&
				    attr_check__sample(ev, evsel->core.attr.sample_type,
						       &evsel->core.attr, &t, ac->swapped))
					ok |= 1ULL << evsel->core.idx;
			}
			for (j = 0; j < nr_ids && ids[j].id != id; j++)
				;
			if (j == nr_ids && nr_ids < ATTR_CHECK_IDS) {
				ids[nr_ids].id = id;
				ids[nr_ids++].evsels = ok;
			} else if (j < nr_ids && ok) {
				/* A damaged sample parses with none: not a vote. */
				ids[j].evsels = ids[j].evsels ? ids[j].evsels & ok : ok;
			}
		}
		if (!off)
			break;
		pos += off;
	}
scanned:
	if (!nr_ids && !nr_rec)
		goto out;
	qsort(ids, nr_ids, sizeof(*ids), attr_check_id__cmp);

	new = calloc(nr, sizeof(*new));
	nr_new = calloc(nr, sizeof(*nr_new));
	if (!new || !nr_new)
		goto out;
	for (i = 0; i < nr; i++) {
		new[i] = calloc(nr_ids + nr_rec, sizeof(u64));
		if (!new[i])
			goto out;
	}
	/* By layout: the one suspect attr that parses the id's samples. */
	for (i = 0; i < nr_ids; i++) {
		if (hweight64(ids[i].evsels) == 1) {
			j = __builtin_ctzll(ids[i].evsels);
			new[j][nr_new[j]++] = ids[i].id;
			given |= 1ULL << j;
			ids[i].evsels = 0;
		}
	}
	/*
	 * By order: the ids left go to the suspect attrs of their layout in
	 * index order, each a block of as many ids as its section has slots,
	 * the blocks one after the other: an id goes where every first id
	 * such blocks could start at puts it.
	 */
	for (i = 0; i < nr_ids && !ids[i].evsels; i++)
		;
	if (i < nr_ids) {
		u64 set = 0, lo = ~0ULL, hi = 0, base;
		u32 slots = 0;

		for (j = i; j < nr_ids; j++) {
			if (!ids[j].evsels)
				continue;
			set |= ids[j].evsels;
			lo = min(lo, ids[j].id);
			hi = max(hi, ids[j].id);
		}
		evlist__for_each_entry(evlist, evsel)
			if (set >> evsel->core.idx & 1)
				slots += evsel->core.ids;
		for (j = i; slots && hi - lo < slots && j < nr_ids; j++) {
			int owner = -1;

			if (!ids[j].evsels)
				continue;
			for (base = hi + 1 >= slots ? hi + 1 - slots : 0; base <= lo; base++) {
				u64 at = ids[j].id - base;
				int whose = -1;

				evlist__for_each_entry(evlist, evsel) {
					if (!(set >> evsel->core.idx & 1))
						continue;
					if (at < evsel->core.ids) {
						whose = evsel->core.idx;
						break;
					}
					at -= evsel->core.ids;
				}
				if (owner == -1)
					owner = whose;
				else if (owner != whose)
					owner = -2;
			}
			if (owner < 0 || !(ids[j].evsels >> owner & 1))
				continue;
			new[owner][nr_new[owner]++] = ids[j].id;
			given |= 1ULL << owner;
			by_order |= 1ULL << owner;
			ids[j].evsels = 0;
		}
	}
	/*
	 * The one suspect attr left without samples (the dummy event of -a)
	 * takes the ids left on records: its side-band records carry them.
	 */
	if (nr_rec && hweight64(suspects & ~given) == 1) {
		int idx = __builtin_ctzll(suspects & ~given);

		for (i = 0; i < nr_rec; i++) {
			bool taken = false;
			int k, m;

			for (k = 0; k < nr && !taken; k++)
				for (m = 0; m < nr_new[k] && !taken; m++)
					taken = new[k][m] == rec[i];
			if (!taken)
				new[idx][nr_new[idx]++] = rec[i];
		}
		if (nr_new[idx]) {
			given |= 1ULL << idx;
			by_records |= 1ULL << idx;
		}
	}
	for (i = 0, j = 0; i < nr_ids; i++)
		j += !!ids[i].evsels;
	if (j)
		pr_warning("WARNING: %s: %d ids of the samples are no attr's, and their attr cannot be told: their samples are skipped\n",
			   perf_header__path(&session->header), j);
	if (!given)
		goto out;
	/* The ids hash is rebuilt: every evsel's entries point into its own array. */
	perf_evlist__reset_id_hash(evlist__core(evlist));
	evlist__for_each_entry(evlist, evsel) {
		int idx = evsel->core.idx, n = evsel->core.ids;
		u64 *copy = NULL;

		if (given >> idx & 1) {
			pr_warning("WARNING: %s: no sample has an id of attr %d (%s): the %d ids of samples that no attr has and that parse as its samples are taken as its ids (%s)\n",
				   perf_header__path(&session->header), idx, evsel__name(evsel),
				   nr_new[idx],
				   by_records >> idx & 1 ? "the one attr left, ids of records" :
				   by_order >> idx & 1 ? "by layout and the order of the ids" :
				   "by layout");
			copy = new[idx];
			new[idx] = evsel->core.id;
			evsel->core.id = copy;
			copy = NULL;
			n = nr_new[idx];
		}
		if (n) {
			copy = memdup(evsel->core.id, n * sizeof(u64));
			if (!copy)
				goto out;
		}
		if (attr_check__set_ids(evlist, evsel, copy, n)) {
			free(copy);
			goto out;
		}
		free(copy);
	}
	session->header.damaged_ids += hweight64(given);
out:
	if (new)
		for (i = 0; i < nr; i++)
			free(new[i]);
	free(new);
	free(nr_new);
	free(ids);
	free(buf);
}

bool attr_check__sample_claimed(struct evlist *evlist, const union perf_event *event)
{
	struct evsel *evsel;
	u64 time;

	evlist__for_each_entry(evlist, evsel) {
		u64 type = evsel->core.attr.sample_type;

		if (attr_check__is_evsels(evlist, evsel, event, attr_check__id_pos(type)) &&
		    attr_check__sample(event, type, &evsel->core.attr, &time, false))
			return true;
	}
	return false;
}

/*
 * The check of the samples in @buf, @len bytes of whole events from the
 * start of the data or, in a pipe, from a sample no attr claims; with
 * @fd (a file, -1 for a pipe), the ids found in the whole data too.
 */
static void attr_check__run(struct perf_session *session, const u8 *buf, u64 len, int fd,
			    bool swapped)
{
	struct perf_header *ph = &session->header;
	struct evlist *evlist = session->evlist;
	struct attr_check *ac;
	struct evsel *evsel;
	bool all = true;
	int i, back;
	u64 off;

	ac = zalloc(sizeof(*ac));
	if (!ac)
		return;
	ac->swapped = swapped;
	for (off = 0; off + sizeof(struct perf_event_header) <= len &&
	     ac->nr < ATTR_CHECK_SAMPLES;) {
		const union perf_event *ev = (const void *)(buf + off);

		/* Whole u64s, as perf record writes them: the check reads those. */
		if (!IS_ALIGNED(off, sizeof(u64)) ||
		    ev->header.size < sizeof(ev->header) || ev->header.size > len - off)
			break;
		if (ev->header.type == PERF_RECORD_SAMPLE)
			ac->samples[ac->nr++] = ev;
		off += ev->header.size;
	}
	ac->claimed = calloc(ac->nr, sizeof(bool));
	if (!ac->nr || !ac->claimed)
		goto out;

	/* The fast path: every sample is some attr's as it says. */
	evlist__for_each_entry(evlist, evsel)
		attr_check__score(ac, evlist, evsel, evsel->core.attr.sample_type, &back);
	for (i = 0; i < ac->nr; i++)
		all &= ac->claimed[i];
	if (all)
		goto out_sample_id;

	evlist__for_each_entry(evlist, evsel) {
		u64 cur = evsel->core.attr.sample_type, type;
		int had, score, others;

		had = attr_check__score(ac, evlist, evsel, cur, &back);
		type = attr_check__best(ac, evlist, evsel, &score, &others);
		if (type == cur || score <= had)
			continue;
		pr_warning("WARNING: %s: the samples of attr %d (%s) do not parse with its sample_type %#"
			   PRIx64 ": %d of the first %d do with %#" PRIx64 " (bits %#" PRIx64
			   " set, %#" PRIx64
			   " cleared; %d other layouts as well), %d with its own: reading them so\n",
			   perf_header__path(&session->header), evsel->core.idx, evsel__name(evsel),
			   cur, score, ac->nr, type, type & ~cur, cur & ~type, others, had);
		attr_check__set_type(evsel, type);
		ph->damaged_sample_types++;
	}
	if (fd >= 0)
		attr_check__ids(session, ac, fd);
out_sample_id:
	attr_check__sample_id(session, ac);
	if (ph->damaged_sample_types) {
		evlist__set_id_pos(evlist);
		evlist__combined_sample_type(evlist);
	}
out:
	free(ac->claimed);
	free(ac);
}

void attr_check__file(struct perf_session *session, int fd)
{
	struct perf_header *ph = &session->header;
	u64 len = min_t(u64, ph->data_size, ATTR_CHECK_BYTES);
	u8 *buf;

	/* Pipes are checked as they are read (attr_check__pipe()). */
	if (!len || !evlist__nr_entries(session->evlist))
		return;
	buf = malloc(len);
	if (buf && pread(fd, buf, len, ph->data_offset) == (ssize_t)len) {
		/*
		 * A file of the other byte order: its events in this one, u64
		 * by u64 as the session swaps a sample.
		 */
		if (ph->needs_swap)
			attr_check__swap_events(buf, len);
		attr_check__run(session, buf, len, fd, ph->needs_swap);
	}
	free(buf);
}

void attr_check__pipe(struct perf_session *session, const void *buf, u64 len)
{
	if (session->header.needs_swap || !evlist__nr_entries(session->evlist))
		return;
	attr_check__run(session, buf, min_t(u64, len, ATTR_CHECK_BYTES), -1, false);
}
