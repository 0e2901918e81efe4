// SPDX-License-Identifier: GPL-2.0
/*
 * Unwind style "sframe": walk PERF_SAMPLE_STACK_USER snapshots with the
 * .sframe sections of the DSOs the PCs fall in.
 *
 * "sframe" is hybrid: where a PC has no .sframe row (no Debian system
 * library ships .sframe, libc included; crt code has no FDE either), the
 * DSO's .eh_frame row is used if it has SFrame's shape, and SFrame resumes
 * in the callers above; only a row the walker cannot follow hands the rest
 * of the stack to libdw, from the last frame SFrame unwound.
 * "sframe-only" stops at the first frame without .sframe instead, to see
 * what SFrame alone gives; followed by other styles (--unwind-style
 * sframe-only,libdw), it gives nothing for a sample whose first frame has
 * no .sframe row, so that the next style unwinds it ("tried in order until
 * one gives frames").
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/mman.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "addr_location.h"
#include "callchain.h"
#include "debug.h"
#include "dso.h"
#include "dsos.h"
#include "env.h"
#include "evsel.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "perf_regs.h"
#include "sample.h"
#include "sframe.h"
#include "sframe-dso.h"
#include "sframe-walk.h"
#include "symbol.h"
#include "thread.h"
#include "unwind.h"
#include "unwind-sframe.h"
#include "util.h"

/*
 * The counters are the machine's (struct machine's sframe_stats): the
 * samples of a machine are unwound by one thread at a time, the one that
 * delivers the session's events (perf report, perf script, perf inject:
 * the main thread; perf top: its event processing thread), as for the
 * session's events_stats and the dso's libdw state.  So they need no lock.
 * A session's block sums its machines' counters, with the sections each
 * dso's SFrame state rejected (sframe-dso.h).
 */
static struct unwind_sframe_stats *unwind_sframe__stats(struct thread *thread)
{
	return &maps__machine(thread__maps(thread))->sframe_stats;
}

/* A session's block: its machines' counters, its dsos' rejected sections. */
struct unwind_sframe_sum {
	struct unwind_sframe_stats	st;
	u64				rejected;
	FILE				*fp;	/* to list the rejected ones */
	size_t				printed;
};

/*
 * A dsos__for_each_dso() callback: count @dso if its section was
 * rejected and, given a @sum->fp, print why.
 */
static int unwind_sframe__fprintf_rejected(struct dso *dso, void *arg)
{
	struct unwind_sframe_sum *sum = arg;
	const char *why;

	if (!dso__sframe_rejected(dso, &why))
		return 0;
	sum->rejected++;
	if (sum->fp)
		sum->printed += fprintf(sum->fp, "    %s\n", why);
	return 0;
}

static void unwind_sframe__sum_machine(struct machine *machine,
				       struct unwind_sframe_sum *sum)
{
	const struct unwind_sframe_stats *st = &machine->sframe_stats;

	sum->st.samples += st->samples;
	sum->st.snapshots += st->snapshots;
	sum->st.frames += st->frames;
	sum->st.cfi_frames += st->cfi_frames;
	sum->st.fallback_frames += st->fallback_frames;
	sum->st.fp_frames += st->fp_frames;
	sum->st.no_sframe += st->no_sframe;
	sum->st.stopped += st->stopped;
	dsos__for_each_dso(&machine->dsos, unwind_sframe__fprintf_rejected, sum);
}

/*
 * Sum the host's and the guests' counters into @sum; with a @sum->fp,
 * list their rejected sections.  Whether there is anything to say.
 */
static bool unwind_sframe__sum(struct machines *machines,
			       struct unwind_sframe_sum *sum)
{
	unwind_sframe__sum_machine(&machines->host, sum);
	for (struct rb_node *nd = rb_first_cached(&machines->guests); nd;
	     nd = rb_next(nd))
		unwind_sframe__sum_machine(rb_entry(nd, struct machine, rb_node), sum);
	return sum->st.samples || sum->st.snapshots || sum->rejected;
}

/*
 * What the counters say the user did not ask for.  perf report prints
 * either its header line or the --stats block, perf script the block: so
 * this is said once per session.
 */
