/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_H
#define __PERF_SFRAME_H

/*
 * SFrame (.sframe, PT_GNU_SFRAME) decoder: the format, and nothing of perf.
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
 * FDEs, signal frame bit).  ABIs: one row each in the table sframe_abi__find()
 * reads; the section is read in its own byte order.
 *
 * The layers: this decoder, below the stack walker (sframe-walk.h: a
 * copied stack and a row lookup, no files), below the unwinder
 * (unwind-sframe.c: perf samples, threads, maps); beside them the per-DSO
 * state that finds and keeps each DSO's section (sframe-dso.h).
 *
 * Contract:
 *  - sframe_section__decode() validates the whole section once, in stages (header,
 *    each FDE with its FREs, all FREs together): every offset and count
 *    inside the section, FDEs sorted and disjoint, every FRE's size, no
 *    32/64-bit overflow.  On failure it returns a negative errno, leaves a
 *    reason in sec->err and nothing to free.  Lookups never check again.
 *  - sframe_section__check_functions() is the one check that needs what the
 *    section cannot say of itself: where the object's functions start.
 *  - sframe_section__decode() copies nothing: the caller's buffer must outlive @sec.
 *  - Addresses are ELF virtual addresses of the object the section belongs
 *    to, computed from @addr, the section's own address.
 *  - sframe_section__find_fre() gives the row for a PC; a PC no FDE covers gives
 *    -ENOENT.  The row is already interpreted for the ABI: fixed offsets from
 *    the header, the ABI's implicit rules, s390x offset encodings, flexible
 *    FDE control words; callers see only struct sframe_rule.
 *
 * The format is described in binutils' libsframe/sframe.h; libsframe itself
 * is GPLv3+ and must not be linked into perf: this is an independent reader,
 * and libsframe is only a test oracle.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct sframe_abi;

#define SFRAME_MAGIC			0xdee2

/* The byte layout: what the decoder reads and the tests' builder writes. */
#define SFRAME_HDR_SIZE			28
#define SFRAME_HDR_VERSION		2	/* offsets in the header */
#define SFRAME_HDR_FLAGS		3
#define SFRAME_HDR_ABI			4
#define SFRAME_HDR_FIXED_FP		5
#define SFRAME_HDR_FIXED_RA		6
#define SFRAME_HDR_AUXHDR_LEN		7
#define SFRAME_HDR_NR_FDES		8
#define SFRAME_HDR_NR_FRES		12
#define SFRAME_HDR_FRE_LEN		16
#define SFRAME_HDR_FDE_OFF		20	/* from the end of the header */
#define SFRAME_HDR_FRE_OFF		24
#define SFRAME_V1_FDE_SIZE		17
#define SFRAME_V2_FDE_SIZE		20
#define SFRAME_V3_FDE_SIZE		16
#define SFRAME_V3_ATTR_SIZE		5	/* before a v3 FDE's FREs */

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
	const struct sframe_abi	*abi_row;	/* sframe_abi__find(@abi) */
	s8			fixed_fp;	/* as in the header */
	s8			fixed_ra;
	bool			swap;		/* other byte order than host */
	const char		*err;		/* why decoding failed */
};

/**
 * sframe_section__decode() - Validate an SFrame section and index its FDEs
 * @sec: filled in; on failure only @sec->err is meaningful
 * @data: the section's bytes, which must outlive @sec (nothing is copied)
 * @size: their size
 * @addr: the section's ELF virtual address, that FDE starts are found from
 *
 * Checks the whole section once, in stages (header, each FDE with its
 * FREs, all FREs together), so that lookups need not.  The decoder keeps
 * no count of what it rejected: the caller counts the errors it gets.
 *
 * Return: 0, or -EINVAL for a section that is not valid (the reason in
 * @sec->err) or -ENOMEM; on error there is nothing to free.
 */
int sframe_section__decode(struct sframe_section *sec, const void *data, size_t size,
			   u64 addr);
/**
 * sframe_section__exit() - Free what sframe_section__decode() allocated for @sec
 * @sec: a section sframe_section__decode() accepted
 *
 * Return: nothing.
 */
void sframe_section__exit(struct sframe_section *sec);

/**
 * sframe_section__find_fde() - The function descriptor that covers a PC
 * @sec: a decoded section
 * @pc: an ELF virtual address of the section's object
 *
 * Return: the FDE whose range holds @pc, or NULL if none does.
 */
const struct sframe_fde *sframe_section__find_fde(const struct sframe_section *sec,
						  u64 pc);
/**
 * sframe_section__find_fre() - The frame row that holds at a PC
 * @sec: a decoded section
 * @pc: an ELF virtual address of the section's object
 * @fre: filled with the row, interpreted for the section's ABI
 *
 * Return: 0, or -ENOENT when no FDE covers @pc or no row of its FDE does.
 */
int sframe_section__find_fre(const struct sframe_section *sec, u64 pc,
			     struct sframe_fre *fre);
