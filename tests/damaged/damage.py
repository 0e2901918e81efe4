# SPDX-License-Identifier: GPL-2.0
"""Damage copies of perf.data files the way real files get damaged.

A perf.data file is read as its header, its data section cut into events,
and what follows the data (the feature sections); a pipe-mode file as its
header and the events after it.  Each
function returns the bytes of a damaged copy:

    f = PerfFile(path)
    cut(f, f.data_off + f.data_size // 2)       # a copy that stopped halfway
    killed(f)                                   # perf record killed: size 0
    sample_nr_past_event(f, index)              # one bad callchain nr

Python stdlib only.
"""
import os
import random
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
from perf_abi import FINISHED_ROUND, HEADER_ATTR, HEADER_FEATURE, MMAP2, SAMPLE  # noqa: E402
from perfdata_reader import Recording, sample_fields  # noqa: E402

HDR_SIZE = 104


class PerfFile:
    def __init__(self, path):
        self.path = path
        with open(path, 'rb') as f:
            self.raw = f.read()
        if self.raw[:8] != b'PERFILE2':
            raise ValueError('%s: not a little-endian perf.data file' % path)
        self.pipe = struct.unpack_from('<Q', self.raw, 8)[0] == 16
        if self.pipe:
            self.data_off, self.data_size = 16, len(self.raw) - 16
        else:
            (self.size, self.attr_size, self.attrs_off, self.attrs_size,
             self.data_off, self.data_size) = struct.unpack_from('<6Q', self.raw, 8)
        self.events = []        # (offset, type, size)
        off, end = self.data_off, self.data_off + self.data_size
        while off + 8 <= end:
            typ, misc, size = struct.unpack_from('<IHH', self.raw, off)
            if size < 8:
                break
            self.events.append((off, typ, size))
            off += size

    @property
    def data_end(self):
        return self.data_off + self.data_size

    def samples(self):
        return [e for e in self.events if e[1] == SAMPLE]

    def with_data_size(self, raw, size):
        """raw with the header's data size set to size."""
        return raw[:48] + struct.pack('<Q', size) + raw[56:]

    def without_features(self, raw):
        """raw with the header's feature bitmap cleared."""
        return raw[:72] + bytes(32) + raw[104:]


def cut(f, at, fix_size=False):
    """The file cut at offset at (no feature sections after it).  With
    fix_size the header's data size ends at the cut, as if perf record had
    written its header without feature sections."""
    raw = f.raw[:at]
    if fix_size:
        raw = f.without_features(f.with_data_size(raw, at - f.data_off))
    return raw


def killed(f, at=None):
    """perf record killed: the header's data size is still 0, no feature
    sections were written; the data ends at at (default: the whole data)."""
    at = f.data_end if at is None else at
    return f.with_data_size(f.raw[:at], 0)


def inside_last_event(f, keep=16):
    """Cut keep bytes into the data section's last event, the header's data
    size matching the cut: the SIGBUS of upstream 7.2."""
    off, _, size = [e for e in f.events if e[2] > keep][-1]
    assert keep < size
    return cut(f, off + keep, fix_size=True)


def whole_events_before(f, at):
    """Events wholly in [data_off, at)."""
    return [e for e in f.events if e[0] + e[2] <= at]


def without_feature_event(f, feat):
    """A pipe's events without its feature event feat (HEADER_* number):
    a stream from a tool that does not write it."""
    assert f.pipe
    drop = [e for e in f.events if e[1] == HEADER_FEATURE and
            struct.unpack_from('<Q', f.raw, e[0] + 8)[0] == feat]
    assert len(drop) == 1, drop
    off, _, size = drop[0]
    return f.raw[:off] + f.raw[off + size:]


def patch(raw, off, fmt, *vals):
    b = bytearray(raw)
    struct.pack_into(fmt, b, off, *vals)
    return bytes(b)


class _PipeAttrs:
    """The attrs of a pipe-mode file, from its PERF_RECORD_HEADER_ATTR
    events, as Recording has them."""

    def __init__(self, f):
        self.attrs = []
        for off, typ, size in f.events:
            if typ != HEADER_ATTR:
                continue
            a = off + 8
            (type, asize, config, period, st, _, flags) = struct.unpack_from('<IIQQQQQ', f.raw, a)
            regs_user, stack_user = struct.unpack_from('<QI', f.raw, a + 80)
            n = (size - 8 - asize) // 8
            ids = struct.unpack_from('<%dQ' % n, f.raw, a + asize)
            self.attrs.append(dict(type=type, config=config, period=period,
                                   sample_type=st, flags=flags, ids=ids,
                                   regs_user=regs_user, stack_user=stack_user))

    def evsel_of(self, raw):
        return Recording.evsel_of(self, raw)


def _recording(f):
    if not hasattr(f, '_rec'):
        f._rec = _PipeAttrs(f) if f.pipe else Recording(f.path)
    return f._rec


