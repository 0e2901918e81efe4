// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame stack walker: see sframe-walk.h for the contract.  What differs
 * between ABIs (registers, the caller's SP, where an RA not saved is, the
 * signal frame) comes from their row in the table of sframe.c, not from
 * code here.
 */
#include <byteswap.h>
#include <endian.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/types.h>

#include "sframe.h"
#include "sframe-walk.h"

static bool stack_read(const struct sframe_stack *stack, u64 addr, u64 *val)
{
	if (addr < stack->sp || addr - stack->sp > stack->size ||
	    stack->size - (addr - stack->sp) < sizeof(*val))
		return false;
	memcpy(val, stack->data + (addr - stack->sp), sizeof(*val));
	return true;
}

/* A word of the stack, which is in the byte order of its ABI. */
static bool abi_read(const struct sframe_abi *abi,
		     const struct sframe_stack *stack, u64 addr, u64 *val)
{
	if (!stack_read(stack, addr, val))
		return false;
	if (abi->big_endian != (__BYTE_ORDER == __BIG_ENDIAN))
		*val = bswap_64(*val);
	return true;
}

/* The registers the walker tracks: SP, FP and, where known, the RA's. */
static bool reg_value(const struct sframe_abi *abi,
		      const struct sframe_frame *f, u8 reg, u64 *val)
{
	if (reg == abi->sp)
		*val = f->sp;
	else if (reg == abi->fp)
		*val = f->fp;
	else if (abi->ra && reg == abi->ra && f->ra_known)
		*val = f->ra;
	else
		return false;
	return true;
}

/*
 * A signal trampoline: the interrupted frame's registers are in the
 * signal frame at the trampoline's SP, where the ABI's row says.
 */
static enum sframe_stop sframe_walk__step_signal(const struct sframe_abi *abi,
						 const struct sframe_stack *stack,
					    const struct sframe_frame *cur,
					    struct sframe_frame *next)
{
	if (!abi->sig_ip)
		return SFRAME_STOP_BAD;
	if (!abi_read(abi, stack, cur->sp + abi->sig_fp, &next->fp) ||
	    !abi_read(abi, stack, cur->sp + abi->sig_sp, &next->sp) ||
	    !abi_read(abi, stack, cur->sp + abi->sig_ip, &next->ip))
		return SFRAME_STOP_STACK;
	next->ra_known = abi->sig_ra &&
			 abi_read(abi, stack, cur->sp + abi->sig_ra, &next->ra);
	next->signal = true;
	return SFRAME_STOP_MAX;
}

/* The value @r recovers in frame @cur whose CFA is @cfa, into @val. */
/* Inlined: called twice a frame, the walk's hot path. */
static __always_inline enum sframe_stop
sframe_walk__recover(const struct sframe_abi *abi, const struct sframe_stack *stack,
		     const struct sframe_frame *cur, u64 cfa,
		const struct sframe_rule *r, u64 *val)
{
	switch (r->kind) {
	case SFRAME_RULE_SAME:
		/* Still in its register: known in the frames that saw it. */
		return reg_value(abi, cur, r->reg, val) ? SFRAME_STOP_MAX :
		       SFRAME_STOP_BAD;
	case SFRAME_RULE_CFA:
		return abi_read(abi, stack, cfa + r->offset, val) ?
		       SFRAME_STOP_MAX : SFRAME_STOP_STACK;
	case SFRAME_RULE_REG:
	case SFRAME_RULE_REG_DEREF:
		if (!reg_value(abi, cur, r->reg, val))
			return SFRAME_STOP_BAD;
		*val += r->offset;
		if (r->kind == SFRAME_RULE_REG_DEREF && !abi_read(abi, stack, *val, val))
			return SFRAME_STOP_STACK;
		return SFRAME_STOP_MAX;
	default:
		return SFRAME_STOP_BAD;
	}
}

/*
 * One frame, by any row: the SFrame or .eh_frame row of its PC, or the
 * ABI's frame pointer row.  Inlined: the walk's hot path, which a call
 * made 9% slower (callgrind, bench/sframe) once the frame pointer walk
 * became a second caller.
 */
static __always_inline enum sframe_stop
sframe_walk__step(const struct sframe_abi *abi, const struct sframe_stack *stack,
		  const struct sframe_fre *fre, const struct sframe_frame *cur,
	     struct sframe_frame *next)
{
	enum sframe_stop ret;
	u64 cfa;

