// SPDX-License-Identifier: GPL-2.0
/*
 * The SFrame unwinder's per-DSO state: see dso__sframe() in sframe.h.
 *
 * A dso's .sframe, its load segments and its open .eh_frame are loaded on
 * first use and kept in the dso itself (dso__sframe_state(), like its libdw
 * and a2l state), so that they live exactly as long as the dso; the state
 * holds no reference to it.  As for dso__libdw_dwfl(), callers unwind one
 * sample at a time per session: no lock guards the first load.
 *
 * The file is the one libdw's unwinder reads (util/unwind-libdw.c), so that
 * both styles agree on a recording analysed elsewhere: see
 * dso__sframe_open().
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>
#ifdef HAVE_LIBDW_SUPPORT
#include <dwarf.h>
#include <elfutils/libdw.h>
#endif
#ifdef HAVE_DEBUGINFOD_SUPPORT
#include <elfutils/debuginfod.h>
#endif
#include <linux/compiler.h>
#include <linux/hash.h>
#include <linux/string.h>
#include <linux/zalloc.h>

#include "build-id.h"
#include "debug.h"
#include "dso.h"
#include "map.h"
#include "sframe.h"
#include "sframe-dso.h"

struct sframe_load {
	u64	offset;
	u64	vaddr;
	u64	filesz;
	u64	memsz;
	bool	exec;
};

struct sframe_cfi_row;

struct sframe_dso {
	struct sframe_section	sec;
	void			*buf;
	struct sframe_load	*loads;
	size_t			nr_loads;
	bool			ok;
	/* Its .eh_frame, kept open for dso__sframe_cfi_row(). */
	int			fd;
	Elf			*elf;
#ifdef HAVE_LIBDW_SUPPORT
	struct Dwarf_CFI_s	*cfi;
#endif
	struct sframe_cfi_row	*cfi_rows;	/* see dso__sframe_cfi_row() */
	/*
	 * Its .sframe was rejected: "path: reason" for the stats block (NULL
	 * if that could not be kept), see dso__sframe_rejected().
	 */
	bool			rejected;
	char			*rejected_why;
};

/*
 * Warn once for the dso's file at @path (the dso's state is loaded once),
 * and keep it for the stats block, which lists the rejected sections of
 * the session's dsos: they live as long as the session's machines.
 */
static void dso__sframe_reject(struct sframe_dso *sd, const char *path,
			       const char *why)
{
	pr_warning("%s: invalid .sframe (%s), not using it\n", path, why);
	sd->rejected = true;
	if (asprintf(&sd->rejected_why, "%s: %s", path, why) < 0)
		sd->rejected_why = NULL;
}

bool dso__sframe_rejected(struct dso *dso, const char **why)
{
	const struct sframe_dso *sd = dso__sframe_state(dso);

	if (!sd || !sd->rejected)
		return false;
	*why = sd->rejected_why ?: dso__long_name(dso);
	return true;
}

#ifdef HAVE_DEBUGINFOD_SUPPORT
static int dso__sframe_debuginfod(struct dso *dso, char *path, size_t size)
{
	char sbuild_id[SBUILD_ID_SIZE];
	const char *urls = getenv("DEBUGINFOD_URLS");
	debuginfod_client *c;
	char *found = NULL;
	int fd;

	/* Set by the user, or by perf_debuginfod_setup() from the config. */
	if (!urls || !*urls || !dso__has_build_id(dso))
		return -1;
	c = debuginfod_begin();
	if (!c)
		return -1;
	build_id__snprintf(dso__bid(dso), sbuild_id, sizeof(sbuild_id));
	fd = debuginfod_find_executable(c, (const unsigned char *)sbuild_id, 0,
					&found);
	debuginfod_end(c);
	if (fd >= 0 && found)
		strlcpy(path, found, size);
	free(found);
	return fd;
}
#else
static int dso__sframe_debuginfod(struct dso *dso __maybe_unused,
				  char *path __maybe_unused,
				  size_t size __maybe_unused)
{
	return -1;
}
#endif

/*
 * Open the file of @dso's code as libdw's unwinder finds it
 * (dso__find_code_file(): the recording's build ID, at its path or in the
 * build-id cache), else from debuginfod, where configured.  The path used
 * is left in @path.
 */
static int dso__sframe_open(struct dso *dso, char *path, size_t size)
{
	int fd;

	if (dso__find_code_file(dso, path, size)) {
		fd = open(path, O_RDONLY);
		if (fd >= 0)
			return fd;
	}
	return dso__sframe_debuginfod(dso, path, size);
}