static void unwind_sframe__warn_summary(const struct unwind_sframe_stats *st)
{
	if (st->samples && st->no_sframe == st->samples)
		pr_warning("SFrame: none of the %" PRIu64 " samples unwound had a .sframe row on its stack%s\n",
			   st->samples,
			   st->cfi_frames || st->fallback_frames ?
			   ": their caller frames came from .eh_frame and libdw" : "");
}

static size_t unwind_sframe__fprintf_rows(const struct unwind_sframe_sum *sum,
					  FILE *fp)
{
	const struct unwind_sframe_stats *st = &sum->st;
	const struct {
		const char *name;
		u64 val;
	} rows[] = {
		{ "samples unwound",		st->samples },
		{ "deferred snapshots",		st->snapshots },
		{ "frames by SFrame",		st->frames },
		{ "frames by .eh_frame",	st->cfi_frames },
		{ "frames by libdw after",	st->fallback_frames },
		{ "frames by fp after",		st->fp_frames },
		{ "samples without .sframe",	st->no_sframe },
		{ "samples stopped early",	st->stopped },
		{ "sections rejected",		sum->rejected },
	};
	size_t printed = 0;

	for (size_t i = 0; i < ARRAY_SIZE(rows); i++)
		printed += fprintf(fp, "  %-24s %10" PRIu64 "\n", rows[i].name, rows[i].val);
	return printed;
}

size_t unwind_sframe__fprintf_stats(struct machines *machines, FILE *fp)
{
	struct unwind_sframe_sum sum = { .fp = NULL };
	size_t printed;

	if (!unwind_sframe__sum(machines, &sum))
		return 0;
	unwind_sframe__warn_summary(&sum.st);
	printed = fprintf(fp, "\nSFrame unwinding:\n");
	printed += unwind_sframe__fprintf_rows(&sum, fp);
	/* Then each rejected section, with why (unwind_sframe__fprintf_rejected()). */
	sum = (struct unwind_sframe_sum){ .fp = fp };
	unwind_sframe__sum(machines, &sum);
	return printed + sum.printed;
}

size_t unwind_sframe__fprintf_header(struct machines *machines, FILE *fp)
{
	struct unwind_sframe_sum sum = { .fp = NULL };
	const struct unwind_sframe_stats *st = &sum.st;
	size_t printed;

	if (!unwind_sframe__sum(machines, &sum))
		return 0;
	unwind_sframe__warn_summary(st);
	printed = fprintf(fp, "# SFrame unwinding: %" PRIu64
			  " samples, %" PRIu64
			  " deferred snapshots; caller frames by .sframe %" PRIu64
			  ", .eh_frame %" PRIu64 ", libdw %" PRIu64
			  ", frame pointers %" PRIu64 "; %" PRIu64
			  " samples without .sframe, %" PRIu64
			  " stopped early; %" PRIu64 " sections rejected\n",
			  st->samples, st->snapshots, st->frames, st->cfi_frames,
			  st->fallback_frames, st->fp_frames, st->no_sframe,
			  st->stopped, sum.rejected);
	return printed + fprintf(fp, "#\n");
}

/* Caller frames 1..@n-1 of a walk, by the rows that found them. */
static void unwind_sframe__count_frames(struct unwind_sframe_stats *st,
					const struct sframe_frame *frames, int n)
{
	for (int i = 1; i < n; i++) {
		if (frames[i].cfi)
			st->cfi_frames++;
		else
			st->frames++;
	}
}

#define SFRAME_LOOKUP_CACHE	4

/*
 * Maps hit in this sample: consecutive frames keep to a few DSOs.  Each
 * slot holds a reference to its map, so that the frames can be named from
 * it once the walk is done without looking the map up again.
 */
struct sframe_lookup_arg {
	struct thread	*thread;
	const struct sframe_abi *abi;	/* of the thread's code */
	bool		cfi;	/* .eh_frame rows where there is no .sframe */
	bool		used;	/* a row came from .sframe */
	int		nr;
	int		next;
	struct {
		u64				start;
		u64				end;
		u64				bias;
		const struct sframe_section	*sec;
		struct dso			*dso;
		struct map			*map;
	} hit[SFRAME_LOOKUP_CACHE];
};

