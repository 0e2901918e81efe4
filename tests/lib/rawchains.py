# SPDX-License-Identifier: GPL-2.0
"""Ground truth for deferred callchains, read from the raw records, never
from our stitching: pristine perf's raw dump (perf report -D) gives each
sample's kernel frames and cookie (its decoded callchain) and each
PERF_RECORD_CALLCHAIN_DEFERRED's user frames (its bytes: pristine 7.2 does
not decode the record of an event without PERF_SAMPLE_CALLCHAIN, the dummy
event of -a); compare() then checks a perf's perf script, sample by sample,
against that.

The truth of a sample whose record exists is that record's user IPs, less
the entries no return address can be (>= PERF_CONTEXT_MAX, dropped by our
stitcher and counted); a sample whose record never came has no truth: it
must show a fallback walk or the "[user stack lost]" frame, and is counted
as such.

A sample's record is the one with its tid and cookie, as the kernel writes
them (kernel/unwind/deferred.c: the cookie belongs to the task's entry,
(cpu + 1) << 32 | a per-CPU count, so no two tasks share one), but for
these turns of the task lifecycle:
- de_thread() (fs/exec.c): a non-leader thread T of process P that execs
  takes P's tid; the old leader's EXIT and a COMM exec for P/P follow, no
  FORK. T's samples taken in execve() before that carry tid T, their
  record (written on the way back to user space, in the new program)
  tid P: the truth of a sample of T with no record under T is the record
  under P with the same cookie, when a COMM exec of P comes between them.
- tid -1: a sample of a task past release_task() (sched_switch in
  do_task_dead(): a thread reaped at its exit_notify()) carries tid -1
  (the pid may still be there: 117/-1); the task never returns to user
  space, so no record can come; on 7.2.13 such a sample has no cookie
  either (unwind_deferred_request() refuses a PF_EXITING task). Such
  samples are counted apart and must be printed all the same.
- Records on the dummy event (-a, or tracepoints only: attr.defer_output
  is set on the dummy): pristine perf does not decode them, so their
  cookie and IPs are read from the bytes; their tid and time from the
  sample_id, which it does parse."""
import re
import struct

import common
import perf_dump
import perf_script

PERF_CONTEXT_MAX = (1 << 64) - 4095
PERF_CONTEXT_KERNEL = (1 << 64) - 128
PERF_CONTEXT_USER = (1 << 64) - 512
PERF_CONTEXT_USER_DEFERRED = (1 << 64) - 640
KERNEL_MIN = 0xffff800000000000
LOST = '[user stack lost]'
# "PERF_RECORD_COMM exec: COMM:PID/TID" (perf_event__fprintf_comm())
_COMM_EXEC = re.compile(r'^ exec: .*:(-?\d+)/(-?\d+)$')


class RawSample:
    """A PERF_RECORD_SAMPLE as the kernel wrote it: kernel IPs (markers
    left out), and either the cookie after PERF_CONTEXT_USER_DEFERRED or
    the user IPs after PERF_CONTEXT_USER."""
    __slots__ = ('ns', 'pid', 'tid', 'kernel', 'cookie', 'user')

    def __init__(self, ns, pid, tid):
        self.ns, self.pid, self.tid = ns, pid, tid
        self.kernel, self.cookie, self.user = [], None, []


class Dump:
    """The raw dump of one perf.data (file, directory or pipe stream)."""

    def __init__(self):
        self.samples = []       # RawSample, in file order
        self.records = {}       # (tid, cookie): [user IPs] (first one seen)
        self.record_ns = {}     # (tid, cookie): its time
        self.exit_ns = {}       # tid: times of its PERF_RECORD_EXITs, in order
        self.exec_ns = {}       # pid: times of its PERF_RECORD_COMM execs
        self.duplicates = 0     # records seen again with the same content
        self.conflicts = 0      # records seen again with other content
        self.malformed = 0      # records whose nr does not fit their size

    def cookies(self):
        return {s.cookie for s in self.samples if s.cookie is not None}

    def key(self, s):
        """The (tid, cookie) of sample S's record, None if none came."""
        key = (s.tid, s.cookie)
        if key in self.records:
            return key
        # de_thread(): thread s.tid exec'd and became its leader, s.pid
        key = (s.pid, s.cookie)
        if s.pid != s.tid and key in self.records and any(
                s.ns <= t <= self.record_ns[key] for t in self.exec_ns.get(s.pid, ())):
            return key
        return None

    def de_thread(self, s):
        """Sample S's record came under its leader's tid (de_thread())."""
        key = self.key(s)
        return key is not None and key[0] != s.tid

    def after_exit(self, s):
        """Sample S's record came after its task's PERF_RECORD_EXIT, the
        first one at or after the sample (a tid can exit more than once:
        de_thread() reuses the leader's)."""
        key = self.key(s)
        if key is None:
            return False
        ex = next((t for t in self.exit_ns.get(s.tid, ()) if t >= s.ns), None)
        return ex is not None and self.record_ns[key] > ex

    def truth(self, s):
        """Sample S's user IPs from its record, or None: no record came."""
        key = self.key(s)
        if key is None:
            return None
        return [ip for ip in self.records[key] if ip < PERF_CONTEXT_MAX]


