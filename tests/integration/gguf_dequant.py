"""ggml's quantized block formats dequantized with numpy, written from the
block layouts (ggml's ggml-common.h) and the formulas of its reference
dequantize_row_* (ggml-quants.c), independently of modelfs's C code: every
value is computed with float32 operations in ggml's order, so the results
are the same bits, NaN payloads included. The i-quant grids are read from
the codes of codecs/gguf/dequant_grids.h and expanded here with their
levels.

dequantize(type_name, raw) -> float32 array of the elements of raw (whole
blocks). TYPES: type name -> (elements, bytes) per block."""
import os
import re

import numpy as np

F = np.float32
TYPES = {"q1_0": (128, 18), "q2_0": (64, 18), "q4_0": (32, 18), "q4_1": (32, 20),
         "q5_0": (32, 22), "q5_1": (32, 24), "q8_0": (32, 34), "q2_k": (256, 84),
         "q3_k": (256, 110), "q4_k": (256, 144), "q5_k": (256, 176), "q6_k": (256, 210),
         "q8_k": (256, 292), "iq2_xxs": (256, 66), "iq2_xs": (256, 74), "iq2_s": (256, 82),
         "iq3_xxs": (256, 98), "iq3_s": (256, 110), "iq1_s": (256, 50), "iq1_m": (256, 56),
         "iq4_nl": (32, 18), "iq4_xs": (256, 136), "tq1_0": (256, 54), "tq2_0": (256, 66),
         "mxfp4": (32, 17), "nvfp4": (64, 36)}

GRIDS_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "codecs", "gguf",
                       "dequant_grids.h")
_GRIDS = None


def grids():
    """name -> int array (entries, elements) of grid levels."""
    global _GRIDS
    if _GRIDS is None:
        levels = {"iq2xxs": (2, [8, 25, 43]), "iq2xs": (2, [8, 25, 43]),
                  "iq2s": (2, [8, 25, 43]), "iq1s": (2, [-1, 0, 1]),
                  "iq3xxs": (3, [4, 12, 20, 28, 36, 44, 52, 62]),
                  "iq3s": (3, [1, 3, 5, 7, 9, 11, 13, 15])}
        text = open(GRIDS_H).read()
        _GRIDS = {}
        pat = r"static const u?int8_t (\w+)_grid\[(\d+)\]\[(\d+)\] = \{(.*?)\};"
        for name, n, k, body in re.findall(pat, text, re.S):
            codes = [int(c, 16) for c in re.findall(r"G\w+\((0x[0-9a-f]+)\)", body)]
            assert len(codes) == int(n), name
            bits, lv = levels[name]
            _GRIDS[name] = np.array([[lv[(c >> (bits * e)) & ((1 << bits) - 1)]
                                     for e in range(int(k))] for c in codes])
    return _GRIDS


def half(lo, hi):
    """Half floats from their byte columns, as float32: exact (through
    float64 and ldexp), a NaN quieted as ggml's conversion does."""
    h = lo.astype(np.uint32) | (hi.astype(np.uint32) << 8)
    sign = (h >> 15) & 1
    e = ((h >> 10) & 31).astype(np.int64)
    m = (h & 1023).astype(np.int64)
    mag = np.where(e == 0, np.ldexp(m.astype(np.float64), -24),
                   np.ldexp((m + 1024).astype(np.float64), e - 25))
    v = np.where(sign == 1, -mag, mag).astype(F)
    bits = v.view(np.uint32).copy()
    special = e == 31
    nan = (sign << 31) | 0x7FC00000 | (m.astype(np.uint32) << 13)
    inf = (sign << 31) | 0x7F800000
    bits[special] = np.where(m[special] != 0, nan[special], inf[special])
    return bits.view(F)


