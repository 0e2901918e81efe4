// SPDX-License-Identifier: GPL-2.0
/*
 * SFrame decoder: see sframe.h for the contract.  The stack walker is in
 * sframe-walk.c, the per-DSO state in sframe-dso.c.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <byteswap.h>
#include <endian.h>
#include <elf.h>
#include <linux/compiler.h>
#include <linux/kernel.h>
#include <linux/zalloc.h>

#include "sframe.h"

/* DWARF register numbers of the registers the ABIs' rows name. */
#define DW_X86_64_FP	6
#define DW_X86_64_SP	7
#define DW_X86_64_RA	16	/* .eh_frame's RA column, no register */
#define DW_AARCH64_FP	29
#define DW_AARCH64_LR	30
#define DW_AARCH64_SP	31
#define DW_S390X_FP	11
#define DW_S390X_RA	14
#define DW_S390X_SP	15

/*
 * Signal frames, as the kernel lays them out at the SP the sigreturn
 * trampoline runs with.  x86_64 rt_sigframe: the return address slot, then
 * the ucontext, its mcontext at 40: rbp at 80, rsp 120, rip 128.  AArch64
 * rt_sigframe: siginfo (128), ucontext with its mcontext at 176: the fault
 * address, then x0-x30 (x29 at 8 + 29 * 8), sp, pc.
 */
#define X86_64_SIG_MCONTEXT	40
#define AARCH64_SIG_REGS	(128 + 176 + 8)

struct sframe_reader {
	const u8	*p;
	bool		swap;
};

static u16 rd16(const u8 *p, bool swap)
{
	u16 v;

	memcpy(&v, p, sizeof(v));
	return swap ? bswap_16(v) : v;
}

static u32 rd32(const u8 *p, bool swap)
{
	u32 v;

	memcpy(&v, p, sizeof(v));
	return swap ? bswap_32(v) : v;
}

static u64 rd64(const u8 *p, bool swap)
{
	u64 v;

	memcpy(&v, p, sizeof(v));
	return swap ? bswap_64(v) : v;
}

/*
 * Frame records of two words at FP, the caller's FP then the RA, as x86_64
 * ("push %rbp; mov %rsp, %rbp") and AArch64 ("stp x29, x30, [sp, #-16]!;
 * mov x29, sp") make them: the kernel's ARCH_INIT_USER_FP_FRAME(8).  On
 * AArch64 the record need not sit at the top of its frame, so the CFA is
 * that of the record, not the caller's SP; the walk never goes back from
 * frame pointers to rows that would need it.
 */
#define SFRAME_FP_RECORD(fp_reg)						\
	.fp_row = {								\
		.cfa = { .kind = SFRAME_RULE_REG, .reg = (fp_reg), .offset = 16 },	\
		.ra = { .kind = SFRAME_RULE_CFA, .offset = -8 },		\
		.fp = { .kind = SFRAME_RULE_CFA, .offset = -16 },		\
	}

/*
 * What each ABI is, in one place (see struct sframe_abi): the FRE layout
 * the decoder reads, the registers and signal frame the walker follows.
 */
/* AArch64, in either byte order. */
#define SFRAME_ABI_AARCH64						\
	.elf_machine = EM_AARCH64, .pauth = true,			\
	/* RA and FP saved as a frame record: CFA, RA, FP */		\
	.max_words = 3, .ra_word = true, .cfa_scale = 1,		\
	.sp = DW_AARCH64_SP, .fp = DW_AARCH64_FP,			\
	/* the RA stays in LR until a frame record is made */		\
	.ra = DW_AARCH64_LR,						\
	.sig_ip = AARCH64_SIG_REGS + 32 * 8,				\
	.sig_sp = AARCH64_SIG_REGS + 31 * 8,				\
	.sig_fp = AARCH64_SIG_REGS + 29 * 8,				\
	.sig_ra = AARCH64_SIG_REGS + 30 * 8,				\
	.cfi_ra = DW_AARCH64_LR, SFRAME_FP_RECORD(DW_AARCH64_FP)

