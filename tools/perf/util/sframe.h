/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_H
#define __PERF_SFRAME_H

/*
 * SFrame (.sframe, PT_GNU_SFRAME) decoder and unwinder.
 *
 * An SFrame section says, per PC range, how to find the Canonical Frame
 * Address (CFA), the return address (RA) and the saved frame pointer (FP).
 * It holds a header, a table of function descriptor entries (FDEs) sorted by
 * start address, and per FDE a run of variable sized frame row entries
 * (FREs), each valid from its start offset to the next one's.
 *
 * Versions read: 1 (binutils 2.40), 2 (2.41-2.44), 2 with
 * SFRAME_F_FDE_FUNC_START_PCREL (2.45) and 3 (2.46+: 64-bit start offsets,
 * FDE index separate from the FDE attributes that lead the FREs, flexible
 * FDEs, signal frame bit).  ABIs: AMD64, AArch64 (either endianness) and
 * s390x; the section is read in its own byte order.
 *
 * Contract:
 *  - sframe__decode() validates the whole section once: header, every offset
 *    and count inside the section, FDEs sorted, every FRE's size, no 32/64-bit
 *    overflow.  On failure it returns a negative errno, leaves a reason in
 *    sec->err and nothing to free.  Lookups never check the data again.
 *  - sframe__decode() copies nothing: the caller's buffer must outlive @sec.
 *  - Addresses are ELF virtual addresses of the object the section belongs
 *    to, computed from @addr, the section's own address.
 *  - sframe__find_fre() gives the row for a PC; a PC no FDE covers gives
 *    -ENOENT.  The row is already interpreted for the ABI: fixed offsets from
 *    the header, the ABI's implicit rules, s390x offset encodings, flexible
 *    FDE control words; callers see only struct sframe_rule.
 *  - sframe__unwind() walks a copied user stack with rows from a lookup
 *    callback, so that it can serve perf report and other callers.
 *
 * The format is described in binutils' libsframe/sframe.h; libsframe itself
 * is GPLv3+ and must not be linked into perf: this is an independent reader,
 * and libsframe is only a test oracle.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define SFRAME_MAGIC			0xdee2

#define SFRAME_VERSION_1		1
#define SFRAME_VERSION_2		2
#define SFRAME_VERSION_3		3

#define SFRAME_F_FDE_SORTED		0x1
#define SFRAME_F_FRAME_POINTER		0x2	/* v1, v2 only */
#define SFRAME_F_FDE_FUNC_START_PCREL	0x4

#define SFRAME_ABI_AARCH64_ENDIAN_BIG	1
#define SFRAME_ABI_AARCH64_ENDIAN_LITTLE 2
#define SFRAME_ABI_AMD64_ENDIAN_LITTLE	3
#define SFRAME_ABI_S390X_ENDIAN_BIG	4

#define SFRAME_FRE_TYPE_ADDR1		0
#define SFRAME_FRE_TYPE_ADDR2		1
#define SFRAME_FRE_TYPE_ADDR4		2

#define SFRAME_PC_TYPE_INC		0
#define SFRAME_PC_TYPE_MASK		1

#define SFRAME_FDE_TYPE_DEFAULT		0
#define SFRAME_FDE_TYPE_FLEX		1

/* How to recover a value: the CFA, the RA or the caller's FP. */
enum sframe_rule_kind {
	SFRAME_RULE_UNDEFINED,	/* not recoverable; for RA: outermost frame */
	SFRAME_RULE_SAME,	/* unchanged: FP not saved, RA still in LR */
	SFRAME_RULE_CFA,	/* saved in memory at CFA + offset */
	SFRAME_RULE_REG,	/* register @reg + offset */
	SFRAME_RULE_REG_DEREF,	/* in memory at register @reg + offset */
};

struct sframe_rule {
	u8	kind;		/* enum sframe_rule_kind */
	u8	reg;		/* DWARF register number, for *_REG* */
	s32	offset;
};

/* One interpreted frame row: what holds from @start up to @end. */
struct sframe_fre {
	u64			start;
	u64			end;
	struct sframe_rule	cfa;	/* SFRAME_RULE_REG or _REG_DEREF */
	struct sframe_rule	ra;
	struct sframe_rule	fp;
	u32			fde_idx;
	u32			fre_idx;
	u8			info;	/* raw FRE info byte, for dumps */
	bool			ra_mangled;	/* AArch64 PAuth signed RA */
	bool			signal;		/* v3 signal frame FDE */
	bool			ra_fixed;	/* RA offset came from header */
	bool			fp_fixed;	/* FP offset came from header */
	bool			cfi;		/* made from .eh_frame instead */
};

/* A validated FDE, version independent. */
struct sframe_fde {
	u64	start;		/* ELF vaddr of the function */
	u32	size;
	u32	fre_off;	/* first FRE, from the FRE sub-section start */
	u32	fre_start;	/* its bytes there: v3 attributes, FREs */
	u32	fre_end;
	u32	nr_fres;
	u8	fre_type;	/* SFRAME_FRE_TYPE_ADDR* */
	u8	pc_type;	/* SFRAME_PC_TYPE_* */
	u8	fde_type;	/* SFRAME_FDE_TYPE_* */
	u8	rep_size;	/* block size of a SFRAME_PC_TYPE_MASK FDE */
	u8	pauth_key;
	bool	signal;
};

struct sframe_section {
	const u8		*data;
	size_t			size;
	u64			addr;		/* vaddr of the section */
	const u8		*fres;		/* FRE sub-section */
	u32			fre_len;
	struct sframe_fde	*fdes;		/* sorted by start */
	u32			nr_fdes;
	u32			nr_fres;
	u8			version;
	u8			flags;
	u8			abi;
	s8			fixed_fp;	/* as in the header */
	s8			fixed_ra;
	bool			swap;		/* other byte order than host */
	const char		*err;		/* why decoding failed */
};