static void unwind_sframe__lookup_exit(struct sframe_lookup_arg *la)
{
	for (int i = 0; i < la->nr; i++)
		map__zput(la->hit[i].map);
	la->nr = 0;
}

/* The slot whose map holds @pc, or -1. */
static int unwind_sframe__lookup_slot(const struct sframe_lookup_arg *la, u64 pc)
{
	for (int i = 0; i < la->nr; i++) {
		if (pc >= la->hit[i].start && pc < la->hit[i].end)
			return i;
	}
	return -1;
}

/*
 * The walker's ABI row for @thread's code, by its ELF machine and byte
 * order (the stack snapshot is in the target's), with the machine in
 * @e_machine for perf's register helpers; NULL: SFrame knows no such ABI.
 */
static const struct sframe_abi *unwind_sframe__thread_abi(struct thread *thread,
							  uint16_t *e_machine)
{
	bool big_endian = false;

	*e_machine = thread__e_machine_endian(thread, maps__machine(thread__maps(thread)),
					      /*e_flags=*/NULL, &big_endian);
	return sframe_abi__of_machine(*e_machine, big_endian);
}

/*
 * The sampled frame from the user registers, numbered by perf's helpers
 * for @e_machine: IP, SP, FP, and the RA register where the ABI has one
 * and the sample has it (a leaf's RA is still there).  Non-zero if IP, SP
 * or FP is missing.
 */
static int unwind_sframe__regs_frame(const struct sframe_abi *abi, struct regs_dump *regs,
				     uint16_t e_machine, struct sframe_frame *f)
{
	f->ra_known = abi->ra && !perf_reg_value(&f->ra, regs, perf_arch_reg_ra(e_machine));
	return perf_reg_value(&f->ip, regs, perf_arch_reg_ip(e_machine)) ||
	       perf_reg_value(&f->sp, regs, perf_arch_reg_sp(e_machine)) ||
	       perf_reg_value(&f->fp, regs, perf_arch_reg_fp(e_machine));
}

static int unwind_sframe__row(u64 pc, struct sframe_fre *fre, void *arg)
{
	struct sframe_lookup_arg *la = arg;
	const struct sframe_section *sec = NULL;
	struct addr_location al;
	struct dso *dso = NULL;
	u64 bias = 0;
	int i;

	i = unwind_sframe__lookup_slot(la, pc);
	if (i < 0) {
		addr_location__init(&al);
		if (thread__find_map(la->thread, PERF_RECORD_MISC_USER, pc, &al)) {
			dso = map__dso(al.map);
			if (dso && dso__sframe_vaddr_bias(dso, al.map, pc, &bias))
				dso = NULL;
			if (dso) {
				sec = dso__sframe(dso, al.map, pc, &bias);
				i = la->next++ % SFRAME_LOOKUP_CACHE;
				if (i < la->nr)
					map__put(la->hit[i].map);
				la->hit[i].map = map__get(al.map);
				la->hit[i].start = map__start(al.map);
				la->hit[i].end = map__end(al.map);
				la->hit[i].bias = bias;
				la->hit[i].sec = sec;
				la->hit[i].dso = dso;
				if (la->nr < SFRAME_LOOKUP_CACHE)
					la->nr++;
			}
		}
		addr_location__exit(&al);
		if (!dso)
			return -ENOENT;
	}

	sec = la->hit[i].sec;
	if (sec && sec->abi_row == la->abi &&
	    !sframe_section__find_fre(sec, pc - la->hit[i].bias, fre)) {
		la->used = true;
		return 0;
	}
	if (!la->cfi)
		return -ENOENT;
	return dso__sframe_cfi_row(la->hit[i].dso, la->abi, pc - la->hit[i].bias, fre);
}

struct count_cb {
	unwind_entry_cb_t	cb;
	void			*arg;
	unsigned long		n;
};

