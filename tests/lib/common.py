# SPDX-License-Identifier: GPL-2.0
"""Paths and small helpers shared by the host-side tests."""
import os
import re
import subprocess
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


def run(cmd, check=True, **kw):
    """Run a command, return CompletedProcess with text stdout/stderr."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, errors='replace', **kw)
    if check and r.returncode != 0:
        raise AssertionError('%s exited %d\nstderr:\n%s' %
                             (' '.join(cmd), r.returncode, r.stderr[-4000:]))
    return r


def kallsyms(tmpdir):
    """The guest's /proc/kallsyms for the real fixtures, unpacked."""
    import gzip
    out = os.path.join(tmpdir, 'kallsyms')
    if not os.path.exists(out):
        with gzip.open(os.path.join(REAL, 'guest-kallsyms.gz'), 'rb') as f, \
                open(out, 'wb') as o:
            o.write(f.read())
    return out


def deferred_stats(text):
    """The "Deferred callchains:" section of perf report --stats output, as
    {counter name: value}; {} when there is none."""
    return stats_block(text, 'Deferred callchains')


def stats_block(text, title):
    """The "TITLE:" block of counters of perf report --stats or perf script
    output ("Deferred callchains", "SFrame unwinding"), as {counter name:
    value}; {} when there is none."""
    out = {}
    sect = text.split(title + ':\n', 1)
    for line in (sect[1] if len(sect) == 2 else '').splitlines():
        m = re.match(r'\s+(\S.*?)\s+(\d+)$', line)
        if not m:
            break
        out[m.group(1)] = int(m.group(2))
    return out


def need(path):
    if not os.path.exists(path):
        raise unittest.SkipTest('%s missing (run make first)' % path)


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
