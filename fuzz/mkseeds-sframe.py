#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Seed inputs for fuzz/sframe-decode.c: cut out of ELF files with .sframe,
and built by the target itself from tools/perf/tests/sframe-build.c.

    fuzz/mkseeds-sframe.py OUTDIR [NAME=ELF...]

Each seed is what the target reads: the section's address, a PC inside
`main` (or the first function symbol), an SP, all 8 bytes little-endian,
then the .sframe section's bytes.  The ELF files come from the corpus that
tests/lib/sframe_corpus.py builds (binutils 2.40, 2.44 and 2.47: SFrame v1, v2,
v3), so the seeds cover every version the decoder reads, and from its cross
corpus (AArch64 of both byte orders, s390x), for every ABI.

Then the target (FUZZ_BIN, default build/bin/fuzz-sframe-decode; make fuzz)
writes `built-abi<N>-v<V>`: the section perf test sframe reads, made by the
same builder (tools/perf/tests/sframe-build.c), in every version under
every row of the ABI table, so that a row added there is in the seeds as in the tests.
"""
import os
import struct
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
FUZZ_BIN = os.environ.get('FUZZ_BIN',
                          os.path.join(TOP, 'build', 'bin', 'fuzz-sframe-decode'))

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


def built_seeds(outdir):
    """The builder's seeds, written by the fuzz target (SFRAME_SEEDS)."""
    if not os.access(FUZZ_BIN, os.X_OK):
        raise SystemExit('%s: not built (make fuzz)' % FUZZ_BIN)
    env = dict(os.environ, SFRAME_SEEDS=outdir)
    subprocess.run([FUZZ_BIN], env=env, check=True)
    for name in sorted(os.listdir(outdir)):
        if name.startswith('built-'):
            print('%s: %d bytes' % (name, os.path.getsize(os.path.join(outdir, name))))


def main():
    if len(sys.argv) < 2:
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
    built_seeds(outdir)


if __name__ == '__main__':
    main()
