# SPDX-License-Identifier: GPL-2.0
"""Firefox Profiler (Gecko profile) JSON, as perf script report gecko
writes it (tools/perf/scripts/python/gecko.py), decoded into stacks.

Each thread has its own tables: a sample is [stack, time in ms,
responsiveness]; stackTable rows are [prefix stack, frame] (a stack is
its leaf frame on top of its prefix, None at the root); frameTable rows
start with the location's index in stringTable, a "SYM (in DSO)" string.
gecko.py leaves out the frames that have no symbol, and the samples
left without any frame.

    for (tid, time_ms, frames) in gecko_profile.stacks(path): ...
        frames: ('level_a (in /in/workload)', ...), leaf first
"""
import json


def stacks(path):
    """[(tid, time in ms, (frame string, ...) leaf first)] of every sample
    of every thread of the profile at @path."""
    with open(path) as f:
        doc = json.load(f)
    out = []
    for t in doc['threads']:
        stack_t = t['stackTable']['data']
        frame_t = t['frameTable']['data']
        strings = t['stringTable']
        for stack, time, *_ in t['samples']['data']:
            frames = []
            while stack is not None:
                stack, frame = stack_t[stack]
                frames.append(strings[frame_t[frame][0]])
            out.append((t['tid'], time, tuple(frames)))
    return out


def from_script(samples):
    """What gecko.py makes of perf_script.samples() of -F
    tid,time,ip,sym,dso --ns: the same tuples, samples without a
    symbolized frame left out."""
    out = []
    for s in samples:
        frames = tuple('%s (in %s)' % (f.sym, f.dso) for f in s.frames
                       if f.sym != '[unknown]')
        if frames:
            out.append((s.tid, (s.ns // 1000) / 1000, frames))
    return out
