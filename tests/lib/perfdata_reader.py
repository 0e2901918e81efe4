# SPDX-License-Identifier: GPL-2.0
"""Reading perf.data files written by perf record (file mode, host byte
order): the attrs with their ids, the data section's events, and the
offsets of a sample's parts."""
import struct

from perf_abi import (MAGIC, S_ADDR, S_CALLCHAIN, S_CPU, S_ID, S_IDENTIFIER,
                      S_IP, S_PERIOD, S_REGS_USER, S_STACK_USER, S_STREAM_ID,
                      S_TID, S_TIME)


class Recording:
    """The attrs (with ids) and the data section events of a perf.data file
    written by perf record: [(type, misc, raw event bytes)]."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            b = f.read()
        assert b[:8] == MAGIC, '%s: not a little-endian perf.data file' % path
        attr_size, = struct.unpack_from('<Q', b, 16)
        a_off, a_size, d_off, d_size = struct.unpack_from('<QQQQ', b, 24)
        self.attrs = []
        for off in range(a_off, a_off + a_size, attr_size):
            (type, _, config, period, st, _, flags) = struct.unpack_from('<IIQQQQQ', b, off)
            regs_user, stack_user = struct.unpack_from('<QI', b, off + 80)
            i_off, i_size = struct.unpack_from('<QQ', b, off + attr_size - 16)
            ids = struct.unpack_from('<%dQ' % (i_size // 8), b, i_off)
            self.attrs.append(dict(type=type, config=config, period=period,
                                   sample_type=st, flags=flags, ids=ids,
                                   regs_user=regs_user, stack_user=stack_user))
        self.events = []
        off = d_off
        while off + 8 <= d_off + d_size:
            type, misc, size = struct.unpack_from('<IHH', b, off)
            assert size >= 8, 'bad event size at %#x' % off
            self.events.append((type, misc, b[off:off + size]))
            off += size

    def evsel_of(self, raw):
        """The attr of a sample."""
        if len(self.attrs) == 1:
            return self.attrs[0]
        id, = struct.unpack_from('<Q', raw, 8)   # PERF_SAMPLE_IDENTIFIER
        return next(a for a in self.attrs if id in a['ids'])


def sample_fields(attr, raw):
    """Offsets of a sample's parts: {'pid', 'tid', 'time', 'callchain':
    (offset, nr), 'regs': {reg: value}, 'stack': (offset, size)}."""
    st = attr['sample_type']
    bad = st & ~(S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID | S_STREAM_ID |
                 S_CPU | S_PERIOD | S_CALLCHAIN | S_REGS_USER | S_STACK_USER)
    assert not bad, 'sample_type %#x not handled' % st
    out = {}
    off = 8
    for bit, name in ((S_IDENTIFIER, 'identifier'), (S_IP, 'ip'), (S_TID, 'pidtid'),
                      (S_TIME, 'time'), (S_ADDR, 'addr'), (S_ID, 'id'),
                      (S_STREAM_ID, 'stream_id'), (S_CPU, 'cpu'), (S_PERIOD, 'period')):
        if st & bit:
            out[name], = struct.unpack_from('<Q', raw, off)
            off += 8
    if 'pidtid' in out:
        out['pid'], out['tid'] = out['pidtid'] & 0xffffffff, out['pidtid'] >> 32
    if st & S_CALLCHAIN:
        nr, = struct.unpack_from('<Q', raw, off)
        out['callchain'] = (off, nr)
        off += 8 + 8 * nr
    regs = {}
    if st & S_REGS_USER:
        abi, = struct.unpack_from('<Q', raw, off)
        off += 8
        if abi:
            for i in range(64):
                if attr['regs_user'] & (1 << i):
                    regs[i], = struct.unpack_from('<Q', raw, off)
                    off += 8
    out['regs'] = regs
    if st & S_STACK_USER:
        size, = struct.unpack_from('<Q', raw, off)
        off += 8
        dyn = 0
        if size:
            dyn, = struct.unpack_from('<Q', raw, off + size)
        out['stack'] = (off, dyn)
    return out

