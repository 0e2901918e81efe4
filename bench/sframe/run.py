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
nothing of the rest of perf script.

The floor is what reading plain callchains costs: each recording with the
same callchains already in its samples (perf inject --convert-callchain,
which unwinds once and drops the stack copies), read by the same perf
script.  Whole perf script runs are measured in CPU time (user+sys from
wait4(), best of --runs, the styles and the floor alternating) beside their
instructions (callgrind, whole process): instructions miss the cost of
faulting in the stack copies and of cache misses, CPU time does.  Writes
RESULTS.md next to this file.

  bench/sframe/run.py [--ms CPU_MS] [--freq HZ] [--runs N]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))
import common   # noqa: E402
import cputime   # noqa: E402
import sframe_corpus as corpus   # noqa: E402
import perf_script   # noqa: E402

STYLES = ('libdw', 'sframe', 'sframe-only')


# No inline expansion: it is symbolization, not unwinding, and dominates.
SCRIPT = [common.PERF, 'script', '--no-inline', '-F', 'tid,ip,sym,dso', '-i']


def script(data, style, out=subprocess.PIPE):
    return subprocess.run(SCRIPT + [data, '--unwind-style', style], stdout=out,
                          stderr=subprocess.DEVNULL, text=True)


def whole_instructions(cmd, tmp):
    """Instructions of the whole process, counted by callgrind."""
    out = os.path.join(tmp, 'cg.whole')
    subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    with open(out) as f:
        for line in f:
            if line.startswith('summary:'):
                return int(line.split()[1])
    raise RuntimeError('no summary in %s' % out)


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


def script_floor(data):
    return subprocess.run(SCRIPT + [data + '.floor'], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)


