#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Deferred callchain stitching cost: our perf vs perf-upstream vs the floor.

For each thread count, tests/lib/deferred_scenario.py generates ~200k samples with
deferred user callchains (the "deferred" file) and the same samples written
already merged (kernel frames, PERF_CONTEXT_USER, user frames; no records:
the "floor" file).  Each of perf script and perf report --stdio runs on both
files with both binaries, output to /dev/null; runs alternate between the
files and binaries and are repeated (perf script 3 times, perf report once
by default: it costs ~2.5x more and the bench should stay near 10
minutes).  CPU time (user+sys, os.wait4) is the best of the runs: other
jobs on a shared machine only ever add to it, so the least is the nearest
to the program's own cost; wall time and peak RSS are medians.  CPU time
is the number to read.  Beside it, the median (and middle half) of the
ratios of ours' deferred and floor runs of one round: the two runs of a
round see the same load, so their ratio drifts less than that of two
best runs taken rounds apart.

Then the memory-bound case: 10% of the deferred records missing at 1000
threads, peak RSS of perf report vs the floor file.

With --callgrind, instruction counts instead of times (valgrind's
callgrind; no hardware counters needed, and the same on a loaded machine):
each file is generated at N and N/4 samples, and the cost per sample is the
difference of the two runs' counts over the difference of their samples, so
that start-up (kallsyms, symbol loading) cancels out.  A 1% difference is
visible where CPU times on a shared machine move by 10%.  Beside them, the
CPU time of the same runs outside valgrind (best of --reps alternating
runs): instructions do not show allocation and cache misses, CPU time does.

    bench/deferred/bench.py [--samples N] [--threads 1,10,...] [--reps R]
                            [--out DIR] [--markdown FILE]
    bench/deferred/bench.py --callgrind [--samples 20000] [--threads ...]

Not a test: nothing here asserts timings.
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))
import common                   # noqa: E402
import cputime                  # noqa: E402
from deferred_scenario import scenario  # noqa: E402

# The generated stream: realistic mix of late samples, cross-CPU records
# and tasks preempted in the kernel (their record comes when they run
# again, up to 100 ms later), so waiting samples grow with threads.
SCENARIO = dict(late_fraction=0.1, cross_cpu_fraction=0.3, block_fraction=0.5,
                cross_cpu_delay=100_000_000, dup_fraction=0.0, seed=42)
GEN_VERSION = 2


def gen(out, threads, samples, missing=0.0):
    tag = 'v%d-t%d-s%d-m%g' % (GEN_VERSION, threads, samples, missing)
    d = os.path.join(out, 'deferred-%s.data' % tag)
    f = os.path.join(out, 'floor-%s.data' % tag)
    if not (os.path.exists(d) and os.path.exists(f)):
        # In a child process: the peak RSS os.wait4 reports for a perf run
        # includes the RSS of the process it was spawned from (exec keeps
        # the high-water mark), so this one must stay small.
        t0 = time.monotonic()
        subprocess.run([sys.executable, __file__, '--generate', d, f, str(threads),
                        str(samples), repr(missing)], check=True)
        print('  generated %s (%.0fs)' % (tag, time.monotonic() - t0), file=sys.stderr)
    return d, f


def generate(d, f, threads, samples, missing):
    sc = scenario(threads=threads, samples=samples, missing_fraction=missing,
                  **SCENARIO)
    sc.write(d + '.tmp')
    sc.write(f + '.tmp', merged=True)
    os.rename(d + '.tmp', d)
    os.rename(f + '.tmp', f)
    print('  %s' % sc.stats, file=sys.stderr)


TIMEOUT = 240


def measure(cmd):
    """Run @cmd, stdout to /dev/null: (wall s, user+sys s, peak RSS KiB).
    A run past TIMEOUT seconds of wall time is killed and flagged: its
    numbers are lower bounds."""
    r = cputime.run(cmd, timeout=TIMEOUT, check=False)
    if r.status and not r.timed_out:
        print('  warning: %s exited %d' % (' '.join(cmd), r.status), file=sys.stderr)
    if r.timed_out:
        print('  warning: %s killed after %ds' % (' '.join(cmd), TIMEOUT), file=sys.stderr)
        TIMED_OUT.add(tuple(cmd))
    return r.wall, r.cpu, r.rss


TIMED_OUT = set()


COMMANDS = {
    'script': lambda perf, path: [perf, 'script', '-i', path],
    'report': lambda perf, path: [perf, 'report', '--stdio', '-i', path],
}


