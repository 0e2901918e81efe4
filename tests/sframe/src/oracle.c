// SPDX-License-Identifier: GPL-2.0
/*
 * Test oracle: list an SFrame section's rows with binutils' libsframe, in
 * the notation of perf sframe dump.  Built by the tests only, statically
 * against the libsframe (GPLv3+) of one binutils release; never part of
 * perf.
 *
 *   oracle SECTION.bin SECTION_ADDRESS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sframe-api.h>

#if SFRAME_VERSION >= 3
#define FDE_TYPE_ARG(t)	(t),
#else
#define FDE_TYPE_ARG(t)
#endif

#define ABI_AARCH64(a)	((a) == SFRAME_ABI_AARCH64_ENDIAN_BIG || \
			 (a) == SFRAME_ABI_AARCH64_ENDIAN_LITTLE)
#define ABI_S390X(a)	((a) == 4)	/* SFRAME_ABI_S390X_ENDIAN_BIG, 2.45+ */

static void rule(char *buf, size_t size, int err, int32_t off)
{
	if (err)
		snprintf(buf, size, "u");
	else
		snprintf(buf, size, "c%+d", off);
}

#if SFRAME_VERSION >= 3
/* A flexible FDE's rule: control word (register, deref) and offset. */
static void flex_rule(char *buf, size_t size, uint8_t abi, uint32_t ctl,
		      int32_t off)
{
	unsigned int reg = ctl >> 3;
	char name[16];

	if (!(ctl & 1))
		snprintf(name, sizeof(name), "c");
	else if (reg == (abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ? 7 :
			 ABI_S390X(abi) ? 15 : 31))
		snprintf(name, sizeof(name), "sp");
	else if (reg == (abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ? 6 :
			 ABI_S390X(abi) ? 11 : 29))
		snprintf(name, sizeof(name), "fp");
	else
		snprintf(name, sizeof(name), "r%u", reg);
	snprintf(buf, size, (ctl & 2) ? "(%s%+d)" : "%s%+d", name, off);
}

/* The rules of a row of a flexible FDE, as readelf --sframe shows them. */
static void flex_row(sframe_decoder_ctx *ctx, sframe_frame_row_entry *fre,
		     uint8_t abi, char *cfa, char *fp, char *ra, size_t size)
{
	int e1 = 0, e2 = 0, e3 = 0, e4 = 0;
	uint32_t ctl;
	int32_t off;
	int fpi = 4;

	ctl = sframe_get_fre_udata(fre, 0, &e1);
	off = sframe_fre_get_cfa_offset(ctx, fre, SFRAME_FDE_TYPE_FLEX, &e2);
	if (e1 || e2)
		snprintf(cfa, size, "u");
	else
		flex_rule(cfa, size, abi, ctl, off);
	ctl = sframe_get_fre_udata(fre, 2, &e1);
	off = sframe_fre_get_ra_offset(ctx, fre, SFRAME_FDE_TYPE_FLEX, &e2);
	if (e1) {
		snprintf(ra, size, "%s",
			 sframe_decoder_get_fixed_ra_offset(ctx) !=
			 SFRAME_CFA_FIXED_RA_INVALID ? "f" : "u");
	} else if (ctl == SFRAME_FRE_RA_OFFSET_INVALID) {
		snprintf(ra, size, "U");
		fpi = 3;
	} else {
		flex_rule(ra, size, abi, ctl, off);
	}
	ctl = sframe_get_fre_udata(fre, fpi, &e3);
	off = sframe_fre_get_fp_offset(ctx, fre, SFRAME_FDE_TYPE_FLEX, &e4);
	if (e3 || e4)
		snprintf(fp, size, "u");
	else
		flex_rule(fp, size, abi, ctl, off);
}
#endif

