#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inline frames at the cost of a lookup: perf script and perf report with
and without inlined frames, ours against perf-upstream, on real programs
built from Debian source packages (build-progs.sh):

  sqlite3  the 3.40 amalgamation (one CU of the whole library) + its shell,
           two query mixes (sqlite-work.sql, sqlite-mix.sql)
  zstd     the zstd command line tool (many CUs)
  eigen    eigen-work.cpp against Eigen 3.4: C++, templates inlined deep

Each program runs a small workload under `perf record -g` (cpu-clock); the
recording is then read by each perf in each mode, one run each, CPU time
(user+sys of the child and of the processes it starts, addr2line's) and
peak RSS taken from wait4(); ours runs
--runs times in each mode, the modes alternating, and keeps the best
(the machine is shared: the best run is the one least disturbed);
upstream runs once. With --callgrind, ours' perf script with and without
inlined frames also runs under callgrind: instructions, which no other
job disturbs (but which miss cache and allocation costs). Outputs of ours
and upstream must be byte-identical in every mode. A second file per
program, one sample at each of N instructions spread over .text
(tests/inline/inlinedata.py), checks equality on many more addresses.
The memory of the index is what `perf script -v` reports for each CU.

    bench/inline/bench.py [--out bench/inline/RESULTS.md] [--runs 5] [--callgrind]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'inline'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))
import common  # noqa: E402
import cputime  # noqa: E402
import inlinedata  # noqa: E402

# the test suite's perfs; upstream's is installed apart from ours (two perfs
# in one directory would run each other's helpers)
PERF = common.PERF
UPSTREAM = common.PERF_UPSTREAM
SRC = os.environ.get('INLINE_SRC_DIR', os.path.join(TOP, 'cache', 'inline-src'))


def measure(cmd):
    """(cpu seconds, max rss KiB, stdout) of cmd, counted with wait4().
    The CPU seconds count the processes perf starts too: the addr2line
    processes of srcline's last fallback, which perf leaves to the system.
    Forked, not vforked: the peak RSS counts this process's memory as it
    is, not its peak so far (see cputime)."""
    r = cputime.run(cmd, capture=True, fork=True, descendants=True)
    return r.cpu, r.rss, r.out


def record(prog, args, data, stdin=None):
    cmd = [PERF, 'record', '-q', '-e', 'cpu-clock', '-g', '-o', data, '--', prog] + args
    with open(stdin) if stdin else open(os.devnull) as f:
        subprocess.run(cmd, stdin=f, stdout=subprocess.DEVNULL, check=True)


def index_memory(data):
    """{dso: bytes} of the index, from perf script -v."""
    r = subprocess.run([PERF, 'script', '-v', '-i', data], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, errors='replace', check=True)
    mem, cus, dies, ranges = {}, {}, {}, {}
    for m in re.finditer(r'libdw inline index: (\S+): CU 0x[0-9a-f]+: (\d+) DIEs, (\d+) ranges, '
                         r'(\d+) bytes, dso total (\d+) bytes', r.stderr):
        d = m.group(1)
        mem[d] = int(m.group(5))
        cus[d] = cus.get(d, 0) + 1
        dies[d] = dies.get(d, 0) + int(m.group(2))
        ranges[d] = ranges.get(d, 0) + int(m.group(3))
    return mem, cus, dies, ranges


MODES = [
    ('script', ['script']),
    ('script --no-inline', ['script', '--no-inline']),
    ('script -F ...,sym,srcline', ['script', '-F', 'comm,tid,ip,sym,symoff,dso,srcline']),
    ('script -F ...,sym,srcline --no-inline',
     ['script', '-F', 'comm,tid,ip,sym,symoff,dso,srcline', '--no-inline']),
    ('report', ['report', '--stdio']),
    ('report --no-inline', ['report', '--stdio', '--no-inline']),
]


def strip_header(b):
    return b'\n'.join(ln for ln in b.split(b'\n') if not ln.startswith(b'#'))


