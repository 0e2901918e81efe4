#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Benchmark: unwind --call-graph dwarf recordings of an SFrame workload
(the tests' corpus, v3, PIE) with perf script --unwind-style libdw, sframe
(hybrid) and sframe-only; same perf binary, same perf.data.  Two recordings,
one 4x longer, give the steady-state cost per sample with one-time work
(symbol tables, CFI and section loading) cancelled out.

The unwinding phase is isolated with callgrind: instructions executed
inside unwind__get_entries() (inclusive), which is everything the style
does per sample (libdw: module reporting, CFI lookup and evaluation;
SFrame: the lookups, the walk, libdw for the frames beyond .sframe) and
nothing of the rest of perf script.  Wall time of the whole perf script
run is shown beside it.  Writes RESULTS.md next to this file.

  bench/sframe/run.py [--ms CPU_MS] [--freq HZ]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))
import common   # noqa: E402
import sframe_corpus as corpus   # noqa: E402
import perf_script   # noqa: E402

STYLES = ('libdw', 'sframe', 'sframe-only')


# No inline expansion: it is symbolization, not unwinding, and dominates.
SCRIPT = [common.PERF, 'script', '--no-inline', '-F', 'tid,ip,sym,dso', '-i']


def script(data, style, out=subprocess.PIPE):
    return subprocess.run(SCRIPT + [data, '--unwind-style', style], stdout=out,
                          stderr=subprocess.DEVNULL, text=True)


def wall(data, style, runs=3):
    best = None
    for _ in range(runs):
        t = time.monotonic()
        script(data, style, out=subprocess.DEVNULL)
        t = time.monotonic() - t
        best = t if best is None else min(best, t)
    return best


