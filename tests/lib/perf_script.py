# SPDX-License-Identifier: GPL-2.0
"""perf script output, parsed in one place for every test.

perf script prints a sample as a header line (the -F fields before the
callchain: comm, tid, cpu, time, period, event, ...), then, with a
callchain, one line per frame, each starting with a tab:

    workload     147     8.853062:     100000 cpu-clock:
    	    5555555551a9 level_a+0x10 (/in/workload)
    	            0 [user stack lost] ([unknown])

and a blank line after the last frame.  With -F ip,sym alone there is no
header line: a sample is its frame lines.  With -F ...,srcline each frame
line is followed by its file:line (srcline=True).

    for s in perf_script.samples(text):
        s.tid, s.time, s.ns, [f.addr for f in s.frames]
"""
import os
import re

import common

# The header line's fields, in perf script's order, each with what ends it.
_SEP = r'(?:\s+|$)'
_FIELD = (
    ('comm', r'(?P<comm>\S.*?)' + _SEP),
    ('tid', None),                      # "TID", "PID", or "PID/TID": below
    ('cpu', r'\[(?P<cpu>\d+)\]' + _SEP),
    ('time', r'(?P<time>\d+\.\d+):\s*'),
    ('period', r'(?P<period>\d+)' + _SEP),
    ('event', r'(?P<event>[^\s:]\S*?):\s*'),
)


def _head_regex(fields):
    """The header line of -F @fields ('comm,tid,time,ip,...'); None: perf's
    default fields, each optional but the time."""
    want = set(fields.split(',')) if fields is not None else None
    out = r'^\s*'
    for name, rx in _FIELD:
        if name == 'tid':
            if want is None:
                rx = r'(?:(?P<pid>-?\d+)/)?(?P<tid>-?\d+)' + _SEP
            elif {'pid', 'tid'} <= want:
                rx = r'(?P<pid>-?\d+)/(?P<tid>-?\d+)' + _SEP
            elif 'pid' in want:
                rx = r'(?P<pid>-?\d+)' + _SEP
                name = 'pid'
            else:
                rx = r'(?P<tid>-?\d+)' + _SEP
        if want is None:
            out += rx if name == 'time' else '(?:%s)?' % rx
        elif name in want:
            out += rx
    return re.compile(out + r'(?P<rest>.*)$')


# "ADDR", "ADDR SYM", "ADDR SYM (DSO)": the address is right-aligned in 16
# columns; a symbol may hold spaces and parentheses, a DSO path neither.
_FRAME = re.compile(r'^\s*([0-9a-f]+)(?: (.*?))?(?: \(([^()]*)\))?$')


class Frame:
    __slots__ = ('addr', 'sym', 'dso', 'srcline', 'line')

    def __init__(self, addr, sym, dso, line):
        self.addr, self.sym, self.dso, self.line = addr, sym, dso, line
        self.srcline = None

    @property
    def name(self):
        """The symbol without its +0xOFF (-F symoff)."""
        return re.sub(r'\+0x[0-9a-f]+$', '', self.sym or '')

    @property
    def inlined(self):
        return self.dso == 'inlined'

    def __repr__(self):
        return self.line


class Sample:
    """One sample: its header line (None without header fields), the
    fields read from it, and its frames, innermost first."""
    __slots__ = ('head', 'comm', 'pid', 'tid', 'cpu', 'time', 'period', 'event',
                 'frames')

    def __init__(self, head, regex, where):
        self.head = head
        self.frames = []
        self.comm = self.pid = self.tid = self.cpu = None
        self.time = self.period = self.event = None
        if head is None:
            return
        m = regex.match(head)
        if not m:
            raise AssertionError('%s: not a sample header: %r' % (where, head))
        g = m.groupdict()
        self.comm = g.get('comm')
        for f in ('pid', 'tid', 'cpu', 'period'):
            if g.get(f) is not None:
                setattr(self, f, int(g[f]))
        self.time = g.get('time')       # as printed: 'sec.usec' or, --ns, 'sec.nsec'
        self.event = g.get('event')

    @property
    def ns(self):
        """The time in ns (needs --ns)."""
        return int(self.time.replace('.', ''))

    @property
    def addrs(self):
        return [f.addr for f in self.frames]

    def unwound(self):
        """[(addr, DSO basename)] of the frames the unwinder gave (not the
        inlined ones perf adds from the srcline)."""
        return [(f.addr, os.path.basename(f.dso or '')) for f in self.frames
                if not f.inlined]

    def __repr__(self):
        return '\n'.join([self.head or ''] + ['\t' + f.line for f in self.frames])


def samples(text, fields=None, srcline=False, where='perf script'):
    """perf script [-F @fields] output -> [Sample], in output order."""
    regex = _head_regex(fields)
    srcline = srcline or 'srcline' in (fields or '').split(',')
    out = []
    cur = None
    for line in text.splitlines():
        if not line.strip():
            cur = None
            continue
        if srcline and cur is not None and cur.frames and line[0] == ' ' and \
                cur.frames[-1].srcline is None:
            cur.frames[-1].srcline = line.strip()
            continue
        if line[0] == '\t':
            m = _FRAME.match(line)
            if not m:
                raise AssertionError('%s: not a frame line: %r' % (where, line))
            if cur is None:
                cur = Sample(None, regex, where)
                out.append(cur)
            cur.frames.append(Frame(int(m.group(1), 16), m.group(2), m.group(3),
                                    line.strip()))
            continue
        cur = Sample(line, regex, where)
        out.append(cur)
    return out


def count_samples(text, fields):
    """The sample header lines of -F @fields in @text; other lines are not
    an error here: a perf killed by a signal leaves half a line of its
    last buffer, and upstream prints some warnings to stdout."""
    regex = _head_regex(fields)
    return sum(1 for line in text.splitlines() if regex.match(line))


def script(perf, data, fields=None, extra=(), srcline=False, pre=(), **kw):
    """Run perf [@pre] script on @data (-F @fields) and parse it: (the
    CompletedProcess, [Sample])."""
    cmd = [perf] + list(pre) + ['script', '-i', data] + \
        (['-F', fields] if fields else []) + list(extra)
    r = common.run(cmd, **kw)
    return r, samples(r.stdout, fields, srcline=srcline, where=' '.join(cmd))


def unwound(text, fields='tid,ip,sym,dso'):
    """perf script -F @fields output -> Sample.unwound() of each sample."""
    return [s.unwound() for s in samples(text, fields)]
