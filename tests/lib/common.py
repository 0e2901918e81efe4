# SPDX-License-Identifier: GPL-2.0
"""Paths and small helpers shared by the host-side tests."""
import gzip
import os
import shutil
import subprocess
import tempfile
import unittest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))
BUILD = os.environ.get('B', os.path.join(TOP, 'build'))
if not os.path.isabs(BUILD):
    BUILD = os.path.join(TOP, BUILD)
PERF = os.environ.get('PERF', os.path.join(BUILD, 'bin', 'perf'))
# Pristine perf in a directory of its own: perf runs its sub-commands
# from the directory it was run from (see the Makefile).
PERF_UPSTREAM = os.environ.get('PERF_UPSTREAM', os.path.join(BUILD, 'upstream', 'bin', 'perf'))
TREE = os.path.join(BUILD, 'ours')
PRISTINE = os.path.join(BUILD, 'pristine')
FIXTURES = os.path.join(TOP, 'tests', 'fixtures')
REAL = os.path.join(FIXTURES, 'real-7.2')
GUEST_FIXTURES = os.path.join(FIXTURES, 'guest-7.2')


def run(cmd, check=True, **kw):
    """Run a command, return CompletedProcess with text stdout/stderr."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors='replace', **kw)
    if check and r.returncode != 0:
        raise AssertionError('%s exited %d\nstderr:\n%s' %
                             (' '.join(cmd), r.returncode, r.stderr[-4000:]))
    return r


def gunzip(src, dst):
    with gzip.open(src, 'rb') as f, open(dst, 'wb') as o:
        shutil.copyfileobj(f, o)
    return dst


def kallsyms(tmpdir):
    """The guest's /proc/kallsyms for the real fixtures, unpacked."""
    out = os.path.join(tmpdir, 'kallsyms')
    if not os.path.exists(out):
        gunzip(os.path.join(REAL, 'guest-kallsyms.gz'), out)
    return out


def guest_symbols(tmpdir, fixtures=GUEST_FIXTURES):
    """What names the frames of the guest recordings kept in @fixtures
    (tests/fixtures/guest-7.2, or its harsh/): (the guest's kallsyms, a
    --buildid-dir holding their dwork)."""
    syms = gunzip(os.path.join(fixtures, 'guest-kallsyms.gz'),
                  os.path.join(tmpdir, 'guest-kallsyms'))
    dwork = gunzip(os.path.join(fixtures, 'dwork.gz'), os.path.join(tmpdir, 'dwork'))
    bid = os.path.join(tmpdir, 'buildid')
    run([PERF, '--buildid-dir', bid, 'buildid-cache', '-a', dwork])
    return syms, bid


def need(path):
    if not os.path.exists(path):
        raise unittest.SkipTest('%s missing (run make first)' % path)


def need_tools(*tools):
    """Skip unless each of @tools is in PATH."""
    for tool in tools:
        if not shutil.which(tool):
            raise unittest.SkipTest('%s missing' % tool)


class PerfTestCase(unittest.TestCase):
    """Tests of our perf (skipped when it is not built, or, with
    need_upstream, when perf-upstream is not) sharing a temporary
    directory, cls.tmp, removed when the class is done, also when a
    subclass's setUpClass() fails after this one."""
    need_upstream = False

    @classmethod
    def setUpClass(cls):
        need(PERF)
        if cls.need_upstream:
            need(PERF_UPSTREAM)
        cls.tmp = tempfile.mkdtemp(prefix=cls.__name__.lower() + '-')
        cls.addClassCleanup(shutil.rmtree, cls.tmp, ignore_errors=True)

    def write(self, name, raw):
        """@raw (bytes) as the file @name in cls.tmp; its path."""
        p = os.path.join(self.tmp, name)
        with open(p, 'wb') as f:
            f.write(raw)
        return p


# perf report's callchain views, every order and mode: the views a
# deferred sample (stitched, late, fallen back, lost) must look right in.
REPORT_VIEWS = [
    ['--children', '-g', 'caller'],
    ['--children', '-g', 'callee'],
    ['--no-children', '-g', 'caller'],
    ['--no-children', '-g', 'callee'],
    ['--children', '-g', 'folded,0,caller'],
    ['--no-children', '-g', 'folded,0,caller'],
    ['--no-children', '-g', 'folded,0,callee'],
]
