# SPDX-License-Identifier: GPL-2.0
"""perf test output, parsed in one place: the results of a run (" 25:
Deferred callchains :", then " 25.3: Drop duplicate ... : Ok" per case)
and the cases perf test list names, so that a test compares the cases run
with the cases the suite has, never with a count kept in Python."""
import os
import re

import common

_RESULT = re.compile(r'^\s*(\d+)(\.\d+)?: (.*?)\s*:\s*(Ok|FAILED!|Skip.*)?$')
_LISTED = re.compile(r'^\s*(\d+)(\.\d+)?: (.*?)\s*$')


def results(text):
    """{suite description: [the result of each of its cases, or of the
    suite when it has no cases]} of perf test output."""
    entries = [m.groups() for m in map(_RESULT.match, text.splitlines()) if m]
    out = {}
    for num, sub, desc, res in entries:
        if sub is None:
            cases = [r for n, s, _, r in entries if n == num and s and r]
            out[desc] = cases or [r for n, s, _, r in entries if n == num and r]
    return out


def case_results(text):
    """The result of every case line (" 25.3: ... : Ok") of perf test
    output, in order: what a run of one suite gives, also with -F, which
    prints no suite line."""
    return [m.group(4) for m in map(_RESULT.match, text.splitlines())
            if m and m.group(2) and m.group(4)]


def listed(text):
    """{suite description: [case descriptions]} of perf test list output."""
    out = {}
    names = {}
    for num, sub, desc in (m.groups() for m in map(_LISTED.match, text.splitlines()) if m):
        if sub is None:
            names[num] = desc
            out[desc] = []
        elif num in names:
            out[names[num]].append(desc)
    return out


def tree_cwd():
    """perf test runs from the built tree's tools/perf (the shell tests
    and their lib/ are found from there)."""
    cwd = os.path.join(common.TREE, 'tools', 'perf')
    common.need(cwd)
    return cwd


def cases(perf, name):
    """The cases of suite @name, from perf test list."""
    r = common.run([perf, 'test', 'list', name], cwd=tree_cwd())
    return listed(r.stdout + r.stderr).get(name, [])


def run(perf, names, verbose=False, timeout=900):
    """perf test on the suites matched by @names: (CompletedProcess with
    stderr appended to stdout, results())."""
    common.need(perf)
    args = [perf, 'test'] + (['-v'] if verbose else []) + list(names)
    r = common.run(args, check=False, cwd=tree_cwd(), timeout=timeout)
    r.stdout += r.stderr
    return r, results(r.stdout)
