// SPDX-License-Identifier: GPL-2.0
/*
 * perf sframe dump FILE...: show what perf's SFrame decoder reads in an ELF
 * file: the header, every FDE and its rows in the layout of
 * `readelf --sframe`, then how much of .text the section covers and which
 * functions it leaves out.
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
#include <linux/zalloc.h>
#include <subcmd/parse-options.h>

#include "builtin.h"
#include "util/debug.h"
#include "util/sframe.h"

static bool summary_only;

static const char * const sframe_usage[] = {
	"perf sframe dump [<options>] <file>...",
	NULL
};

static const struct option sframe_options[] = {
	OPT_BOOLEAN('s', "summary", &summary_only,
		    "only the header and the coverage of .text"),
	OPT_END()
};

static const char *reg_name(const struct sframe_section *sec, u8 reg)
{
	static char buf[16];

	switch (sec->abi) {
	case SFRAME_ABI_AMD64_ENDIAN_LITTLE:
		if (reg == 7)
			return "sp";
		if (reg == 6)
			return "fp";
		break;
	case SFRAME_ABI_S390X_ENDIAN_BIG:
		if (reg == 15)
			return "sp";
		if (reg == 11)
			return "fp";
		break;
	default:
		if (reg == 31)
			return "sp";
		if (reg == 29)
			return "fp";
		break;
	}
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
	printf("    ABI: %s\n", sframe__abi_name(sec->abi));
	printf("    CFA fixed FP offset: %d\n", sec->fixed_fp);
	printf("    CFA fixed RA offset: %d\n", sec->fixed_ra);
	printf("    Num FDEs: %u\n", sec->nr_fdes);
	printf("    Num FREs: %u\n", sec->nr_fres);
}

static void dump_fdes(const struct sframe_section *sec)
{
	for (u32 i = 0; i < sec->nr_fdes; i++) {
		const struct sframe_fde *fde = &sec->fdes[i];
		bool mask = fde->pc_type == SFRAME_PC_TYPE_MASK;

		bool flex = fde->fde_type == SFRAME_FDE_TYPE_FLEX;
		bool aarch64 = sec->abi == SFRAME_ABI_AARCH64_ENDIAN_BIG ||
			       sec->abi == SFRAME_ABI_AARCH64_ENDIAN_LITTLE;

		/* As readelf: attr S signal frame, F flexible FDE. */
		printf("\n    func idx [%u]: pc = %#" PRIx64 ", size = %u bytes%s%s%s%s%s%s\n",
		       i, fde->start, fde->size, mask ? ", pctype = MASK" : "",
		       fde->signal || flex ? ", attr = \"" : "",
		       fde->signal ? "S" : "", flex ? "F" : "",
		       fde->signal || flex ? "\"" : "",
		       aarch64 && fde->pauth_key ? ", pauth = B key" : "");
		printf("    STARTPC%s         CFA       FP        RA\n",
		       mask ? "[m]" : "");
		for (u32 j = 0; j < fde->nr_fres; j++) {
			struct sframe_fre fre;
			char cfa[32], fp[32], ra[32];

			if (sframe__get_fre(sec, i, j, &fre))
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
			printf("    %016" PRIx64 "  %-9s %-9s %-9s\n",
			       fre.start, cfa, fp, ra);
		}
	}
}

/* Bytes of .text the FDEs cover, and FUNC symbols they miss. */
static void dump_coverage(Elf *elf, const struct sframe_section *sec)
{
	u64 text_start = 0, text_end = 0, covered = 0;
	size_t shstrndx, missing = 0, funcs = 0;
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
		}
	}
	for (u32 i = 0; i < sec->nr_fdes; i++) {
		const struct sframe_fde *fde = &sec->fdes[i];
		u64 s = fde->start, e = fde->start + fde->size;

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
			    sym.st_value < text_start || sym.st_value >= text_end)
				continue;
			funcs++;
			fde = sframe__find_fde(sec, sym.st_value);
			if (fde && fde->nr_fres)
				continue;
			if (!missing++)
				printf("    functions without FREs:\n");
			printf("      %s\n", elf_strptr(elf, sh.sh_link, sym.st_name));
		}
	}
	printf("    %zu of %zu functions in .text without FREs\n", missing, funcs);
}

static int dump_file(const char *path)
{
	struct sframe_section sec;
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	int fd, ret = -1;
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
		if (sframe__decode(&sec, data->d_buf, data->d_size, sh.sh_addr)) {
			pr_err("%s: invalid .sframe: %s\n", path, sec.err);
			goto out;
		}
		dump_header(path, &sec);
		if (!summary_only)
			dump_fdes(&sec);
		dump_coverage(elf, &sec);
		sframe__exit(&sec);
		ret = 0;
		goto out;
	}
	printf("%s: no .sframe section\n", path);
	ret = 1;
out:
	if (elf)
		elf_end(elf);
	close(fd);
	return ret;
}

int cmd_sframe(int argc, const char **argv)
{
	int ret = 0;

	argc = parse_options(argc, argv, sframe_options, sframe_usage, 0);
	if (argc < 2 || strcmp(argv[0], "dump"))
		usage_with_options(sframe_usage, sframe_options);
	elf_version(EV_CURRENT);
	for (int i = 1; i < argc; i++) {
		int r = dump_file(argv[i]);

		if (r < 0)
			ret = 1;
	}
	return ret;
}