def bench_threads(args, threads, cmds):
    d, f = gen(args.out, threads, args.samples)
    variants = [('ours', args.perf, 'deferred', d), ('ours', args.perf, 'floor', f),
                ('upstream', args.perf_upstream, 'deferred', d),
                ('upstream', args.perf_upstream, 'floor', f)]
    if not args.perf_upstream:
        variants = variants[:2]
    res = {}
    for cmd in cmds:
        reps = args.reps if cmd == 'script' else args.report_reps
        for rep in range(reps):
            # Each round in the other order, so that neither file always
            # runs right after the other.
            for who, perf, kind, path in variants[::-1 if rep % 2 else 1]:
                runs = res.setdefault((cmd, who, kind), [])
                # A variant already 4x slower than the floor needs no more
                # repetitions to show it: keep the bench short.
                if runs and runs[0][1] > 4 * res[(cmd, 'ours', 'floor')][0][1]:
                    continue
                runs.append(measure(COMMANDS[cmd](perf, path)))
    med = {}
    for k, runs in res.items():
        # Wall and RSS: medians; CPU: the best run (load only adds to it).
        med[k] = (statistics.median(r[0] for r in runs), min(r[1] for r in runs),
                  statistics.median(r[2] for r in runs))
    for cmd in cmds:
        # The same round's two runs of ours, next to each other: their
        # ratio cancels what drifts between rounds (other jobs, the host),
        # which best-of-N alone does not when the two best runs come from
        # rounds far apart.
        pairs = zip(res[(cmd, 'ours', 'deferred')], res[(cmd, 'ours', 'floor')])
        med[(cmd, 'paired')] = sorted(d[1] / f[1] for d, f in pairs)
    return med


def paired(ratios):
    """The median of per-round deferred/floor CPU ratios, with the range
    of the middle half: "+4.1% [-0.2%, +6.0%]"."""
    def q(p):
        return ratios[round(p * (len(ratios) - 1))]
    return '%+.1f%% [%+.1f%%, %+.1f%%]' % tuple(100.0 * (x - 1) for x in
                                              (statistics.median(ratios), q(0.25), q(0.75)))


def pct(a, b):
    return '%+.1f%%' % (100.0 * (a - b) / b) if b else 'n/a'


def instructions(cmd):
    """Instructions @cmd executes, counted by callgrind."""
    r = subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=/dev/null'] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in r.stderr.splitlines():
        if 'Collected :' in line:
            return int(line.split(':')[-1])
    raise RuntimeError('no callgrind count for %s: %s' % (' '.join(cmd), r.stderr[-500:]))


def bench_callgrind(args, out, cmds):
    """Instructions per sample, deferred vs floor, ours and upstream.  The
    stitching cost is the difference of the deferred and floor files'
    counts (same samples, same start-up), over the samples; the floor's
    own cost per sample comes from its file at N and N/4 samples, so that
    start-up cancels out."""
    small = args.samples // 4
    out('Instructions per sample (callgrind): floor = (I(floor, %d samples) - I(floor, %d)) '
        '/ %d; deferred = floor + (I(deferred) - I(floor)) / %d at %d samples' %
        (args.samples, small, args.samples - small, args.samples, args.samples))
    out()
    out('CPU s: user+sys of the same files at %d samples, outside valgrind, best of %d '
        'alternating runs' % (args.samples, args.reps))
    out()
    out('| threads | command | ours deferred | ours floor | ours vs floor | upstream deferred '
        '| upstream floor | upstream vs floor | ours deferred CPU s | ours floor CPU s '
        '| ours CPU vs floor |')
    out('|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|')
    for threads in [int(t) for t in args.threads.split(',') if t]:
        if small < threads:
            # Fewer samples than threads: the generator's files are not
            # alike at N and N/4, and the difference means nothing.
            out('| %d | (needs --samples >= %d) | | | | | | | | | |' % (threads, 4 * threads))
            continue
        big, little = gen(args.out, threads, args.samples), gen(args.out, threads, small)
        for cmd in cmds:
            per = {('upstream', 'floor'): 0, ('upstream', 'deferred'): 0}
            for who, perf in (('ours', args.perf), ('upstream', args.perf_upstream)):
                if not perf:
                    continue
                floor = instructions(COMMANDS[cmd](perf, big[1]))
                floor_small = instructions(COMMANDS[cmd](perf, little[1]))
                deferred = instructions(COMMANDS[cmd](perf, big[0]))
                per[(who, 'floor')] = (floor - floor_small) / (args.samples - small)
                per[(who, 'deferred')] = per[(who, 'floor')] + (deferred - floor) / args.samples
            cpu_d, cpu_f = cputime.best_cpu([COMMANDS[cmd](args.perf, big[0]),
                                             COMMANDS[cmd](args.perf, big[1])], args.reps,
                                            lambda c: measure(c)[1])
            out('| %d | %s | %.0f | %.0f | %s | %.0f | %.0f | %s | %.2f | %.2f | %s |' %
                (threads, cmd, per[('ours', 'deferred')], per[('ours', 'floor')],
                 pct(per[('ours', 'deferred')], per[('ours', 'floor')]),
                 per[('upstream', 'deferred')], per[('upstream', 'floor')],
                 pct(per[('upstream', 'deferred')], per[('upstream', 'floor')]),
                 cpu_d, cpu_f, pct(cpu_d, cpu_f)))
            sys.stdout.flush()


