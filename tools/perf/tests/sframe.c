// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame decoder and walker tests on sections built in memory by
 * sframe-build.c: every version and every row of the ABI table, PCMASK
 * FDEs, malformed sections and why each is rejected, FDEs that do not start
 * at their function, walks of synthetic stacks under each ABI, and a
 * synthetic AArch64 sample through the unwinder, as x86_64 samples go.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/kernel.h>

#include "debug.h"
#include "dso.h"
#include "machine.h"
#include "map.h"
#include "maps.h"
#include "util/perf_regs.h"
#include "sample.h"
#include "sframe.h"
#include "sframe-build.h"
#include "sframe-walk.h"
#include "tests.h"
#include "thread.h"
#include "unwind.h"
#include "unwind-sframe.h"

#define SEC_ADDR	0x3000

/* The sample section of sframe-build.c, in @version under @abi. */
static size_t build(u8 *buf, int version, bool pcrel, u8 abi)
{
	struct sframe_build b;
	long size;

	sframe_build__sample(&b, version, abi, pcrel, SEC_ADDR);
	size = sframe_build__section(&b, buf, 1024);
	return size < 0 ? 0 : size;
}

static int check_rows(const struct sframe_section *sec)
{
	bool fixed_ra = sframe_abi__find(sec->abi)->fixed_ra;
	struct sframe_fre fre;

	TEST_ASSERT_VAL("row 0", !sframe_section__find_fre(sec, 0x1002, &fre));
	TEST_ASSERT_VAL("row 0 CFA", fre.cfa.kind == SFRAME_RULE_REG &&
			fre.cfa.offset == 8 && fre.start == 0x1000 && fre.end == 0x1004);
	TEST_ASSERT_VAL("row 0 FP", fre.fp.kind == SFRAME_RULE_SAME);
	TEST_ASSERT_VAL("row 0 RA", fixed_ra ? fre.ra.kind == SFRAME_RULE_CFA &&
			fre.ra.offset == -8 : fre.ra.kind == SFRAME_RULE_SAME);

	TEST_ASSERT_VAL("row 1", !sframe_section__find_fre(sec, 0x100f, &fre));
	TEST_ASSERT_VAL("row 1 CFA", fre.cfa.offset == 16 && fre.fre_idx == 1);
	TEST_ASSERT_VAL("row 1 FP", fre.fp.kind == SFRAME_RULE_CFA &&
			fre.fp.offset == -16);
	TEST_ASSERT_VAL("row 1 RA", fre.ra.kind == SFRAME_RULE_CFA &&
			fre.ra.offset == -8);

	TEST_ASSERT_VAL("row 2", !sframe_section__find_fre(sec, 0x101d, &fre));
	TEST_ASSERT_VAL("row 2 FP based", fre.cfa.reg == sframe_abi__find(sec->abi)->fp);
	TEST_ASSERT_VAL("past the function",
			sframe_section__find_fre(sec, 0x1020, &fre) == -ENOENT);
	TEST_ASSERT_VAL("before the first", sframe_section__find_fre(sec, 0xfff, &fre) == -ENOENT);

	/* PCMASK: the offset inside each 16-byte block picks the row. */
	TEST_ASSERT_VAL("mask row 1", !sframe_section__find_fre(sec, 0x1100 + 0x1c, &fre));
	TEST_ASSERT_VAL("mask row 1 CFA", fre.cfa.offset == 16 && fre.fre_idx == 1);
	TEST_ASSERT_VAL("mask row 0", !sframe_section__find_fre(sec, 0x1100 + 0x23, &fre));
	TEST_ASSERT_VAL("mask row 0 CFA", fre.cfa.offset == 8 && fre.fre_idx == 0);

	TEST_ASSERT_VAL("outermost", !sframe_section__find_fre(sec, 0x1208, &fre));
	TEST_ASSERT_VAL("outermost RA", fre.ra.kind == SFRAME_RULE_UNDEFINED);
	TEST_ASSERT_VAL("gap", sframe_section__find_fre(sec, 0x1150, &fre) == -ENOENT);
	return TEST_OK;
}

