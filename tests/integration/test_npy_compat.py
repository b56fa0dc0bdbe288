"""NumPy files from other writers than today's NumPy on x86-64, through a
real mount: .npy headers of NumPy under Python 2 (`'shape': (2L, 3L)`),
which numpy.load reads; long double arrays (`<f16` float128, `<c32`
complex256) as NumPy writes them here (x87 extended precision in 16 bytes),
in .npy files and stored and deflated .npz members: their values.txt is
the shortest text that reads back exactly (the digits NumPy's own shortest
repr gives), an edit gives numpy.load the exact values, data.npy keeps the
dtype, out-of-range text is refused; the same descr holding IEEE binary128
(written on aarch64) shows shape, dtype and data only, without an errors
line."""
import errno
import os
import re
import struct
import subprocess
import warnings

import numpy as np

from harness import VALGRIND, Mount, check, eq, run, sha
from formats import error_lines, expect_refused, write_ok

LD = np.longdouble
# NumPy warns of "overflow" reading a long double subnormal from text
warnings.filterwarnings("ignore", "overflow encountered in conversion from string")
VALUES = [1.5, -2.25, 0.1, LD(1) / 3, LD("1e-4000"), LD("1.189731495357231765e4932"),
          LD("3.6451995318824746025e-4951"), np.inf, -np.inf, 0.0, -0.0, LD(2) ** 70, 1e16,
          1e15, 1e-5, LD("123456789.125"), -LD(7) / 3, LD("0.1")]


def py2_npy(path, descr, shape_text, raw):
    """A .npy v1.0 as NumPy under Python 2 wrote it: sizes as longs, the
    header padded to 16 bytes."""
    d = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    h = d + " " * ((16 - (10 + len(d) + 1) % 16) % 16) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() + raw)


def test_python2_headers():
    with Mount([]) as m:
        py2_npy(m.s("m23.npy"), "<f8", "(2L, 3L)", np.arange(6, dtype="<f8").tobytes())
        py2_npy(m.s("v2.npy"), "<i4", "(2L,)", np.array([7, -8], "<i4").tobytes())
        py2_npy(m.s("s.npy"), "<f4", "()", np.array(1.5, "<f4").tobytes())
        for f, shape, text in (("m23.npy", "2 3\n", "0 1 2\n3 4 5\n"), ("v2.npy", "2\n", "7\n-8\n"),
                               ("s.npy", "\n", "1.5\n")):
            check(os.path.isdir(m.m(f)), f + " is a model")
            eq(m.text(f, "shape"), shape, f + " shape")
            eq(m.text(f, "values.txt"), text, f + " values.txt")
            a = np.load(m.s(f))
            eq(np.load(m.m(f, "data.npy")).tolist(), a.tolist(), f + " data.npy")
        eq(m.text("m23.npy", "header"), "{'descr': '<f8', 'fortran_order': False, 'shape': (2L, 3L), }\n")
        # edits in place keep the header as it was, and numpy.load agrees
        write_ok(m.m("m23.npy", "values.txt"), "0 1 2\n3 4 0.25\n")
        eq(np.load(m.s("m23.npy")).tolist(), [[0, 1, 2], [3, 4, 0.25]], "after the edit")
        check(b"(2L, 3L)" in open(m.s("m23.npy"), "rb").read(128), "the Python 2 header kept")
        eq(error_lines(m), [], "error lines")


def digits(text):
    """Significant digits and exponent of a decimal text, for comparing
    shortest forms: ('15', 0) for 1.5, ('1', -4000) for 1e-4000."""
    mant, _, exp = text.lstrip("+-").lower().partition("e")
    e = int(exp or 0)
    if "." in mant:
        ip, fp = mant.split(".")
    else:
        ip, fp = mant, ""
    ds = (ip + fp).lstrip("0")
    e += len(ip.lstrip("0")) - 1 if ip.lstrip("0") else -(len(fp) - len(fp.lstrip("0")) + 1)
    return ds.rstrip("0") or "0", e