def _add_sample(dump, ns, pid, tid, chain):
    s = RawSample(ns, pid, tid)
    ctx = None
    want_cookie = False
    for ip in chain:
        if want_cookie:
            s.cookie, want_cookie = ip, False
        elif ip == PERF_CONTEXT_USER_DEFERRED:
            want_cookie = True
        elif ip >= PERF_CONTEXT_MAX:
            ctx = ip
        elif ctx == PERF_CONTEXT_KERNEL:
            s.kernel.append(ip)
        elif ctx == PERF_CONTEXT_USER:
            s.user.append(ip)
    dump.samples.append(s)


def _add_record(dump, ns, tid, cookie, raw):
    """RAW: the record's bytes (x86_64: little-endian): header, cookie, nr,
    ips[nr], sample_id. The cookie is read there: COOKIE, the one perf
    printed, is None when it did not decode the record."""
    if len(raw) < 24:
        dump.malformed += 1
        return
    size, = struct.unpack_from('<H', raw, 6)
    raw_cookie, nr = struct.unpack_from('<QQ', raw, 8)
    if size != len(raw) or 24 + 8 * nr > size or cookie not in (None, raw_cookie):
        dump.malformed += 1
        return
    cookie = raw_cookie
    key = (tid, cookie)
    ips = list(struct.unpack_from('<%dQ' % nr, raw, 24))
    old = dump.records.get(key)
    if old is None:
        dump.records[key] = ips
        dump.record_ns[key] = ns
    elif old == ips:
        dump.duplicates += 1
    else:
        dump.conflicts += 1


def dump(perf, data):
    """perf report -D of DATA (run with PERF, pristine perf for truth),
    parsed into a Dump."""
    d = Dump()
    for e in perf_dump.dump(perf, data, types=('SAMPLE', 'CALLCHAIN_DEFERRED', 'EXIT',
                                                'COMM')):
        if e.time is None:
            continue
        if e.type == 'EXIT':
            d.exit_ns.setdefault(e.tid, []).append(e.time)
        elif e.type == 'COMM':
            m = _COMM_EXEC.match(e.line.split('PERF_RECORD_COMM', 1)[1])
            if m:
                d.exec_ns.setdefault(int(m.group(1)), []).append(e.time)
        elif e.type == 'CALLCHAIN_DEFERRED':
            _add_record(d, e.time, e.tid, e.cookie, e.raw)
        else:
            _add_sample(d, e.time, e.pid, e.tid, e.callchain)
    for times in d.exit_ns.values():
        times.sort()
    return d


class Stack:
    """One sample of perf script: (address, symbol, dso) frames, innermost
    first."""
    __slots__ = ('ns', 'tid', 'frames')

    def __init__(self, ns, tid):
        self.ns, self.tid, self.frames = ns, tid, []

    def kernel(self):
        return [f[0] for f in self.frames if f[0] >= KERNEL_MIN]

    def user(self):
        return [f[0] for f in self.frames if f[0] < KERNEL_MIN and f[1] != LOST]

    def lost(self):
        return any(f[1] == LOST for f in self.frames)


def stacks(perf, data, extra=()):
    """perf script of DATA, every frame's address, no inlined frames (an
    inlined frame repeats its caller's address): a list of Stack."""
    _, parsed = perf_script.script(perf, data, 'tid,time,ip,sym,dso',
                                   ['--ns', '--no-inline', '--max-stack', '1024'],
                                   pre=extra)
    out = []
    for p in parsed:
        st = Stack(p.ns, p.tid)
        st.frames = [(f.addr, f.sym, f.dso) for f in p.frames]
        out.append(st)
    return out


class Verdict:
    """compare()'s counts, and the first few samples that were wrong."""

    def __init__(self):
        self.deferred = 0       # samples with a cookie
        self.exact = 0          # ... whose record exists, shown with exactly its IPs
        self.wrong = 0          # ... whose record exists, shown otherwise
        self.after_exit = 0     # ... of which the record came after the EXIT
        self.lost = 0           # no record: "[user stack lost]"
        self.fallback = 0       # no record: user frames from a fallback walk
        self.bare = 0           # no record, and no user part at all
        self.unmatched = 0      # a raw sample perf script did not print
        self.cookie_frames = 0  # samples showing a cookie or marker as a frame
        self.de_thread = 0      # exact, their record under the leader's tid
        self.released = 0       # samples of tid -1 (released tasks), all printed
        self.examples = []

    def bad(self):
        """Wrong samples, but for those whose record came after their
        task's EXIT (counted apart: after_exit)."""
        return (self.wrong - self.after_exit + self.bare + self.unmatched +
                self.cookie_frames)

    def __str__(self):
        return ('%d deferred: %d exact, %d wrong (%d of them: record after EXIT), '
                '%d lost, %d fallback, %d bare, %d unprinted, '
                '%d with a cookie as a frame; %d exact across de_thread(), %d of tid -1' % (
                    self.deferred, self.exact, self.wrong, self.after_exit, self.lost,
                    self.fallback, self.bare, self.unmatched, self.cookie_frames,
                    self.de_thread, self.released))

    def example(self, why):
        if len(self.examples) < 10:
            self.examples.append(why)