def callgrind_instructions(cmd):
    """Instructions of cmd under callgrind."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'cg.out')
        r = subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out] + cmd,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           errors='replace', check=True)
        m = re.search(r'Collected : (\d+)', r.stderr)
        return int(m.group(1)) if m else 0


def bench_recording(name, data, runs=1):
    # ours: the best CPU time of the runs; RSS and output of the last run
    cmds = [[PERF] + args + ['-i', data] for _, args in MODES]
    last = {}

    def ours_cpu(cmd):
        last[tuple(cmd)] = measure(cmd)
        return last[tuple(cmd)][0]

    best = cputime.best_cpu(cmds, runs, ours_cpu)
    ours = {mode: (t,) + last[tuple(cmd)][1:]
            for (mode, _), cmd, t in zip(MODES, cmds, best)}
    rows = []
    for mode, args in MODES:
        up = measure([UPSTREAM] + args + ['-i', data])
        o = ours[mode]
        same = strip_header(o[2]) == strip_header(up[2])
        rows.append((mode, o[0], up[0], o[1], up[1], same, len(o[2])))
        print('  %-40s ours %6.2f s  upstream %6.2f s  same=%s' %
              (mode, o[0], up[0], same), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=os.path.join(HERE, 'RESULTS.md'))
    ap.add_argument('--runs', type=int, default=5,
                    help='runs of ours in each mode, alternating; the best is kept')
    ap.add_argument('--callgrind', action='store_true',
                    help='also count the instructions of perf script under callgrind')
    ap.add_argument('--addrs', type=int, default=3000,
                    help='instructions sampled for the address by address check')
    opts = ap.parse_args()
    subprocess.run([os.path.join(HERE, 'build-progs.sh')], check=True)
    sqlite = os.path.join(SRC, 'sqlite3', 'bin', 'sqlite3')
    zstd = os.path.join(SRC, 'zstd', 'bin', 'zstd')
    eigen = os.path.join(SRC, 'eigen3', 'bin', 'eigen-work')
    tmp = tempfile.mkdtemp(prefix='bench-inline-')
    # zstd's input: text-like, compressible, the same every run
    inp = os.path.join(tmp, 'input')
    with open(inp, 'w') as f:
        for i in range(400000):
            f.write('line %d of the inline bench: %x %s\n' % (i, i * 2654435761 % 2**32,
                                                              'abcdefgh'[i % 8] * (i % 13)))
    progs = [
        ('sqlite3 (amalgamation, 1 big CU)', sqlite, [':memory:'],
         os.path.join(HERE, 'sqlite-work.sql')),
        ('sqlite3, another query mix (JSON, window functions, a trigger)', sqlite,
         [':memory:'], os.path.join(HERE, 'sqlite-mix.sql')),
        ('zstd (many CUs)', zstd, ['-q', '-f', '-12', inp, '-o', os.path.join(tmp, 'o.zst')],
         None),
        ('eigen-work (C++, Eigen templates inlined deep)', eigen, ['8'], None),
    ]
    report = []
    for name, prog, args, stdin in progs:
        data = os.path.join(tmp, '%d.data' % len(report))
        record(prog, args, data, stdin)
        nsamples = subprocess.run([PERF, 'script', '-G', '-F', 'ip', '-i', data], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout.count('\n')
        ips = subprocess.run([PERF, 'script', '-F', 'ip', '-i', data], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
        nsamples = (nsamples, len(set(ips)))
        print('%s: %s' % (name, data), flush=True)
        rows = bench_recording(name, data, opts.runs)
        insns = None
        if opts.callgrind:
            insns = (callgrind_instructions([PERF, 'script', '-i', data]),
                     callgrind_instructions([PERF, 'script', '--no-inline', '-i', data]))
        mem, cus, dies, ranges = index_memory(data)
        # address by address: one sample at each of N instructions of .text
        text = inlinedata.text_insns(prog)
        step = max(1, len(text) // opts.addrs)
        synth = os.path.join(tmp, '%d-addrs.data' % len(report))
        inlinedata.write_samples(prog, text[::step], synth, callers=1)
        print('%s: %d addresses' % (name, len(text[::step])), flush=True)
        srows = bench_recording(name, synth)
        report.append((name, prog, nsamples, rows, mem, cus, dies, ranges,
                       len(text[::step]), srows, insns, opts.runs))
    write_results(opts.out, report)
    print('wrote', opts.out)


def ratio(a, b):
    return '%.2fx' % (a / b) if b > 0 else '-'


def write_results(path, report):
    out = ['# bench/inline: results', '',
           'Written by `bench/inline/bench.py` (%s; CPU seconds = user+sys'
           ' of the perf process, ours the best of %d alternating runs, upstream one'
           ' run; peak RSS in MiB). "same": ours and perf-upstream'
           ' print byte-identical output (perf report: less its `#` header).' %
           (time.strftime('%Y-%m-%d'), report[0][11] if report else 1), '']
    for (name, prog, nsamples, rows, mem, cus, dies, ranges, naddrs, srows, insns,
         runs) in report:
        out.append('## %s' % name)
        out.append('')
        out.append('`perf record -e cpu-clock -g` of the workload: %d samples, %d distinct'
                   ' addresses in their callchains.' % nsamples)
        out.append('')
        by = {r[0]: r for r in rows}
        out.append('| mode | ours (s) | upstream (s) | ours vs upstream | ours RSS | upstream RSS | same |')
        out.append('|---|---:|---:|---:|---:|---:|---|')
        for mode, o, u, orss, urss, same, _ in rows:
            out.append('| %s | %.2f | %.2f | %s | %.0f | %.0f | %s |' %
                       (mode, o, u, ratio(o, u), orss / 1024, urss / 1024,
                        'yes' if same else '**NO**'))
        out.append('')
        for m in ('script', 'script -F ...,sym,srcline', 'report'):
            nm = m.replace('-F ...,sym,srcline', '-F ...,sym,srcline') + ' --no-inline'
            if m in by and nm in by:
                out.append('- `%s` with inlined frames against `--no-inline`: ours %s, upstream %s' %
                           (m, ratio(by[m][1], by[nm][1]), ratio(by[m][2], by[nm][2])))
        if insns:
            out.append('- instructions (callgrind), ours `perf script`: %.0fM with inlined frames,'
                       ' %.0fM with `--no-inline`: %s' %
                       (insns[0] / 1e6, insns[1] / 1e6, ratio(insns[0], insns[1])))
        out.append('')
        for d in sorted(mem):
            out.append('- index of `%s`: %d CUs, %d function DIEs, %d ranges, %.2f MiB' %
                       (d, cus[d], dies[d], ranges[d], mem[d] / 2**20))
        out.append('')
        out.append('One sample at each of %d instructions spread over `.text`:' % naddrs)
        out.append('')
        out.append('| mode | ours (s) | upstream (s) | same |')
        out.append('|---|---:|---:|---|')
        for mode, o, u, orss, urss, same, _ in srows:
            out.append('| %s | %.2f | %.2f | %s |' % (mode, o, u, 'yes' if same else '**NO**'))
        out.append('')
    with open(path, 'w') as f:
        f.write('\n'.join(out))


if __name__ == '__main__':
    main()
