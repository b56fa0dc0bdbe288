"""NaN signs and index names, the same in every format and view (LAYOUT
"Tensor directory", "Dotted tensor names"): NaNs of both signs, with
payloads, written by each format's own writer or as raw bytes, print `nan`
or `-nan` by their sign bit alone in values.txt (float16, bfloat16, the
float8 types, float32, float64, float128 and complex parts), matrix.mtx,
frame.csv and one-value files (GGUF metadata floats, PLearn binary
options, primitiv float configs), also where values.txt is sized without
being rendered (-o text_cache=0); an unchanged write-back keeps every
payload (byte-identical source), and a written `-nan` sets the sign bit
(in PLearn's ascii files, which have no negative NaN, it is `nan`);
`modelfs stats` counts NaNs and prints `nan` only where there is no value.
`index` of safetensors, GGUF and .npz writes backslash, tab and newline in
names as \\\\, \\t, \\n."""
import os
import struct
import subprocess
import zipfile

import numpy as np

import gguf_write as gw
from formats import error_lines, st_write, write_ok
from harness import BIN, Mount, check, eq, run, sha

# Bit patterns per dtype: 1.5 first, -0 last, NaNs of both signs with
# payloads (quiet, signalling, all ones) between.
PATTERNS = {
    "float16": (2, [0x3e00, 0x7e00, 0xfe00, 0x7c01, 0xfc01, 0x7fff, 0xffff, 0x7d55, 0x8000]),
    "bfloat16": (2, [0x3fc0, 0x7fc0, 0xffc0, 0x7f81, 0xff81, 0x7fff, 0xffff, 0x8000]),
    "float8_e4m3fn": (1, [0x3c, 0x7f, 0xff, 0x80]),
    "float8_e5m2": (1, [0x3e, 0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff, 0x80]),
    "float32": (4, [0x3fc00000, 0x7fc00000, 0xffc00000, 0x7f800001, 0xff800001, 0x7fffffff,
                    0xffffffff, 0x7fa5a5a5, 0xffa5a5a5, 0x80000000]),
    "float64": (8, [0x3ff8000000000000, 0x7ff8000000000000, 0xfff8000000000000,
                    0x7ff0000000000001, 0xfff0000000000001, 0x7fffffffffffffff,
                    0xffffffffffffffff, 0x7ff4a5a5a5a5a5a5, 0x8000000000000000]),
    # x87 in 16 bytes: significand, then sign and exponent, then padding
    "float128": (16, [0x3fffc000000000000000, 0x7fffc000000000000000, 0xffffc000000000000000,
                      0x7fff8000000000000001, 0xffff8000000000000001, 0x7fffffffffffffffffff,
                      0xffffffffffffffffffff, 0x80000000000000000000]),
}


def is_nan(dtype, b):
    if dtype == "bfloat16":
        return (b & 0x7fff) > 0x7f80
    if dtype == "float8_e4m3fn":
        return b & 0x7f == 0x7f
    if dtype == "float8_e5m2":
        return b & 0x7f > 0x7c
    if dtype == "float128":
        return (b >> 64) & 0x7fff == 0x7fff and b & ((1 << 63) - 1)
    return bool(np.isnan(np.frombuffer(b.to_bytes(PATTERNS[dtype][0], "little"),
                                       "<f%d" % PATTERNS[dtype][0])[0]))


def sign(dtype, b):
    size = PATTERNS[dtype][0]
    return b >> (79 if dtype == "float128" else 8 * size - 1) & 1


def texts(dtype):
    """What values.txt shows for each pattern."""
    out = []
    pats = PATTERNS[dtype][1]
    for i, b in enumerate(pats):
        if is_nan(dtype, b):
            out.append("-nan" if sign(dtype, b) else "nan")
        else:
            out.append("1.5" if i == 0 else "-0")
    return out


def raw(dtype):
    size, pats = PATTERNS[dtype]
    return b"".join(b.to_bytes(size, "little") for b in pats)


def complex_raw(part):
    """Complex values of parts of dtype part: (1.5, -nan), (nan, -nan),
    (-nan, 1.5), (payload nan, -0); and their texts."""
    size, pats = PATTERNS[part]
    t = texts(part)
    pairs = [(0, 2), (1, 2), (2, 0), (3, len(pats) - 1)]
    data = b"".join(pats[a].to_bytes(size, "little") + pats[b].to_bytes(size, "little")
                    for a, b in pairs)
    want = []
    for a, b in pairs:
        im = t[b] if t[b].startswith("-") else "+" + t[b]
        want.append(t[a] + im + "j")
    return data, want


