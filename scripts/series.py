#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The overlay as a patch series for upstream: a generated view of it.

  series.py check OVERLAY
      every item of OVERLAY's tools/ in exactly one commit of
      OVERLAY/series/manifest, every item the manifest names present
  series.py build PRISTINE TREE OVERLAY OUT
      a git repository (OUT.git) of PRISTINE's files, one commit per
      stanza of the manifest, each applying its items as overlay.py
      does; git format-patch --cover-letter into OUT; then git am of
      OUT/*.patch onto PRISTINE in a fresh worktree must end at exactly
      TREE (diff -r); checkpatch --strict on each patch, counted.
  series.py builds PRISTINE OUT [FIRST [LAST]]
      after build: each commit of OUT.git checked out in turn (git
      touches only what it changes) and perf built with WERROR=1 in one
      object directory, so each build is incremental; where perf test
      has this series' suites, they run; a line per commit in
      OUT/builds.log, nonzero exit when one fails.

The overlay stays the one source of truth (CONTRIBUTING.md): the
manifest only says which commit carries each of its items, in which
order, with which message.  The output is the same for the same overlay
commit: author and dates are fixed (SERIES_AUTHOR, default the
repository's git identity; the date of the overlay's HEAD commit).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import manifest  # noqa: E402  (scripts/manifest.py: reading series/manifest)
import overlay  # noqa: E402  (scripts/overlay.py: one way to apply an item)

MANIFEST = manifest.MANIFEST
# In PRISTINE or TREE but never part of the sources: made by our Makefile
# or overlay.py, or by git.
GENERATED = ('.stamp', 'PERF-VERSION-FILE', overlay.STATE, '.git')


def die(msg):
    sys.stderr.write('series: %s\n' % msg)
    sys.exit(1)


class Commit:
    def __init__(self, fields, line):
        self.line = line
        self.subject = fields.get('Subject', '').strip()
        self.message_from = fields.get('Message-From', '').split()
        self.body = fields.get('Body', '').strip('\n')
        self.fixes = [x.strip() for x in fields.get('Fixes', '').splitlines() if x.strip()]
        self.files = fields.get('Files', '').split()
        self.split = ' '.join(fields.get('Split', '').split())


def load(top):
    try:
        stanzas = manifest.read(top)
    except manifest.ManifestError as e:
        die(str(e))
    if not stanzas or 'Cover-Subject' not in stanzas[0][0]:
        die('%s: the first stanza must be the cover letter (Cover-Subject, Cover)' % MANIFEST)
    cover = stanzas[0][0]
    commits = [Commit(s, n) for s, n in stanzas[1:]]
    for c in commits:
        if not c.files:
            die('%s:%d: a commit without Files' % (MANIFEST, c.line))
        if not c.subject and not c.message_from:
            die('%s:%d: a commit needs a Subject or a Message-From' % (MANIFEST, c.line))
    return cover, commits


def coverage(top, commits):
    """The problems of the manifest against the overlay, as lines."""
    items = set(overlay.overlay_files(top))
    seen, bad = {}, []
    for c in commits:
        for f in c.files:
            if f in seen:
                bad.append('%s: in the commits of lines %d and %d' % (f, seen[f], c.line))
            seen.setdefault(f, c.line)
            if f not in items:
                bad.append('%s (line %d): no such overlay item' % (f, c.line))
        for f in c.message_from:
            if not f.endswith('.patch') or f not in items:
                bad.append('%s (line %d): Message-From names no overlay .patch' % (f, c.line))
    for f in sorted(items - set(seen)):
        bad.append('%s: in no commit of %s (add it to the commit it belongs to)' % (f, MANIFEST))
    return bad


def header(top, patch):
    """(subject, body) of a .patch file's description header."""
    text = overlay.preamble(os.path.join(top, patch)).decode()
    lines = text.rstrip('\n').splitlines()
    while lines and lines[-1].strip() in ('', '---'):
        lines.pop()
    if not lines:
        die('%s has no description header' % patch)
    return lines[0].strip(), '\n'.join(lines[1:]).strip('\n')


def message(top, c):
    subject = c.subject
    parts = [c.body] if c.body else []
    for p in c.message_from:
        s, b = header(top, p)
        subject = subject or s
        if b and b not in parts:
            parts.append(b)
    msg = subject + '\n\n' + '\n\n'.join(parts)
    if c.fixes:
        msg += '\n\n' + '\n'.join('Fixes: ' + x for x in c.fixes)
    return msg.rstrip('\n') + '\n'


# What a commit message for upstream cannot name: this project's own
# files, tests, issues and names (they come from the .patch headers,
# written for the overlay).  Reported, not refused: rewording is ongoing.
PROJECT_ONLY = re.compile(r'\b(fuzz/[\w-]+\.c|tests/fixtures/\S+|issue \d+|[\w/.-]+\.patch'
                          r'|perf-upstream|pristine|bench/\w+|of ours|by ours)\b')


def project_refs(msg):
    return sorted(set(m.group(1) for m in PROJECT_ONLY.finditer(msg)))


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BUILD_OBJ = re.compile(r'^\S+\s*\+=\s*([\w-]+)\.o\b', re.M)


def order_problems(pristine, top, commits):
    """What no commit can build with, short of building it: at each
    commit, a file of the series that includes a header the series adds
    later, or a Build line naming an object whose source is not there
    yet.  A proxy for building every commit (make series-check, not
    done yet), cheap enough to run every time."""
    new = {}
    for i, c in enumerate(commits):
        for f in c.files:
            if not f.endswith('.patch'):
                new[f] = i
    by_name = {}
    for f, i in new.items():
        by_name.setdefault(os.path.basename(f), []).append(f)
    bad = []
    with tempfile.TemporaryDirectory() as tmp:
        stack = overlay.Stack(pristine, top, tmp)
        for i, c in enumerate(commits):
            for rel in c.files:
                target, content = stack.add(rel)
                with open(content, 'rb') as f:
                    text = f.read().decode('utf-8', 'replace')
                for inc in INCLUDE.findall(text):
                    for h in by_name.get(os.path.basename(inc), ()):
                        if new[h] > i:
                            bad.append('%02d %s includes %s, added by %02d'
                                       % (i + 1, target, h, new[h] + 1))
                if os.path.basename(target) == 'Build':
                    d = os.path.dirname(target)
                    for obj in BUILD_OBJ.findall(text):
                        src = os.path.join(d, obj + '.c')
                        if src in new and new[src] > i:
                            bad.append('%02d %s builds %s.o, whose source %02d adds'
                                       % (i + 1, target, obj, new[src] + 1))
    return bad


def git(repo, *args, env=None, **kw):
    r = subprocess.run(['git', '-C', repo] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env, **kw)
    if r.returncode:
        die('git %s failed:\n%s%s' % (' '.join(args[:3]), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def identity(top):
    who = os.environ.get('SERIES_AUTHOR')
    if not who:
        r = subprocess.run(['git', '-C', top, 'var', 'GIT_AUTHOR_IDENT'],
                           stdout=subprocess.PIPE, text=True)
        who = re.sub(r'\s+\d+ [+-]\d{4}$', '', r.stdout.strip()) if r.returncode == 0 else ''
    m = re.match(r'(.*?)\s*<(.*)>$', who)
    name, email = (m.group(1), m.group(2)) if m else ('perf series', 'nobody@example.org')
    r = subprocess.run(['git', '-C', top, 'log', '-1', '--format=%ct'],
                       stdout=subprocess.PIPE, text=True)
    epoch = r.stdout.strip() if r.returncode == 0 and r.stdout.strip() else '1767225600'
    date = '@%s +0000' % epoch
    env = dict(os.environ, GIT_AUTHOR_NAME=name, GIT_AUTHOR_EMAIL=email,
               GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email,
               GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date,
               GIT_CONFIG_NOSYSTEM='1', HOME=tempfile.gettempdir(),
               SERIES_EPOCH=epoch)
    env.pop('GIT_DIR', None)
    env.pop('GIT_WORK_TREE', None)
    return env


def add_all(repo, top, env, index):
    """Hash every source file of TOP (not the generated ones) into INDEX,
    without copying TOP: returns the tree's id.  -f: upstream's
    .gitignore files must not hide a file of the tree."""
    e = dict(env, GIT_DIR=repo, GIT_WORK_TREE=os.path.abspath(top), GIT_INDEX_FILE=index)
    r = subprocess.run(['git', 'add', '-A', '-f', '--', '.'] +
                       [':(exclude,top)' + g for g in GENERATED],
                       cwd=top, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
    if r.returncode:
        die('git add of %s failed:\n%s' % (top, r.stderr[-2000:]))
    return git(repo, 'write-tree', env=e).strip()


def make_repo(pristine, top, repo, env, commits):
    """OUT.git, bare: the pristine commit, then one commit per stanza,
    made with git add and fast-import (no work tree: nothing of the 44 MB of
    pristine sources is copied or checked out)."""
    if os.path.exists(repo):
        shutil.rmtree(repo)
    git('.', 'init', '-q', '--bare', repo, env=env)
    # Speed over size: the repository is rebuilt every time.
    git(repo, 'config', 'core.compression', '1', env=env)
    index = os.path.join(repo, 'series-index')
    tree = add_all(repo, pristine, env, index)
    head = git(repo, 'commit-tree', tree, '-m', 'Linux 7.2.13 perf sources (pristine)', env=env).strip()
    git(repo, 'tag', 'pristine', head, env=env)
    # All commits in one git fast-import stream: one process, not a few
    # hundred git commands.
    stamp = '%s <%s> %s +0000' % (env['GIT_AUTHOR_NAME'], env['GIT_AUTHOR_EMAIL'], env['SERIES_EPOCH'])
    stream = []

    def data(b):
        stream.append(b'data %d\n' % len(b) + b + b'\n')

    with tempfile.TemporaryDirectory() as tmp:
        stack = overlay.Stack(pristine, top, tmp)
        for i, c in enumerate(commits):
            stream.append(('commit refs/heads/series\nauthor %s\ncommitter %s\n'
                           % (stamp, stamp)).encode())
            data(message(top, c).encode())
            if i == 0:
                stream.append(b'from %s\n' % head.encode())
            for rel in c.files:
                target, content = stack.add(rel)
                orig = os.path.join(pristine, target)
                mode = os.stat(orig if os.path.exists(orig) else content).st_mode
                stream.append(b'M %s inline %s\n' % (b'100755' if mode & 0o111 else b'100644',
                                                        target.encode()))
                with open(content, 'rb') as f:
                    data(f.read())
        r = subprocess.run(['git', '--git-dir', repo, 'fast-import', '--quiet'],
                           input=b''.join(stream), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env)
        if r.returncode:
            die('git fast-import failed:\n%s' % r.stderr.decode()[-2000:])
    os.unlink(index)


def format_patches(repo, out, env, cover):
    if os.path.exists(out):
        shutil.rmtree(out)
    os.makedirs(out)
    git(repo, 'format-patch', '-q', '--cover-letter', '--no-signature', '-o',
        os.path.abspath(out), 'pristine..series', env=env)
    patches = sorted(os.path.join(out, f) for f in os.listdir(out) if f.endswith('.patch'))
    cl = patches[0]
    with open(cl) as f:
        text = f.read()
    text = text.replace('*** SUBJECT HERE ***', cover['Cover-Subject'].strip())
    text = text.replace('*** BLURB HERE ***', cover.get('Cover', '').strip('\n'))
    with open(cl, 'w') as f:
        f.write(text)
    return patches


def verify(repo, patches, tree, env, paths):
    """git am of the series in a fresh worktree at the pristine commit
    (sparse: only the PATHS the series touches are checked out); returns
    how it differs from TREE, '' when identical: the whole tree compared
    as git sees it (contents, exec bits, symlinks) and diff -r of the
    files the series touches."""
    wt = repo[:-len('.git')] + '-am'
    subprocess.run(['git', '-C', repo, 'worktree', 'remove', '--force', wt],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    if os.path.exists(wt):
        shutil.rmtree(wt)
    git(repo, 'worktree', 'prune', env=env)
    git(repo, 'worktree', 'add', '-q', '--no-checkout', '--detach', wt, 'pristine', env=env)
    git(wt, 'sparse-checkout', 'set', '--no-cone', *['/' + p for p in paths], env=env)
    git(wt, 'checkout', '-q', env=env)
    git(wt, 'am', '-q', '--whitespace=nowarn', *patches[1:], env=env)
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        want = add_all(repo, tree, env, os.path.join(tmp, 'index'))
    got = git(wt, 'rev-parse', 'HEAD^{tree}', env=env).strip()
    if got != want:
        out.append(git(repo, 'diff-tree', '-r', '--stat', got, want, env=env))
    for p in paths:
        r = subprocess.run(['diff', '-u', os.path.join(wt, p), os.path.join(tree, p)],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out.append(r.stdout)
    git(repo, 'worktree', 'remove', '--force', wt, env=env)
    return ''.join(out)


def checkpatch(pristine, patches):
    """{patch: [finding lines]} of checkpatch --strict, run as tests/style
    runs it (--no-tree, no sign-off: the submitter adds it)."""
    cp = os.path.abspath(os.path.join(pristine, 'scripts', 'checkpatch.pl'))
    # The Fixes: tags name commits of the Linux history: checkpatch looks
    # them up in SERIES_LINUX_GIT (a Linux repository's .git) when given.
    # Without one it can check their form only (a GIT_DIR that does not
    # exist; in /dev/null git would fail and every tag look malformed),
    # and every id would be "unknown": that check is left out.
    linux_git = os.environ.get('SERIES_LINUX_GIT')
    env = dict(os.environ, GIT_DIR=linux_git or
               os.path.join(os.path.dirname(patches[0]), 'no-linux-history'))
    ignore = [] if linux_git else ['--ignore', 'UNKNOWN_COMMIT_ID']
    out = {}
    for p in patches[1:]:
        r = subprocess.run(['perl', cp, '--strict', '--no-tree', '--no-signoff', '--no-summary',
                            '--terse', '--show-types'] + ignore + [p], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, env=env,
                           cwd=os.path.dirname(p))  # its camelcase cache goes there
        if r.returncode not in (0, 1):  # 1: findings; anything else: it did not run
            die('checkpatch failed on %s:\n%s' % (p, r.stdout[-2000:]))
        out[p] = [x for x in r.stdout.splitlines() if re.search(r'(ERROR|WARNING|CHECK):', x)]
    return out


def cmd_check(top):
    _, commits = load(top)
    bad = coverage(top, commits)
    if bad:
        die('%s does not match the overlay:\n  %s' % (MANIFEST, '\n  '.join(bad)))
    print('series: %d commits carry the %d overlay items' %
          (len(commits), sum(len(c.files) for c in commits)))


def cmd_build(pristine, tree, top, out):
    t0 = time.monotonic()
    out, tree = os.path.abspath(out), os.path.abspath(tree)
    cover, commits = load(top)
    bad = coverage(top, commits)
    if bad:
        die('%s does not match the overlay:\n  %s' % (MANIFEST, '\n  '.join(bad)))
    env = identity(top)
    repo = os.path.abspath(out.rstrip('/') + '.git')
    make_repo(pristine, top, repo, env, commits)
    patches = format_patches(repo, out, env, cover)
    t_write = time.monotonic() - t0
    print('series: %d commits and a cover letter in %s (%.1fs)' % (len(commits), out, t_write))
    split = [(i + 1, c) for i, c in enumerate(commits) if c.split]
    if split:
        print('series: %d commits still bundle concepts (Split: in %s):' % (len(split), MANIFEST))
        for i, c in split:
            print('  %02d %s' % (i, message(top, c).splitlines()[0]))
    order = order_problems(pristine, top, commits)
    print('series: order check (includes and Build lines against what each commit has): %s'
          % ('%d problems' % len(order) if order else 'no problem'))
    for x in order:
        print('  ' + x)
    named = [(i + 1, project_refs(message(top, c))) for i, c in enumerate(commits)]
    named = [(i, refs) for i, refs in named if refs]
    if named:
        print('series: %d commit messages name what upstream does not have (to reword):' % len(named))
        for i, refs in named:
            print('  %02d %s' % (i, ', '.join(refs)))
    paths = sorted(set(overlay.target_of(f) if f.endswith('.patch') else f
                       for c in commits for f in c.files))
    diff = verify(repo, patches, tree, env, paths)
    if diff:
        print(diff, end='')
        die('git am of %s onto pristine does not end at %s' % (out, tree))
    print('series: git am of the %d patches onto pristine ends at %s: identical'
          ' (its whole tree; diff of the %d files the series touches)' % (len(patches) - 1, tree, len(paths)))
    if os.environ.get('SERIES_CHECKPATCH', '1') != '0':
        found = checkpatch(pristine, patches)
        counts = {}
        with open(os.path.join(out, 'checkpatch.log'), 'w') as log:
            for p, lines in found.items():
                for x in lines:
                    log.write(x + '\n')
                    k = re.search(r'(ERROR|WARNING|CHECK):', x).group(1)
                    counts[k] = counts.get(k, 0) + 1
        clean = sum(1 for lines in found.values() if not lines)
        print('series: checkpatch --strict: %d errors, %d warnings, %d checks; %d of %d patches clean'
              ' (%s)' % (counts.get('ERROR', 0), counts.get('WARNING', 0), counts.get('CHECK', 0),
                         clean, len(found), os.path.join(out, 'checkpatch.log')))
        if not os.environ.get('SERIES_LINUX_GIT'):
            print('series: Fixes: ids not looked up (no SERIES_LINUX_GIT, a Linux .git)')
    print('series: done in %.1fs' % (time.monotonic() - t0))


# perf test suites of this series, run at each commit that has them.
SUITES = ('Deferred callchains', 'SFrame')


def cmd_builds(pristine, out, first=1, last=None):
    """Build every commit (or FIRST..LAST, counted from 1) on its own."""
    out = os.path.abspath(out)
    repo = out.rstrip('/') + '.git'
    if not os.path.isdir(repo):
        die('%s: run "make series" first' % repo)
    env = identity('.')
    commits = git(repo, 'rev-list', '--reverse', 'pristine..series', env=env).split()
    last = len(commits) if last is None else last
    # A plain directory and an index of its own, not a worktree of
    # OUT.git, which make series makes anew: the checkout stays, and git
    # rewrites only the files a commit changes (same contents, same ids).
    wt, obj = out + '-build', out + '-obj'
    os.makedirs(wt, exist_ok=True)
    os.makedirs(obj, exist_ok=True)
    co = dict(env, GIT_DIR=repo, GIT_WORK_TREE=wt, GIT_INDEX_FILE=wt + '.index')
    jobs = str(os.cpu_count() or 1)
    failed = 0
    with open(os.path.join(out, 'builds.log'), 'a') as log:
        for n in range(first, last + 1):
            c = commits[n - 1]
            subject = git(repo, 'log', '-1', '--format=%s', c, env=env).strip()
            r = subprocess.run(['git', 'checkout', '-q', '-f', '--detach', c], cwd=wt, env=co,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if r.returncode:
                die('checkout of %s in %s failed:\n%s' % (c, wt, r.stdout[-2000:]))
            # As the Makefile's: no version from git describe, which
            # would change, and rebuild, at every commit.
            with open(os.path.join(wt, 'tools/perf/PERF-VERSION-FILE'), 'w') as f:
                f.write('#define PERF_VERSION "7.2.13+series"\n')
            t0 = time.monotonic()
            r = subprocess.run(['make', '-C', os.path.join(wt, 'tools/perf'), 'O=' + obj,
                                'PYTHON=/usr/bin/python3', 'NO_RUST=1', 'WERROR=1',
                                '-j' + jobs, 'perf'],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            t_build = time.monotonic() - t0
            result = 'built' if r.returncode == 0 else 'BUILD FAILED'
            if r.returncode:
                failed += 1
                with open(os.path.join(out, 'build-%02d.log' % n), 'w') as f:
                    f.write(r.stdout)
            else:
                # By number: perf test takes a name as a substring (SFrame
                # would pick shell tests too), and from the commit's own
                # directory, whose tests/shell perf test looks in first.
                perf = os.path.join(obj, 'perf')
                cwd = os.path.join(wt, 'tools/perf')
                ls = subprocess.run([perf, 'test', 'list'], cwd=cwd, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, text=True).stdout
                nums = [m.group(1) for m in re.finditer(r'^\s*(\d+): (.*?)\s*$', ls, re.M)
                        if m.group(2) in SUITES]
                t = subprocess.run([perf, 'test', '-F'] + nums if nums else ['true'], cwd=cwd,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                ran = len(re.findall(r': (Ok|Skip|FAILED!)', t.stdout))
                bad = len(re.findall(r'FAILED!', t.stdout))
                if bad or t.returncode:
                    failed += 1
                    result = 'TESTS FAILED'
                    with open(os.path.join(out, 'test-%02d.log' % n), 'w') as f:
                        f.write(t.stdout)
                elif ran:
                    result += ', %d perf test cases passed' % ran
            line = '%02d %-40s %4.0fs %s' % (n, result, t_build, subject)
            print(line, flush=True)
            log.write(line + '\n')
            log.flush()
    print('series: %d of %d commits failed' % (failed, last - first + 1))
    if failed:
        sys.exit(1)


def main():
    a = sys.argv[1:]
    if a[:1] == ['check'] and len(a) == 2:
        cmd_check(a[1])
    elif a[:1] == ['build'] and len(a) == 5:
        cmd_build(*a[1:])
    elif a[:1] == ['builds'] and 3 <= len(a) <= 5:
        cmd_builds(a[1], a[2], *[int(x) for x in a[3:]])
    else:
        die(__doc__)


if __name__ == '__main__':
    main()
