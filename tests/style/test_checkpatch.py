# SPDX-License-Identifier: GPL-2.0
"""scripts/checkpatch.pl (from the same 7.2.13 sources) on every new file and
every patch of the overlay: no errors, no warnings.

Justified exceptions live in tests/style/checkpatch-exceptions, one per line:
'<overlay path> <checkpatch TYPE> <why>'.
"""
import os
import re
import unittest

import common

EXCEPTIONS = os.path.join(os.path.dirname(__file__), 'checkpatch-exceptions')


def exceptions():
    out = {}
    if os.path.exists(EXCEPTIONS):
        for line in open(EXCEPTIONS):
            line = line.strip()
            if line and not line.startswith('#'):
                path, typ = line.split()[:2]
                out.setdefault(path, set()).add(typ)
    return out


def overlay_files():
    for root, dirs, files in os.walk(os.path.join(common.TOP, 'tools')):
        dirs[:] = [d for d in dirs if d != '__pycache__']
        for f in sorted(files):
            rel = os.path.relpath(os.path.join(root, f), common.TOP)
            if rel.endswith(('.c', '.h', '.patch')):
                yield rel


class CheckPatch(unittest.TestCase):
    def test_overlay_is_checkpatch_clean(self):
        cp = os.path.join(common.PRISTINE, 'scripts', 'checkpatch.pl')
        common.need(cp)
        exc = exceptions()
        bad = []
        n = 0
        for rel in overlay_files():
            n += 1
            args = ['perl', cp, '--no-tree', '--no-summary', '--terse', '--show-types']
            # A patch is headed by its description, as a commit would be.
            args.append('--no-signoff' if rel.endswith('.patch') else '-f')
            # checkpatch treats any file git tracks as source code (-f), even
            # a .patch: hide the repository from it.
            env = dict(os.environ, GIT_DIR=os.devnull)
            r = common.run(args + [rel], check=False, cwd=common.TOP, env=env)
            for line in r.stdout.splitlines():
                m = re.search(r'(ERROR|WARNING|CHECK):(\w+):', line)
                if m and m.group(2) not in exc.get(rel, ()):
                    bad.append(line)
        self.assertGreater(n, 0, 'no overlay C file or patch found')
        self.assertEqual(bad, [], 'checkpatch findings:\n' + '\n'.join(bad))


if __name__ == '__main__':
    unittest.main()
