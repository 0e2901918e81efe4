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
struct sframe_func;
struct sframe_fre;
struct sframe_section;

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

/*
 * The FUNC symbols of @elf's .symtab, else of its .dynsym (a stripped
 * file), sorted by start, into @funcs (to free), for the check of
 * sframe__check_functions() and the names of perf sframe dump.  Their
 * names point into @elf.  Returns how many, or -ENOMEM.
 */
int sframe__elf_functions(struct Elf *elf, struct sframe_func **funcs);
/*
 * sframe__check_functions() of @sec against @elf's symbols: 0, or -EINVAL
 * with why, the FDE and the function in @why.
 */
int sframe__check_elf_functions(const struct sframe_section *sec,
				struct Elf *elf, char *why, size_t size);

/*
 * Whether @dso's .sframe was rejected when dso__sframe() loaded it:
 * invalid (the decoder's reason, or FDEs that do not start at the
 * functions of the symbol table), or unreadable (past the end of the file,
 * empty).  If so, @why gets its "path: reason" line for the stats block.
 * The state is the dso's: a session lists the rejected sections of its
 * machines' dsos.
 */
bool dso__sframe_rejected(struct dso *dso, const char **why);

#endif /* __PERF_SFRAME_DSO_H */
