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
as such."""
import struct

import perf_dump
import perf_script

PERF_CONTEXT_MAX = (1 << 64) - 4095
PERF_CONTEXT_KERNEL = (1 << 64) - 128
PERF_CONTEXT_USER = (1 << 64) - 512
PERF_CONTEXT_USER_DEFERRED = (1 << 64) - 640
KERNEL_MIN = 0xffff800000000000
LOST = '[user stack lost]'


class RawSample:
    """A PERF_RECORD_SAMPLE as the kernel wrote it: kernel IPs (markers
    left out), and either the cookie after PERF_CONTEXT_USER_DEFERRED or
    the user IPs after PERF_CONTEXT_USER."""
    __slots__ = ('ns', 'tid', 'kernel', 'cookie', 'user')

    def __init__(self, ns, tid):
        self.ns, self.tid = ns, tid
        self.kernel, self.cookie, self.user = [], None, []


class Dump:
    """The raw dump of one perf.data (file, directory or pipe stream)."""

    def __init__(self):
        self.samples = []       # RawSample, in file order
        self.records = {}       # (tid, cookie): [user IPs] (first one seen)
        self.record_ns = {}     # (tid, cookie): its time
        self.exit_ns = {}       # tid: time of its PERF_RECORD_EXIT
        self.duplicates = 0     # records seen again with the same content
        self.conflicts = 0      # records seen again with other content
        self.malformed = 0      # records whose nr does not fit their size

    def cookies(self):
        return {s.cookie for s in self.samples if s.cookie is not None}

    def after_exit(self, s):
        """Sample S's record came after its task's PERF_RECORD_EXIT."""
        key = (s.tid, s.cookie)
        return key in self.records and self.record_ns[key] > self.exit_ns.get(s.tid, 1 << 64)

    def truth(self, s):
        """Sample S's user IPs from its record, or None: no record came."""
        rec = self.records.get((s.tid, s.cookie))
        if rec is None:
            return None
        return [ip for ip in rec if ip < PERF_CONTEXT_MAX]


def _add_sample(dump, ns, tid, chain):
    s = RawSample(ns, tid)
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
    ips[nr], sample_id."""
    if len(raw) < 24:
        dump.malformed += 1
        return
    size, = struct.unpack_from('<H', raw, 6)
    nr, = struct.unpack_from('<Q', raw, 16)
    if size != len(raw) or 24 + 8 * nr > size:
        dump.malformed += 1
        return
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
    for e in perf_dump.dump(perf, data, types=('SAMPLE', 'CALLCHAIN_DEFERRED', 'EXIT')):
        if e.time is None:
            continue
        if e.type == 'EXIT':
            d.exit_ns[e.tid] = e.time
        elif e.type == 'CALLCHAIN_DEFERRED':
            _add_record(d, e.time, e.tid, e.cookie, e.raw)
        else:
            _add_sample(d, e.time, e.tid, e.callchain)
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
        self.examples = []

    def bad(self):
        """Wrong samples, but for those whose record came after their
        task's EXIT (counted apart: after_exit)."""
        return (self.wrong - self.after_exit + self.bare + self.unmatched +
                self.cookie_frames)

    def __str__(self):
        return ('%d deferred: %d exact, %d wrong (%d of them: record after EXIT), '
                '%d lost, %d fallback, %d bare, %d unprinted, '
                '%d with a cookie as a frame' % (
                    self.deferred, self.exact, self.wrong, self.after_exit, self.lost,
                    self.fallback, self.bare, self.unmatched, self.cookie_frames))

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
        if s.cookie is None:
            continue
        v.deferred += 1
        cands = by_key.get((s.ns, s.tid), [])
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
