# SPDX-License-Identifier: GPL-2.0
"""hotspot's perfparser (Debian package hotspot: hotspot-perfparser, or
KDAB's perfparser) output, decoded into stacks.

perfparser reads a perf.data file (it knows no
PERF_RECORD_CALLCHAIN_DEFERRED: perf inject --merge-callchains is its
way in) and writes the stream hotspot reads: "QPERFSTREAM\\0", the
QDataStream version (qint32, little-endian), then messages, each a
little-endian quint32 size and a QDataStream (big-endian) payload that
starts with a quint8 event type (PerfUnwind::EventType in
app/perfunwind.h; hotspot 1.3.0's values below). Only what a stack
needs is read; fields newer versions append to a message are skipped
with it.

    got, errors = perfparser.samples(path)
    for s in got: s.tid, s.time (ns), s.addresses, s.frames
        frames: [(symbol name, binary, is kernel) or None], leaf first
"""
import os
import shutil
import struct
import subprocess

from common import BUILD

MAGIC = b'QPERFSTREAM\0'
(THREAD_START, THREAD_END, COMMAND, LOCATION, SYMBOL, STRING, LOST, FEATURES, ERROR,
 PROGRESS, TRACEPOINT_FORMAT, ATTRIBUTES, CONTEXT_SWITCH, SAMPLE, TRACEPOINT_SAMPLE) = range(15)

# scripts/setup-perfparser.sh's copy first (install-deps.sh makes it).
BINARIES = [os.path.join(BUILD, 'perfparser',
                         'usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser'),
            '/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser',
            '/usr/libexec/hotspot-perfparser', 'hotspot-perfparser', 'perfparser']


def find():
    """The perfparser binary: $PERFPARSER, else hotspot's, else None."""
    for b in [os.environ.get('PERFPARSER')] + BINARIES:
        if b and (os.access(b, os.X_OK) or shutil.which(b)):
            return b if os.access(b, os.X_OK) else shutil.which(b)
    return None


class Sample:
    __slots__ = ('pid', 'tid', 'time', 'cpu', 'locations', 'frames', 'addresses')

    def __repr__(self):
        return '%d/%d %d: %r' % (self.pid, self.tid, self.time, self.frames)


class _Reader:
    def __init__(self, b):
        self.b, self.o = b, 0

    def get(self, fmt):
        v = struct.unpack_from('>' + fmt, self.b, self.o)
        self.o += struct.calcsize('>' + fmt)
        return v if len(v) > 1 else v[0]

    def bytes(self):
        n = self.get('I')
        if n == 0xffffffff:
            return None
        v = self.b[self.o:self.o + n]
        self.o += n
        return v


def decode(data):
    """(strings {id: bytes}, locations {id: (address, parent id)},
    symbols {location id: (name id, binary id, is kernel)}, [Sample],
    errors [(code, message)]) of a perfparser stream."""
    if not data.startswith(MAGIC):
        raise ValueError('not a perfparser stream')
    o = len(MAGIC) + 4
    strings, locations, symbols, samples, errors = {}, {}, {}, [], []
    while o + 4 <= len(data):
        size, = struct.unpack_from('<I', data, o)
        r = _Reader(data[o + 4:o + 4 + size])
        o += 4 + size
        kind = r.get('B')
        if kind == STRING:
            sid = r.get('i')
            strings[sid] = r.bytes()
        elif kind == LOCATION:
            lid = r.get('i')
            address, _file, _pid, _line, _column, parent = r.get('QiIiii')
            locations[lid] = (address, parent)
        elif kind == SYMBOL:
            lid = r.get('i')
            name, binary, _path, kernel = r.get('iii?')
            symbols[lid] = (name, binary, kernel)
        elif kind in (SAMPLE, TRACEPOINT_SAMPLE):
            s = Sample()
            s.pid, s.tid, s.time, s.cpu = r.get('iiQI')
            n = r.get('I')
            s.locations = list(r.get('%di' % n)) if n > 1 else \
                ([r.get('i')] if n == 1 else [])
            samples.append(s)
        elif kind == ERROR:
            code = r.get('i')
            errors.append((code, r.bytes()))
    return strings, locations, symbols, samples, errors


def samples(path):
    """The Samples of the perfparser stream at @path, each with its frames:
    [(symbol name, binary, is kernel)] leaf first (None for a location
    without a symbol). Also returns the stream's errors."""
    with open(path, 'rb') as f:
        strings, locations, symbols, out, errors = decode(f.read())

    def text(sid):
        v = strings.get(sid)
        return v.decode(errors='replace') if v is not None else None

    def symbol(lid):
        """A location's symbol, or its parent's (perfparser hangs the
        symbol on the location of the function's entry)."""
        sym = symbols.get(lid)
        if sym is None and lid in locations and locations[lid][1] >= 0:
            sym = symbols.get(locations[lid][1])
        return sym

    def address(lid):
        return locations[lid][0] if lid in locations else None

    for s in out:
        # perfparser puts the sample's IP before the first user frame
        # when they differ (resolveCallchain(), "sometimes it skips the
        # first user frame"): in a sample taken in the kernel that is the
        # kernel leaf again, as an unresolved user frame. Drop it.
        lids = s.locations
        user = next((i for i, lid in enumerate(lids)
                     if not (symbol(lid) or (0, 0, False))[2]), None)
        if user and address(lids[user]) == address(lids[0]):
            lids = lids[:user] + lids[user + 1:]
        s.locations = lids
        s.addresses = [address(lid) for lid in lids]
        s.frames = []
        for lid in lids:
            sym = symbol(lid)
            s.frames.append((text(sym[0]), text(sym[1]), sym[2]) if sym else None)
    return out, errors


def run(binary, data, out, kallsyms=None, sysroot=None, app=None):
    """perfparser --input @data --output @out, with the symbols of a
    recording made elsewhere."""
    cmd = [binary, '--input', data, '--output', out]
    if kallsyms:
        cmd += ['--kallsyms', kallsyms]
    if sysroot:
        cmd += ['--sysroot', sysroot]
    if app:
        cmd += ['--app', app]
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          errors='replace', check=True)
