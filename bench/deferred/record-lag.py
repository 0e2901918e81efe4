#!/usr/bin/env python3
"""How many of the bench's samples could go out stitched at once?

The stitcher delivers in time order, so a sample waits, and everything
behind it is held, until its record comes out of ordered_events.  A
record can come much earlier out of the file: ordered_events holds events
until the FINISHED_ROUND after the next one (util/ordered-events.c: a
round flushes up to the previous round's newest time), and a record read
by then is already in memory when its samples go out.

This replays the bench's scenario (bench.py SCENARIO, the same generator
and file order) through that flush rule and counts, for each sample, if
its record was read before the round that delivers the sample: as is,
and with samples kept some rounds more (a look-ahead bounded in time).
It reads no perf.data file; it only models what a look-ahead at records
could save (RESULTS.md, 2026-12-06: less than it seems).

    bench/deferred/record-lag.py 10 3000 50000
"""
import heapq
import os
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
sys.path.insert(0, os.path.join(TOP, 'tests', 'lib'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from deferred_scenario import scenario, _file_order  # noqa: E402
from bench import SCENARIO  # noqa: E402


def replay(events, extra):
    """@events: the file order; @extra: rounds a sample is kept past
    ordered_events' flush."""
    read = set()
    pending = []
    limits = []
    newest = seq = 0
    ahead = total = 0

    def flush(limit):
        nonlocal ahead, total
        while pending and pending[0][0] <= limit:
            _, _, key = heapq.heappop(pending)
            total += 1
            ahead += key in read

    for e in events:
        if e is None:
            if len(limits) > extra:
                flush(limits[-1 - extra])
            limits.append(newest)
            continue
        time, _, _, kind, p = e
        newest = max(newest, time)
        seq += 1
        if kind == 'record':
            read.add((p[0], p[1]))
        elif kind == 'sample':
            heapq.heappush(pending, (time, seq, (p[0], p[2][-1])))
    flush(1 << 62)
    return ahead, total


def main():
    # The scenario's rounds are 5 ms and its records up to 100 ms late.
    extras = (0, 4, 20)
    print('threads  ' + '  '.join('%d rounds more' % x for x in extras))
    for arg in sys.argv[1:] or ['10', '3000', '50000']:
        sc = scenario(threads=int(arg), samples=200000, **SCENARIO)
        events = list(_file_order(sc))
        row = []
        for extra in extras:
            ahead, total = replay(events, extra)
            row.append('%12.1f%%' % (100.0 * ahead / total))
        print('%7s  %s' % (arg, '  '.join(row)))


if __name__ == '__main__':
    main()
