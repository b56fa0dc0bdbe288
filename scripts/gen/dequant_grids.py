#!/usr/bin/python3
"""Writes codecs/gguf/dequant_grids.h: the lattice grids of ggml's i-quants
(iq2xxs_grid, iq2xs_grid, iq2s_grid, iq3xxs_grid, iq3s_grid, iq1s_grid of
ggml's ggml-common.h) transcribed as codes of our own.

usage: scripts/gen/dequant_grids.py GGML_COMMON_H > codecs/gguf/dequant_grids.h

Every entry of a grid holds one small level per element (8 elements for the
iq2 and iq1 grids, 4 for the iq3 ones), element k in byte k. Each level is
one of a few values (8, 25, 43 for iq2; -1, 0, 1 for iq1; eight for each iq3
grid), so an entry is written as a code whose fields, lowest first, are the
level indices of elements 0, 1, ...: 2 bits a field for iq2 and iq1, 3 for
iq3. The header's macros expand a code back into the entry's bytes. Every
grid lists its entries in ascending code order (checked here).

The script reads ggml's tables as numbers (the text between
GGML_TABLE_BEGIN(type, name, size) and GGML_TABLE_END()), finds each entry's
code, expands every code again exactly as the header's macros do and checks
the result against ggml's entry, and refuses a level that is not in the
list. Run it again only when ggml changes a grid."""

import re
import sys

# name in ggml-common.h -> (our name, elements, bits per field, levels)
GRIDS = [
    ("iq2xxs_grid", "iq2xxs", 8, 2, [8, 25, 43]),
    ("iq2xs_grid", "iq2xs", 8, 2, [8, 25, 43]),
    ("iq2s_grid", "iq2s", 8, 2, [8, 25, 43]),
    ("iq3xxs_grid", "iq3xxs", 4, 3, [4, 12, 20, 28, 36, 44, 52, 62]),
    ("iq3s_grid", "iq3s", 4, 3, [1, 3, 5, 7, 9, 11, 13, 15]),
    ("iq1s_grid", "iq1s", 8, 2, [-1, 0, 1]),
]


def tables(text):
    out = {}
    pat = r"GGML_TABLE_BEGIN\((\w+),\s*(\w+),\s*(\w+)\)(.*?)GGML_TABLE_END\(\)"
    for m in re.finditer(pat, text, re.S):
        body = re.sub(r"//[^\n]*", "", m.group(4))
        nums = re.findall(r"-?0x[0-9a-fA-F]+|-?\d+", body)
        out.setdefault(m.group(2), [int(x, 0) for x in nums])
    return out


def entry_bytes(v, n):
    """The n elements of a table entry (little-endian bytes), as signed
    bytes when the grid holds negative levels."""
    return [(v >> (8 * k)) & 0xFF for k in range(n)]


def code_of(elems, bits, levels):
    c = 0
    for k, e in enumerate(elems):
        if e not in levels:
            sys.exit("level %d is not one of %s" % (e, levels))
        c |= levels.index(e) << (bits * k)
    return c


def expand(code, n, bits, levels):
    return [levels[(code >> (bits * k)) & ((1 << bits) - 1)] for k in range(n)]


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    t = tables(open(sys.argv[1]).read())
    print("/* The lattice grids of ggml's i-quants (ggml-common.h's iq2xxs_grid,")
    print(" * iq2xs_grid, iq2s_grid, iq3xxs_grid, iq3s_grid, iq1s_grid) as data:")
    print(" * each entry is a code whose fields, lowest first, are the level indices")
    print(" * of elements 0, 1, ... (2 bits a field for iq2 and iq1, 3 for iq3), and")
    print(" * the G* macros expand a code into the entry's element values. Entries")
    print(" * are in ascending code order. Written by scripts/gen/dequant_grids.py")
    print(" * from ggml's tables, each entry expanded again and compared with ggml's;")
    print(" * the values ggml's own dequantizers give on blocks that use every entry")
    print(" * are tests/data/gguf/dequant_ref.gguf (test_gguf_dequant). Included by")
    print(" * dequant_iq.c only. */")
    print("#ifndef MFS_DEQUANT_GRIDS_H")
    print("#define MFS_DEQUANT_GRIDS_H")
    print()
    print("#include <stdint.h>")
    print()
    print("/* iq2: levels 8, 25, 43. */")
    print("#define F2(c, k) (((c) >> (2 * (k))) & 3)")
    print("#define L2(c, k) (uint8_t)(8 + 17 * F2(c, k) + F2(c, k) / 2)")
    print("#define G2(c) {L2(c, 0), L2(c, 1), L2(c, 2), L2(c, 3), \\")
    print("\t       L2(c, 4), L2(c, 5), L2(c, 6), L2(c, 7)}")
    print("/* iq1: levels -1, 0, 1. */")
    print("#define L1(c, k) (int8_t)(F2(c, k) - 1)")
    print("#define G1(c) {L1(c, 0), L1(c, 1), L1(c, 2), L1(c, 3), \\")
    print("\t       L1(c, 4), L1(c, 5), L1(c, 6), L1(c, 7)}")
    print("/* iq3xxs: levels 4, 12, ..., 52 (8 apart), then 62. */")
    print("#define F3(c, k) (((c) >> (3 * (k))) & 7)")
    print("#define LX(c, k) (uint8_t)(4 + 8 * F3(c, k) + 2 * (F3(c, k) == 7))")
    print("#define GX(c) {LX(c, 0), LX(c, 1), LX(c, 2), LX(c, 3)}")
    print("/* iq3s: levels 1, 3, ..., 15. */")
    print("#define LS(c, k) (uint8_t)(1 + 2 * F3(c, k))")
    print("#define GS(c) {LS(c, 0), LS(c, 1), LS(c, 2), LS(c, 3)}")
    macro = {"iq2xxs": "G2", "iq2xs": "G2", "iq2s": "G2", "iq3xxs": "GX", "iq3s": "GS",
             "iq1s": "G1"}
    level_fn = {
        "G2": lambda f: 8 + 17 * f + f // 2,
        "G1": lambda f: f - 1,
        "GX": lambda f: 4 + 8 * f + 2 * (f == 7),
        "GS": lambda f: 1 + 2 * f,
    }
    for gname, name, n, bits, levels in GRIDS:
        vals = t[gname]
        codes = []
        for v in vals:
            el = entry_bytes(v, n)
            if levels[0] < 0:
                el = [e - 256 if e > 127 else e for e in el]
            c = code_of(el, bits, levels)
            mac = macro[name]
            back = [level_fn[mac]((c >> (bits * k)) & ((1 << bits) - 1)) for k in range(n)]
            if back != el or expand(c, n, bits, levels) != el:
                sys.exit("%s: code %#x does not expand to %s" % (gname, c, el))
            codes.append(c)
        if codes != sorted(codes) or len(set(codes)) != len(codes):
            sys.exit("%s: codes are not strictly ascending" % gname)
        ty = "int8_t" if levels[0] < 0 else "uint8_t"
        print()
        print("static const %s %s_grid[%d][%d] = {" % (ty, name, len(codes), n))
        per = 7
        for i in range(0, len(codes), per):
            row = ", ".join("%s(0x%04x)" % (macro[name], c) for c in codes[i:i + per])
            print("\t" + row + ",")
        print("};")
    print()
    print("#undef G2")
    print("#undef G1")
    print("#undef GX")
    print("#undef GS")
    print("#undef L2")
    print("#undef L1")
    print("#undef LX")
    print("#undef LS")
    print("#undef F2")
    print("#undef F3")
    print()
    print("#endif")


if __name__ == "__main__":
    main()