def check_long_values(text, arr, what):
    """Each token of values.txt reads back (np.longdouble) to exactly the
    element, its sign and NaN-ness included, and has NumPy's own shortest
    digits."""
    toks = text.split()
    flat = arr.ravel()
    eq(len(toks), flat.size, "values in " + what)
    for t, v in zip(toks, flat):
        parts = [(t, v)]
        if arr.dtype.kind == "c":
            re_t, im_t = re.fullmatch(r"(.+?)([+-][^+-]*)j", t).groups()
            parts = [(re_t, v.real), (im_t, v.imag)]
        for pt, pv in parts:
            back = LD(pt)
            if np.isnan(pv):
                check(np.isnan(back), "%s: %s for nan" % (what, pt))
                eq(pt.startswith("-"), bool(np.signbit(pv)), "%s: sign of %s" % (what, pt))
                continue
            check(back == pv and np.signbit(back) == np.signbit(pv), "%s: %s reads %r, not %r" % (what, pt, back, pv))
            if np.isfinite(pv) and pv != 0:
                eq(digits(pt), digits(np.format_float_scientific(pv, unique=True)), "%s: digits of %s" % (what, pt))


def x87_bytes(a):
    """The 10 value bytes of each float128 (the padding aside)."""
    return np.ascontiguousarray(a).view(np.uint8).reshape(-1, 16)[:, :10].tobytes()


def test_long_double_npy():
    a = np.array(VALUES + [np.nan, -np.nan], dtype=LD)
    c = np.array([1 + 2j, complex(-0.5, -1 / 3), complex(np.nan, -np.inf)], dtype=np.clongdouble)
    c[1] = LD(-0.5) - 1j * (LD(1) / 3)
    with Mount([]) as m:
        np.save(m.s("a.npy"), a)
        np.save(m.s("g.npy"), LD(1) / np.arange(1, 9, dtype=LD))  # padding NumPy left as it was
        np.save(m.s("c.npy"), c)
        np.save(m.s("be.npy"), a.astype(">f16"))
        np.save(m.s("f.npy"), np.asfortranarray((LD(1) / np.arange(1, 7, dtype=LD)).reshape(2, 3)))
        for f in ("a.npy", "g.npy", "c.npy", "be.npy", "f.npy"):
            want = np.load(m.s(f))
            eq(sorted(os.listdir(m.m(f))), ["data", "data.npy", "dtype", "header", "shape", "values.txt"], f)
            eq(m.text(f, "dtype"), ("complex256" if f == "c.npy" else "float128") + "\n", f + " dtype")
            check_long_values(m.text(f, "values.txt"), want, f)
            got = np.load(m.m(f, "data.npy"))
            eq(got.dtype.str, "<c32" if f == "c.npy" else "<f16", f + " data.npy dtype")
            eq(x87_bytes(got.astype(got.dtype.newbyteorder("<"))),
               x87_bytes(want.astype(want.dtype.newbyteorder("<"))), f + " data.npy values")
        eq(m.text("f.npy", "values.txt").splitlines()[0].split()[1], "0.5", "Fortran order, row-major text")
        # an unchanged write-back changes nothing (the padding stays)
        h = sha(m.s("g.npy"))
        write_ok(m.m("g.npy", "values.txt"), m.text("g.npy", "values.txt"))
        eq(sha(m.s("g.npy")), h, "unchanged write-back")
        # edits: exact values for numpy.load, the others untouched
        lines = m.text("a.npy", "values.txt").splitlines()
        lines[0], lines[1] = "0.1", "-1.0000000000000000000000001e-4000"
        write_ok(m.m("a.npy", "values.txt"), "\n".join(lines) + "\n")
        b = np.load(m.s("a.npy"))
        check(b[0] == LD("0.1") and b[1] == LD("-1.0000000000000000000000001e-4000"), "edited: %r" % b[:2])
        eq(x87_bytes(b[2:]), x87_bytes(a[2:]), "the other values")
        subprocess.run(["sed", "-i", "1s/.*/2+0.25j/", m.m("c.npy", "values.txt")], check=True)
        eq(complex(np.load(m.s("c.npy"))[0]), 2 + 0.25j, "complex256 edit")
        write_ok(m.m("be.npy", "values.txt"), "\n".join(["3.25"] + lines[1:]) + "\n")
        eq(np.load(m.s("be.npy")).dtype.str, ">f16", "big-endian kept")
        eq(np.load(m.s("be.npy"))[0], LD("3.25"), "big-endian edit")
        # data.npy written with numpy: the values, exactly
        new = LD(2) / np.arange(1, 9, dtype=LD)
        np.save(m.m("g.npy", "data.npy"), new)
        eq(x87_bytes(np.load(m.s("g.npy"))), x87_bytes(new), "data.npy write")
        # out of range, not a number: refused, the source untouched
        expect_refused(m, "a.npy/values.txt", "1e5000\n" * a.size, m.s("a.npy"), errno.ERANGE)
        expect_refused(m, "a.npy/values.txt", "0x1p3\n" * a.size, m.s("a.npy"))
        errs = [ln for ln in error_lines(m) if "1e5000" in ln]
        check(errs and "float128, which holds -1.189731495357231765e+4932" in errs[0], "message: %r" % errs)


