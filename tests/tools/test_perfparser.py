# SPDX-License-Identifier: GPL-2.0
"""External readers: hotspot's perfparser knows no
PERF_RECORD_CALLCHAIN_DEFERRED; on perf inject --merge-callchains output
it must see the stacks perf script shows on the original deferred
recording, sample by sample.

Skipped without perfparser ($PERFPARSER, scripts/setup-perfparser.sh's copy
(install-deps.sh makes it), or Debian's hotspot package:
/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser). The package pulls
98 KDE and Qt GUI packages; perfparser alone needs libqt5core5a and
libqt5network5: `apt-get download hotspot; dpkg-deb -x hotspot_*.deb DIR`
and PERFPARSER=DIR/usr/lib/x86_64-linux-gnu/libexec/hotspot-perfparser.

Compared: every frame's address, and the names of the user frames.
Kernel names are not: hotspot 1.3.0's perfparser names some kernel
leaves after another kernel function (144 of the 6,756 samples of the
real 7.2 recording; perf script and the guest's kallsyms agree)."""
import collections
import os
import unittest

import perf_script
import perfparser
from common import PERF, run
from deferred_tools import DEFER, NR_SAMPLES, ToolsCase

KERNEL_MIN = 0xffff800000000000


class PerfParser(ToolsCase):

    @classmethod
    def setUpClass(cls):
        cls.binary = perfparser.find()
        if not cls.binary:
            raise unittest.SkipTest('no perfparser (hotspot); see ' + __file__)
        super().setUpClass()

    def stacks_perfparser(self, data):
        out = self.path(os.path.basename(data) + '.pp')
        perfparser.run(self.binary, data, out, kallsyms=self.kallsyms, sysroot=self.symfs,
                       app=os.path.join(self.symfs, 'in'))
        got, _ = perfparser.samples(out)
        return collections.Counter(
            (s.tid, s.time, tuple(s.addresses),
             tuple(f[0] if f else None for f, a in zip(s.frames, s.addresses)
                   if a < KERNEL_MIN))
            for s in got)

    def stacks_script(self, data):
        _, shown = perf_script.script(PERF, data, 'tid,time,ip,sym,dso',
                                      ['--ns', '--no-inline'] + self.sym_args())
        return collections.Counter(
            (s.tid, s.ns, tuple(f.addr for f in s.frames),
             tuple(None if f.sym == '[unknown]' else f.sym for f in s.frames
                   if f.addr < KERNEL_MIN))
            for s in shown)

    def test_merged(self):
        merged = self.path('merged.data')
        run([PERF, 'inject', '--merge-callchains', '-i', DEFER, '-o', merged])
        want = self.stacks_script(DEFER)
        got = self.stacks_perfparser(merged)
        self.assertEqual(sum(got.values()), NR_SAMPLES)
        self.assertEqual(got, want)
        # the stitched user stacks are there, named
        with_main = sum(n for k, n in got.items() if 'main' in k[3])
        self.assertGreater(with_main, NR_SAMPLES // 2)
