# SPDX-License-Identifier: GPL-2.0
"""scripts/guest/run.sh itself: setup failures are explained and exit 125;
the guest script's exit status and files come back (one short boot)."""
import os
import shutil
import subprocess
import tempfile
import unittest

import common

RUNNER = os.path.join(common.TOP, 'scripts', 'guest', 'run.sh')


def runner(args, **env):
    e = dict(os.environ, PERF=common.PERF)
    e.update(env)
    return subprocess.run([RUNNER] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True, errors='replace', env=e)


class Runner(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix='guest-runner.')
        cls.script = os.path.join(cls.tmp, 's.sh')
        with open(cls.script, 'w') as f:
            f.write('cat /work/in.txt > copy.txt\nperf --version > version.txt\nexit 7\n')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_no_qemu(self):
        r = runner([self.script], QEMU='no-such-qemu')
        self.assertEqual(r.returncode, 125)
        self.assertIn('setup failed: no-such-qemu not found', r.stderr)

    def test_no_perf(self):
        r = runner([self.script], PERF='/nonexistent/perf')
        self.assertEqual(r.returncode, 125)
        self.assertIn('/nonexistent/perf not found', r.stderr)

    def test_no_script(self):
        r = runner(['/nonexistent/script'])
        self.assertEqual(r.returncode, 125)
        self.assertIn('not found', r.stderr)

    def test_status_and_files_come_back(self):
        if not shutil.which(os.environ.get('QEMU', 'qemu-system-x86_64')):
            if os.environ.get('CI') == 'true':
                self.fail('qemu-system-x86_64 not found (scripts/install-deps.sh)')
            self.skipTest('qemu-system-x86_64 not found')
        common.need(common.PERF)
        work = os.path.join(self.tmp, 'work')
        os.makedirs(work, exist_ok=True)
        with open(os.path.join(work, 'in.txt'), 'w') as f:
            f.write('round trip\n')
        out = os.path.join(self.tmp, 'out')
        r = runner(['-o', out, '-w', work, '-t', '120', self.script])
        if r.returncode == 125:
            if os.environ.get('CI') == 'true':
                self.fail(r.stderr)
            self.skipTest('guest setup failed: ' + r.stderr[-500:])
        self.assertEqual(r.returncode, 7, r.stderr)
        with open(os.path.join(out, 'copy.txt')) as f:
            self.assertEqual(f.read(), 'round trip\n')
        with open(os.path.join(out, 'version.txt')) as f:
            self.assertIn('perf version 7.2.13', f.read())
        with open(os.path.join(out, 'guest-uname')) as f:
            self.assertIn('7.2.13+deb14-cloud-amd64', f.read())
        self.assertGreater(os.path.getsize(os.path.join(out, 'guest-kallsyms')), 1 << 20)


if __name__ == '__main__':
    unittest.main()
