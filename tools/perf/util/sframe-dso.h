/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __PERF_SFRAME_DSO_H
#define __PERF_SFRAME_DSO_H

/*
 * The SFrame unwinder's per-DSO state, beside the walker and the decoder:
 * each dso's decoded .sframe, its load segments and its .eh_frame, found
 * the way libdw's unwinder finds the file, loaded on first use and kept in
 * the dso itself (like its libdw and a2l state) until dso__delete().
 */

#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>

struct Elf;
struct dso;
struct map;
struct sframe_abi;
struct sframe_func;
struct sframe_fre;
struct sframe_section;

/**
 * dso__sframe() - The decoded .sframe of a dso
 * @dso: the dso, whose SFrame state is loaded on first use and kept in it
 *	 until dso__delete()
 * @map: a map of @dso that holds @pc
 * @pc: a runtime address in @map
 * @bias: receives what to subtract from @pc to get its ELF vaddr
 *
 * The file is found as libdw's unwinder finds it: under --symfs, with the
 * recording's build ID; else in the build-id cache (perf archive); else
 * debuginfod, where configured; never a device file.  A section that is
 * not valid is rejected once, with a warning, and remembered for the
 * stats block (dso__sframe_rejected()).
 *
 * Return: the section, or NULL if @dso has none, it was rejected or @pc
 * is in no load segment of the file (then @bias is not set).
 */
const struct sframe_section *dso__sframe(struct dso *dso, struct map *map,
					 u64 pc, u64 *bias);
/**
 * dso__sframe_vaddr_bias() - What to subtract from a runtime address to get its
 *		       ELF vaddr
 * @dso: the dso, whose SFrame state (load segments) is loaded on first use
 * @map: a map of @dso that holds @pc
 * @pc: a runtime address in @map
 * @bias: receives the bias
 *
 * Return: 0, or -ENOENT when @pc is in no load segment of @dso's file (or
 * the file cannot be read).
 */
int dso__sframe_vaddr_bias(struct dso *dso, struct map *map, u64 pc, u64 *bias);
/**
 * dso__sframe_delete() - Free what dso__sframe() keeps for a dso
 * @dso: the dso; dso__delete() calls this
 *
 * Return: nothing.
 */
void dso__sframe_delete(struct dso *dso);

/**
 * dso__sframe_cfi_row() - An .eh_frame row as an SFrame row, where .sframe does
 *		    not reach
 * @dso: the dso, whose .eh_frame its SFrame state keeps open
 * @abi: the dso's ABI row, whose RA and FP columns are taken
 * @vaddr: an ELF virtual address of @dso's file
 * @fre: filled with the row, ->cfi set
 *
 * Only rules of SFrame's shape are taken: the CFA a register plus an
 * offset; RA and FP saved at CFA offsets, unchanged or undefined.
 *
 * Return: 0, or -ENOENT when there is no such row (or perf has no libdw).
 */
int dso__sframe_cfi_row(struct dso *dso, const struct sframe_abi *abi, u64 vaddr,
			struct sframe_fre *fre);

/**
 * dso__sframe_elf_functions() - The function symbols of an ELF file
 * @elf: the file
 * @funcs: receives them (to free), sorted by start; their names point
 *	   into @elf
 *
 * The FUNC symbols of @elf's .symtab, else of its .dynsym (a stripped
 * file), for the check of sframe_section__check_functions() and the names of
 * perf sframe dump.
 *
 * Return: how many, or -ENOMEM; @funcs is to be freed in any case.
 */
int dso__sframe_elf_functions(struct Elf *elf, struct sframe_func **funcs);
/**
 * dso__sframe_check_elf_functions() - sframe_section__check_functions() against the
 *				   symbols of an ELF file
 * @sec: a section decoded from @elf
 * @elf: the file
 * @why: receives why the section is not to be used, the FDE and the
 *	 function, on failure
 * @size: the size of @why
 *
 * Return: 0 (also when @elf has no function symbols), or -EINVAL.
 */
int dso__sframe_check_elf_functions(const struct sframe_section *sec,
				    struct Elf *elf, char *why, size_t size);

/**
 * dso__sframe_rejected() - Whether a dso's .sframe was rejected
 * @dso: the dso
 * @why: if so, receives its "path: reason" line for the stats block
 *
 * Rejected when dso__sframe() loaded it: invalid (the decoder's reason,
 * or FDEs that do not start at the functions of the symbol table), or
 * unreadable (past the end of the file, empty).  The state is the dso's:
 * a session lists the rejected sections of its machines' dsos.
 *
 * Return: true if it was rejected.
 */
bool dso__sframe_rejected(struct dso *dso, const char **why);

#endif /* __PERF_SFRAME_DSO_H */
