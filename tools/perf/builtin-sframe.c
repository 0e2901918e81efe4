// SPDX-License-Identifier: GPL-2.0
/*
 * perf sframe dump FILE...: show what perf's SFrame decoder reads in an ELF
 * file: the header, every FDE and its rows in the layout of
 * `readelf --sframe`, named by the function symbols, then how much of
 * .text the section covers and which functions it leaves out.  In a
 * relocatable object the relocations of .sframe are applied first.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>
#include <subcmd/parse-options.h>

#include "builtin.h"
#include "util/debug.h"
#include "util/sframe.h"
#include "util/sframe-dso.h"

static const char * const sframe_usage[] = {
	"perf sframe dump [<options>] <file>...",
	NULL
};

/* Function symbols by address, to name the FDEs. */
/*
 * In a relocatable object every code section starts at 0: an FDE is told
 * apart by the section its start address is relocated against.
 */
struct dump_origin {
	u64	start;
	u32	size;
	u16	shndx;
	bool	used;
};

struct dump_syms {
	struct sframe_func	*v;	/* dso__sframe_elf_functions() */
	size_t			n;
	bool			rel;	/* ET_REL: match sections too */
	struct dump_origin	*origins;
	size_t			nr_origins;
};

static void dump_syms__load(struct dump_syms *syms, Elf *elf)
{
	int n = dso__sframe_elf_functions(elf, &syms->v);

	syms->n = n > 0 ? n : 0;
}

/* The section of a relocatable object's FDE, or -1 if not known. */
static int dump_syms__section(struct dump_syms *syms,
			      const struct sframe_fde *fde)
{
	for (size_t i = 0; i < syms->nr_origins; i++) {
		struct dump_origin *o = &syms->origins[i];

		if (!o->used && o->start == fde->start && o->size == fde->size) {
			o->used = true;
			return o->shndx;
		}
	}
	return -1;
}

