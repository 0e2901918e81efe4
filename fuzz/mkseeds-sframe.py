#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Cut seed inputs for fuzz/sframe-decode.c out of ELF files with .sframe.

    fuzz/mkseeds-sframe.py OUTDIR NAME=ELF [NAME=ELF...]

Each seed is what the target reads: the section's address, a PC inside
`main` (or the first function symbol), an SP, all 8 bytes little-endian,
then the .sframe section's bytes.  The ELF files come from the corpus that
tests/sframe/corpus.py builds (binutils 2.40, 2.44 and 2.47: SFrame v1, v2,
v3), so the seeds cover every version the decoder reads.
"""
import os
import struct
import subprocess
import sys
import tempfile

SP = 0x7ffc_0000_1000


def section_addr(elf):
    out = subprocess.run(['readelf', '-SW', elf], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    for line in out.splitlines():
        f = line.replace('[ ', '[').split()
        if len(f) > 3 and f[1] == '.sframe':
            return int(f[3], 16)
    raise SystemExit('%s: no .sframe' % elf)


def function_pc(elf):
    out = subprocess.run(['nm', '--defined-only', elf], stdout=subprocess.PIPE,
                         text=True, check=True).stdout
    funcs = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in 'Tt':
            funcs[f[2]] = int(f[0], 16)
    if not funcs:
        raise SystemExit('%s: no function symbols' % elf)
    return funcs.get('main', min(funcs.values())) + 4


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for arg in sys.argv[2:]:
        name, elf = arg.split('=', 1)
        with tempfile.NamedTemporaryFile() as t:
            subprocess.run(['objcopy', '-O', 'binary', '--only-section=.sframe',
                            elf, t.name], check=True)
            sec = t.read()
        hdr = struct.pack('<3Q', section_addr(elf), function_pc(elf), SP)
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(hdr + sec)
        print('%s: %d bytes' % (name, len(hdr) + len(sec)))


if __name__ == '__main__':
    main()