/* Sections rejected by sframe__decode(), over the life of the process. */
extern unsigned long sframe__nr_invalid;

int sframe__decode(struct sframe_section *sec, const void *data, size_t size,
		   u64 addr);
void sframe__exit(struct sframe_section *sec);

const struct sframe_fde *sframe__find_fde(const struct sframe_section *sec,
					  u64 pc);
int sframe__find_fre(const struct sframe_section *sec, u64 pc,
		     struct sframe_fre *fre);
/* The @fre_idx-th row of FDE @fde_idx, to list a section. */
int sframe__get_fre(const struct sframe_section *sec, u32 fde_idx,
		    u32 fre_idx, struct sframe_fre *fre);

/* What the format says of an ABI: one row per SFRAME_ABI_*. */
struct sframe_abi {
	u8		id;		/* SFRAME_ABI_* */
	const char	*name;
	u16		elf_machine;	/* EM_* of its code */
	bool		big_endian;
	bool		pauth;		/* RAs may be signed (AArch64 PAuth) */
	s8		fixed_ra;	/* the header's fixed RA offset; 0: none */
	u8		max_words;	/* data words of a default FDE's FRE */
	u8		sp, fp;		/* DWARF numbers of SP and FP */
	u8		ra;		/* where an RA not saved is (LR), or 0 */
};

/* The row of @abi, NULL if the format defines no such ABI. */
const struct sframe_abi *sframe__abi(u8 abi);
const char *sframe__abi_name(u8 abi);

/* Unwinding a copied user stack (x86_64 for now). */

struct sframe_frame {
	u64	ip;	/* exact for frame 0, else the return address */
	u64	sp;
	u64	fp;
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

/*
 * Fill @frames from @frames[0] (the sampled registers) outwards, at most
 * @max; return how many are filled and say why it stopped in @stop.  A frame
 * whose PC has no SFrame is still filled, with the SP and FP it had, so that
 * another unwinder can carry on from it.
 */
int sframe__unwind(struct sframe_frame *frames, int max,
		   const struct sframe_stack *stack, sframe_row_fn row,
		   void *arg, enum sframe_stop *stop);

/*
 * Follow the x86_64 frame pointer chain from @bp, in a frame whose SP is
 * @sp: at most @max return addresses into @ips, while each frame lies in
 * @stack above the last, holds a non-zero return address that @is_code
 * (if given) accepts, and links to one higher up the stack.  Returns how
 * many.
 */
int sframe__fp_walk(const struct sframe_stack *stack, u64 sp, u64 bp,
		    u64 *ips, int max, bool (*is_code)(u64 ra, void *arg),
		    void *arg);

struct dso;
struct map;
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

struct machine;
struct perf_sample;

/*
 * perf report --stats, which resolves no callchains: with an sframe style
 * first in unwind.style (sframe__style_chosen()), unwind each sample with
 * the styles chosen only to count it, so that the block says what perf
 * report would do.
 */
bool sframe__style_chosen(void);
void sframe__count_sample(struct machine *machine, struct perf_sample *sample);
/*
 * The .sframe sections of the DSOs unwound through that were rejected:
 * invalid, or unreadable (past the end of the file, empty); and their
 * "path: reason" lines for the block.
 */
extern unsigned long sframe__nr_rejected;
size_t sframe__fprintf_rejected(FILE *fp);

/*
 * The user frames of @sample (x86_64 PERF_SAMPLE_REGS_USER with IP, SP and
 * BP, and PERF_SAMPLE_STACK_USER) of @thread, for a deferred sample whose
 * PERF_RECORD_CALLCHAIN_DEFERRED never came: SFrame rows, .eh_frame rows of
 * SFrame's shape where there is no .sframe, then frame pointers from the
 * first frame without either, while they look sane.  Fills @ips with at
 * most @max return addresses, the sampled IP first, as the kernel gives a
 * callchain; returns how many, 0 when no .sframe row was used (a plain
 * frame pointer walk does as well), or -ENOMEM.
 */
int sframe__walk_snapshot(struct thread *thread, struct perf_sample *sample,
			  u64 *ips, int max);

/*
 * The decoded .sframe of @dso, loaded on first use and kept in the dso
 * until dso__delete() (NULL if it has none or it is invalid).  The file is
 * found as libdw's unwinder finds it: under --symfs, with the recording's
 * build ID; else in the build-id cache (perf archive); else debuginfod,
 * where configured; never a device file.  @bias receives what to
 * subtract from @pc, an address in @map, to get its ELF vaddr, if known
 * (then 0 is returned by dso__vaddr_bias()).
 */
const struct sframe_section *dso__sframe(struct dso *dso, struct map *map,
					 u64 pc, u64 *bias);
int dso__vaddr_bias(struct dso *dso, struct map *map, u64 pc, u64 *bias);
/* Free what dso__sframe() keeps for @dso: dso__delete() calls it. */
void sframe__dso_delete(struct dso *dso);

/*
 * Where .sframe does not reach: @dso's .eh_frame row at ELF address @vaddr as an
 * SFrame row, if the rules have SFrame's shape (CFA a register plus an
 * offset; RA and FP saved at CFA offsets, unchanged or undefined).
 * -ENOENT otherwise, or without libdw.
 */
int dso__cfi_row(struct dso *dso, u64 vaddr, struct sframe_fre *fre);

#endif /* __PERF_SFRAME_H */
