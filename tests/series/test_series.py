# SPDX-License-Identifier: GPL-2.0
"""`make series`: the overlay as a patch series for upstream, a view of it
that series/manifest orders.  Every overlay item is in exactly one commit
(a new file or .patch added without its manifest line fails here); the
series written to build/series applies with git am to the pristine
sources and ends at exactly build/ours; its patches look like perf's."""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import BUILD, PRISTINE, TOP, TREE, need, run

sys.path.insert(0, os.path.join(TOP, 'scripts'))
import series  # noqa: E402
import overlay as overlay_mod  # noqa: E402

OUT = os.path.join(BUILD, 'series')


class Manifest(unittest.TestCase):
    def overlay_copy(self):
        """A scratch directory, and in it a copy of the overlay (its
        manifest and tools/) to change."""
        need(os.path.join(PRISTINE, '.stamp'))
        tmp = tempfile.mkdtemp(prefix='series-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        top = os.path.join(tmp, 'top')
        shutil.copytree(os.path.join(TOP, 'series'), os.path.join(top, 'series'))
        shutil.copytree(os.path.join(TOP, 'tools'), os.path.join(top, 'tools'))
        return tmp, top

    def test_every_overlay_item_in_one_commit(self):
        _, commits = series.load(TOP)
        self.assertEqual(series.coverage(TOP, commits), [])

    def test_an_item_left_out_is_named(self):
        # What a contributor who adds a file and forgets the manifest sees.
        tmp = tempfile.mkdtemp(prefix='series-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        shutil.copytree(os.path.join(TOP, 'series'), os.path.join(tmp, 'series'))
        shutil.copytree(os.path.join(TOP, 'tools'), os.path.join(tmp, 'tools'))
        new = os.path.join('tools', 'perf', 'util', 'new-module.c')
        open(os.path.join(tmp, new), 'w').close()
        _, commits = series.load(tmp)
        bad = series.coverage(tmp, commits)
        self.assertEqual(len(bad), 1, bad)
        self.assertIn(new, bad[0])

    def test_no_commit_uses_what_a_later_one_adds(self):
        # Short of building every commit: no file includes a header, and
        # no Build line names an object, that only a later commit adds.
        need(os.path.join(PRISTINE, '.stamp'))
        _, commits = series.load(TOP)
        self.assertEqual(series.order_problems(PRISTINE, TOP, commits), [])

    def test_layers_apply_in_series_order(self):
        # An upstream file's change split in two layers (overlay.py
        # split), the new one placed before the rest in the manifest:
        # the same tree as before, and each layer a commit of its own.
        tmp, top = self.overlay_copy()
        item = 'tools/perf/util/data.c.patch'
        overlay = os.path.join(TOP, 'scripts', 'overlay.py')
        run([overlay, 'split', PRISTINE, TREE, top, item, 'test-layer', '1', '2'])
        layer = 'tools/perf/util/data.c@test-layer.patch'
        with open(os.path.join(top, layer)) as f:
            self.assertIn('+static bool perf_data__has_dir_files', f.read())
        with open(os.path.join(top, item)) as f:
            self.assertNotIn('+static bool perf_data__has_dir_files', f.read())
        path = os.path.join(top, series.MANIFEST)
        with open(path) as f:
            text = f.read()
        stanza = 'Message-From: %s\nFiles: %s\n' % (item, item)
        self.assertIn(stanza, text)
        with open(path, 'w') as f:
            f.write(text.replace(stanza, 'Message-From: %s\nFiles: %s\n\n%s'
                                 % (layer, layer, stanza)))
        _, commits = series.load(top)
        self.assertEqual(series.coverage(top, commits), [])
        tree = os.path.join(tmp, 'tree')
        run([overlay, 'apply', PRISTINE, tree, top])
        with open(os.path.join(tree, 'tools/perf/util/data.c'), 'rb') as a, \
             open(os.path.join(TREE, 'tools/perf/util/data.c'), 'rb') as b:
            self.assertEqual(a.read(), b.read())

    def test_split_to_a_file(self):
        # overlay.py split --to FILE (a hunk holding two concepts, split
        # by hand): the file as the new layer leaves it.  The file the
        # hunk split above leaves gives the same two items.
        tmp, top = self.overlay_copy()
        _, top2 = self.overlay_copy()
        item = 'tools/perf/util/data.c.patch'
        overlay = os.path.join(TOP, 'scripts', 'overlay.py')
        run([overlay, 'split', PRISTINE, TREE, top, item, 'test-layer', '1', '2'])
        layer = 'tools/perf/util/data.c@test-layer.patch'
        path = os.path.join(top, series.MANIFEST)
        with open(path) as f:
            text = f.read()
        stanza = 'Message-From: %s\nFiles: %s\n' % (item, item)
        text = text.replace(stanza, 'Message-From: %s\nFiles: %s\n\n%s' % (layer, layer, stanza))
        with open(path, 'w') as f:
            f.write(text)
        with open(os.path.join(top2, series.MANIFEST), 'w') as f:
            f.write(text)
        # data.c as the layers up to the new one leave it
        mid = os.path.join(tmp, 'mid.c')
        work = os.path.join(tmp, 'stack')
        os.mkdir(work)
        stack = overlay_mod.Stack(PRISTINE, top, work)
        for rel in overlay_mod.ordered_items(top):
            stack.add(rel)
            if rel == layer:
                break
        shutil.copyfile(stack.content['tools/perf/util/data.c'], mid)
        run([overlay, 'split', PRISTINE, TREE, top2, item, 'test-layer', '--to', mid])
        for rel in (layer, item):
            with open(os.path.join(top, rel), 'rb') as a, open(os.path.join(top2, rel), 'rb') as b:
                self.assertEqual(a.read(), b.read(), rel)

    def test_an_edit_goes_to_the_last_layer(self):
        # make patches: data.c has two layers (data.c@kcore-dir.patch,
        # then data.c.patch); a hand edit lands in the last one, the
        # earlier one is untouched, and the tree applies as edited.
        tmp, top = self.overlay_copy()
        first = os.path.join(top, 'tools/perf/util/data.c@kcore-dir.patch')
        last = os.path.join(top, 'tools/perf/util/data.c.patch')
        with open(first, 'rb') as f:
            before = f.read()
        overlay = os.path.join(TOP, 'scripts', 'overlay.py')
        tree = os.path.join(tmp, 'tree')
        run([overlay, 'apply', PRISTINE, tree, top])
        with open(os.path.join(tree, 'tools/perf/util/data.c'), 'a') as f:
            f.write('/* a hand edit */\n')
        r = run([overlay, 'patches', PRISTINE, tree, top])
        self.assertIn('tools/perf/util/data.c.patch', r.stdout)
        with open(first, 'rb') as f:
            self.assertEqual(f.read(), before)
        with open(last) as f:
            self.assertIn('+/* a hand edit */', f.read())
        tree2 = os.path.join(tmp, 'tree2')
        run([overlay, 'apply', PRISTINE, tree2, top])
        with open(os.path.join(tree2, 'tools/perf/util/data.c')) as f:
            self.assertTrue(f.read().endswith('/* a hand edit */\n'))

    def test_a_layer_that_does_not_apply_is_named(self):
        tmp, top = self.overlay_copy()
        item = 'tools/perf/util/zstd.c.patch'
        layer = 'tools/perf/util/zstd.c@bogus.patch'
        with open(os.path.join(top, layer), 'w') as f:
            f.write('perf zstd: a layer made for an older zstd.c\n---\n'
                    '--- a/tools/perf/util/zstd.c\n+++ b/tools/perf/util/zstd.c\n'
                    '@@ -1,2 +1,2 @@\n-no such line\n+a new line\n no such context\n')
        path = os.path.join(top, series.MANIFEST)
        with open(path) as f:
            text = f.read()
        stanza = 'Message-From: %s\nFiles: %s\n' % (item, item)
        with open(path, 'w') as f:
            f.write(text.replace(stanza, '%s\nMessage-From: %s\nFiles: %s\n'
                                 % (stanza, layer, layer), 1))
        r = run([os.path.join(TOP, 'scripts', 'overlay.py'), 'apply', PRISTINE,
                 os.path.join(tmp, 'tree'), top], check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn('%s does not apply to what %s leaves of tools/perf/util/zstd.c'
                      % (layer, item), r.stdout + r.stderr)

    def test_subjects_in_perf_style(self):
        """'perf <area>: Verb ...' or 'libperf <area>: ...' (tools/lib/perf
        has its own prefix upstream); after the colon a capital, unless
        the subject starts with a name (has_kcore_dir(), fp,defer,
        --to-json) that keeps its case."""
        _, commits = series.load(TOP)
        for c in commits:
            subject = series.message(TOP, c).splitlines()[0]
            self.assertRegex(subject, r'^(lib)?perf( [\w.-]+)*: ([A-Z]|-|\S*[_(),])',
                             subject)
            self.assertLessEqual(len(subject), 90, subject)


class Series(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        need(os.path.join(PRISTINE, '.stamp'))
        # checkpatch --strict of every patch takes minutes on a busy
        # machine: make series runs it, this test only the series.
        env = dict(os.environ, SERIES_CHECKPATCH='0')
        r = run(['make', '-C', TOP, 'series', 'B=' + BUILD], check=False, env=env)
        cls.log = r.stdout + r.stderr
        if r.returncode:
            raise AssertionError('make series failed:\n' + cls.log[-4000:])
        cls.patches = sorted(glob.glob(os.path.join(OUT, '*.patch')))

    def test_cover_letter_and_one_patch_per_commit(self):
        _, commits = series.load(TOP)
        self.assertEqual(len(self.patches), len(commits) + 1)
        with open(self.patches[0]) as f:
            cover = f.read()
        self.assertNotIn('*** SUBJECT HERE ***', cover)
        self.assertNotIn('*** BLURB HERE ***', cover)
        self.assertRegex(cover, r'Subject: \[PATCH 00/%d\] perf' % len(commits))

    def test_no_signoff(self):
        # The submitter signs off, not the generator.
        for p in self.patches:
            with open(p) as f:
                self.assertNotIn('Signed-off-by:', f.read(), p)

    def test_git_am_onto_pristine_ends_at_tree(self):
        # Again, independently of make series' own check: a clone of
        # its repository at the pristine tag, the patches applied with
        # git am, every file compared with build/ours (diff -r).
        self.assertIn('identical', self.log)
        tmp = tempfile.mkdtemp(prefix='series-')
        self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
        wt = os.path.join(tmp, 'wt')
        env = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@t',
                   GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@t')
        run(['git', 'clone', '-q', '--no-checkout', OUT + '.git', wt], env=env)
        run(['git', '-C', wt, 'checkout', '-q', '--detach', 'pristine'], env=env)
        r = run(['git', '-C', wt, 'am', '-q'] + self.patches[1:], check=False, env=env)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        excl = []
        for g in series.GENERATED:
            excl += ['-x', g]
        r = subprocess.run(['diff', '-r', '-q', '--no-dereference'] + excl + [wt, TREE],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.assertEqual(r.stdout, '')
        self.assertEqual(r.returncode, 0)

    def test_fixes_come_first(self):
        # Upstream bug fixes before the features that build on them.
        names = [re.sub(r'^\d+-', '', os.path.basename(p)) for p in self.patches[1:]]
        self.assertTrue(names[0].startswith('perf-threads-'), names[0])
        first_feature = min(i for i, n in enumerate(names) if n.startswith('perf-sframe-'))
        for i, n in enumerate(names):
            if n.startswith(('perf-threads-', 'perf-thread-', 'perf-cgroup-', 'perf-maps-')):
                self.assertLess(i, first_feature, n)


if __name__ == '__main__':
    unittest.main()
