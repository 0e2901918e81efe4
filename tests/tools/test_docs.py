# SPDX-License-Identifier: GPL-2.0
"""The man pages this area touches build with asciidoc and xmlto, and
render right: every option term under OPTIONS, every config key in its
section, our options documented."""
import os
import re
import shutil
import tempfile
import unittest

import common
from common import TREE, run

PAGES = ['perf-record', 'perf-report', 'perf-script', 'perf-script-python',
         'perf-inject', 'perf-top', 'perf-config', 'perf-sframe', 'perf-data']
DOC = os.path.join(TREE, 'tools', 'perf', 'Documentation')


INSTALLED_MAN = os.path.join(common.BUILD, 'root', 'share', 'man', 'man1')
PRISTINE_DOC = os.path.join(common.PRISTINE, 'tools', 'perf', 'Documentation')
# The options this project adds or changes, per page.
OURS = {
    'record': ['--call-graph'],
    'report': ['--unwind-style', '--stats'],
    'script': ['--merge-callchains', '--deferred-stats', '--unwind-style'],
    'inject': ['--merge-callchains', '--unwind-style'],
    'top': ['--call-graph'],
}


def long_options(perf, cmd):
    r = run([perf, cmd, '-h'], check=False)
    return set(re.findall(r'(?m)^\s+(?:-\w, )?(--[\w-]+)', r.stdout + r.stderr))


def man_terms(page):
    """{--option: set of the sections (.SH) where it is a term} of an
    installed man page (roff: a term is the line after .PP)."""
    with open(os.path.join(INSTALLED_MAN, page + '.1')) as f:
        lines = f.read().split('\n')
    sect, terms = None, {}
    for prev, line in zip([''] + lines, lines):
        m = re.match(r'\.SH "(.*)"', line)
        if m:
            sect = m.group(1)
        if prev == '.PP' and line.startswith('\\-'):
            for o in re.findall(r'\\-\\-((?:\w|\\-)+)', line):
                terms.setdefault('--' + o.replace('\\-', '-'), set()).add(sect)
    return terms


def txt_terms(path):
    """The --options that are terms (lines ending in ::) of an asciidoc page."""
    with open(path) as f:
        return set(re.findall(r'(?m)^(?:-\w[^\n]*?)?(--[\w-]+)[^\n]*::$', f.read()))


class ManStructure(unittest.TestCase):
    """The pages make installs into build/root, as perf help shows them."""

    def test_options_under_options(self):
        for cmd, ours in sorted(OURS.items()):
            page = 'perf-' + cmd
            common.need(os.path.join(INSTALLED_MAN, page + '.1'))
            terms = man_terms(page)
            elsewhere = {t: s for t, s in terms.items() if s != {'OPTIONS'}}
            self.assertEqual(elsewhere, {}, page + ': option terms outside OPTIONS')
            for opt in ours:
                self.assertEqual(terms.get(opt), {'OPTIONS'}, '%s: %s' % (page, opt))
            # Options without a term: only those upstream leaves without one.
            undocumented = long_options(common.PERF, cmd) - set(terms)
            upstream = (long_options(common.PERF_UPSTREAM, cmd) -
                        txt_terms(os.path.join(PRISTINE_DOC, page + '.txt')))
            self.assertEqual(undocumented - upstream, set(), page)

    def test_config_keys_in_their_section(self):
        with open(os.path.join(DOC, 'perf-config.txt')) as f:
            text = f.read()
        sect, misplaced = None, []
        for m in re.finditer(r'(?m)^(\t?)([\w-]+)\.([\w*-]+)::$', text):
            indent, name, key = m.groups()
            if key == '*' and not indent:
                sect = name
            elif indent and name != sect:
                misplaced.append('%s.%s under %s.*' % (name, key, sect))
        self.assertEqual(misplaced, [])


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
            with open(os.path.join(out, 'perf-data.1')) as f:
                text = f.read()
            for opt in ('kallsyms', 'symfs'):
                self.assertIn('\\-\\-' + opt, text)
            for page in ('perf-report', 'perf-script', 'perf-inject',
                         'perf-config'):
                with open(os.path.join(out, page + '.1')) as f:
                    text = f.read()
                self.assertIn('sframe\\-only', text, page)
            self.sframe_page(out, env)
        finally:
            shutil.rmtree(out, ignore_errors=True)

    def sframe_page(self, out, env):
        """perf help sframe shows the page, and the page has the usage and
        every option perf sframe -h lists."""
        man = os.path.join(out, 'man', 'man1')
        os.makedirs(man)
        shutil.copy(os.path.join(out, 'perf-sframe.1'), man)
        env = dict(env, MANPATH=os.path.join(out, 'man'), MANPAGER='cat',
                   PAGER='cat', MANWIDTH='80', HOME=out)
        page = run([common.PERF, 'help', 'sframe'], env=env).stdout
        page = re.sub(r'.\x08', '', page).replace('\u2010', '-')
        self.assertIn('perf-sframe - Show how perf reads the SFrame', page)
        usage = run([common.PERF, 'sframe', '-h'], check=False)
        usage = usage.stdout + usage.stderr
        self.assertIn('perf sframe dump [<options>] <file>...', usage)
        self.assertIn('perf sframe dump [<options>] <file>...', page)
        opts = re.findall(r'^\s+(-\w), (--[\w-]+)', usage, re.M)
        self.assertTrue(opts, usage)
        for short, long in opts:
            self.assertRegex(page, r'(?m)^\s*%s\s*,\s*%s' % (short, long))
        # And the page documents no option perf sframe lacks.
        options = page[page.index('\nOPTIONS'):page.index('\nEXIT STATUS')]
        documented = re.findall(r'(?m)^\s+(?:-\w, )?(--[\w-]+)\s*$', options)
        self.assertEqual(sorted(documented), sorted(o[1] for o in opts))
        # perf alone lists it among the common commands, as the page names it.
        cmds = run([common.PERF], check=False)
        self.assertRegex(cmds.stdout + cmds.stderr,
                         r'(?m)^\s+sframe\s+Show how perf reads the SFrame sections')


if __name__ == '__main__':
    unittest.main()
