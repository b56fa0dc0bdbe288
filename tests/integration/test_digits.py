"""Edits never lose digits: 17-digit values (and -0, the smallest subnormal)
written as text through every view that writes numbers as text read back
bit-exact, through the mount and by an independent decoder of the source:
values.txt of PLearn ascii (.psave in %.18g style, a hand-written .plearn
and .amat files whose numbers show 2-12 digits, where %.15g would lose
digits), DAPHNE (values.txt, matrix.mtx, a frame column; frame.csv is read-only,
read back after the edit; the .meta sidecar holds only integers); float64
tensors of safetensors, GGUF (and a float64 metadata value), .npy and .npz
members stored and deflated, each source read back by its own reader
(json + struct, the tests' GGUF reader, NumPy)."""
import json
import os
import struct
import zipfile

import numpy as np

import dbdf_decode as dd
import gguf_write as gw
import plearn_decode as pd
from formats import st_read, st_write
from harness import SLOW, Mount, check, eq, run

HARD = [0.3333333333333333, 1.0000000000000002, 5e-324, -0.0, 2.2250738585072014e-308,
        -1.7976931348623157e+308, 123456789.12345679, 0.1]


def bits(v):
    return struct.pack("<d", float(v))


def same(got, want, what):
    g = [bits(v) for v in got]
    w = [bits(v) for v in want]
    if g != w:
        bad = [(i, got[i], want[i]) for i in range(min(len(g), len(w))) if g[i] != w[i]]
        raise AssertionError("%s: %d and %d values; (index, got, wanted) %r" % (
            what, len(g), len(w), bad[:8]))


def rows_of(text):
    return [[float(t) for t in line.split()] for line in text.splitlines() if line.strip()]


def put_values(m, d, n):
    """Write HARD into the first n elements of tensor dir d (2-D or 1-D)
    through values.txt; returns the flat list written."""
    rows = rows_of(open(os.path.join(d, "values.txt")).read())
    flat = [v for r in rows for v in r]
    for i in range(min(n, len(flat))):
        flat[i] = HARD[i % len(HARD)]
    w = len(rows[0]) if rows else 1
    text = "".join(" ".join(repr(v) for v in flat[k:k + w]) + "\n" for k in range(0, len(flat), w))
    with open(os.path.join(d, "values.txt"), "w") as f:
        f.write(text)
    got = [v for r in rows_of(open(os.path.join(d, "values.txt")).read()) for v in r]
    same(got, flat, "values.txt of " + d + " read back")
    return flat


def flat_numbers(x):
    if isinstance(x, list):
        return [v for e in x for v in flat_numbers(e)]
    return [x]


def test_amat():
    # 5-digit numbers (%.15g style as detected) and integers (1d_reg)
    with Mount(["plearn/amat/linear_4x_2y.amat", "plearn/amat/1d_reg.amat"]) as m:
        for name in ("linear_4x_2y.amat", "1d_reg.amat"):
            want = put_values(m, m.m(name), 2 * len(HARD))
            src = pd.read_amat(open(m.s(name), "rb").read())
            same(flat_numbers(src["values"]), want, "source of " + name)


PLEARN = b"""# hand-written, short numbers
LinearRegressor(
  weight_decay = 1e-6
  weights = 3 3 [ 0.5 0.25 1
                  2.125 0.333 7
                  -1.5 12 0.75 ]
  )
"""

PSAVE = (b"*1 -> LinearRegressor(\nweights = 2  3  [ \n"
         b"0.33333333333333331 0.5 1 \n-2.5 0.10000000000000001 3 \n]\n;\n"
         b"weight_decay = 0 ;\n)\n")


def test_plearn_ascii():
    m = Mount([])
    for name, body in (("hand.plearn", PLEARN), ("saved.psave", PSAVE)):
        with open(m.s(name), "wb") as f:
            f.write(body)
    with m:
        for name in ("hand.plearn", "saved.psave"):
            d = m.m(name, "weights")
            want = put_values(m, d, len(HARD))
            data = open(m.s(name), "rb").read()
            r = pd.Reader(data)
            r.skip(True)
            top = r.value()
            src = flat_numbers(pd.numbers(r, pd.resolve(r, top, "weights")))
            same(src, want, "source of " + name)
        # a %.18g file keeps its style: every new number has 17+ digits or is short
        text = open(m.s("saved.psave"), "rb").read()
        check(b" 1.00000000000000022 " in text, "%.18g style kept in saved.psave: " + text.decode())


