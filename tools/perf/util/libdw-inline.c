// SPDX-License-Identifier: GPL-2.0
/*
 * Inline chains as a lookup: a per-CU index of the function DIEs and their
 * ranges. See libdw-inline.h for the contract.
 *
 * cu_walk_functions_at() finds the subprogram containing an address with
 * dwarf_getfuncs() (the first one in its visit order whose ranges contain
 * it), then, from each DIE of the chain, the first DW_TAG_inlined_subroutine
 * in pre-order among its descendants that contains the address. Both walks
 * cost the size of the CU or of the function, for every address: in an
 * amalgamation (one CU for the whole program) about 2 ms an address.
 *
 * The index keeps, for each function DIE that has ranges, its offset and
 * the offset of its last descendant: DIE offsets grow in pre-order, so "a
 * descendant of P" is "offset in (P, P's last]" and "first in pre-order" is
 * "smallest offset". Subprograms also keep their dwarf_getfuncs() order,
 * which is pre-order too: the index is built in one walk, without asking
 * dwarf_getfuncs() to walk the CU a second time (unless the CU imports
 * units), and only over the DIEs either walk would visit.
 * Ranges are sorted by start with a running maximum of their ends, so the
 * ranges containing an address are found by a binary search and a short
 * walk back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "debug.h"
#include "dwarf-aux.h"
#include "hashmap.h"
#include "libdw-inline.h"

/* Deeper DIE trees than this are walked the old way. */
#define LIBDW_INLINE_MAX_DEPTH	256

#define NO_FUNC_ORDER	((u32)-1)

struct libdw_inline_die {
	Dwarf_Die	die;
	Dwarf_Off	off;		/* dwarf_dieoffset() */
	Dwarf_Off	last;		/* offset of its last descendant */
	u32		func_order;	/* dwarf_getfuncs() order, subprograms */
};

struct libdw_inline_range {
	Dwarf_Addr	lo;
	Dwarf_Addr	hi;		/* exclusive, as dwarf_haspc() */
	Dwarf_Addr	max_hi;		/* max of hi over this and earlier ranges */
	u32		die;		/* index into libdw_cu_index.dies */
};

struct libdw_range_set {
	struct libdw_inline_range	*r;
	size_t				nr;
	size_t				alloc;
};

struct libdw_cu_index {
	bool				fallback;
	struct libdw_inline_die		*dies;	/* by offset */
	size_t				nr_dies;
	size_t				alloc_dies;
	struct libdw_range_set		funcs;	/* subprograms */
	struct libdw_range_set		inlines; /* inlined subroutines */
	size_t				bytes;
};

/* The user data of a Dwfl module: its CUs' indexes. */
struct libdw_inline {
	struct hashmap	cus;		/* Dwarf_CU * -> struct libdw_cu_index * */
	size_t		bytes;
	bool		warned_cap;
};

static size_t cu_hash(long key, void *ctx __maybe_unused)
{
	return (size_t)key >> 4;
}

static bool cu_equal(long key1, long key2, void *ctx __maybe_unused)
{
	return key1 == key2;
}

static int range_set__add(struct libdw_range_set *set, Dwarf_Addr lo,
			  Dwarf_Addr hi, u32 die)
{
	if (set->nr == set->alloc) {
		size_t alloc = set->alloc ? set->alloc * 2 : 64;
		void *r = realloc(set->r, alloc * sizeof(*set->r));

		if (!r)
			return -ENOMEM;
		set->r = r;
		set->alloc = alloc;
	}
	set->r[set->nr].lo = lo;
	set->r[set->nr].hi = hi;
	set->r[set->nr].die = die;
	set->nr++;
	return 0;
}

static int range_cmp(const void *a, const void *b)
{
	const struct libdw_inline_range *ra = a, *rb = b;

	if (ra->lo != rb->lo)
		return ra->lo < rb->lo ? -1 : 1;
	if (ra->die != rb->die)
		return ra->die < rb->die ? -1 : 1;
	return 0;
}

