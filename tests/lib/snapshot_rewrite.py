# SPDX-License-Identifier: GPL-2.0
"""Deferred callchains from --call-graph dwarf recordings: a real
recording rewritten as one whose records never came (each sample keeps
its user regs and stack, the snapshot the stitcher falls back to), and the
frame pointer walk that fallback does."""
import struct

from perf_abi import (CONTEXT_USER, CONTEXT_USER_DEFERRED, FINISHED_ROUND,
                      F_DEFER_CALLCHAIN, F_DEFER_OUTPUT, F_SAMPLE_ID_ALL,
                      HEADER_ATTR, SAMPLE, X86_REG_BP, X86_REG_IP, X86_REG_SP)
from perfdata_reader import Recording, sample_fields
from perfdata_writer import Evsel, Writer


def fp_walk(regs, stack, max_frames=512):
    """The frame pointer walk of perf's deferred-callchain fallback
    (dc__walk_snapshot()): the user IPs it gives for x86_64 @regs and
    @stack (the bytes from SP up)."""
    ip, sp, bp = regs[X86_REG_IP], regs[X86_REG_SP], regs[X86_REG_BP]
    ips = [ip]
    while len(ips) < max_frames:
        if bp < sp or bp & 7 or bp - sp > len(stack) or len(stack) - (bp - sp) < 16:
            break
        nbp, ra = struct.unpack_from('<QQ', stack, bp - sp)
        if not ra:
            break
        ips.append(ra)
        if nbp <= bp:
            break
        bp = nbp
    return ips


SNAPSHOT_REGS = (1 << X86_REG_BP) | (1 << X86_REG_SP) | (1 << X86_REG_IP)


def dwarf_to_deferred(src, dst, cmdline='perf record --call-graph fp,defer,snapshot',
                      regs_mask=None):
    """Rewrite a --call-graph dwarf recording @src (x86_64, one machine) into
    @dst as a fp,defer,snapshot recording whose PERF_RECORD_CALLCHAIN_DEFERRED
    never came: each sample keeps its kernel frames, then
    PERF_CONTEXT_USER_DEFERRED and a cookie of its own; its user regs and
    stack stay, the regs of @regs_mask only when given (SNAPSHOT_REGS: those
    perf record's fp,defer,snapshot asks for).  Returns [(regs, stack
    bytes)] per sample, in file order, with every register recorded."""
    rec = Recording(src)
    evsels = []
    for a in rec.attrs:
        ev = Evsel(ids=a['ids'], type=a['type'], config=a['config'], period=a['period'],
                   sample_type=a['sample_type'], defer=True, defer_output=False,
                   sample_id_all=bool(a['flags'] & F_SAMPLE_ID_ALL),
                   flags=a['flags'] & ~(F_DEFER_CALLCHAIN | F_DEFER_OUTPUT),
                   regs_user=a['regs_user'] if regs_mask is None else
                   a['regs_user'] & regs_mask, stack_user=a['stack_user'])
        evsels.append(ev)
    w = Writer(evsels, cmdline=cmdline)
    snaps = []
    cookie = 1
    for type, misc, raw in rec.events:
        if type == SAMPLE:
            attr = rec.evsel_of(raw)
            f = sample_fields(attr, raw)
            off, nr = f['callchain']
            cc = list(struct.unpack_from('<%dQ' % nr, raw, off + 8))
            if CONTEXT_USER in cc:
                cc = cc[:cc.index(CONTEXT_USER)]
            cc += [CONTEXT_USER_DEFERRED, cookie]
            cookie += 1
            so, size = f['stack']
            # The regs (ABI, values) lie between the callchain and the
            # stack's size field.
            regs = raw[off + 8 + 8 * nr:so - 8]
            if regs_mask is not None and f['regs']:
                regs = regs[:8] + b''.join(struct.pack('<Q', v) for i, v in
                                           sorted(f['regs'].items()) if regs_mask & (1 << i))
            body = raw[8:off] + struct.pack('<%dQ' % (len(cc) + 1), len(cc), *cc) + \
                regs + raw[so - 8:]
            w.add(w.header(SAMPLE, misc, body))
            w.nr_samples += 1
            snaps.append((f['regs'], raw[so:so + size]))
        elif type < HEADER_ATTR or type == FINISHED_ROUND:
            w.add(raw)
    w.save(dst)
    return snaps
