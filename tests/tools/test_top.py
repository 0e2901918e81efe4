# SPDX-License-Identifier: GPL-2.0
"""perf top --call-graph fp,defer on this host.

The host kernel cannot emit deferred callchains (perf falls back to plain
fp): this checks that perf top takes the option and shows user stacks.  The
stitching path of perf top is exercised by the qemu 7.2 guest run.
"""
import os
import signal
import subprocess
import tempfile
import time
import unittest

import common
from common import PERF, REAL

WORKLOAD = os.path.join(REAL, 'workload')


class Top(unittest.TestCase):
    def test_fp_defer_live(self):
        common.need(PERF)
        with tempfile.TemporaryDirectory() as tmp:
            probe = subprocess.run([PERF, 'record', '-o', os.path.join(tmp, 'p.data'),
                                    '-e', 'cpu-clock', '--', 'true'],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if probe.returncode:
                raise unittest.SkipTest('perf_event_open not allowed here')
        work = subprocess.Popen([WORKLOAD, '-s', '8'], stdout=subprocess.DEVNULL)
        # Into a file: perf top --stdio shows nothing through a pipe.
        with tempfile.TemporaryFile('w+', errors='replace') as o:
            try:
                time.sleep(0.3)
                top = subprocess.Popen([PERF, 'top', '--stdio', '--call-graph', 'fp,defer',
                                        '-d', '1', '-e', 'cpu-clock', '-p', str(work.pid)],
                                       stdin=subprocess.DEVNULL, stdout=o,
                                       stderr=subprocess.PIPE, text=True, errors='replace')
                time.sleep(4)
                top.send_signal(signal.SIGINT)
                _, err = top.communicate(timeout=30)
            finally:
                work.kill()
                work.wait()
            o.seek(0)
            out = o.read()
        self.assertFalse('Usage: perf top' in out + err, 'fp,defer refused')
        self.assertTrue('level_a' in out, 'no user stack shown: %s' % err[-1000:])


if __name__ == '__main__':
    unittest.main()