def tokens(text, view):
    """The numbers of a view's text, in order."""
    if view.endswith("matrix.mtx"):
        lines = [ln for ln in text.splitlines() if not ln.startswith("%")][1:]
        return [ln.split()[2] for ln in lines]
    if view.endswith("frame.csv"):
        return [c for ln in text.splitlines()[1:] for c in ln.split(",")]
    return text.split()


def check_view(m, view, want, source, write_back=True):
    """view shows exactly want, its size is exact; an unchanged write-back
    keeps the source's bytes (every NaN's payload)."""
    got = m.read(view)
    eq(os.stat(m.m(view)).st_size, len(got), "size of " + view)
    eq(tokens(got.decode(), view), want, view)
    if write_back:
        h = sha(source)
        write_ok(m.m(view), got)
        eq(sha(source), h, "unchanged write-back of " + view)


def st_name(dtype):
    return {"float16": "F16", "bfloat16": "BF16", "float8_e4m3fn": "F8_E4M3",
            "float8_e5m2": "F8_E5M2", "float32": "F32", "float64": "F64"}[dtype]


def test_numpy():
    dts = ["float16", "float32", "float64", "float128"]
    with Mount([], opts=["-o", "text_cache=0"]) as m:
        arrays = {}
        for dt in dts:
            a = np.frombuffer(raw(dt), "<f%d" % PATTERNS[dt][0])
            arrays[dt] = a
            np.save(m.s(dt + ".npy"), a)
        cx = {}
        for part, name, npt in (("float32", "c64", "<c8"), ("float64", "c128", "<c16"),
                                ("float128", "c256", "<c32")):
            data, want = complex_raw(part)
            cx[name] = (np.frombuffer(data, npt), want)
            np.save(m.s(name + ".npy"), cx[name][0])
        # large: values.txt sized from the numbers' lengths, not rendered
        big = np.frombuffer(raw("float32") * 30000, "<f4")
        np.save(m.s("big32.npy"), big)
        big64 = np.frombuffer(raw("float64") * 30000, "<f8")
        np.save(m.s("big64.npy"), big64)
        np.savez(m.s("stored.npz"), **{dt: arrays[dt] for dt in dts})
        np.savez_compressed(m.s("deflated.npz"), **{dt: arrays[dt] for dt in dts},
                            c128=cx["c128"][0])
        for dt in dts:
            check_view(m, dt + ".npy/values.txt", texts(dt), m.s(dt + ".npy"))
            check_view(m, "stored.npz/tensors/%s/values.txt" % dt, texts(dt), m.s("stored.npz"))
            check_view(m, "deflated.npz/tensors/%s/values.txt" % dt, texts(dt), m.s("deflated.npz"),
                       write_back=False)
        for name, (_, want) in cx.items():
            check_view(m, name + ".npy/values.txt", want, m.s(name + ".npy"))
        check_view(m, "deflated.npz/tensors/c128/values.txt", cx["c128"][1], m.s("deflated.npz"),
                   write_back=False)
        check_view(m, "big32.npy/values.txt", texts("float32") * 30000, m.s("big32.npy"))
        check_view(m, "big64.npy/values.txt", texts("float64") * 30000, m.s("big64.npy"),
                   write_back=False)
        # a written -nan sets the sign bit; nan clears it
        t = texts("float32")
        t[0], t[2] = "-nan", "nan"
        write_ok(m.m("float32.npy", "values.txt"), "\n".join(t) + "\n")
        b = np.load(m.s("float32.npy")).view("<u4")
        eq((int(b[0]) >> 31, int(b[2]) >> 31), (1, 0), "signs written")
        check(np.isnan(np.load(m.s("float32.npy"))[[0, 2]]).all(), "NaNs written")
        eq(int(b[3]), PATTERNS["float32"][1][3], "the other payloads kept")
        eq(m.text("float32.npy", "values.txt").split()[:3], ["-nan", "nan", "nan"], "read back")
        # stats: NaNs counted, left out; "nan" only where there is no value
        out = subprocess.run([BIN, "stats", m.s("float64.npy"), "values.txt"], capture_output=True, check=True,
                             text=True).stdout
        st = dict(ln.split(None, 1) for ln in out.splitlines())
        eq((st["nan"], st["min"], st["max"]), ("7", "-0", "1.5"), "stats of float64.npy")
        np.save(m.s("allnan.npy"), np.frombuffer(raw("float64")[8:-8], "<f8"))
        out = subprocess.run([BIN, "stats", m.s("allnan.npy"), "values.txt"], capture_output=True, check=True,
                             text=True).stdout
        st = dict(ln.split(None, 1) for ln in out.splitlines())
        eq((st["nan"], st["min"], st["max"], st["mean"], st["std"]), ("7", "nan", "nan", "nan", "nan"),
           "stats of NaNs only")
        eq(error_lines(m), [], "error lines")


