#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Cut seed inputs for fuzz/deferred-stream.c out of perf.data files.

    fuzz/mkseeds.py OUTDIR NAME=FILE.data [NAME=FILE.data...]

Reads a little-endian file-mode perf.data with one sample_type, takes the
events the target knows (SAMPLE, CALLCHAIN_DEFERRED, COMM, MMAP, MMAP2,
EXIT, FORK, LOST, FINISHED_ROUND) in file order, and writes a few windows
of them, each prefixed with the 8-byte setup block matching the file's attr (see the
comment at the top of deferred-stream.c).
"""
import os
import struct
import sys

KEEP = {1, 2, 3, 4, 7, 9, 10, 22, 68}  # MMAP LOST COMM EXIT FORK SAMPLE MMAP2 DEFERRED ROUND
S_TIME, S_ADDR, S_ID, S_CPU, S_PERIOD = 1 << 2, 1 << 3, 1 << 6, 1 << 7, 1 << 8
S_REGS_USER, S_IDENTIFIER = 1 << 12, 1 << 16
WINDOW = 32                     # events per seed
SEEDS_PER_FILE = 6


def read(path):
    with open(path, 'rb') as f:
        buf = f.read()
    if buf[:8] != b'PERFILE2':
        raise SystemExit('%s: not a little-endian file-mode perf.data' % path)
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    if attrs_size < attr_size:
        raise SystemExit('%s: no attr' % path)
    a = attrs_off
    sample_type, = struct.unpack_from('<Q', buf, a + 24)
    flags, = struct.unpack_from('<Q', buf, a + 40)
    stack_user, = struct.unpack_from('<I', buf, a + 88)
    events = []
    off, end = data_off, data_off + data_size
    while off + 8 <= end:
        type, misc, size = struct.unpack_from('<IHH', buf, off)
        if size < 8:
            break
        if type in KEEP:
            events.append(buf[off:off + size])
        off += size
    return sample_type, flags, stack_user, events


def setup(sample_type, flags, stack_user):
    s0 = 0
    if sample_type & S_REGS_USER:
        s0 |= 1
    if not flags & (1 << 18):
        s0 |= 2
    if sample_type & S_IDENTIFIER:
        s0 |= 8
    if sample_type & S_ID:
        s0 |= 16
    if sample_type & S_CPU:
        s0 |= 32
    if sample_type & S_PERIOD:
        s0 |= 64
    s4 = (0 if sample_type & S_TIME else 1) | (2 if sample_type & S_ADDR else 0)
    s5 = min(stack_user // 64, 255) if sample_type & S_REGS_USER else 0
    return bytes([s0, 0, 0, 0, s4, s5, 0, 0])


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    for arg in sys.argv[2:]:
        name, path = arg.split('=', 1)
        sample_type, flags, stack_user, events = read(path)
        head = setup(sample_type, flags, stack_user)
        has22 = [i for i, e in enumerate(events) if e[0] == 22]
        if not has22:
            continue
        step = max(1, len(has22) // SEEDS_PER_FILE)
        for n, k in enumerate(has22[::step][:SEEDS_PER_FILE]):
            start = max(0, k - WINDOW // 2)
            body = b''.join(events[start:start + WINDOW])
            with open(os.path.join(outdir, '%s-%d' % (name, n)), 'wb') as f:
                f.write(head + body)


if __name__ == '__main__':
    main()