static const struct sframe_abi sframe_abis[] = {
	{
		.id = SFRAME_ABI_AARCH64_ENDIAN_BIG, .name = "AARCH64 (big endian)",
		.big_endian = true, SFRAME_ABI_AARCH64,
	}, {
		.id = SFRAME_ABI_AARCH64_ENDIAN_LITTLE, .name = "AARCH64 (little endian)",
		SFRAME_ABI_AARCH64,
	}, {
		.id = SFRAME_ABI_AMD64_ENDIAN_LITTLE, .name = "AMD64 (little endian)",
		.elf_machine = EM_X86_64,
		/* the call pushes the RA at CFA-8: the header says so */
		.fixed_ra = -8, .max_words = 2, .cfa_scale = 1,
		.sp = DW_X86_64_SP, .fp = DW_X86_64_FP,
		.sig_ip = X86_64_SIG_MCONTEXT + 128,
		.sig_sp = X86_64_SIG_MCONTEXT + 120,
		.sig_fp = X86_64_SIG_MCONTEXT + 80,
		.cfi_ra = DW_X86_64_RA, SFRAME_FP_RECORD(DW_X86_64_FP),
	}, {
		.id = SFRAME_ABI_S390X_ENDIAN_BIG, .name = "S390X (big endian)",
		.elf_machine = EM_S390, .big_endian = true,
		/*
		 * CFA, RA, FP; a zero RA word pads an FP saved without the
		 * RA; in v2 an odd word is a register number shifted by one.
		 * The CFA offset is stored less 160, its least value, over 8.
		 */
		.max_words = 3, .ra_word = true, .ra_pad = true, .v2_regs = true,
		.cfa_bias = 160, .cfa_scale = 8,
		.sp = DW_S390X_SP, .fp = DW_S390X_FP, .ra = DW_S390X_RA,
		/* the CFA is the caller's SP plus its 160-byte save area */
		.cfa_to_sp = -160, .cfi_ra = DW_S390X_RA,
		/* signal frames not described yet: walks stop there */
		/*
		 * r11 is a frame pointer, but frames link by the back chain
		 * at the SP (-mbackchain) with the RA in the caller's save
		 * area: no frame records, no frame pointer walk yet.
		 */
	},
};

const struct sframe_abi *sframe_abi__nth(unsigned int i)
{
	return i < ARRAY_SIZE(sframe_abis) ? &sframe_abis[i] : NULL;
}

const struct sframe_abi *sframe_abi__find(u8 abi)
{
	for (size_t i = 0; i < ARRAY_SIZE(sframe_abis); i++) {
		if (sframe_abis[i].id == abi)
			return &sframe_abis[i];
	}
	return NULL;
}

const struct sframe_abi *sframe_abi__of_machine(u16 e_machine, bool big_endian)
{
	for (size_t i = 0; i < ARRAY_SIZE(sframe_abis); i++) {
		if (sframe_abis[i].elf_machine == e_machine &&
		    sframe_abis[i].big_endian == big_endian)
			return &sframe_abis[i];
	}
	return NULL;
}

const char *sframe_abi__name(u8 abi)
{
	const struct sframe_abi *a = sframe_abi__find(abi);

	return a ? a->name : "unknown";
}

/* Size of the FRE's start address field and of one data word. */
static unsigned int fre_addr_size(u8 fre_type)
{
	return 1U << fre_type;
}

static unsigned int fre_word_size(u8 info)
{
	return 1U << ((info >> 5) & 3);
}

static unsigned int fre_word_count(u8 info)
{
	return (info >> 1) & 0xf;
}

static s32 fre_word(const u8 *w, unsigned int size, unsigned int i, bool swap)
{
	switch (size) {
	case 1:
		return (s8)w[i];
	case 2:
		return (s16)rd16(w + 2 * i, swap);
	default:
		return (s32)rd32(w + 4 * i, swap);
	}
}

/* Most data words an FRE may carry for @fde_type under the section's ABI. */
static unsigned int fre_max_words(const struct sframe_section *sec, u8 fde_type)
{
	if (fde_type == SFRAME_FDE_TYPE_FLEX)
		return 6;
	return sec->abi_row->max_words;
}

static int sframe_section__fail(struct sframe_section *sec, const char *why)
{
	sec->err = why;
	zfree(&sec->fdes);
	return -EINVAL;
}

