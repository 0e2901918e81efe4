# SPDX-License-Identifier: GPL-2.0
"""perf report -D (--dump-raw-trace) output, parsed in one place.

Each event is a line "[[CPU ]TIME ]OFFSET [SIZE]: PERF_RECORD_TYPE..." (the
CPU when samples carry one, the time with sample_id_all), then, for
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
# "(IP, 0x2): PID/TID: 0xIP_OR_COOKIE" of samples and deferred records
_TASK = re.compile(r'^\([^)]*\): (-?\d+)/(-?\d+): (0x[0-9a-f]+)')
# "(PID:TID):(PPID:PTID)" of FORK and EXIT
_FORK = re.compile(r'^\((-?\d+):(-?\d+)\)')


class Event:
    __slots__ = ('cpu', 'time', 'offset', 'type', 'line', 'pid', 'tid', 'value',
                 'callchain')

    def __init__(self, m, line):
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


def events(lines):
    """[Event] of perf report -D output (a string or an iterable of lines)."""
    if isinstance(lines, str):
        lines = lines.splitlines()
    out = []
    cur = None
    for line in lines:
        m = _EVENT.match(line)
        if m:
            cur = Event(m, line.rstrip('\n'))
            out.append(cur)
            continue
        m = _ENTRY.match(line)
        if m and cur is not None:
            cur.callchain.append(int(m.group(1), 16))
    return out


def dump(perf, data, types=None):
    """perf report -D -i @data, parsed as it streams (guest recordings
    dump to hundreds of MB): the events of @types (all if None)."""
    p = subprocess.Popen([perf, 'report', '-D', '-i', data], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, errors='replace')
    # one event at a time, so that only the wanted ones are kept
    out = []
    group = []
    for line in p.stdout:
        if _EVENT.match(line) and group:
            out += [e for e in events(group) if types is None or e.type in types]
            group = []
        if group or _EVENT.match(line):
            group.append(line)
    out += [e for e in events(group) if types is None or e.type in types]
    p.stdout.close()
    p.wait()        # a damaged file dumps what it can and exits non-zero
    return out
