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
#include <stdio.h>

struct dso;
struct map;
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
 * The .sframe sections of the DSOs unwound through that were rejected:
 * invalid, or unreadable (past the end of the file,
 * empty); and their "path: reason" lines for the stats block.
 */
extern unsigned long sframe__nr_rejected;
size_t sframe__fprintf_rejected(FILE *fp);

#endif /* __PERF_SFRAME_DSO_H */
