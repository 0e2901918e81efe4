#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Cut seed inputs for fuzz/sframe-decode.c out of ELF files with .sframe.

    fuzz/mkseeds-sframe.py OUTDIR NAME=ELF [NAME=ELF...]

Each seed is what the target reads: the section's address, a PC inside
`main` (or the first function symbol), an SP, all 8 bytes little-endian,
then the .sframe section's bytes.  The ELF files come from the corpus that
tests/sframe/corpus.py builds (binutils 2.40, 2.44 and 2.47: SFrame v1, v2,
v3), so the seeds cover every version the decoder reads, and from its cross
corpus (AArch64 of both byte orders, s390x), for every ABI.
"""
import os
import struct
import sys

SP = 0x7ffc_0000_1000


def read_elf(path):
    """(.sframe bytes, its address, {function name: address}) of ELF64
    PATH, read here: the host's binutils know neither s390x nor big-endian
    AArch64."""
    with open(path, 'rb') as f:
        elf = f.read()
    e = '<' if elf[5] == 1 else '>'
    shoff, = struct.unpack_from(e + 'Q', elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(e + 'HHH', elf, 0x3a)
    # name, type, flags, addr, offset, size, link, info, align, entsize
    shdrs = [struct.unpack_from(e + 'IIQQQQIIQQ', elf, shoff + i * shentsize)
             for i in range(shnum)]

    def string(table, off):
        pos = shdrs[table][4] + off
        return elf[pos:elf.index(b'\0', pos)].decode()
    sec = addr = None
    funcs = {}
    for sh in shdrs:
        if string(shstrndx, sh[0]) == '.sframe':
            sec, addr = elf[sh[4]:sh[4] + sh[5]], sh[3]
        if sh[1] == 2:		# SHT_SYMTAB
            for off in range(sh[4], sh[4] + sh[5], sh[9]):
                name, info, _, shndx, value, _ = struct.unpack_from(
                    e + 'IBBHQQ', elf, off)
                if info & 0xf == 2 and shndx:	# defined STT_FUNC
                    funcs[string(sh[6], name)] = value
    if sec is None:
        raise SystemExit('%s: no .sframe' % path)
    if not funcs:
        raise SystemExit('%s: no function symbols' % path)
    return sec, addr, funcs


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for arg in sys.argv[2:]:
        name, elf = arg.split('=', 1)
        sec, addr, funcs = read_elf(elf)
        pc = funcs.get('main', min(funcs.values())) + 4
        hdr = struct.pack('<3Q', addr, pc, SP)
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(hdr + sec)
        print('%s: %d bytes' % (name, len(hdr) + len(sec)))


if __name__ == '__main__':
    main()
