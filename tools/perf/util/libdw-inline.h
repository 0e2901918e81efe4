/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PERF_LIBDW_INLINE_H
#define PERF_LIBDW_INLINE_H

/*
 * Per compilation unit index of the function DIEs (DW_TAG_subprogram and
 * DW_TAG_inlined_subroutine) and their address ranges, so that the inline
 * chain of an address is a lookup instead of a walk of the whole CU.
 *
 * The index of a CU is built on its first lookup, in one pass over its DIEs,
 * and kept in the user data of the Dwfl module (the dso's libdw state): it
 * lives as long as the dso's Dwfl and is freed with it by
 * libdw_inline__free_dwfl(). The DIEs it hands out are the very DIEs that
 * cu_walk_functions_at() would, in the same order, so the callers' output
 * does not change. A CU the index cannot mirror exactly (a function with
 * addresses in an imported unit, DIE offsets out of order, too deep) is
 * walked the old way, and so is any CU first looked up once the dso's
 * indexes hold LIBDW_INLINE_MAX_BYTES.
 *
 * With -v, each index built is reported with its size and the dso's total
 * ("libdw inline index: ..."), as is a CU walked the old way.
 */

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <linux/types.h>

/* Bound of the index memory of one dso (one Dwfl module). */
#define LIBDW_INLINE_MAX_BYTES	(256UL << 20)

/**
 * libdw_inline__walk_functions_at() - cu_walk_functions_at() through the
 *				       index
 * @mod: the Dwfl module @cudie belongs to (holds the index)
 * @cudie: the CU DIE of @addr (from dwfl_module_addrdie())
 * @addr: the address, as cu_walk_functions_at() takes it
 * @callback: as for cu_walk_functions_at()
 * @data: passed to @callback
 *
 * Calls @callback with the non-inlined function DIE containing @addr, then
 * each inlined subroutine down to the innermost one, until it returns
 * non-zero.
 *
 * Return: what cu_walk_functions_at() would: 0, -ENOENT when no function
 * contains @addr, or what @callback returned to stop the walk.
 */
int libdw_inline__walk_functions_at(Dwfl_Module *mod, Dwarf_Die *cudie,
				    Dwarf_Addr addr,
				    int (*callback)(Dwarf_Die *, void *),
				    void *data);

/**
 * libdw_inline__free_dwfl() - Free the indexes kept in a Dwfl's modules
 * @dwfl: the dso's Dwfl, before dwfl_end()
 *
 * Return: nothing.
 */
void libdw_inline__free_dwfl(Dwfl *dwfl);

#endif /* PERF_LIBDW_INLINE_H */