/* Sort by start, fill the running maximum of the ends, trim the slack. */
static void range_set__finish(struct libdw_range_set *set)
{
	Dwarf_Addr max_hi = 0;
	size_t i;

	if (!set->nr) {
		zfree(&set->r);
		set->alloc = 0;
		return;
	}
	qsort(set->r, set->nr, sizeof(*set->r), range_cmp);
	for (i = 0; i < set->nr; i++) {
		if (set->r[i].hi > max_hi)
			max_hi = set->r[i].hi;
		set->r[i].max_hi = max_hi;
	}
	if (set->alloc > set->nr) {
		void *r = realloc(set->r, set->nr * sizeof(*set->r));

		if (r) {
			set->r = r;
			set->alloc = set->nr;
		}
	}
}

/*
 * Call @fn for each range of @set containing @addr, walking back from the
 * last range starting at or before @addr while the running maximum of the
 * ends says an earlier range may still contain it.
 */
static void range_set__visit_at(struct libdw_range_set *set, Dwarf_Addr addr,
				void (*fn)(u32 die, void *arg), void *arg)
{
	size_t lo = 0, hi = set->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (set->r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo-- > 0) {
		const struct libdw_inline_range *r = &set->r[lo];

		if (r->max_hi <= addr)
			break;
		if (addr < r->hi)
			fn(r->die, arg);
	}
}

static int cu_index__add_die(struct libdw_cu_index *idx, Dwarf_Die *die,
			     Dwarf_Off off, int tag)
{
	struct libdw_range_set *set = tag == DW_TAG_subprogram ?
				      &idx->funcs : &idx->inlines;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t roff = 0;
	size_t nr = set->nr;
	u32 n = idx->nr_dies;

	/* The ranges dwarf_haspc() goes through; empty ones never match. */
	while ((roff = dwarf_ranges(die, roff, &base, &lo, &hi)) > 0) {
		if (lo < hi && range_set__add(set, lo, hi, n))
			return -ENOMEM;
	}
	if (set->nr == nr)
		return -1;	/* no address: never in a chain */

	if (idx->nr_dies == idx->alloc_dies) {
		size_t alloc = idx->alloc_dies ? idx->alloc_dies * 2 : 64;
		void *d = realloc(idx->dies, alloc * sizeof(*idx->dies));

		if (!d)
			return -ENOMEM;
		idx->dies = d;
		idx->alloc_dies = alloc;
	}
	idx->dies[n].die = *die;
	idx->dies[n].off = off;
	idx->dies[n].last = off;
	idx->dies[n].func_order = NO_FUNC_ORDER;
	idx->nr_dies++;
	return n;
}

/*
 * Whether dwarf_getfuncs() descends into the children of @die, which it
 * visits (__libdw_visit_scopes() and dwarf_getfuncs()'s tree_visitor() of
 * elfutils): only scopes (may_have_scopes()), and in a C CU only
 * subprograms, lexical blocks and inlined subroutines.
 */
static bool getfuncs__descends(int tag, bool c_cu)
{
	switch (tag) {
	case DW_TAG_subprogram:
	case DW_TAG_lexical_block:
	case DW_TAG_inlined_subroutine:
		return true;
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return !c_cu;
	default:
		return false;
	}
}

/* Where cu_index__walk() stands, for the children of one DIE. */
struct walk_scope {
	bool	getfuncs;	/* dwarf_getfuncs() visits them */
	bool	in_func;	/* under a subprogram it hands out */
};

/*
 * Index the function DIEs under @parent, in pre-order, as die_find_child()
 * visits them (every child, whatever its tag) under each subprogram that
 * dwarf_getfuncs() hands out; outside those, only the subtrees
 * dwarf_getfuncs() descends into are walked (types, their members and
 * template parameters are most DIEs of a C++ CU, and none of them is ever
 * in a chain). The subprograms dwarf_getfuncs() hands out get their
 * pre-order rank as its order: it visits in pre-order, so ranks compare as
 * its order does. A DW_TAG_imported_unit it would follow leaves the order
 * to dwarf_getfuncs() itself (*@imports). Sets *@last to the offset of the
 * last DIE of the subtree, when walked whole. Returns 0, -ENOMEM, or
 * -EINVAL when the tree cannot be mirrored (offsets out of order, too deep).
 */
