# SPDX-License-Identifier: GPL-2.0
"""perf.data files whose samples sit at chosen addresses of a real ELF file,
to compare inline chains address by address (tests and bench/inline).

    addrs = text_insns(binary)                 # every instruction of .text
    write_samples(binary, addrs[::7], 'perf.data')
    perf script -i perf.data                   # one sample an address
"""
import itertools
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'lib'))
import perf_script  # noqa: E402
from perf_abi import CONTEXT_USER  # noqa: E402
from perfdata_writer import Writer  # noqa: E402

BASE = 0x555555554000   # where an ET_DYN file is "mapped"
PID = 4242


def exec_segment(path):
    """(vaddr, offset, filesz, is_dyn) of the first executable PT_LOAD."""
    with open(path, 'rb') as f:
        ehdr = f.read(64)
        assert ehdr[:4] == b'\x7fELF' and ehdr[4] == 2, '%s: not ELF64' % path
        e_type, = struct.unpack_from('<H', ehdr, 16)
        e_phoff, = struct.unpack_from('<Q', ehdr, 32)
        e_phentsize, e_phnum = struct.unpack_from('<HH', ehdr, 54)
        f.seek(e_phoff)
        for _ in range(e_phnum):
            ph = f.read(e_phentsize)
            p_type, p_flags, p_offset, p_vaddr = struct.unpack_from('<IIQQ', ph, 0)
            p_filesz, = struct.unpack_from('<Q', ph, 32)
            if p_type == 1 and p_flags & 1:
                return p_vaddr, p_offset, p_filesz, e_type == 3
    raise AssertionError('%s: no executable PT_LOAD' % path)


def objdump_insns(path, sections=('.text',), function=None):
    """Addresses (ELF virtual) of the instructions objdump disassembles in
    @sections (all executable ones when empty), of every function or only
    of those whose name (as objdump gives it, "puts@plt") matches the
    regular expression @function."""
    cmd = ['objdump', '-d', '--no-show-raw-insn']
    for sec in sections:
        cmd += ['-j', sec]
    out = subprocess.run(cmd + [path], stdout=subprocess.PIPE, text=True,
                         check=True).stdout
    addrs, cur = [], None
    for line in out.splitlines():
        label = re.match(r'^[0-9a-f]+ <(.*)>:$', line)
        if label:
            cur = label.group(1)
            continue
        head = line.split(':', 1)
        if len(head) != 2 or not head[0].startswith('  '):
            continue
        if function is not None and not (cur and re.fullmatch(function, cur)):
            continue
        try:
            addrs.append(int(head[0], 16))
        except ValueError:
            pass
    return addrs


def text_insns(path):
    """Addresses (ELF virtual) of every instruction of .text, from objdump."""
    return objdump_insns(path)


def runtime_addr(path, addr):
    """Where write_samples() puts ELF address addr."""
    return addr + (BASE if exec_segment(path)[3] else 0)


def write_samples(path, addrs, out, callers=0):
    """One sample at each address (ELF virtual addresses of path), its
    callchain the address then `callers` return addresses (the next
    addresses of the list, +1 as a return address is after a call)."""
    vaddr, offset, filesz, dyn = exec_segment(path)
    base = BASE if dyn else 0
    w = Writer(cmdline='perf record -g', features=True)
    w.comm(PID, PID, os.path.basename(path)[:15], time=1, exec=True)
    w.mmap2(PID, PID, base + vaddr, (filesz + 4095) & ~4095, offset,
            os.path.abspath(path), time=2)
    t = 10
    for i, a in enumerate(addrs):
        ip = base + a
        chain = [CONTEXT_USER, ip]
        for j in range(1, callers + 1):
            chain.append(base + addrs[(i + j) % len(addrs)] + 1)
        w.sample(ip=ip, pid=PID, tid=PID, time=t, cpu=0, callchain=chain)
        t += 1000
    w.save(out)
    return out


def addr2line_frames(path, addrs):
    """binutils' addr2line -f -i for runtime addresses @addrs of the
    program @path: {addr: [(function, file:line basename), ...]}, innermost
    first, as perf script prints an inline chain."""
    base = runtime_addr(path, 0)
    out = subprocess.run(['addr2line', '-f', '-i', '-a', '-e', path] +
                         ['%#x' % (a - base) for a in addrs], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    frames, cur, lines, i = {}, None, out.splitlines(), 0
    while i < len(lines):
        if re.match(r'^0x[0-9a-f]+$', lines[i]):
            cur = int(lines[i], 16) + base
            frames[cur] = []
            i += 1
            continue
        where = re.sub(r' \(discriminator \d+\)$', '', lines[i + 1])
        frames[cur].append((lines[i], os.path.basename(where)))
        i += 2
    return frames


def chains(script_out):
    """perf script output (default fields) -> list of samples, each the
    address of its first callchain entry and the (name, inlined) of the
    frames perf prints for it (the inlined frames, then the function)."""
    out = []
    for s in perf_script.samples(script_out):
        if not s.frames:
            continue
        addr = s.frames[0].addr
        # not only the "(inlined)" ones: an inlined copy of the function
        # itself is named as the symbol, unmarked
        frames = [(f.name, f.inlined)
                  for f in itertools.takewhile(lambda f: f.addr == addr, s.frames)]
        out.append((addr, frames))
    return out


def srclines(script_out):
    """perf script -F ip,sym,symoff,dso,srcline output -> {address: the
    file:line of each frame of its first callchain address}."""
    out = {}
    for s in perf_script.samples(script_out, 'ip,sym,symoff,dso,srcline'):
        if not s.frames:
            continue
        addr = s.frames[0].addr
        out[addr] = [f.srcline.split()[0]
                     for f in itertools.takewhile(lambda f: f.addr == addr, s.frames)]
    return out