def record(binary, ms, freq, data):
    # -D: from 20 ms on, past the dynamic loader's start-up, a handful of
    # samples whose stacks (in ld.so, without .sframe) the hybrid style
    # hands to libdw whole, at a cost that varies with their number.
    subprocess.run([common.PERF, 'record', '-q', '-D', '20', '-e', 'cpu-clock:u', '-F', str(freq),
                    '--call-graph', 'dwarf,16384', '-o', data, '--', binary,
                    str(ms)], check=True, stdout=subprocess.DEVNULL)
    # The floor: the same samples, their callchains already unwound.
    subprocess.run([common.PERF, 'inject', '--convert-callchain', '-i', data, '-o',
                    data + '.floor'], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ms', type=int, default=1000,
                    help='workload CPU time of the short recording; the long one is 4x')
    ap.add_argument('--freq', type=int, default=1000)
    ap.add_argument('--runs', type=int, default=7,
                    help='CPU time: best of this many alternating runs')
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
        rows.append((s, whole, marginal))
    base = rows[0]

    # Whole runs against the floor, long and short recordings: the steady
    # state per sample is their difference, as for the instructions.
    floor_out = [script_floor(data).stdout, script_floor(short).stdout]
    same_floor = [floor_out[0] == script(data, 'sframe').stdout,
                  floor_out[1] == script(short, 'sframe').stdout]
    # -G: the same runs with no callchain at all, what reading each file
    # and naming each sample's IP costs; the rest is the callchains'.
    cmds = [SCRIPT + [f + '.floor'] for f in (data, short)]
    for s in STYLES:
        cmds += [SCRIPT + [f, '--unwind-style', s] for f in (data, short)]
    cmds += [SCRIPT + [f + '.floor', '-G'] for f in (data, short)]
    cmds += [SCRIPT + [f, '-G'] for f in (data, short)]
    cpu = cputime.best_cpu(cmds, args.runs)
    insns = [whole_instructions(c, tmp) for c in cmds]
    whole_rows = []
    for i, name in enumerate(('floor',) + STYLES + ('floor, -G', 'dwarf, -G')):
        c_long, c_short = cpu[2 * i], cpu[2 * i + 1]
        i_long, i_short = insns[2 * i], insns[2 * i + 1]
        whole_rows.append((name, c_long, (c_long - c_short) / max(n - n_short, 1),
                           i_long, (i_long - i_short) / max(n - n_short, 1)))
    sizes = [os.path.getsize(f) for f in (data, data + '.floor')]

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
        'recording, one-time work included.' % (n - n_short),
        '',
        '### Steady state, instructions per sample',
        '',
        '| style | unwinder | vs libdw | walk | vs libdw |',
        '|---|---:|---:|---:|---:|',
    ]
    for s, whole, m in rows:
        lines.append('| %s | %d | %.1fx | %d | %.1fx |' %
                     (s, m[0], base[2][0] / max(m[0], 1), m[1], base[2][1] / max(m[1], 1)))
    lines += [
        '',
        '### Whole run (%d samples), instructions' % n,
        '',
        '| style | frames | unwinder | vs libdw | walk | vs libdw |',
        '|---|---:|---:|---:|---:|---:|',
    ]
    for s, whole, m in rows:
        lines.append('| %s | %d | %d | %.1fx | %d | %.1fx |' %
                     (s, frames[s], whole[0], base[1][0] / max(whole[0], 1),
                      whole[1], base[1][1] / max(whole[1], 1)))
    fl = whole_rows[0]
    lines += [
        '',
        '### Against the floor: whole `perf script` runs, CPU time and instructions',
        '',
        'The floor reads each recording after `perf inject --convert-callchain` '
        'wrote its samples with the callchains already in them (%.1f MiB of '
        'stack copies become %.2f MiB); `perf script` prints the same lines '
        'from it as with `sframe` (long recording: %s, short: %s).  CPU time: '
        'user+sys, best of %d runs, the five commands of each recording '
        'taking turns.  Per sample: the long run less the short one, over the '
        '%d samples between them.  Instructions: callgrind, whole process.  '
        '`-G` (no callchain): what reading each file and naming each '
        'sample\'s IP costs (each sample\'s 16 KiB stack copy mapped but not '
        'walked); a style costs its row less `dwarf, -G`, the floor its '
        'row less `floor, -G`.'
        % (sizes[0] / 2**20, sizes[1] / 2**20,
           'same' if same_floor[0] else 'DIFFERENT',
           'same' if same_floor[1] else 'DIFFERENT', args.runs, n - n_short),
        '',
        '| style | CPU s | vs floor | CPU us/sample | vs floor | instructions | vs floor '
        '| instructions/sample | vs floor |',
        '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ]
    for name, c, cm, i, im in whole_rows:
        lines.append('| %s | %.3f | %.2fx | %.1f | %.2fx | %d | %.2fx | %d | %.2fx |' %
                     (name, c, c / fl[1], cm * 1e6, cm / fl[2] if fl[2] > 0 else 0,
                      i, i / fl[3], im, im / fl[4]))
    by = {r[0]: r for r in whole_rows}
    own = lambda r, g: (r[2] - by[g][2]) * 1e6
    lines += [
        '',
        'The callchains\' own CPU time per sample (row less its `-G` row): '
        'floor %.1f us; %s.' % (own(fl, 'floor, -G'), '; '.join(
            '%s %.1f us' % (st, own(by[st], 'dwarf, -G')) for st in STYLES)),
    ]
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
    # The sections written by hand (## headings, after the generated
    # part) are kept.
    path = os.path.join(HERE, 'RESULTS.md')
    kept = ''
    if os.path.exists(path):
        old = open(path).read()
        at = re.search(r'^## ', old, re.M)
        kept = '\n' + old[at.start():] if at else ''
    with open(path, 'w') as f:
        f.write('\n'.join(lines) + '\n' + kept)
    print('\n'.join(lines))
    for p in glob.glob(os.path.join(tmp, '*')):
        os.unlink(p)
    os.rmdir(tmp)


if __name__ == '__main__':
    main()
