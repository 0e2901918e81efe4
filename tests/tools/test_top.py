# SPDX-License-Identifier: GPL-2.0
"""perf top --call-graph fp,defer on this host.

The host kernel cannot emit deferred callchains (perf falls back to plain
fp): this checks that perf top takes the option and shows user stacks, and
that perf-upstream's top refuses it.  The stitching path of perf top, on
real PERF_RECORD_CALLCHAIN_DEFERRED records, is checked by
tests/guest/test_guest.py (test_top_*: the top-defer and top-upstream runs
of tests/guest/record.sh in the Linux 7.2 guest) and, on the screens kept
in tests/fixtures/guest-7.2, by tests/guest/test_fixtures.py.
"""
import os
import signal
import subprocess
import tempfile
import time
import unittest

import common
from common import PERF, PERF_UPSTREAM, REAL

WORKLOAD = os.path.join(REAL, 'workload')
# Seconds perf top may take to show a user stack before the test fails.
TOP_MAX = 120


class Top(unittest.TestCase):
    def test_fp_defer_live(self):
        common.need(PERF)
        with tempfile.TemporaryDirectory() as tmp:
            probe = subprocess.run([PERF, 'record', '-o', os.path.join(tmp, 'p.data'),
                                    '-e', 'cpu-clock', '--', 'true'],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if probe.returncode:
                raise unittest.SkipTest('perf_event_open not allowed here')
        # The workload outlives perf top; perf top runs until a screen
        # shows a user stack (its first screens may come before it has
        # loaded symbols, or empty on a busy machine), not for a time:
        # TOP_MAX only bounds a failure.
        work = subprocess.Popen([WORKLOAD, '-s', str(TOP_MAX + 60)],
                                stdout=subprocess.DEVNULL)
        # Into files: perf top --stdio shows nothing through a pipe, and
        # a pipe nobody reads while waiting could fill.
        top = None
        with tempfile.TemporaryFile('w+', errors='replace') as o, \
                tempfile.TemporaryFile('w+', errors='replace') as e:
            try:
                top = subprocess.Popen([PERF, 'top', '--stdio', '--call-graph', 'fp,defer',
                                        '-d', '1', '-e', 'cpu-clock', '-p', str(work.pid)],
                                       stdin=subprocess.DEVNULL, stdout=o, stderr=e,
                                       text=True, errors='replace')
                waited = 0.0
                while waited < TOP_MAX and top.poll() is None:
                    o.seek(0)
                    if 'level_a' in o.read():
                        break
                    time.sleep(0.5)
                    waited += 0.5
                top.send_signal(signal.SIGINT)
                top.wait(timeout=60)
            finally:
                if top and top.poll() is None:
                    top.kill()
                    top.wait()
                work.kill()
                work.wait()
            o.seek(0)
            out = o.read()
            e.seek(0)
            err = e.read()
        self.assertFalse('Usage: perf top' in out + err, 'fp,defer refused')
        self.assertTrue('level_a' in out, 'no user stack shown: %s' % err[-1000:])

    def test_upstream_refuses_defer(self):
        """Pristine 7.2's top parses --call-graph as a report option, which
        knows no "defer" (in the guest it gets defer from the perf config)."""
        common.need(PERF_UPSTREAM)
        r = subprocess.run([PERF_UPSTREAM, 'top', '--stdio', '--call-graph', 'fp,defer',
                            '-p', str(os.getpid())], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           errors='replace', timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('Usage: perf top', r.stdout)


if __name__ == '__main__':
    unittest.main()