static int test__sframe_versions(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	static const struct {
		int version;
		bool pcrel;
	} cases[] = {
		{ 1, false }, { 2, false }, { 2, true }, { 3, true },
	};
	const struct sframe_abi *abi;
	u8 buf[1024];

	/* Each row of the ABI table, read back in every version. */
	for (unsigned int a = 0; (abi = sframe_abi__nth(a)) != NULL; a++) {
		for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
			size_t size = build(buf, cases[i].version, cases[i].pcrel, abi->id);
			struct sframe_section sec;
			int err = sframe_section__decode(&sec, buf, size, SEC_ADDR);
			const char *how = err ? sec.err : "ok";
			const char *pcrel = "";

			if (cases[i].pcrel)
				pcrel = " PCREL";
			pr_debug("v%d%s %s, %s\n", cases[i].version, pcrel, abi->name, how);
			TEST_ASSERT_VAL("decode", !err);
			TEST_ASSERT_VAL("ABI", sframe_abi__find(sec.abi) == abi);
			TEST_ASSERT_VAL("counts", sec.nr_fdes == 3 && sec.nr_fres == 7);
			err = check_rows(&sec);
			sframe_section__exit(&sec);
			if (err)
				return err;
		}
	}
	return TEST_OK;
}

enum mutation {
	SET8,		/* the byte at @off := @v */
	OR8,		/* the byte at @off |= @v */
	SET32,		/* the little endian u32 at @off := @v */
	ADD32,		/* the little endian u32 at @off += @v */
	SET64,
	TRUNCATE,	/* the section cut to @v bytes */
};

/* Offsets in the sample section: header, FDEs, then FREs. */
#define FDE2(i, f)	(SFRAME_HDR_SIZE + (i) * SFRAME_V2_FDE_SIZE + (f))
#define FDE3(i, f)	(SFRAME_HDR_SIZE + (i) * SFRAME_V3_FDE_SIZE + (f))
#define FRES2		FDE2(3, 0)
#define FRES3		FDE3(3, 0)

/*
 * One change each to the sample section (v2 PCREL unless said) that the
 * decoder must reject, with the reason it must give.
 */
static const struct malformed {
	const char	*what;
	const char	*why;
	u8		version;
	bool		pcrel;
	u8		abi;	/* 0: AMD64 */
	enum mutation	how;
	u32		off;
	u64		v;
} malformed[] = {
	{ "truncated header", "section smaller than a header", 2, true, 0, TRUNCATE, 0, 20 },
	{ "bad magic", "bad magic", 2, true, 0, SET8, 0, 0xad },
	{ "unknown version", "unknown version", 2, true, 0, SET8, SFRAME_HDR_VERSION, 9 },
	{ "unknown flag", "unknown flags", 2, true, 0, OR8, SFRAME_HDR_FLAGS, 0x80 },
	{ "unknown ABI", "unknown ABI", 2, true, 0, SET8, SFRAME_HDR_ABI, 7 },
	{ "byte order not the ABI's", "byte order does not match the ABI",
	  2, true, 0, SET8, SFRAME_HDR_ABI, SFRAME_ABI_S390X_ENDIAN_BIG },
	/* Second FDE made to start before the first, as PC relative. */
	{ "unsorted FDEs", "FDEs not sorted", 2, true, 0, ADD32, FDE2(1, 0), -0x200 },
	{ "FRE offset out of range", "FDE attributes beyond the FRE sub-section",
	  3, true, 0, SET32, FDE3(2, 12), 0xfff0 },
	{ "v2 FRE offset out of range", "FRE beyond the FRE sub-section",
	  2, false, 0, SET32, FDE2(0, 8), 0xfff0 },
	{ "FDE count overflows", "FDE count overflows the FDE sub-section",
	  2, true, 0, SET32, SFRAME_HDR_NR_FDES, 0x20000000 },
	{ "FDE count wraps 32 bits", "FDE count overflows the FDE sub-section",
	  3, true, 0, SET32, SFRAME_HDR_NR_FDES, 0xffffffff },
	{ "FRE count mismatch", "FRE count does not match the FDEs",
	  2, true, 0, SET32, SFRAME_HDR_NR_FRES, 99 },
	{ "FRE length beyond the section", "FRE sub-section beyond the section",
	  2, true, 0, SET32, SFRAME_HDR_FRE_LEN, 0x7fffffff },
	{ "FDE FRE count beyond the sub-section", "FDEs use more FREs than the header counts",
	  2, true, 0, SET32, FDE2(0, 12), 200 },
	{ "FRE starting beyond its function", "FRE starts beyond its function",
	  2, true, 0, SET32, FDE2(0, 4), 2 },
	{ "unknown FRE type", "unknown FRE type", 2, true, 0, SET8, FDE2(0, 16), 7 },
	{ "bad data word size", "FRE data word size invalid",
	  2, true, 0, OR8, FRES2 + 1, 3 << 5 },
	{ "PCMASK without block size", "PCMASK FDE with no block size",
	  2, true, 0, SET8, FDE2(1, 17), 0 },
	/* Sections that would lie: each read as valid, each unwinding wrong. */
	{ "AMD64 RA at CFA-16", "fixed RA offset not the ABI's",
	  3, true, 0, SET8, SFRAME_HDR_FIXED_RA, (u8)-16 },
	{ "AArch64 fixed RA", "fixed RA offset not the ABI's",
	  2, true, SFRAME_ABI_AARCH64_ENDIAN_LITTLE, SET8, SFRAME_HDR_FIXED_RA, (u8)-8 },
	{ "fixed FP", "fixed FP offset not the ABI's",
	  3, true, 0, SET8, SFRAME_HDR_FIXED_FP, (u8)-16 },
	{ "auxiliary header", "auxiliary header of unknown layout",
	  3, true, 0, SET8, SFRAME_HDR_AUXHDR_LEN, 4 },
	{ "v2 FDE reserved bit", "FDE reserved bits set", 2, true, 0, OR8, FDE2(0, 16), 0x40 },
	{ "v3 FDE reserved bit", "FDE reserved bits set", 3, true, 0, OR8, FRES3 + 3, 0x20 },
	{ "PAuth key on AMD64", "PAuth key on an ABI without PAuth",
	  2, true, 0, OR8, FDE2(0, 16), 0x20 },
	{ "signed RA on AMD64", "FRE RA signed on an ABI without PAuth",
	  2, true, 0, OR8, FRES2 + 1, 0x80 },
	/* First FDE grown into the second. */
	{ "overlapping FDEs", "FDEs overlap", 2, true, 0, SET32, FDE2(0, 4), 0x180 },
	/* PLT rows in 16-byte blocks, one starting at 0x20. */
	{ "FRE beyond its PCMASK block", "FRE starts beyond its PCMASK block",
	  2, true, 0, SET8, FRES2 + 18, 0x20 },
	{ "start address wraps", "FDE start address wraps",
	  3, true, 0, SET64, FDE3(0, 0), 0x7fffffffffffffffULL },
};

