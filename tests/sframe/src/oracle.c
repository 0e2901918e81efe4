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
#include <sframe-api.h>

#if SFRAME_VERSION >= 3
#define FDE_TYPE_ARG(t)	(t),
#else
#define FDE_TYPE_ARG(t)
#endif

static void rule(char *buf, size_t size, int err, int32_t off)
{
	if (err)
		snprintf(buf, size, "u");
	else
		snprintf(buf, size, "c%+d", off);
}

int main(int argc, char **argv)
{
	static char data[1 << 24];
	sframe_decoder_ctx *ctx;
	uint64_t addr;
	size_t size;
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
		printf("func idx [%u]: pc = %#llx, size = %u bytes%s\n", i,
		       (unsigned long long)start, fsize, mask ? ", pctype = MASK" : "");
		for (unsigned int j = 0; j < nr; j++) {
			sframe_frame_row_entry fre;
			char cfa[32], fp[32], ra[32];
			int e1 = 0, e2 = 0, e3 = 0;
			int32_t c, p, r;
			uint8_t base;

			if (sframe_decoder_get_fre(ctx, i, j, &fre)) {
				printf("bad fre %u\n", j);
				break;
			}
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
			printf("%016llx %s %s %s\n",
			       (unsigned long long)(mask ? fre.fre_start_addr :
						    start + fre.fre_start_addr),
			       cfa, fp, ra);
		}
	}
	sframe_decoder_free(&ctx);
	return 0;
}