/* The name of the function starting at @addr (in section @shndx), or NULL. */
static const char *dump_syms__name(const struct dump_syms *syms, u64 addr,
				   int shndx)
{
	size_t lo = 0, hi = syms->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (syms->v[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < syms->n && syms->v[lo].start == addr; lo++) {
		if (!syms->rel || shndx < 0 || syms->v[lo].shndx == (u32)shndx)
			return syms->v[lo].name;
	}
	return NULL;
}

/*
 * How a relocation of the .sframe of a relocatable object fills its field:
 * the start addresses of the FDEs are relocations against their code
 * section, and are 0 in the file until a linker applies them.
 */
static int reloc_kind(u16 machine, u32 type, int *size, bool *pcrel)
{
	static const struct {
		u16	machine;
		u32	type;
		u8	size;
		bool	pcrel;
	} kinds[] = {
		{ EM_X86_64, R_X86_64_PC32, 4, true },
		{ EM_X86_64, R_X86_64_PC64, 8, true },
		{ EM_X86_64, R_X86_64_32, 4, false },
		{ EM_X86_64, R_X86_64_32S, 4, false },
		{ EM_X86_64, R_X86_64_64, 8, false },
		{ EM_AARCH64, R_AARCH64_PREL32, 4, true },
		{ EM_AARCH64, R_AARCH64_PREL64, 8, true },
		{ EM_AARCH64, R_AARCH64_ABS32, 4, false },
		{ EM_AARCH64, R_AARCH64_ABS64, 8, false },
		{ EM_S390, R_390_PC32, 4, true },
		{ EM_S390, R_390_PC64, 8, true },
		{ EM_S390, R_390_32, 4, false },
		{ EM_S390, R_390_64, 8, false },
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++) {
		if (kinds[i].machine == machine && kinds[i].type == type) {
			*size = kinds[i].size;
			*pcrel = kinds[i].pcrel;
			return 0;
		}
	}
	return -1;
}

/*
 * Apply to @buf, a copy of the .sframe section @scn at @addr of relocatable
 * object @elf, its RELA relocations, as a linker placing every section at
 * its sh_addr (0) would.  Returns how many could not be applied.
 */
static int apply_relocs(Elf *elf, Elf_Scn *scn, u64 addr, u8 *buf, size_t size,
			struct dump_syms *syms)
{
	/*
	 * The assembler makes every start PC relative to its field; ld then
	 * writes it relative to the section where the header has no
	 * SFRAME_F_FDE_FUNC_START_PCREL (v1, v2 before binutils 2.45).
	 */
	bool field_rel = size > 3 && (buf[3] & SFRAME_F_FDE_FUNC_START_PCREL);
	size_t idx = elf_ndxscn(scn);
	Elf_Scn *rs = NULL;
	GElf_Ehdr eh;
	int bad = 0;

	if (!gelf_getehdr(elf, &eh))
		return 1;
	while ((rs = elf_nextscn(elf, rs)) != NULL) {
		Elf_Data *rd, *sd;
		GElf_Shdr sh, symsh;
		Elf_Scn *symscn;
		size_t n;

		if (!gelf_getshdr(rs, &sh) || sh.sh_type != SHT_RELA ||
		    sh.sh_info != idx || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		rd = elf_getdata(rs, NULL);
		sd = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!rd || !sd || !gelf_getshdr(symscn, &symsh))
			return 1;
		n = sh.sh_size / sh.sh_entsize;
		free(syms->origins);
		syms->origins = calloc(n, sizeof(*syms->origins));
		syms->nr_origins = 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym sym;
			int sz;
			bool pcrel;
			u64 v;

			if (!gelf_getrela(rd, i, &r) ||
			    !gelf_getsym(sd, GELF_R_SYM(r.r_info), &sym) ||
			    reloc_kind(eh.e_machine, GELF_R_TYPE(r.r_info), &sz, &pcrel) ||
			    r.r_offset > size || size - r.r_offset < (u64)sz) {
				bad++;
				continue;
			}
			v = sym.st_value + r.r_addend;
			if (syms->origins && size - r.r_offset >= (u64)sz + 4) {
				struct dump_origin *o = &syms->origins[syms->nr_origins++];
				bool be = eh.e_ident[EI_DATA] == ELFDATA2MSB;
				const u8 *q = buf + r.r_offset + sz;

				o->start = v;
				o->size = be ? (u32)q[0] << 24 | q[1] << 16 | q[2] << 8 | q[3] :
					  (u32)q[3] << 24 | q[2] << 16 | q[1] << 8 | q[0];
				o->shndx = sym.st_shndx;
			}
			if (pcrel)
				v -= field_rel ? addr + r.r_offset : addr;
			for (int b = 0; b < sz; b++) {
				int shift = eh.e_ident[EI_DATA] == ELFDATA2MSB ?
					    (sz - 1 - b) * 8 : b * 8;

				buf[r.r_offset + b] = v >> shift;
			}
		}
	}
	return bad;
}

static const char *reg_name(const struct sframe_section *sec, u8 reg)
{
	const struct sframe_abi *abi = sframe_abi__find(sec->abi);
	static char buf[16];

	if (abi && reg == abi->sp)
		return "sp";
	if (abi && reg == abi->fp)
		return "fp";
	snprintf(buf, sizeof(buf), "r%u", reg);
	return buf;
}

/* readelf's notation: u undefined/unchanged, f fixed, c+N at CFA+N. */
static void rule_str(const struct sframe_section *sec,
		     const struct sframe_rule *r, bool fixed, char *buf,
		     size_t size)
{
	switch (r->kind) {
	case SFRAME_RULE_CFA:
		if (fixed)
			snprintf(buf, size, "f");
		else
			snprintf(buf, size, "c%+d", r->offset);
		break;
	case SFRAME_RULE_REG:
		snprintf(buf, size, "%s%+d", reg_name(sec, r->reg), r->offset);
		break;
	case SFRAME_RULE_REG_DEREF:
		snprintf(buf, size, "(%s%+d)", reg_name(sec, r->reg), r->offset);
		break;
	default:
		snprintf(buf, size, "u");
		break;
	}
}

static void dump_header(const char *path, const struct sframe_section *sec)
{
	printf("%s: SFrame section .sframe at %#" PRIx64 ", %zu bytes\n",
	       path, sec->addr, sec->size);
	printf("    Version: %u\n", sec->version);
	printf("    Flags:%s%s%s\n",
	       sec->flags & SFRAME_F_FDE_SORTED ? " SFRAME_F_FDE_SORTED" : "",
	       sec->flags & SFRAME_F_FRAME_POINTER ? " SFRAME_F_FRAME_POINTER" : "",
	       sec->flags & SFRAME_F_FDE_FUNC_START_PCREL ?
	       " SFRAME_F_FDE_FUNC_START_PCREL" : "");
	printf("    ABI: %s\n", sframe_abi__name(sec->abi));
	printf("    CFA fixed FP offset: %d\n", sec->fixed_fp);
	printf("    CFA fixed RA offset: %d\n", sec->fixed_ra);
	printf("    Num FDEs: %u\n", sec->nr_fdes);
	printf("    Num FREs: %u\n", sec->nr_fres);
}

