# SPDX-License-Identifier: GPL-2.0
"""perf sframe dump output, and the dumps it is checked against (readelf
--sframe, the libsframe oracle: the same layout), parsed in one place."""
import re

FUNC = re.compile(r'^\s*func idx \[(\d+)\]: pc = (0x[0-9a-f]+), size = (\d+) bytes(.*)$')
ROW = re.compile(r'^\s*([0-9a-f]{16})\s+(\S.*?)\s*$')
# One rule: readelf pads columns to 10 characters, so a long CFA rule runs
# into the FP rule ("sp+1048592c-16").
RULE = re.compile(r'\((?:sp|fp|r\d+|c)[-+]\d+\)|(?:sp|fp|r\d+|c)[-+]\d+|[uUf]')


def parse(text, v1_ra_undefined=False):
    """[[start, size, mask, attrs, pauth B key, [(start, cfa, fp, ra)]]] from
    a dump of perf, the oracle or readelf.  RA: 'f' (the header's fixed
    offset, here CFA-8) is written c-8; 'U' (s390x padding: RA not saved)
    is 'u', unchanged; '[s]' follows a signed RA.  A row without data words
    is ('u', 'u', 'u')."""
    out = []
    for line in text.splitlines():
        m = FUNC.match(line)
        if m:
            rest = m.group(4)
            # The oracle says MASK on this line, readelf and perf in the
            # row header.
            attr = re.search(r'attr = "(\w*)"', rest)
            out.append([int(m.group(2), 16), int(m.group(3)), 'MASK' in rest,
                        attr.group(1) if attr else '', 'B key' in rest, []])
            continue
        if 'STARTPC[m]' in line and out:
            out[-1][2] = True
            continue
        m = ROW.match(line)
        if not m or not out:
            continue
        if m.group(2) == 'RA undefined':
            out[-1][5].append((int(m.group(1), 16), 'u', 'u', 'u'))
            continue
        rest = m.group(2)
        signed = rest.endswith('[s]')
        body = rest[:-3] if signed else rest
        rules = RULE.findall(body)
        if len(rules) != 3 or ''.join(rules) != re.sub(r'\s', '', body):
            raise AssertionError('cannot read row %r' % line)
        cfa, fp, ra = rules
        if ra == 'f' or (v1_ra_undefined and ra == 'u' and cfa != 'u'):
            ra = 'c-8'
        ra = 'u' if ra == 'U' else ra
        fp = 'u' if fp == 'f' else fp
        out[-1][5].append((int(m.group(1), 16), cfa, fp,
                           ra + ('[s]' if signed else '')))
    return out


def fde_ranges(text):
    """[(start, end)] of the functions (FDEs) of a dump."""
    return [(f[0], f[0] + f[1]) for f in parse(text)]


def named_fdes(text):
    """{function name: (start, size)} of a dump that names its FDEs
    ("func idx [0]: pc = 0x1040, size = 38 bytes <main>")."""
    return {m[2]: (int(m[0], 16), int(m[1])) for m in re.findall(
        r'pc = (0x[0-9a-f]+|0), size = (\d+) bytes <(\S+)>', text)}


def coverage(text):
    """(functions of .text without FREs, functions of .text) of a dump,
    None without that line."""
    m = re.search(r'(\d+) of (\d+) functions in .text without FREs', text)
    return (int(m.group(1)), int(m.group(2))) if m else None
