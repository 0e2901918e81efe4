# SPDX-License-Identifier: GPL-2.0
"""perf as users get it: `make install PREFIX=DIR` (and DESTDIR) through
perf's own install target, and the build tree's perfs, each a whole perf:
its own man pages, exec path (report scripts, perf-archive), tips and
flame graph template, and sub-commands that run the same perf."""
import os
import shutil
import subprocess
import tempfile
import unittest

import common
from common import PERF, PERF_UPSTREAM, TOP, run
from deferred_tools import DEFER, FP, ToolsCase

# What a child `perf` run by a perf script handler is.
CHILD_VERSION = '''import subprocess
def trace_end():
    print("child:", subprocess.check_output(["perf", "--version"]).decode().strip())
'''


def no_tty(cmd, **kw):
    """Run as CI and pipelines do: no terminal on standard input."""
    return run(cmd, stdin=subprocess.DEVNULL, **kw)


class WholePerf:
    """Checks of one installed perf (self.perf), mixed into a case."""

    def help_page(self, cmd):
        env = dict(os.environ, MANPAGER='cat', PAGER='cat', MANWIDTH='100')
        return no_tty([self.perf, 'help', cmd], env=env).stdout

    def test_help_shows_our_pages(self):
        page = self.help_page('record')
        self.assertIn('snapshot[=size]', page)
        page = self.help_page('sframe')
        self.assertIn('perf-sframe - ', page)

    def test_tips(self):
        r = no_tty([self.perf, 'report', '--stdio', '-i', FP] + self.sym_args())
        self.assertNotIn('Cannot load tips.txt', r.stdout)
        self.assertIn('Tip:', r.stdout)

    def test_flamegraph_offline_no_terminal(self):
        # Another perf.data in the working directory: the header must be
        # the -i file's, whichever side of "report" -i is given.
        cwd = tempfile.mkdtemp(dir=self.tmp)
        shutil.copy(FP, os.path.join(cwd, 'perf.data'))
        for args in (['script', 'report', 'flamegraph', '-i', DEFER] + self.sym_args(),
                     ['script', '-i', DEFER] + self.sym_args() + ['report', 'flamegraph']):
            html = os.path.join(cwd, 'flamegraph.html')
            if os.path.exists(html):
                os.unlink(html)
            r = no_tty([self.perf] + args, cwd=cwd)
            self.assertNotIn('download', r.stdout + r.stderr)
            with open(html) as f:
                page = f.read()
            self.assertNotIn('https://', page)
            self.assertIn('defer_callchain = 1', page, 'header not the -i file')
            self.assertIn('"level_a"', page)

    def test_archive(self):
        data = os.path.join(self.tmp, 'archive.data')
        # perf archive packs the DSOs samples hit: a fixed amount of work
        # (tens of ms of CPU) sampled every 100 us of its CPU time, not
        # /bin/true, which may end before cpu-clock fires on a busy
        # machine.
        r = run([self.perf, 'record', '-q', '-o', data, '-e', 'cpu-clock', '-c', '100000',
                 '--', 'sh', '-c', 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'],
                check=False)
        if r.returncode != 0:
            self.skipTest('perf record does not work here: ' + r.stderr[-300:])
        r = run([self.perf, 'archive', data])
        self.assertIn('Now please run', r.stdout + r.stderr)
        tar = run(['tar', '-tjf', data + '.tar.bz2']).stdout
        self.assertIn('.build-id/', tar)

    def test_sub_commands_run_the_same_perf(self):
        handler = os.path.join(self.tmp, 'child.py')
        with open(handler, 'w') as f:
            f.write(CHILD_VERSION)
        want = run([self.perf, '--version']).stdout.strip()
        r = no_tty([self.perf, 'script', '-i', FP, '-s', handler])
        self.assertIn('child: ' + want, r.stdout)


class BuildTree(WholePerf, ToolsCase):
    """build/bin/perf, without make install."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.perf = PERF


class Upstream(ToolsCase):
    """build/upstream/bin/perf runs its own helpers, not ours."""

    def test_sub_commands_run_upstream(self):
        common.need(PERF_UPSTREAM)
        handler = os.path.join(self.tmp, 'child.py')
        with open(handler, 'w') as f:
            f.write(CHILD_VERSION)
        r = no_tty([PERF_UPSTREAM, 'script', '-i', FP, '-s', handler])
        self.assertIn('child: perf version 7.2.13\n', r.stdout)
        r = run([PERF_UPSTREAM, '--exec-path'])
        self.assertNotEqual(r.stdout, run([PERF, '--exec-path']).stdout)


class Installed(WholePerf, ToolsCase):
    """make install PREFIX=DIR, run from DIR."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.prefix = os.path.join(cls.tmp, 'prefix')
        r = run(['make', '-C', TOP, 'install', 'PREFIX=' + cls.prefix], check=False)
        if r.returncode != 0:
            raise AssertionError('make install failed:\n' + r.stdout[-3000:] + r.stderr[-2000:])
        cls.perf = os.path.join(cls.prefix, 'bin', 'perf')

    def test_layout(self):
        for f in ('bin/perf', 'libexec/perf-core/perf-archive',
                  'libexec/perf-core/scripts/python/flamegraph.py',
                  'libexec/perf-core/scripts/python/bin/flamegraph-report',
                  'libexec/perf-core/tests/shell',
                  'share/doc/perf-tip/tips.txt',
                  'share/man/man1/perf-sframe.1', 'share/man/man1/perf-record.1',
                  'share/d3-flame-graph/d3-flamegraph-base.html'):
            self.assertTrue(os.path.exists(os.path.join(self.prefix, f)), f)
        r = run([self.perf, '--exec-path'])
        self.assertEqual(r.stdout.strip(), os.path.join(self.prefix, 'libexec', 'perf-core'))

    def test_destdir(self):
        dest = os.path.join(self.tmp, 'dest')
        run(['make', '-C', TOP, 'install', 'PREFIX=/usr/local', 'DESTDIR=' + dest])
        for f in ('usr/local/bin/perf', 'usr/local/libexec/perf-core/perf-archive',
                  'usr/local/share/man/man1/perf-sframe.1',
                  'usr/local/share/d3-flame-graph/d3-flamegraph-base.html'):
            self.assertTrue(os.path.exists(os.path.join(dest, f)), f)
        r = run([os.path.join(dest, 'usr/local/bin/perf'), '--exec-path'])
        self.assertEqual(r.stdout.strip(), '/usr/local/libexec/perf-core')


if __name__ == '__main__':
    unittest.main()