static int cu_index__walk(struct libdw_cu_index *idx, Dwarf_Die *parent,
			  Dwarf_Off parent_off, struct walk_scope scope,
			  bool c_cu, int depth, Dwarf_Off *last, bool *imports)
{
	Dwarf_Off prev = parent_off;
	Dwarf_Die child;
	int ret;

	*last = parent_off;
	if (depth > LIBDW_INLINE_MAX_DEPTH)
		return -EINVAL;
	if (dwarf_child(parent, &child) != 0)
		return 0;

	do {
		Dwarf_Off off = dwarf_dieoffset(&child), sub_last;
		int tag = dwarf_tag(&child), n = -1;
		struct walk_scope sub = {
			.getfuncs = scope.getfuncs && getfuncs__descends(tag, c_cu),
			.in_func = scope.in_func,
		};
		bool handed_out = false;

		if (off <= prev)
			return -EINVAL;
		if (scope.getfuncs && tag == DW_TAG_imported_unit)
			*imports = true;
		if (tag == DW_TAG_subprogram && scope.getfuncs) {
			bool decl = dwarf_hasattr(&child, DW_AT_declaration);

			handed_out = !decl;
			/*
			 * A declaration has no code, and what is under it
			 * (parameters) has none either: nothing there can be
			 * in a chain.  Most DIEs of a C++ CU are the parameters
			 * of member function declarations, in its classes.
			 */
			if (decl && !scope.in_func)
				sub.getfuncs = false;
		}
		if ((tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) &&
		    (scope.in_func || handed_out)) {
			n = cu_index__add_die(idx, &child, off, tag);
			if (n == -ENOMEM)
				return n;
			if (n >= 0 && handed_out)
				idx->dies[n].func_order = n;
		}
		/* A handed out one without addresses is never a chain's head. */
		if (n >= 0 && handed_out)
			sub.in_func = true;
		sub_last = off;
		if ((sub.in_func || sub.getfuncs) && dwarf_haschildren(&child)) {
			ret = cu_index__walk(idx, &child, off, sub, c_cu, depth + 1,
					     &sub_last, imports);
			if (ret)
				return ret;
		}
		if (n >= 0)
			idx->dies[n].last = sub_last;
		prev = sub_last;
	} while (dwarf_siblingof(&child, &child) == 0);

	*last = prev;
	return 0;
}