static int dso__sframe_func_cmp(const void *a, const void *b)
{
	const struct sframe_func *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

int dso__sframe_elf_functions(Elf *elf, struct sframe_func **funcs)
{
	Elf_Scn *scn = NULL, *best = NULL;
	GElf_Shdr sh, bsh = { .sh_entsize = 0 };
	struct sframe_func *v;
	Elf_Data *data;
	size_t n;
	int nr = 0;

	*funcs = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB ||
		    (sh.sh_type == SHT_DYNSYM && !best)) {
			best = scn;
			bsh = sh;
		}
	}
	if (!best || !bsh.sh_entsize)
		return 0;
	data = elf_getdata(best, NULL);
	n = bsh.sh_size / bsh.sh_entsize;
	if (!data || !n || n > INT_MAX)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, i, &sym) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		name = elf_strptr(elf, bsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		v[nr++] = (struct sframe_func){
			.start = sym.st_value, .size = sym.st_size, .name = name,
			.shndx = sym.st_shndx,
		};
	}
	qsort(v, nr, sizeof(*v), dso__sframe_func_cmp);
	*funcs = v;
	return nr;
}

int dso__sframe_check_elf_functions(const struct sframe_section *sec, Elf *elf,
				    char *why, size_t size)
{
	struct sframe_func *funcs;
	const char *err;
	int nr = dso__sframe_elf_functions(elf, &funcs);
	size_t f;
	u32 i;

	if (nr <= 0)
		return 0;
	err = sframe_section__check_functions(sec, funcs, nr, &i, &f);
	if (err)
		snprintf(why, size, "%s: function %u at %#" PRIx64 ", %s at %#" PRIx64,
			 err, i, sec->fdes[i].start, funcs[f].name, funcs[f].start);
	free(funcs);
	return err ? -EINVAL : 0;
}

/*
 * What the decoder cannot see, from the file around the section: its ABI
 * is the file's machine; a linked object's FDEs are sorted (ld sorts them,
 * only relocatable objects are not); every function the section describes
 * lies in an executable segment and starts where its function symbol
 * does (sframe_section__check_functions()).  A section whose bytes say otherwise (a
 * flag or an ABI byte flipped, a start made relative to the wrong base, a
 * size run past the code, a start moved into the code before its function)
 * would unwind through rows meant for other code.
 */
static int dso__sframe_check(const struct sframe_dso *sd, Elf *elf,
			     const GElf_Ehdr *eh, char *why, size_t size)
{
	const struct sframe_abi *abi = sframe_abi__find(sd->sec.abi);

	if (!abi || abi->elf_machine != eh->e_machine ||
	    abi->big_endian != (eh->e_ident[EI_DATA] == ELFDATA2MSB)) {
		snprintf(why, size, "ABI %s, not the file's machine (%u)",
			 sframe_abi__name(sd->sec.abi), eh->e_machine);
		return -EINVAL;
	}
	if (!(sd->sec.flags & SFRAME_F_FDE_SORTED)) {
		snprintf(why, size, "FDEs not sorted in a linked object");
		return -EINVAL;
	}
	for (u32 i = 0; i < sd->sec.nr_fdes; i++) {
		const struct sframe_fde *fde = &sd->sec.fdes[i];
		bool in = false;

		for (size_t j = 0; j < sd->nr_loads && !in; j++) {
			const struct sframe_load *l = &sd->loads[j];

			in = l->exec && fde->start >= l->vaddr &&
			     fde->start - l->vaddr <= l->memsz &&
			     fde->size <= l->memsz - (fde->start - l->vaddr);
		}
		if (!in) {
			snprintf(why, size,
				 "function %u at %#" PRIx64 ", %u bytes, outside the executable segments",
				 i, fde->start, fde->size);
			return -EINVAL;
		}
	}
	return dso__sframe_check_elf_functions(&sd->sec, elf, why, size);
}