def b128(x):
    """IEEE binary128 bytes (little-endian) of a double's value: what NumPy
    on aarch64 writes as <f16."""
    u = struct.unpack("<Q", struct.pack("<d", x))[0]
    e, f, s = (u >> 52) & 0x7ff, u & ((1 << 52) - 1), u >> 63
    e128 = e - 1023 + 16383 if e else 0
    return ((s << 127) | (e128 << 112) | (f << 60)).to_bytes(16, "little")


def test_long_double_npz_and_binary128():
    a = LD(1) / np.arange(1, 13, dtype=LD)
    q = b"".join(b128(x) for x in (0.1, 0.2, 1.5, 3.0))
    with Mount([]) as m:
        np.savez(m.s("s.npz"), w=a.reshape(3, 4), f=np.asfortranarray(a.reshape(3, 4)))
        np.savez_compressed(m.s("z.npz"), w=a.reshape(3, 4), f=np.asfortranarray(a.reshape(3, 4)),
                            c=a[:4].astype(np.clongdouble))
        hdr = "{'descr': '<f16', 'fortran_order': False, 'shape': (4,), }"
        hdr += " " * (64 - 10 - len(hdr) - 1) + "\n"
        with open(m.s("quad.npy"), "wb") as f:
            f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + q)
        for z in ("s.npz", "z.npz"):
            with np.load(m.s(z)) as arrs:
                for k in arrs.files:
                    d = m.m(z, "tensors", k)
                    check_long_values(open(os.path.join(d, "values.txt")).read(), arrs[k], z + "/" + k)
        # edits of stored and deflated members: numpy.load reads the values
        for z in ("s.npz", "z.npz"):
            p = m.m(z, "tensors", "f", "values.txt")
            lines = open(p).read().splitlines()
            lines[0] = "0.1 " + " ".join(lines[0].split()[1:])
            write_ok(p, "\n".join(lines) + "\n")
            with np.load(m.s(z)) as arrs:
                eq(arrs["f"][0, 0], LD("0.1"), z + " edited")
                eq(x87_bytes(arrs["w"]), x87_bytes(a.reshape(3, 4)), z + " other member")
        # binary128: its bytes, no values, no errors line
        eq(sorted(os.listdir(m.m("quad.npy"))), ["data", "dtype", "header", "shape"], "binary128 .npy")
        eq(m.text("quad.npy", "dtype"), "float128\n")
        eq(m.text("quad.npy", "shape"), "4\n")
        eq(m.read("quad.npy", "data"), q, "binary128 data")
        eq(error_lines(m), [], "error lines")


if __name__ == "__main__":
    # valgrind runs x87 long double arithmetic at double precision (a
    # documented limit of its emulation), so under memcheck the daemon
    # cannot give 64-bit-mantissa values: the long double tests run in the
    # gcc, ASan and TSan stages only.
    if VALGRIND:
        print("long double tests left out under valgrind (its x87 emulation has 53 bits)")
        run([test_python2_headers])
    else:
        run([test_python2_headers, test_long_double_npy, test_long_double_npz_and_binary128])