static struct libdw_inline_die *cu_index__find_die(struct libdw_cu_index *idx,
						   Dwarf_Off off)
{
	size_t lo = 0, hi = idx->nr_dies;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (idx->dies[mid].off == off)
			return &idx->dies[mid];
		if (idx->dies[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct getfuncs_arg {
	struct libdw_cu_index	*idx;
	Dwarf_CU		*cu;
	u32			order;
	bool			foreign;
};

static int cu_index__getfuncs_cb(Dwarf_Die *die, void *_arg)
{
	struct getfuncs_arg *arg = _arg;
	struct libdw_inline_die *d;

	/*
	 * dwarf_getfuncs() follows DW_TAG_imported_unit (dwz's partial units),
	 * die_find_child() does not. What dwz moves there are abstract
	 * instances, without addresses: never a match, skip them. One with
	 * an address the index cannot place: walk this CU the old way.
	 */
	if (die->cu != arg->cu) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t roff = 0;

		while ((roff = dwarf_ranges(die, roff, &base, &lo, &hi)) > 0) {
			if (lo < hi) {
				arg->foreign = true;
				return DWARF_CB_ABORT;
			}
		}
		arg->order++;
		return DWARF_CB_OK;
	}
	d = cu_index__find_die(arg->idx, dwarf_dieoffset(die));
	/* Not indexed: no ranges, it cannot contain any address. */
	if (d && d->func_order == NO_FUNC_ORDER)
		d->func_order = arg->order;
	arg->order++;
	return DWARF_CB_OK;
}

static void cu_index__delete(struct libdw_cu_index *idx)
{
	if (!idx)
		return;
	free(idx->dies);
	free(idx->funcs.r);
	free(idx->inlines.r);
	free(idx);
}

/* Build the index of @cudie; a fallback index when it cannot be mirrored. */
static struct libdw_cu_index *cu_index__new(Dwarf_Die *cudie)
{
	struct libdw_cu_index *idx = zalloc(sizeof(*idx));
	struct getfuncs_arg arg = { .cu = cudie->cu, };
	struct walk_scope scope = { .getfuncs = true, };
	int lang = dwarf_srclang(cudie);
	/* dwarf_getfuncs()'s own test (elfutils 0.188) of a pure C CU */
	bool c_cu = lang == DW_LANG_C89 || lang == DW_LANG_C ||
		    lang == DW_LANG_C99 || lang == DW_LANG_C11;
	bool imports = false;
	Dwarf_Off last;
	size_t i;
	int ret;

	if (!idx)
		return NULL;
	arg.idx = idx;
	ret = cu_index__walk(idx, cudie, dwarf_dieoffset(cudie), scope, c_cu, 0,
			     &last, &imports);
	if (ret == -ENOMEM)
		goto out_enomem;
	/*
	 * dwarf_getfuncs() would follow an imported unit: let it give its
	 * order itself, and say whether a subprogram it hands out from the
	 * imported unit has addresses.
	 */
	if (!ret && imports) {
		for (i = 0; i < idx->nr_dies; i++)
			idx->dies[i].func_order = NO_FUNC_ORDER;
		if (dwarf_getfuncs(cudie, cu_index__getfuncs_cb, &arg, 0) != 0 &&
		    arg.foreign)
			ret = -EINVAL;
	}
	if (ret) {
		free(idx->dies);
		free(idx->funcs.r);
		free(idx->inlines.r);
		memset(idx, 0, sizeof(*idx));
		idx->fallback = true;
		idx->bytes = sizeof(*idx);
		return idx;
	}
	if (idx->alloc_dies > idx->nr_dies) {
		void *d = realloc(idx->dies, idx->nr_dies * sizeof(*idx->dies));

		if (d || !idx->nr_dies) {
			idx->dies = d;
			idx->alloc_dies = idx->nr_dies;
		}
	}
	range_set__finish(&idx->funcs);
	range_set__finish(&idx->inlines);
	idx->bytes = sizeof(*idx) + idx->alloc_dies * sizeof(*idx->dies) +
		     (idx->funcs.alloc + idx->inlines.alloc) *
		     sizeof(struct libdw_inline_range);
	return idx;

out_enomem:
	cu_index__delete(idx);
	return NULL;
}

struct func_at {
	struct libdw_cu_index	*idx;
	u32			best;
};

static void func_at__cb(u32 die, void *_arg)
{
	struct func_at *arg = _arg;
	u32 order = arg->idx->dies[die].func_order;

	/* Nested subprograms dwarf_getfuncs() skips have no order. */
	if (order == NO_FUNC_ORDER)
		return;
	if (arg->best == NO_FUNC_ORDER ||
	    order < arg->idx->dies[arg->best].func_order)
		arg->best = die;
}

/* The inline DIEs containing an address: as many as its inline depth. */
struct inlines_at {
	u32	*dies;		/* stack[] until it overflows */
	size_t	nr;
	size_t	alloc;
	bool	enomem;
	u32	stack[16];
};

static void inlines_at__cb(u32 die, void *_arg)
{
	struct inlines_at *arg = _arg;

	if (arg->nr == arg->alloc) {
		size_t alloc = arg->alloc * 2;
		u32 *d = arg->dies == arg->stack ? malloc(alloc * sizeof(*d)) :
						    realloc(arg->dies, alloc * sizeof(*d));

		if (!d) {
			arg->enomem = true;
			return;
		}
		if (arg->dies == arg->stack)
			memcpy(d, arg->stack, arg->nr * sizeof(*d));
		arg->dies = d;
		arg->alloc = alloc;
	}
	arg->dies[arg->nr++] = die;
}

static int u32_cmp(const void *a, const void *b)
{
	u32 ua = *(const u32 *)a, ub = *(const u32 *)b;

	return ua < ub ? -1 : ua > ub;
}

/*
 * Returns false, having called nothing, when it cannot hold the DIEs at
 * @addr; else true and what cu_walk_functions_at() returns in *@ret.
 */
static bool cu_index__walk_functions_at(struct libdw_cu_index *idx,
					Dwarf_Addr addr,
					int (*callback)(Dwarf_Die *, void *),
					void *data, int *ret)
{
	struct func_at fa = { .idx = idx, .best = NO_FUNC_ORDER, };
	struct inlines_at ia = { .alloc = ARRAY_SIZE(ia.stack), };
	struct libdw_inline_die *cur;
	Dwarf_Die die_mem;
	size_t i;

	range_set__visit_at(&idx->funcs, addr, func_at__cb, &fa);
	if (fa.best == NO_FUNC_ORDER) {
		*ret = -ENOENT;
		return true;
	}

	ia.dies = ia.stack;
	range_set__visit_at(&idx->inlines, addr, inlines_at__cb, &ia);
	if (ia.enomem) {
		if (ia.dies != ia.stack)
			free(ia.dies);
		return false;
	}
	/* Indexes of dies[] grow with the offsets: sorting them is enough. */
	qsort(ia.dies, ia.nr, sizeof(*ia.dies), u32_cmp);

	cur = &idx->dies[fa.best];
	die_mem = cur->die;
	*ret = callback(&die_mem, data);
	for (i = 0; !*ret && i < ia.nr; i++) {
		struct libdw_inline_die *d = &idx->dies[ia.dies[i]];

		if (d->off <= cur->off)
			continue;	/* before, or a second range of cur */
		if (d->off > cur->last)
			break;		/* no later one is under cur either */
		cur = d;
		die_mem = cur->die;
		*ret = callback(&die_mem, data);
	}
	if (ia.dies != ia.stack)
		free(ia.dies);
	return true;
}

/*
 * The module's user data is the caller's: libdw.c's offline callbacks
 * (dwfl_build_id_find_elf, dwfl_standard_find_debuginfo,
 * dwfl_offline_section_address) leave it alone.
 */
static struct libdw_inline *libdw_inline__get(Dwfl_Module *mod)
{
	struct libdw_inline *li;
	void **userdata;

	if (!dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL))
		return NULL;
	if (*userdata)
		return *userdata;
	li = zalloc(sizeof(*li));
	if (!li)
		return NULL;
	hashmap__init(&li->cus, cu_hash, cu_equal, NULL);
	*userdata = li;
	return li;
}

static struct libdw_cu_index *libdw_inline__cu(struct libdw_inline *li,
					       Dwfl_Module *mod,
					       Dwarf_Die *cudie)
{
	const char *name = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL,
					    NULL, NULL);
	u64 cu_off = dwarf_dieoffset(cudie);
	struct libdw_cu_index *idx;

	if (hashmap__find(&li->cus, (long)cudie->cu, &idx))
		return idx;

	if (li->bytes >= LIBDW_INLINE_MAX_BYTES) {
		if (!li->warned_cap) {
			pr_debug("libdw inline index: %s: %zu bytes held, further CUs are walked\n",
				 name, li->bytes);
			li->warned_cap = true;
		}
		return NULL;
	}
	idx = cu_index__new(cudie);
	if (!idx)
		return NULL;
	if (hashmap__add(&li->cus, (long)cudie->cu, idx)) {
		cu_index__delete(idx);
		return NULL;
	}
	li->bytes += idx->bytes;
	if (idx->fallback)
		pr_debug("libdw inline index: %s: CU %#" PRIx64 " cannot be indexed, walked\n",
			 name, cu_off);
	else
		pr_debug("libdw inline index: %s: CU %#" PRIx64 ": %zu DIEs, %zu ranges, %zu bytes, dso total %zu bytes\n",
			 name, cu_off, idx->nr_dies, idx->funcs.nr + idx->inlines.nr,
			 idx->bytes, li->bytes);
	return idx;
}