static int count_entry(struct unwind_entry *entry, void *arg)
{
	struct count_cb *c = arg;

	c->n++;
	return c->cb(entry, c->arg);
}

/*
 * sframe-only ended a stack at a frame without .sframe: say so once, with
 * where, since the stacks are shorter than they look.
 */
static void unwind_sframe__warn_cut(struct unwind_sframe_stats *st,
				    const struct sframe_lookup_arg *la, u64 ip)
{
	int slot = unwind_sframe__lookup_slot(la, ip);

	if (st->warned_cut)
		return;
	st->warned_cut = true;
	pr_warning("sframe-only: no .sframe row for %#" PRIx64 " in %s: user stacks end there (--unwind-style sframe goes on with .eh_frame and libdw)\n",
		   ip, slot >= 0 ? dso__long_name(la->hit[slot].dso) : "unmapped code");
}

struct ip_list {
	u64	*ips;
	int	nr;
	int	max;
};

static int collect_ip(struct unwind_entry *entry, void *arg)
{
	struct ip_list *l = arg;

	if (l->nr < l->max)
		l->ips[l->nr++] = entry->ip;
	return 0;
}

/*
 * Let libdw unwind from @f outwards: a copy of the sample whose registers
 * and stack start at @f.  Other registers keep their sampled values, which
 * .eh_frame rules for the CFA do not use: SFrame's ABIs base it on SP or
 * FP.
 */
static int unwind_sframe__libdw_from(struct thread *thread, struct perf_sample *data,
				     uint16_t e_machine, const struct sframe_frame *f,
			      u64 *ips, int max, bool best_effort)
{
	const int reg_ip = perf_arch_reg_ip(e_machine);
	const int reg_sp = perf_arch_reg_sp(e_machine);
	const int reg_fp = perf_arch_reg_fp(e_machine);
	struct ip_list l = { .ips = ips, .max = max };
	struct regs_dump *regs = data->user_regs;
	struct perf_sample s = *data;
	struct regs_dump r = *regs;
	int nr = __builtin_popcountll(regs->mask), idx = 0, ret;
	u64 sp0, delta, *vals;

	if (perf_reg_value(&sp0, regs, reg_sp) || f->sp < sp0)
		return 0;
	delta = f->sp - sp0;
	if (delta >= data->user_stack.size)
		return 0;
	vals = calloc(nr, sizeof(u64));
	if (!vals)
		return -ENOMEM;
	for (int i = 0; i < 64; i++) {
		if (!(regs->mask & (1ULL << i)))
			continue;
		vals[idx] = regs->regs[idx];
		if (i == reg_ip)
			vals[idx] = f->ip;
		else if (i == reg_sp)
			vals[idx] = f->sp;
		else if (i == reg_fp)
			vals[idx] = f->fp;
		idx++;
	}
	r.regs = vals;
	r.cache_mask = 0;
	s.user_regs = &r;
	s.user_stack.data = data->user_stack.data + delta;
	s.user_stack.size = data->user_stack.size - delta;

	ret = libdw__get_entries(collect_ip, &l, thread, &s, max, best_effort);
	free(vals);
	if (ret < 0)
		return ret;
	/* libdw hands entries over in the caller-first order when asked. */
	if (callchain_param.order == ORDER_CALLER) {
		for (int i = 0; i < l.nr / 2; i++) {
			u64 t = ips[i];

			ips[i] = ips[l.nr - 1 - i];
			ips[l.nr - 1 - i] = t;
		}
	}
	return l.nr;
}

/*
 * Name each frame for the callchain.  A frame in a map the walk looked up
 * borrows that map (the callchain copies what it keeps); only the others,
 * those libdw unwound, need a full lookup.
 */
