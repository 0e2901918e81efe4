# SPDX-License-Identifier: GPL-2.0
"""Read perf.data files recorded with --call-graph fp,defer through perf
(script, report --stats, report -D) and check them against the known stacks
of tests/workloads/dwork.c."""
import re

import perf_counters
import perf_dump
import perf_script
from common import run

KERNEL_MIN = 0xffff800000000000
USER_DEFERRED = 0xfffffffffffffd80      # PERF_CONTEXT_USER_DEFERRED
LOST = '[user stack lost]'
# dwork functions that only run below the recursion (a sample whose
# innermost dwork frame is recurse itself was taken on the way down or up)
IN_RECURSION = {'work_loop', 'cheap_syscalls', 'long_read', 'user_spin',
                'raw_syscall3', 'now', 'migrate', 'cpu_done', 'cpu_ms'}


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


class Samples(list):
    """A list of Sample, with the stderr of the perf script that gave it."""
    stderr = ''


def script(perf, data, kallsyms=None, buildid_dir=None, cpu=False):
    """perf script of DATA, parsed: a Samples."""
    fields = 'comm,tid,' + ('cpu,' if cpu else '') + 'time,event,ip,sym,dso'
    extra = ['--max-stack', '1024', '--ns'] + (['--kallsyms', kallsyms] if kallsyms else [])
    r, parsed = perf_script.script(perf, data, fields, extra, pre=perf_env(buildid_dir))
    samples = Samples()
    samples.stderr = r.stderr
    for p in parsed:
        s = Sample(p.comm, p.tid, p.cpu, p.time, p.event)
        s.frames = [(f.addr, f.sym, f.dso) for f in p.frames]
        samples.append(s)
    return samples


def stats(perf, data):
    """The 'Deferred callchains:' section of perf report --stats, as a dict."""
    return perf_counters.deferred(run([perf, 'report', '--stats', '-i', data]).stdout)


def cookies(perf, data):
    """From perf report -D: the cookies samples carry after
    PERF_CONTEXT_USER_DEFERRED, the number of PERF_RECORD_CALLCHAIN_DEFERRED
    records, and {(time in ns, tid): cookie} of the samples."""
    events = perf_dump.dump(perf, data, types=('SAMPLE', 'CALLCHAIN_DEFERRED'))
    marked = [e for e in events if e.type == 'SAMPLE' and e.cookie is not None]
    records = sum(1 for e in events if e.type == 'CALLCHAIN_DEFERRED')
    return {e.cookie for e in marked}, records, {(e.time, e.tid): e.cookie for e in marked}


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
    # A leaf IP in work_loop's prologue or epilogue (no frame of its own
    # yet, or popped already): the frame-pointer walk, the kernel's for a
    # deferred record as perf's own, reads the return address from the
    # frame RBP still points at, the innermost recurse's, so it skips the
    # recurse that called work_loop. The only IN_RECURSION function that
    # recurse calls directly; for the others the skipped frame is theirs.
    short = names[:1] == ['work_loop'] and n == depth
    if n != depth + 1 and not short:
        return '%d recurse frames, want %d (leaf %s)' % (n, depth + 1,
                                                         ' <- '.join(names[:3]))
    last = len(names) - 1 - names[::-1].index('recurse')
    if last + 1 >= len(names) or names[last + 1] != outer:
        return 'no %s after the recursion' % outer
    return None


# perf top --stdio screens (--no-children, graph callchains, -v)

DWORK_FUNCS = IN_RECURSION | {'recurse', 'main', 'thread_main'}
_TOP_ENTRY = re.compile(r'^\s+(\d+\.\d+)%\s+.*\[([k.])\] (\S.*?)\s*$')
_TOP_FRAME = re.compile(r'^([ |]*)(---|\|?--\d+\.\d+%--|)(\S.*?)\s*$')
_HEX = re.compile(r'^0x[0-9a-f]+$')


