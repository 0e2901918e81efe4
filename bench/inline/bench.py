#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Inline frames at the cost of a lookup: perf script and perf report with
and without inlined frames, ours against perf-upstream, on real programs
built from Debian source packages (build-progs.sh):

  sqlite3  the 3.40 amalgamation (one CU of the whole library) + its shell
  zstd     the zstd command line tool (many CUs)

Each program runs a small workload under `perf record -g` (cpu-clock); the
recording is then read by each perf in each mode, one run each, CPU time
(user+sys of the child) and peak RSS taken from wait4(). Outputs of ours
and upstream must be byte-identical in every mode. A second file per
program, one sample at each of N instructions spread over .text
(tests/inline/inlinedata.py), checks equality on many more addresses.
The memory of the index is what `perf script -v` reports for each CU.

    bench/inline/bench.py [--out bench/inline/RESULTS.md]
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
import inlinedata  # noqa: E402

BIN = os.path.join(TOP, 'build', 'bin')
PERF = os.environ.get('PERF', os.path.join(BIN, 'perf'))
UPSTREAM = os.environ.get('PERF_UPSTREAM', os.path.join(BIN, 'perf-upstream'))
SRC = os.environ.get('INLINE_SRC_DIR', os.path.join(TOP, 'cache', 'inline-src'))


def measure(cmd):
    """(cpu seconds, max rss KiB, stdout) of cmd, counted with wait4()."""
    with tempfile.TemporaryFile() as f:
        pid = os.fork()
        if pid == 0:
            os.dup2(f.fileno(), 1)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 2)
            try:
                os.execv(cmd[0], cmd)
            finally:
                os._exit(127)
        _, status, ru = os.wait4(pid, 0)
        if status:
            raise SystemExit('%s exited %#x' % (' '.join(cmd), status))
        f.seek(0)
        return ru.ru_utime + ru.ru_stime, ru.ru_maxrss, f.read()


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


def bench_recording(name, data):
    rows = []
    for mode, args in MODES:
        res = {}
        for who, perf in (('ours', PERF), ('upstream', UPSTREAM)):
            res[who] = measure([perf] + args + ['-i', data])
        same = strip_header(res['ours'][2]) == strip_header(res['upstream'][2])
        rows.append((mode, res['ours'][0], res['upstream'][0], res['ours'][1],
                     res['upstream'][1], same, len(res['ours'][2])))
        print('  %-40s ours %6.2f s  upstream %6.2f s  same=%s' %
              (mode, res['ours'][0], res['upstream'][0], same), flush=True)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', default=os.path.join(HERE, 'RESULTS.md'))
    ap.add_argument('--addrs', type=int, default=3000,
                    help='instructions sampled for the address by address check')
    opts = ap.parse_args()
    subprocess.run([os.path.join(HERE, 'build-progs.sh')], check=True)
    sqlite = os.path.join(SRC, 'sqlite3', 'bin', 'sqlite3')
    zstd = os.path.join(SRC, 'zstd', 'bin', 'zstd')
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
        ('zstd (many CUs)', zstd, ['-q', '-f', '-12', inp, '-o', os.path.join(tmp, 'o.zst')],
         None),
    ]
    report = []
    for name, prog, args, stdin in progs:
        data = os.path.join(tmp, os.path.basename(prog) + '.data')
        record(prog, args, data, stdin)
        nsamples = subprocess.run([PERF, 'script', '-G', '-F', 'ip', '-i', data], check=True,
                                  stdout=subprocess.PIPE, text=True).stdout.count('\n')
        ips = subprocess.run([PERF, 'script', '-F', 'ip', '-i', data], check=True,
                             stdout=subprocess.PIPE, text=True).stdout.split()
        nsamples = (nsamples, len(set(ips)))
        print('%s: %s' % (name, data), flush=True)
        rows = bench_recording(name, data)
        mem, cus, dies, ranges = index_memory(data)
        # address by address: one sample at each of N instructions of .text
        insns = inlinedata.text_insns(prog)
        step = max(1, len(insns) // opts.addrs)
        synth = os.path.join(tmp, os.path.basename(prog) + '-addrs.data')
        inlinedata.write_samples(prog, insns[::step], synth, callers=1)
        print('%s: %d addresses' % (name, len(insns[::step])), flush=True)
        srows = bench_recording(name, synth)
        report.append((name, prog, nsamples, rows, mem, cus, dies, ranges,
                       len(insns[::step]), srows))
    write_results(opts.out, report)
    print('wrote', opts.out)


def ratio(a, b):
    return '%.2fx' % (a / b) if b > 0 else '-'


def write_results(path, report):
    out = ['# bench/inline: results', '',
           'Written by `bench/inline/bench.py` (%s, one run each, CPU seconds = user+sys'
           ' of the perf process, peak RSS in MiB). "same": ours and perf-upstream'
           ' print byte-identical output (perf report: less its `#` header).' %
           time.strftime('%Y-%m-%d'), '']
    for name, prog, nsamples, rows, mem, cus, dies, ranges, naddrs, srows in report:
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