def test_safetensors_gguf():
    dts = ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2", "float32", "float64"]
    with Mount([]) as m:
        ts = {dt: (st_name(dt), [len(PATTERNS[dt][1])], raw(dt)) for dt in dts}
        c, cwant = complex_raw("float32")
        ts["complex64"] = ("C64", [4], c)
        # large enough for its text to be kept from the size pass
        ts["big"] = ("F32", [30000 * len(PATTERNS["float32"][1])], raw("float32") * 30000)
        st_write(m.s("n.safetensors"), ts)
        check_view(m, "n.safetensors/tensors/big/values.txt", texts("float32") * 30000,
                   m.s("n.safetensors"))
        for dt in dts:
            check_view(m, "n.safetensors/tensors/%s/values.txt" % dt, texts(dt), m.s("n.safetensors"))
        check_view(m, "n.safetensors/tensors/complex64/values.txt", cwant, m.s("n.safetensors"))
        # GGUF: metadata scalars and arrays, tensors of its float types
        f32, f64 = PATTERNS["float32"][1], PATTERNS["float64"][1]
        kvs = [("general.name", "str", "nan")]
        for i, b in enumerate(f32):
            kvs.append(("f32.%d" % i, "f32", b.to_bytes(4, "little")))
        for i, b in enumerate(f64):
            kvs.append(("f64.%d" % i, "f64", b.to_bytes(8, "little")))
        kvs.append(("arr", ("array", "f32"), [b.to_bytes(4, "little") for b in f32]))
        tensors = [("t.f32", 0, [len(f32)], raw("float32")),
                   ("t.f16", 1, [len(PATTERNS["float16"][1])], raw("float16")),
                   ("t.bf16", 30, [len(PATTERNS["bfloat16"][1])], raw("bfloat16")),
                   ("t.f64", 28, [len(f64)], raw("float64"))]
        gw.write(m.s("n.gguf"), kvs, tensors)
        src = m.s("n.gguf")
        for prefix, dt in (("f32", "float32"), ("f64", "float64")):
            for i, want in enumerate(texts(dt)):
                check_view(m, "n.gguf/metadata/%s.%d" % (prefix, i), [want], src)
        check_view(m, "n.gguf/metadata/arr/values.txt", texts("float32"), src)
        for name, dt in (("f32", "float32"), ("f16", "float16"), ("bf16", "bfloat16"),
                         ("f64", "float64")):
            check_view(m, "n.gguf/tensors/t/%s/values.txt" % name, texts(dt), src)
        # a scalar written -nan has its sign bit set
        m.sh("echo -nan > n.gguf/metadata/f32.0")
        got = dict((k, v) for k, _, v in gw.read(src)["kvs"])["f32.0"]
        bits = struct.unpack("<I", struct.pack("<f", got))[0]
        check(np.isnan(got) and bits >> 31, "f32.0 is -nan: %08x" % bits)
        eq(m.text("n.gguf", "metadata", "f32.0"), "-nan\n")
        eq(error_lines(m), [], "error lines")


def u32(v):
    return b"\xce" + struct.pack(">I", v)