int main(int argc, char **argv)
{
	static char data[1 << 24];
	sframe_decoder_ctx *ctx;
	uint64_t addr;
	size_t size;
	uint8_t abi;
	FILE *f;
	int err = 0;

	if (argc != 3)
		return 2;
	f = fopen(argv[1], "rb");
	if (!f)
		return 2;
	size = fread(data, 1, sizeof(data), f);
	fclose(f);
	addr = strtoull(argv[2], NULL, 0);
	ctx = sframe_decode(data, size, &err);
	if (!ctx) {
		printf("error %d\n", err);
		return 1;
	}
	abi = sframe_decoder_get_abi_arch(ctx);
	for (unsigned int i = 0; i < sframe_decoder_get_num_fidx(ctx); i++) {
		uint32_t nr, fsize;
		unsigned char info, info2 = 0;
		uint8_t rep = 0;
		uint64_t start;
		int mask;

#if SFRAME_VERSION >= 3
		int64_t off;

		sframe_decoder_get_funcdesc_v3(ctx, i, &nr, &fsize, &off, &info,
					       &info2, &rep);
		start = addr + sframe_decoder_get_hdr_size(ctx) + i * 16 + off;
#elif SFRAME_VERSION == 2
		int32_t off;

		sframe_decoder_get_funcdesc_v2(ctx, i, &nr, &fsize, &off, &info,
					       &rep);
		start = addr + off;
#else
		int32_t off;

		sframe_decoder_get_funcdesc(ctx, i, &nr, &fsize, &off, &info);
		start = addr + off;
#endif
		mask = (info >> 4) & 1;
		printf("func idx [%u]: pc = %#llx, size = %u bytes%s", i,
		       (unsigned long long)start, fsize, mask ? ", pctype = MASK" : "");
		/* v3 FDE attributes: S signal frame, F flexible. */
		if ((info >> 7) || (info2 & 0x1f))
			printf(", attr = \"%s%s\"", (info >> 7) ? "S" : "",
			       (info2 & 0x1f) ? "F" : "");
		if (ABI_AARCH64(abi) && ((info >> 5) & 1))
			printf(", pauth = B key");
		printf("\n");
		for (unsigned int j = 0; j < nr; j++) {
			sframe_frame_row_entry fre;
			char cfa[32], fp[32], ra[36];
			uint64_t start_pc;
			int e1 = 0, e2 = 0, e3 = 0;
			int32_t c, p, r;
			uint8_t base;

			if (sframe_decoder_get_fre(ctx, i, j, &fre)) {
				printf("bad fre %u\n", j);
				break;
			}
			start_pc = mask ? fre.fre_start_addr :
				   start + fre.fre_start_addr;
			/* No data words: the outermost frame. */
			if (!((fre.fre_info >> 1) & 0xf)) {
				printf("%016llx RA undefined\n",
				       (unsigned long long)start_pc);
				continue;
			}
#if SFRAME_VERSION >= 3
			if (info2 & 0x1f) {
				flex_row(ctx, &fre, abi, cfa, fp, ra, sizeof(cfa));
				goto print;
			}
#endif
			base = sframe_fre_get_base_reg_id(&fre, &e1);
			c = sframe_fre_get_cfa_offset(ctx, &fre, FDE_TYPE_ARG(info2 & 0x1f) &e1);
			p = sframe_fre_get_fp_offset(ctx, &fre, FDE_TYPE_ARG(info2 & 0x1f) &e2);
			r = sframe_fre_get_ra_offset(ctx, &fre, FDE_TYPE_ARG(info2 & 0x1f) &e3);
			if (e1)
				snprintf(cfa, sizeof(cfa), "u");
			else
				snprintf(cfa, sizeof(cfa), "%s%+d", base ? "sp" : "fp", c);
			rule(fp, sizeof(fp), e2, p);
			rule(ra, sizeof(ra), e3, r);
			/* s390x: a zero RA word pads an FP saved without RA. */
			if (ABI_S390X(abi) && !e3 && !r)
				snprintf(ra, sizeof(ra), "U");
#if SFRAME_VERSION >= 3
print:
#endif
			if (sframe_fre_get_ra_mangled_p(ctx, &fre, &e3))
				strcat(ra, "[s]");
			printf("%016llx %s %s %s\n", (unsigned long long)start_pc,
			       cfa, fp, ra);
		}
	}
	sframe_decoder_free(&ctx);
	return 0;
}
