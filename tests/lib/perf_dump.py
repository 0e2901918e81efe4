# SPDX-License-Identifier: GPL-2.0
"""perf report -D (--dump-raw-trace) output, parsed in one place.

Each event is its raw bytes (". ... raw event: size N bytes", then
".  0000:  09 00 ..." lines), then a line "[[CPU ]TIME ]OFFSET [SIZE]:
PERF_RECORD_TYPE..." (the CPU when samples carry one, the time with
sample_id_all), then, for
a sample or a PERF_RECORD_CALLCHAIN_DEFERRED, its callchain entries
(".....  N: 00007fa0fa663d00", context markers named in parentheses):

    8853062563 0x300 [0x80]: PERF_RECORD_SAMPLE(IP, 0x1): 147/147: 0xffff...
    8871785003 0x5800 [0x30]: PERF_RECORD_CALLCHAIN_DEFERRED(IP, 0x2): 147/147: 0x300000001
    8855669206 0x678 [0x30]: PERF_RECORD_EXIT(147:147):(147:147)
"""
import re
import subprocess

from perf_abi import CONTEXT_USER_DEFERRED

_EVENT = re.compile(r'^(?:(\d+) )??(?:(\d+) )?(0x[0-9a-f]+) \[(0x[0-9a-f]+)\]: '
                    r'PERF_RECORD_(\w+)(.*)$')
_ENTRY = re.compile(r'^\.{5}\s+\d+: ([0-9a-f]+)')
_RAW = re.compile(r'^\.\s+[0-9a-f]{4}:  ((?:[0-9a-f]{2} )+)')
# "(IP, 0x2): PID/TID: 0xIP_OR_COOKIE" of samples and deferred records
_TASK = re.compile(r'^\([^)]*\): (-?\d+)/(-?\d+): (0x[0-9a-f]+)')
# "(PID:TID):(PPID:PTID)" of FORK and EXIT
_FORK = re.compile(r'^\((-?\d+):(-?\d+)\)')


class Event:
    __slots__ = ('cpu', 'time', 'offset', 'type', 'line', 'pid', 'tid', 'value',
                 'callchain', 'raw')

    def __init__(self, m, line, raw):
        self.raw = raw                  # the event's bytes, as perf dumped them
        self.cpu = int(m.group(1)) if m.group(1) else None
        self.time = int(m.group(2)) if m.group(2) else None
        self.offset = int(m.group(3), 16)
        self.type = m.group(5)          # 'SAMPLE', 'CALLCHAIN_DEFERRED', ...
        self.line = line
        self.pid = self.tid = self.value = None
        self.callchain = []
        rest = m.group(6)
        t = _TASK.match(rest) or _FORK.match(rest)
        if t:
            self.pid, self.tid = int(t.group(1)), int(t.group(2))
            if t.re is _TASK:
                # a sample's IP, a deferred record's cookie
                self.value = int(t.group(3), 16)

    @property
    def cookie(self):
        """A record's cookie; a sample's, after PERF_CONTEXT_USER_DEFERRED."""
        if self.type == 'CALLCHAIN_DEFERRED':
            return self.value
        cc = self.callchain
        if CONTEXT_USER_DEFERRED in cc[:-1]:
            return cc[cc.index(CONTEXT_USER_DEFERRED) + 1]
        return None


def iter_events(lines):
    """The Events of perf report -D output lines, one at a time."""
    cur = None
    raw = bytearray()
    chain = False       # in the "... FP chain: nr:N" entries of cur
    seen = False        # cur's (first) chain was read: only that one is its own
    for line in lines:
        m = _EVENT.match(line)
        if m:
            if cur is not None:
                yield cur
            cur = Event(m, line.rstrip('\n'), bytes(raw))
            raw = bytearray()
            chain = seen = False
            continue
        if line.startswith('... FP chain: nr:'):
            chain = cur is not None and not seen
            seen = True
            continue
        if line.startswith('. ... raw event'):
            raw = bytearray()
            continue
        m = _RAW.match(line)
        if m:
            raw += bytes.fromhex(m.group(1))
            continue
        m = _ENTRY.match(line) if chain else None
        if m:
            cur.callchain.append(int(m.group(1), 16))
        else:
            chain = False
    if cur is not None:
        yield cur


def events(text):
    """[Event] of perf report -D output."""
    return list(iter_events(text.splitlines()))


def dump(perf, data, types=None):
    """perf report -D -i @data, parsed as it streams (guest recordings
    dump to hundreds of MB): the events of @types (all if None)."""
    p = subprocess.Popen([perf, 'report', '-D', '-i', data], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors='replace')
    out = [e for e in iter_events(p.stdout) if types is None or e.type in types]
    p.stdout.close()
    p.wait()        # a damaged file dumps what it can and exits non-zero
    return out