def test_primitiv_tennis():
    f32 = PATTERNS["float32"][1]
    with Mount([]) as m:
        # primitiv: a tensor of shape [n] (msgpack, float32 little-endian),
        # and an optimizer whose float configs are big-endian float32s
        data = raw("float32")
        t = u32(0) + u32(1) + u32(0x100) + b"\x91" + u32(len(f32)) + u32(1)
        t += b"\xc4" + bytes([len(data)]) + data
        open(m.s("n.tensor"), "wb").write(t)
        o = u32(0) + u32(1) + u32(0x400) + b"\x81\xa5epoch" + u32(3)
        o += bytes([0x80 | len(f32)])
        for i, b in enumerate(f32):
            o += bytes([0xa2]) + b"f%d" % i + b"\xca" + struct.pack(">I", b)
        open(m.s("n.optimizer"), "wb").write(o)
        check_view(m, "n.tensor/values.txt", texts("float32"), m.s("n.tensor"))
        for i, want in enumerate(texts("float32")):
            check_view(m, "n.optimizer/float_configs/f%d" % i, [want], m.s("n.optimizer"))
        # TenniS: one node, a param of each float type (one field each)
        params = []
        for code, dt in ((9, "float16"), (10, "float32"), (11, "float64")):
            params.append((dt, code, len(PATTERNS[dt][1]), raw(dt)))
        for code, part in ((22, "float16"), (23, "float32"), (24, "float64")):
            data, _ = complex_raw(part)
            params.append(("c" + part, code, 4, data))
        body = struct.pack("<I", len(params) + 1)
        op = b"<const>"
        body += struct.pack("<I", 3) + b"#op" + struct.pack("<IBI", 1, 13, 1) + struct.pack("<I", len(op)) + op
        for name, code, n, data in params:
            body += struct.pack("<I", len(name)) + name.encode()
            body += struct.pack("<IBII", 1, code, 1, n) + data
        body += struct.pack("<I", 0)
        tsm = struct.pack("<II", 0, 0x19910929) + bytes(120)
        tsm += struct.pack("<II", 0, 0) + struct.pack("<I", 1) + body
        open(m.s("n.tsm"), "wb").write(tsm)
        for dt in ("float16", "float32", "float64"):
            check_view(m, "n.tsm/nodes/0/params/%s/values.txt" % dt, texts(dt), m.s("n.tsm"))
        for part in ("float16", "float32", "float64"):
            check_view(m, "n.tsm/nodes/0/params/c%s/values.txt" % part, complex_raw(part)[1],
                       m.s("n.tsm"))
        eq(error_lines(m), [], "error lines")


def dbdf_dense(vt, rows, cols, data):
    return struct.pack("<BBQQB", 1, 1, rows, cols, vt) + struct.pack("<QQIIBB", 0, 0, rows, cols, 1, vt) + data


