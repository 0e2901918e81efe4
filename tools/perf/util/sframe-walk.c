// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame stack walker: sframe__unwind() and sframe__fp_walk(), see
 * sframe.h.  It walks a copied user stack with rows some lookup gives (the
 * decoder's, or .eh_frame's of SFrame's shape), knowing nothing of DSOs or
 * files; the x86_64 registers and signal frame only, for now.
 */
#include <string.h>
#include <linux/types.h>

#include "sframe.h"

/* DWARF register numbers of the registers the x86_64 rows name. */
#define DW_X86_64_FP	6
#define DW_X86_64_SP	7

static bool stack_read(const struct sframe_stack *stack, u64 addr, u64 *val)
{
	if (addr < stack->sp || addr - stack->sp > stack->size ||
	    stack->size - (addr - stack->sp) < sizeof(*val))
		return false;
	memcpy(val, stack->data + (addr - stack->sp), sizeof(*val));
	return true;
}

static bool reg_value(const struct sframe_frame *f, u8 reg, u64 *val)
{
	if (reg == DW_X86_64_SP)
		*val = f->sp;
	else if (reg == DW_X86_64_FP)
		*val = f->fp;
	else
		return false;
	return true;
}

int sframe__fp_walk(const struct sframe_stack *stack, u64 sp, u64 bp,
		    u64 *ips, int max, bool (*is_code)(u64 ra, void *arg),
		    void *arg)
{
	int n = 0;

	while (n < max) {
		u64 fp, ra;

		/* The frame must lie wholly inside the snapshot, above @sp. */
		if (bp < sp || bp & 7 || !stack_read(stack, bp, &fp) ||
		    !stack_read(stack, bp + 8, &ra))
			break;
		if (!ra || (is_code && !is_code(ra, arg)))
			break;
		ips[n++] = ra;
		/* Frames go up the stack; anything else is a loop or garbage. */
		if (fp <= bp)
			break;
		sp = bp + 16;
		bp = fp;
	}
	return n;
}

/* x86_64 rt_sigframe: the restorer runs with SP at the ucontext. */
#define X86_64_UC_MCONTEXT	40
#define X86_64_SC_RBP		80
#define X86_64_SC_RSP		120
#define X86_64_SC_RIP		128

static enum sframe_stop sframe__step_signal(const struct sframe_stack *stack,
					    const struct sframe_frame *cur,
					    struct sframe_frame *next)
{
	u64 sc = cur->sp + X86_64_UC_MCONTEXT;

	if (!stack_read(stack, sc + X86_64_SC_RBP, &next->fp) ||
	    !stack_read(stack, sc + X86_64_SC_RSP, &next->sp) ||
	    !stack_read(stack, sc + X86_64_SC_RIP, &next->ip))
		return SFRAME_STOP_STACK;
	next->signal = true;
	return SFRAME_STOP_MAX;
}

/* The value @r recovers in frame @cur whose CFA is @cfa, into @val. */
static enum sframe_stop sframe__recover(const struct sframe_stack *stack,
					const struct sframe_frame *cur, u64 cfa,
					const struct sframe_rule *r, u64 *val)
{
	switch (r->kind) {
	case SFRAME_RULE_CFA:
		return stack_read(stack, cfa + r->offset, val) ?
		       SFRAME_STOP_MAX : SFRAME_STOP_STACK;
	case SFRAME_RULE_REG:
	case SFRAME_RULE_REG_DEREF:
		if (!reg_value(cur, r->reg, val))
			return SFRAME_STOP_BAD;
		*val += r->offset;
		if (r->kind == SFRAME_RULE_REG_DEREF && !stack_read(stack, *val, val))
			return SFRAME_STOP_STACK;
		return SFRAME_STOP_MAX;
	default:
		return SFRAME_STOP_BAD;
	}
}

static enum sframe_stop sframe__step(const struct sframe_stack *stack,
				     const struct sframe_fre *fre,
				     const struct sframe_frame *cur,
				     struct sframe_frame *next)
{
	enum sframe_stop ret;
	u64 cfa;

	if (fre->ra.kind == SFRAME_RULE_UNDEFINED)
		return SFRAME_STOP_OUTERMOST;
	if (!reg_value(cur, fre->cfa.reg, &cfa))
		return SFRAME_STOP_BAD;
	cfa += fre->cfa.offset;
	if (fre->cfa.kind == SFRAME_RULE_REG_DEREF) {
		if (!stack_read(stack, cfa, &cfa))
			return SFRAME_STOP_STACK;
	} else if (fre->cfa.kind != SFRAME_RULE_REG) {
		return SFRAME_STOP_BAD;
	}

	ret = sframe__recover(stack, cur, cfa, &fre->ra, &next->ip);
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
		ret = sframe__recover(stack, cur, cfa, &fre->fp, &next->fp);
		if (ret != SFRAME_STOP_MAX)
			return ret;
	}

	/* On x86_64 the caller's SP is the CFA. */
	next->sp = cfa;
	next->signal = false;
	if (next->sp <= cur->sp)
		return SFRAME_STOP_BAD;
	if (!next->ip)
		return SFRAME_STOP_OUTERMOST;
	return SFRAME_STOP_MAX;
}

int sframe__unwind(struct sframe_frame *frames, int max,
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
			s = sframe__step_signal(stack, cur, &frames[n]);
		else
			s = sframe__step(stack, &fre, cur, &frames[n]);
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