def unwind_instructions(data, style, tmp):
    """Instructions in unwind__get_entries(), less those of the callback
    it hands each frame to (unwind_entry(): symbol and inline lookup for the
    callchain, the same work for every style)."""
    out = os.path.join(tmp, 'cg.%s' % style)
    subprocess.run(['valgrind', '--tool=callgrind', '--toggle-collect=unwind__get_entries',
                    '--callgrind-out-file=' + out] + SCRIPT + [data, '--unwind-style', style],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    r = subprocess.run(['callgrind_annotate', '--inclusive=yes', '--threshold=100', out],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    cost = {}
    for line in r.stdout.splitlines():
        m = re.match(r'^\s*([\d,]+)\s+\(.*\)\s+\S*:(\w+)\s', line)
        if m and m.group(2) not in cost:
            cost[m.group(2)] = int(m.group(1).replace(',', ''))
    total = cost['unwind__get_entries'] - cost.get('unwind_entry', 0)
    # libdw's glue names each frame (thread__find_symbol()) as it walks.
    syms = cost.get('thread__find_symbol', 0)
    # The walk alone: recovering return addresses, without the symbol
    # lookups done for the callchain (perf's libdw glue does them inside
    # the walk, ours after it; all of libdw's are taken off).
    if style == 'libdw':
        walk = cost['dwfl_getthread_frames'] - syms
    else:
        # The stacks SFrame hands to libdw count whole, lookups included:
        # their symbol lookups cannot be told from the style's own.
        walk = cost.get('sframe_walk__unwind', 0) + cost.get('libdw__get_entries', 0)
    return total, walk


def record(binary, ms, freq, data):
    # -D: from 20 ms on, past the dynamic loader's start-up, a handful of
    # samples whose stacks (in ld.so, without .sframe) the hybrid style
    # hands to libdw whole, at a cost that varies with their number.
    subprocess.run([common.PERF, 'record', '-q', '-D', '20', '-e', 'cpu-clock:u', '-F', str(freq),
                    '--call-graph', 'dwarf,16384', '-o', data, '--', binary,
                    str(ms)], check=True, stdout=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ms', type=int, default=1000,
                    help='workload CPU time of the short recording; the long one is 4x')
    ap.add_argument('--freq', type=int, default=1000)
    args = ap.parse_args()

    d = corpus.build()
    binary = os.path.join(d, 'v3', 'pie')
    tmp = tempfile.mkdtemp(prefix='sframe-bench-')
    short = os.path.join(tmp, 'short.data')
    data = os.path.join(tmp, 'perf.data')
    record(binary, args.ms, args.freq, short)
    record(binary, 4 * args.ms, args.freq, data)

    chains = {s: perf_script.unwound(script(data, s).stdout) for s in STYLES}
    n = len(chains['libdw'])
    n_short = len(perf_script.unwound(script(short, 'libdw').stdout))
    frames = {s: sum(len(c) for c in chains[s]) for s in STYLES}
    same = sum(a == b for a, b in zip(chains['libdw'], chains['sframe']))
    # SFrame beyond libdw: libdw stopped short (see tests/sframe/test_unwind.py).
    further = sum(len(a) < len(b) and b[:len(a)] == a
                  for a, b in zip(chains['libdw'], chains['sframe']))
    # Frames in the part of each chain .sframe covers: sframe-only's chains.
    covered_same = sum(o == d[:len(o)] or o[:-1] == d[:len(o) - 1]
                       for o, d in zip(chains['sframe-only'], chains['libdw']))

    rows = []
    for s in STYLES:
        whole = unwind_instructions(data, s, tmp)
        part = unwind_instructions(short, s, tmp)
        # Per sample in steady state: what the n - n_short more samples of
        # the long recording cost; one-time work (loading symbol tables,
        # opening a DSO's CFI, decompressing its sections) cancels out.
        marginal = tuple((w - p) / max(n - n_short, 1) for w, p in zip(whole, part))
        rows.append((s, whole, marginal, wall(data, s)))
    base = rows[0]

    lines = [
        '# SFrame unwinding benchmark',
        '',
        'Generated by `bench/sframe/run.py`: the corpus workload '
        '(`tests/sframe/src/corpus.c`, binutils 2.47 SFrame v3, PIE + shared '
        'library, libc without .sframe) recorded twice with `perf record -e '
        'cpu-clock:u -F %d -D 20 --call-graph dwarf,16384`, %d and %d samples, each '
        'unwound by the same `perf script` binary with every style.' %
        (args.freq, n_short, n),
        '',
        'Unwinding phase: instructions executed inside `unwind__get_entries()`, '
        'inclusive, counted by callgrind (`--toggle-collect=unwind__get_entries`), '
        'less those of the callback it hands frames to (`unwind_entry()`: adding '
        'the entry to the callchain, the same for every style).',
        '',
        'The unwinder names each frame for the callchain too (libdw\'s glue '
        'with `thread__find_symbol()` as it walks, SFrame with '
        '`map__find_symbol()` on the maps its walk found).',
        '',
        'Walk: return address recovery alone: for SFrame `sframe_walk__unwind()` '
        '(row lookups included) plus every `libdw__get_entries()` call it '
        'makes for the frames it hands over (whole, symbol lookups included); '
        'for libdw `dwfl_getthread_frames()` less the `thread__find_symbol()` '
        'calls under it.',
        '',
        'Steady state is the cost per sample of the %d samples the long '
        'recording has over the short one: one-time work (loading a DSO\'s '
        'symbol table, opening its CFI, decompressing its sections), which '
        'both styles do once per DSO, cancels out.  Whole run: the long '
        'recording, one-time work included.  Wall: whole `perf script '
        '--no-inline` run on the long recording, best of 3, not under valgrind.'
        % (n - n_short),
        '',
        '### Steady state, instructions per sample',
        '',
        '| style | unwinder | vs libdw | walk | vs libdw |',
        '|---|---:|---:|---:|---:|',
    ]
    for s, whole, m, w in rows:
        lines.append('| %s | %d | %.1fx | %d | %.1fx |' %
                     (s, m[0], base[2][0] / max(m[0], 1), m[1], base[2][1] / max(m[1], 1)))
    lines += [
        '',
        '### Whole run (%d samples), instructions' % n,
        '',
        '| style | frames | unwinder | vs libdw | walk | vs libdw | perf script wall |',
        '|---|---:|---:|---:|---:|---:|---:|',
    ]
    for s, whole, m, w in rows:
        lines.append('| %s | %d | %d | %.1fx | %d | %.1fx | %.2f s |' %
                     (s, frames[s], whole[0], base[1][0] / max(whole[0], 1),
                      whole[1], base[1][1] / max(whole[1], 1), w))
    lines += [
        '',
        'Chains: `sframe` equals `libdw` in %d of %d samples, and goes further '
        'than libdw, which stopped short, in %d (a PC in an epilogue after '
        '`pop %%rbp`: libdw cannot read the popped FP slot); `sframe-only` is a '
        'prefix of `libdw` (the part .sframe covers, up to the first frame in '
        'libc) in %d of %d.' % (same, n, further, covered_same, n),
        '',
        '`sframe` (hybrid) steps the frames beyond .sframe (here '
        '`__libc_start_call_main` and above, the signal trampoline, `_start`) '
        'with their .eh_frame rows read through libdw\'s CFI reader, and hands '
        'a stack to libdw only where a row is not SFrame-shaped; '
        '`sframe-only` stops at the first frame without .sframe.',
    ]
    with open(os.path.join(HERE, 'RESULTS.md'), 'w') as f:
        f.write('\n'.join(lines) + '\n')
    print('\n'.join(lines))
    for p in glob.glob(os.path.join(tmp, '*')):
        os.unlink(p)
    os.rmdir(tmp)


if __name__ == '__main__':
    main()