static int unwind_sframe__emit(unwind_entry_cb_t cb, void *arg, struct thread *thread,
			       const struct sframe_lookup_arg *la, const u64 *ips, int nr)
{
	int ret = 0;

	for (int i = 0; i < nr && !ret; i++) {
		int j = callchain_param.order == ORDER_CALLER ? nr - 1 - i : i;
		int slot = unwind_sframe__lookup_slot(la, ips[j]);
		struct unwind_entry e = { .ip = ips[j] };
		struct addr_location al;

		if (slot >= 0) {
			struct map *map = la->hit[slot].map;

			e.ms.thread = thread;
			e.ms.map = map;
			e.ms.sym = map__find_symbol(map, map__map_ip(map, ips[j]));
			ret = cb(&e, arg);
			continue;
		}
		addr_location__init(&al);
		thread__find_symbol(thread, PERF_RECORD_MISC_USER, ips[j], &al);
		e.ms.thread = thread__get(al.thread);
		e.ms.map = map__get(al.map);
		e.ms.sym = al.sym;
		addr_location__exit(&al);
		ret = cb(&e, arg);
		map_symbol__exit(&e.ms);
	}
	return ret;
}

/*
 * One sample's frames and PCs, for one unwind only, so that nothing
 * outlives the call whichever thread made it: on the stack up to perf's
 * default depth (5 KiB), where a malloc() per sample cost 0.45% of all
 * the instructions of perf script; deeper --max-stack values allocate and
 * free them, as libdw__get_entries() does with its entries.
 */
struct sframe_buf {
	struct sframe_frame	*frames;
	u64			*ips;
	struct sframe_frame	frames_local[PERF_MAX_STACK_DEPTH];
	u64			ips_local[PERF_MAX_STACK_DEPTH];
};

static int unwind_sframe__buf_init(struct sframe_buf *b, int max)
{
	if (max <= PERF_MAX_STACK_DEPTH) {
		b->frames = b->frames_local;
		b->ips = b->ips_local;
	} else {
		b->frames = malloc(max * (sizeof(*b->frames) + sizeof(u64)));
		if (!b->frames)
			return -ENOMEM;
		b->ips = (u64 *)(b->frames + max);
	}
	memset(&b->frames[0], 0, sizeof(b->frames[0]));
	return 0;
}

static void unwind_sframe__buf_exit(struct sframe_buf *b)
{
	if (b->frames != b->frames_local)
		free(b->frames);
}

