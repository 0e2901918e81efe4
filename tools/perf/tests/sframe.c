// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame decoder tests on sections built in memory: every version and byte
 * order, PCMASK FDEs, malformed sections, and a walk of a synthetic stack.
 */
#include <errno.h>
#include <string.h>
#include <linux/kernel.h>

#include "debug.h"
#include "sframe.h"
#include "tests.h"

#define SEC_ADDR	0x3000

struct fre_model {
	u8	start;
	u8	sp_based;
	u8	nr;		/* data words */
	s8	w[3];
};

struct fde_model {
	u64			start;
	u32			size;
	bool			mask;
	u8			nr_fres;
	const struct fre_model	*fres;
};

static const struct fre_model f0_fres[] = {
	{ 0x00, 1, 1, { 8 } },
	{ 0x04, 1, 2, { 16, -16 } },
	{ 0x10, 0, 2, { 16, -16 } },
	{ 0x1e, 1, 2, { 8, -16 } },	/* after pop %rbp: FP slot below SP */
};

static const struct fre_model f1_fres[] = {	/* a PLT: 16-byte blocks */
	{ 0x00, 1, 1, { 8 } },
	{ 0x0b, 1, 1, { 16 } },
};

static const struct fre_model f2_fres[] = {	/* outermost: RA undefined */
	{ 0x00, 1, 0, { 0 } },
};

static const struct fde_model fdes[] = {
	{ 0x1000, 0x20, false, ARRAY_SIZE(f0_fres), f0_fres },
	{ 0x1100, 0x40, true, ARRAY_SIZE(f1_fres), f1_fres },
	{ 0x1200, 0x10, false, ARRAY_SIZE(f2_fres), f2_fres },
};

struct builder {
	u8	*p;
	bool	be;
};

static void put(struct builder *b, size_t off, u64 v, int size)
{
	for (int i = 0; i < size; i++) {
		int shift = b->be ? (size - 1 - i) * 8 : i * 8;

		b->p[off + i] = v >> shift;
	}
}

/* Lay out fdes[] as an SFrame section of @version; return its size. */
static size_t build(u8 *buf, int version, bool pcrel, u8 abi)
{
	struct builder b = { .p = buf };
	size_t fde_size = version == 1 ? 17 : version == 2 ? 20 : 16;
	size_t nr = ARRAY_SIZE(fdes), fres, off = 0;
	u32 nr_fres = 0;

	b.be = abi == SFRAME_ABI_AARCH64_ENDIAN_BIG ||
	       abi == SFRAME_ABI_S390X_ENDIAN_BIG;
	memset(buf, 0, 1024);
	put(&b, 0, SFRAME_MAGIC, 2);
	buf[2] = version;
	buf[3] = SFRAME_F_FDE_SORTED | (pcrel ? SFRAME_F_FDE_FUNC_START_PCREL : 0);
	buf[4] = abi;
	buf[6] = abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE ? (u8)-8 : 0;
	fres = 28 + nr * fde_size;

	for (size_t i = 0; i < nr; i++) {
		const struct fde_model *m = &fdes[i];
		size_t pos = 28 + i * fde_size;
		s64 start = m->start - SEC_ADDR - (pcrel ? pos : 0);
		u8 info = (m->mask ? 0x10 : 0) | SFRAME_FRE_TYPE_ADDR1;

		if (version == 3) {
			put(&b, pos, start, 8);
			put(&b, pos + 8, m->size, 4);
			put(&b, pos + 12, off, 4);
			put(&b, fres + off, m->nr_fres, 2);
			buf[fres + off + 2] = info;
			buf[fres + off + 4] = m->mask ? 16 : 0;
			off += 5;
		} else {
			put(&b, pos, start, 4);
			put(&b, pos + 4, m->size, 4);
			put(&b, pos + 8, off, 4);
			put(&b, pos + 12, m->nr_fres, 4);
			buf[pos + 16] = info;
			if (version == 2)
				buf[pos + 17] = m->mask ? 16 : 0;
		}
		for (int j = 0; j < m->nr_fres; j++) {
			const struct fre_model *f = &m->fres[j];
			u8 nw = f->nr;

			nr_fres++;
			/* AArch64 and s390x put the RA before the FP. */
			if (abi != SFRAME_ABI_AMD64_ENDIAN_LITTLE && nw == 2)
				nw = 3;
			buf[fres + off++] = f->start;
			buf[fres + off++] = (nw << 1) | f->sp_based;
			if (!nw)
				continue;
			/* s390x stores the CFA offset less 160, divided by 8 */
			buf[fres + off++] = abi == SFRAME_ABI_S390X_ENDIAN_BIG ?
					    (f->w[0] - 160) / 8 : f->w[0];
			if (nw == 3)
				buf[fres + off++] = -8;
			if (nw > 1)
				buf[fres + off++] = f->w[1];
		}
	}
	put(&b, 8, nr, 4);
	put(&b, 12, nr_fres, 4);
	put(&b, 16, off, 4);
	put(&b, 20, 0, 4);
	put(&b, 24, nr * fde_size, 4);
	return fres + off;
}

