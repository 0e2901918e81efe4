# SPDX-License-Identifier: GPL-2.0
"""`make deb`: the Debian package of our perf (packaging/debian), built
from the tree make tests, checked by lintian (no error), and inspected
as a user would without installing it over this machine's perf: its
files, its control fields, its perf run from the extracted package on a
real recording, its man pages."""
import glob
import os
import re
import subprocess
import tempfile
import unittest

from common import BUILD, REAL, TOP, kallsyms, need, run
import perf_script

DEB_DIR = os.path.join(BUILD, 'deb')
PKG = 'perf-deferred'


class Deb(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        need(os.path.join(BUILD, 'bin', 'perf'))
        for tool in ('dpkg-buildpackage', 'dh', 'lintian'):
            if not any(os.access(os.path.join(d, tool), os.X_OK)
                       for d in os.environ.get('PATH', '').split(os.pathsep)):
                raise unittest.SkipTest('%s missing (scripts/install-deps.sh)' % tool)
        r = run(['make', '-C', TOP, 'deb', 'B=' + BUILD], check=False)
        if r.returncode:
            raise AssertionError('make deb failed:\n%s\n%s' % (r.stdout[-3000:], r.stderr[-3000:]))
        debs = glob.glob(os.path.join(DEB_DIR, PKG + '_*.deb'))
        assert len(debs) == 1, debs
        cls.deb = debs[0]
        cls.tmp = tempfile.mkdtemp(prefix='deb-')
        cls.root = os.path.join(cls.tmp, 'root')
        run(['dpkg-deb', '-x', cls.deb, cls.root])

    @classmethod
    def tearDownClass(cls):
        subprocess.run(['rm', '-rf', cls.tmp])

    def field(self, name):
        return run(['dpkg-deb', '-f', self.deb, name]).stdout.strip()

    def test_lintian_no_error(self):
        with open(os.path.join(DEB_DIR, 'lintian.log')) as f:
            log = f.read()
        errors = [line for line in log.splitlines() if line.startswith('E:')]
        self.assertEqual(errors, [])

    def test_sits_in_place_of_linux_perf(self):
        for name in ('Provides', 'Conflicts', 'Replaces'):
            self.assertIn('linux-perf', self.field(name), name)
        self.assertEqual(self.field('Package'), PKG)

    def test_depends_from_the_binary(self):
        # dh_shlibdeps: the libraries perf links, not a list kept by hand.
        deps = self.field('Depends')
        for lib in ('libdw1', 'libelf1', 'libzstd1', 'libc6'):
            self.assertRegex(deps, r'\b%s\b' % lib)

    def test_files(self):
        for path in ('usr/bin/perf', 'usr/libexec/perf-core/perf-archive',
                     'usr/libexec/perf-core/scripts/python/flamegraph.py',
                     'usr/share/man/man1/perf-record.1.gz',
                     'usr/share/man/man1/perf-sframe.1.gz',
                     'usr/share/doc/perf-tip/tips.txt',
                     'usr/share/d3-flame-graph/d3-flamegraph-base.html',
                     'usr/share/bash-completion/completions/perf',
                     'usr/share/doc/%s/copyright' % PKG):
            self.assertTrue(os.path.exists(os.path.join(self.root, path)), path)
        self.assertFalse(os.path.exists(os.path.join(self.root, 'usr/bin/trace')))
        self.assertFalse(os.path.exists(os.path.join(self.root, 'etc')))

    def test_perf_runs_and_stitches(self):
        perf = os.path.join(self.root, 'usr', 'bin', 'perf')
        self.assertIn('7.2.13', run([perf, 'version']).stdout)
        data = os.path.join(REAL, 'defer-st.data')
        symfs = os.path.join(self.tmp, 'symfs')
        os.makedirs(os.path.join(symfs, 'in'), exist_ok=True)
        run(['cp', os.path.join(REAL, 'workload'), os.path.join(symfs, 'in')])
        args = ['--symfs', symfs, '--kallsyms', kallsyms(self.tmp)]
        samples = perf_script.script(perf, data, 'ip,sym', extra=args)[1]
        self.assertTrue(samples)
        lost = [s for s in samples if any('user stack lost' in f.name for f in s.frames)]
        self.assertEqual(lost, [])
        self.assertTrue(any(any(f.name == 'main' for f in s.frames) for s in samples))

    def test_tips(self):
        # perf report reads tips.txt as it is: not compressed.
        tips = os.path.join(self.root, 'usr/share/doc/perf-tip/tips.txt')
        with open(tips) as f:
            self.assertIn('perf', f.read())

    def test_man_page(self):
        page = os.path.join(self.root, 'usr/share/man/man1/perf-sframe.1.gz')
        env = dict(os.environ, MANPAGER='cat', PAGER='cat', MANWIDTH='100')
        r = run(['man', '-l', page], env=env)
        self.assertIn('perf-sframe - ', re.sub(r'.\x08', '', r.stdout))


if __name__ == '__main__':
    unittest.main()