int unwind_sframe__get_entries(unwind_entry_cb_t cb, void *arg,
			       struct thread *thread, struct perf_sample *data,
			int max_stack, bool best_effort, bool hybrid, bool last)
{
	struct machine *machine = maps__machine(thread__maps(thread));
	struct sframe_lookup_arg la = { .thread = thread, .cfi = hybrid };
	struct sframe_stack stack;
	struct sframe_frame *frames;
	struct sframe_buf buf;
	enum sframe_stop stop;
	uint16_t e_machine;
	int n, nr = 0, ret;
	u64 *ips;

	if (!data->user_regs || !data->user_regs->regs || max_stack < 1)
		return 0;
	la.abi = unwind_sframe__thread_abi(thread, &e_machine);
	if (!la.abi)
		return hybrid ? libdw__get_entries(cb, arg, thread, data,
						   max_stack, best_effort) : 0;

	if (unwind_sframe__buf_init(&buf, max_stack))
		return -ENOMEM;
	frames = buf.frames;
	ips = buf.ips;
	if (unwind_sframe__regs_frame(la.abi, data->user_regs, e_machine, &frames[0])) {
		ret = 0;
		goto out;
	}
	stack.sp = frames[0].sp;
	stack.data = (const u8 *)data->user_stack.data;
	stack.size = data->user_stack.size;

	n = sframe_walk__unwind(la.abi, frames, max_stack, &stack, unwind_sframe__row,
				&la, &stop);
	/* sframe-only has nothing for it: let the next style try. */
	if (stop == SFRAME_STOP_NO_SFRAME && n == 1 && !hybrid && !last) {
		ret = 0;
		goto out;
	}
	machine->sframe_stats.samples++;
	if (!la.used)
		machine->sframe_stats.no_sframe++;

	if (stop == SFRAME_STOP_NO_SFRAME && hybrid && n == 1) {
		/* Nothing for SFrame to do: plain libdw. */
		struct count_cb c = { .cb = cb, .arg = arg };

		ret = libdw__get_entries(count_entry, &c, thread, data,
					 max_stack, best_effort);
		if (c.n > 1)
			machine->sframe_stats.fallback_frames += c.n - 1;
		goto out;
	}

	/* Like libdw, callers' PCs point into the call instruction. */
	for (int i = 0; i < n; i++)
		ips[nr++] = i && !frames[i].signal && !frames[i].sigtramp ?
			    frames[i].ip - 1 : frames[i].ip;

	/*
	 * libdw restarts from the last frame SFrame described, not from the
	 * first one it did not: libdw then steps into that frame itself and
	 * knows, from its CFI, whether it is a signal trampoline whose PC
	 * must not be moved back into a call.
	 */
	if (stop == SFRAME_STOP_NO_SFRAME && hybrid) {
		int got = unwind_sframe__libdw_from(thread, data, e_machine, &frames[n - 2],
					     ips + n - 2, max_stack - n + 2,
					     best_effort);

		if (got < 0) {
			ret = got;
			goto out;
		}
		/* libdw's first frame is the one handed over: keep ours. */
		ips[n - 2] = frames[n - 2].ip - (n > 2 && !frames[n - 2].signal &&
						 !frames[n - 2].sigtramp);
		if (got > 1) {
			nr = n - 2 + got;
			unwind_sframe__count_frames(&machine->sframe_stats, frames, n - 1);
			machine->sframe_stats.fallback_frames += got - 1;
		} else {
			unwind_sframe__count_frames(&machine->sframe_stats, frames, n);
			machine->sframe_stats.stopped++;
		}
	} else {
		unwind_sframe__count_frames(&machine->sframe_stats, frames, n);
		if (stop == SFRAME_STOP_NO_SFRAME || stop == SFRAME_STOP_STACK ||
		    stop == SFRAME_STOP_BAD)
			machine->sframe_stats.stopped++;
		if (stop == SFRAME_STOP_NO_SFRAME && !hybrid)
			unwind_sframe__warn_cut(&machine->sframe_stats, &la, frames[n - 1].ip);
	}

	ret = unwind_sframe__emit(cb, arg, thread, &la, ips, nr);
	if (!ret)
		ret = nr;
	else if (ret != -ENOMEM)
		ret = nr ? 1 : 0;
out:
	unwind_sframe__lookup_exit(&la);
	unwind_sframe__buf_exit(&buf);
	return ret;
}

/*
 * Does @ra look like a return address: inside a mapping of @thread that
 * holds code?  Used only to vet frame pointer steps, see below.
 */
static bool unwind_sframe__code_addr(u64 ra, void *arg)
{
	struct thread *thread = arg;
	struct addr_location al;
	bool ok = false;

	addr_location__init(&al);
	if (thread__find_map(thread, PERF_RECORD_MISC_USER, ra, &al))
		ok = !map__prot(al.map) || (map__prot(al.map) & PROT_EXEC);
	addr_location__exit(&al);
	return ok;
}