static int check_rows(const struct sframe_section *sec)
{
	bool amd64 = sec->abi == SFRAME_ABI_AMD64_ENDIAN_LITTLE;
	struct sframe_fre fre;

	TEST_ASSERT_VAL("row 0", !sframe__find_fre(sec, 0x1002, &fre));
	TEST_ASSERT_VAL("row 0 CFA", fre.cfa.kind == SFRAME_RULE_REG &&
			fre.cfa.offset == 8 && fre.start == 0x1000 && fre.end == 0x1004);
	TEST_ASSERT_VAL("row 0 FP", fre.fp.kind == SFRAME_RULE_SAME);
	TEST_ASSERT_VAL("row 0 RA", amd64 ? fre.ra.kind == SFRAME_RULE_CFA &&
			fre.ra.offset == -8 : fre.ra.kind == SFRAME_RULE_SAME);

	TEST_ASSERT_VAL("row 1", !sframe__find_fre(sec, 0x100f, &fre));
	TEST_ASSERT_VAL("row 1 CFA", fre.cfa.offset == 16 && fre.fre_idx == 1);
	TEST_ASSERT_VAL("row 1 FP", fre.fp.kind == SFRAME_RULE_CFA &&
			fre.fp.offset == -16);
	TEST_ASSERT_VAL("row 1 RA", fre.ra.kind == SFRAME_RULE_CFA &&
			fre.ra.offset == -8);

	TEST_ASSERT_VAL("row 2", !sframe__find_fre(sec, 0x101d, &fre));
	TEST_ASSERT_VAL("row 2 FP based", fre.cfa.reg == (amd64 ? 6 : 29) ||
			(sec->abi == SFRAME_ABI_S390X_ENDIAN_BIG && fre.cfa.reg == 11));
	TEST_ASSERT_VAL("past the function", sframe__find_fre(sec, 0x1020, &fre) == -ENOENT);
	TEST_ASSERT_VAL("before the first", sframe__find_fre(sec, 0xfff, &fre) == -ENOENT);

	/* PCMASK: the offset inside each 16-byte block picks the row. */
	TEST_ASSERT_VAL("mask row 1", !sframe__find_fre(sec, 0x1100 + 0x1c, &fre));
	TEST_ASSERT_VAL("mask row 1 CFA", fre.cfa.offset == 16 && fre.fre_idx == 1);
	TEST_ASSERT_VAL("mask row 0", !sframe__find_fre(sec, 0x1100 + 0x23, &fre));
	TEST_ASSERT_VAL("mask row 0 CFA", fre.cfa.offset == 8 && fre.fre_idx == 0);

	TEST_ASSERT_VAL("outermost", !sframe__find_fre(sec, 0x1208, &fre));
	TEST_ASSERT_VAL("outermost RA", fre.ra.kind == SFRAME_RULE_UNDEFINED);
	TEST_ASSERT_VAL("gap", sframe__find_fre(sec, 0x1150, &fre) == -ENOENT);
	return TEST_OK;
}

static int test__sframe_versions(struct test_suite *test __maybe_unused,
				 int subtest __maybe_unused)
{
	static const struct {
		int version;
		bool pcrel;
		u8 abi;
	} cases[] = {
		{ 1, false, SFRAME_ABI_AMD64_ENDIAN_LITTLE },
		{ 2, false, SFRAME_ABI_AMD64_ENDIAN_LITTLE },
		{ 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE },
		{ 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE },
		{ 2, true, SFRAME_ABI_AARCH64_ENDIAN_LITTLE },
		{ 3, true, SFRAME_ABI_AARCH64_ENDIAN_BIG },
		{ 2, false, SFRAME_ABI_S390X_ENDIAN_BIG },
		{ 3, true, SFRAME_ABI_S390X_ENDIAN_BIG },
	};
	u8 buf[1024];

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sframe_section sec;
		size_t size = build(buf, cases[i].version, cases[i].pcrel, cases[i].abi);
		int err = sframe__decode(&sec, buf, size, SEC_ADDR);

		const char *how = err ? sec.err : "ok";
		const char *pcrel = "";

		if (cases[i].pcrel)
			pcrel = " PCREL";
		pr_debug("v%d%s %s, %s\n", cases[i].version, pcrel,
			 sframe__abi_name(cases[i].abi), how);
		TEST_ASSERT_VAL("decode", !err);
		TEST_ASSERT_VAL("counts", sec.nr_fdes == 3 && sec.nr_fres == 7);
		err = check_rows(&sec);
		sframe__exit(&sec);
		if (err)
			return err;
	}
	return TEST_OK;
}

