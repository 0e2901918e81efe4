/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_WALK_H
#define __PERF_SFRAME_WALK_H

/*
 * SFrame stack walker: one layer above the decoder (sframe.h), below the
 * unwinder (unwind-sframe.c).  It walks a copied user stack with rows some
 * lookup gives (the decoder's, or .eh_frame rows of SFrame's shape) and
 * the ABI's description (struct sframe_abi: registers, where the caller's
 * SP is, the RA's rules, the signal frame), knowing nothing of samples,
 * DSOs or files.
 *
 * Contract:
 *  - sframe_walk__unwind() reads memory only inside the snapshot; a rule
 *    needing anything else (a register the walker does not track, memory
 *    beyond the snapshot) ends the walk with the reason in @stop.
 *  - Each frame's SP is above the last one's, but across a signal frame:
 *    the walk cannot loop.
 *  - The RA register (AArch64 LR, s390x r14) is known for the sampled
 *    frame and for a frame a signal interrupted, not for their callers.
 */

#include <linux/types.h>
#include <stdbool.h>

struct sframe_abi;
struct sframe_fre;

struct sframe_frame {
	u64	ip;	/* exact for frame 0, else the return address */
	u64	sp;
	u64	fp;
	u64	ra;	/* the RA register, if @ra_known */
	bool	ra_known;
	bool	signal;	/* interrupted by a signal: @ip is exact */
	bool	sigtramp; /* a signal trampoline: @ip is exact too */
	bool	cfi;	/* found with an .eh_frame row, not a .sframe one */
};

enum sframe_stop {
	SFRAME_STOP_MAX,	/* @max frames filled */
	SFRAME_STOP_OUTERMOST,	/* RA undefined or zero: the stack's end */
	SFRAME_STOP_NO_SFRAME,	/* last frame's PC has no SFrame */
	SFRAME_STOP_STACK,	/* needed memory beyond the snapshot */
	SFRAME_STOP_BAD,	/* rule not usable or the stack did not grow */
};

/*
 * The row for @pc, a runtime address: 0, or -ENOENT when nothing covers
 * @pc.  Rows with ->cfi set may name registers the walker does not track;
 * it then stops as if there were no row.
 */
typedef int (*sframe_row_fn)(u64 pc, struct sframe_fre *fre, void *arg);

struct sframe_stack {
	u64		sp;	/* address of data[0] */
	const u8	*data;
	u64		size;
};

/**
 * sframe_walk__unwind() - Walk a copied stack with SFrame rows
 * @abi: the ABI table's row of the code (registers, RA rules, signal frame)
 * @frames: @frames[0] holds the sampled registers; filled outwards
 * @max: at most this many frames, @frames[0] included
 * @stack: the copied stack @frames[0]'s SP points into
 * @row: gives the row for a PC
 * @arg: passed to @row
 * @stop: why the walk stopped
 *
 * A frame whose PC has no SFrame is still filled, with the SP and FP it
 * had, so that another unwinder can carry on from it.
 *
 * Return: how many frames are filled: 0 if @max < 1, else at least 1
 * (@frames[0]); why it stopped is in @stop.
 */
int sframe_walk__unwind(const struct sframe_abi *abi,
			struct sframe_frame *frames, int max,
			const struct sframe_stack *stack, sframe_row_fn row,
			void *arg, enum sframe_stop *stop);

/**
 * sframe_walk__fp_abi - walk the frame pointer chain by @abi's frame row
 * @abi: the ABI, whose fp_row says where a frame record keeps the RA and
 *       the caller's FP
 * @stack: the copied stack
 * @sp: the SP of the frame to start from
 * @fp: its FP, the address of the first frame record
 * @ips: where to put the return addresses
 * @max: room in @ips
 * @is_code: if given, vets each return address (is it in code?)
 * @arg: for @is_code
 *
 * Each step is sframe_walk__unwind()'s step with the ABI's frame pointer
 * row, as kernel/unwind/user.c steps both with unwind_user_next_common():
 * a record must lie in @stack at or above the SP, aligned, hold a non-zero
 * return address that @is_code accepts, and link to one higher up.
 *
 * Return: how many return addresses were put in @ips; 0 also when @abi
 * has no frame records to walk.
 */
int sframe_walk__fp_abi(const struct sframe_abi *abi,
			const struct sframe_stack *stack, u64 sp, u64 fp,
			u64 *ips, int max, bool (*is_code)(u64 ra, void *arg),
			void *arg);

#endif /* __PERF_SFRAME_WALK_H */
