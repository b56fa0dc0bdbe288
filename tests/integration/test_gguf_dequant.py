"""GGUF tensors of every type ggml can dequantize, through a real mount:
data.npy and values.txt against ggml's own dequantizers (the values
tests/data/gguf/dequant_ref.gguf holds beside ggml's blocks, see its
MANIFEST.md) and against an independent numpy implementation
(gguf_dequant.py) on those blocks and on random ones written here, half
scales that are NaN, inf, subnormal or zero included, read whole and in
pieces that start and end inside blocks."""
import os

import numpy as np

import gguf_dequant as gd
import gguf_write as gw
from harness import Mount, check, eq, run

REF = "gguf/dequant_ref.gguf"
TYPE_ID = {name: ty for ty, (name, _, _) in gw.GGML.items()}

# Byte offsets of the half scales in a block of each type (d, and min
# where there is one); q8_k's float32 scale and the e8m0/ue4m3 bytes of
# mxfp4/nvfp4 are set by their own rules below.
HALVES = {"q1_0": [0], "q2_0": [0], "q4_0": [0], "q4_1": [0, 2], "q5_0": [0],
          "q5_1": [0, 2], "q8_0": [0], "q2_k": [80, 82], "q3_k": [108], "q4_k": [0, 2],
          "q5_k": [0, 2], "q6_k": [208], "iq2_xxs": [0], "iq2_xs": [0], "iq2_s": [0],
          "iq3_xxs": [0], "iq3_s": [0], "iq1_s": [0], "iq4_nl": [0], "iq4_xs": [0],
          "tq1_0": [52], "tq2_0": [64]}
SPECIAL = [0x7C00, 0xFC00, 0x7E00, 0x7C01, 0xFE01, 0xFFFF, 0x0001, 0x83FF, 0x0000, 0x8000,
           0x7BFF]


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float32).view(np.uint32).ravel()


def same_bits(got, want, what):
    g, w = bits(got), bits(want)
    eq(len(g), len(w), what + ": count")
    bad = np.nonzero(g != w)[0]
    check(len(bad) == 0, "%s: %d values differ, the first at %d: %08x, expected %08x" % (
        what, len(bad), bad[0] if len(bad) else -1, g[bad[0]] if len(bad) else 0,
        w[bad[0]] if len(bad) else 0))


def same_text(path, want):
    """values.txt reads back as want: finite and infinite values to the
    same float32 bits, a NaN as a NaN of the same sign."""
    toks = open(path).read().split()
    eq(len(toks), len(want), path + ": values")
    got = np.array([float(t) for t in toks])
    w = np.asarray(want, np.float32).ravel()
    nan = np.isnan(w)
    check(np.array_equal(np.isnan(got), nan), path + ": NaNs where ggml's are")
    check(np.array_equal(np.signbit(got[nan]), np.signbit(w[nan])), path + ": NaN signs")
    same_bits(got[~nan].astype(np.float32), w[~nan], path)


def check_views(m, fname, tname, want, shape):
    t = m.m(fname, "tensors", *tname.split("."))
    a = np.load(os.path.join(t, "data.npy"))
    eq((a.dtype, a.shape), (np.dtype(np.float32), shape), tname + " data.npy")
    same_bits(a, want, tname + " data.npy")
    same_text(os.path.join(t, "values.txt"), want)
    return t


def ggml_reference():
    """Every type's blocks from ggml's quantizers and random blocks: what the
    mount shows, and what the numpy implementation computes, are the bits
    ggml's dequantize_row_* gave."""
    with Mount([REF]) as m:
        ref = {t[0]: t for t in gw.read(m.s("dequant_ref.gguf"))["tensors"]}
        for name in gd.TYPES:
            for kind in ("quant", "random"):
                _, ty, ne, _, raw = ref["%s.%s" % (name, kind)]
                eq(ty, TYPE_ID[name], name)
                want = np.frombuffer(ref["%s.%s_f32" % (name, kind)][4], np.float32)
                same_bits(gd.dequantize(name, raw), want, "numpy %s.%s" % (name, kind))
                t = check_views(m, "dequant_ref.gguf", "%s.%s" % (name, kind), want,
                                tuple(reversed(ne)))
                eq(open(os.path.join(t, "dtype")).read(), name + "\n")
                eq(open(os.path.join(t, "data"), "rb").read(), raw, name + " data")
        eq(m.errors(), "")


def random_block_bytes(rng, name, nb):
    """nb random blocks of a type, the first ones with special scales."""
    blck, size = gd.TYPES[name]
    b = rng.integers(0, 256, (nb, size), dtype=np.uint8)
    if name == "q8_k":
        for k, v in enumerate([0x7F800000, 0xFF800000, 0x7FC00001, 0x7F800001, 0x00000010,
                               0x80000000, 0x7F7FFFFF]):
            b[k, 0:4] = np.frombuffer(np.uint32(v).tobytes(), np.uint8)
    elif name == "iq1_m":
        for k, h in enumerate(SPECIAL):
            for n in range(4):
                b[k, 49 + 2 * n] = (b[k, 49 + 2 * n] & 0x0F) | (((h >> (4 * n)) & 15) << 4)
    elif name in HALVES:
        offs = HALVES[name]
        for k in range(min(nb, len(SPECIAL) * len(offs))):
            at = offs[k // len(SPECIAL)]
            h = SPECIAL[k % len(SPECIAL)]
            b[k, at], b[k, at + 1] = h & 255, h >> 8
    return b.tobytes()


def random_blocks():
    """Random blocks of every type, in tensors of two and three dimensions:
    the mount's values are the numpy implementation's bits, whole and in
    pieces read at offsets inside blocks."""
    rng = np.random.default_rng(35)
    tensors, want = [], {}
    for i, (name, (blck, size)) in enumerate(gd.TYPES.items()):
        nb = 4096 // blck + 24
        raw = random_block_bytes(rng, name, nb)
        ne = [blck, nb] if i % 2 else [blck, 2, nb // 2]
        tensors.append(("r." + name, TYPE_ID[name], ne, raw))
        want[name] = (gd.dequantize(name, raw), tuple(reversed(ne)))
    with Mount([]) as m:
        gw.write(m.s("random.gguf"), [("general.name", "str", "random blocks")], tensors)
        for name, (w, shape) in want.items():
            t = check_views(m, "random.gguf", "r." + name, w, shape)
            whole = open(os.path.join(t, "data.npy"), "rb").read()
            head = len(whole) - 4 * w.size
            with open(os.path.join(t, "data.npy"), "rb") as f:
                for _ in range(8):
                    a = int(rng.integers(head, len(whole)))
                    n = int(rng.integers(1, 3000))
                    f.seek(a)
                    eq(f.read(n), whole[a:a + n], "%s data.npy at %d" % (name, a))
        eq(m.errors(), "")


def opaque_q8_1():
    """q8_1, which ggml cannot dequantize, shows its blocks only."""
    raw = bytes(range(36)) * 2
    with Mount([]) as m:
        gw.write(m.s("q81.gguf"), [], [("w", 9, [32, 2], raw)])
        t = m.m("q81.gguf", "tensors", "w")
        eq(sorted(os.listdir(t)), ["data", "dtype", "shape"])
        eq(open(os.path.join(t, "dtype")).read(), "q8_1\n")
        eq(open(os.path.join(t, "data"), "rb").read(), raw)


if __name__ == "__main__":
    run([ggml_reference, random_blocks, opaque_q8_1])
