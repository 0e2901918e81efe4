// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred user callchains known ahead: see deferred-index.h for the
 * contract.  The records in file order, an open-addressing table of their
 * indices probed linearly, and the copies of the few records whose
 * frames hold bad entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hash.h>
#include <linux/perf_event.h>
#include <linux/zalloc.h>

#include "deferred-index.h"

#define DI_BITS_MIN	10
/*
 * The frames of a record with bad entries, without them: rare (garbage
 * in a return-address slot), so one allocation each.
 */
struct di_copy {
	struct di_copy	*next;
	u64		ips[];
};

/*
 * A slot of the table: the record's index + 1 (0: free), and bits of its
 * hash that are not the slot's, so that a probe reads the record only
 * when they match.
 */
struct di_slot {
	u32	rec;
	u32	tag;
};

/* An exec COMM, or an EXIT, of a task at a time. */
struct di_event {
	u64	task;
	u64	time;
	/*
	 * An exec's: the earliest record of the task at or after it + 1;
	 * an EXIT's: the time of the latest record of the task before it.
	 */
	u64	rec;
};

/* Events by task, then time, once sorted. */
struct di_events {
	struct di_event	*ev;
	u64		nr;
	u64		alloc;
	bool		sorted;
};

struct deferred_index {
	struct deferred_record	*recs;		/* in file order */
	u64			nr;
	u64			alloc;
	struct di_slot		*table;
	unsigned int		bits;
	u64			next;		/* deferred_index__next_at()'s place */
	struct di_copy		*copies;
	struct di_events	execs;
	struct di_events	exits;
	u64			bytes;		/* all of the above */
};

struct deferred_index *deferred_index__new(void)
{
	struct deferred_index *idx = zalloc(sizeof(*idx));

	if (!idx)
		return NULL;
	idx->bits = DI_BITS_MIN;
	idx->table = calloc(1UL << idx->bits, sizeof(*idx->table));
	if (!idx->table) {
		free(idx);
		return NULL;
	}
	idx->bytes = sizeof(*idx) + (sizeof(*idx->table) << idx->bits);
	return idx;
}

void deferred_index__delete(struct deferred_index *idx)
{
	struct di_copy *c, *next;

	if (!idx)
		return;
	for (c = idx->copies; c; c = next) {
		next = c->next;
		free(c);
	}
	free(idx->execs.ev);
	free(idx->exits.ev);
	free(idx->table);
	free(idx->recs);
	free(idx);
}

/*
 * Cookies differ in their low bits (the CPU) and in their high half (that
 * CPU's counter); tids in their low bits.  hash_64() takes the top bits of
 * a multiplication, where all of them count: the middle bits put nearly
 * every cookie of a recording into a few runs of slots.  32 of them: the
 * slot is their top bits, and the table has fewer than 2^32 slots.
 */
static u32 di__hash(u64 task, u64 cookie)
{
	return hash_64(cookie ^ (task * GOLDEN_RATIO_64), 32);
}

/* The slot of (@task, @cookie): its record's, or the free one ending the probe. */
static struct di_slot *di__probe(const struct deferred_index *idx, u64 task, u64 cookie)
{
	u32 tag = di__hash(task, cookie);
	u64 mask = (1ULL << idx->bits) - 1, i = tag >> (32 - idx->bits);

	/* Half full at most: a free slot ends every probe. */
	for (;; i = (i + 1) & mask) {
		struct di_slot *slot = &idx->table[i];
		const struct deferred_record *r;

		if (!slot->rec)
			return slot;
		if (slot->tag != tag)
			continue;
		r = &idx->recs[slot->rec - 1];
		if (r->cookie == cookie && r->task == task)
			return slot;
	}
}

static int di__grow_table(struct deferred_index *idx)
{
	struct di_slot *old = idx->table;
	u64 i, n = 1ULL << idx->bits;

	idx->table = calloc(n * 2, sizeof(*idx->table));
	if (!idx->table) {
		idx->table = old;
		return -ENOMEM;
	}
	idx->bits++;
	for (i = 0; i < n; i++) {
		const struct deferred_record *r;

		if (!old[i].rec)
			continue;
		r = &idx->recs[old[i].rec - 1];
		*di__probe(idx, r->task, r->cookie) = old[i];
	}
	free(old);
	idx->bytes += sizeof(*old) * n;
	return 0;
}