/* Rejected, counted, and for the reason @why: not merely rejected. */
static int expect_invalid(u8 *buf, size_t size, const char *what,
			  const char *why)
{
	unsigned long before = sframe__nr_invalid;
	struct sframe_section sec;
	int err = sframe__decode(&sec, buf, size, SEC_ADDR);

	pr_debug("%s: %s\n", what, err ? sec.err : "accepted");
	if (!err)
		sframe__exit(&sec);
	TEST_ASSERT_VAL(what, err == -EINVAL);
	TEST_ASSERT_VAL("counted", sframe__nr_invalid == before + 1);
	TEST_ASSERT_VAL(why, sec.err && !strcmp(sec.err, why));
	return TEST_OK;
}

static void put32(u8 *p, u32 v)
{
	memcpy(p, &v, sizeof(v));	/* little endian host and section */
}

static int test__sframe_malformed(struct test_suite *test __maybe_unused,
				  int subtest __maybe_unused)
{
	s64 far = 0x7fffffffffffffffLL;
	int ret = 0;
	u8 buf[1024];
	size_t size;
	s32 s;

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	size = 20;
	ret |= expect_invalid(buf, size, "truncated header",
			      "section smaller than a header");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[0] = 0xad;
	ret |= expect_invalid(buf, size, "bad magic",
			      "bad magic");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[2] = 9;
	ret |= expect_invalid(buf, size, "unknown version",
			      "unknown version");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[3] |= 0x80;
	ret |= expect_invalid(buf, size, "unknown flag",
			      "unknown flags");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[4] = 7;
	ret |= expect_invalid(buf, size, "unknown ABI",
			      "unknown ABI");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[4] = SFRAME_ABI_S390X_ENDIAN_BIG;
	ret |= expect_invalid(buf, size, "byte order not the ABI's",
			      "byte order does not match the ABI");

	/* Second FDE made to start before the first, as PC relative. */
	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	memcpy(&s, buf + 28 + 20, 4);
	put32(buf + 28 + 20, s - 0x200);
	ret |= expect_invalid(buf, size, "unsorted FDEs",
			      "FDEs not sorted");

	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 28 + 2 * 16 + 12, 0xfff0);
	ret |= expect_invalid(buf, size, "FRE offset out of range",
			      "FDE attributes beyond the FRE sub-section");

	size = build(buf, 2, false, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 28 + 8, 0xfff0);
	ret |= expect_invalid(buf, size, "v2 FRE offset out of range",
			      "FRE beyond the FRE sub-section");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 8, 0x20000000);
	ret |= expect_invalid(buf, size, "FDE count overflows",
			      "FDE count overflows the FDE sub-section");

	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 8, 0xffffffff);
	ret |= expect_invalid(buf, size, "FDE count wraps 32 bits",
			      "FDE count overflows the FDE sub-section");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 12, 99);
	ret |= expect_invalid(buf, size, "FRE count mismatch",
			      "FRE count does not match the FDEs");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 16, 0x7fffffff);
	ret |= expect_invalid(buf, size, "FRE length beyond the section",
			      "FRE sub-section beyond the section");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 28 + 12, 200);
	ret |= expect_invalid(buf, size, "FDE FRE count beyond the sub-section",
			      "FDEs use more FREs than the header counts");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 28 + 4, 2);
	ret |= expect_invalid(buf, size, "FRE starting beyond its function",
			      "FRE starts beyond its function");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 16] = 7;
	ret |= expect_invalid(buf, size, "unknown FRE type",
			      "unknown FRE type");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 3 * 20 + 1] |= 3 << 5;
	ret |= expect_invalid(buf, size, "bad data word size",
			      "FRE data word size invalid");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 20 + 17] = 0;
	ret |= expect_invalid(buf, size, "PCMASK without block size",
			      "PCMASK FDE with no block size");

	/* Sections that would lie: each read as valid, each unwinding wrong. */
	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[6] = (u8)-16;
	ret |= expect_invalid(buf, size, "AMD64 RA at CFA-16",
			      "fixed RA offset not the ABI's");

	size = build(buf, 2, true, SFRAME_ABI_AARCH64_ENDIAN_LITTLE);
	buf[6] = (u8)-8;
	ret |= expect_invalid(buf, size, "AArch64 fixed RA",
			      "fixed RA offset not the ABI's");

	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[5] = (u8)-16;
	ret |= expect_invalid(buf, size, "fixed FP",
			      "fixed FP offset not the ABI's");

	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[7] = 4;
	ret |= expect_invalid(buf, size, "auxiliary header",
			      "auxiliary header of unknown layout");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 16] |= 0x40;
	ret |= expect_invalid(buf, size, "v2 FDE reserved bit",
			      "FDE reserved bits set");

	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 3 * 16 + 3] |= 0x20;
	ret |= expect_invalid(buf, size, "v3 FDE reserved bit",
			      "FDE reserved bits set");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 16] |= 0x20;
	ret |= expect_invalid(buf, size, "PAuth key on AMD64",
			      "PAuth key on an ABI without PAuth");

	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 3 * 20 + 1] |= 0x80;
	ret |= expect_invalid(buf, size, "signed RA on AMD64",
			      "FRE RA signed on an ABI without PAuth");

	/* First FDE grown into the second. */
	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	put32(buf + 28 + 4, 0x180);
	ret |= expect_invalid(buf, size, "overlapping FDEs", "FDEs overlap");

	/* PLT rows in 16-byte blocks, one starting at 0x20. */
	size = build(buf, 2, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	buf[28 + 3 * 20 + 18] = 0x20;
	ret |= expect_invalid(buf, size, "FRE beyond its PCMASK block",
			      "FRE starts beyond its PCMASK block");

	size = build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE);
	memcpy(buf + 28, &far, sizeof(far));
	ret |= expect_invalid(buf, size, "start address wraps",
			      "FDE start address wraps");
	return ret ? TEST_FAIL : TEST_OK;
}

