# SPDX-License-Identifier: GPL-2.0
"""Stitching on the recordings made on a real Linux 7.2.13 kernel
(tests/fixtures/real-7.2), ours side by side with perf-upstream.

defer-st.data: 6756 samples, all with the deferred marker, 1481 type-22
records two of which are exact duplicates (after a FINISHED_ROUND); 673
samples were taken in the unwind path and are timestamped after their own
record, and upstream merges none of them.
"""
import os
import shutil
import unittest

import common
import perf_counters
import perf_dump
import perf_script

DEFER = os.path.join(common.REAL, 'defer-st.data')
FP = os.path.join(common.REAL, 'fp-st.data')


def parse_script(text):
    """perf script output -> [(header line, [frame lines])]."""
    return [(s.head, [f.line for f in s.frames]) for s in perf_script.samples(text)]


class RealRecordings(common.PerfTestCase):
    need_upstream = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        symfs = os.path.join(cls.tmp, 'symfs')
        os.makedirs(os.path.join(symfs, 'in'))
        shutil.copy(os.path.join(common.REAL, 'workload'), os.path.join(symfs, 'in'))
        cls.args = ['--kallsyms', common.kallsyms(cls.tmp), '--symfs', symfs]
        cls.ours = common.run([common.PERF, 'script', '-i', DEFER] + cls.args).stdout
        cls.up = common.run([common.PERF_UPSTREAM, 'script', '-i', DEFER] + cls.args).stdout
        cls.stats = perf_counters.deferred(common.run([common.PERF, 'report', '--stats', '-i', DEFER]).stdout)
        cls.cookies = {e.cookie for e in perf_dump.dump(common.PERF, DEFER,
                                                       types=('CALLCHAIN_DEFERRED',))}

    def test_every_sample_once(self):
        self.assertEqual(len(parse_script(self.ours)), 6756)
        self.assertEqual(len(parse_script(self.up)), 6756)

    def test_every_sample_has_user_frames(self):
        user = [s for s in parse_script(self.ours)
                if any('/in/workload' in f or 'ld-linux' in f or 'libc.so' in f for f in s[1])]
        self.assertEqual(len(user), 6756)
        # Upstream leaves the samples of the unwind path without them.
        up_user = [s for s in parse_script(self.up)
                   if any('/in/workload' in f or 'ld-linux' in f or 'libc.so' in f for f in s[1])]
        self.assertEqual(6756 - len(up_user), 673)

    def test_no_cookie_or_marker_as_frame(self):
        self.assertEqual(len(self.cookies), 1479)
        for hdr, frames in parse_script(self.ours):
            for f in frames:
                addr = int(f.split()[0], 16)
                self.assertNotIn(addr, self.cookies, hdr)
                self.assertLess(addr, 0xfffffffffffffd80 - 0xffff, hdr)
                self.assertNotIn('(cookie)', f)
                self.assertNotIn('user stack lost', f)

    def test_time_order(self):
        times = [float(s.time) for s in perf_script.samples(self.ours)]
        self.assertEqual(times, sorted(times))

    def test_stats(self):
        s = self.stats
        self.assertEqual(s['deferred samples'], 6756)
        self.assertEqual(s['deferred records'], 1479)
        self.assertEqual(s['duplicate records'], 2)
        self.assertEqual(s['malformed records'], 0)
        self.assertEqual(perf_counters.accounted(s), s['deferred samples'])
        self.assertEqual(s['stitched late'], 673)
        self.assertEqual(s['user stack lost'], 0)
        self.assertEqual(s['orphan records'], 0)

    def test_same_user_stacks_as_frame_pointers(self):
        """The deferred and the in-place FP recording of one workload reach the
        same user functions; deferred stacks through the guest's libc (no
        frame pointers) end there, so main is reached a little less often."""
        fp = parse_script(common.run([common.PERF, 'script', '-i', FP] + self.args).stdout)
        ours = parse_script(self.ours)

        def share(samples, fn):
            n = sum(1 for _, fr in samples if any(' %s+' % fn in f for f in fr))
            return n / len(samples)
        for fn in ('main', 'level_a', 'level_b', 'level_c'):
            self.assertGreater(share(ours, fn), 0.80, fn)
            self.assertLess(abs(share(ours, fn) - share(fp, fn)), 0.10, fn)


if __name__ == '__main__':
    unittest.main()
