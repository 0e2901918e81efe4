/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_UNWIND_SFRAME_H
#define __PERF_UNWIND_SFRAME_H

/*
 * The "sframe" and "sframe-only" unwind styles, the top of the SFrame
 * layers: perf samples and threads in, callchains out, through the walker
 * (sframe-walk.h) and the per-DSO state (sframe-dso.h).  Its entry point
 * for unwind__get_entries() is unwind_sframe__get_entries() in unwind.h; here
 * are the printing of its counters (unwind-sframe-stats.h, kept in each
 * struct machine) and the deferred callchain fallback.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stdio.h>

#include "unwind-sframe-stats.h"

struct machine;
struct machines;
struct perf_sample;
struct thread;

/**
 * unwind_sframe__fprintf_stats() - The "SFrame unwinding" block of perf report
 *			     --stats and perf script
 * @machines: the session's machines, host and guests
 * @fp: where to print
 *
 * The sum of @machines' counters, then every dso of theirs whose section
 * was rejected, with why.  Nothing when SFrame did nothing and rejected
 * nothing.
 *
 * Return: the number of characters printed.
 */
size_t unwind_sframe__fprintf_stats(struct machines *machines, FILE *fp);
/**
 * unwind_sframe__fprintf_header() - The same in one "# SFrame unwinding:" line,
 *			      for perf report's header
 * @machines: the session's machines, host and guests
 * @fp: where to print
 *
 * Return: the number of characters printed.
 */
size_t unwind_sframe__fprintf_header(struct machines *machines, FILE *fp);

/**
 * unwind_sframe__walk_snapshot() - The user frames of a deferred sample's snapshot
 * @thread: the sample's thread, whose maps give the rows
 * @sample: PERF_SAMPLE_REGS_USER with the IP, SP and frame pointer
 *	    perf_arch_reg_ip(), _sp() and _fp() name for the thread's
 *	    machine, and PERF_SAMPLE_STACK_USER
 * @ips: filled with return addresses, the sampled IP first, as the kernel
 *	 gives a callchain
 * @max: at most this many
 *
 * For a deferred sample whose PERF_RECORD_CALLCHAIN_DEFERRED never came:
 * SFrame rows, .eh_frame rows of SFrame's shape where there is no
 * .sframe, then frame pointers from the first frame without either, by the
 * ABI's frame pointer row, while they look sane (an ABI without one:
 * SFrame's frames only).  Counted in the thread's machine's sframe_stats.
 *
 * Return: how many, 0 when no .sframe row was used (a plain frame pointer
 * walk does as well), or -ENOMEM.
 */
int unwind_sframe__walk_snapshot(struct thread *thread, struct perf_sample *sample,
				 u64 *ips, int max);

/**
 * unwind_sframe__walk_deferred() - The fallback of a deferred sample whose
 *				    record never came
 * @thread: the sample's thread, or NULL when there is none (tid -1)
 * @sample: the sample, with or without a user stack snapshot
 * @ips: filled as by unwind_sframe__walk_snapshot()
 * @max: at most this many
 * @by_sframe: set when SFrame rows were used
 *
 * unwind_sframe__walk_snapshot() where .sframe rows apply, else frame
 * pointers alone by the frame record of the recording's machine (its
 * SFrame ABI row; none for an ABI without one): what the kernel's own
 * deferred unwinder does.  unwind__walk_deferred()'s walk when the user
 * named no unwind style.
 *
 * Return: how many frames, 0 when the sample has no usable snapshot.
 */
int unwind_sframe__walk_deferred(struct thread *thread, struct perf_sample *sample,
				 u64 *ips, int max, bool *by_sframe);

#endif /* __PERF_UNWIND_SFRAME_H */
