# SPDX-License-Identifier: GPL-2.0
"""Read perf.data files recorded with --call-graph fp,defer through perf
(script, report --stats, report -D) and check them against the known stacks
of tests/workloads/dwork.c."""
import os
import re
import subprocess

import common
from common import run

KERNEL_MIN = 0xffff800000000000
USER_DEFERRED = 0xfffffffffffffd80      # PERF_CONTEXT_USER_DEFERRED
LOST = '[user stack lost]'
# dwork functions that only run below the recursion (a sample whose
# innermost dwork frame is recurse itself was taken on the way down or up)
IN_RECURSION = {'work_loop', 'cheap_syscalls', 'long_read', 'user_spin',
                'raw_syscall3', 'now', 'migrate'}

_HEAD = re.compile(r'^(\S.*?)\s+(\d+)\s+(?:\[(\d+)\]\s+)?(\d+\.\d+):\s+(\S+):\s*$')
_FRAME = re.compile(r'^\s+([0-9a-f]+) (.*) \((.*)\)$')


class Sample:
    __slots__ = ('comm', 'tid', 'cpu', 'time', 'ns', 'event', 'frames')

    def __init__(self, comm, tid, cpu, time, event):
        self.comm, self.tid, self.cpu = comm, tid, cpu
        self.time, self.event = float(time), event
        self.ns = int(time.replace('.', ''))    # perf script --ns
        self.frames = []        # (addr, sym, dso), innermost first

    def user(self):
        return [f for f in self.frames if f[0] < KERNEL_MIN]

    def kernel(self):
        return [f for f in self.frames if f[0] >= KERNEL_MIN]

    def lost(self):
        return any(f[1] == LOST for f in self.frames)

    def has_user(self):
        """The user part is there: a user frame in a known DSO (not the
        '[user stack lost]' frame, nor a cookie shown as an address)."""
        return any(f[1] != LOST and f[2] != '[unknown]' for f in self.user())

    def in_recursion(self):
        return any(f[1] in IN_RECURSION and f[2].endswith('dwork')
                   for f in self.user())


def perf_env(buildid_dir):
    return ['--buildid-dir', buildid_dir] if buildid_dir else []


def script(perf, data, kallsyms=None, buildid_dir=None, cpu=False):
    """perf script of DATA, parsed: a list of Sample."""
    fields = 'comm,tid,' + ('cpu,' if cpu else '') + 'time,event,ip,sym,dso'
    cmd = [perf] + perf_env(buildid_dir) + ['script', '-i', data, '-F', fields,
                                            '--max-stack', '1024', '--ns']
    if kallsyms:
        cmd += ['--kallsyms', kallsyms]
    r = run(cmd)
    samples = []
    cur = None
    for line in r.stdout.splitlines():
        if not line.strip():
            continue
        m = _FRAME.match(line)
        if m and cur is not None and line[0] in ' \t':
            cur.frames.append((int(m.group(1), 16), m.group(2), m.group(3)))
            continue
        m = _HEAD.match(line)
        if not m:
            raise AssertionError('%s: unparsed perf script line: %r' % (data, line))
        cur = Sample(m.group(1), int(m.group(2)),
                     int(m.group(3)) if m.group(3) else None,
                     m.group(4), m.group(5))
        samples.append(cur)
    return samples


def stats(perf, data):
    """The 'Deferred callchains:' section of perf report --stats, as a dict."""
    return common.deferred_stats(run([perf, 'report', '--stats', '-i', data]).stdout)


_DSAMPLE = re.compile(r'^(\d+) 0x[0-9a-f]+ \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE\(.*?\): '
                      r'-?\d+/(-?\d+):')


def cookies(perf, data):
    """From perf report -D: the cookies samples carry after
    PERF_CONTEXT_USER_DEFERRED, the number of PERF_RECORD_CALLCHAIN_DEFERRED
    records, and {(time in ns, tid): cookie} of the samples."""
    p = subprocess.Popen([perf, 'report', '-D', '-i', data],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, errors='replace')
    found = set()
    of_sample = {}
    records = 0
    want = False
    key = None
    for line in p.stdout:
        if want:
            m = re.match(r'^\.+\s+\d+: ([0-9a-f]+)', line)
            if m:
                found.add(int(m.group(1), 16))
                if key:
                    of_sample[key] = int(m.group(1), 16)
            want = False
            continue
        m = _DSAMPLE.match(line)
        if m:
            key = (int(m.group(1)), int(m.group(2)))
            continue
        elif 'PERF_CONTEXT_USER_DEFERRED' in line:
            want = True
        elif 'PERF_RECORD_CALLCHAIN_DEFERRED' in line:
            records += 1
    p.stdout.close()
    p.wait()
    return found, records, of_sample


def thread_depths(out_file):
    """dwork's 'thread INDEX TID DEPTH' lines: {tid: (index, depth)}."""
    res = {}
    with open(out_file) as fh:
        for line in fh:
            f = line.split()
            if len(f) == 4 and f[0] == 'thread':
                res[int(f[2])] = (int(f[1]), int(f[3]))
    return res


def check_stack(s, depth, outer):
    """None if sample S, below dwork's recursion, has exactly DEPTH + 1
    recurse frames and OUTER ('main' or 'thread_main') right after them;
    else why not."""
    names = [f[1] for f in s.user()]
    n = names.count('recurse')
    if n != depth + 1:
        return '%d recurse frames, want %d' % (n, depth + 1)
    last = len(names) - 1 - names[::-1].index('recurse')
    if last + 1 >= len(names) or names[last + 1] != outer:
        return 'no %s after the recursion' % outer
    return None
