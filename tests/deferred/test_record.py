# SPDX-License-Identifier: GPL-2.0
"""perf record with --call-graph ...,defer on this host, and the warning for
a deferred record that does not fit: what perf says and what it records."""
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'lib'))
import common                                   # noqa: E402
from deferred_scenario import KERNEL_TEXT, USER_TEXT, cookie_of  # noqa: E402
from perf_abi import (CONTEXT_KERNEL, CONTEXT_USER_DEFERRED, S_CALLCHAIN,  # noqa: E402
                      S_IP, S_TID, S_TIME)
from perfdata_writer import Evsel, Writer       # noqa: E402

PERF = common.PERF
WORK = ['sh', '-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done']
CANNOT_DEFER = 'The kernel cannot defer user callchains'


class Record(common.PerfTestCase):
    def record(self, cg, name):
        out = os.path.join(self.tmp, name)
        r = common.run([PERF, 'record', '-e', 'cpu-clock', '-c', '100000',
                        '--call-graph', cg, '-o', out, '--'] + WORK, check=False)
        return r, out

    def test_dwarf_defer(self):
        """Found on 1b89e7a: "Incorrect stack dump size: defer"."""
        for cg in ('dwarf,defer', 'dwarf,snapshot'):
            r, _ = self.record(cg, 'dwarf.data')
            self.assertNotEqual(r.returncode, 0)
            self.assertIn('works with fp only', r.stderr)
            self.assertNotIn('Incorrect stack dump size', r.stderr)

    def test_fp_after_config_dump_size(self):
        """fp asks for no stack dump: one set by call-graph.dump-size is
        not a snapshot.  Found on c327179: "snapshot only goes with
        fp,defer" for --call-graph fp."""
        cfg = os.path.join(self.tmp, 'perfconfig')
        with open(cfg, 'w') as f:
            f.write('[call-graph]\n\tdump-size = 4096\n')
        out = os.path.join(self.tmp, 'fp.data')
        r = common.run([PERF, 'record', '-e', 'cpu-clock', '--call-graph', 'fp', '-o', out,
                        '--'] + WORK, check=False, env=dict(os.environ, PERF_CONFIG=cfg))
        self.assertNotIn('snapshot only goes with', r.stderr)
        if r.returncode:
            self.skipTest('perf record cannot run here: %s' % r.stderr[-300:])
        self.assertNotIn('STACK_USER', common.run([PERF, 'evlist', '-v', '-i', out]).stdout)

    def test_snapshot_without_defer(self):
        """On a kernel that cannot defer, fp,defer,snapshot records no
        snapshot: the callchains come whole.  Found on 1b89e7a: every sample
        carried REGS_USER|STACK_USER, 0.87 MB against 0.03 MB for 422
        samples on this host."""
        r, out = self.record('fp,defer,snapshot', 'snap.data')
        if r.returncode:
            self.skipTest('perf record cannot run here: %s' % r.stderr[-300:])
        if CANNOT_DEFER not in r.stderr:
            self.skipTest('this kernel defers: the snapshot is wanted')
        ev = common.run([PERF, 'evlist', '-v', '-i', out]).stdout
        self.assertNotIn('STACK_USER', ev)
        self.assertNotIn('REGS_USER', ev)
        self.assertNotIn('defer_callchain', ev)
        self.assertIn('CALLCHAIN', ev)

    def test_bad_record_reason(self):
        """The warning for a deferred record whose nr does not fit names the
        numbers."""
        w = Writer([Evsel(sample_type=S_IP | S_TID | S_TIME | S_CALLCHAIN,
                          defer=True)], nr_cpus=1)
        k, u = KERNEL_TEXT + 0x1000, USER_TEXT[0]
        w.sample(k, 100, 100, 1000, callchain=[CONTEXT_KERNEL, k, CONTEXT_USER_DEFERRED,
                                               cookie_of(0, 1)])
        w.deferred(cookie_of(0, 1), [u, u + 8], 100, 100, 2000, nr=1000)
        w.finished_round()
        p = w.save(os.path.join(self.tmp, 'bad.data'))
        r = common.run([PERF, 'script', '-i', p])
        self.assertRegex(r.stderr, r'nr 1000 does not fit a record of \d+ bytes')


if __name__ == '__main__':
    unittest.main()
