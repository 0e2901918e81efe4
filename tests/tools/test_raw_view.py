# SPDX-License-Identifier: GPL-2.0
"""perf script --no-merge-callchains (the raw view) prints every
PERF_RECORD_CALLCHAIN_DEFERRED's user IPs, in every event layout.

With -a, or with tracepoints only, the kernel writes the records through
the dummy event (attr.defer_output).  perf script used to skip dummies
when it set up each event type's print options, so when no other event
had the dummy's type (-a -e cycles, -a -e sched:sched_switch) every
record printed as its header and blank lines (pristine 7.2.13 too).
"""
import os
import struct
import subprocess

import common
import deferred_scenario
import perf_dump
import perf_script
from rawchains import raw_view as raw_records
from common import PERF, PERF_UPSTREAM, GUEST_FIXTURES, run

PERF_TYPE_HARDWARE = 0
LAYOUTS = os.path.join(GUEST_FIXTURES, 'layouts')


def retype_first_event(path, type, config):
    """Give the first attr of the perf.data file @path another type and
    config (the sampling event of a generated stream), keeping the rest:
    the dummy then is the only event of its type, as with -a -e cycles."""
    with open(path, 'r+b') as f:
        f.seek(24)                      # perf_file_header.attrs.offset
        off, = struct.unpack('<Q', f.read(8))
        f.seek(off)                     # perf_event_attr.type
        f.write(struct.pack('<I', type))
        f.seek(off + 8)                 # perf_event_attr.config
        f.write(struct.pack('<Q', config))


def record_ips(e):
    """(cookie, (ip, ...)) of a record of perf report -D, from its bytes
    (x86_64: little-endian): pristine perf decodes no record of an event
    without PERF_SAMPLE_CALLCHAIN, the dummy."""
    nr, = struct.unpack_from('<Q', e.raw, 16)
    return e.cookie, struct.unpack_from('<%dQ' % nr, e.raw, 24)


class GeneratedLayouts(common.PerfTestCase):
    """Each layout perf record makes, generated with the records' truth."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.sc = deferred_scenario.scenario(threads=3, samples=300, dup_fraction=0.05,
                                            seed=24)
        cls.truth = sorted((ck, tuple(ips)) for t, _, _, kind, (tid, *p)
                           in cls.sc.events if kind in ('record', 'dup')
                           for ck, ips in [p])

    def layout(self, name, dummy, retype=None):
        path = os.path.join(self.tmp, name + '.data')
        self.sc.write(path, dummy=dummy)
        if retype:
            retype_first_event(path, *retype)
        return path

    def check(self, path):
        got, blank = raw_records(PERF, path)
        self.assertEqual(blank, 0, 'records printed as blank lines')
        self.assertEqual(sorted(got), self.truth)

    def test_per_task(self):
        """cpu-clock, per task: the records ride on the sampling event."""
        self.check(self.layout('task', dummy=False))

    def test_all_cpus_same_type(self):
        """-a -e cpu-clock: the dummy shares the sampling event's type."""
        self.check(self.layout('sw-dummy', dummy=True))

    def test_dummy_alone_in_its_type(self):
        """-a -e cycles (as -a -e TRACEPOINT): the dummy carrying the
        records is the only PERF_TYPE_SOFTWARE event."""
        path = self.layout('hw-dummy', dummy=True, retype=(PERF_TYPE_HARDWARE, 0))
        self.assertIn('cycles', run([PERF, 'evlist', '-i', path]).stdout)
        self.check(path)

    def test_dummy_alone_in_its_type_pipe(self):
        """The same from a pipe, where the attrs come in the stream."""
        path = self.layout('hw-dummy-p', dummy=True, retype=(PERF_TYPE_HARDWARE, 0))
        pipe = os.path.join(self.tmp, 'hw-dummy.pipe')
        with open(pipe, 'wb') as f:
            subprocess.run([PERF, 'inject', '-i', path, '-o', '-'], stdout=f, check=True)
        with open(pipe, 'rb') as f:
            got, blank = raw_records(PERF, '-', stdin=f)
        self.assertEqual(blank, 0)
        self.assertEqual(sorted(got), self.truth)

    def test_user_fields(self):
        """-F given for the dummy's type applies to the records."""
        path = self.layout('hw-dummy-f', dummy=True, retype=(PERF_TYPE_HARDWARE, 0))
        r = run([PERF, 'script', '--no-merge-callchains', '-i', path,
                 '-F', 'sw:tid,ip', '-F', 'hw:tid,ip'])
        ips = [f.addr for s in perf_script.samples(r.stdout, 'tid,ip')
               for f in s.frames]
        want = [ip for _, ips_ in self.truth for ip in ips_]
        self.assertTrue(set(want) <= set(ips))


class RealLayouts(common.PerfTestCase):
    """Real recordings: every record printed with the IPs pristine perf's
    perf report -D shows for it."""
    need_upstream = True

    def check(self, path):
        want = sorted(record_ips(e) for e in
                      perf_dump.dump(PERF_UPSTREAM, path, types=('CALLCHAIN_DEFERRED',)))
        self.assertTrue(want, 'no record in ' + path)
        got, blank = raw_records(PERF, path)
        self.assertEqual(blank, 0)
        self.assertEqual(sorted(got), want)

    def test_all_cpus(self):
        """-a -e cpu-clock (the records on the dummy)."""
        self.check(os.path.join(GUEST_FIXTURES, 'sys-defer.data'))

    def test_per_task(self):
        self.check(os.path.join(GUEST_FIXTURES, 'st-defer.data'))

    def test_tracepoint_all_cpus(self):
        """-a -e sched:sched_switch: the dummy alone in its type (pristine
        perf prints every record of this file as blank lines)."""
        self.check(os.path.join(LAYOUTS, 'tp-defer.data'))

    def test_tracepoint_upstream_blank(self):
        """The fixture shows the upstream bug: pristine perf prints its
        records without their IPs."""
        got, blank = raw_records(PERF_UPSTREAM, os.path.join(LAYOUTS, 'tp-defer.data'))
        self.assertEqual(blank, len(got))
        self.assertGreater(blank, 0)

    def test_user_only_all_cpus(self):
        """-a -e cpu-clock:u: user-mode samples (nr=2) only."""
        self.check(os.path.join(LAYOUTS, 'u-defer.data'))

if __name__ == '__main__':
    unittest.main()