int libdw_inline__walk_functions_at(Dwfl_Module *mod, Dwarf_Die *cudie,
				    Dwarf_Addr addr,
				    int (*callback)(Dwarf_Die *, void *),
				    void *data)
{
	struct libdw_inline *li = libdw_inline__get(mod);
	struct libdw_cu_index *idx = li ? libdw_inline__cu(li, mod, cudie) : NULL;
	int ret;

	if (idx && !idx->fallback &&
	    cu_index__walk_functions_at(idx, addr, callback, data, &ret))
		return ret;
	return cu_walk_functions_at(cudie, addr, callback, data);
}

static int free_module_cb(Dwfl_Module *mod __maybe_unused, void **userdata,
			  const char *name __maybe_unused,
			  Dwarf_Addr start __maybe_unused,
			  void *arg __maybe_unused)
{
	struct libdw_inline *li = *userdata;
	struct hashmap_entry *cur;
	size_t bkt;

	if (!li)
		return DWARF_CB_OK;
	hashmap__for_each_entry(&li->cus, cur, bkt)
		cu_index__delete((struct libdw_cu_index *)cur->pvalue);
	hashmap__clear(&li->cus);
	free(li);
	*userdata = NULL;
	return DWARF_CB_OK;
}

void libdw_inline__free_dwfl(Dwfl *dwfl)
{
	dwfl_getmodules(dwfl, free_module_cb, NULL, 0);
}
