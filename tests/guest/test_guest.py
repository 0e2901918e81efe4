# SPDX-License-Identifier: GPL-2.0
"""Real Linux 7.2 in the loop: boot Debian's 7.2.13 cloud kernel in qemu
(scripts/guest/run.sh), record the dwork workloads there with
--call-graph fp,defer (and plain fp where comparing helps: record.sh), then
check on the host, against the stacks the workloads are known to have, what
our perf makes of the real PERF_RECORD_CALLCHAIN_DEFERRED records, and
compare with perf-upstream on the same files. perf top --call-graph
fp,defer (ours) and perf-upstream top run there too, live on dwork; their
screens come back as text and are checked the same way (test_top_*).
The task lifecycle workloads (LIFECYCLE_RUNS: off-CPU with sched_switch,
signals on a sigaltstack, page faults inside read(), an exec storm, :u, :k,
records deeper than perf_event_max_stack) are checked sample by sample
against the raw records like the others, and each for what it exercises
(perf sched timehist in time order, the raw view, de_thread()).

The guest boots once for the whole class. Without qemu (or without the
kernel package) the class is skipped, except in CI (CI=true) where that is
a failure. GUEST_KEEP=DIR keeps the recordings in DIR; GUEST_REUSE=DIR
checks such recordings again without booting.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

import common
import perf_counters
import perf_dump
import perf_report
import callchains as cc
import rawchains as raw

HERE = os.path.dirname(os.path.abspath(__file__))
WORKLOADS = os.path.join(common.TOP, 'tests', 'workloads')
RUNNER = os.path.join(common.TOP, 'scripts', 'guest', 'run.sh')
CFLAGS = ['-O1', '-g', '-fno-omit-frame-pointer', '-mno-omit-leaf-frame-pointer',
          '-pthread']
# The harsher workloads (record.sh): the recursion each has, and whether
# it runs in threads (thread_main) or not (main).
HARSH_RUNS = {'storm-defer': False, 'dir-defer': True, 'zstd-defer': True,
              'pipe-defer': False, 'pidns-defer': True, 'many-defer': True}
# The task lifecycle workloads of issue #24 (record.sh): off-CPU under -a
# with sched_switch, signals on a sigaltstack, page faults inside read(),
# an exec storm, :u and :k, records deeper than perf_event_max_stack.
LIFECYCLE_RUNS = ['offcpu-defer', 'sig-defer', 'fault-defer', 'exec-defer', 'user-defer',
                  'kern-defer', 'deep400-defer']
DEFER_RUNS = ['st-defer', 'mt-defer', 'deep300-defer', 'deep600-defer',
              'exit-defer', 'two-defer', 'sys-defer'] + list(HARSH_RUNS) + LIFECYCLE_RUNS
# The workloads whose execs come from a non-leader thread (de_thread()).
DETHREAD_RUNS = {'exec-defer'}
# Kernel limit on user entries of one deferred record (on this kernel).
DEFER_MAX = 510
# Share of samples below the recursion allowed a wrong stack: a sample
# taken on a prologue/epilogue instruction of recurse has one frame less.
SLACK = 0.005


def in_execve(s):
    """Sample S was taken inside an execve (its kernel frames say so)."""
    return any(f[1] == 'bprm_execve' for f in s.kernel())


def build_dwork(dest):
    out = os.path.join(dest, 'dwork')
    common.run(['gcc'] + CFLAGS + ['-o', out, os.path.join(WORKLOADS, 'dwork.c')])
    return out


def unavailable(why):
    if os.environ.get('CI') == 'true':
        raise AssertionError('guest tests cannot run in CI: ' + why)
    raise unittest.SkipTest(why)


def boot(script, workdir, outdir, timeout=330):
    """scripts/guest/run.sh; a setup failure (125) skips, or fails in CI."""
    env = dict(os.environ, PERF=common.PERF)
    r = subprocess.run([RUNNER, '-o', outdir, '-w', workdir, '-t', str(timeout), script],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       errors='replace', env=env)
    if r.returncode == 125:
        unavailable('guest setup failed:\n' + r.stderr[-3000:])
    if r.returncode != 0:
        log = ''
        p = os.path.join(outdir, 'guest.log')
        if os.path.exists(p):
            with open(p) as f:
                log = f.read()[-3000:]
        raise AssertionError('guest run exited %d\n%s\nguest.log:\n%s' %
                             (r.returncode, r.stderr[-3000:], log))
    return r


class Checks:
    """The checks, on recordings made by record.sh: cls.out holds NAME.data,
    NAME.out, guest-kallsyms and dwork; cls.bid a build-id cache holding
    dwork. Checks of recordings missing there are skipped."""
    # record.sh records again, longer, until dwork has NEED_SAMPLES (400)
    # samples in a recording: more than this many below its recursion.
    MIN_SAMPLES = 200
    figures = {}

    @classmethod
    def init_caches(cls):
        cls._samples = {}
        cls._stats = {}
        cls._cookies = {}
        cls._dumps = {}
        cls._verdicts = {}

    @classmethod
    def print_figures(cls):
        if cls.figures:
            sys.stderr.write('\n%s figures:\n' % cls.__name__)
            for k in sorted(cls.figures):
                sys.stderr.write('  %-50s %s\n' % (k, cls.figures[k]))

    def runs(self, names):
        have = [n for n in names if os.path.exists(self.data(n))]
        if not have:
            self.skipTest('no %s recording here' % ' '.join(names))
        return have

    def need_runs(self, *names):
        for n in names:
            if not os.path.exists(self.data(n)):
                self.skipTest('no %s recording here' % n)

    def data(self, name):
        if name == 'guest-uname':
            return os.path.join(self.out, name)
        return os.path.join(self.out, name + '.data')

    def samples(self, name, perf=None):
        perf = perf or common.PERF
        key = (name, perf)
        if key not in self._samples:
            cpu = name.startswith(('mt-', 'sys-'))
            self._samples[key] = cc.script(perf, self.data(name), self.kallsyms,
                                           self.bid, cpu=cpu)
        return self._samples[key]

    def stats(self, name):
        if name not in self._stats:
            self._stats[name] = cc.stats(common.PERF, self.data(name))
        return self._stats[name]

    def cookies(self, name):
        if name not in self._cookies:
            self._cookies[name] = cc.cookies(common.PERF, self.data(name))
        return self._cookies[name]

    def dump(self, name):
        """The raw truth of NAME: pristine perf's raw dump, parsed."""
        if name not in self._dumps:
            self._dumps[name] = raw.dump(common.PERF_UPSTREAM, self.data(name))
        return self._dumps[name]

    def verdict(self, name, perf):
        """PERF's perf script of NAME against the raw truth."""
        key = (name, perf)
        if key not in self._verdicts:
            self._verdicts[key] = raw.compare(self.dump(name), raw.stacks(
                perf, self.data(name), cc.perf_env(self.bid)))
        return self._verdicts[key]

    def depths(self, name):
        return cc.thread_depths(os.path.join(self.out, name + '.out'))

    def check_recursion(self, name, threads=False, min_samples=None):
        """Every sample of a dwork thread taken below its recursion has the
        thread's depth and reaches main/thread_main; returns the samples."""
        depths = self.depths(name)
        self.assertTrue(depths, '%s: no thread lines from dwork' % name)
        n = 0
        bad = []
        for s in self.samples(name):
            if s.tid not in depths or not s.in_recursion():
                continue
            n += 1
            idx, depth = depths[s.tid]
            outer = 'thread_main' if threads and idx >= 0 else 'main'
            why = cc.check_stack(s, depth, outer)
            if why:
                bad.append('%s tid %d t=%.6f: %s' % (name, s.tid, s.time, why))
        self.assertGreater(n, min_samples or self.MIN_SAMPLES,
                           '%s: too few samples below the recursion' % name)
        self.figures['%s: bad stacks' % name] = '%d of %d' % (len(bad), n)
        self.assertLessEqual(len(bad), SLACK * n, '\n'.join(bad[:20]))
        return n

    # the guest

    def test_guest_ran_72(self):
        self.need_runs('guest-uname')
        with open(os.path.join(self.out, 'guest-uname')) as f:
            self.assertIn('7.2.13', f.read())
        with open(os.path.join(self.out, 'status.txt')) as f:
            status = [line.split()[:2] for line in f]
        self.assertTrue(status)
        for name, rc in status:
            self.assertEqual(rc, '0', '%s: perf record exited %s' % (name, rc))

    def test_records_present(self):
        for name in self.runs(DEFER_RUNS):
            st = self.stats(name)
            self.assertIn('deferred records', st, name)
            self.assertGreater(st['deferred records'], 0, name)
            self.assertGreater(st['deferred samples'], 0, name)
        for name in self.runs(['st-fp', 'mt-fp', 'deep300-fp']):
            self.assertEqual(self.stats(name).get('deferred records', 0), 0, name)

    # ground truth

    def test_single_thread_recursion(self):
        for name in self.runs(['st-defer', 'st-fp']):
            self.check_recursion(name)

    def test_threads_recursion(self):
        self.need_runs('mt-defer')
        self.check_recursion('mt-defer', threads=True)

    def test_threads_migrate(self):
        self.need_runs('mt-defer')
        depths = self.depths('mt-defer')
        cpus = {}
        for s in self.samples('mt-defer'):
            if s.tid in depths and s.in_recursion():
                cpus.setdefault(s.tid, set()).add(s.cpu)
        for tid in depths:
            self.assertEqual(cpus.get(tid), {0, 1}, 'thread %d did not migrate' % tid)

    def test_threads_counts_plausible(self):
        """Per thread, the deferred recording has about the share of samples
        the plain fp one has, and nearly all of them have their user stack."""
        def shares(name):
            d = self.depths(name)
            cnt = {}
            for s in self.samples(name):
                if s.tid in d:
                    cnt[d[s.tid][0]] = cnt.get(d[s.tid][0], 0) + 1
            tot = sum(cnt.values())
            return {k: v / tot for k, v in cnt.items()}
        self.need_runs('mt-defer', 'mt-fp')
        sd, sf = shares('mt-defer'), shares('mt-fp')
        self.assertEqual(sorted(sd), sorted(sf))
        for k in sd:
            self.figures['mt thread %d share defer/fp' % k] = '%.3f/%.3f' % (sd[k], sf[k])
            self.assertTrue(0.5 < sd[k] / sf[k] < 2, 'thread %d: %.3f vs %.3f' %
                            (k, sd[k], sf[k]))
        d = self.depths('mt-defer')
        for tid in d:
            ss = [s for s in self.samples('mt-defer') if s.tid == tid]
            with_user = sum(s.has_user() for s in ss)
            self.assertGreaterEqual(with_user, 0.9 * len(ss), 'tid %d' % tid)

    def test_deep_beyond_127(self):
        """Depth 300: fp (127 entries) never reaches main, deferred does."""
        self.need_runs('deep300-defer', 'deep300-fp')
        n = self.check_recursion('deep300-defer')
        fp = [s for s in self.samples('deep300-fp') if s.in_recursion()]
        self.assertGreater(len(fp), self.MIN_SAMPLES)
        self.assertFalse([s for s in fp if any(f[1] == 'main' for f in s.user())])
        self.figures['deep300: samples reaching main, defer'] = n

    def test_deep_beyond_510(self):
        """Depth 600: the deferred user stack stops at the kernel's limit."""
        self.need_runs('deep600-defer')
        lens = [len(s.user()) for s in self.samples('deep600-defer')
                if s.in_recursion() and s.has_user()]
        self.assertGreater(len(lens), self.MIN_SAMPLES)
        self.figures['deep600: max user frames'] = max(lens)
        self.assertEqual(max(lens), DEFER_MAX)
        self.assertGreaterEqual(sum(n == DEFER_MAX for n in lens), 0.99 * len(lens))

    def test_exit_loses_only_exiting(self):
        """Threads that exit inside a syscall lose the stacks of the samples
        taken on the way out, and only those."""
        self.need_runs('exit-defer')
        self.check_recursion('exit-defer', threads=True)
        st = self.stats('exit-defer')
        lost = [s for s in self.samples('exit-defer') if s.lost()]
        self.figures['exit: lost (stats / script)'] = '%d / %d' % (
            st['user stack lost'], len(lost))
        # How many samples a run takes on the way out varies (often none);
        # perf report --stats and perf script must agree on them.
        self.assertEqual(st['user stack lost'], len(lost))
        self.assertLessEqual(st['of which task exited'], st['user stack lost'])
        # Lost only by threads that exited, in the syscall they left by: the
        # sample may be taken in exit's own frames or, before the dispatch,
        # in the syscall entry (x64_sys_call, do_syscall_64) alone.
        exited = {e.tid for e in perf_dump.dump(common.PERF, self.data('exit-defer'),
                                                types=('EXIT',))}
        for s in lost:
            k = [f[1] for f in s.kernel()]
            self.assertIn(s.tid, exited, 'lost, thread did not exit: %s' % k)
            self.assertTrue([x for x in k if 'exit' in x or x == 'do_syscall_64'],
                            'lost, not in a syscall: %s' % k)

    def test_two_events_share_records(self):
        self.need_runs('two-defer')
        ss = self.samples('two-defer')
        ev = {}
        for s in ss:
            if s.in_recursion():
                ev.setdefault(s.event, []).append(s)
        self.assertEqual(sorted(ev), ['cpu-clock', 'task-clock'])
        for e, lst in ev.items():
            ok = sum(s.has_user() for s in lst)
            self.assertGreaterEqual(ok, 0.99 * len(lst), e)
        self.check_recursion('two-defer')
        st = self.stats('two-defer')
        # One record per cookie, whatever the number of events; the kernel
        # may write one again after a FINISHED_ROUND, an exact duplicate
        # the stitcher counts apart.
        _, records, of_sample = self.cookies('two-defer')
        self.assertEqual(records, st['deferred records'] + st['duplicate records'])
        # Samples of both events share cookies, and then get the same stack.
        by_cookie = {}
        for s in ss:
            c = of_sample.get((s.ns, s.tid))
            if c is not None:
                by_cookie.setdefault(c, []).append(s)
        both = 0
        for c, lst in by_cookie.items():
            if len({s.event for s in lst}) < 2:
                continue
            both += 1
            stacks = {tuple(f[0] for f in s.user()) for s in lst if s.has_user()}
            self.assertLessEqual(len(stacks), 1, 'cookie %#x: %d user stacks' %
                                 (c, len(stacks)))
        self.figures['two: cookies shared by both events'] = '%d of %d' % (
            both, len(by_cookie))
        self.assertGreater(both, 0.2 * len(by_cookie))

    def test_system_wide(self):
        self.need_runs('sys-defer')
        self.check_recursion('sys-defer')

    # stitching invariants, ours vs upstream

    def test_stats_add_up(self):
        for name in self.runs(DEFER_RUNS):
            st = self.stats(name)
            total = perf_counters.accounted(st)
            self.figures['%s: stitched+late+fp+lost / samples' % name] = '%d+%d+%d+%d / %d' % (
                st['stitched'], st['stitched late'], st['fell back (fp)'],
                st['user stack lost'], st['deferred samples'])
            self.assertEqual(total, st['deferred samples'], '%s: %s' % (name, st))
            self.assertEqual(st['malformed records'], 0, name)

    def test_no_cookie_or_marker_as_frame(self):
        for name in self.runs(DEFER_RUNS):
            ck = self.cookies(name)[0]
            self.assertTrue(ck, name)
            for s in self.samples(name):
                if s.kernel():
                    self.assertNotEqual(s.kernel()[0][1], '[unknown]',
                                        '%s: kernel symbols unresolved' % name)
                for f in s.frames:
                    self.assertNotEqual(f[0], cc.USER_DEFERRED, name)
                    self.assertNotIn(f[0], ck, '%s: cookie %#x shown as a frame' %
                                     (name, f[0]))

    def test_time_order(self):
        """perf script prints every recording's samples in time order, as
        ordered_events delivers them: a sample held for its record keeps
        its place, and so does a sample inside an execve (the exec's COMM
        and MMAPs go ahead of it).  Only a sample the budget pushed out of
        the queue ("delivered out of order") or one of an exec by a
        non-leader thread (de_thread(), exec-defer: "delivered with exec")
        may come later."""
        for name in self.runs(DEFER_RUNS):
            st = self.stats(name)
            ns = [s.ns for s in self.samples(name)]
            late = raw.out_of_order(ns)
            unordered = self.unordered(name)
            self.figures['%s: samples out of time order, with exec' % name] = '%d, %d' % (
                late, st['delivered with exec'])
            if name not in DETHREAD_RUNS:
                self.assertEqual(st['delivered with exec'], 0, name)
            self.assertLessEqual(late, st['delivered out of order'] + st['delivered with exec'] +
                                 unordered, name)

    def unordered(self, name):
        """Events ordered_events itself delivers late: written to their
        ring buffer after a FINISHED_ROUND that flushed past their time (a
        vCPU held back under TCG), as the perf script of the samples says
        at the end."""
        m = re.search(r'(\d+) out of order events recorded', self.samples(name).stderr)
        if m:
            self.figures['%s: out of order events recorded' % name] = m.group(1)
        return int(m.group(1)) if m else 0

    def test_ours_at_least_upstream(self):
        for name in self.runs(DEFER_RUNS):
            ours = self.samples(name)
            up = self.samples(name, common.PERF_UPSTREAM)
            self.assertEqual(len(ours), len(up), name)
            # but for the samples test_execve_before_its_mmaps() is about
            o = sum(s.has_user() for s in ours if not in_execve(s))
            u = sum(s.has_user() for s in up if not in_execve(s))
            self.figures['%s: with user stack ours/upstream/all' % name] = '%d/%d/%d' % (
                o, u, len(ours))
            self.assertGreaterEqual(o, u, name)

    def test_execve_before_its_mmaps(self):
        """A sample taken inside an execve after its COMM exec but before
        the new program's MMAPs (offcpu-defer: perf's child exec'ing
        dwork, switched out in bprm_execve()) gets the execve's record,
        the new program's _start in ld.so, and goes out after those MMAPs
        (dc__task_mmap()): its frame is named, as perf-upstream, resolving
        at delivery, names it. Before, only the execve's samples waiting
        at the COMM exec were held for it, and this one showed [unknown];
        the COMM came before the session's first deferred sample, so the
        stitcher did not even see it."""
        inside, bad = 0, []
        for name in self.runs(LIFECYCLE_RUNS):
            for s in self.samples(name):
                if not in_execve(s) or not s.user() or s.lost():
                    continue
                inside += 1
                if not s.has_user():
                    bad.append('%s tid %d t=%d' % (name, s.tid, s.ns))
        if not inside:
            self.skipTest('no sample inside an execve here')
        self.figures['execve samples with their record, unresolved'] = '%d of %d' % (
            len(bad), inside)
        self.assertEqual(bad, [])

    # every sample against the raw records

    def test_every_sample_against_raw_records(self):
        """Sample by sample, against the truth of the raw records (the
        sample's kernel frames, then the user IPs of the record with its
        tid and cookie): every sample whose record exists comes out of
        perf script with exactly those user frames; the others with a
        fallback walk or "[user stack lost]"; no cookie or marker as a
        frame. Upstream's figures on the same file, for comparison.
        Samples whose record came after their task's EXIT are counted
        apart, see check_record_after_exit()."""
        for name in self.runs(DEFER_RUNS):
            with self.subTest(run=name):
                d = self.dump(name)
                ours = self.verdict(name, common.PERF)
                up = self.verdict(name, common.PERF_UPSTREAM)
                self.figures['%s: raw truth, ours' % name] = str(ours)
                self.figures['%s: raw truth, upstream' % name] = (
                    '%d exact, %d with a cookie as a frame' % (up.exact, up.cookie_frames))
                self.figures['%s: samples, with record, exact ours/upstream, '
                             'fallback, lost' % name] = '%d, %d, %d/%d, %d, %d' % (
                    ours.deferred, ours.exact + ours.wrong, ours.exact, up.exact,
                    ours.fallback, ours.lost)
                self.assertEqual((d.malformed, d.conflicts), (0, 0), name)
                self.assertGreater(ours.deferred, 0, name)
                self.assertEqual(ours.bad(), 0, '%s: %s\n%s' % (name, ours,
                                                               '\n'.join(ours.examples)))

    def check_record_after_exit(self, names):
        """A task's last record can come after its PERF_RECORD_EXIT (seen
        48 us after it, for samples taken in do_exit() 300 ms earlier,
        under a fork/exec storm): its samples must still be stitched."""
        n = wrong = 0
        for name in self.runs(names):
            d = self.dump(name)
            n += sum(d.after_exit(s) for s in d.samples)
            wrong += self.verdict(name, common.PERF).after_exit
        if not n:
            self.skipTest('no record after its EXIT in %s' % ' '.join(names))
        self.assertEqual(wrong, 0, '%d of %d samples whose record came after the '
                         'EXIT shown without it' % (wrong, n))

    # the harsher workloads (record.sh: storm-defer ... many-defer)

    def test_harsh_recursion(self):
        """Below its recursion, every sample of every dwork thread of the
        harsher workloads has its whole stack (fork/exec storm under -a,
        --threads directory, -z, pipe, pid namespace, 48 threads)."""
        for name in self.runs(list(HARSH_RUNS)):
            with self.subTest(run=name):
                self.check_recursion(name, threads=HARSH_RUNS[name])

    def test_harsh_many_tasks(self):
        """The storm has its ~120 processes, many-defer its 48 threads."""
        for name, want in (('storm-defer', 100), ('many-defer', 48)):
            if os.path.exists(self.data(name)):
                self.assertGreaterEqual(len(self.depths(name)), want, name)

    def test_pipe_like_file(self):
        """The pipe stream reads as the same data does in a file (perf
        inject -i PIPE -o FILE): the same statistics in perf report
        --stats, the same stacks in perf script, perf report reads it."""
        self.need_runs('pipe-defer')
        pipe = self.data('pipe-defer')
        with open(pipe, 'rb') as f:
            self.assertEqual(f.read(8), b'PERFILE2')
        conv = os.path.join(self.tmp, 'pipe-defer.file.data')
        common.run([common.PERF, 'inject', '-i', pipe, '-o', conv])
        st_pipe, st_file = self.stats('pipe-defer'), cc.stats(common.PERF, conv)
        self.assertTrue(st_pipe)
        self.assertEqual(st_pipe, st_file)
        env = cc.perf_env(self.bid)
        a, b = raw.stacks(common.PERF, pipe, env), raw.stacks(common.PERF, conv, env)
        self.assertEqual([(s.ns, s.tid, s.frames) for s in a],
                         [(s.ns, s.tid, s.frames) for s in b])
        rep = common.run([common.PERF] + env + ['report', '--stdio', '-i', pipe,
                                                '--kallsyms', self.kallsyms]).stdout
        self.assertIn('recurse', rep)
        self.figures['pipe-defer: stats pipe = file'] = '%d samples, %d stitched, %d late' % (
            st_pipe['deferred samples'], st_pipe['stitched'], st_pipe['stitched late'])

    def test_harsh_report_views(self):
        """perf report in every callchain order and mode on the harsher
        workloads: no cookie shown as a frame, no kernel frame left
        unresolved."""
        for name in self.runs(list(HARSH_RUNS)):
            cookies = self.dump(name).cookies()
            for view in common.REPORT_VIEWS:
                with self.subTest(run=name, view=' '.join(view)):
                    body = common.run(
                        [common.PERF] + cc.perf_env(self.bid) +
                        ['report', '--stdio', '-i', self.data(name), '--kallsyms',
                         self.kallsyms, '--percent-limit', '0', '--sort', 'dso,sym'] +
                        view, timeout=300).stdout
                    body = perf_report.body(body)
                    self.assertIn('recurse', body)
                    shown = {int(h, 16) for h in re.findall(r'\b0x([0-9a-f]+)\b', body)}
                    self.assertFalse(shown & cookies, 'cookies shown as frames')
                    self.assertFalse(re.findall(r'\b(?:0x)?ffff[0-9a-f]{12}\b', body),
                                     'kernel frames unresolved')

    # the task lifecycle workloads (record.sh: offcpu-defer ... deep400-defer)

    # Each is run for a number of rounds: at least this many of its samples
    # have their record (the fixtures' are smaller).
    MIN_LIFECYCLE = 100
    # deep400-defer's samples below its recursion (None: MIN_LIFECYCLE)
    MIN_DEEP = None

    def test_lifecycle_sizes(self):
        """Every lifecycle recording is big enough to say something: its
        samples whose record exists, all stitched exactly (checked with
        the others in test_every_sample_against_raw_records)."""
        for name in self.runs(LIFECYCLE_RUNS):
            with self.subTest(run=name):
                v = self.verdict(name, common.PERF)
                self.assertGreaterEqual(v.exact + v.wrong, self.MIN_LIFECYCLE, '%s: %s' %
                                        (name, v))

    def test_raw_view_prints_every_record(self):
        """perf script --no-merge-callchains prints every record with its
        user IPs, as the raw records hold them; also where the records
        ride on the dummy event alone in its type (offcpu-defer:
        -a -e sched:sched_switch; pristine prints those blank)."""
        for name in self.runs(LIFECYCLE_RUNS):
            with self.subTest(run=name):
                d = self.dump(name)
                want = sorted((ck, tuple(ips)) for (_, ck), ips in d.records.items())
                got, blank = raw.raw_view(common.PERF, self.data(name))
                _, up_blank = raw.raw_view(common.PERF_UPSTREAM, self.data(name))
                self.figures['%s: raw view records, blank ours/upstream' % name] = (
                    '%d, %d/%d' % (len(got), blank, up_blank))
                self.assertEqual(blank, 0, name)
                self.assertEqual(sorted(set(got)), want, name)

    def timehist(self, perf, name):
        r = common.run([perf] + cc.perf_env(self.bid) +
                       ['sched', 'timehist', '-i', self.data(name), '--kallsyms',
                        self.kallsyms], timeout=300)
        return raw.timehist(r.stdout)

    def test_offcpu_timehist(self):
        """perf sched timehist on the off-CPU recording: every switch in
        time order, no wrapped (negative) wait, delay or run time."""
        self.need_runs('offcpu-defer')
        rows = self.timehist(common.PERF, 'offcpu-defer')
        up = self.timehist(common.PERF_UPSTREAM, 'offcpu-defer')
        self.assertTrue(rows)
        times = [r[0] for r in rows]
        wrapped = [r for r in rows if max(r[1:]) > raw.TIMEHIST_WRAPPED_MS]
        self.figures['offcpu-defer: timehist rows, out of order, wrapped, ours/upstream'] = (
            '%d/%d, %d/%d, %d/%d' % (
                len(rows), len(up), raw.out_of_order(times), raw.out_of_order([r[0] for r in up]),
                len(wrapped), sum(max(r[1:]) > raw.TIMEHIST_WRAPPED_MS for r in up)))
        self.assertEqual(raw.out_of_order(times), 0)
        self.assertEqual(wrapped, [])
        # one row per sched_switch sample, as the raw dump has them
        self.assertEqual(len(rows), len(self.dump('offcpu-defer').samples))

    def test_offcpu_blocked(self):
        """dwork offcpu blocks in a pipe read, nanosleep and a futex wait
        every round, once in a read for 1.2 s: each switch out waits for
        a record that comes only when the task runs again, and is
        stitched exactly (with the defaults: no defer-window to raise)."""
        self.need_runs('offcpu-defer')
        d = self.dump('offcpu-defer')
        tids = set(self.depths('offcpu-defer'))
        ours = {(st.ns, st.tid): st for st in raw.stacks(
            common.PERF, self.data('offcpu-defer'), cc.perf_env(self.bid))}
        waits = []
        for s in d.samples:
            if s.tid in tids and d.key(s):
                waits.append(d.record_ns[d.key(s)] - s.ns)
                st = ours.get((s.ns, s.tid))
                self.assertIsNotNone(st)
                self.assertEqual(st.user(), d.truth(s))
        self.assertGreaterEqual(len(waits), 4 * self.MIN_LIFECYCLE // 2)
        self.figures['offcpu-defer: dwork switches, longest wait for the record (ms)'] = (
            '%d, %.1f' % (len(waits), max(waits) / 1e6))
        self.assertGreater(max(waits), 10**9, 'no read blocked more than a second')
        v = self.verdict('offcpu-defer', common.PERF)
        self.figures['offcpu-defer: samples of tid -1'] = v.released

    def test_signal_on_altstack(self):
        """Samples taken in the SIGALRM/SIGPROF handler, which runs on a
        sigaltstack, have their record's stack (checked against the raw
        records with the others); there are many of them."""
        self.need_runs('sig-defer')
        inh = [s for s in self.samples('sig-defer') if
               any(f[1] == 'on_signal' for f in s.user())]
        self.figures['sig-defer: samples in the handler'] = len(inh)
        self.assertGreater(len(inh), self.MIN_LIFECYCLE // 4)

    def test_fault_in_read(self):
        """page-faults -c 1: each of the 64 pages a read() fills faults
        inside it (the sample's kernel frames are the fault's: the user
        copy in read_zero()); those samples share the read's cookie and
        record."""
        self.need_runs('fault-defer')
        inread = [s for s in self.samples('fault-defer')
                  if any(f[1] == 'ksys_read' for f in s.kernel()) and
                  any(f[1] == 'fault_read' for f in s.user())]
        per_entry = {}
        for s in self.dump('fault-defer').samples:
            per_entry[(s.tid, s.cookie)] = per_entry.get((s.tid, s.cookie), 0) + 1
        self.figures['fault-defer: faults inside read(), most samples of one entry'] = (
            '%d, %d' % (len(inread), max(per_entry.values())))
        self.assertGreaterEqual(len(inread), 64)
        self.assertGreaterEqual(max(per_entry.values()), 32)

    def test_exec_storm(self):
        """Every generation execs from a non-leader thread (de_thread():
        the old leader's EXIT, a COMM exec, no FORK) and through vfork:
        the samples of the exec'ing thread taken in execve(), whose record
        comes under the leader's tid, are stitched with it."""
        self.need_runs('exec-defer')
        d = self.dump('exec-defer')
        execs = sum(len(t) for t in d.exec_ns.values())
        v = self.verdict('exec-defer', common.PERF)
        self.figures['exec-defer: execs, samples stitched across de_thread()'] = '%d, %d' % (
            execs, v.de_thread)
        self.assertGreaterEqual(execs, 4)
        self.assertEqual(v.de_thread, sum(d.de_thread(s) for s in d.samples
                                          if s.cookie is not None))

    def test_user_and_kernel_only(self):
        """cpu-clock:u samples have no kernel frame; cpu-clock:k samples
        are taken in the kernel; both have dwork's whole stack."""
        for name, kernel in (('user-defer', False), ('kern-defer', True)):
            if not os.path.exists(self.data(name)):
                continue
            with self.subTest(run=name):
                ss = self.samples(name)
                self.assertTrue(ss)
                self.assertTrue(all(bool(s.kernel()) == kernel for s in ss), name)
                # :u samples only while dwork spins in user space
                self.check_recursion(name, min_samples=self.MIN_LIFECYCLE // (1 + (not kernel)))

    def test_deeper_than_max_stack(self):
        """kernel.perf_event_max_stack at 127, recursion 400 deep: the
        records hold the whole stack, down to main."""
        self.need_runs('deep400-defer')
        self.check_recursion('deep400-defer', min_samples=self.MIN_DEEP or self.MIN_LIFECYCLE)

    # perf top (record.sh: top-defer, top-upstream)

    def top_file(self, name, ext):
        p = os.path.join(self.out, name + '.' + ext)
        if not os.path.exists(p):
            self.skipTest('no %s here' % os.path.basename(p))
        return p

    def test_top_live_stitching(self):
        """perf top --call-graph fp,defer shows the whole stack of dwork's
        recursion under the kernel frames, live: on screens refreshed while
        it ran, not only once it stopped."""
        screens = cc.top_screens(self.top_file('top-defer', 'top'))
        (_, depth), = cc.thread_depths(self.top_file('top-defer', 'out')).values()
        fresh = [s for s in screens if s.irqs and s.paths()]
        full = [sum(cc.full_stack(p, depth) for p in s.paths(kernel=True)) for s in fresh]
        self.figures['top-defer: screens, fresh, with full stacks'] = '%d, %d, %d' % (
            len(screens), len(fresh), sum(n > 0 for n in full))
        self.assertGreaterEqual(sum(n > 0 for n in full), 2,
                                'screens with kernel + %d recurse + main: %s' % (depth + 1, full))

    def test_top_no_marker_or_cookie(self):
        ranges = cc.exec_ranges(self.top_file('top-defer', 'maps'))
        screens = cc.top_screens(self.top_file('top-defer', 'top'))
        self.assertTrue(ranges)
        self.assertTrue([p for s in screens for p in s.paths()])
        for s in screens:
            self.assertEqual(cc.bogus_frames(s.paths(), ranges), set())

    def test_top_stats(self):
        """-v prints the stitcher's statistics at exit: every deferred
        sample got its user stack from a record."""
        with open(self.top_file('top-defer', 'err'), errors='replace') as f:
            st = perf_counters.deferred(f.read())
        self.assertTrue(st, 'no "Deferred callchains:" statistics')
        self.figures['top-defer: samples, stitched+late, records, orphans'] = '%d, %d+%d, %d, %d' % (
            st['deferred samples'], st['stitched'], st['stitched late'],
            st['deferred records'], st['orphan records'])
        self.assertGreater(st['deferred samples'], 0)
        self.assertGreater(st['stitched'], 0)
        self.assertEqual(st['malformed records'], 0)
        self.assertEqual(perf_counters.accounted(st), st['deferred samples'])

    def test_top_upstream(self):
        """Pristine perf top, deferring through the perf config: its screens
        show kernel frames only, never dwork's recursion, and no
        statistics."""
        ranges = cc.exec_ranges(self.top_file('top-upstream', 'maps'))
        screens = cc.top_screens(self.top_file('top-upstream', 'top'))
        paths = [p for s in screens if s.irqs for p in s.paths()]
        self.assertTrue(paths, 'perf-upstream top showed no callchain')
        self.assertFalse([p for p in paths if 'recurse' in p])
        cookies = set()
        for s in screens:
            cookies |= cc.bogus_frames(s.paths(), ranges)
        self.figures['top-upstream: cookies shown as frames'] = len(cookies)
        with open(self.top_file('top-upstream', 'err'), errors='replace') as f:
            self.assertNotIn('Deferred callchains:', f.read())


class Guest(Checks, unittest.TestCase):
    """Boots the guest once and records everything record.sh knows."""

    @classmethod
    def setUpClass(cls):
        if not shutil.which(os.environ.get('QEMU', 'qemu-system-x86_64')):
            unavailable('qemu-system-x86_64 not found: install qemu-system-x86 '
                        '(scripts/install-deps.sh)')
        for p in (common.PERF, common.PERF_UPSTREAM):
            if not os.path.exists(p):
                unavailable('%s missing (run make, or set PERF/PERF_UPSTREAM)' % p)
        cls.tmp = tempfile.mkdtemp(prefix='guest-test.')
        work = os.path.join(cls.tmp, 'work')
        os.makedirs(work)
        build_dwork(work)
        shutil.copy(os.path.join(HERE, 'record.sh'), work)
        # for the top-upstream run
        shutil.copy(common.PERF_UPSTREAM, os.path.join(work, 'perf-upstream'))
        # for the perf-test run: perf test's shell tests of deferred callchains
        shell = os.path.join(common.TOP, 'tools', 'perf', 'tests', 'shell')
        os.makedirs(os.path.join(work, 'shell', 'lib'))
        for name in ('record_deferred_callchain.sh', 'lib/callchains.sh'):
            shutil.copy(os.path.join(shell, name), os.path.join(work, 'shell', name))
        shutil.copy('/bin/bash', os.path.join(work, 'bash'))
        script = os.path.join(cls.tmp, 'guest.sh')
        with open(script, 'w') as f:
            f.write('. /work/record.sh\n')
        cls.out = os.environ.get('GUEST_KEEP') or os.path.join(cls.tmp, 'out')
        if os.environ.get('GUEST_REUSE'):
            # development: results of an earlier run (GUEST_KEEP)
            cls.out = os.environ['GUEST_REUSE']
        else:
            # the top-* runs wait for perf top's screens: up to 2 x 150 s;
            # the harsher workloads take 1-2 minutes under TCG.  About 6
            # minutes in all on 2 idle cores; TCG shares the host's cores,
            # and with both busy (a build beside make check) one run took
            # over 15: the timeout is for a hung guest, not a slow one.
            boot(script, work, cls.out, timeout=1800)
        cls.kallsyms = os.path.join(cls.out, 'guest-kallsyms')
        cls.bid = os.path.join(cls.tmp, 'buildid')
        common.run([common.PERF, '--buildid-dir', cls.bid, 'buildid-cache', '-a',
                    os.path.join(cls.out, 'dwork')])
        cls.init_caches()

    def test_perf_test_shell_defer(self):
        """perf test's shell test of deferred callchains runs (no skip) and
        passes on a kernel that defers."""
        with open(os.path.join(self.out, 'perf-test.log')) as f:
            log = f.read()
        self.assertRegex(log, r'perf record --call-graph fp,defer: user callchains '
                              r'stitched\s*: Ok', log[-3000:])
        self.assertRegex(log, r'\d+ samples in noploop, \d+ with the whole user stack')

    @classmethod
    def tearDownClass(cls):
        cls.print_figures()
        if getattr(cls, 'tmp', None):
            shutil.rmtree(cls.tmp, ignore_errors=True)


if __name__ == '__main__':
    unittest.main()