static void dso__sframe_load(struct sframe_dso *sd, struct dso *dso)
{
	char path[PATH_MAX];
	size_t shstrndx, nr_phdr;
	struct stat st;
	GElf_Ehdr eh;
	u64 file_size;
	char why[256];
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd, err;

	fd = dso__sframe_open(dso, path, sizeof(path));
	if (fd < 0)
		return;
	if (fstat(fd, &st)) {
		close(fd);
		return;
	}
	file_size = st.st_size;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || !gelf_getehdr(elf, &eh) || elf_getshdrstrndx(elf, &shstrndx) ||
	    elf_getphdrnum(elf, &nr_phdr))
		goto out;

	sd->loads = calloc(nr_phdr, sizeof(*sd->loads));
	if (!sd->loads)
		goto out;
	for (size_t i = 0; i < nr_phdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		sd->loads[sd->nr_loads++] = (struct sframe_load){
			.offset = ph.p_offset,
			.vaddr = ph.p_vaddr,
			.filesz = ph.p_filesz,
			.memsz = ph.p_memsz,
			.exec = ph.p_flags & PF_X,
		};
	}

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".sframe") || sh.sh_type == SHT_NOBITS)
			continue;
		/* Past the end of a truncated or forged file: unreadable. */
		if (sh.sh_offset > file_size ||
		    sh.sh_size > file_size - sh.sh_offset) {
			snprintf(why, sizeof(why),
				 "section at offset %#" PRIx64 ", %" PRIu64
				 " bytes, past the end of the file (%" PRIu64 " bytes)",
				 (u64)sh.sh_offset, (u64)sh.sh_size, file_size);
			dso__sframe_reject(sd, path, why);
			break;
		}
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size) {
			dso__sframe_reject(sd, path, data && !data->d_size ?
					     "empty section" :
					     "section data cannot be read");
			break;
		}
		sd->buf = malloc(data->d_size);
		if (!sd->buf)
			break;
		memcpy(sd->buf, data->d_buf, data->d_size);
		err = sframe_section__decode(&sd->sec, sd->buf, data->d_size, sh.sh_addr);
		if (!err && dso__sframe_check(sd, elf, &eh, why, sizeof(why))) {
			sframe_section__exit(&sd->sec);
			dso__sframe_reject(sd, path, why);
			zfree(&sd->buf);
			break;
		}
		if (err) {
			dso__sframe_reject(sd, path, sd->sec.err);
			zfree(&sd->buf);
			break;
		}
		sd->ok = true;
		break;
	}
out:
#ifdef HAVE_LIBDW_SUPPORT
	/* Also with .sframe: crt code and the like have no FDE. */
	if (elf && sd->loads) {
		sd->cfi = dwarf_getcfi_elf(elf);
		if (sd->cfi) {
			sd->elf = elf;
			sd->fd = fd;
			return;
		}
	}
#endif
	if (elf)
		elf_end(elf);
	close(fd);
}

static void dso__sframe_free(struct sframe_dso *sd)
{
#ifdef HAVE_LIBDW_SUPPORT
	/* dwarf_getcfi_elf()'s CFI belongs to the caller. */
	if (sd->cfi)
		dwarf_cfi_end(sd->cfi);
#endif
	if (sd->elf)
		elf_end(sd->elf);
	if (sd->fd >= 0)
		close(sd->fd);
	sframe_section__exit(&sd->sec);
	free(sd->cfi_rows);
	free(sd->rejected_why);
	free(sd->buf);
	free(sd->loads);
	free(sd);
}

/* @dso's state, loaded on first use; also when it has no file or tables. */
static struct sframe_dso *dso__sframe_get(struct dso *dso)
{
	struct sframe_dso *sd = dso__sframe_state(dso);

	if (sd)
		return sd;
	sd = zalloc(sizeof(*sd));
	if (!sd)
		return NULL;
	sd->fd = -1;
	dso__sframe_load(sd, dso);
	dso__set_sframe_state(dso, sd);
	return sd;
}

void dso__sframe_delete(struct dso *dso)
{
	struct sframe_dso *sd = dso__sframe_state(dso);

	if (sd) {
		dso__sframe_free(sd);
		dso__set_sframe_state(dso, NULL);
	}
}

static int dso__sframe_bias(const struct sframe_dso *sd, struct map *map,
			    u64 pc, u64 *bias)
{
	/* The file offset of map__start() is map__pgoff(). */
	u64 off = pc - map__start(map) + map__pgoff(map);

	for (size_t i = 0; i < sd->nr_loads; i++) {
		const struct sframe_load *l = &sd->loads[i];

		if (off >= l->offset && off - l->offset < l->filesz) {
			*bias = pc - (off - l->offset + l->vaddr);
			return 0;
		}
	}
	return -ENOENT;
}

int dso__sframe_vaddr_bias(struct dso *dso, struct map *map, u64 pc, u64 *bias)
{
	struct sframe_dso *sd = dso__sframe_get(dso);

	return sd ? dso__sframe_bias(sd, map, pc, bias) : -ENOENT;
}

const struct sframe_section *dso__sframe(struct dso *dso, struct map *map,
					 u64 pc, u64 *bias)
{
	struct sframe_dso *sd = dso__sframe_get(dso);

	if (!sd || dso__sframe_bias(sd, map, pc, bias) || !sd->ok)
		return NULL;
	return &sd->sec;
}

