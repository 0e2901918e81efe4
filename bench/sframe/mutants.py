#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Mutated .sframe sections against perf's SFrame unwinder.

Records the SFrame corpus's pie (v2 and v3) once with --call-graph dwarf,
then for each mutant (one byte of the header, of the FDEs of the functions
the samples run through, or of their FREs, changed) puts the mutated
section back into the binary at its recorded path (same build ID) and
unwinds with --unwind-style sframe-only.  Each mutant is:

  rejected         perf warned "invalid .sframe" and did not use it
  same             accepted, every chain as with the original section
  differs          accepted, some chain differs, no warning

A mutant of an FRE's data words (CFA, FP or RA offsets) that differs is
unwound as its bytes say; any other one that differs is a section that
lies: its header or FDEs say something the decoder should not have
believed.  Usage: bench/sframe/mutants.py [PERF] (default build/bin/perf).
"""
import collections
import os
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))
import common  # noqa: E402
import sframe_corpus as corpus  # noqa: E402
import perf_script  # noqa: E402

HDR = 28


def rd(b, off, n):
    return int.from_bytes(b[off:off + n], 'little', signed=False)


def layout(sec):
    """(version, [(fde offset, fde size, fre start, fre end)])."""
    ver = sec[2]
    fde_size = {1: 17, 2: 20, 3: 16}[ver]
    nfdes, fre_len, fdeoff, freoff = rd(sec, 8, 4), rd(sec, 16, 4), \
        rd(sec, 20, 4), rd(sec, 24, 4)
    fres = HDR + freoff
    out = []
    offs = []
    for i in range(nfdes):
        pos = HDR + fdeoff + i * fde_size
        offs.append((pos, rd(sec, pos + (12 if ver == 3 else 8), 4)))
    ends = sorted(o for _, o in offs) + [fre_len]
    for pos, o in offs:
        nxt = min(e for e in ends if e > o) if any(e > o for e in ends) else fre_len
        out.append((pos, fde_size, fres + o, fres + nxt))
    return ver, out


def fde_pc(sec, addr, pos, ver, pcrel):
    n = 8 if ver == 3 else 4
    start = int.from_bytes(sec[pos:pos + n], 'little', signed=True)
    return addr + start + (pos if pcrel else 0), rd(sec, pos + n, 4)


def mutants(sec, addr, hot):
    """[(kind, description, bytes)] for section @sec at @addr."""
    ver, fdes = layout(sec)
    pcrel = bool(sec[3] & 4) or ver == 3
    out = []

    def put(kind, what, off, val):
        if sec[off] == val:
            return
        m = bytearray(sec)
        m[off] = val
        out.append((kind, '%s byte %d %#x->%#x' % (what, off, sec[off], val), bytes(m)))
    for off in range(2, HDR):
        for val in (0, 0xff, sec[off] ^ 1, sec[off] ^ 0x80):
            put('header', 'header', off, val)
    for pos, size, fstart, fend in fdes:
        pc, fsize = fde_pc(sec, addr, pos, ver, pcrel)
        if not any(pc <= h < pc + fsize for h in hot):
            continue
        for off in range(pos, pos + size):
            for val in (sec[off] ^ 1, sec[off] ^ 0x80):
                put('fde', 'FDE', off, val)
        for off in range(fstart, fend):
            for val in (sec[off] ^ 1, sec[off] ^ 0x80):
                put('fre', 'FRE', off, val)
    return out


def main():
    perf = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else common.PERF)
    tmp = tempfile.mkdtemp(prefix='sframe-mut-')
    none = os.path.join(tmp, 'no-cache')
    total = collections.Counter()
    lies = []
    try:
        for v in (2, 3):
            src = os.path.join(corpus.build(), 'v%d' % v)
            d = os.path.join(tmp, 'v%d' % v)
            os.makedirs(d)
            for n in ('pie', 'libcorpus.so'):
                shutil.copy2(os.path.join(src, n), d)
            exe = os.path.join(d, 'pie')
            orig = exe + '.orig'
            shutil.copy2(exe, orig)
            data = os.path.join(d, 'perf.data')
            common.run([perf, '--buildid-dir', none, 'record', '-q', '-e',
                        'cpu-clock:u', '-F', '1000', '--call-graph',
                        'dwarf,16384', '-o', data, '--', exe, '200'])

            def script():
                r = common.run([perf, '--buildid-dir', none, 'script', '-i',
                                data, '-F', 'tid,ip,sym,dso',
                                '--unwind-style', 'sframe-only'])
                return perf_script.unwound(r.stdout), r.stderr
            want, _ = script()
            # The functions the samples run through, by their ELF address.
            r = common.run([perf, '--buildid-dir', none, 'script', '-i', data,
                            '-F', 'ip,sym,dso', '--unwind-style', 'sframe-only'])
            names = {f.sym for s in perf_script.samples(r.stdout, 'ip,sym,dso')
                     for f in s.frames if os.path.basename(f.dso or '') == 'pie'}
            r = common.run(['nm', orig])
            hot = {int(f[0], 16) for f in (line.split() for line in r.stdout.splitlines())
                   if len(f) == 3 and f[2] in names}
            secfile, addr = corpus.section(orig, tmp)
            with open(secfile, 'rb') as f:
                sec = f.read()
            muts = mutants(sec, addr, hot)
            for kind, what, m in muts:
                mfile = os.path.join(tmp, 'm.sframe')
                with open(mfile, 'wb') as f:
                    f.write(m)
                common.run(['objcopy', '--update-section', '.sframe=' + mfile,
                            orig, exe])
                got, err = script()
                if 'invalid .sframe' in err:
                    res = 'rejected'
                elif got == want:
                    res = 'same'
                else:
                    res = 'differs'
                    if kind != 'fre':
                        lies.append('v%d %s' % (v, what))
                total[(v, kind, res)] += 1
            shutil.copy2(orig, exe)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print('| version | bytes of | mutants | rejected | accepted, same | accepted, differ |')
    print('|---|---|---:|---:|---:|---:|')
    for v in (2, 3):
        for kind in ('header', 'fde', 'fre'):
            n = sum(total[(v, kind, r)] for r in ('rejected', 'same', 'differs'))
            print('| v%d | %s | %d | %d | %d | %d |' % (
                v, kind, n, total[(v, kind, 'rejected')],
                total[(v, kind, 'same')], total[(v, kind, 'differs')]))
    print('\nheader or FDE mutants accepted that unwind differently: %d' % len(lies))
    for line in lies:
        print('  ' + line)


if __name__ == '__main__':
    main()