def test_daphne_values():
    with Mount(["daphne/generated/dense_f64_3x4.dbdf", "daphne/generated/dense_f64_3x4.dbdf.meta"]) as m:
        want = put_values(m, m.m("dense_f64_3x4.dbdf"), 12)
        data = open(m.s("dense_f64_3x4.dbdf"), "rb").read()
        blk = dd.block_daphne(data, 3, 4, 1, False)
        same(blk["dense"].ravel().tolist(), want, "source of dense_f64_3x4.dbdf")
        meta = json.loads(open(m.s("dense_f64_3x4.dbdf.meta")).read())
        eq((meta["numRows"], meta["numCols"]), (3, 4), ".meta in step")


def test_daphne_mtx():
    name = "csr_f64_6x5.dbdf"
    with Mount(["daphne/generated/" + name, "daphne/generated/" + name + ".meta"]) as m:
        p = m.m(name, "matrix.mtx")
        lines = open(p).read().splitlines(True)
        body = [i for i, l in enumerate(lines) if not l.startswith("%")][1:]
        want = {}
        for k, i in enumerate(body):
            r, c, _ = lines[i].split()
            v = HARD[k % len(HARD)]
            lines[i] = "%s %s %r\n" % (r, c, v)
            want[(int(r) - 1, int(c) - 1)] = v
        with open(p, "w") as f:
            f.write("".join(lines))
        back = {}
        for l in [l for l in open(p).read().splitlines() if not l.startswith("%")][1:]:
            t = l.split()
            back[(int(t[0]) - 1, int(t[1]) - 1)] = float(t[2])
        eq(sorted(back), sorted(want), "entries of matrix.mtx")
        same([back[k] for k in sorted(want)], [want[k] for k in sorted(want)], "matrix.mtx read back")
        blk = dd.block_daphne(open(m.s(name), "rb").read(), 6, 5, 2, False)
        src = {(i, c): float(v) for i, c, v in blk["entries"]}
        same([src[k] for k in sorted(want)], [want[k] for k in sorted(want)], "source of " + name)


def test_frame_column():
    # frame.csv is read-only; a frame's float64 column is written through
    # its values.txt
    name = "frame_mixed_4x8.dbdf"
    with Mount(["daphne/generated/" + name, "daphne/generated/" + name + ".meta"]) as m:
        want = put_values(m, m.m(name, "columns", "price"), 4)
        back = [float(l.split(",")[0]) for l in open(m.m(name, "frame.csv")).read().splitlines()[1:]]
        same(back, want, "frame.csv after the edit")
        labels = dd.meta_labels(m.s(name + ".meta"), 8)
        data = open(m.s(name), "rb").read()
        _, names, _, columns, _ = dd.decode_frame(data, 4, 8, labels)
        same(np.asarray(columns[names.index("price")]).tolist(), want, "source of " + name)


def test_safetensors_f64():
    with Mount([]) as m:
        st_write(m.s("m.safetensors"), {"w": np.zeros((4, 3), "<f8")})
        h = st_read(m.s("m.safetensors"))[2]
        flat = put_values(m, m.m("m.safetensors", "tensors", "w"), 12)
        _, tensors, h2 = st_read(m.s("m.safetensors"))
        eq(h2, h, "the header")
        same(np.frombuffer(tensors["w"][2], "<f8").tolist(), flat, "the source's buffer")


def test_gguf_f64():
    with Mount([]) as m:
        gw.write(m.s("m.gguf"), [("general.name", "str", "digits"), ("x.scale", "f64", 0.5)],
                 [("w", 28, [3, 4], np.zeros(12, "<f8").tobytes())])
        flat = put_values(m, m.m("m.gguf", "tensors", "w"), 12)
        for v in HARD:
            with open(m.m("m.gguf", "metadata", "x.scale"), "w") as f:
                f.write(repr(v) + "\n")
            same([float(open(m.m("m.gguf", "metadata", "x.scale")).read())], [v],
                 "metadata x.scale read back")
            g = gw.read(m.s("m.gguf"))
            same([g["kvs"][1][2]], [v], "x.scale in the source")
        same(np.frombuffer(g["tensors"][0][4], "<f8").tolist(), flat, "the source's tensor")