#ifdef HAVE_LIBDW_SUPPORT
/* A register's rule: unchanged, undefined, or saved at CFA + offset. */
static int cfi_rule(Dwarf_Frame *frame, int reg, struct sframe_rule *r)
{
	Dwarf_Op mem[3], *ops;
	size_t nops;
	s64 off = 0;

	if (dwarf_frame_register(frame, reg, mem, &ops, &nops))
		return -1;
	if (!nops) {
		r->kind = ops ? SFRAME_RULE_UNDEFINED : SFRAME_RULE_SAME;
		/* Same value: still in @reg (AArch64's RA in LR at entry). */
		r->reg = reg;
		return 0;
	}
	if (ops[0].atom != DW_OP_call_frame_cfa)
		return -1;
	if (nops == 2 && ops[1].atom == DW_OP_plus_uconst)
		off = ops[1].number;
	else if (nops == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
		off = (s64)ops[1].number;
	else if (nops != 1)
		return -1;
	if (off != (s32)off)
		return -1;
	r->kind = SFRAME_RULE_CFA;
	r->offset = off;
	return 0;
}

static int dso__sframe_cfi_lookup(struct sframe_dso *sd, const struct sframe_abi *abi,
				  u64 vaddr, struct sframe_fre *fre)
{
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr start, end;
	Dwarf_Op *ops;
	size_t nops;
	bool signal;
	u64 reg;
	s64 off;
	int ret = -ENOENT;

	memset(fre, 0, sizeof(*fre));
	if (dwarf_cfi_addrframe(sd->cfi, vaddr, &frame))
		return -ENOENT;
	fre->cfi = true;
	if (dwarf_frame_info(frame, &start, &end, &signal) < 0)
		goto out;
	fre->start = start;
	fre->end = end;
	/*
	 * A signal trampoline (__restore_rt) describes the sigcontext with
	 * expressions; the walker reads the sigcontext itself.
	 */
	if (signal) {
		fre->signal = true;
		ret = 0;
		goto out;
	}
	if (dwarf_frame_cfa(frame, &ops, &nops) || nops != 1)
		goto out;
	/* libdw gives the CFA rule as DW_OP_bregx, or a DW_OP_bregN. */
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (s64)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (s64)ops[0].number;
	} else {
		goto out;
	}
	if (reg > 255 || off != (s32)off)
		goto out;
	fre->cfa.kind = SFRAME_RULE_REG;
	fre->cfa.reg = reg;
	fre->cfa.offset = off;
	if (cfi_rule(frame, abi->cfi_ra, &fre->ra) ||
	    cfi_rule(frame, abi->fp, &fre->fp))
		goto out;
	ret = 0;
out:
	free(frame);
	return ret;
}

/*
 * libdw finds and interprets the CIE and FDE anew for each address, some
 * thousands of instructions; the return addresses of the frames outside
 * .sframe (libc's start code, the callers of a hot libc function) recur in
 * sample after sample.  Keep the last rows, answers "none" included, by
 * address.
 */
#define SFRAME_CFI_ROWS_BITS	6

struct sframe_cfi_row {
	u64			vaddr;
	int			ret;
	bool			valid;
	struct sframe_fre	fre;
};

int dso__sframe_cfi_row(struct dso *dso, const struct sframe_abi *abi, u64 vaddr,
			struct sframe_fre *fre)
{
	struct sframe_dso *sd = dso__sframe_get(dso);
	struct sframe_cfi_row *row;

	if (!sd || !sd->cfi)
		return -ENOENT;
	if (!sd->cfi_rows)
		sd->cfi_rows = calloc(1 << SFRAME_CFI_ROWS_BITS, sizeof(*sd->cfi_rows));
	if (!sd->cfi_rows)
		return dso__sframe_cfi_lookup(sd, abi, vaddr, fre);
	row = &sd->cfi_rows[hash_64(vaddr, SFRAME_CFI_ROWS_BITS)];
	if (!row->valid || row->vaddr != vaddr) {
		row->ret = dso__sframe_cfi_lookup(sd, abi, vaddr, &row->fre);
		row->vaddr = vaddr;
		row->valid = true;
	}
	*fre = row->fre;
	return row->ret;
}
#else
int dso__sframe_cfi_row(struct dso *dso __maybe_unused,
			const struct sframe_abi *abi __maybe_unused,
		 u64 vaddr __maybe_unused, struct sframe_fre *fre __maybe_unused)
{
	return -ENOENT;
}
#endif
