// SPDX-License-Identifier: GPL-2.0
/*
 * Writing SFrame sections from a model: see sframe-build.h.
 */
#include <errno.h>
#include <string.h>
#include <gelf.h>
#include <linux/kernel.h>

#include "sframe.h"
#include "sframe-build.h"

struct sframe_writer {
	u8	*buf;
	size_t	size;
	bool	be;
	bool	full;	/* something did not fit */
};

static void put(struct sframe_writer *w, size_t off, u64 v, unsigned int n)
{
	if (off > w->size || w->size - off < n) {
		w->full = true;
		return;
	}
	for (unsigned int i = 0; i < n; i++)
		w->buf[off + i] = v >> (w->be ? (n - 1 - i) * 8 : i * 8);
}

/* Smallest SFRAME_FRE_TYPE_ADDR* that holds every row's start. */
static u8 fre_type(const struct sframe_build_fde *fde)
{
	u32 max = 0;

	for (u32 i = 0; i < fde->nr_fres; i++)
		max = max > fde->fres[i].start ? max : fde->fres[i].start;
	return max <= 0xff ? SFRAME_FRE_TYPE_ADDR1 :
	       max <= 0xffff ? SFRAME_FRE_TYPE_ADDR2 : SFRAME_FRE_TYPE_ADDR4;
}

/* The data words of @f under @abi, into @w; returns how many. */
static unsigned int fre_words(const struct sframe_abi *abi,
			      const struct sframe_build_fre *f, s32 *w)
{
	unsigned int n = 0;

	if (f->outermost)
		return 0;
	w[n++] = (f->cfa - abi->cfa_bias) / abi->cfa_scale;
	if (abi->ra_word && (f->ra_saved || f->fp_saved))
		w[n++] = f->ra_saved ? f->ra : 0;
	if (f->fp_saved)
		w[n++] = f->fp;
	return n;
}

/* Write @fde's rows at @off; returns the offset after them. */
static size_t put_fres(struct sframe_writer *wr, const struct sframe_abi *abi,
		       const struct sframe_build_fde *fde, size_t off)
{
	unsigned int asz = 1U << fre_type(fde);

	for (u32 i = 0; i < fde->nr_fres; i++) {
		const struct sframe_build_fre *f = &fde->fres[i];
		unsigned int n, j, wsz = 1, wcode = 0;
		s32 w[3];

		n = fre_words(abi, f, w);
		for (j = 0; j < n; j++) {
			if (w[j] != (s8)w[j] && wsz < 2) {
				wsz = 2;
				wcode = 1;
			}
			if (w[j] != (s16)w[j]) {
				wsz = 4;
				wcode = 2;
			}
		}
		put(wr, off, f->start, asz);
		off += asz;
		put(wr, off++, (f->mangled ? 0x80 : 0) | wcode << 5 | n << 1 |
		    !f->fp_based, 1);
		for (j = 0; j < n; j++, off += wsz)
			put(wr, off, (u32)w[j], wsz);
	}
	return off;
}

long sframe_build__section(const struct sframe_build *b, u8 *buf, size_t size)
{
	const struct sframe_abi *abi = sframe_abi__find(b->abi);
	struct sframe_writer wr = { .buf = buf, .size = size };
	size_t fde_size, fres, off = 0;
	u32 nr_fres = 0;

	if (!abi)
		return -EINVAL;
	wr.be = abi->big_endian;
	fde_size = b->version == SFRAME_VERSION_1 ? SFRAME_V1_FDE_SIZE :
		   b->version == SFRAME_VERSION_2 ? SFRAME_V2_FDE_SIZE :
		   SFRAME_V3_FDE_SIZE;
	fres = SFRAME_HDR_SIZE + b->nr_fdes * fde_size;
	memset(buf, 0, min(size, fres));

	for (u32 i = 0; i < b->nr_fdes; i++) {
		const struct sframe_build_fde *m = &b->fdes[i];
		size_t pos = SFRAME_HDR_SIZE + i * fde_size;
		s64 start = m->start - b->addr - (b->pcrel ? pos : 0);
		u8 info = (m->rep_size ? SFRAME_PC_TYPE_MASK << 4 : 0) | fre_type(m);

		if (b->version == SFRAME_VERSION_3) {
			put(&wr, pos, start, 8);
			put(&wr, pos + 8, m->size, 4);
			put(&wr, pos + 12, off, 4);
			put(&wr, fres + off, m->nr_fres, 2);
			put(&wr, fres + off + 2, info | (m->signal ? 0x80 : 0), 1);
			put(&wr, fres + off + 3, SFRAME_FDE_TYPE_DEFAULT, 1);
			put(&wr, fres + off + 4, m->rep_size, 1);
			off += SFRAME_V3_ATTR_SIZE;
		} else {
			put(&wr, pos, start, 4);
			put(&wr, pos + 4, m->size, 4);
			put(&wr, pos + 8, off, 4);
			put(&wr, pos + 12, m->nr_fres, 4);
			put(&wr, pos + 16, info, 1);
			if (b->version == SFRAME_VERSION_2)
				put(&wr, pos + 17, m->rep_size, 1);
		}
		off = put_fres(&wr, abi, m, fres + off) - fres;
		nr_fres += m->nr_fres;
	}
	put(&wr, 0, SFRAME_MAGIC, 2);
	put(&wr, SFRAME_HDR_VERSION, b->version, 1);
	put(&wr, SFRAME_HDR_FLAGS, SFRAME_F_FDE_SORTED |
	    (b->pcrel ? SFRAME_F_FDE_FUNC_START_PCREL : 0), 1);
	put(&wr, SFRAME_HDR_ABI, b->abi, 1);
	put(&wr, SFRAME_HDR_FIXED_FP, 0, 1);
	put(&wr, SFRAME_HDR_FIXED_RA, (u8)abi->fixed_ra, 1);
	put(&wr, SFRAME_HDR_AUXHDR_LEN, 0, 1);
	put(&wr, SFRAME_HDR_NR_FDES, b->nr_fdes, 4);
	put(&wr, SFRAME_HDR_NR_FRES, nr_fres, 4);
	put(&wr, SFRAME_HDR_FRE_LEN, off, 4);
	put(&wr, SFRAME_HDR_FDE_OFF, 0, 4);
	put(&wr, SFRAME_HDR_FRE_OFF, b->nr_fdes * fde_size, 4);
	return wr.full ? -E2BIG : (long)(fres + off);
}

