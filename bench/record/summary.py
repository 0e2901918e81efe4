#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""summary.py OUTDIR: medians and spread of a matrix.sh run (run.sh matrix).

For each workload and mode over the rounds: perf record's own CPU time
(its shell's children user+sys minus the workload's), the workload's
wall and CPU time and its slowdown against the median of its runs
without perf, perf record's wakeups ("Woken up N times"), bytes written
per sample and deferred records.  "median [min-max]" for each.
"""
import os
import re
import statistics
import sys


def busybox_secs(text, key):
    # busybox time: "real\t0m 2.20s"
    m = re.search(r'^%s\s+(\d+)m\s*([\d.]+)s' % key, text, re.M)
    return int(m.group(1)) * 60 + float(m.group(2)) if m else None


def one(out, w, m, r, ticks, tck):
    n = os.path.join(out, '%s-%s-%s' % (w, m, r))
    err = open(n + '.err', errors='replace').read()
    run = {'wall': busybox_secs(err, 'real')}
    user, sys_ = busybox_secs(err, 'user'), busybox_secs(err, 'sys')
    run['cpu'] = (user or 0) + (sys_ or 0)
    if m == 'none':
        return run
    run['perf'] = ticks / tck - run['cpu']
    wk = re.search(r'Woken up (\d+) times', err)
    mb = re.search(r'wrote ([\d.]+) MB', err)
    run['wakeups'] = int(wk.group(1)) if wk else None
    stats = open(n + '.stats').read() if os.path.exists(n + '.stats') else ''
    ns = re.search(r'SAMPLE events:\s+(\d+)', stats)
    nd = re.search(r'CALLCHAIN_DEFERRED events:\s+(\d+)', stats)
    run['samples'] = int(ns.group(1)) if ns else 0
    run['deferred'] = int(nd.group(1)) if nd else 0
    if mb and run['samples']:
        run['bps'] = float(mb.group(1)) * 1024 * 1024 / run['samples']
    return run


def fmt(vals, f):
    vals = [v for v in vals if v is not None]
    if not vals:
        return '-'
    return '%s [%s-%s]' % (f % statistics.median(vals), f % min(vals), f % max(vals))


def main():
    out = sys.argv[1]
    runs = {}
    tck = 100
    order = []
    rounds = {}
    for line in open(os.path.join(out, 'results.txt')):
        f = line.split()
        if f[0] == 'CLK_TCK':
            tck = int(f[1])
            continue
        if f[0] == 'ROUNDS':
            rounds[f[1]] = int(f[2])
            continue
        w, m, r = f[0], f[1], f[2]
        ticks = int(f[4]) + int(f[5])
        if (w, m) not in runs:
            order.append((w, m))
        runs.setdefault((w, m), []).append(one(out, w, m, r, ticks, tck))
    print('| workload | mode | runs | perf record CPU s | workload wall s | slowdown | '
          'workload CPU s | wakeups | B/sample | samples | deferred records |')
    print('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for w in sorted({k[0] for k in order}, key=lambda x: (x[0], int(x[1:]))):
        base = statistics.median(x['wall'] for x in runs.get((w, 'none'), [{'wall': 0}]))
        for m in ('none', 'fp', 'fp512', 'defer', 'defer0', 'dwarf'):
            rs = runs.get((w, m))
            if not rs:
                continue
            slow = [x['wall'] / base - 1 for x in rs] if base else []
            print('| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |' % (
                w, m, len(rs),
                fmt([x.get('perf') for x in rs], '%.2f'),
                fmt([x['wall'] for x in rs], '%.2f'),
                fmt([s * 100 for s in slow], '%+.1f%%') if m != 'none' else '-',
                fmt([x['cpu'] for x in rs], '%.2f'),
                fmt([x.get('wakeups') for x in rs], '%d'),
                fmt([x.get('bps') for x in rs], '%.0f'),
                fmt([x['samples'] for x in rs], '%d') if m != 'none' else '-',
                fmt([x.get('deferred') for x in rs], '%d')))


    if rounds:
        print()
        print('Rounds of work a run: %s.' % ', '.join(
            '%s %d' % (w, rounds[w]) for w in sorted(rounds, key=lambda x: (x[0], int(x[1:])))))


if __name__ == '__main__':
    main()