def first_nan(r, a, b):
    """r = a + b or a - b, with the NaN of a where both are NaN: what x86's
    addss/subss give (and so ggml, whose sums have the product first);
    numpy's loops may put either operand first."""
    a, b = np.broadcast_to(a, r.shape), np.broadcast_to(b, r.shape)
    both = np.isnan(a) & np.isnan(b)
    qa = (a.view(np.uint32) | np.uint32(0x00400000)).view(F)
    return np.where(both, qa, r)


def add(a, b):
    return first_nan(a + b, a, b)


def sub(a, b):
    return first_nan(a - b, a, b)


def u16(b, at):
    return b[:, at].astype(np.uint32) | (b[:, at + 1].astype(np.uint32) << 8)


def u32(b, at):
    return u16(b, at) | (u16(b, at + 2) << 16)


def col(v):
    return v[:, None]


def nibbles(qs):
    """Low nibbles, then high ones (as ints)."""
    return np.concatenate([qs & 15, qs >> 4], axis=1).astype(np.int64)


def q1_0(b):
    d = half(b[:, 0], b[:, 1])
    j = np.arange(128)
    bit = (b[:, 2 + j // 8] >> (j % 8)) & 1
    return np.where(bit == 1, col(d), col(-d))


def q2_0(b):
    d = half(b[:, 0], b[:, 1])
    j = np.arange(64)
    q = ((b[:, 2 + j // 4] >> (2 * (j % 4))) & 3).astype(np.int64)
    return (q - 1).astype(F) * col(d)


def q4_0(b):
    d = half(b[:, 0], b[:, 1])
    return (nibbles(b[:, 2:18]) - 8).astype(F) * col(d)


def q4_1(b):
    d, m = half(b[:, 0], b[:, 1]), half(b[:, 2], b[:, 3])
    return add(nibbles(b[:, 4:20]).astype(F) * col(d), col(m))


def q5_quants(b, qh_at):
    qh = u32(b, qh_at)
    j = np.arange(32)
    high = ((col(qh) >> j) & 1).astype(np.int64)
    return nibbles(b[:, qh_at + 4:qh_at + 20]) | (high << 4)


def q5_0(b):
    d = half(b[:, 0], b[:, 1])
    return (q5_quants(b, 2) - 16).astype(F) * col(d)


def q5_1(b):
    d, m = half(b[:, 0], b[:, 1]), half(b[:, 2], b[:, 3])
    return add(q5_quants(b, 4).astype(F) * col(d), col(m))


def q8_0(b):
    d = half(b[:, 0], b[:, 1])
    return b[:, 2:34].view(np.int8).astype(F) * col(d)


def q2_k(b):
    d, dmin = half(b[:, 80], b[:, 81]), half(b[:, 82], b[:, 83])
    out = []
    for n in range(2):
        for s in range(4):
            for h in range(2):
                sc = b[:, 8 * n + 2 * s + h].astype(np.int64)
                dl, ml = d * (sc & 15).astype(F), dmin * (sc >> 4).astype(F)
                q = (b[:, 16 + 32 * n + 16 * h:16 + 32 * n + 16 * h + 16] >> (2 * s)) & 3
                out.append(sub(col(dl) * q.astype(F), col(ml)))
    return np.concatenate(out, axis=1)


def q3_scales(b):
    """The 16 6-bit scales of a q3_k block, minus 32, by ggml's word
    arithmetic on the 12 bytes."""
    a0, a1, tmp = u32(b, 96), u32(b, 100), u32(b, 104)
    k1, k2 = 0x03030303, 0x0F0F0F0F
    words = [(a0 & k2) | (((tmp >> 0) & k1) << 4), (a1 & k2) | (((tmp >> 2) & k1) << 4),
             ((a0 >> 4) & k2) | (((tmp >> 4) & k1) << 4),
             ((a1 >> 4) & k2) | (((tmp >> 6) & k1) << 4)]
    return np.stack([((w >> (8 * i)) & 255).astype(np.int64) - 32 for w in words
                     for i in range(4)], axis=1)


def q3_k(b):
    d = half(b[:, 108], b[:, 109])
    sc = q3_scales(b)
    out = []
    for n in range(2):
        for s in range(4):
            m = 1 << (4 * n + s)
            for h in range(2):
                dl = d * sc[:, 8 * n + 2 * s + h].astype(F)
                at = 32 + 32 * n + 16 * h
                q = ((b[:, at:at + 16] >> (2 * s)) & 3).astype(np.int64)
                hm = b[:, 16 * h:16 * h + 16] & m
                out.append(col(dl) * (q - np.where(hm != 0, 0, 4)).astype(F))
    return np.concatenate(out, axis=1)


def scale_min_k4(b, j):
    q = lambda k: b[:, 4 + k].astype(np.int64)
    if j < 4:
        return q(j) & 63, q(j + 4) & 63
    return (q(j + 4) & 15) | ((q(j - 4) >> 6) << 4), (q(j + 4) >> 4) | ((q(j) >> 6) << 4)


def k4(b, qs_at, qh_at):
    d, dmin = half(b[:, 0], b[:, 1]), half(b[:, 2], b[:, 3])
    out = []
    for g in range(4):
        ql = b[:, qs_at + 32 * g:qs_at + 32 * g + 32].astype(np.int64)
        for h in range(2):
            sc, m = scale_min_k4(b, 2 * g + h)
            q = (ql >> (4 * h)) & 15
            if qh_at is not None:
                qh = b[:, qh_at:qh_at + 32].astype(np.int64)
                q = q + np.where(qh & (1 << (2 * g + h)) != 0, 16, 0)
            dl, ml = d * sc.astype(F), dmin * m.astype(F)
            out.append(sub(col(dl) * q.astype(F), col(ml)))
    return np.concatenate(out, axis=1)


def q4_k(b):
    return k4(b, 16, None)


def q5_k(b):
    return k4(b, 48, 16)


def q6_k(b):
    d = half(b[:, 208], b[:, 209])
    sc = b[:, 192:208].view(np.int8).astype(np.int64)
    y = np.zeros((len(b), 256), F)
    for n in range(2):
        ql = b[:, 64 * n:64 * n + 64].astype(np.int64)
        qh = b[:, 128 + 32 * n:160 + 32 * n].astype(np.int64)
        for part in range(4):
            low = (ql[:, 32 * (part & 1):32 * (part & 1) + 32] >> (4 * (part >> 1))) & 15
            q = (low | (((qh >> (2 * part)) & 3) << 4)) - 32
            for half16 in range(2):
                s = sc[:, 8 * n + half16 + 2 * part]
                seg = slice(16 * half16, 16 * half16 + 16)
                y[:, 128 * n + 32 * part + 16 * half16:128 * n + 32 * part + 16 * half16 + 16] = \
                    col(d * s.astype(F)) * q[:, seg].astype(F)
    return y


def q8_k(b):
    d = b[:, 0:4].copy().view(F)[:, 0]
    return col(d) * b[:, 4:260].view(np.int8).astype(F)


def ksigns(s7):
    """Eight sign bits from 7: the eighth makes the count of minus signs
    even."""
    s7 = np.asarray(s7, np.int64)
    par = np.zeros_like(s7)
    for k in range(7):
        par ^= (s7 >> k) & 1
    s8 = s7 | (par << 7)
    return sign_bits(s8, 8)


def sign_bits(s, n):
    """The low n bits of s, as booleans (blocks, n)."""
    return ((np.asarray(s, np.int64)[..., None] >> np.arange(n)) & 1) == 1


def grid_run(db, grid, negative):
    """db * grid, negated where a sign bit is set: ggml multiplies by -1.f
    or 1.f, which gcc compiles to a negation (so a NaN's sign flips)."""
    p = col(db) * grid.astype(F)
    return np.where(negative, -p, p)


def iq2_xxs(b):
    d = half(b[:, 0], b[:, 1])
    g = grids()["iq2xxs"]
    out = []
    for ib in range(8):
        aux = u32(b, 2 + 8 * ib + 4)
        db = d * (F(0.5) + (aux >> 28).astype(F)) * F(0.25)
        for l in range(4):
            out.append(grid_run(db, g[b[:, 2 + 8 * ib + l]], ksigns((aux >> (7 * l)) & 127)))
    return np.concatenate(out, axis=1)


def iq2_scales(d, sc):
    """The two group scales of 32 elements of iq2_xs and iq2_s."""
    return [d * (F(0.5) + (x & 15).astype(F)) * F(0.25) for x in (sc, sc >> 4)]


def iq2_xs(b):
    d = half(b[:, 0], b[:, 1])
    g = grids()["iq2xs"]
    out = []
    for ib in range(8):
        sc = b[:, 66 + ib].astype(np.int64)
        db = iq2_scales(d, sc)
        for l in range(4):
            q = u16(b, 2 + 2 * (4 * ib + l))
            out.append(grid_run(db[l // 2], g[q & 511], ksigns(q >> 9)))
    return np.concatenate(out, axis=1)


def iq2_s(b):
    d = half(b[:, 0], b[:, 1])
    g = grids()["iq2s"]
    out = []
    for ib in range(8):
        sc = b[:, 74 + ib].astype(np.int64)
        db = iq2_scales(d, sc)
        qh = b[:, 66 + ib].astype(np.int64)
        for l in range(4):
            idx = b[:, 2 + 4 * ib + l].astype(np.int64) | (((qh >> (2 * l)) & 3) << 8)
            out.append(grid_run(db[l // 2], g[idx], sign_bits(b[:, 34 + 4 * ib + l], 8)))
    return np.concatenate(out, axis=1)


def iq3_xxs(b):
    d = half(b[:, 0], b[:, 1])
    g = grids()["iq3xxs"]
    out = []
    for ib in range(8):
        aux = u32(b, 66 + 4 * ib)
        db = d * (F(0.5) + (aux >> 28).astype(F)) * F(0.5)
        for l in range(4):
            s = ksigns((aux >> (7 * l)) & 127)
            at = 2 + 8 * ib + 2 * l
            both = np.concatenate([g[b[:, at]], g[b[:, at + 1]]], axis=1)
            out.append(grid_run(db, both, s))
    return np.concatenate(out, axis=1)


def iq3_s(b):
    d = half(b[:, 0], b[:, 1])
    g = grids()["iq3s"]
    out = []
    for ib in range(8):
        sc = (b[:, 106 + ib // 2].astype(np.int64) >> (4 * (ib % 2))) & 15
        db = d * (1 + 2 * sc).astype(F)
        qh = b[:, 66 + ib].astype(np.int64)
        for l in range(4):
            i1 = b[:, 2 + 8 * ib + 2 * l].astype(np.int64) | (((qh >> (2 * l)) & 1) << 8)
            i2 = b[:, 3 + 8 * ib + 2 * l].astype(np.int64) | (((qh >> (2 * l + 1)) & 1) << 8)
            both = np.concatenate([g[i1], g[i2]], axis=1)
            out.append(grid_run(db, both, sign_bits(b[:, 74 + 4 * ib + l], 8)))
    return np.concatenate(out, axis=1)


def shifted(dl, grid, delta):
    """dl * (grid + delta)."""
    return col(dl) * (grid.astype(F) + col(delta))


def iq1_s(b):
    d = half(b[:, 0], b[:, 1])
    g = grids()["iq1s"]
    out = []
    for ib in range(8):
        qh = u16(b, 34 + 2 * ib).astype(np.int64)
        dl = d * (2 * ((qh >> 12) & 7) + 1).astype(F)
        delta = np.where(qh & 0x8000 != 0, F(-0.125), F(0.125))
        for l in range(4):
            idx = b[:, 2 + 4 * ib + l].astype(np.int64) | (((qh >> (3 * l)) & 7) << 8)
            out.append(shifted(dl, g[idx], delta))
    return np.concatenate(out, axis=1)


def iq1_m(b):
    sc = [u16(b, 48 + 2 * k).astype(np.int64) for k in range(4)]
    h = (sc[0] >> 12) | ((sc[1] >> 8) & 0xF0) | ((sc[2] >> 4) & 0xF00) | (sc[3] & 0xF000)
    d = half(h & 255, h >> 8)
    g = grids()["iq1s"]
    out = []
    for ib in range(8):
        s = sc[ib // 2] >> (6 * (ib % 2))
        dls = [d * (2 * (s & 7) + 1).astype(F), d * (2 * ((s >> 3) & 7) + 1).astype(F)]
        for l in range(4):
            nib = (b[:, 32 + 2 * ib + l // 2].astype(np.int64) >> (4 * (l % 2))) & 15
            idx = b[:, 4 * ib + l].astype(np.int64) | ((nib & 7) << 8)
            delta = np.where(nib & 8 != 0, F(-0.125), F(0.125))
            out.append(shifted(dls[l // 2], g[idx], delta))
    return np.concatenate(out, axis=1)


IQ4NL = np.array([-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113])
# e2m1 values doubled (0, 0.5, 1, 1.5, 2, 3, 4, 6 times 2; the high bit negates)
FP4 = np.array([0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12])


def iq4_nl(b):
    d = half(b[:, 0], b[:, 1])
    return col(d) * IQ4NL[nibbles(b[:, 2:18])].astype(F)


def iq4_xs(b):
    d = half(b[:, 0], b[:, 1])
    sh = u16(b, 2).astype(np.int64)
    out = []
    for ib in range(8):
        lo = (b[:, 4 + ib // 2].astype(np.int64) >> (4 * (ib % 2))) & 15
        ls = lo | (((sh >> (2 * ib)) & 3) << 4)
        dl = d * (ls - 32).astype(F)
        out.append(col(dl) * IQ4NL[nibbles(b[:, 8 + 16 * ib:24 + 16 * ib])].astype(F))
    return np.concatenate(out, axis=1)


def e8m0_half(e):
    """2^(e - 128) as float32 (e = 255 included)."""
    return np.ldexp(np.ones(len(e)), e.astype(np.int64) - 128).astype(F)


def ue4m3_half(x):
    x = x.astype(np.int64)
    ex, man = (x >> 3) & 15, x & 7
    v = np.where(ex == 0, np.ldexp(man.astype(np.float64), -9),
                 np.ldexp(1 + man / 8.0, ex - 7)) * 0.5
    return np.where(x == 0x7F, 0.0, v).astype(F)


def mxfp4(b):
    d = e8m0_half(b[:, 0])
    return FP4[nibbles(b[:, 1:17])].astype(F) * col(d)


def nvfp4(b):
    out = []
    for s in range(4):
        d = ue4m3_half(b[:, s])
        out.append(FP4[nibbles(b[:, 4 + 8 * s:12 + 8 * s])].astype(F) * col(d))
    return np.concatenate(out, axis=1)


def tq1_0(b):
    d = half(b[:, 52], b[:, 53])
    out = []
    for start, length, n_trits in ((0, 32, 5), (32, 16, 5), (48, 4, 4)):
        q = b[:, start:start + length].astype(np.int64)
        for n in range(n_trits):
            digit = (((q * 3 ** n) & 255) * 3) >> 8
            out.append((digit - 1).astype(F) * col(d))
    return np.concatenate(out, axis=1)


def tq2_0(b):
    d = half(b[:, 64], b[:, 65])
    out = []
    for j in (0, 32):
        for l in range(4):
            q = ((b[:, j:j + 32] >> (2 * l)) & 3).astype(np.int64)
            out.append((q - 1).astype(F) * col(d))
    return np.concatenate(out, axis=1)


def dequantize(name, raw):
    blck, size = TYPES[name]
    b = np.frombuffer(raw, np.uint8).reshape(-1, size)
    y = globals()[name](b)
    assert y.dtype == F and y.shape == (len(b), blck), (name, y.dtype, y.shape)
    return y.reshape(-1)
