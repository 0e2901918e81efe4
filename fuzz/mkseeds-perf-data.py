#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Cut seed inputs for fuzz/perf-data.c out of perf.data files.

    fuzz/mkseeds-perf-data.py OUTDIR [PERF] NAME=FILE.data [NAME=FILE.data...]
    fuzz/mkseeds-perf-data.py --generated OUTDIR [PERF]

A seed is a whole perf.data file of a few KB: the header and attrs of the
recording as they are, the metadata events its data section starts with
(TIME_CONV, ID_INDEX, EVENT_UPDATE, THREAD_MAP, CPU_MAP; the last COMM
and MMAP2 records, up to META_BUDGET bytes), then whole events up to DATA_BUDGET bytes, and the feature sections
(moved up, their offsets rewritten).  Two per recording: its first events
(NAME-head) and a window from its middle (NAME-mid, where the deferred
records sit among their samples).  With PERF (our perf), each head seed is
also written in pipe mode (NAME-head.pipe: perf inject -o -, attrs and
features as events), with damaged attrs (NAME-head-st-*, -ids-zero,
-attr-size: attr_seeds()), and with damaged feature sections and attrs
section (NAME-head-f-*, -a-*: metadata_seeds()).  --generated writes small files of
tests/lib/deferred_scenario.py: snapshots, cross-endian, -a, two events, pipe.