def compare(dump, shown):
    """Check the perf script stacks SHOWN against DUMP, sample by sample:
    a raw sample is matched to the printed sample of the same time, tid
    and kernel frames. Returns a Verdict."""
    by_key = {}
    for st in shown:
        by_key.setdefault((st.ns, st.tid), []).append(st)
    cookies = dump.cookies()
    v = Verdict()
    for s in dump.samples:
        if s.cookie is None and s.tid != -1:
            continue
        cands = by_key.get((s.ns, s.tid), [])
        if s.cookie is None:
            # tid -1: unwind_deferred_request() refuses an exiting task,
            # so no cookie; printed all the same, with its kernel frames
            v.released += 1
            st = next((c for c in cands if c.kernel() == s.kernel), None)
            if st is None:
                v.unmatched += 1
                v.example('tid -1 t=%d: not printed' % s.ns)
            else:
                cands.remove(st)
            continue
        v.deferred += 1
        st = next((c for c in cands if c.kernel() == s.kernel), None)
        if st is None:
            v.unmatched += 1
            v.example('tid %d t=%d: not printed (%d at that time)' % (s.tid, s.ns, len(cands)))
            continue
        cands.remove(st)
        if any(f[0] in cookies or f[0] >= PERF_CONTEXT_MAX for f in st.frames):
            v.cookie_frames += 1
            v.example('tid %d t=%d: cookie or marker shown as a frame' % (s.tid, s.ns))
        want = dump.truth(s)
        got = [ip for ip in st.user() if ip not in cookies and ip < PERF_CONTEXT_MAX]
        if want is not None:
            if got == want and not st.lost():
                v.exact += 1
                v.de_thread += dump.de_thread(s)
            else:
                v.wrong += 1
                v.after_exit += dump.after_exit(s)
                v.example('tid %d t=%d cookie %#x: %d user frames shown%s, record has %d' % (
                    s.tid, s.ns, s.cookie, len(got), ' (lost)' if st.lost() else '',
                    len(want)))
        elif st.lost():
            v.lost += 1
        elif got:
            v.fallback += 1
        else:
            v.bare += 1
            v.example('tid %d t=%d cookie %#x: no record, no user part' % (
                s.tid, s.ns, s.cookie))
    return v


# perf script --no-merge-callchains: each record as "... DEFERRED CALLCHAIN
# [cookie: HEX]" then its frame lines (tab first), then a blank line
_RAW_RECORD = re.compile(r'DEFERRED CALLCHAIN \[cookie: ([0-9a-f]+)\]')


def raw_view(perf, data, extra=(), stdin=None):
    """The records perf script --no-merge-callchains prints, as
    [(cookie, (ip, ...))] in output order, and how many of them print no
    address (blank).  DATA '-' reads STDIN."""
    r = common.run([perf, 'script', '--no-merge-callchains', '--no-inline',
                    '--max-stack', '1024', '-F', 'comm,tid,time,ip,sym',
                    '-i', data] + list(extra), timeout=600, stdin=stdin)
    recs = []
    blank = 0
    cur = None
    for line in r.stdout.splitlines():
        m = _RAW_RECORD.search(line)
        if m:
            cur = (int(m.group(1), 16), [])
            recs.append(cur)
        elif cur is None:
            continue
        elif line.startswith('\t'):
            f = line.split()
            try:
                cur[1].append(int(f[0], 16))
            except (IndexError, ValueError):
                pass
        else:
            blank += not cur[1]
            cur = None
    if cur is not None and not cur[1]:
        blank += 1
    return [(ck, tuple(ips)) for ck, ips in recs], blank


# perf sched timehist: "TIME [CPU] TASK WAIT DELAY RUN [callchain]"
_TIMEHIST = re.compile(r'^\s*(\d+)\.(\d+)\s+\[(\d+)\]\s+(.*?)\s+(-?\d+\.\d+)\s+'
                       r'(-?\d+\.\d+)\s+(-?\d+\.\d+)(?:\s|$)')
# A time past this many ms is a negative one wrapped (18446744072916.652)
TIMEHIST_WRAPPED_MS = 1e9


def timehist(text):
    """perf sched timehist's rows: [(time in us, wait, delay, run ms)]."""
    rows = []
    for line in text.splitlines():
        m = _TIMEHIST.match(line)
        if m:
            rows.append((int(m.group(1)) * 10**6 + int(m.group(2).ljust(6, '0')[:6]),
                         float(m.group(5)), float(m.group(6)), float(m.group(7))))
    return rows


def out_of_order(times):
    """How many of TIMES come before the one ahead of them."""
    return sum(b < a for a, b in zip(times, times[1:]))