static void mutate(u8 *buf, size_t *size, const struct malformed *m)
{
	u32 v32;

	switch (m->how) {
	case SET8:
		buf[m->off] = m->v;
		break;
	case OR8:
		buf[m->off] |= m->v;
		break;
	case ADD32:
		memcpy(&v32, buf + m->off, sizeof(v32));
		v32 += m->v;
		memcpy(buf + m->off, &v32, sizeof(v32));
		break;
	case SET32:
		v32 = m->v;
		memcpy(buf + m->off, &v32, sizeof(v32));
		break;
	case SET64:
		memcpy(buf + m->off, &m->v, sizeof(m->v));
		break;
	case TRUNCATE:
	default:
		*size = m->v;
		break;
	}
}

/*
 * Rejected, with the error the caller counts, and for the reason it must
 * give: not merely rejected.
 */
static int expect_invalid(const struct malformed *m)
{
	struct sframe_section sec;
	u8 buf[1024];
	size_t size;
	int err;

	/* Little endian offsets and values: the multi-byte cases are AMD64's. */
	size = build(buf, m->version, m->pcrel,
		     m->abi ?: SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	mutate(buf, &size, m);
	err = sframe_section__decode(&sec, buf, size, SEC_ADDR);
	pr_debug("%s: %s\n", m->what, err ? sec.err : "accepted");
	if (!err)
		sframe_section__exit(&sec);
	TEST_ASSERT_VAL(m->what, err == -EINVAL);
	TEST_ASSERT_VAL("nothing to free", !sec.fdes);
	TEST_ASSERT_VAL(m->why, sec.err && !strcmp(sec.err, m->why));
	return TEST_OK;
}

static int test__sframe_malformed(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	int ret = 0;

	for (size_t i = 0; i < ARRAY_SIZE(malformed); i++)
		ret |= expect_invalid(&malformed[i]);
	return ret ? TEST_FAIL : TEST_OK;
}

/*
 * FDEs moved off their function: valid sections, told apart only by the
 * object's function symbols (the sample's PLT has none, as in a binary).
 */
static int test__sframe_functions(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	static const struct sframe_func funcs[] = {
		{ .start = 0x0f00, .name = "crt" },	/* unsized, as crt code's */
		{ .start = 0x1000, .size = 0x20, .name = "f0" },
		{ .start = 0x1200, .size = 0x10, .name = "outermost" },
	};
	static const struct {
		s32		move;	/* FDE 0's start */
		bool		signal;
		const char	*why;
		size_t		func;
	} cases[] = {
		{ 0, false, NULL, 0 },
		{ -0x10, false, "FDE takes in the start of a function not its own", 1 },
		/*
		 * 128 bytes back into the gap before its function, as the last
		 * mutant bench/sframe/mutants.py found accepted: there it takes
		 * in crt code, whose symbols have no size.
		 */
		{ -0x108, false, "FDE takes in the start of a function not its own", 0 },
		{ -0x80, false, NULL, 0 },	/* no symbol there: not judged */
		{ 4, false, "FDE starts inside a function", 1 },
		/* a signal trampoline's FDE may start before its symbol */
		{ -1, true, NULL, 0 },
	};
	u8 buf[1024];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		size_t size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
		struct sframe_section sec;
		const char *why;
		size_t func;
		s64 start;
		u32 fde;

		memcpy(&start, buf + FDE3(0, 0), sizeof(start));
		start += cases[i].move;
		memcpy(buf + FDE3(0, 0), &start, sizeof(start));
		if (cases[i].signal)
			buf[FRES3 + 2] |= 0x80;
		TEST_ASSERT_VAL("decode", !sframe_section__decode(&sec, buf, size, SEC_ADDR));
		why = sframe_section__check_functions(&sec, funcs, ARRAY_SIZE(funcs),
						      &fde, &func);
		pr_debug("FDE 0 moved by %d: %s\n", cases[i].move, why ?: "ok");
		sframe_section__exit(&sec);
		if (!cases[i].why) {
			TEST_ASSERT_VAL("accepted", !why);
			continue;
		}
		TEST_ASSERT_VAL(cases[i].why, why && !strcmp(why, cases[i].why));
		TEST_ASSERT_VAL("which", fde == 0 && func == cases[i].func);
	}
	return TEST_OK;
}