	if (fre->ra.kind == SFRAME_RULE_UNDEFINED)
		return SFRAME_STOP_OUTERMOST;
	if (!reg_value(abi, cur, fre->cfa.reg, &cfa))
		return SFRAME_STOP_BAD;
	/*
	 * As unwind_user_next_common(): a frame found from FP lies above
	 * the SP, and a CFA is word aligned; anything else is not a frame.
	 */
	if (fre->cfa.reg == abi->fp && cur->fp < cur->sp)
		return SFRAME_STOP_BAD;
	cfa += fre->cfa.offset;
	if (fre->cfa.kind == SFRAME_RULE_REG_DEREF) {
		if (!abi_read(abi, stack, cfa, &cfa))
			return SFRAME_STOP_STACK;
	} else if (fre->cfa.kind != SFRAME_RULE_REG) {
		return SFRAME_STOP_BAD;
	}
	if (cfa & (sizeof(u64) - 1))
		return SFRAME_STOP_BAD;

	ret = sframe_walk__recover(abi, stack, cur, cfa, &fre->ra, &next->ip);
	if (ret != SFRAME_STOP_MAX)
		return ret;

	next->fp = cur->fp;
	/*
	 * Epilogue rows after "pop %rbp" still say where the FP was saved:
	 * below the SP, the slot is popped and the register holds the
	 * caller's FP already.  Unchanged and undefined keep it too.
	 */
	if ((fre->fp.kind == SFRAME_RULE_CFA && cfa + fre->fp.offset >= cur->sp) ||
	    fre->fp.kind == SFRAME_RULE_REG || fre->fp.kind == SFRAME_RULE_REG_DEREF) {
		ret = sframe_walk__recover(abi, stack, cur, cfa, &fre->fp, &next->fp);
		if (ret != SFRAME_STOP_MAX)
			return ret;
	}

	next->sp = cfa + abi->cfa_to_sp;
	/* The caller's RA register was the callee's to clobber. */
	next->ra_known = false;
	next->signal = false;
	/*
	 * The stack grows down: a caller's SP is above its callee's, but
	 * for a callee whose RA is still in its register (an AArch64 or
	 * s390x function at its entry), which pushed nothing.  That can
	 * happen once, as the RA register is unknown in the caller.
	 */
	if (next->sp < cur->sp ||
	    (next->sp == cur->sp && fre->ra.kind != SFRAME_RULE_SAME))
		return SFRAME_STOP_BAD;
	if (!next->ip)
		return SFRAME_STOP_OUTERMOST;
	return SFRAME_STOP_MAX;
}

int sframe_walk__unwind(const struct sframe_abi *abi,
			struct sframe_frame *frames, int max,
			const struct sframe_stack *stack, sframe_row_fn row,
			void *arg, enum sframe_stop *stop)
{
	int n = 1;

	*stop = SFRAME_STOP_MAX;
	if (max < 1)
		return 0;

	while (n < max) {
		struct sframe_frame *cur = &frames[n - 1];
		struct sframe_fre fre;
		enum sframe_stop s;
		u64 pc;

		/*
		 * A return address may be just past the function's end (a
		 * call to a noreturn function): look up the call instead.
		 */
		pc = n == 1 || cur->signal ? cur->ip : cur->ip - 1;
		if (row(pc, &fre, arg)) {
			*stop = SFRAME_STOP_NO_SFRAME;
			return n;
		}
		cur->sigtramp = fre.signal;
		if (fre.signal)
			s = sframe_walk__step_signal(abi, stack, cur, &frames[n]);
		else
			s = sframe_walk__step(abi, stack, &fre, cur, &frames[n]);
		/* .eh_frame rules we cannot follow: leave it to libdw. */
		if (s == SFRAME_STOP_BAD && fre.cfi)
			s = SFRAME_STOP_NO_SFRAME;
		if (s != SFRAME_STOP_MAX) {
			*stop = s;
			return n;
		}
		frames[n].sigtramp = false;
		frames[n].cfi = fre.cfi;
		n++;
	}
	return n;
}

int sframe_walk__fp_abi(const struct sframe_abi *abi,
			const struct sframe_stack *stack, u64 sp, u64 fp,
			u64 *ips, int max, bool (*is_code)(u64 ra, void *arg),
			void *arg)
{
	struct sframe_frame cur = { .sp = sp, .fp = fp }, next;
	int n = 0;

	if (abi->fp_row.cfa.kind != SFRAME_RULE_REG)
		return 0;
	while (n < max) {
		/*
		 * The common step checks what a frame pointer walk must: the
		 * record lies wholly in the snapshot, at or above the SP,
		 * aligned, and the next one higher up (the caller's SP is
		 * above the record, and its FP must be at or above that).
		 */
		if (sframe_walk__step(abi, stack, &abi->fp_row, &cur, &next) != SFRAME_STOP_MAX)
			break;
		if (is_code && !is_code(next.ip, arg))
			break;
		ips[n++] = next.ip;
		cur = next;
	}
	return n;
}