/**
 * sframe_section__get_fre() - A row by its place, to list a section
 * @sec: a decoded section
 * @fde_idx: the FDE, below @sec->nr_fdes
 * @fre_idx: the row of that FDE, below its nr_fres
 * @fre: filled with the row, interpreted for the section's ABI
 *
 * Return: 0, or -ENOENT for an index out of range.
 */
int sframe_section__get_fre(const struct sframe_section *sec, u32 fde_idx,
			    u32 fre_idx, struct sframe_fre *fre);

/* A function of the object, from its symbol table. */
struct sframe_func {
	u64		start;		/* ELF vaddr */
	u64		size;
	const char	*name;
	u32		shndx;		/* its section, for relocatable objects */
};

/**
 * sframe_section__check_functions() - Whether the FDEs start where the functions do
 * @sec: a decoded section
 * @funcs: the object's function symbols, sorted by start (size 0: end not
 *	   known)
 * @nr: how many
 * @fde_idx: on failure, the FDE at fault
 * @func_idx: on failure, the function it contradicts
 *
 * An FDE whose range takes in a function's start without starting there,
 * or that starts inside a function, describes other code than its own (its
 * start was moved): its rows would be applied at the wrong offsets, which
 * no check of the section alone can see.  Signal frame FDEs may start before their
 * symbol (unwinders look up PC - 1 there), and code no symbol covers (PLT,
 * stripped objects) is not judged.
 *
 * Return: NULL, or why the section is not to be used, with the FDE in
 * @fde_idx and the function in @func_idx.
 */
const char *sframe_section__check_functions(const struct sframe_section *sec,
					    const struct sframe_func *funcs, size_t nr,
				    u32 *fde_idx, size_t *func_idx);

/*
 * What each ABI is, in one table (sframe.c) that the decoder, the walker,
 * the loader and perf sframe dump all read: adding an ABI is one row there
 * plus its tests.  Register numbers are DWARF's.
 */
struct sframe_abi {
	u8		id;		/* SFRAME_ABI_* */
	const char	*name;
	u16		elf_machine;	/* EM_* of its code */
	bool		big_endian;
	bool		pauth;		/* RAs may be signed (AArch64 PAuth) */
	/* The FREs */
	s8		fixed_ra;	/* the header's fixed RA offset; 0: none */
	u8		max_words;	/* data words of a default FDE's FRE */
	bool		ra_word;	/* data words: CFA, RA, FP (else CFA, FP) */
	bool		ra_pad;		/* a zero RA word pads: RA not saved */
	bool		v2_regs;	/* v2: an odd RA/FP word is a register */
	s16		cfa_bias;	/* stored CFA offset: (off - bias) / scale */
	u8		cfa_scale;
	/* The registers */
	u8		sp, fp;		/* CFA base registers */
	u8		ra;		/* where an RA not saved is (LR), or 0 */
	s16		cfa_to_sp;	/* the caller's SP: CFA + this */
	/*
	 * A signal frame's saved IP, SP, FP and RA register, as offsets from
	 * the SP its trampoline runs with; sig_ip 0: not described, a walk
	 * stops there.
	 */
	u16		sig_ip, sig_sp, sig_fp, sig_ra;
	/* The RA's column in .eh_frame (DWARF), for rows made from it */
	u8		cfi_ra;
	/*
	 * The frame pointer walk, as one more row: kernel/unwind/user.c
	 * steps a frame record with the rule any row gives (its
	 * ARCH_INIT_USER_FP_FRAME: CFA, RA and caller's FP as offsets from
	 * FP), and so does sframe-walk.c, with the same checks for both.
	 * A CFA of SFRAME_RULE_UNDEFINED: no frame records to walk.
	 */
	struct sframe_fre fp_row;
};

/**
 * sframe_abi__find() - The ABI table's row of an SFrame ABI
 * @abi: SFRAME_ABI_*, as a section's header gives it
 *
 * Return: the row, or NULL if the format defines no such ABI.
 */
const struct sframe_abi *sframe_abi__find(u8 abi);
/**
 * sframe_abi__of_machine() - The ABI table's row of an ELF machine
 * @e_machine: EM_*, as the thread's dso gives it
 * @big_endian: that code's byte order
 *
 * Return: the row, or NULL if SFrame defines no ABI for it.
 */
const struct sframe_abi *sframe_abi__of_machine(u16 e_machine, bool big_endian);
/**
 * sframe_abi__name() - The name of an SFrame ABI, for messages and dumps
 * @abi: SFRAME_ABI_*, as a section's header gives it
 *
 * Return: its name, or "unknown" (never NULL).
 */
const char *sframe_abi__name(u8 abi);
/**
 * sframe_abi__nth() - Every row of the ABI table, for tests and dumps
 * @i: from 0, until NULL comes back
 *
 * Return: the @i-th row, or NULL past the last.
 */
const struct sframe_abi *sframe_abi__nth(unsigned int i);

#endif /* __PERF_SFRAME_H */