struct one_section {
	const struct sframe_section *sec;
};

static int lookup(u64 pc, struct sframe_fre *fre, void *arg)
{
	struct one_section *o = arg;

	return sframe_section__find_fre(o->sec, pc, fre);
}

static void put64(u8 *stack, u64 sp, u64 addr, u64 v)
{
	memcpy(stack + addr - sp, &v, sizeof(v));
}

static int test__sframe_unwind(struct test_suite *test __maybe_unused,
			       int subtest __maybe_unused)
{
	struct sframe_frame frames[8] = { { .ip = 0x1006, .sp = 0x7000, .fp = 1 } };
	struct sframe_section sec;
	struct one_section o = { &sec };
	u8 buf[1024], mem[0x40] = { 0 };
	struct sframe_stack stack = { .sp = 0x7000, .data = mem, .size = sizeof(mem) };
	enum sframe_stop stop;
	int n;

	const struct sframe_abi *abi = sframe_abi__find(SFRAME_ABI_AMD64_ENDIAN_LITTLE);

	TEST_ASSERT_VAL("decode", !sframe_section__decode(&sec, buf,
							  build(buf, 3, true, abi->id), SEC_ADDR));
	/* F0 row 1 (CFA sp+16), then F0 row 2 (CFA fp+16), then F2. */
	put64(mem, 0x7000, 0x7000, 0x7020);
	put64(mem, 0x7000, 0x7008, 0x1015);
	put64(mem, 0x7000, 0x7020, 0);
	put64(mem, 0x7000, 0x7028, 0x1205);

	n = sframe_walk__unwind(abi, frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("frames", n == 3 && stop == SFRAME_STOP_OUTERMOST);
	TEST_ASSERT_VAL("frame 1", frames[1].ip == 0x1015 && frames[1].sp == 0x7010 &&
			frames[1].fp == 0x7020);
	TEST_ASSERT_VAL("frame 2", frames[2].ip == 0x1205 && frames[2].sp == 0x7030);

	n = sframe_walk__unwind(abi, frames, 2, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("max", n == 2 && stop == SFRAME_STOP_MAX);

	stack.size = 0x20;
	n = sframe_walk__unwind(abi, frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("off the snapshot", n == 2 && stop == SFRAME_STOP_STACK);

	put64(mem, 0x7000, 0x7028, 0x9999);
	stack.size = sizeof(mem);
	n = sframe_walk__unwind(abi, frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("no SFrame", n == 3 && stop == SFRAME_STOP_NO_SFRAME &&
			frames[2].ip == 0x9999 && frames[2].sp == 0x7030);

	/* In the epilogue: the FP was popped, the register holds the caller's. */
	frames[0] = (struct sframe_frame){ .ip = 0x101e, .sp = 0x7000, .fp = 0x1234 };
	put64(mem, 0x7000, 0x7000, 0x1205);
	n = sframe_walk__unwind(abi, frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("epilogue", n == 2 && stop == SFRAME_STOP_OUTERMOST &&
			frames[1].ip == 0x1205 && frames[1].sp == 0x7008 &&
			frames[1].fp == 0x1234);
	sframe_section__exit(&sec);
	return TEST_OK;
}

/*
 * What the ABI walks are made of: a function at 0x1000 (its entry row,
 * then the one after its prologue, the RA and FP saved), a signal
 * trampoline at 0x1100 and an outermost function at 0x1200.
 */
struct walk_model {
	u8	abi;
	s32	entry_cfa;
	u32	body;		/* where the prologue is done */
	s32	cfa, ra, fp;
};

/* Walk from @frames[0] over @mem, a stack copied at 0x7000, under @m. */
static int walk(const struct walk_model *m, struct sframe_frame *frames,
		const u8 *mem, size_t size, enum sframe_stop *stop)
{
	const struct sframe_build_fre func[] = {
		{ .start = 0, .cfa = m->entry_cfa },
		{ .start = m->body, .cfa = m->cfa, .ra_saved = true, .ra = m->ra,
		  .fp_saved = true, .fp = m->fp },
	};
	const struct sframe_build_fre tramp[] = { { .cfa = m->entry_cfa } };
	const struct sframe_build_fre outer[] = { { .outermost = true } };
	const struct sframe_build_fde fdes[] = {
		{ 0x1000, 0x40, 0, false, ARRAY_SIZE(func), func },
		{ 0x1100, 0x10, 0, true, ARRAY_SIZE(tramp), tramp },
		{ 0x1200, 0x10, 0, false, ARRAY_SIZE(outer), outer },
	};
	struct sframe_build b = {
		.version = SFRAME_VERSION_3, .abi = m->abi, .pcrel = true,
		.addr = SEC_ADDR, .nr_fdes = ARRAY_SIZE(fdes), .fdes = fdes,
	};
	struct sframe_stack stack = { .sp = 0x7000, .data = mem, .size = size };
	struct sframe_section sec;
	struct one_section o = { &sec };
	u8 buf[1024];
	long len = sframe_build__section(&b, buf, sizeof(buf));
	int n;

	if (len < 0 || sframe_section__decode(&sec, buf, len, SEC_ADDR))
		return -1;
	n = sframe_walk__unwind(sframe_abi__find(m->abi), frames, 8, &stack, lookup,
				&o, stop);
	pr_debug("%s: %d frames, stop %d\n", sframe_abi__name(m->abi), n, *stop);
	sframe_section__exit(&sec);
	return n;
}

/* Big or little endian as the ABI is, at @addr of the stack at 0x7000. */
static void put_abi64(const struct sframe_abi *abi, u8 *mem, u64 addr, u64 v)
{
	for (int i = 0; i < 8; i++)
		mem[addr - 0x7000 + i] = v >> (abi->big_endian ? (7 - i) * 8 : i * 8);
}

/*
 * AArch64: a signal trampoline, the function it interrupted at its entry
 * (RA still in LR, read from the signal frame), its caller with a frame
 * record (stp x29, x30, [sp, -16]!), then the outermost frame.
 */
static int test__sframe_unwind_aarch64(struct test_suite *test __maybe_unused,
				       int subtest __maybe_unused)
{
	static const struct walk_model m = {
		.abi = SFRAME_ABI_AARCH64_ENDIAN_LITTLE,
		.entry_cfa = 0, .body = 4, .cfa = 16, .ra = -8, .fp = -16,
	};
	const struct sframe_abi *abi = sframe_abi__find(m.abi);
	struct sframe_frame frames[8] = { { .ip = 0x1104, .sp = 0x7000 } };
	static u8 mem[0x400];
	enum sframe_stop stop;
	int n;

	put_abi64(abi, mem, 0x7000 + abi->sig_ip, 0x1002);
	put_abi64(abi, mem, 0x7000 + abi->sig_sp, 0x7300);
	put_abi64(abi, mem, 0x7000 + abi->sig_fp, 0x7310);
	put_abi64(abi, mem, 0x7000 + abi->sig_ra, 0x1008);
	/* the caller, at 0x1008 (after its prologue): its frame record */
	put_abi64(abi, mem, 0x7300, 0x7340);
	put_abi64(abi, mem, 0x7308, 0x1204);

	n = walk(&m, frames, mem, sizeof(mem), &stop);
	TEST_ASSERT_VAL("frames", n == 4 && stop == SFRAME_STOP_OUTERMOST);
	TEST_ASSERT_VAL("trampoline", frames[0].sigtramp);
	TEST_ASSERT_VAL("interrupted", frames[1].ip == 0x1002 && frames[1].signal &&
			frames[1].sp == 0x7300 && frames[1].ra_known);
	/* RA from LR: the caller's SP is the callee's, which pushed nothing */
	TEST_ASSERT_VAL("RA in LR", frames[2].ip == 0x1008 && frames[2].sp == 0x7300 &&
			frames[2].fp == 0x7310 && !frames[2].ra_known);
	TEST_ASSERT_VAL("frame record", frames[3].ip == 0x1204 &&
			frames[3].sp == 0x7310 && frames[3].fp == 0x7340);

	/* Without the signal frame the LR is not known: no RA. */
	frames[0] = (struct sframe_frame){ .ip = 0x1002, .sp = 0x7300 };
	n = walk(&m, frames, mem, sizeof(mem), &stop);
	TEST_ASSERT_VAL("LR unknown", n == 1 && stop == SFRAME_STOP_BAD);
	return TEST_OK;
}

/*
 * s390x: a function after its prologue (stmg %r11,%r15; aghi %r15,-160:
 * CFA = SP + 320, r14 saved at CFA - 48, r11 at CFA - 72), then at its
 * entry (CFA = SP + 160, RA in r14); the caller's SP is the CFA less 160.
 * Its signal frame is not described: the walk stops there.
 */
static int test__sframe_unwind_s390x(struct test_suite *test __maybe_unused,
				     int subtest __maybe_unused)
{
	static const struct walk_model m = {
		.abi = SFRAME_ABI_S390X_ENDIAN_BIG,
		.entry_cfa = 160, .body = 6, .cfa = 320, .ra = -48, .fp = -72,
	};
	const struct sframe_abi *abi = sframe_abi__find(m.abi);
	struct sframe_frame frames[8] = { { .ip = 0x100a, .sp = 0x7000, .fp = 1 } };
	static u8 mem[0x200];
	enum sframe_stop stop;
	int n;

	put_abi64(abi, mem, 0x7140 - 48, 0x1204);
	put_abi64(abi, mem, 0x7140 - 72, 0x7180);
	n = walk(&m, frames, mem, sizeof(mem), &stop);
	TEST_ASSERT_VAL("after the prologue", n == 2 && stop == SFRAME_STOP_OUTERMOST &&
			frames[1].ip == 0x1204 && frames[1].sp == 0x7140 - 160 &&
			frames[1].fp == 0x7180);

	frames[0] = (struct sframe_frame){ .ip = 0x1002, .sp = 0x7000, .ra = 0x1204,
					   .ra_known = true };
	n = walk(&m, frames, mem, sizeof(mem), &stop);
	TEST_ASSERT_VAL("at the entry", n == 2 && stop == SFRAME_STOP_OUTERMOST &&
			frames[1].ip == 0x1204 && frames[1].sp == 0x7000);

	frames[0] = (struct sframe_frame){ .ip = 0x1104, .sp = 0x7000 };
	n = walk(&m, frames, mem, sizeof(mem), &stop);
	TEST_ASSERT_VAL("signal frame", n == 1 && stop == SFRAME_STOP_BAD);
	return TEST_OK;
}

/*
 * A synthetic AArch64 sample through the unwinder (unwind-sframe.c), the
 * code x86_64 samples take: user registers numbered by perf's arm64
 * helpers, a stack snapshot, and a dso on disk whose ELF header says
 * EM_AARCH64, with one PT_LOAD (file offset 0 at vaddr 0) and a v3
 * AArch64 .sframe at A64_SEC.  The file is mapped at A64_MAP.
 */
#define A64_MAP		0x400000ULL
#define A64_SEC		0x3000
#define A64_PC(vaddr)	(A64_MAP + (vaddr))
#define A64_SP		0x7ffd0000ULL

/*
 * F1 [0x1000, 0x1040): a leaf, its RA still in LR (CFA = SP).  F2
 * [0x1040, 0x1080): after "stp x29, x30, [sp, #-16]!" at 0x1044 its frame
 * record is at the CFA - 16 (CFA = SP + 16).  Code at 0x2000 has no row.
 */
static size_t a64_section(u8 *buf, size_t size)
{
	static const struct sframe_build_fre leaf[] = { { .cfa = 0 } };
	static const struct sframe_build_fre framed[] = {
		{ .start = 0, .cfa = 0 },
		{ .start = 8, .cfa = 16, .ra_saved = true, .ra = -8,
		  .fp_saved = true, .fp = -16 },
	};
	static const struct sframe_build_fde fdes[] = {
		{ .start = 0x1000, .size = 0x40, .nr_fres = 1, .fres = leaf },
		{ .start = 0x1040, .size = 0x40, .nr_fres = 2, .fres = framed },
	};
	struct sframe_build b = {
		.version = SFRAME_VERSION_3, .abi = SFRAME_ABI_AARCH64_ENDIAN_LITTLE,
		.pcrel = true, .addr = A64_SEC, .nr_fdes = ARRAY_SIZE(fdes),
		.fdes = fdes,
	};
	long n = sframe_build__section(&b, buf, size);

	return n < 0 ? 0 : n;
}

/* The dso's file: the ELF header, one PT_LOAD, .sframe and .shstrtab. */
static int a64_write_elf(char *path)
{
	static u8 sec[256];
	size_t size = a64_section(sec, sizeof(sec));
	int fd, ret;

	if (!size)
		return -1;
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	ret = sframe_build__write_elf(fd, EM_AARCH64, A64_SEC, sec, size);
	close(fd);
	return ret;
}

struct a64_ips {
	u64	ips[8];
	int	nr;
};

static int a64_collect(struct unwind_entry *entry, void *arg)
{
	struct a64_ips *l = arg;

	if (l->nr < (int)ARRAY_SIZE(l->ips))
		l->ips[l->nr++] = entry->ip;
	return 0;
}

/*
 * The sample: in F1 at 0x1004 with LR into F2 at 0x1050; F2's frame record
 * at SP (F1 pushed nothing) returns into 0x2010, code without a row, whose
 * x29 links two more frame records: SP+32 -> SP+48 -> out of the snapshot.
 */
static int test__sframe_unwind_aarch64_sample(struct test_suite *test __maybe_unused,
					      int subtest __maybe_unused)
{
	const u64 stack[] = {
		A64_SP + 32, A64_PC(0x2010), 0, 0,
		A64_SP + 48, A64_PC(0x2050), A64_SP + 4096, A64_PC(0x2080),
	};
	/* Return addresses as the kernel gives them, as the stitcher wants. */
	const u64 snapshot[] = {
		A64_PC(0x1004), A64_PC(0x1050), A64_PC(0x2010), A64_PC(0x2050),
		A64_PC(0x2080),
	};
	/* sframe-only: callers' PCs in the call, up to the frame without a row. */
	const u64 unwound[] = { A64_PC(0x1004), A64_PC(0x104f), A64_PC(0x200f) };
	const uint64_t reg_ip = perf_arch_reg_ip(EM_AARCH64);
	const uint64_t reg_sp = perf_arch_reg_sp(EM_AARCH64);
	const uint64_t reg_fp = perf_arch_reg_fp(EM_AARCH64);
	const uint64_t reg_ra = perf_arch_reg_ra(EM_AARCH64);
	char path[] = "/tmp/perf-test-sframe-a64-XXXXXX";
	u64 vals[4], ips[8], data[64] = { 0 };
	struct a64_ips got = { .nr = 0 };
	struct thread *thread = NULL;
	struct perf_sample sample;
	struct regs_dump regs = { .abi = PERF_SAMPLE_REGS_ABI_64 };
	struct machine machine;
	struct dso *dso = NULL;
	struct map *map = NULL;
	int n, i = 0, ret = TEST_FAIL;

	/* perf's arm64 numbering: none missing, none an x86_64 number. */
	TEST_ASSERT_VAL("arm64 regs", reg_fp != PERF_REG_NONE && reg_ra != PERF_REG_NONE &&
			reg_fp != perf_arch_reg_fp(EM_X86_64) &&
			perf_arch_reg_ra(EM_X86_64) == PERF_REG_NONE);
	/* What fp,defer,snapshot records: LR too, where the leaf's caller is. */
	regs.mask = perf_arch_snapshot_regs(EM_AARCH64);
	TEST_ASSERT_VAL("four regs", __builtin_popcountll(regs.mask) == 4 &&
			(regs.mask & (1ULL << reg_ra)));
	/* The sample's registers come in the order of their numbers. */
	for (int bit = 0; bit < 64; bit++) {
		if (!(regs.mask & (1ULL << bit)))
			continue;
		vals[i++] = bit == (int)reg_ip ? A64_PC(0x1004) :
			    bit == (int)reg_ra ? A64_PC(0x1050) : A64_SP;
	}
	regs.regs = vals;
	memcpy(data, stack, sizeof(stack));

	if (a64_write_elf(path)) {
		pr_debug("cannot write %s\n", path);
		return TEST_FAIL;
	}
	if (machine__init(&machine, "", HOST_KERNEL_ID))
		goto out_unlink;
	thread = machine__findnew_thread(&machine, 10, 10);
	dso = dso__new(path);
	map = dso ? map__new2(A64_MAP, dso) : NULL;
	if (!thread || !map)
		goto out;
	/* As dso__load() leaves it: the machine is read from the file. */
	dso__set_binary_type(dso, DSO_BINARY_TYPE__SYSTEM_PATH_DSO);
	map__set_end(map, A64_MAP + 0x10000);
	if (maps__insert(thread__maps(thread), map))
		goto out;
	/*
	 * machine__findnew_thread() may have asked, with no maps yet, what
	 * a live pid 10 runs: ask again, from the maps, as a recording's
	 * thread is asked once its MMAPs are in.
	 */
	thread__set_e_machine(thread, EM_NONE);
	if (thread__e_machine(thread, &machine, NULL) != EM_AARCH64) {
		pr_debug("the thread's machine is not the dso's\n");
		goto out;
	}

	perf_sample__init(&sample, /*all=*/true);
	sample.pid = 10;
	sample.tid = 10;
	sample.user_regs = &regs;
	sample.user_stack.data = (char *)data;
	sample.user_stack.size = sizeof(data);

	/* The deferred fallback's walk: SFrame through F1 and F2, then x29. */
	n = unwind_sframe__walk_snapshot(thread, &sample, ips, ARRAY_SIZE(ips));
	if (n != ARRAY_SIZE(snapshot) || memcmp(ips, snapshot, sizeof(snapshot))) {
		pr_debug("snapshot walk: %d frames\n", n);
		for (i = 0; i < n && i < (int)ARRAY_SIZE(ips); i++)
			pr_debug("  %#" PRIx64 "\n", ips[i]);
		goto out_sample;
	}

	/* The unwind style sframe-only, as perf report --unwind-style. */
	n = unwind_sframe__get_entries(a64_collect, &got, thread, &sample, 8,
				       /*best_effort=*/false, /*hybrid=*/false, /*last=*/true);
	if (callchain_param.order == ORDER_CALLER) {
		for (i = 0; i < got.nr / 2; i++) {
			u64 t = got.ips[i];

			got.ips[i] = got.ips[got.nr - 1 - i];
			got.ips[got.nr - 1 - i] = t;
		}
	}
	if (n != ARRAY_SIZE(unwound) || got.nr != n ||
	    memcmp(got.ips, unwound, sizeof(unwound))) {
		pr_debug("sframe-only: %d frames, %d given\n", n, got.nr);
		goto out_sample;
	}

	/* Without LR the leaf's caller is unknown: no guess. */
	regs.mask &= ~(1ULL << reg_ra);
	regs.cache_mask = 0;
	for (i = 0; i < 3; i++)
		vals[i] = i == 2 ? A64_PC(0x1004) : A64_SP;
	if (reg_ip < reg_sp || reg_ip < reg_fp) {
		pr_debug("arm64's PC is not its highest register\n");
		goto out_sample;
	}
	n = unwind_sframe__walk_snapshot(thread, &sample, ips, ARRAY_SIZE(ips));
	if (n != 1) {
		pr_debug("without LR: %d frames\n", n);
		goto out_sample;
	}
	ret = TEST_OK;
out_sample:
	sample.user_regs = NULL;
	perf_sample__exit(&sample);
out:
	map__put(map);
	dso__put(dso);
	thread__put(thread);
	machine__exit(&machine);
out_unlink:
	unlink(path);
	return ret;
}

static struct test_case tests__sframe[] = {
	TEST_CASE("Decode every version and ABI", sframe_versions),
	TEST_CASE("Reject malformed sections", sframe_malformed),
	TEST_CASE("FDEs start at their functions", sframe_functions),
	TEST_CASE("Unwind a synthetic stack", sframe_unwind),
	TEST_CASE("Unwind a synthetic AArch64 stack", sframe_unwind_aarch64),
	TEST_CASE("Unwind a synthetic s390x stack", sframe_unwind_s390x),
	TEST_CASE("Unwind a synthetic AArch64 sample", sframe_unwind_aarch64_sample),
	{ .name = NULL, }
};

struct test_suite suite__sframe = {
	.desc = "SFrame",
	.test_cases = tests__sframe,
};
