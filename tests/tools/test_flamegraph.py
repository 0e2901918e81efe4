# SPDX-License-Identifier: GPL-2.0
"""perf script report flamegraph/stackcollapse on a deferred recording,
offline, and the flame graph rendered by headless Chromium."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest

from common import PERF, run
from deferred_tools import ARTIFACTS, DEFER, ToolsCase

CHROMIUM = os.environ.get('CHROMIUM', shutil.which('chromium') or '/usr/bin/chromium')


class FlameGraph(ToolsCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # build/bin/perf is a whole perf (make installs it in build/root):
        # its report scripts and the template it finds are its own.
        cls.env = dict(os.environ)

    def test_stackcollapse(self):
        r = run([PERF, 'script', 'report', 'stackcollapse', '-i', DEFER] + self.sym_args(),
                env=self.env)
        stitched = [line for line in r.stdout.splitlines()
                    if re.match(r'workload;.*main;.*level_a', line)]
        self.assertTrue(stitched, r.stdout[:2000])

    def test_flamegraph_in_chromium(self):
        if not os.access(CHROMIUM, os.X_OK):
            raise unittest.SkipTest('chromium not installed (scripts/install-deps.sh)')
        html = self.path('flamegraph.html')
        r = run([PERF, 'script', 'report', 'flamegraph', '-i', DEFER] + self.sym_args() +
                ['--', '-o', html], env=self.env, stdin=subprocess.DEVNULL)
        with open(html) as f:
            page = f.read()
        self.assertNotIn('cdn.jsdelivr', page)
        self.assertNotIn('https://', page)

        os.makedirs(ARTIFACTS, exist_ok=True)
        shot = os.path.join(ARTIFACTS, 'flamegraph-defer.png')
        profile = tempfile.mkdtemp(prefix='chromium-', dir=self.tmp)
        flags = ['--headless', '--no-sandbox', '--disable-gpu',
                 '--disable-background-networking', '--disable-component-update',
                 '--no-first-run', '--user-data-dir=' + profile,
                 '--virtual-time-budget=5000', '--window-size=1600,1000']
        url = 'file://' + html
        dom = subprocess.run([CHROMIUM] + flags + ['--dump-dom', url], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, text=True, timeout=120).stdout
        subprocess.run([CHROMIUM] + flags + ['--screenshot=' + shot, url],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120,
                       cwd=self.tmp)
        # The rendered graph, not the JSON embedded in the page's script.
        svg = re.search(r'<svg.*</svg>', dom, re.S)
        self.assertIsNotNone(svg, dom[:2000])
        labels = set(re.findall(r'<title>([^<(]*)', svg.group(0)))
        labels = {label.strip() for label in labels}
        for frame in ('main', 'level_a', 'workload'):
            self.assertIn(frame, labels)
        self.assertTrue(os.path.getsize(shot) > 10000)


if __name__ == '__main__':
    unittest.main()
