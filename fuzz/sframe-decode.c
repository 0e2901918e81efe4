// SPDX-License-Identifier: GPL-2.0
/*
 * SKELETON, not built by default: libFuzzer target for the SFrame decoder
 * (util/sframe.[ch], branch sframe).  make fuzz builds it only once
 * util/sframe.c is in the tree; until then see fuzz/README.md for how it
 * was checked against the sframe branch.
 *
 * Input: 8 bytes of section address, 8 bytes of PC, 8 bytes of SP, then
 * the .sframe section.  A section sframe__decode() accepts must survive
 * every lookup: each FDE's start, middle and end, the given PC, every row of
 * every FDE, and an unwind of a small stack made of the input's own bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>

#include "util/sframe.h"

#define HDR	24

struct unwind_arg {
	const struct sframe_section *sec;
};

static int row(u64 pc, struct sframe_fre *fre, void *arg)
{
	struct unwind_arg *ua = arg;

	return sframe__find_fre(ua->sec, pc, fre);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	if (sframe__decode(&sec, copy, size - HDR, addr)) {
		free(copy);
		return 0;
	}
	sframe__find_fre(&sec, pc, &fre);
	sframe__find_fde(&sec, pc);
	sframe__abi_name(sec.abi);
	for (i = 0; i < sec.nr_fdes && i < 256; i++) {
		const struct sframe_fde *fde = &sec.fdes[i];

		sframe__find_fre(&sec, fde->start, &fre);
		sframe__find_fre(&sec, fde->start + fde->size / 2, &fre);
		sframe__find_fre(&sec, fde->start + fde->size, &fre);
		for (j = 0; j < fde->nr_fres && j < 64; j++)
			sframe__get_fre(&sec, i, j, &fre);
	}
	/* Unwind from @pc over a "stack" that is the section itself. */
	memset(frames, 0, sizeof(frames));
	frames[0].ip = pc;
	frames[0].sp = sp;
	frames[0].fp = sp + 16;
	stack.sp = sp;
	stack.data = copy;
	stack.size = size - HDR;
	sframe__unwind(frames, 16, &stack, row, &ua, &stop);
	sframe__exit(&sec);
	free(copy);
	return 0;
}