/* Garbage in a return-address slot reads as a context marker. */
static bool di__bad_ip(u64 ip)
{
	return ip >= PERF_CONTEXT_MAX;
}

u64 deferred_index__copy_ips(u64 *dst, const u64 *src, u64 nr)
{
	u64 i, n = 0;

	for (i = 0; i < nr; i++) {
		if (!di__bad_ip(src[i]))
			dst[n++] = src[i];
	}
	return n;
}

/* @r's frames, @ips without their bad entries, in a copy of the index's. */
static int di__copy(struct deferred_index *idx, struct deferred_record *r,
		    const u64 *ips, u64 nr)
{
	struct di_copy *c = malloc(sizeof(*c) + nr * sizeof(u64));

	if (!c)
		return -ENOMEM;
	idx->bytes += sizeof(*c) + nr * sizeof(u64);
	c->next = idx->copies;
	idx->copies = c;
	r->nr = deferred_index__copy_ips(c->ips, ips, nr);
	r->ips = c->ips;
	return 0;
}

/* Room in *@array (of @size bytes each, *@alloc of them) for one more after @nr. */
static int di__room(struct deferred_index *idx, void **array, u64 *alloc, u64 nr,
		    size_t size, u64 first)
{
	u64 more = *alloc ? *alloc * 2 : first;
	void *p;

	if (nr < *alloc)
		return 0;
	p = realloc(*array, more * size);
	if (!p)
		return -ENOMEM;
	idx->bytes += (more - *alloc) * size;
	*array = p;
	*alloc = more;
	return 0;
}

int deferred_index__add(struct deferred_index *idx, u64 task, u64 cookie, u64 time,
			u64 file_offset, const u64 *ips, u64 nr)
{
	struct deferred_record *r;
	struct di_slot *slot;
	u64 i;

	if (!cookie)
		return -EINVAL;
	/* Indices in u32, slots counted by 32 bits of hash. */
	if (idx->nr >= (1U << 30))
		return -ENOMEM;
	if ((idx->nr + 1) * 2 > 1ULL << idx->bits && di__grow_table(idx))
		return -ENOMEM;
	slot = di__probe(idx, task, cookie);
	if (slot->rec)
		return 0;
	if (di__room(idx, (void **)&idx->recs, &idx->alloc, idx->nr, sizeof(*idx->recs), 1024))
		return -ENOMEM;
	r = &idx->recs[idx->nr];
	memset(r, 0, sizeof(*r));
	r->ips = ips;
	r->nr = nr;
	for (i = 0; i < nr; i++) {
		if (di__bad_ip(ips[i]))
			break;
	}
	if (i < nr && di__copy(idx, r, ips, nr))
		return -ENOMEM;
	r->bad_ips = nr - r->nr;
	r->task = task;
	r->cookie = cookie;
	r->time = time;
	r->file_offset = file_offset;
	slot->rec = ++idx->nr;
	slot->tag = di__hash(task, cookie);
	return 0;
}

static int di_events__add(struct deferred_index *idx, struct di_events *evs, u64 task, u64 time)
{
	if (di__room(idx, (void **)&evs->ev, &evs->alloc, evs->nr, sizeof(*evs->ev), 64))
		return -ENOMEM;
	evs->ev[evs->nr++] = (struct di_event){ .task = task, .time = time };
	evs->sorted = false;
	return 0;
}

int deferred_index__add_exec(struct deferred_index *idx, u64 task, u64 time)
{
	return di_events__add(idx, &idx->execs, task, time);
}

int deferred_index__add_exit(struct deferred_index *idx, u64 task, u64 time)
{
	return di_events__add(idx, &idx->exits, task, time);
}

static int di_event__cmp(const void *a, const void *b)
{
	const struct di_event *x = a, *y = b;

	if (x->task != y->task)
		return x->task < y->task ? -1 : 1;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return 0;
}