def test_numpy_f64():
    with Mount([]) as m:
        np.save(m.s("a.npy"), np.zeros((4, 3)))
        for name, save in (("s.npz", np.savez), ("c.npz", np.savez_compressed)):
            save(m.s(name), w=np.zeros((4, 3)), other=np.arange(4))
        flat = put_values(m, m.m("a.npy"), 12)
        same(np.load(m.s("a.npy")).ravel().tolist(), flat, "a.npy")
        for name in ("s.npz", "c.npz"):
            flat = put_values(m, m.m(name, "tensors", "w"), 12)
            check(zipfile.ZipFile(m.s(name)).testzip() is None, name + " CRCs")
            with np.load(m.s(name)) as z:
                same(z["w"].ravel().tolist(), flat, name + " member w")
                eq(z["other"].tolist(), [0, 1, 2, 3], name + " member other")


def random_bits(n, dtype, seed):
    """n finite values of dtype drawn from random bit patterns (every
    exponent, 17 or 9 significant digits), HARD first for float64."""
    raw = np.random.default_rng(seed).integers(0, 2 ** 63, n, dtype=np.uint64)
    x = raw.astype(np.uint32 if dtype == np.float32 else np.uint64).view(dtype).copy()
    x[~np.isfinite(x)] = 1.5
    if dtype == np.float64:
        x[:len(HARD)] = HARD
    return x


def test_kept_views():
    """Views large enough that the size pass keeps their text (over 32
    chunks of 4096 values: several windows of 64 chunks): every value
    written as text reads back bit-exact, from the kept text and from the
    source, also column-major and from deflated members (C and Fortran
    order: the latter read by bands over the stream); once with the text
    cache off, the two-pass way (under a sanitizer or valgrind, for the
    column-major files only)."""
    rows, cols = 700, 400  # 280,000 values: 69 chunks, 2 windows
    for extra in ([], ["-o", "text_cache=0"]):
        with Mount([], opts=extra) as m:
            want = {}
            files = (("c.npy", np.float64, "C"), ("f.npy", np.float64, "F"),
                     ("s.npy", np.float32, "C"), ("z.npz", np.float64, "C"),
                     ("zf.npz", np.float32, "F"))
            for k, (name, dt, order) in enumerate(files):
                if extra and SLOW and order == "C":
                    continue
                zeros = np.zeros((rows, cols), dt, order=order)
                if name.endswith(".npy"):
                    np.save(m.s(name), zeros)
                else:
                    np.savez_compressed(m.s(name), w=zeros)
                want[name] = random_bits(rows * cols, dt, k if k < 3 else k + 4).reshape(rows, cols)
            for name, x in want.items():
                d = m.m(name) if name.endswith(".npy") else m.m(name, "tensors", "w")
                text = "".join(" ".join(repr(float(v)) if x.dtype == np.float64 else
                                        np.format_float_positional(v, unique=True, trim="-")
                                        for v in r) + "\n" for r in x)
                with open(os.path.join(d, "values.txt"), "w") as f:
                    f.write(text)
                got = np.loadtxt(os.path.join(d, "values.txt"), dtype=x.dtype, ndmin=2)
                check(got.tobytes() == x.tobytes(), "%s %s: values.txt read back" % (name, extra))
                src = np.load(m.s(name))
                src = src["w"] if name.endswith(".npz") else src
                check(src.tobytes(order="C") == x.tobytes(), "%s %s: the source" % (name, extra))
                if name.endswith(".npz"):
                    check(zipfile.ZipFile(m.s(name)).testzip() is None, name + " CRCs")


if __name__ == "__main__":
    run([test_amat, test_plearn_ascii, test_daphne_values, test_daphne_mtx, test_frame_column,
         test_safetensors_f64, test_gguf_f64, test_numpy_f64, test_kept_views])
