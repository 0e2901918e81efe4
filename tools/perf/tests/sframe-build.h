/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_BUILD_H
#define __PERF_SFRAME_BUILD_H

/*
 * The one writer of SFrame bytes, for what needs sections no assembler
 * made: perf test sframe and the fuzzer's seeds (fuzz/sframe-decode.c).
 * It lays out a model of functions and rows in any version, ABI and byte
 * order, with the layout of sframe.h and the ABI table's encodings (which
 * data words an FRE has, s390x's scaled CFA offset), so that a change of
 * the format is made in one place for reader and writer.
 *
 * It writes what the model says, valid or not: the caller's tests decide
 * what the decoder is to make of it.
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

/* One row: the CFA, then where the RA and the FP are saved, if they are. */
struct sframe_build_fre {
	u32	start;		/* in its function, or its PCMASK block */
	bool	fp_based;	/* CFA from the FP, else from the SP */
	bool	outermost;	/* no data words: RA undefined */
	bool	mangled;	/* AArch64 PAuth signed RA */
	s32	cfa;
	/*
	 * Saved at CFA + offset.  An ABI with a fixed RA offset has no RA
	 * word; one whose RA word comes before the FP's gets a zero RA word
	 * (padding) for an FP saved alone.
	 */
	bool	ra_saved, fp_saved;
	s32	ra, fp;
};

struct sframe_build_fde {
	u64				start;		/* ELF vaddr */
	u32				size;
	u8				rep_size;	/* PCMASK block, 0: none */
	bool				signal;		/* v3 signal frame */
	u32				nr_fres;
	const struct sframe_build_fre	*fres;
};

struct sframe_build {
	u8				version;	/* SFRAME_VERSION_* */
	u8				abi;		/* SFRAME_ABI_* */
	bool				pcrel;		/* FDE starts PC relative */
	u64				addr;		/* the section's vaddr */
	u32				nr_fdes;
	const struct sframe_build_fde	*fdes;
};

/*
 * Write the section @b describes into @buf, at most @size bytes: its size,
 * or -E2BIG if it does not fit, -EINVAL for an ABI the table has not.
 */
long sframe_build__section(const struct sframe_build *b, u8 *buf, size_t size);

/**
 * sframe_build__write_elf() - A little-endian ELF file holding an SFrame
 *			       section, for a test's dso to load
 * @fd: the file, open for writing (the caller closes it)
 * @e_machine: the ELF machine (EM_X86_64, EM_AARCH64...)
 * @addr: the section's vaddr, inside the one PT_LOAD (0 to 0x10000, r-x)
 * @sec: the section's bytes (sframe_build__section())
 * @size: their size
 *
 * The file has the ELF header, that PT_LOAD, .sframe and .shstrtab.
 *
 * Return: 0, or -1 if libelf could not write it.
 */
int sframe_build__write_elf(int fd, u16 e_machine, u64 addr, const u8 *sec, size_t size);

/*
 * The model the tests and the seeds share, at @addr: a function at 0x1000
 * with a frame (0x20 bytes: entry, SP-based and FP-based rows, an
 * epilogue after the FP was popped), a PLT of 16-byte blocks at 0x1100
 * and an outermost function at 0x1200.
 */
void sframe_build__sample(struct sframe_build *b, u8 version, u8 abi,
			  bool pcrel, u64 addr);

#endif /* __PERF_SFRAME_BUILD_H */