int unwind_sframe__walk_snapshot(struct thread *thread, struct perf_sample *sample,
				 u64 *ips, int max)
{
	struct sframe_lookup_arg la = { .thread = thread, .cfi = true };
	struct stack_dump *ustack = &sample->user_stack;
	struct sframe_stack stack;
	struct sframe_frame *f;
	struct sframe_buf buf;
	enum sframe_stop stop;
	uint16_t e_machine;
	int n, nr = 0;

	if (!thread || !sample->user_regs || !sample->user_regs->regs ||
	    !ustack->size || !ustack->data || max < 1)
		return 0;
	la.abi = unwind_sframe__thread_abi(thread, &e_machine);
	if (!la.abi)
		return 0;
	if (unwind_sframe__buf_init(&buf, max))
		return -ENOMEM;
	f = buf.frames;
	if (unwind_sframe__regs_frame(la.abi, sample->user_regs, e_machine, &f[0]))
		goto out;
	stack.sp = f[0].sp;
	stack.data = (const u8 *)ustack->data;
	stack.size = ustack->size;

	n = sframe_walk__unwind(la.abi, f, max, &stack, unwind_sframe__row, &la, &stop);
	unwind_sframe__lookup_exit(&la);
	/* No .sframe on the way: the caller's frame pointer walk is as good. */
	if (!la.used)
		goto out;

	/* Return addresses as the kernel's callchains give them. */
	for (nr = 0; nr < n; nr++)
		ips[nr] = f[nr].ip;
	unwind_sframe__stats(thread)->snapshots++;
	unwind_sframe__count_frames(unwind_sframe__stats(thread), f, n);
	if (stop != SFRAME_STOP_NO_SFRAME) {
		if (stop == SFRAME_STOP_STACK || stop == SFRAME_STOP_BAD)
			unwind_sframe__stats(thread)->stopped++;
		goto out;
	}

	/*
	 * The last frame has no row: code without unwind tables (hand-written
	 * assembly, JIT code, a library without .eh_frame).  Its FP holds what
	 * the register really had there, restored by the rows below, but
	 * whether that is a frame pointer nobody can tell: code built with
	 * -fomit-frame-pointer uses FP as any other register, and code with
	 * frame pointers may have been stopped before its prologue set FP up.
	 * So carry on with frame pointers only while they look like a chain:
	 * FP inside the snapshot at or above this frame's SP, each saved FP
	 * higher up the stack than the last, and each return address inside
	 * code the thread has mapped.  The first step that fails ends the
	 * chain: garbage in FP cannot lead off the snapshot or out of code,
	 * though a stale return address where it points still passes for a
	 * frame, as in any frame pointer walk.  A frame stopped in its
	 * prologue shows its caller's caller next, likewise.
	 */
	n = sframe_walk__fp_abi(la.abi, &stack, f[n - 1].sp, f[n - 1].fp, ips + nr,
				max - nr, unwind_sframe__code_addr, thread);
	unwind_sframe__stats(thread)->fp_frames += n;
	if (!n)
		unwind_sframe__stats(thread)->stopped++;
	nr += n;
out:
	unwind_sframe__buf_exit(&buf);
	return nr;
}

/*
 * The frame pointer walk of a snapshot no .sframe row helps with, by the
 * frame record of the recording's machine (its SFrame ABI row): it needs
 * no unwind tables and no thread (a sample of a task past release_task()
 * has tid -1).  The registers are the ones perf's arch helpers name for
 * that machine.
 */
static int unwind_sframe__walk_fp(struct perf_sample *sample, u64 *ips, int max)
{
	struct regs_dump *regs = sample->user_regs;
	struct stack_dump *ustack = &sample->user_stack;
	const struct sframe_abi *abi;
	struct sframe_stack stack;
	uint16_t e_machine;
	bool big_endian;
	u64 fp;

	if (!regs || !regs->regs || !ustack->size || !ustack->data || !sample->evsel ||
	    max < 1)
		return 0;
	e_machine = perf_env__e_machine(evsel__env(sample->evsel), NULL);
	/* The snapshot is in the recording's byte order: the host's unless swapped. */
	big_endian = (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__) != sample->evsel->needs_swap;
	abi = sframe_abi__of_machine(e_machine, big_endian);
	if (!abi ||
	    perf_reg_value(&ips[0], regs, perf_arch_reg_ip(e_machine)) ||
	    perf_reg_value(&stack.sp, regs, perf_arch_reg_sp(e_machine)) ||
	    perf_reg_value(&fp, regs, perf_arch_reg_fp(e_machine)))
		return 0;
	stack.data = (const u8 *)ustack->data;
	stack.size = ustack->size;
	return 1 + sframe_walk__fp_abi(abi, &stack, stack.sp, fp, ips + 1, max - 1,
				       NULL, NULL);
}

int unwind_sframe__walk_deferred(struct thread *thread, struct perf_sample *sample,
				 u64 *ips, int max, bool *by_sframe)
{
	/* SFrame needs the task's maps; frame pointers do not. */
	int n = unwind_sframe__walk_snapshot(thread, sample, ips, max);

	if (n > 0) {
		*by_sframe = true;
		return n;
	}
	return unwind_sframe__walk_fp(sample, ips, max);
}
