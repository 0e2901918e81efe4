# SPDX-License-Identifier: GPL-2.0
"""The man pages this area touches build with asciidoc and xmlto."""
import os
import shutil
import tempfile
import unittest

import common
from common import TREE, run

PAGES = ['perf-record', 'perf-report', 'perf-script', 'perf-script-python',
         'perf-inject', 'perf-top', 'perf-config']
DOC = os.path.join(TREE, 'tools', 'perf', 'Documentation')


class ManPages(unittest.TestCase):
    def test_build(self):
        common.need(os.path.join(DOC, 'Makefile'))
        for tool in ('asciidoc', 'xmlto'):
            if not shutil.which(tool, path='/usr/bin:/bin'):
                raise unittest.SkipTest('%s missing (scripts/install-deps.sh)' % tool)
        out = tempfile.mkdtemp(prefix='perf-man-')
        try:
            # /usr/bin/asciidoc needs Debian's python3, not another first in PATH.
            env = dict(os.environ, PATH='/usr/bin:/bin')
            targets = [os.path.join(out, p + '.1') for p in PAGES]
            run(['make', '-s', '-j2', '-C', DOC, 'OUTPUT=' + out + '/'] + targets, env=env)
            for page, target in zip(PAGES, targets):
                with open(target) as f:
                    text = f.read()
                self.assertIn('.TH', text, page)
            with open(os.path.join(out, 'perf-inject.1')) as f:
                self.assertIn('merge\\-callchains', f.read())
            with open(os.path.join(out, 'perf-config.1')) as f:
                self.assertIn('defer\\-window', f.read())
        finally:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == '__main__':
    unittest.main()
