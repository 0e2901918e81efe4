#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Damage copies of the real 7.2 recordings and count what perf keeps.

    tests/damaged/measure.py [--seed N] [--flips N]

For each recording and each kind of damage (damage.py), run perf script
(ours, then perf-upstream) and count the samples printed against those of
the intact file (for a cut file: against the samples still whole in it),
and the crashes (killed by a signal).  Prints one line per kind and the
totals; not a test (tests/damaged/test_damaged.py checks the exact
samples), a measurement for docs/robustness.md and issue 13.
"""
import argparse
import collections
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
import damage as d                      # noqa: E402
import common                           # noqa: E402
import perf_script                      # noqa: E402

RECORDINGS = [os.path.join(common.REAL, 'defer-st.data'), os.path.join(common.REAL, 'fp-st.data')] + \
    [os.path.join(common.FIXTURES, 'guest-7.2', n + '.data')
     for n in ('st-defer', 'mt-defer', 'two-defer', 'sys-defer', 'exit-defer', 'deep300-defer')]


def count(perf, path, orig=None):
    """(samples printed, exit status) of perf script on path; with orig
    (a Counter of the intact file's (tid, time)), those printed as the
    intact file has them."""
    r = subprocess.run([perf, 'script', '-i', path, '-F', 'tid,time'], text=True,
                       errors='replace', stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       timeout=300)
    if orig is None:
        return perf_script.count_samples(r.stdout, 'tid,time'), r.returncode
    got = collections.Counter((s.tid, s.time) for s in perf_script.samples(r.stdout, 'tid,time'))
    return sum((got & orig).values()), r.returncode


def whole_samples(f, upto):
    return len([e for e in d.whole_events_before(f, upto) if e[1] == d.SAMPLE])


def flip_bits(f, rng, events, nbits):
    raw = bytearray(f.raw)
    for off, _, size in events:
        for _ in range(nbits):
            b = off + 8 + rng.randrange(size - 8)     # not the header
            raw[b] ^= 1 << rng.randrange(8)
    return bytes(raw)


def mutations(f, rng, flips):
    """(kind, bytes, samples expected) for recording f."""
    n = len(f.samples())
    ss = f.samples()
    for frac in (0.5, 0.9):
        at = f.data_off + int(f.data_size * frac)
        yield 'cut %d%%' % (frac * 100), d.cut(f, at), whole_samples(f, at)
        yield 'cut %d%%, header size fixed' % (frac * 100), d.cut(f, at, True), \
            whole_samples(f, at)
        yield 'killed at %d%%' % (frac * 100), d.killed(f, at), whole_samples(f, at)
    yield 'killed', d.killed(f), n
    for keep in (8, 16):
        raw = d.inside_last_event(f, keep)
        yield 'cut inside last event (%d)' % keep, raw, whole_samples(f, len(raw))
    off, _, size = ss[-1]
    raw = d.cut(f, off + size - 8, fix_size=True)
    yield 'cut inside last sample', raw, whole_samples(f, len(raw))
    for nr in (200, 1 << 40, (1 << 61) - 1):
        yield 'nr %#x in 1 sample' % nr, d.bad_callchain_nr(f, [ss[n // 3]], nr), n - 1
    bad = ss[100::max(1, n // 40)][:37]
    yield 'nr 2^40 in %d samples' % len(bad), d.bad_callchain_nr(f, bad), n - len(bad)
    for name, o, fmt, val in (('size 0', 6, '<H', 0), ('size 12', 6, '<H', 12),
                              ('size 0xfff8', 6, '<H', 0xfff8), ('type 33', 0, '<I', 33),
                              ('type 999', 0, '<I', 999)):
        for pos in (0.25, 0.5, 0.75):
            ev = ss[int(n * pos)]
            yield 'header %s' % name, d.patch(f.raw, ev[0] + o, fmt, val), n - 1
    recs = [e for e in f.events if e[1] == 22]
    if recs:
        yield 'deferred record cut to 16', d.truncated_records(f, [recs[len(recs) // 2]]), n
    # The attrs against their samples: each sample_type bit flipped in
    # turn in each attr, the ids sections zeroed (issue 25).
    for i in range(len(d.attrs(f))):
        for bit in d.SAMPLE_TYPE_BITS:
            yield 'sample_type ^%s' % bit, d.sample_type_bit(f, i, bit), n
    if len(d.attrs(f)) > 1:
        yield 'ids of attr 0 zeroed', d.ids_zeroed(f, [0]), n
        yield 'ids of attr 0 flipped', d.ids_flipped(f, 0), n
        yield 'ids of every attr zeroed', d.ids_zeroed(f), n
    for i in range(flips):
        evs = rng.sample(ss, 5)
        yield 'bit flips in 5 samples', flip_bits(f, rng, evs, 4), n - 5
        others = [e for e in f.events if e[1] != d.SAMPLE and e[2] > 8]
        evs = rng.sample(others, min(3, len(others)))
        yield 'bit flips in 3 records', flip_bits(f, rng, evs, 2), n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--seed', type=int, default=13)
    ap.add_argument('--flips', type=int, default=3)
    ap.add_argument('--keep', help='keep the files where ours loses samples there')
    ap.add_argument('--only', help='only the kinds whose name has this')
    ap.add_argument('--exact', action='store_true',
                    help='count only the samples printed as the intact file has them (tid, time)')
    args = ap.parse_args()
    rng = random.Random(args.seed)
    perfs = [('ours', common.PERF), ('upstream', common.PERF_UPSTREAM)]
    kinds = {}
    with tempfile.TemporaryDirectory(prefix='measure-') as tmp:
        for rec in RECORDINGS:
            f = d.PerfFile(rec)
            orig = count(common.PERF, rec)[0]
            exact = None
            if args.exact:
                r = subprocess.run([common.PERF, 'script', '-i', rec, '-F', 'tid,time'], text=True,
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
                exact = collections.Counter((s.tid, s.time)
                                            for s in perf_script.samples(r.stdout, 'tid,time'))
            for kind, raw, expect in mutations(f, rng, args.flips):
                if args.only and args.only not in kind:
                    continue
                p = os.path.join(tmp, 'm.data')
                with open(p, 'wb') as o:
                    o.write(raw)
                k = kinds.setdefault(kind, {'files': 0, 'expect': 0, 'orig': 0})
                k['files'] += 1
                k['expect'] += expect
                k['orig'] += orig
                for name, perf in perfs:
                    got, rc = count(perf, p, exact)
                    k[name] = k.get(name, 0) + min(got, expect)
                    k[name + ' crash'] = k.get(name + ' crash', 0) + (rc < 0)
                    k[name + ' rc'] = k.get(name + ' rc', 0) + (rc != 0)
                    if args.keep and name == 'ours' and (got < expect or rc):
                        keep = os.path.join(args.keep, '%s-%s-%d.data' % (
                            os.path.basename(rec)[:-5], re.sub(r'\W+', '_', kind), k['files']))
                        os.makedirs(args.keep, exist_ok=True)
                        shutil.copy(p, keep)
                        print('%s: %d of %d, rc %d' % (keep, got, expect, rc))
    tot = {}
    print('%-32s %5s %9s %16s %16s %7s %7s' % ('damage', 'files', 'expected', 'ours', 'upstream',
                                              'crashes', 'rc!=0'))
    for kind, k in kinds.items():
        for key, v in k.items():
            tot[key] = tot.get(key, 0) + v
        print('%-32s %5d %9d %8d %6.1f%% %8d %6.1f%% %3d/%-3d %3d/%-3d' % (
            kind, k['files'], k['expect'], k['ours'], 100.0 * k['ours'] / k['expect'],
            k['upstream'], 100.0 * k['upstream'] / k['expect'],
            k['ours crash'], k['upstream crash'], k['ours rc'], k['upstream rc']))
    k = tot
    print('%-32s %5d %9d %8d %6.1f%% %8d %6.1f%% %3d/%-3d %3d/%-3d' % (
        'all', k['files'], k['expect'], k['ours'], 100.0 * k['ours'] / k['expect'],
        k['upstream'], 100.0 * k['upstream'] / k['expect'],
        k['ours crash'], k['upstream crash'], k['ours rc'], k['upstream rc']))
    print('of the samples of the intact files (%d): ours %.1f%%, upstream %.1f%%' % (
        k['orig'], 100.0 * k['ours'] / k['orig'], 100.0 * k['upstream'] / k['orig']))
    print('(samples counted up to the expected number: the samples of the intact file less '
          'those damaged or cut; crashes and rc!=0: ours/upstream)')


if __name__ == '__main__':
    main()
