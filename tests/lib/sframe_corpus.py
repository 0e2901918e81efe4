# SPDX-License-Identifier: GPL-2.0
"""Build the SFrame corpus: tests/sframe/src/*.c and src/asm.S assembled with --gsframe
by binutils 2.40 (v1, the host's), 2.44 (v2, trixie) and 2.47 (v3, sid), as
a PIE with a shared library, a non-PIE and a static executable; and the
libsframe oracle of each release.  Nothing is committed: it is all built
here, once per source change, under $CACHE_DIR/sframe-corpus."""
import hashlib
import os
import shutil
import struct
import subprocess
import unittest

import common
import cpu_record
from perf_abi import SAMPLE
from perfdata_reader import Recording, sample_fields

# The corpus's sources and build scripts stay with the tests that own them.
HERE = os.path.join(common.TOP, 'tests', 'sframe')
SRC = os.path.join(HERE, 'src')
CACHE = os.environ.get('CACHE_DIR', os.path.join(common.TOP, 'cache'))
TC = os.path.join(CACHE, 'sframe-tc')

# version -> (suite, readelf able to read it)
VERSIONS = {1: None, 2: 'trixie', 3: 'sid'}
VARIANTS = ('pie', 'nopie', 'static', 'libcorpus.so')


def toolchain(suite):
    """Folder of as/ld/readelf wrappers for SUITE's binutils (None: host)."""
    if suite is None:
        return None
    dest = os.path.join(TC, suite)
    r = subprocess.run([os.path.join(HERE, 'toolchain.sh'), suite, dest],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode:
        raise unittest.SkipTest('no %s binutils: %s' % (suite, r.stdout[-500:]))
    return dest


def readelf(version):
    tc = toolchain(VERSIONS[version])
    return os.path.join(tc, 'bin', 'readelf') if tc else 'readelf'


def _digest():
    h = hashlib.sha256()
    for name in sorted(os.listdir(SRC)) + ['toolchain.sh']:
        path = os.path.join(SRC, name) if name != 'toolchain.sh' else \
            os.path.join(HERE, name)
        h.update(name.encode())
        with open(path, 'rb') as f:
            h.update(f.read())
    return h.hexdigest()[:16]


def _run(cmd, **kw):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode:
        raise AssertionError('%s failed:\n%s' % (' '.join(cmd), r.stdout[-3000:]))


def build():
    """Return the corpus folder: <dir>/v<N>/{pie,nopie,static,libcorpus.so,
    oracle}."""
    out = os.path.join(CACHE, 'sframe-corpus', _digest())
    if os.path.exists(os.path.join(out, '.done')):
        return out
    tmp = out + '.tmp'
    shutil.rmtree(tmp, ignore_errors=True)
    src = lambda n: os.path.join(SRC, n)
    for v, suite in VERSIONS.items():
        tc = toolchain(suite)
        d = os.path.join(tmp, 'v%d' % v)
        os.makedirs(d)
        cc = ['gcc', '-O2', '-g', '-Wa,--gsframe']
        if tc:
            cc.append('-B%s/bin/' % tc)
        _run(cc + ['-fPIC', '-shared', '-o', os.path.join(d, 'libcorpus.so'),
                   src('lib.c')])
        _run(cc + ['-o', os.path.join(d, 'pie'), src('corpus.c'), src('asm.S'),
                   '-L' + d, '-lcorpus', '-Wl,-rpath,$ORIGIN'])
        _run(cc + ['-no-pie', '-o', os.path.join(d, 'nopie'), src('corpus.c'),
                   src('asm.S'), src('lib.c')])
        _run(cc + ['-static', '-o', os.path.join(d, 'static'), src('corpus.c'),
                   src('asm.S'), src('lib.c')])
        # The oracle links the libsframe of the same binutils, statically.
        root = os.path.join(tc, 'root') if tc else '/'
        lib = os.path.join(root, 'usr/lib/x86_64-linux-gnu/libsframe.a')
        if not os.path.exists(lib):
            raise unittest.SkipTest('%s missing (binutils-dev)' % lib)
        _run(['gcc', '-O1', '-I' + os.path.join(root, 'usr/include'),
              '-o', os.path.join(d, 'oracle'), src('oracle.c'), '-static', lib])
    open(os.path.join(tmp, '.done'), 'w').close()
    shutil.rmtree(out, ignore_errors=True)
    os.rename(tmp, out)
    return out


def section(path, tmpdir):
    """(.sframe bytes written to a file, its address) of ELF PATH."""
    out = os.path.join(tmpdir, os.path.basename(path) + '.sframe')
    _run(['objcopy', '-O', 'binary', '--only-section=.sframe', path, out])
    r = subprocess.run(['readelf', '-SW', path], stdout=subprocess.PIPE,
                       text=True)
    for line in r.stdout.splitlines():
        f = line.replace('[ ', '[').split()
        if len(f) > 3 and f[1] == '.sframe':
            return out, int(f[3], 16)
    raise AssertionError('%s: no .sframe' % path)


# Cross corpus: hand-written assembly of other ABIs, assembled with
# --gsframe by Debian's cross binutils and linked with -shared.  s390x
# SFrame came with binutils 2.45: 2.40 and 2.44 reject it ("not supported
# for target"), and sid's 2.47 writes only v3, so s390x has v3 alone.
CROSS_SRC = os.path.join(HERE, 'cross')
# (arch, suite, SFrame version, byte orders)
CROSS = (('aarch64', 'bookworm', 1, ('EL', 'EB')),
         ('aarch64', 'trixie', 2, ('EL', 'EB')),
         ('aarch64', 'sid', 3, ('EL', 'EB')),
         ('s390x', 'sid', 3, (None,)))


def cross_toolchain(suite, arch):
    """Folder of as/ld/readelf wrappers for SUITE's ARCH cross binutils;
    SkipTest if the packages cannot be fetched."""
    dest = os.path.join(TC, 'cross-%s-%s' % (suite, arch))
    r = subprocess.run([os.path.join(HERE, 'cross.sh'), suite, arch, dest],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode:
        raise unittest.SkipTest('no %s %s cross binutils: %s' %
                                (suite, arch, r.stdout[-500:]))
    return dest


def cross_name(arch, version, endian):
    return '%s-v%d%s.so' % (arch, version, '-be' if endian == 'EB' else '')


def cross_build(arch, suite, version, endian):
    """Path of the shared object of ARCH's assembly file, built once per
    source change under $CACHE_DIR/sframe-cross."""
    h = hashlib.sha256()
    for path in (os.path.join(CROSS_SRC, arch + '.s'),
                 os.path.join(HERE, 'cross.sh')):
        with open(path, 'rb') as f:
            h.update(f.read())
    out = os.path.join(CACHE, 'sframe-cross', h.hexdigest()[:16],
                       cross_name(arch, version, endian))
    if os.path.exists(out):
        return out
    tc = os.path.join(cross_toolchain(suite, arch), 'bin')
    os.makedirs(os.path.dirname(out), exist_ok=True)
    flags = ['-' + endian] if endian else []
    obj = out + '.o'
    _run([os.path.join(tc, 'as'), '--gsframe'] + flags +
         ['-o', obj, os.path.join(CROSS_SRC, arch + '.s')])
    _run([os.path.join(tc, 'ld')] + flags + ['-shared', '-o', out + '.tmp', obj])
    os.rename(out + '.tmp', out)
    return out


def elf_section(path, name, tmpdir):
    """(file holding section NAME of ELF64 PATH, its address), in any byte
    order: the host's objcopy does not know every machine."""
    with open(path, 'rb') as f:
        elf = f.read()
    e = '<' if elf[5] == 1 else '>'
    shoff, = struct.unpack_from(e + 'Q', elf, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from(e + 'HHH', elf, 0x3a)

    def shdr(i):
        # name, type, flags, addr, offset, size
        return struct.unpack_from(e + 'IIQQQQ', elf, shoff + i * shentsize)
    strtab = shdr(shstrndx)
    for i in range(shnum):
        sh = shdr(i)
        pos = strtab[4] + sh[0]
        if elf[pos:elf.index(b'\0', pos)].decode() == name:
            out = os.path.join(tmpdir, os.path.basename(path) + name)
            with open(out, 'wb') as f:
                f.write(elf[sh[4]:sh[4] + sh[5]])
            return out, sh[3]
    raise AssertionError('%s: no %s' % (path, name))


def record_dwarf(binary, out, ms, stack_size, period_us=500, pre=()):
    """perf record --call-graph dwarf of a corpus binary running for @ms of
    its own CPU time into @out, a sample every @period_us of that time
    (cpu_record: about @ms * 1000 / @period_us samples whatever the load);
    unittest.SkipTest if perf may not record here.  @pre: perf options
    before "record"."""
    r = common.run([common.PERF] + list(pre) + ['record', '-q'] +
                   cpu_record.args(ms, period_us, stack=stack_size) +
                   ['--call-graph', 'dwarf,%d' % stack_size,
                    '-o', out, '--', binary, str(ms)], check=False)
    if r.returncode:
        raise unittest.SkipTest('perf record failed: ' + r.stderr[-500:])
    return out


def bare_samples(data):
    """The indexes (in file order) of the samples of the recording @data
    that the kernel copied no user regs or stack for:
    perf_output_sample_ustack() copies the stack with copy_from_user_nmi(),
    which fails whole when the page at SP is not present then (seen: 1
    sample of 588 on a busy machine), and leaves dyn_size 0.  No unwinder
    runs on such a sample: perf prints it with no user frames and counts it
    nowhere."""
    rec = Recording(data)
    samples = [raw for type, misc, raw in rec.events if type == SAMPLE]
    fields = (sample_fields(rec.evsel_of(raw), raw) for raw in samples)
    return {i for i, f in enumerate(fields)
            if not f['regs'] or not f.get('stack', (0, 0))[1]}


def fail_stack_copies(src, dst, indexes):
    """Write @src to @dst with the samples at @indexes (in file order) as
    a failed copy_from_user_nmi() leaves them: dyn_size 0, the stack's
    bytes still there but not to be read."""
    with open(src, 'rb') as f:
        b = bytearray(f.read())
    rec = Recording(src)
    d_off, = struct.unpack_from('<Q', b, 40)
    off = d_off
    i = 0
    for type, misc, raw in rec.events:
        if type == SAMPLE and i in indexes:
            so = sample_fields(rec.evsel_of(raw), raw)['stack'][0]
            size, = struct.unpack_from('<Q', raw, so - 8)
            # With no stack copied at all there is no dyn_size to clear.
            if size:
                struct.pack_into('<Q', b, off + so + size, 0)
        i += type == SAMPLE
        off += len(raw)
    with open(dst, 'wb') as f:
        f.write(b)


class CorpusTestCase(common.PerfTestCase):
    """Tests on the corpus: cls.dir is where build() put it."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.dir = build()

    @classmethod
    def record_cases(cls, cases, ms, stack_size):
        """record_dwarf() of each (version, binary) of @cases in cls.tmp:
        {(version, binary): recording}."""
        return {(v, var): record_dwarf(os.path.join(cls.dir, 'v%d' % v, var),
                                       os.path.join(cls.tmp, 'v%d-%s.dwarf' % (v, var)),
                                       ms, stack_size)
                for v, var in cases}