def sample_callchain(f, ev):
    """(offset in the file, nr) of the callchain nr of sample event ev."""
    rec = _recording(f)
    off, _, size = ev
    raw = f.raw[off:off + size]
    if len(set(a['sample_type'] for a in rec.attrs)) == 1:
        attr = rec.attrs[0]     # one layout: whichever event it is
    else:
        attr = rec.evsel_of(raw)
    fields = sample_fields(attr, raw)
    cc_off, nr = fields['callchain']
    return off + cc_off, nr


def bad_callchain_nr(f, samples, nr=1 << 40):
    """The file with the callchain nr of each sample event in samples set
    to nr: past the event, so that the sample does not parse."""
    raw = f.raw
    for ev in samples:
        off, _ = sample_callchain(f, ev)
        raw = patch(raw, off, '<Q', nr)
    return raw


def truncated_records(f, events, keep=16):
    """The file with each record in events cut to keep bytes (its header's
    size says keep), the rest of its place filled with FINISHED_ROUND
    events so that the framing of the file stays whole."""
    raw = bytearray(f.raw)
    for off, typ, size in events:
        assert keep % 8 == 0 and keep < size
        struct.pack_into('<IHH', raw, off, typ, 0, keep)
        for o in range(off + keep, off + size, 8):
            struct.pack_into('<IHH', raw, o, FINISHED_ROUND, 0, 8)
    return bytes(raw)


def mmap2_filename_bit(f, name, byte, bit):
    """The file with one bit flipped in the file name of the MMAP2 records
    of name (bytes): (raw, the damaged name)."""
    raw = bytearray(f.raw)
    new = None
    for off, typ, size in f.events:
        if typ != MMAP2:
            continue
        i = f.raw.find(name + b'\0', off + 8, off + size)
        if i < 0:
            continue
        raw[i + byte] ^= 1 << bit
        new = bytes(raw[i:i + len(name)])
    assert new is not None, name
    return bytes(raw), new


COMPRESSED, COMPRESSED2 = 81, 83


def feature_section(f, feat):
    """(offset, size) of the file's feature section feat (HEADER_*), from
    the table after the data that has one entry per bit of the header's
    feature bitmap."""
    bits = int.from_bytes(f.raw[72:104], 'little')
    assert bits & (1 << feat), feat
    n = bin(bits & ((1 << feat) - 1)).count('1')
    return struct.unpack_from('<QQ', f.raw, f.data_end + 16 * n)


# The sample_type bits damage_sample_type() flips: every field a sample
# can have (PERF_SAMPLE_*).
SAMPLE_TYPE_BITS = {'IP': 0, 'TID': 1, 'TIME': 2, 'ADDR': 3, 'READ': 4, 'CALLCHAIN': 5,
                    'ID': 6, 'CPU': 7, 'PERIOD': 8, 'STREAM_ID': 9, 'RAW': 10,
                    'BRANCH_STACK': 11, 'REGS_USER': 12, 'STACK_USER': 13, 'WEIGHT': 14,
                    'DATA_SRC': 15, 'IDENTIFIER': 16, 'TRANSACTION': 17, 'REGS_INTR': 18,
                    'PHYS_ADDR': 19, 'AUX': 20, 'CGROUP': 21, 'DATA_PAGE_SIZE': 22,
                    'CODE_PAGE_SIZE': 23, 'WEIGHT_STRUCT': 24}


def attrs(f):
    """[(file offset of the attr, its sample_type, ids offset, ids size)]."""
    out = []
    for off in range(f.attrs_off, f.attrs_off + f.attrs_size, f.attr_size):
        st, = struct.unpack_from('<Q', f.raw, off + 24)
        ids_off, ids_size = struct.unpack_from('<QQ', f.raw, off + f.attr_size - 16)
        out.append((off, st, ids_off, ids_size))
    return out


def sample_type_bit(f, attr, bit):
    """attr's sample_type with bit (a name of SAMPLE_TYPE_BITS) flipped:
    its samples lack a field it says they have, or have one it does not
    name."""
    off, st, _, _ = attrs(f)[attr]
    return patch(f.raw, off + 24, '<Q', st ^ (1 << SAMPLE_TYPE_BITS[bit]))


def ids_zeroed(f, which=None):
    """The ids sections of the attrs in which (default: all) zeroed: the
    samples' ids are no attr's."""
    raw = f.raw
    for i, (_, _, ids_off, ids_size) in enumerate(attrs(f)):
        if which is None or i in which:
            raw = raw[:ids_off] + bytes(ids_size) + raw[ids_off + ids_size:]
    return raw


def ids_flipped(f, attr, bit=3):
    """One bit flipped in each id of attr's ids section."""
    raw = bytearray(f.raw)
    _, _, ids_off, ids_size = attrs(f)[attr]
    for o in range(ids_off, ids_off + ids_size, 8):
        raw[o] ^= 1 << bit
    return bytes(raw)


