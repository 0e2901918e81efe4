// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the SFrame decoder (util/sframe.[ch]) and the
 * walker above it (util/sframe-walk.[ch]).
 *
 * Input: 8 bytes of section address, 8 bytes of PC, 8 bytes of SP, then
 * the .sframe section.  A section sframe_section__decode() accepts must survive
 * every lookup: each FDE's start, middle and end, the given PC, every row of
 * every FDE, and an unwind of a small stack made of the input's own bytes.
 *
 * Beyond memory safety, the contract of sframe.h is checked (abort() on a
 * breach, so libFuzzer keeps the input): FDEs sorted; the FDE found for a PC
 * covers it; the row found for a PC covers it; every row of a section that
 * decoded is readable, since sframe_section__decode() validated them all; rejected
 * sections say why; the unwinder fills at most what it is given and the
 * stack grows outwards except across a signal frame (or stays, once, for
 * a frame whose RA was still in its register).
 *
 * With SFRAME_SEEDS=DIR in the environment it writes instead the seeds
 * fuzz/mkseeds-sframe.py adds to the corpus, and exits: the sample section
 * of tests/sframe-build.c (the one perf test sframe reads) in every version
 * under every row of the ABI table.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/compiler.h>
#include <linux/types.h>

#include "util/sframe.h"
#include "tests/sframe-build.h"
#include "util/sframe-walk.h"

#define HDR	24

struct unwind_arg {
	const struct sframe_section *sec;
};

static int row(u64 pc, struct sframe_fre *fre, void *arg)
{
	struct unwind_arg *ua = arg;

	return sframe_section__find_fre(ua->sec, pc, fre);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The seeds: the input header (address, a PC in the first function, SP), then the section. */
static int write_seeds(const char *dir)
{
	static const u8 versions[] = { 1, 2, 3 };
	const struct sframe_abi *abi;
	u64 hdr[3] = { 0x3000, 0x1006, 0x7000 };

	for (unsigned int a = 0; (abi = sframe_abi__nth(a)) != NULL; a++) {
		for (size_t v = 0; v < sizeof(versions); v++) {
			struct sframe_build b;
			char path[4096];
			u8 buf[1024];
			long size;
			FILE *f;

			sframe_build__sample(&b, versions[v], abi->id, versions[v] > 1, hdr[0]);
			size = sframe_build__section(&b, buf, sizeof(buf));
			snprintf(path, sizeof(path), "%s/built-abi%u-v%u", dir, abi->id,
				 versions[v]);
			f = fopen(path, "wb");
			if (size < 0 || !f || fwrite(hdr, sizeof(hdr), 1, f) != 1 ||
			    fwrite(buf, size, 1, f) != 1) {
				fprintf(stderr, "%s: cannot write\n", path);
				if (f)
					fclose(f);
				return 1;
			}
			fclose(f);
		}
	}
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	const char *dir = getenv("SFRAME_SEEDS");

	if (dir)
		exit(write_seeds(dir));
	return 0;
}

static void breach(const char *what, u64 a, u64 b)
{
	fprintf(stderr, "sframe contract: %s (%#llx, %#llx)\n", what,
		(unsigned long long)a, (unsigned long long)b);
	abort();
}

/* The row found for @pc must be the one covering it. */
static void check_find(const struct sframe_section *sec, u64 pc)
{
	const struct sframe_fde *fde = sframe_section__find_fde(sec, pc);
	struct sframe_fre fre;
	u64 off;

	if (sframe_section__find_fre(sec, pc, &fre))
		return;
	if (!fde)
		breach("row without FDE", pc, 0);
	if (pc < fde->start || pc - fde->start >= fde->size)
		breach("FDE does not cover PC", pc, fde->start);
	if (fre.fde_idx != (u32)(fde - sec->fdes) || fre.fre_idx >= fde->nr_fres)
		breach("row indices", fre.fde_idx, fre.fre_idx);
	off = pc;
	if (fde->pc_type == SFRAME_PC_TYPE_MASK)
		off = (pc - fde->start) % fde->rep_size;
	if (off < fre.start || off >= fre.end)
		breach("row does not cover PC", pc, fre.start);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sframe_frame frames[16];
	struct sframe_section sec;
	struct sframe_stack stack;
	struct sframe_fre fre;
	struct unwind_arg ua = { .sec = &sec };
	enum sframe_stop stop;
	u64 addr, pc, sp;
	u8 *copy;
	u32 i, j;
	int n, k;

	if (size < HDR)
		return -1;
	memcpy(&addr, data, 8);
	memcpy(&pc, data + 8, 8);
	memcpy(&sp, data + 16, 8);
	/* Exactly the section's bytes: a read past them is caught. */
	copy = malloc(size - HDR ? size - HDR : 1);
	if (!copy)
		return 0;
	memcpy(copy, data + HDR, size - HDR);
	if (sframe_section__decode(&sec, copy, size - HDR, addr)) {
		if (!sec.err)
			breach("rejected without a reason", size, 0);
		free(copy);
		return 0;
	}
	check_find(&sec, pc);
	sframe_abi__name(sec.abi);
	for (i = 0; i < sec.nr_fdes && i < 256; i++) {
		const struct sframe_fde *fde = &sec.fdes[i];

		if (i && fde->start < fde[-1].start)
			breach("FDEs not sorted", fde[-1].start, fde->start);
		check_find(&sec, fde->start);
		check_find(&sec, fde->start + fde->size / 2);
		check_find(&sec, fde->start + fde->size);
		for (j = 0; j < fde->nr_fres && j < 64; j++) {
			if (sframe_section__get_fre(&sec, i, j, &fre))
				breach("validated row unreadable", i, j);
			if (fre.fde_idx != i || fre.fre_idx != j)
				breach("row indices", i, j);
		}
	}
	/* Unwind from @pc over a "stack" that is the section itself. */
	memset(frames, 0, sizeof(frames));
	frames[0].ip = pc;
	frames[0].sp = sp;
	frames[0].fp = sp + 16;
	frames[0].ra = addr;	/* an RA register, for rows that leave it there */
	frames[0].ra_known = true;
	stack.sp = sp;
	stack.data = copy;
	stack.size = size - HDR;
	n = sframe_walk__unwind(sframe_abi__find(sec.abi), frames, 16, &stack, row,
				&ua, &stop);
	if (n < 1 || n > 16)
		breach("frames filled", n, 16);
	for (k = 1; k < n; k++) {
		bool ra_reg = frames[k - 1].ra_known;

		if (!frames[k].signal && (frames[k].sp < frames[k - 1].sp ||
					  (frames[k].sp == frames[k - 1].sp && !ra_reg)))
			breach("stack did not grow", frames[k - 1].sp, frames[k].sp);
	}
	sframe_section__exit(&sec);
	free(copy);
	return 0;
}