static const struct sframe_build_fre sample_f0[] = {
	{ .start = 0x00, .cfa = 8 },
	{ .start = 0x04, .cfa = 16, .ra_saved = true, .ra = -8,
	  .fp_saved = true, .fp = -16 },
	{ .start = 0x10, .fp_based = true, .cfa = 16, .ra_saved = true, .ra = -8,
	  .fp_saved = true, .fp = -16 },
	/* after pop %rbp: the FP's slot is below the SP */
	{ .start = 0x1e, .cfa = 8, .ra_saved = true, .ra = -8,
	  .fp_saved = true, .fp = -16 },
};

static const struct sframe_build_fre sample_plt[] = {
	{ .start = 0x00, .cfa = 8 },
	{ .start = 0x0b, .cfa = 16 },
};

static const struct sframe_build_fre sample_outermost[] = {
	{ .start = 0x00, .outermost = true },
};

static const struct sframe_build_fde sample_fdes[] = {
	{ 0x1000, 0x20, 0, false, ARRAY_SIZE(sample_f0), sample_f0 },
	{ 0x1100, 0x40, 16, false, ARRAY_SIZE(sample_plt), sample_plt },
	{ 0x1200, 0x10, 0, false, ARRAY_SIZE(sample_outermost), sample_outermost },
};

void sframe_build__sample(struct sframe_build *b, u8 version, u8 abi,
			  bool pcrel, u64 addr)
{
	*b = (struct sframe_build){
		.version = version, .abi = abi, .pcrel = pcrel, .addr = addr,
		.nr_fdes = ARRAY_SIZE(sample_fdes), .fdes = sample_fdes,
	};
}

int sframe_build__write_elf(int fd, u16 e_machine, u64 addr, const u8 *sec, size_t size)
{
	static const char strtab[] = "\0.sframe\0.shstrtab";
	Elf_Scn *scn, *str_scn;
	Elf64_Ehdr *eh;
	Elf64_Phdr *ph;
	Elf64_Shdr *sh;
	Elf_Data *d;
	Elf *elf;
	int ret = -1;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!elf)
		return -1;
	eh = elf64_newehdr(elf);
	ph = elf64_newphdr(elf, 1);
	if (!eh || !ph)
		goto out;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = e_machine;
	eh->e_version = EV_CURRENT;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_filesz = 0x10000;
	ph->p_memsz = 0x10000;
	ph->p_align = 0x1000;

	scn = elf_newscn(elf);
	d = scn ? elf_newdata(scn) : NULL;
	sh = scn ? elf64_getshdr(scn) : NULL;
	if (!d || !sh)
		goto out;
	d->d_buf = (void *)sec;
	d->d_size = size;
	d->d_type = ELF_T_BYTE;
	d->d_align = 8;
	sh->sh_name = 1;
	sh->sh_type = SHT_PROGBITS;
	sh->sh_flags = SHF_ALLOC;
	sh->sh_addr = addr;

	str_scn = elf_newscn(elf);
	d = str_scn ? elf_newdata(str_scn) : NULL;
	sh = str_scn ? elf64_getshdr(str_scn) : NULL;
	if (!d || !sh)
		goto out;
	d->d_buf = (void *)strtab;
	d->d_size = sizeof(strtab);
	d->d_type = ELF_T_BYTE;
	d->d_align = 1;
	sh->sh_name = 9;
	sh->sh_type = SHT_STRTAB;
	eh->e_shstrndx = elf_ndxscn(str_scn);
	if (elf_update(elf, ELF_C_WRITE) > 0)
		ret = 0;
out:
	elf_end(elf);
	return ret;
}