struct one_section {
	const struct sframe_section *sec;
};

static int lookup(u64 pc, struct sframe_fre *fre, void *arg)
{
	struct one_section *o = arg;

	return sframe__find_fre(o->sec, pc, fre);
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

	TEST_ASSERT_VAL("decode", !sframe__decode(&sec, buf,
			build(buf, 3, true, SFRAME_ABI_AMD64_ENDIAN_LITTLE), SEC_ADDR));
	/* F0 row 1 (CFA sp+16), then F0 row 2 (CFA fp+16), then F2. */
	put64(mem, 0x7000, 0x7000, 0x7020);
	put64(mem, 0x7000, 0x7008, 0x1015);
	put64(mem, 0x7000, 0x7020, 0);
	put64(mem, 0x7000, 0x7028, 0x1205);

	n = sframe__unwind(frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("frames", n == 3 && stop == SFRAME_STOP_OUTERMOST);
	TEST_ASSERT_VAL("frame 1", frames[1].ip == 0x1015 && frames[1].sp == 0x7010 &&
			frames[1].fp == 0x7020);
	TEST_ASSERT_VAL("frame 2", frames[2].ip == 0x1205 && frames[2].sp == 0x7030);

	n = sframe__unwind(frames, 2, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("max", n == 2 && stop == SFRAME_STOP_MAX);

	stack.size = 0x20;
	n = sframe__unwind(frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("off the snapshot", n == 2 && stop == SFRAME_STOP_STACK);

	put64(mem, 0x7000, 0x7028, 0x9999);
	stack.size = sizeof(mem);
	n = sframe__unwind(frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("no SFrame", n == 3 && stop == SFRAME_STOP_NO_SFRAME &&
			frames[2].ip == 0x9999 && frames[2].sp == 0x7030);

	/* In the epilogue: the FP was popped, the register holds the caller's. */
	frames[0] = (struct sframe_frame){ .ip = 0x101e, .sp = 0x7000, .fp = 0x1234 };
	put64(mem, 0x7000, 0x7000, 0x1205);
	n = sframe__unwind(frames, 8, &stack, lookup, &o, &stop);
	TEST_ASSERT_VAL("epilogue", n == 2 && stop == SFRAME_STOP_OUTERMOST &&
			frames[1].ip == 0x1205 && frames[1].sp == 0x7008 &&
			frames[1].fp == 0x1234);
	sframe__exit(&sec);
	return TEST_OK;
}

static struct test_case tests__sframe[] = {
	TEST_CASE("Decode every version and ABI", sframe_versions),
	TEST_CASE("Reject malformed sections", sframe_malformed),
	TEST_CASE("Unwind a synthetic stack", sframe_unwind),
	{ .name = NULL, }
};

struct test_suite suite__sframe = {
	.desc = "SFrame",
	.test_cases = tests__sframe,
};