class TopEntry:
    __slots__ = ('kernel', 'sym', 'paths')

    def __init__(self, kernel, sym):
        self.kernel, self.sym = kernel, sym
        self.paths = []         # each a list of frame names, innermost first


class TopScreen:
    __slots__ = ('irqs', 'entries')

    def __init__(self, irqs):
        self.irqs = irqs
        self.entries = []

    def paths(self, kernel=None):
        return [p for e in self.entries if kernel is None or e.kernel == kernel
                for p in e.paths]


def _graph_paths(lines):
    """The root-to-leaf paths of one entry's callchain graph, as perf prints
    it: a frame follows the one above it in the same column; a branch
    (|--N%--, --N%--) starts a child of the frame above its column."""
    frames = []
    for line in lines:
        if not line.strip(' |'):
            continue
        m = _TOP_FRAME.match(line)
        if m:
            frames.append((m.start(3), bool(m.group(2)), m.group(3)))
    paths = []
    stack = []          # (column, branch, name)
    for i, (col, branch, name) in enumerate(frames):
        while stack and stack[-1][0] > col:
            stack.pop()
        if branch:
            while stack and stack[-1][0] == col:
                if stack.pop()[1]:
                    break
        stack.append((col, branch, name))
        nxt = frames[i + 1] if i + 1 < len(frames) else None
        if nxt is None or nxt[0] < col or (nxt[0] == col and nxt[1]):
            paths.append([f[2] for f in stack])
    return paths


def top_screens(path):
    """perf top --stdio output: a TopScreen per refresh."""
    screens = []
    entry = None
    graph = []

    def close():
        if entry is not None:
            entry.paths = _graph_paths(graph)
            screens[-1].entries.append(entry)

    with open(path, errors='replace') as fh:
        for line in fh:
            line = line.rstrip('\n')
            if line.startswith('\x1b'):     # the screen clear
                continue
            m = re.search(r'PerfTop:\s+(\d+) irqs/sec', line)
            if m:
                close()
                entry, graph = None, []
                screens.append(TopScreen(int(m.group(1))))
                continue
            if not screens:
                continue
            m = _TOP_ENTRY.match(line)
            if m:
                close()
                entry, graph = TopEntry(m.group(2) == 'k', m.group(3)), []
            elif entry is not None:
                graph.append(line)
        close()
    return screens


def full_stack(path, depth, outer='main'):
    """PATH (innermost first) starts in the kernel and goes on into dwork's
    recursion of DEPTH + 1 recurse frames, then OUTER."""
    first = next((i for i, n in enumerate(path) if n in DWORK_FUNCS), None)
    if not first or any(_HEX.match(n) and int(n, 16) < KERNEL_MIN for n in path[:first]):
        return False
    user = path[first:]
    if user.count('recurse') != depth + 1:
        return False
    last = len(user) - 1 - user[::-1].index('recurse')
    return last + 1 < len(user) and user[last + 1] == outer


def exec_ranges(maps_file):
    """Executable mappings of a /proc/PID/maps copy: [(start, end)]."""
    res = []
    with open(maps_file) as fh:
        for line in fh:
            f = line.split()
            if len(f) >= 2 and 'x' in f[1]:
                lo, hi = f[0].split('-')
                res.append((int(lo, 16), int(hi, 16)))
    return res


def bogus_frames(paths, ranges):
    """Frames of PATHS no code address can be: a context marker
    (PERF_CONTEXT_*, like PERF_CONTEXT_USER_DEFERRED), or a user address
    outside the executable mappings RANGES (a deferred cookie); and
    '[unknown]'.  Unresolved code addresses are not bogus."""
    bad = set()
    for p in paths:
        for n in p:
            if n == '[unknown]':
                bad.add(n)
            elif _HEX.match(n):
                a = int(n, 16)
                if a >= 0xfffffffffffff000 or (
                        a < KERNEL_MIN and not any(lo <= a < hi for lo, hi in ranges)):
                    bad.add(n)
    return bad
