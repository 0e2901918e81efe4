# SPDX-License-Identifier: GPL-2.0
"""External readers: perf script report gecko (Firefox Profiler JSON) on
perf inject --merge-callchains output shows the stacks perf script shows
on the original deferred recording, sample by sample; so does pristine
7.2.13's gecko.py on the merged file, and ours on the original."""
import collections
import os
import subprocess

import gecko_profile
import perf_script
from common import PERF, PERF_UPSTREAM, need, run
from deferred_tools import DEFER, ToolsCase

KERNEL = '(in [kernel.kallsyms])'


class Gecko(ToolsCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.merged = os.path.join(cls.tmp, 'merged.data')
        run([PERF, 'inject', '--merge-callchains', '-i', DEFER, '-o', cls.merged])
        _, samples = perf_script.script(PERF, DEFER, 'tid,time,ip,sym,dso',
                                        ['--ns', '--symfs', cls.symfs,
                                         '--kallsyms', cls.kallsyms])
        cls.nr_samples = len(samples)
        cls.want = collections.Counter(gecko_profile.from_script(samples))

    def report(self, data, name):
        out = self.path(name + '.json')
        run([PERF, 'script', '-i', data] + self.sym_args() +
            ['report', 'gecko', '--save-only', out], cwd=self.tmp)
        return out

    def check(self, path):
        got = collections.Counter(gecko_profile.stacks(path))
        self.assertEqual(got, self.want)
        # what is compared: most samples, with kernel and stitched user frames
        self.assertGreater(sum(got.values()), self.nr_samples * 9 // 10)
        both = sum(n for (_, _, frames), n in got.items()
                   if frames[0].endswith(KERNEL) and
                   any(f.startswith('main ') for f in frames))
        self.assertGreater(both, self.nr_samples // 2)

    def test_merged(self):
        """perf inject --merge-callchains, then the gecko report."""
        self.check(self.report(self.merged, 'merged'))

    def test_merged_pipe(self):
        """perf inject --merge-callchains -o - | perf script report gecko:
        no -i, the pipe on stdin (perf script used to dereference the
        NULL path of such a pipe: SIGSEGV, pristine too)."""
        out = self.path('pipe.json')
        inj = subprocess.Popen([PERF, 'inject', '--merge-callchains', '-i', DEFER, '-o', '-'],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            run([PERF, 'script'] + self.sym_args() + ['report', 'gecko', '--save-only', out],
                stdin=inj.stdout, cwd=self.tmp)
        finally:
            inj.stdout.close()
            inj.wait()
        self.check(out)

    def test_original(self):
        """Our gecko report stitches the original itself."""
        self.check(self.report(DEFER, 'original'))

    def test_upstream_on_merged(self):
        """Pristine perf's gecko.py reads the merged file (its report
        wrapper passes no -i: run the script as it would)."""
        need(PERF_UPSTREAM)
        script = os.path.join(os.path.dirname(os.path.dirname(PERF_UPSTREAM)), 'libexec',
                              'perf-core', 'scripts', 'python', 'gecko.py')
        need(script)
        out = self.path('upstream.json')
        run([PERF_UPSTREAM, 'script', '-i', self.merged] + self.sym_args() +
            ['-s', script, '--', '--save-only', out], cwd=self.tmp)
        self.check(out)