static void dump_fdes(const struct sframe_section *sec,
		      struct dump_syms *syms)
{
	for (u32 i = 0; i < sec->nr_fdes; i++) {
		const struct sframe_fde *fde = &sec->fdes[i];
		bool mask = fde->pc_type == SFRAME_PC_TYPE_MASK;

		bool flex = fde->fde_type == SFRAME_FDE_TYPE_FLEX;
		bool aarch64 = sframe_abi__find(sec->abi)->pauth;

		const char *name = dump_syms__name(syms, fde->start,
						   dump_syms__section(syms, fde));

		/* As readelf: attr S signal frame, F flexible FDE. */
		printf("\n    func idx [%u]: pc = %#" PRIx64 ", size = %u bytes%s%s%s%s%s%s%s%s%s\n",
		       i, fde->start, fde->size, mask ? ", pctype = MASK" : "",
		       fde->signal || flex ? ", attr = \"" : "",
		       fde->signal ? "S" : "", flex ? "F" : "",
		       fde->signal || flex ? "\"" : "",
		       aarch64 && fde->pauth_key ? ", pauth = B key" : "",
		       name ? " <" : "", name ?: "", name ? ">" : "");
		printf("    STARTPC%s         CFA       FP        RA\n",
		       mask ? "[m]" : "");
		for (u32 j = 0; j < fde->nr_fres; j++) {
			struct sframe_fre fre;
			char cfa[32], fp[32], ra[32];

			if (sframe_section__get_fre(sec, i, j, &fre))
				break;
			/* No data words: the outermost frame. */
			if (!((fre.info >> 1) & 0xf)) {
				printf("    %016" PRIx64 "  RA undefined\n", fre.start);
				continue;
			}
			rule_str(sec, &fre.cfa, false, cfa, sizeof(cfa));
			rule_str(sec, &fre.fp, fre.fp_fixed, fp, sizeof(fp));
			rule_str(sec, &fre.ra, fre.ra_fixed, ra, sizeof(ra));
			if (fre.ra_mangled)
				strcat(ra, "[s]");
			/* readelf's columns, but never run together */
			printf("    %016" PRIx64 "  %-9s %-9s %s\n",
			       fre.start, cfa, fp, ra);
		}
	}
}

/* Whether an FDE with rows of .text (section @text_idx) covers @addr. */
static bool dump_rel_covered(const struct sframe_section *sec,
			     struct dump_syms *syms, u64 addr, size_t text_idx)
{
	for (size_t i = 0; i < syms->nr_origins; i++) {
		const struct dump_origin *o = &syms->origins[i];

		if (o->shndx != text_idx || addr < o->start ||
		    addr - o->start >= o->size)
			continue;
		for (u32 j = 0; j < sec->nr_fdes; j++) {
			if (sec->fdes[j].start == o->start &&
			    sec->fdes[j].size == o->size && sec->fdes[j].nr_fres)
				return true;
		}
	}
	return false;
}

/*
 * Bytes of .text the FDEs cover, and FUNC symbols they miss; in a
 * relocatable object, only the FDEs and symbols of .text itself.
 */