def odd_size_record(f, index, size=84):
    """A HEADER_FEATURE record of size bytes (not a multiple of 8, as perf
    before COMPRESSED2 wrote PERF_RECORD_COMPRESSED) inserted after the
    data's event index: every event after it sits at an address that is not
    8-byte aligned.  Its feature is HEADER_OSRELEASE, a string; the data
    size and the feature sections' offsets move with it."""
    assert not f.pipe and size % 8 and size >= 24
    text = b'odd-size'.ljust(size - 20, b'\0')
    rec = struct.pack('<IHHQI', HEADER_FEATURE, 0, size, 4, len(text)) + text
    assert len(rec) == size
    off = f.events[index][0] + f.events[index][2]
    raw = f.raw[:off] + rec + f.raw[off:]
    raw = f.with_data_size(raw, f.data_size + size)
    bits = int.from_bytes(f.raw[72:104], 'little')
    table = f.data_end + size
    for n in range(bin(bits).count('1')):
        sec_off = struct.unpack_from('<Q', raw, table + 16 * n)[0]
        raw = patch(raw, table + 16 * n, '<Q', sec_off + size)
    return raw


# Damaged metadata around the data section (test_metadata.py, the fuzz
# seeds of fuzz/mkseeds-perf-data.py).

class FeatFile:
    """A perf.data file's header, feature bitmap and feature table."""

    def __init__(self, path):
        with open(path, 'rb') as f:
            self.raw = f.read()
        assert self.raw[:8] == b'PERFILE2'
        (self.size, self.attr_size, self.attrs_off, self.attrs_size,
         self.data_off, self.data_size) = struct.unpack_from('<6Q', self.raw, 8)
        bitmap = int.from_bytes(self.raw[72:104], 'little')
        self.bits = [b for b in range(256) if bitmap >> b & 1]
        self.feat_off = self.data_off + self.data_size
        self.sections = {b: struct.unpack_from('<QQ', self.raw, self.entry(i))
                         for i, b in enumerate(self.bits)}

    def entry(self, i):
        """File offset of the table's i-th entry."""
        return self.feat_off + 16 * i

    def entry_of(self, feat):
        return self.entry(self.bits.index(feat))

    def with_bitmap(self, bits):
        raw = bytearray(self.raw)
        raw[72:104] = sum(1 << b for b in bits).to_bytes(32, 'little')
        return bytes(raw)


def garbage_section(f, feat, seed=25):
    """Section feat's bytes replaced by random bytes."""
    off, size = f.sections[feat]
    rnd = random.Random(seed)
    return f.raw[:off] + bytes(rnd.randrange(256) for _ in range(size)) + f.raw[off + size:]


def section_size(f, feat, size):
    """Section feat's table entry says size bytes."""
    return patch(f.raw, f.entry_of(feat) + 8, '<Q', size)


def section_offset(f, feat, off):
    """Section feat's table entry says it is at off."""
    return patch(f.raw, f.entry_of(feat), '<Q', off)


def section_u32(f, feat, at, val):
    """The u32 at offset at of section feat set to val."""
    return patch(f.raw, f.sections[feat][0] + at, '<I', val)


def spurious_bit(f, feat):
    """A bit set in the bitmap for a section the table does not have."""
    assert feat not in f.bits
    return f.with_bitmap(f.bits + [feat])


def lost_bit(f, feat):
    """A section of the table whose bit is cleared in the bitmap."""
    return f.with_bitmap([b for b in f.bits if b != feat])


def cut_in_table(f, entries):
    """The file cut after entries entries of the feature table."""
    return f.raw[:f.entry(entries)]


def attr_damage(f):
    """(name, damaged copy) for each kind of damage to the attrs section:
    the header's attr_size, attrs offset and size, the first attr's size
    field, its ids section's offset and size."""
    raw, hdr = f.raw, f.attrs_off
    sz = struct.unpack_from('<I', raw, hdr + 4)[0]
    ids_off, ids_size = struct.unpack_from('<QQ', raw, hdr + sz)
    yield 'attr_size+8', patch(raw, 16, '<Q', f.attr_size + 8)
    yield 'attr_size=144', patch(raw, 16, '<Q', 144)
    yield 'attr_size=0', patch(raw, 16, '<Q', 0)
    yield 'attrs_off+8', patch(raw, 24, '<Q', f.attrs_off + 8)
    yield 'attrs_off=0', patch(raw, 24, '<Q', 0)
    yield 'attrs_size+attr', patch(raw, 32, '<Q', f.attrs_size + f.attr_size)
    yield 'attrs_size=8', patch(raw, 32, '<Q', 8)
    yield 'attr.size=0x1234', patch(raw, hdr + 4, '<I', 0x1234)
    yield 'ids_off+8', patch(raw, hdr + sz, '<Q', ids_off + 8)
    yield 'ids_off=2^40', patch(raw, hdr + sz, '<Q', 1 << 40)
    yield 'ids_size=0', patch(raw, hdr + sz + 8, '<Q', 0)
    yield 'ids_size=7', patch(raw, hdr + sz + 8, '<Q', 7)
    yield 'ids_size=2^30', patch(raw, hdr + sz + 8, '<Q', 1 << 30)
