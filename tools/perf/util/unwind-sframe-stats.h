/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_UNWIND_SFRAME_STATS_H
#define __PERF_UNWIND_SFRAME_STATS_H

/*
 * The counters of the sframe unwind styles (unwind-sframe.h), alone, for
 * machine.h: what includes it (the deferred callchain stitcher among
 * them) does not include the unwinder.
 */

#include <linux/types.h>
#include <stdbool.h>

/*
 * What the sframe styles and the deferred fallback did on one machine.
 * A field of struct machine, written by whoever unwinds that machine's
 * samples (one thread at a time, as for the session's events_stats).  A
 * sample's first frame is its registers; each caller frame after it is
 * counted once, by what found it: a .sframe row, an .eh_frame row of
 * SFrame's shape, libdw (where SFrame handed the rest of a stack over, or
 * the whole of one with no .sframe row for its first frame) or frame
 * pointers (after SFrame, in a deferred snapshot).  So the frames shown
 * are the samples plus these.  The sections rejected are not here: each
 * dso's SFrame state says whether its section was (sframe-dso.h).
 */
struct unwind_sframe_stats {
	u64	samples;	/* unwound by sframe styles */
	u64	snapshots;	/* deferred, walked with SFrame */
	u64	frames;		/* by .sframe rows */
	u64	cfi_frames;	/* by .eh_frame rows */
	u64	fallback_frames; /* by libdw */
	u64	fp_frames;	/* by frame pointers */
	u64	no_sframe;	/* samples: no .sframe row used */
	u64	stopped;	/* walk ended before the outermost frame */
	bool	warned_cut;	/* sframe-only said it cut a stack */
};

#endif /* __PERF_UNWIND_SFRAME_STATS_H */