static void dump_coverage(Elf *elf, const struct sframe_section *sec,
			  struct dump_syms *syms, bool summary_only)
{
	u64 text_start = 0, text_end = 0, covered = 0;
	size_t shstrndx, missing = 0, funcs = 0, text_idx = 0;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".text")) {
			text_start = sh.sh_addr;
			text_end = sh.sh_addr + sh.sh_size;
			text_idx = elf_ndxscn(scn);
		}
	}
	for (size_t i = 0; i < syms->nr_origins; i++)
		syms->origins[i].used = false;
	for (u32 i = 0; i < sec->nr_fdes; i++) {
		const struct sframe_fde *fde = &sec->fdes[i];
		u64 s = fde->start, e = fde->start + fde->size;

		if (syms->rel && dump_syms__section(syms, fde) != (int)text_idx)
			continue;

		if (s < text_start)
			s = text_start;
		if (e > text_end)
			e = text_end;
		if (e > s && fde->nr_fres)
			covered += e - s;
	}
	printf("\n    .text: %#" PRIx64 "-%#" PRIx64 ", %" PRIu64 " of %" PRIu64
	       " bytes covered (%.1f%%)\n", text_start, text_end, covered,
	       text_end - text_start,
	       text_end > text_start ?
	       100.0 * covered / (text_end - text_start) : 0.0);

	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; data && i < n; i++) {
			const struct sframe_fde *fde;
			GElf_Sym sym;

			if (!gelf_getsym(data, i, &sym) ||
			    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_size ||
			    sym.st_value < text_start || sym.st_value >= text_end ||
			    (syms->rel && sym.st_shndx != text_idx))
				continue;
			funcs++;
			fde = sframe_section__find_fde(sec, sym.st_value);
			if (fde && fde->nr_fres && !syms->rel)
				continue;
			if (syms->rel && dump_rel_covered(sec, syms, sym.st_value,
							  text_idx))
				continue;
			/* A summary counts them: a static libc has 1000s. */
			if (!missing++ && !summary_only)
				printf("    functions without FREs:\n");
			if (!summary_only)
				printf("      %s\n", elf_strptr(elf, sh.sh_link, sym.st_name));
		}
	}
	printf("    %zu of %zu functions in .text without FREs\n", missing, funcs);
}

/* Dump the .sframe of @path; with @summary_only its header and coverage. */
static int dump_file(const char *path, bool summary_only)
{
	struct dump_syms syms = { .v = NULL };
	char why[256];
	struct sframe_section sec;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int fd, ret = -1;
	u8 *buf = NULL;
	GElf_Ehdr eh;
	Elf *elf;

	fd = open(path, O_RDONLY);
	if (fd < 0) {
		pr_err("%s: %s\n", path, strerror(errno));
		return -1;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		pr_err("%s: not an ELF file\n", path);
		goto out;
	}
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, ".sframe"))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf) {
			pr_err("%s: .sframe has no data\n", path);
			goto out;
		}
		buf = malloc(data->d_size ?: 1);
		if (!buf)
			goto out;
		memcpy(buf, data->d_buf, data->d_size);
		/* A .o: function starts are relocations still to apply. */
		if (gelf_getehdr(elf, &eh) && eh.e_type == ET_REL) {
			int bad = apply_relocs(elf, scn, sh.sh_addr, buf,
					       data->d_size, &syms);

			syms.rel = true;

			if (bad)
				pr_warning("%s: %d relocations of .sframe not applied\n",
					   path, bad);
		}
		if (sframe_section__decode(&sec, buf, data->d_size, sh.sh_addr)) {
			pr_err("%s: invalid .sframe: %s\n", path, sec.err);
			goto out;
		}
		/* What perf report would reject besides the format. */
		if (!syms.rel && dso__sframe_check_elf_functions(&sec, elf, why, sizeof(why)))
			pr_warning("%s: .sframe not used for unwinding: %s\n", path, why);
		dump_header(path, &sec);
		if (!summary_only) {
			dump_syms__load(&syms, elf);
			dump_fdes(&sec, &syms);
		}
		dump_coverage(elf, &sec, &syms, summary_only);
		sframe_section__exit(&sec);
		ret = 0;
		goto out;
	}
	printf("%s: no .sframe section\n", path);
	ret = 1;
out:
	free(syms.origins);
	free(syms.v);
	free(buf);
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int cmd_sframe(int argc, const char **argv)
{
	bool summary_only = false;
	const struct option sframe_options[] = {
		OPT_BOOLEAN('s', "summary", &summary_only,
			    "only the header and the coverage of .text"),
		OPT_END()
	};
	int ret = 0;

	argc = parse_options(argc, argv, sframe_options, sframe_usage, 0);
	if (argc < 2 || strcmp(argv[0], "dump"))
		usage_with_options(sframe_usage, sframe_options);
	elf_version(EV_CURRENT);
	for (int i = 1; i < argc; i++) {
		int r = dump_file(argv[i], summary_only);

		if (r < 0)
			ret = 1;
	}
	return ret;
}