static int fde_cmp(const void *a, const void *b)
{
	const struct sframe_fde *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/* The CFA offset a stored word means under @abi, in an s64: it may not fit. */
static s64 cfa_offset(const struct sframe_abi *abi, s32 word)
{
	return (s64)word * abi->cfa_scale + abi->cfa_bias;
}

/* Check every FRE of @fde lies inside the FRE sub-section and is sane. */
static const char *sframe_section__check_fres(const struct sframe_section *sec,
					      const struct sframe_fde *fde, u64 *end)
{
	const struct sframe_abi *abi = sec->abi_row;
	unsigned int asz = fre_addr_size(fde->fre_type);
	u64 off = fde->fre_off;
	u64 prev = 0;

	for (u32 i = 0; i < fde->nr_fres; i++) {
		unsigned int n, cfa = fde->fde_type == SFRAME_FDE_TYPE_FLEX;
		const u8 *w;
		u64 start;
		u8 info;

		if (off + asz + 1 > sec->fre_len)
			return "FRE beyond the FRE sub-section";
		if (asz == 1)
			start = sec->fres[off];
		else if (asz == 2)
			start = rd16(sec->fres + off, sec->swap);
		else
			start = rd32(sec->fres + off, sec->swap);
		info = sec->fres[off + asz];
		if (((info >> 5) & 3) == 3)
			return "FRE data word size invalid";
		/* Only AArch64 signs return addresses (PAuth). */
		if ((info & 0x80) && !abi->pauth)
			return "FRE RA signed on an ABI without PAuth";
		n = fre_word_count(info);
		if (n > fre_max_words(sec, fde->fde_type))
			return "FRE has too many data words";
		w = sec->fres + off + asz + 1;
		off += asz + 1 + (u64)n * fre_word_size(info);
		if (off > sec->fre_len)
			return "FRE data words beyond the FRE sub-section";
		if (n > cfa) {
			s64 cfa_off = cfa_offset(abi, fre_word(w, fre_word_size(info),
							      cfa, sec->swap));

			if (cfa_off < INT32_MIN || cfa_off > INT32_MAX)
				return "CFA offset out of range";
		}
		if (i && start <= prev)
			return "FRE start addresses not ascending";
		/* binutils PR libsframe/33131: start == size is seen in the wild */
		if (start > fde->size)
			return "FRE starts beyond its function";
		if (fde->pc_type == SFRAME_PC_TYPE_MASK && start >= fde->rep_size)
			return "FRE starts beyond its PCMASK block";
		prev = start;
	}
	*end = off;
	return NULL;
}

/* The bytes of one function's FREs (v3: its attributes first). */
struct fre_span {
	u64	start;
	u64	end;
};

static int span_cmp(const void *a, const void *b)
{
	const struct fre_span *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return 0;
}

/*
 * The functions' FREs tile the FRE sub-section, in any order (ld sorts the
 * FDEs, not the FREs): an FRE offset off by a byte would otherwise read
 * valid looking rows out of another function's bytes, and bytes no
 * function owns mean some FDE lost its rows.  Functions without FREs
 * (v1, v2) own no bytes.
 */
static const char *sframe_section__check_spans(const struct sframe_section *sec)
{
	struct fre_span *spans = calloc(sec->nr_fdes, sizeof(*spans));
	const char *why = NULL;
	u64 next = 0;

	if (!spans)
		return "out of memory";
	for (u32 i = 0; i < sec->nr_fdes; i++) {
		spans[i].start = sec->fdes[i].fre_start;
		spans[i].end = sec->fdes[i].fre_end;
	}
	qsort(spans, sec->nr_fdes, sizeof(*spans), span_cmp);
	for (u32 i = 0; i < sec->nr_fdes && !why; i++) {
		if (spans[i].start == spans[i].end)
			continue;
		if (spans[i].start < next)
			why = "FREs of two functions overlap";
		else if (spans[i].start > next)
			why = "FRE sub-section bytes no function uses";
		next = spans[i].end;
	}
	if (!why && next != sec->fre_len)
		why = "FRE sub-section bytes no function uses";
	free(spans);
	return why;
}

/* The fixed header, in host byte order (binutils' sframe_header). */
struct sframe_header {
	u16	magic;
	u8	version;
	u8	flags;
	u8	abi;
	s8	fixed_fp;
	s8	fixed_ra;
	u8	auxhdr_len;
	u32	nr_fdes;
	u32	nr_fres;
	u32	fre_len;
	u32	fde_off;	/* from the end of the header */
	u32	fre_off;
};

static void sframe_section__read_header(const u8 *d, bool swap, struct sframe_header *h)
{
	h->magic = rd16(d, swap);
	h->version = d[SFRAME_HDR_VERSION];
	h->flags = d[SFRAME_HDR_FLAGS];
	h->abi = d[SFRAME_HDR_ABI];
	h->fixed_fp = (s8)d[SFRAME_HDR_FIXED_FP];
	h->fixed_ra = (s8)d[SFRAME_HDR_FIXED_RA];
	h->auxhdr_len = d[SFRAME_HDR_AUXHDR_LEN];
	h->nr_fdes = rd32(d + SFRAME_HDR_NR_FDES, swap);
	h->nr_fres = rd32(d + SFRAME_HDR_NR_FRES, swap);
	h->fre_len = rd32(d + SFRAME_HDR_FRE_LEN, swap);
	h->fde_off = rd32(d + SFRAME_HDR_FDE_OFF, swap);
	h->fre_off = rd32(d + SFRAME_HDR_FRE_OFF, swap);
}

/*
 * Stage 1: the header on its own, and that the sub-sections it points to
 * lie in the section.  Sets the FDE size of the version in @fde_size.
 */
static const char *sframe_section__check_header(const struct sframe_section *sec,
						const struct sframe_header *h,
					u64 *fde_size)
{
	u64 hdr_size = SFRAME_HDR_SIZE + h->auxhdr_len;
	const struct sframe_abi *abi;
	u8 valid_flags;

	switch (h->version) {
	case SFRAME_VERSION_1:
		valid_flags = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER;
		*fde_size = SFRAME_V1_FDE_SIZE;
		break;
	case SFRAME_VERSION_2:
		valid_flags = SFRAME_F_FDE_SORTED | SFRAME_F_FRAME_POINTER |
			      SFRAME_F_FDE_FUNC_START_PCREL;
		*fde_size = SFRAME_V2_FDE_SIZE;
		break;
	case SFRAME_VERSION_3:
		valid_flags = SFRAME_F_FDE_SORTED | SFRAME_F_FDE_FUNC_START_PCREL;
		*fde_size = SFRAME_V3_FDE_SIZE;
		break;
	default:
		return "unknown version";
	}
	if (h->flags & ~valid_flags)
		return "unknown flags";
	abi = sframe_abi__find(h->abi);
	if (!abi)
		return "unknown ABI";
	/* The magic says which byte order; it must be the ABI's. */
	if (abi->big_endian != (sec->swap == (__BYTE_ORDER == __LITTLE_ENDIAN)))
		return "byte order does not match the ABI";
	if (hdr_size > sec->size)
		return "auxiliary header beyond the section";
	/* No SFrame version defines one: its bytes would be read as FDEs. */
	if (hdr_size != SFRAME_HDR_SIZE)
		return "auxiliary header of unknown layout";
	/*
	 * The ABI fixes these: the AMD64 call pushes the RA at CFA-8, no ABI
	 * keeps the FP at a fixed offset.  Another value would move every RA
	 * or FP the rows do not give themselves.
	 */
	if (h->fixed_ra != abi->fixed_ra)
		return "fixed RA offset not the ABI's";
	if (h->fixed_fp)
		return "fixed FP offset not the ABI's";
	if (h->fde_off > h->fre_off)
		return "FDEs after FREs";
	/* u64 arithmetic: none of these can wrap. */
	if (hdr_size + h->fde_off + h->nr_fdes * *fde_size > hdr_size + h->fre_off)
		return "FDE count overflows the FDE sub-section";
	/* The FREs follow the FDEs: a smaller count hides functions. */
	if (h->fde_off + h->nr_fdes * *fde_size != h->fre_off)
		return "FDE count does not fill the FDE sub-section";
	if (hdr_size + h->fre_off + h->fre_len > sec->size)
		return "FRE sub-section beyond the section";
	if (sec->addr + sec->size < sec->addr)
		return "section address wraps";
	if (!h->nr_fdes && (h->nr_fres || h->fre_len))
		return "FRE count does not match the FDEs";
	return NULL;
}

/*
 * Stage 2: FDE @i, at offset @pos of the section, into sec->fdes[i]: its
 * fields, its place among the FDEs before it, and its FREs (stage 2b,
 * sframe_section__check_fres()).  @total_fres counts the FREs so far.
 */
static const char *sframe_section__read_fde(struct sframe_section *sec, u32 i, u64 pos,
					    u64 *total_fres)
{
	struct sframe_fde *fde = &sec->fdes[i];
	const u8 *f = sec->data + pos;
	bool swap = sec->swap;
	u64 raw_fre_off, fre_end;
	u8 info, info2 = 0;
	const char *why;
	s64 start_off;

	if (sec->version == SFRAME_VERSION_3) {
		const u8 *attr;

		start_off = (s64)rd64(f, swap);
		fde->size = rd32(f + 8, swap);
		fde->fre_off = rd32(f + 12, swap);
		raw_fre_off = fde->fre_off;
		if ((u64)fde->fre_off + SFRAME_V3_ATTR_SIZE > sec->fre_len)
			return "FDE attributes beyond the FRE sub-section";
		attr = sec->fres + fde->fre_off;
		fde->nr_fres = rd16(attr, swap);
		info = attr[2];
		info2 = attr[3];
		fde->rep_size = attr[4];
		fde->fre_off += SFRAME_V3_ATTR_SIZE;
		fde->signal = info >> 7;
		fde->fde_type = info2 & 0x1f;
		if (fde->fde_type > SFRAME_FDE_TYPE_FLEX)
			return "unknown FDE type";
		if ((info & 0x40) || (info2 & 0xe0))
			return "FDE reserved bits set";
	} else {
		start_off = (s32)rd32(f, swap);
		fde->size = rd32(f + 4, swap);
		fde->fre_off = rd32(f + 8, swap);
		raw_fre_off = fde->fre_off;
		fde->nr_fres = rd32(f + 12, swap);
		info = f[16];
		/*
		 * v1 FDEs have no block size: binutils 2.40 only emits PCMASK
		 * FDEs for 16-byte x86 PLT entries.
		 */
		fde->rep_size = sec->version == SFRAME_VERSION_1 ? 16 : f[17];
		if ((info & 0xc0) ||
		    (sec->version == SFRAME_VERSION_2 && (f[18] || f[19])))
			return "FDE reserved bits set";
	}
	fde->fre_type = info & 0xf;
	fde->pc_type = (info >> 4) & 1;
	fde->pauth_key = (info >> 5) & 1;
	if (fde->fre_type > SFRAME_FRE_TYPE_ADDR4)
		return "unknown FRE type";
	if (fde->pc_type == SFRAME_PC_TYPE_MASK && !fde->rep_size)
		return "PCMASK FDE with no block size";
	if (fde->pauth_key && !sec->abi_row->pauth)
		return "PAuth key on an ABI without PAuth";

	/*
	 * Start: relative to the start field itself with PCREL (v3 always
	 * has it), else to the section start.
	 */
	if (sec->flags & SFRAME_F_FDE_FUNC_START_PCREL)
		start_off += pos;
	fde->start = sec->addr + start_off;
	if ((start_off < 0 && fde->start > sec->addr) ||
	    (start_off > 0 && fde->start < sec->addr))
		return "FDE start address wraps";
	if (fde->start + fde->size < fde->start)
		return "FDE end address wraps";
	if (i && (sec->flags & SFRAME_F_FDE_SORTED) &&
	    fde->start < sec->fdes[i - 1].start)
		return "FDEs not sorted";
	/* Two rows for one PC: which one holds is anybody's guess. */
	if (i && (sec->flags & SFRAME_F_FDE_SORTED) && fde->size &&
	    sec->fdes[i - 1].start + sec->fdes[i - 1].size > fde->start)
		return "FDEs overlap";

	*total_fres += fde->nr_fres;
	if (*total_fres > sec->nr_fres)
		return "FDEs use more FREs than the header counts";
	why = sframe_section__check_fres(sec, fde, &fre_end);
	if (why)
		return why;
	fde->fre_start = raw_fre_off;
	fde->fre_end = fre_end;
	return NULL;
}

/*
 * Validation in stages, each relying on the one before: the header
 * (sframe_section__check_header()), each FDE and its FREs (sframe_section__read_fde()),
 * then the FREs of all FDEs together (sframe_section__check_spans()).
 */
int sframe_section__decode(struct sframe_section *sec, const void *data, size_t size,
			   u64 addr)
{
	struct sframe_header h;
	u64 fde_size, total_fres = 0;
	const u8 *d = data;
	const char *why;
	u16 magic;

	memset(sec, 0, sizeof(*sec));
	sec->data = d;
	sec->size = size;
	sec->addr = addr;

	if (size < SFRAME_HDR_SIZE)
		return sframe_section__fail(sec, "section smaller than a header");
	magic = rd16(d, false);
	if (magic == bswap_16(SFRAME_MAGIC))
		sec->swap = true;
	else if (magic != SFRAME_MAGIC)
		return sframe_section__fail(sec, "bad magic");
	sframe_section__read_header(d, sec->swap, &h);
	sec->version = h.version;
	sec->flags = h.flags;
	sec->abi = h.abi;
	sec->fixed_fp = h.fixed_fp;
	sec->fixed_ra = h.fixed_ra;
	why = sframe_section__check_header(sec, &h, &fde_size);
	if (why)
		return sframe_section__fail(sec, why);
	sec->abi_row = sframe_abi__find(h.abi);

	sec->fres = d + SFRAME_HDR_SIZE + h.fre_off;
	sec->fre_len = h.fre_len;
	sec->nr_fdes = h.nr_fdes;
	sec->nr_fres = h.nr_fres;
	if (!h.nr_fdes)
		return 0;

	sec->fdes = calloc(h.nr_fdes, sizeof(*sec->fdes));
	if (!sec->fdes) {
		sec->err = "out of memory";
		return -ENOMEM;
	}
	for (u32 i = 0; i < h.nr_fdes; i++) {
		why = sframe_section__read_fde(sec, i, SFRAME_HDR_SIZE + h.fde_off +
				       i * fde_size, &total_fres);
		if (why)
			return sframe_section__fail(sec, why);
	}
	if (total_fres != h.nr_fres)
		return sframe_section__fail(sec, "FRE count does not match the FDEs");
	why = sframe_section__check_spans(sec);
	if (why)
		return sframe_section__fail(sec, why);

	/* Unlinked objects need not be sorted: the lookup needs it. */
	if (!(sec->flags & SFRAME_F_FDE_SORTED))
		qsort(sec->fdes, h.nr_fdes, sizeof(*sec->fdes), fde_cmp);
	return 0;
}

void sframe_section__exit(struct sframe_section *sec)
{
	zfree(&sec->fdes);
}

const struct sframe_fde *sframe_section__find_fde(const struct sframe_section *sec,
						  u64 pc)
{
	u32 lo = 0, hi = sec->nr_fdes;

	/* Last FDE starting at or before @pc. */
	while (lo < hi) {
		u32 mid = lo + (hi - lo) / 2;

		if (sec->fdes[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	/* Walk back over empty FDEs sharing a start, e.g. aliases. */
	while (lo > 0) {
		const struct sframe_fde *fde = &sec->fdes[lo - 1];

		if (pc - fde->start < fde->size)
			return fde;
		if (lo < 2 || sec->fdes[lo - 2].start != fde->start)
			break;
		lo--;
	}
	return NULL;
}

static void sframe_section__set_rule(struct sframe_rule *r, u8 kind, u8 reg, s32 off)
{
	r->kind = kind;
	r->reg = reg;
	r->offset = off;
}

/* Flexible FDE rule: control word then offset, see sframe.h of binutils. */
static void sframe_section__flex_rule(struct sframe_rule *r, u32 ctl, s32 off)
{
	u8 reg = ctl >> 3;
	bool deref = (ctl >> 1) & 1;

	if (!(ctl & 1))
		sframe_section__set_rule(r, SFRAME_RULE_CFA, 0, off);
	else
		sframe_section__set_rule(r, deref ? SFRAME_RULE_REG_DEREF : SFRAME_RULE_REG,
					 reg, off);
}

static u32 fre_uword(const u8 *w, unsigned int size, unsigned int i, bool swap)
{
	switch (size) {
	case 1:
		return w[i];
	case 2:
		return rd16(w + 2 * i, swap);
	default:
		return rd32(w + 4 * i, swap);
	}
}

/*
 * A default FDE's RA or FP word @v: a CFA offset, or in v2 where the ABI
 * says so an odd word naming the register that holds it.
 */
static void sframe_section__word_rule(const struct sframe_section *sec,
				      const struct sframe_abi *abi,
			      struct sframe_rule *r, s32 v)
{
	if (abi->v2_regs && sec->version == SFRAME_VERSION_2 && (v & 1))
		sframe_section__set_rule(r, SFRAME_RULE_REG, v >> 1, 0);
	else
		sframe_section__set_rule(r, SFRAME_RULE_CFA, 0, v);
}

/* The RA rule no data word gives: the header's fixed offset, or its register. */
static void sframe_section__default_ra(const struct sframe_section *sec,
				       const struct sframe_abi *abi,
			       struct sframe_fre *fre)
{
	if (sec->fixed_ra) {
		sframe_section__set_rule(&fre->ra, SFRAME_RULE_CFA, 0, sec->fixed_ra);
		fre->ra_fixed = true;
	} else {
		sframe_section__set_rule(&fre->ra, SFRAME_RULE_SAME, abi->ra, 0);
	}
}

static void sframe_section__interpret(const struct sframe_section *sec,
				      const struct sframe_fde *fde, u8 info,
			      const u8 *w, struct sframe_fre *fre)
{
	unsigned int n = fre_word_count(info), sz = fre_word_size(info);
	const struct sframe_abi *abi = sec->abi_row;
	bool sp_based = info & 1;
	unsigned int i;
	s32 cfa_off;

	fre->info = info;
	fre->cfi = false;
	fre->ra_mangled = info >> 7;
	fre->signal = fde->signal;
	fre->ra_fixed = false;
	fre->fp_fixed = false;
	sframe_section__set_rule(&fre->fp, SFRAME_RULE_SAME, 0, 0);

	/* No data words at all: the RA is undefined, the outermost frame. */
	if (!n) {
		sframe_section__set_rule(&fre->cfa, SFRAME_RULE_UNDEFINED, 0, 0);
		sframe_section__set_rule(&fre->ra, SFRAME_RULE_UNDEFINED, 0, 0);
		return;
	}

	if (fde->fde_type == SFRAME_FDE_TYPE_FLEX) {
		i = 2;
		/* Decoding checked that the scaled offset fits. */
		cfa_off = cfa_offset(abi, n > 1 ? fre_word(w, sz, 1, sec->swap) : 0);
		sframe_section__flex_rule(&fre->cfa, fre_uword(w, sz, 0, sec->swap), cfa_off);
		if (fre->cfa.kind == SFRAME_RULE_CFA)	/* CFA from itself? */
			fre->cfa.kind = SFRAME_RULE_UNDEFINED;
		/* RA: a zero control word is padding, the ABI default holds. */
		if (n > i && fre_uword(w, sz, i, sec->swap)) {
			s32 off = n > i + 1 ? fre_word(w, sz, i + 1, sec->swap) : 0;

			sframe_section__flex_rule(&fre->ra, fre_uword(w, sz, i, sec->swap), off);
			i += 2;
		} else {
			sframe_section__default_ra(sec, abi, fre);
			i += 1;
		}
		if (n > i + 1)
			sframe_section__flex_rule(&fre->fp, fre_uword(w, sz, i, sec->swap),
						  fre_word(w, sz, i + 1, sec->swap));
		return;
	}

	cfa_off = cfa_offset(abi, fre_word(w, sz, 0, sec->swap));
	sframe_section__set_rule(&fre->cfa, SFRAME_RULE_REG, sp_based ? abi->sp : abi->fp,
				 cfa_off);

	/* Then the RA's word, where the ABI has one, and the FP's. */
	i = 1;
	sframe_section__default_ra(sec, abi, fre);
	if (abi->ra_word) {
		s32 ra = n > i ? fre_word(w, sz, i, sec->swap) : 0;

		if (n > i && !(abi->ra_pad && !ra))
			sframe_section__word_rule(sec, abi, &fre->ra, ra);
		i++;
	}
	if (n > i) {
		sframe_section__word_rule(sec, abi, &fre->fp, fre_word(w, sz, i, sec->swap));
	} else if (sec->fixed_fp) {
		sframe_section__set_rule(&fre->fp, SFRAME_RULE_CFA, 0, sec->fixed_fp);
		fre->fp_fixed = true;
	}
}

/*
 * Walk the FREs of @fde: stop at @want (index) or at the last one starting at
 * or before @pc_off when @want is -1.  Decoding already checked the sizes.
 */
static int sframe_section__walk_fres(const struct sframe_section *sec,
				     const struct sframe_fde *fde, s64 want,
			     u64 pc_off, struct sframe_fre *fre)
{
	unsigned int asz = fre_addr_size(fde->fre_type);
	const u8 *p = sec->fres + fde->fre_off;
	const u8 *found = NULL;
	u64 start = 0, found_start = 0, found_end = fde->size;
	u32 i, found_idx = 0;

	for (i = 0; i < fde->nr_fres; i++) {
		u8 info;

		if (asz == 1)
			start = p[0];
		else if (asz == 2)
			start = rd16(p, sec->swap);
		else
			start = rd32(p, sec->swap);
		if (want >= 0 ? i > want : start > pc_off) {
			found_end = start;
			break;
		}
		found = p;
		found_start = start;
		found_idx = i;
		info = p[asz];
		p += asz + 1 + fre_word_count(info) * fre_word_size(info);
	}
	if (!found || (want >= 0 && found_idx != want))
		return -ENOENT;

	sframe_section__interpret(sec, fde, found[asz], found + asz + 1, fre);
	fre->fde_idx = fde - sec->fdes;
	fre->fre_idx = found_idx;
	if (fde->pc_type == SFRAME_PC_TYPE_MASK) {
		/* Offsets inside each repeated block, as readelf shows them. */
		fre->start = found_start;
		fre->end = found_end;
	} else {
		fre->start = fde->start + found_start;
		fre->end = fde->start + found_end;
	}
	return 0;
}

int sframe_section__find_fre(const struct sframe_section *sec, u64 pc,
			     struct sframe_fre *fre)
{
	const struct sframe_fde *fde = sframe_section__find_fde(sec, pc);
	u64 off;

	if (!fde || !fde->nr_fres)
		return -ENOENT;
	off = pc - fde->start;
	if (fde->pc_type == SFRAME_PC_TYPE_MASK)
		off %= fde->rep_size;
	return sframe_section__walk_fres(sec, fde, -1, off, fre);
}

int sframe_section__get_fre(const struct sframe_section *sec, u32 fde_idx,
			    u32 fre_idx, struct sframe_fre *fre)
{
	if (fde_idx >= sec->nr_fdes)
		return -ENOENT;
	return sframe_section__walk_fres(sec, &sec->fdes[fde_idx], fre_idx, 0, fre);
}

/* The first of @funcs starting after @addr. */
static size_t sframe_section__func_after(const struct sframe_func *funcs, size_t nr,
					 u64 addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (funcs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *sframe_section__check_functions(const struct sframe_section *sec,
					    const struct sframe_func *funcs, size_t nr,
				    u32 *fde_idx, size_t *func_idx)
{
	for (u32 i = 0; i < sec->nr_fdes; i++) {
		const struct sframe_fde *fde = &sec->fdes[i];
		size_t j;

		if (!fde->size || fde->signal)
			continue;
		*fde_idx = i;
		j = sframe_section__func_after(funcs, nr, fde->start);
		*func_idx = j;
		if (j < nr && funcs[j].start - fde->start < fde->size)
			return "FDE takes in the start of a function not its own";
		/* Only a sized symbol says where its function ends. */
		*func_idx = j - 1;
		if (j && funcs[j - 1].start != fde->start &&
		    fde->start - funcs[j - 1].start < funcs[j - 1].size)
			return "FDE starts inside a function";
	}
	return NULL;
}
