# SPDX-License-Identifier: GPL-2.0
"""A --call-graph dwarf recording of a corpus binary analysed away from
where it was made: the binaries moved off their recorded paths and found
only under --symfs, or only in a build-id cache filled by perf archive and
unpacked into a --buildid-dir as a user does.  The sframe styles must give
the chains they gave at home, as libdw does, and not read another binary
that now sits at the recorded path."""
import os
import shutil
import subprocess
import unittest

import common
import cpu_record
import perf_counters
import perf_script
import sframe_corpus as corpus

STYLES = ('sframe-only', 'sframe', 'libdw')
# The corpus runs RECORD_MS of CPU time, sampled every 500 us of it
# (cpu_record): half the samples that gives is a floor no load takes away.
RECORD_MS = 300
MIN_SAMPLES = cpu_record.expected(RECORD_MS, 500) // 2


class Elsewhere(common.PerfTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        src = os.path.join(corpus.build(), 'v3')
        cls.home = os.path.join(cls.tmp, 'home')
        os.makedirs(cls.home)
        for name in ('pie', 'libcorpus.so'):
            shutil.copy2(os.path.join(src, name), cls.home)
        # A build-id cache of the recording machine's own, not ~/.debug,
        # so that only what perf archive packs can be found later.
        cache = os.path.join(cls.tmp, 'record-cache')
        cls.data = os.path.join(cls.tmp, 'perf.data')
        corpus.record_dwarf(os.path.join(cls.home, 'pie'), cls.data, RECORD_MS, 16384,
                            pre=['--buildid-dir', cache])
        cls.at_home = {s: cls.script(s, ['--buildid-dir', cache])
                       for s in STYLES}
        cls.dsos, cls.vdso = cls.hit_dsos()

        # build/bin/perf is a whole perf: its perf-archive, which runs
        # the same perf for buildid-list.
        common.run([common.PERF, '--buildid-dir', cache, 'archive', cls.data],
                   cwd=cls.tmp)
        cls.tarball = cls.data + '.tar.bz2'

        # Gone from where they were recorded, and the cache with them.
        cls.moved = os.path.join(cls.tmp, 'moved')
        os.rename(cls.home, cls.moved)
        shutil.rmtree(cache)

    @classmethod
    def script(cls, style, pre=(), post=()):
        r = common.run([common.PERF] + list(pre) +
                       ['script', '-i', cls.data, '-F', 'tid,ip,sym,dso',
                        '--unwind-style', style] + list(post))
        return perf_script.unwound(r.stdout), r.stderr

    @classmethod
    def hit_dsos(cls):
        r = common.run([common.PERF, 'buildid-list', '-i', cls.data,
                        '--with-hits'])
        rows = [line.split(None, 1) for line in r.stdout.splitlines()]
        cls.bids = [f[0] for f in rows if len(f) == 2]
        cls.bid_of = {f[1]: f[0] for f in rows if len(f) == 2}
        return ([f[1] for f in rows if len(f) == 2 and f[1].startswith('/')],
                [f[0] for f in rows if len(f) == 2 and f[1] == '[vdso]'])

    def check_same(self, pre=(), post=(), styles=STYLES, vdso=True):
        for style in styles:
            with self.subTest(style=style):
                home, home_err = self.at_home[style]
                away, err = self.script(style, pre, post)
                self.assertGreaterEqual(len(home), MIN_SAMPLES, cpu_record.too_few(
                    'at home', len(home), RECORD_MS, 500))
                self.assertEqual(len(away), len(home))
                # A chain with a vdso frame anywhere (its first, or one the
                # walk passes through) cannot be unwound where perf has no
                # vdso image: which samples land there is chance.
                diff = [i for i in range(len(home)) if away[i] != home[i] and
                        (vdso or not any(f[1] == '[vdso]' for f in home[i]))]
                self.assertEqual(diff, [], 'first differing sample: %s\nvs\n%s'
                                 % (away[diff[0]], home[diff[0]]) if diff else '')
                in_vdso = any(f[1] == '[vdso]' for c in home for f in c)
                if style != 'libdw' and (vdso or not in_vdso):
                    self.assertEqual(
                        perf_counters.block(err, 'SFrame unwinding'),
                        perf_counters.block(home_err, 'SFrame unwinding'), err)
        # SFrame walked the deep recursion: the file was found.  (A count
        # that failed above, in a subTest, goes on to here: default=0.)
        self.assertGreater(max((len(c) for c in away), default=0), 30)

    def test_home_is_deep(self):
        """At home sframe-only goes through the 30 deep recursion."""
        home, _ = self.at_home['sframe-only']
        self.assertGreaterEqual(len(home), MIN_SAMPLES, cpu_record.too_few(
            'at home', len(home), RECORD_MS, 500, common.PERF, self.data))
        self.assertGreater(max(len(c) for c in home), 30)
        self.assertTrue(any(d.endswith('/home/pie') for d in self.dsos),
                        self.dsos)

    def test_gone(self):
        """Nothing at the path, no symfs, no cache: SFrame has no file, and
        sframe-only gives only the sampled frame."""
        away, _ = self.script('sframe-only',
                              ['--buildid-dir', os.path.join(self.tmp, 'none')])
        # Every sample of the recording, or the bound below holds on none.
        self.assertEqual(len(away), len(self.at_home['sframe-only'][0]))
        self.assertGreaterEqual(len(away), MIN_SAMPLES, cpu_record.too_few(
            'away', len(away), RECORD_MS, 500, common.PERF, self.data))
        self.assertLessEqual(max(len(c) for c in away), 1)

    def test_symfs(self):
        """Every hit binary under --symfs at its recorded path."""
        symfs = os.path.join(self.tmp, 'symfs')
        for path in self.dsos:
            real = path.replace(self.home, self.moved, 1)
            if not os.path.isfile(real):
                continue  # perf's temporary copy of the vdso
            dst = symfs + path
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(real, dst)
            # and its detached debug info (libc6-dbg's, for libc and
            # ld.so): found at home, it adds inline frames to chains
            # through them, which chance puts in some recordings
            bid = self.bid_of.get(path, '')
            dbg = '/usr/lib/debug/.build-id/%s/%s.debug' % (bid[:2], bid[2:])
            if bid and os.path.isfile(dbg):
                os.makedirs(os.path.dirname(symfs + dbg), exist_ok=True)
                shutil.copy2(dbg, symfs + dbg)
        # perf resolves no sample in the vdso under --symfs (with libdw as
        # well): those are left out.
        self.check_same(['--buildid-dir', os.path.join(self.tmp, 'none')],
                        ['--symfs', symfs], vdso=False)

    def unpack(self):
        cache = os.path.join(self.tmp, 'unpacked')
        if not os.path.isdir(cache):
            os.makedirs(cache)
            subprocess.run(['tar', 'xf', self.tarball, '-C', cache],
                           check=True)
        return cache

    def test_perf_archive(self):
        """Only in a build-id cache unpacked from perf archive."""
        self.check_same(['--buildid-dir', self.unpack()])

    def put_other_binaries(self, strip_build_id=False):
        """Other programs with .sframe, laid out otherwise, at the
        recorded paths (removed by cleanup)."""
        os.makedirs(self.home)
        self.addCleanup(shutil.rmtree, self.home)
        other = os.path.join(corpus.build(), 'v3')
        for name, alias in (('nopie', 'pie'), ('static', 'libcorpus.so')):
            dst = os.path.join(self.home, alias)
            shutil.copy2(os.path.join(other, name), dst)
            if strip_build_id:
                subprocess.run(['objcopy', '--remove-section',
                                '.note.gnu.build-id', dst], check=True)

    def other_binary_at_path(self, strip_build_id):
        self.put_other_binaries(strip_build_id)
        self.check_same(['--buildid-dir', self.unpack()])

    def test_perf_archive_other_binary_at_path(self):
        """The same, with other programs at the recorded paths: no
        style may read them (their build IDs differ), libdw's neither,
        which the sframe style falls back to for a frame .sframe has no
        row for."""
        self.other_binary_at_path(strip_build_id=False)

    def test_perf_archive_other_binary_without_build_id(self):
        """The same, the other programs without a build ID note: the
        binary that ran had the recorded one, so these are not it."""
        self.other_binary_at_path(strip_build_id=True)

    def test_other_binary_at_path_checked_once(self):
        """Other programs at the recorded paths and no cache: no file
        holds the code, and each one's build ID is read once, not again
        for every sample that reaches it."""
        self.put_other_binaries()
        none = os.path.join(self.tmp, 'none')
        for style in ('libdw', 'sframe'):
            with self.subTest(style=style):
                away, err = self.script(style, ['--buildid-dir', none], ['-v'])
                self.assertGreaterEqual(len(away), MIN_SAMPLES)
                refused = [line for line in err.splitlines()
                           if 'not the binary recorded' in line]
                # One of the two, or both: which one a walk reaches
                # first is where the samples fell.
                self.assertIn(len(refused), (1, 2), err[-2000:])
                self.assertEqual(len(set(refused)), len(refused),
                                 'a file checked more than once: %s' % refused)

if __name__ == '__main__':
    unittest.main()
