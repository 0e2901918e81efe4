# SPDX-License-Identifier: GPL-2.0
"""scripts/guest/run.sh itself: setup failures are explained and exit 125;
the guest script's exit status and files come back (one short boot); a
KVM that opens but cannot boot falls back to TCG (a fake qemu)."""
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


# A qemu that behaves like the ones on nested-virtualization hosts: the
# "-machine none" probe passes, every KVM boot fails before the guest
# kernel prints anything (FAKE_KVM: msr aborts, paused reports a KVM
# internal error and sits there, silent just sits there); under TCG it
# "boots": one console line, and a results tar on the virtio-serial
# chardev with the script's status 7; FAKE_TCG_OOPS: multi-threaded TCG
# oopses instead, as the guest kernel sometimes does there.
FAKE_QEMU = r'''#!/usr/bin/python3
import io, os, sys, tarfile
args = sys.argv[1:]
if '--version' in args:
    print('QEMU emulator version 7.2.99 (fake)')
    sys.exit(0)
if '-machine' in args:
    sys.stdin.read()
    sys.exit(0)
accel = args[args.index('-accel') + 1]
with open(os.environ['FAKE_QEMU_LOG'], 'a') as log:
    log.write(accel + '\n')
if accel == 'kvm':
    mode = os.environ.get('FAKE_KVM', 'msr')
    if mode == 'msr':
        sys.stderr.write('qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69\n'
                         'qemu-system-x86_64: kvm_buf_set_msrs: Assertion failed.\n')
        sys.exit(134)
    if mode == 'paused':
        sys.stderr.write('KVM internal error. Suberror: 1\nemulation failure\n')
        sys.stderr.flush()
    import time
    time.sleep(600)
serial = args[args.index('-serial') + 1].split(':', 1)[1]
with open(serial, 'w') as f:
    f.write('guest: 7.2.13 (fake), 2 CPUs\n')
    if accel == 'tcg,thread=multi' and os.environ.get('FAKE_TCG_OOPS'):
        f.write('Oops: int3: 0000 [#1] SMP NOPTI\nRIP: 0010:__schedule+0x1a2/0x1530\n')
        sys.exit(0)
chardev = [a for a in args if a.startswith('file,id=results,')][0]
path = chardev.split('path=', 1)[1]
with tarfile.open(path, 'w') as t:
    for name, data in (('guest-status', b'7\n'), ('guest.log', b'')):
        ti = tarfile.TarInfo('./' + name)
        ti.size = len(data)
        t.addfile(ti, io.BytesIO(data))
'''


class KvmFallback(unittest.TestCase):
    """/dev/kvm opens and the probe passes, but the boot aborts (nested
    virtualization): the first boot falls back to TCG, says why once,
    and later boots on this machine go to TCG at once."""

    @classmethod
    def setUpClass(cls):
        # One base initramfs for all cases; each case has its own state.
        cls.cache = tempfile.mkdtemp(prefix='guest-kvm-cache.')

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.cache, ignore_errors=True)

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix='guest-kvm.')
        self.qemu = os.path.join(self.tmp, 'qemu')
        with open(self.qemu, 'w') as f:
            f.write(FAKE_QEMU)
        os.chmod(self.qemu, 0o755)
        self.log = os.path.join(self.tmp, 'qemu.log')
        self.kvm = os.path.join(self.tmp, 'kvm')
        self.kernel = os.path.join(self.tmp, 'vmlinuz')
        for f in (self.kvm, self.kernel):
            open(f, 'w').close()
        self.script = os.path.join(self.tmp, 's.sh')
        with open(self.script, 'w') as f:
            f.write('exit 7\n')
        self.env = dict(QEMU=self.qemu, FAKE_QEMU_LOG=self.log,
                        GUEST_KVM_DEV=self.kvm, GUEST_KERNEL=self.kernel,
                        CACHE_DIR=self.cache,
                        GUEST_ACCEL_STATE=os.path.join(self.tmp, 'accel'),
                        GUEST_LOCK=os.path.join(self.tmp, 'lock'))
        self.env.pop('GUEST_ACCEL', None)
        common.need(common.PERF)

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def boots(self):
        with open(self.log) as f:
            return f.read().split()

    def run_guest(self, **env):
        e = dict(self.env, **env)
        saved = os.environ.pop('GUEST_ACCEL', None)
        try:
            return runner(['-o', os.path.join(self.tmp, 'out'), self.script], **e)
        finally:
            if saved is not None:
                os.environ['GUEST_ACCEL'] = saved

    def test_falls_back_and_remembers(self):
        r = self.run_guest()
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['kvm', 'tcg,thread=multi'])
        self.assertIn('a KVM boot died before the guest kernel started: qemu exited 134: '
                      'qemu-system-x86_64: error: failed to set MSR 0x10a', r.stderr)
        self.assertEqual(r.stderr.count('accelerator tcg,thread=multi from now on'), 1)

        r = self.run_guest()
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['kvm', 'tcg,thread=multi', 'tcg,thread=multi'])
        self.assertIn('guest: accelerator tcg,thread=multi (remembered in ', r.stderr)
        self.assertIn('failed to set MSR', r.stderr)

    def test_paused_kvm_falls_back(self):
        r = self.run_guest(FAKE_KVM='paused')
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['kvm', 'tcg,thread=multi'])
        self.assertIn('qemu reported: KVM internal error', r.stderr)

    def test_silent_kvm_falls_back(self):
        r = self.run_guest(FAKE_KVM='silent', GUEST_KVM_PROBE='2')
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['kvm', 'tcg,thread=multi'])
        self.assertIn('nothing on the console after 2s', r.stderr)

    def test_forced_kvm_does_not_fall_back(self):
        r = self.run_guest(GUEST_ACCEL='kvm')
        self.assertEqual(r.returncode, 125, r.stderr)
        self.assertEqual(self.boots(), ['kvm'])
        self.assertIn('guest: accelerator kvm (GUEST_ACCEL)', r.stderr)
        self.assertIn('failed to set MSR', r.stderr)
        self.assertFalse(os.path.exists(self.env['GUEST_ACCEL_STATE']))

    def test_forced_tcg(self):
        r = self.run_guest(GUEST_ACCEL='tcg')
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['tcg'])

    def test_oops_boots_again_single_threaded(self):
        os.unlink(self.kvm)
        r = self.run_guest(FAKE_TCG_OOPS='1')
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['tcg,thread=multi', 'tcg,thread=single'])
        self.assertIn('Oops: int3', r.stderr)
        self.assertIn('oopsed (try 1 of 3), booting again (tcg,thread=single)', r.stderr)

    def test_oops_with_forced_accel_keeps_it(self):
        r = self.run_guest(FAKE_TCG_OOPS='1', GUEST_ACCEL='tcg,thread=multi')
        self.assertEqual(r.returncode, 126, r.stderr)
        self.assertEqual(self.boots(), ['tcg,thread=multi'] * 3)

    def test_no_kvm_device(self):
        os.unlink(self.kvm)
        r = self.run_guest()
        self.assertEqual(r.returncode, 7, r.stderr)
        self.assertEqual(self.boots(), ['tcg,thread=multi'])
        self.assertIn('is not usable', r.stderr)


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