def main():
    if len(sys.argv) == 7 and sys.argv[1] == '--generate':
        d, f, threads, samples, missing = sys.argv[2:]
        return generate(d, f, int(threads), int(samples), float(missing))
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--samples', type=int, default=200000)
    ap.add_argument('--threads', default='1,10,100,1000,3000,10000')
    ap.add_argument('--reps', type=int, default=3, help='perf script repetitions')
    ap.add_argument('--report-reps', type=int, default=1,
                    help='perf report repetitions (it costs ~2.5x perf script)')
    ap.add_argument('--commands', default='script,report')
    ap.add_argument('--out', default=os.path.join(os.environ.get('TMPDIR', '/tmp'),
                                                  'perf-deferred-bench'))
    ap.add_argument('--perf', default=common.PERF)
    ap.add_argument('--perf-upstream', default=common.PERF_UPSTREAM,
                    help="pristine perf ('': not measured)")
    ap.add_argument('--markdown', help='also write the tables to this file')
    ap.add_argument('--no-memory', action='store_true')
    ap.add_argument('--callgrind', action='store_true',
                    help='count instructions per sample instead of timing')
    ap.add_argument('--timeout', type=int, default=TIMEOUT,
                    help='kill a run after this many seconds (wall)')
    args = ap.parse_args()
    globals()['TIMEOUT'] = args.timeout
    os.makedirs(args.out, exist_ok=True)
    cmds = args.commands.split(',')
    t_start = time.monotonic()

    lines = []

    def out(s=''):
        print(s)
        lines.append(s)

    out('Date: %s UTC; machine: %s, %s, %d CPUs online; load average at start %s' %
        (time.strftime('%Y-%m-%d %H:%M', time.gmtime()), platform.machine(),
         platform.release(), os.cpu_count(), '%.1f %.1f %.1f' % os.getloadavg()))
    out('Samples per file: %d; repetitions: perf script %d, perf report %d (CPU: best run; '
        'wall, RSS: medians); '
        'scenario: %s' % (args.samples, args.reps, args.report_reps, SCENARIO))
    out()
    if args.callgrind:
        bench_callgrind(args, out, cmds)
        args.threads = ''
        args.no_memory = True
    else:
        out('| threads | command | ours deferred CPU s | ours floor CPU s | ours vs floor '
            '| ours vs floor, paired rounds '
            '| upstream deferred CPU s | upstream floor CPU s | upstream vs floor '
            '| ours wall s | upstream wall s | ours / upstream RSS MiB |')
        out('|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|')
    for threads in [int(t) for t in args.threads.split(',') if t]:
        med = bench_threads(args, threads, cmds)
        for cmd in cmds:
            od, of = med[(cmd, 'ours', 'deferred')], med[(cmd, 'ours', 'floor')]
            ud = med.get((cmd, 'upstream', 'deferred'), (0, 0, 0))
            uf = med.get((cmd, 'upstream', 'floor'), (0, 0, 0))
            up = [c for c in TIMED_OUT if c[0] == args.perf_upstream and c[1] == cmd]
            mark = '>' if any('-t%d-' % threads in c[-1] for c in up) else ''
            out('| %d | %s | %.2f | %.2f | %s | %s | %s%.2f | %.2f | %s%s | %.2f | %s%.2f | '
                '%.0f / %.0f |' %
                (threads, cmd, od[1], of[1], pct(od[1], of[1]), paired(med[(cmd, 'paired')]),
                 mark, ud[1], uf[1],
                 mark, pct(ud[1], uf[1]), od[0], mark, ud[0], od[2] / 1024, ud[2] / 1024))
        sys.stdout.flush()

    if not args.no_memory:
        out()
        out('Memory: 1000 threads, 10%% of the deferred records missing, perf report '
            '--stdio peak RSS (median of %d)' % args.report_reps)
        out()
        out('| file | ours RSS MiB | upstream RSS MiB | ours CPU s | upstream CPU s |')
        out('|---|---:|---:|---:|---:|')
        d, f = gen(args.out, 1000, args.samples, missing=0.1)
        rows = {}
        for rep in range(args.report_reps):
            for kind, path in (('deferred, 10% missing', d), ('floor (no deferral)', f)):
                for who, perf in (('ours', args.perf), ('upstream', args.perf_upstream)):
                    rows.setdefault((kind, who), []).append(
                        measure(COMMANDS['report'](perf, path)))
        base = None
        for kind in ('deferred, 10% missing', 'floor (no deferral)'):
            o = [statistics.median(r[i] for r in rows[(kind, 'ours')]) for i in range(3)]
            u = [statistics.median(r[i] for r in rows[(kind, 'upstream')]) for i in range(3)]
            out('| %s | %.0f | %.0f | %.2f | %.2f |' % (kind, o[2] / 1024, u[2] / 1024,
                                                         o[1], u[1]))
            if base is None:
                base = o[2]
            else:
                out()
                out('ours deferred/floor RSS ratio: %.2fx' % (base / o[2]))
    out()
    out('Total bench time: %.0f s' % (time.monotonic() - t_start))
    if args.markdown:
        with open(args.markdown, 'w') as fh:
            fh.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