static void di_events__sort(struct di_events *evs)
{
	/* qsort() of none would be of a NULL array. */
	if (!evs->sorted && evs->nr > 1)
		qsort(evs->ev, evs->nr, sizeof(*evs->ev), di_event__cmp);
	evs->sorted = true;
}

/* How many events sort before (@task, @time), or at it too when @at. */
static u64 di_events__rank(const struct di_events *evs, u64 task, u64 time, bool at)
{
	u64 lo = 0, hi = evs->nr;

	while (lo < hi) {
		u64 mid = lo + (hi - lo) / 2;
		const struct di_event *e = &evs->ev[mid];

		if (e->task < task || (e->task == task && (e->time < time ||
							   (at && e->time == time))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void deferred_index__seal(struct deferred_index *idx)
{
	struct di_events *execs = &idx->execs;
	u64 i, n;

	if (execs->nr) {
		di_events__sort(execs);
		for (i = 0; i < idx->nr; i++) {
			const struct deferred_record *r = &idx->recs[i];
			struct di_event *e;

			/* The task's latest exec at or before the record. */
			n = di_events__rank(execs, r->task, r->time, /*at=*/true);
			if (!n || execs->ev[n - 1].task != r->task)
				continue;
			e = &execs->ev[n - 1];
			if (!e->rec || r->time < idx->recs[e->rec - 1].time)
				e->rec = i + 1;
		}
		for (i = 0; i < execs->nr; i++) {
			if (execs->ev[i].rec)
				idx->recs[execs->ev[i].rec - 1].exec = true;
		}
	}
	idx->bytes -= execs->alloc * sizeof(*execs->ev);
	zfree(&execs->ev);
	execs->nr = 0;
	execs->alloc = 0;
}

struct deferred_record *deferred_index__find(const struct deferred_index *idx,
					     u64 task, u64 cookie)
{
	const struct di_slot *slot;

	if (!cookie)
		return NULL;
	slot = di__probe(idx, task, cookie);
	return slot->rec ? &idx->recs[slot->rec - 1] : NULL;
}

struct deferred_record *deferred_index__next_at(struct deferred_index *idx, u64 file_offset)
{
	while (idx->next < idx->nr && idx->recs[idx->next].file_offset < file_offset)
		idx->next++;
	if (idx->next < idx->nr && idx->recs[idx->next].file_offset == file_offset)
		return &idx->recs[idx->next++];
	return NULL;
}

/*
 * The EXITs, sorted, with the time of each one's task's latest record
 * before it: on the first question only, as most recordings lose no
 * record and never ask.
 */
static void di__sort_exits(struct deferred_index *idx)
{
	struct di_events *exits = &idx->exits;
	u64 i, n;

	if (exits->sorted)
		return;
	di_events__sort(exits);
	for (i = 0; exits->nr && i < idx->nr; i++) {
		const struct deferred_record *r = &idx->recs[i];
		struct di_event *e;

		/* The task's first EXIT after the record: its own task's. */
		n = di_events__rank(exits, r->task, r->time, /*at=*/false);
		if (n == exits->nr || exits->ev[n].task != r->task)
			continue;
		e = &exits->ev[n];
		if (r->time > e->rec)
			e->rec = r->time;
	}
}

bool deferred_index__exited(struct deferred_index *idx, u64 task, u64 time)
{
	const struct di_events *exits = &idx->exits;
	u64 n;

	di__sort_exits(idx);
	n = di_events__rank(exits, task, time, /*at=*/false);
	return n < exits->nr && exits->ev[n].task == task && exits->ev[n].rec < time;
}

u64 deferred_index__bytes(const struct deferred_index *idx)
{
	return idx->bytes;
}

u64 deferred_index__orphans(const struct deferred_index *idx)
{
	u64 i, n = 0;

	for (i = 0; i < idx->nr; i++) {
		const struct deferred_record *r = &idx->recs[i];

		if (r->seen && !r->used && !r->exec)
			n++;
	}
	return n;
}
