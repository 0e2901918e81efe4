/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_UNWIND_SFRAME_H
#define __PERF_UNWIND_SFRAME_H

/*
 * The "sframe" and "sframe-only" unwind styles, the top of the SFrame
 * layers: perf samples and threads in, callchains out, through the walker
 * (sframe-walk.h) and the per-DSO state (sframe-dso.h).  Its entry point
 * for unwind__get_entries() is sframe__get_entries() in unwind.h; here are
 * its counters and the deferred callchain fallback.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

struct machine;
struct perf_sample;
struct thread;

/*
 * What the sframe styles and the deferred fallback did.  A sample's first
 * frame is its registers; each caller frame after it is counted once, by
 * what found it: a .sframe row, an .eh_frame row of SFrame's shape, libdw
 * (where SFrame handed the rest of a stack over, or the whole of one with
 * no .sframe row for its first frame) or frame pointers (after SFrame, in
 * a deferred snapshot).  So the frames shown are the samples plus these.
 */
extern unsigned long sframe__nr_samples;	/* unwound by sframe styles */
extern unsigned long sframe__nr_snapshots;	/* deferred, walked with SFrame */
extern unsigned long sframe__nr_frames;		/* by .sframe rows */
extern unsigned long sframe__nr_cfi_frames;	/* by .eh_frame rows */
extern unsigned long sframe__nr_fallback_frames; /* by libdw */
extern unsigned long sframe__nr_fp_frames;	/* by frame pointers */
extern unsigned long sframe__nr_no_sframe;	/* samples: no .sframe row used */
/* Samples whose walk ended before the stack's outermost frame. */
extern unsigned long sframe__nr_stopped;

/*
 * The "SFrame unwinding" block of perf report --stats and perf script: the
 * counters and every loaded dso whose section was rejected, with why.
 * Nothing when SFrame did nothing and rejected nothing.
 */
bool sframe__stats_any(void);
size_t sframe__fprintf_stats(FILE *fp);
/* The same in one "# SFrame unwinding:" line, for perf report's header. */
size_t sframe__fprintf_header(FILE *fp);

/*
 * perf report --stats, which resolves no callchains: with an sframe style
 * first in unwind.style (sframe__style_chosen()), unwind each sample with
 * the styles chosen only to count it, so that the block says what perf
 * report would do.
 */
bool sframe__style_chosen(void);
void sframe__count_sample(struct machine *machine, struct perf_sample *sample);

/*
 * The user frames of @sample (PERF_SAMPLE_REGS_USER with the IP, SP and
 * frame pointer perf_arch_reg_ip(), _sp() and _fp() name for the thread's
 * machine, and PERF_SAMPLE_STACK_USER) of @thread, for a deferred sample whose
 * PERF_RECORD_CALLCHAIN_DEFERRED never came: SFrame rows, .eh_frame rows of
 * SFrame's shape where there is no .sframe, then frame pointers from the
 * first frame without either, by the ABI's frame pointer row, while they
 * look sane (an ABI without one: SFrame's frames only).  Fills @ips with at
 * most @max return addresses, the sampled IP first, as the kernel gives a
 * callchain; returns how many, 0 when no .sframe row was used (a plain
 * frame pointer walk does as well), or -ENOMEM.
 */
int sframe__walk_snapshot(struct thread *thread, struct perf_sample *sample,
			  u64 *ips, int max);

#endif /* __PERF_UNWIND_SFRAME_H */