Python stdlib only.
"""
import os
import struct
import subprocess
import sys

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..')
sys.path.insert(0, os.path.join(TOP, 'tests', 'damaged'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))

import damage   # noqa: E402
from perf_abi import (HEADER_BUILD_ID, HEADER_CMDLINE, HEADER_CPU_TOPOLOGY,  # noqa: E402
                      HEADER_NRCPUS)

DATA_BUDGET = 3584
META_BUDGET = 1536
USER_TYPE_START = 64
SAMPLE = 9
FEATURE_BITS = 256


def features_of(f):
    """The feature index and sections after the data, as (bit, bytes)."""
    bitmap = int.from_bytes(f.raw[72:104], 'little')
    bits = [b for b in range(FEATURE_BITS) if bitmap >> b & 1]
    out = []
    for i, bit in enumerate(bits):
        off, size = struct.unpack_from('<QQ', f.raw, f.data_end + 16 * i)
        out.append((bit, f.raw[off:off + size]))
    return out


def rewrite(f, events):
    """f with only events in its data section, the features moved up."""
    data = b''.join(f.raw[off:off + size] for off, _, size in events)
    head = f.with_data_size(f.raw[:f.data_off], len(data))
    feats = features_of(f)
    at = f.data_off + len(data) + 16 * len(feats)
    index, body = b'', b''
    for _, sec in feats:
        index += struct.pack('<QQ', at + len(body), len(sec))
        body += sec
    return head + data + index + body


def window(events, start, budget):
    out, used = [], 0
    for e in events[start:]:
        if used + e[2] > budget:
            break
        out.append(e)
        used += e[2]
    return out


def metadata(events, budget):
    """The user records (attrs' companions: TIME_CONV, ID_INDEX, maps...)
    and the last kernel records (COMM, MMAP2 of the workload, with -a after
    those of every other task) that fit in budget."""
    keep = [e for e in events if e[1] >= USER_TYPE_START]
    used = sum(e[2] for e in keep)
    for e in reversed([e for e in events if e[1] < USER_TYPE_START]):
        if used + e[2] > budget:
            break
        keep.append(e)
        used += e[2]
    return sorted(keep)


def seeds_of(f):
    first = next((i for i, e in enumerate(f.events) if e[1] == SAMPLE), len(f.events))
    meta = metadata(f.events[:first], META_BUDGET)
    used = sum(e[2] for e in meta)
    yield 'head', rewrite(f, meta + window(f.events, first, DATA_BUDGET - used))
    mid = first + (len(f.events) - first) // 2
    yield 'mid', rewrite(f, meta + window(f.events, mid, DATA_BUDGET - used))


def write(outdir, name, raw):
    with open(os.path.join(outdir, name), 'wb') as out:
        out.write(raw)


def to_pipe(perf, outdir, name):
    src = os.path.join(outdir, name)
    with open(src + '.pipe', 'wb') as out:
        subprocess.run([perf, 'inject', '-i', src, '-o', '-'], stdout=out,
                       stderr=subprocess.DEVNULL, check=True)


def generated(outdir):
    import deferred_scenario
    kinds = {
        'gen-snapshot': (dict(regs_stack=True), {}),
        'gen-cross-endian': ({}, dict(endian='>')),
        'gen-sys': ({}, dict(dummy=True)),
        'gen-two': (dict(two_events=True), {}),
        'gen-missing-dup': (dict(missing_fraction=0.2, dup_fraction=0.2), {}),
        'gen-pipe': ({}, dict(pipe=True)),
        'gen-no-sample-id-all': ({}, dict(sample_id_all=False)),
    }
    for name, (sc_kw, w_kw) in kinds.items():
        sc = deferred_scenario.scenario(threads=2, samples=12, seed=3, **sc_kw)
        deferred_scenario.write_scenario(sc, os.path.join(outdir, name), **w_kw)


def attr_seeds(outdir, name):
    """Damaged attrs of the head seed name (issue 25): a sample_type bit
    its samples lack (PHYS_ADDR, CPU) or one they have cleared (TIME),
    with several attrs their ids sections zeroed, the header's attr_size
    off by 8 (the attrs found by their layout)."""
    f = damage.PerfFile(os.path.join(outdir, name))
    write(outdir, name + '-st-phys', damage.sample_type_bit(f, 0, 'PHYS_ADDR'))
    write(outdir, name + '-st-cpu', damage.sample_type_bit(f, 0, 'CPU'))
    write(outdir, name + '-st-time', damage.sample_type_bit(f, 0, 'TIME'))
    write(outdir, name + '-attr-size', damage.patch(f.raw, 16, '<Q', f.attr_size + 8))
    if len(damage.attrs(f)) > 1:
        write(outdir, name + '-ids-zero', damage.ids_zeroed(f))
        write(outdir, name + '-st-last', damage.sample_type_bit(f, len(damage.attrs(f)) - 1,
                                                                'IDENTIFIER'))


def metadata_seeds(outdir, name):
    """Damaged feature sections and attrs section of the head seed name
    (issue 25, as tests/damaged/test_metadata.py makes them): a section of
    garbage, one of size 0, an absurd count, an offset past the end, a
    bitmap bit without a section and a section without a bit, the file cut
    inside its table; the attrs section's sizes and offsets off."""
    f = damage.FeatFile(os.path.join(outdir, name))
    if HEADER_CMDLINE in f.bits:
        write(outdir, name + '-f-cmdline', damage.garbage_section(f, HEADER_CMDLINE))
        write(outdir, name + '-f-lost-bit', damage.lost_bit(f, HEADER_CMDLINE))
    if HEADER_NRCPUS in f.bits:
        write(outdir, name + '-f-nrcpus0', damage.section_size(f, HEADER_NRCPUS, 0))
        write(outdir, name + '-f-past-end',
              damage.section_offset(f, HEADER_NRCPUS, len(f.raw) + 4096))
    if HEADER_CPU_TOPOLOGY in f.bits:
        write(outdir, name + '-f-topology',
              damage.section_u32(f, HEADER_CPU_TOPOLOGY, 0, 1 << 24))
    if HEADER_BUILD_ID not in f.bits:
        write(outdir, name + '-f-spurious-bit', damage.spurious_bit(f, HEADER_BUILD_ID))
    write(outdir, name + '-f-cut-table', damage.cut_in_table(f, len(f.bits) // 2) + bytes(8))
    for kind, raw in damage.attr_damage(f):
        if kind in ('attrs_off+8', 'attrs_size+attr', 'ids_off+8', 'ids_size=0'):
            write(outdir, '%s-a-%s' % (name, kind.replace('+', '-plus-')), raw)


def main(argv):
    gen = argv[:1] == ['--generated']
    if gen:
        argv = argv[1:]
    if not argv:
        raise SystemExit(__doc__)
    outdir = argv[0]
    perf = argv[1] if len(argv) > 1 and '=' not in argv[1] else None
    os.makedirs(outdir, exist_ok=True)
    if gen:
        generated(outdir)
        return
    for arg in argv[2 if perf else 1:]:
        name, path = arg.split('=', 1)
        f = damage.PerfFile(path)
        for kind, raw in seeds_of(f):
            write(outdir, '%s-%s' % (name, kind), raw)
            if perf and kind == 'head':
                to_pipe(perf, outdir, '%s-%s' % (name, kind))
            if kind == 'head':
                attr_seeds(outdir, '%s-%s' % (name, kind))
                metadata_seeds(outdir, '%s-%s' % (name, kind))


if __name__ == '__main__':
    main(sys.argv[1:])