def test_daphne_plearn():
    f64, f32 = PATTERNS["float64"][1], PATTERNS["float32"][1]
    with Mount([]) as m:
        open(m.s("d64.dbdf"), "wb").write(dbdf_dense(7, 1, len(f64), raw("float64")))
        open(m.s("d32.dbdf"), "wb").write(dbdf_dense(6, len(f32), 1, raw("float32")))
        # CSR (DAPHNE >= 0.2): one entry a row, on the diagonal
        n = len(f64)
        csr = struct.pack("<BBQQB", 1, 2, n, n, 7) + struct.pack("<QQIIBB", 0, 0, n, n, 2, 7)
        csr += struct.pack("<Q", n) + struct.pack("<%dQ" % (n + 1), *range(n + 1))
        csr += struct.pack("<%dQ" % n, *range(n)) + raw("float64")
        open(m.s("csr.dbdf"), "wb").write(csr)
        # a frame as DAPHNE writes it: a float64 and a float32 column,
        # records row by row (labels are garbage: col_0, col_1)
        k = min(len(f64), len(f32))
        fr = struct.pack("<BBQQ", 1, 3, k, 2) + bytes([7, 6]) + struct.pack("<H", 1) + b"a"
        fr += struct.pack("<H", 1) + b"b" + struct.pack("<QQ", 0, 0)
        for i in range(k):
            fr += struct.pack("<QI", f64[i], f32[i])
        open(m.s("fr.dbdf"), "wb").write(fr)
        check_view(m, "d64.dbdf/values.txt", texts("float64"), m.s("d64.dbdf"))
        check_view(m, "d32.dbdf/values.txt", texts("float32"), m.s("d32.dbdf"))
        check_view(m, "csr.dbdf/matrix.mtx", texts("float64"), m.s("csr.dbdf"))
        check_view(m, "csr.dbdf/blocks/0/values.txt",
                   [t if i == j else "0" for i, t in enumerate(texts("float64")) for j in range(n)],
                   m.s("csr.dbdf"))
        t64, t32 = texts("float64")[:k], texts("float32")[:k]
        check_view(m, "fr.dbdf/frame.csv", [x for p in zip(t64, t32) for x in p], m.s("fr.dbdf"),
                   write_back=False)
        check_view(m, "fr.dbdf/columns/col_1/values.txt", t32, m.s("fr.dbdf"))
        # PLearn: .pmat of doubles and of floats, binary options and a
        # binary vector, an ascii file (no negative NaN there)
        for name, kind, dt in (("d.pmat", "DOUBLE", "float64"), ("f.pmat", "FLOAT", "float32")):
            h = ("MATRIX %d 1 %s LITTLE_ENDIAN" % (len(PATTERNS[dt][1]), kind)).ljust(63) + "\n"
            open(m.s(name), "wb").write(h.encode() + raw(dt))
            check_view(m, name + "/values.txt", texts(dt), m.s(name))
        ps = b"A(\n"
        for i, b in enumerate(f64):
            ps += b"d%d = \x10" % i + b.to_bytes(8, "little") + b" ;\n"
            ps += b"D%d = \x11" % i + b.to_bytes(8, "big") + b" ;\n"
        for i, b in enumerate(f32):
            ps += b"f%d = \x0e" % i + b.to_bytes(4, "little") + b" ;\n"
        ps += b"v = \x12\x10" + struct.pack("<I", len(f64)) + raw("float64") + b" )\n"
        open(m.s("b.psave"), "wb").write(ps)
        for i, want in enumerate(texts("float64")):
            check_view(m, "b.psave/d%d" % i, [want], m.s("b.psave"))
            check_view(m, "b.psave/D%d" % i, [want], m.s("b.psave"))
        for i, want in enumerate(texts("float32")):
            check_view(m, "b.psave/f%d" % i, [want], m.s("b.psave"))
        check_view(m, "b.psave/v/values.txt", texts("float64"), m.s("b.psave"))
        open(m.s("a.psave"), "wb").write(b"A(\nx = -nan ;\nv = 3 [ nan -nan 1.5 ] )\n")
        eq(m.text("a.psave", "x"), "-nan\n", "an ascii option: its text as in the file")
        check_view(m, "a.psave/v/values.txt", ["nan", "nan", "1.5"], m.s("a.psave"))
        write_ok(m.m("a.psave", "v", "values.txt"), "-nan\n2\n1.5\n")
        eq(m.text("a.psave", "v", "values.txt"), "nan\n2\n1.5\n", "ascii PLearn: nan, unsigned")
        eq(error_lines(m), [], "error lines")


NAMES = ["plain.w", "back\\slash.w", "tab\there.w", "new\nline.w", "all\\\t\n.w"]


def escaped(name):
    return name.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def check_index(m, model, names, sep=None):
    lines = m.read(model, "index").decode().split("\n")[:-1]
    eq([ln.split("\t")[0] for ln in lines], [escaped(n) for n in names], "index names of " + model)
    for n in names:
        parts = n.replace("/", ".").split(".") if sep == "/" else n.split(".")
        check(os.path.isdir(m.m(model, "tensors", *parts)), "%s: %r" % (model, n))


def test_index_names():
    with Mount([]) as m:
        a = np.arange(2, dtype=np.float32)
        st_write(m.s("n.safetensors"), {n: a for n in NAMES})
        gw.write(m.s("n.gguf"), [("general.name", "str", "names")],
                 [(n, 0, [2], a.tobytes()) for n in NAMES])
        np.savez(m.s("n.npz"), **{n: a for n in NAMES})
        with zipfile.ZipFile(m.s("d.npz"), "w", zipfile.ZIP_DEFLATED) as z:
            for n in NAMES:
                import io
                b = io.BytesIO()
                np.save(b, a)
                z.writestr(n.replace(".", "/") + ".npy", b.getvalue())
        # sorted in the file by the reference writer: the index follows the file
        check_index(m, "n.safetensors", sorted(NAMES))
        check_index(m, "n.gguf", NAMES)
        check_index(m, "n.npz", NAMES)
        check_index(m, "d.npz", [n.replace(".", "/") for n in NAMES], sep="/")
        eq(error_lines(m), [], "error lines")


if __name__ == "__main__":
    run([test_numpy, test_safetensors_gguf, test_primitiv_tennis, test_daphne_plearn,
         test_index_names])
