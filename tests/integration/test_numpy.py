"""NumPy .npy and .npz through a real mount, against NumPy itself: every
sample of tests/data/numpy (written by numpy.save, write_array with versions
1.0, 2.0 and 3.0, savez, savez_compressed; see make_samples.py) shows
exactly what numpy.load reads; edits through values.txt, data and data.npy
leave files that numpy.load reads as exactly the intended arrays and whose
zip structure zipfile.testzip() finds clean; bad input is refused with the
source byte-identical; corrupt archives pass through with an errors line."""
import errno
import hashlib
import io
import os
import random
import re
import struct
import subprocess
import threading
import zipfile
import zlib

import numpy as np

from harness import SLOW, VALGRIND, Mount, check, data, eq, run, settle, sha
from formats import (check_tensor_dir, error_lines, expect_refused, parse_values, read_text,
                     data_end, descriptors, same_array, savez_streamed, write_ok)

NPY = ["f32.npy", "v1.npy", "v2.npy", "v3.npy", "big_endian.npy", "big_i32.npy", "big_c16.npy",
       "fortran.npy", "fortran3.npy", "scalar.npy", "empty.npy", "bool.npy", "f16.npy",
       "u64.npy"]
PLAIN = ["strings.npy", "structured.npy", "object.npy"]
NPZ = ["stored.npz", "compressed.npz", "mixed.npz"]
ALL = ["numpy/" + f for f in NPY + PLAIN + NPZ]
VIEWS = {"shape", "dtype", "values.txt", "data", "data.npy", "matrix.mtx"}


def native(a):
    """a in native byte order (the mount's data.npy is little-endian)."""
    a = np.asarray(a)
    return a.astype(a.dtype.newbyteorder("="), copy=False)


def tensor_path(m, archive, key):
    """The tensor directory of member key: split at '.' and '/' (docs/layout.md
    "Dotted tensor names")."""
    parts = []
    for c in re.split(r"[./]", key):
        if c == "":
            c = "%"
        elif c in VIEWS:
            c += "~1"
        parts.append(c)
    return m.m(archive, "tensors", *parts)


def check_npz(m, name, expect=None):
    """Every array of the archive in the mount equals numpy.load's (or
    expect's), and the zip is clean."""
    src = m.s(name)
    with zipfile.ZipFile(src) as z:
        eq(z.testzip(), None, "testzip of " + name)
    with np.load(src) as f:
        keys = list(f.keys()) if expect is None else list(expect.keys())
        for k in keys:
            want = f[k] if expect is None else expect[k]
            if expect is not None:
                same_array(native(f[k]), native(want), "numpy.load %s[%s]" % (name, k))
            got = check_tensor_dir(tensor_path(m, name, k))
            same_array(got, native(want), "%s member %s" % (name, k))


def test_npy_read():
    with Mount(ALL) as m:
        for f in NPY:
            a = check_tensor_dir(m.m(f))
            want = np.load(m.s(f))
            same_array(a, native(want), f)
            head = open(m.s(f), "rb").read(256)
            dict_text = head[head.index(b"{"):head.index(b"}") + 1].decode() + "\n"
            eq(read_text(m.m(f), "header"), dict_text, "header of " + f)
        eq(read_text(m.m("v3.npy"), "dtype"), "complex64\n", "v3 dtype")
        eq(read_text(m.m("fortran.npy"), "values.txt"), "0 1 2 3\n4 5 6 7\n8 9 10 11\n", "fortran")
        eq(read_text(m.m("scalar.npy"), "shape"), "\n", "0-d shape")
        eq(read_text(m.m("empty.npy"), "values.txt"), "", "empty values")
        for f in PLAIN:
            check(os.path.isfile(m.m(f)), f + " is not a plain file")
            eq(m.read(f), open(m.s(f), "rb").read(), f + " passes through")
        for f in NPZ:
            settle(m.m(f))
        eq(error_lines(m), [], "error lines")


def test_npz_read():
    with Mount(ALL) as m:
        check_npz(m, "stored.npz")
        check_npz(m, "compressed.npz")
        idx = read_text(m.m("stored.npz"), "index").splitlines()
        eq(len(idx), 7, "index lines")
        eq(idx[0].split("\t")[:3], ["weight", "float32", "4 5"], "index line 0")
        off = int(idx[0].split("\t")[3])
        raw = open(m.s("stored.npz"), "rb").read()
        eq(raw[off:off + 80], np.load(m.s("stored.npz"))["weight"].tobytes(), "index offset")
        cidx = read_text(m.m("compressed.npz"), "index").splitlines()
        eq(cidx[0].split("\t")[3], "-", "index offset of a deflated member")
        # mixed: a .npy member, a text member, a string array member
        same_array(check_tensor_dir(tensor_path(m, "mixed.npz", "a")), np.arange(4, dtype=np.uint16), "mixed a")
        eq(m.read("mixed.npz", "files", "README.txt"), b"not an array\n", "text member")
        with zipfile.ZipFile(m.s("mixed.npz")) as z:
            eq(m.read("mixed.npz", "files", "names.npy"), z.read("names.npy"), "string member")
        eq(error_lines(m), [], "error lines")


def edit_values(m, path, arr):
    """Write arr (logical order) as values.txt text of path."""
    text = "\n".join(" ".join(repr(float(v)) if arr.dtype.kind == "f" else str(v) for v in row)
                     for row in np.atleast_2d(arr).reshape(-1, arr.shape[-1] if arr.ndim else 1))
    write_ok(os.path.join(path, "values.txt"), text + "\n")


def test_npy_edit():
    with Mount(ALL) as m:
        for f in ["f32.npy", "big_endian.npy", "fortran.npy", "v2.npy", "v3.npy", "big_i32.npy"]:
            a = np.load(m.s(f))
            size = os.path.getsize(m.s(f))
            b = a.copy()
            b.flat[-1] = 5 if b.dtype.kind in "iu" else 0.5
            subprocess.run(["sed", "-i", "$ s/[^ ]*$/%s/" % (
                "5" if b.dtype.kind in "iu" else ("0.5+0j" if b.dtype.kind == "c" else "0.5")),
                            m.m(f, "values.txt")], check=True)
            got = np.load(m.s(f))
            same_array(got, b, "after sed on " + f)
            eq(got.dtype, a.dtype, "dtype (byte order) kept in " + f)
            eq(got.flags.f_contiguous, a.flags.f_contiguous, "order kept in " + f)
            eq(os.path.getsize(m.s(f)), size, "in place: " + f)
            same_array(check_tensor_dir(m.m(f)), native(b), "view after edit " + f)
        # a new shape through data.npy: header and array written again
        for f in ["f32.npy", "big_endian.npy", "v2.npy", "fortran.npy"]:
            a = np.load(m.s(f))
            new = np.arange(7, dtype=native(a).dtype) * 2
            np.save(m.m(f, "data.npy"), new)
            got = np.load(m.s(f))
            same_array(native(got), new, "reshape of " + f)
            eq(got.dtype.byteorder, a.dtype.byteorder, "byte order after reshape of " + f)
            check_tensor_dir(m.m(f))
        # data: raw little-endian bytes at any offset
        with open(m.m("big_i32.npy", "data"), "r+b") as g:
            g.seek(4)
            g.write(np.int32(-9).tobytes())
        eq(list(np.load(m.s("big_i32.npy"))[:2]), [1, -9], "data write to a big-endian array")
        eq(error_lines(m), [], "error lines")


def test_npy_refused():
    with Mount(ALL) as m:
        expect_refused(m, "f32.npy/values.txt", "1 2 3\n", m.s("f32.npy"))
        expect_refused(m, "bool.npy/values.txt", "1 0 2\n", m.s("bool.npy"), errno.ERANGE)
        expect_refused(m, "u64.npy/values.txt", "-1 0\n", m.s("u64.npy"), errno.ERANGE)
        try:
            open(m.m("f32.npy", "header"), "w").close()
            raise AssertionError("header opened for writing")
        except PermissionError:
            pass


def test_npz_edit_stored():
    with Mount(ALL) as m:
        src = m.s("stored.npz")
        size = os.path.getsize(src)
        want = dict(np.load(src))
        want["weight"] = want["weight"].copy()
        want["weight"][3, 4] = 0.25
        d = tensor_path(m, "stored.npz", "weight")
        subprocess.run(["sed", "-i", "$ s/[^ ]*$/0.25/", os.path.join(d, "values.txt")], check=True)
        check_npz(m, "stored.npz", want)
        eq(os.path.getsize(src), size, "stored edit in place")
        want["be"] = np.array([1.0, 3.5], dtype=">f4")
        write_ok(os.path.join(tensor_path(m, "stored.npz", "be"), "values.txt"), "1\n3.5\n")
        check_npz(m, "stored.npz", want)
        want["fort"] = np.asfortranarray(want["fort"] * 2)
        edit_values(m, tensor_path(m, "stored.npz", "fort"), want["fort"])
        check_npz(m, "stored.npz", want)
        eq(os.path.getsize(src), size, "stored edits in place")
        # a new shape: the member and the directory after it move
        want["enc/block.1/w"] = np.arange(10, dtype=np.int64).reshape(5, 2)
        np.save(os.path.join(tensor_path(m, "stored.npz", "enc/block.1/w"), "data.npy"),
                want["enc/block.1/w"])
        check_npz(m, "stored.npz", want)
        want["empty"] = np.array([1.5, 2.5, 3.5], dtype=np.float32)
        np.save(os.path.join(tensor_path(m, "stored.npz", "empty"), "data.npy"), want["empty"])
        check_npz(m, "stored.npz", want)
        eq(error_lines(m), [], "error lines")


def test_npz_edit_compressed():
    with Mount(ALL) as m:
        src = m.s("compressed.npz")
        want = dict(np.load(src))
        want["model.layer.0.bias"] = np.array([0, 1, 2, 3, 40.5])
        write_ok(os.path.join(tensor_path(m, "compressed.npz", "model.layer.0.bias"), "values.txt"),
                 "0 1 2 3 40.5\n")
        check_npz(m, "compressed.npz", want)
        with zipfile.ZipFile(src) as z:
            eq(z.getinfo("weight.npy").compress_type, zipfile.ZIP_DEFLATED, "still deflated")
        want["weight"] = np.ones((2, 2), dtype=np.float32)
        np.save(os.path.join(tensor_path(m, "compressed.npz", "weight"), "data.npy"), want["weight"])
        check_npz(m, "compressed.npz", want)
        want["be"] = np.array([-1.0, 2.0], dtype=">f4")
        write_ok(os.path.join(tensor_path(m, "compressed.npz", "be"), "values.txt"), "-1 2\n")
        check_npz(m, "compressed.npz", want)
        expect_refused(m, os.path.relpath(os.path.join(tensor_path(m, "compressed.npz", "scalar"),
                                                       "values.txt"), m.mnt), "1 2\n", src)
        eq(len(error_lines(m)), 1, "one error line (the refused write)")


def test_large_deflated():
    """A deflated member of many chunks reads exactly as the stored one."""
    rng = np.random.default_rng(5)
    big = rng.standard_normal(400000).astype(np.float32)
    ints = np.arange(150000, dtype=np.int64) * 3
    with Mount([]) as m:
        np.savez(m.s("s.npz"), big=big, ints=ints)
        np.savez_compressed(m.s("c.npz"), big=big, ints=ints)
        for k in ["big", "ints"]:
            ts = open(os.path.join(tensor_path(m, "s.npz", k), "values.txt")).read()
            tc = open(os.path.join(tensor_path(m, "c.npz", k), "values.txt")).read()
            eq(tc == ts, True, "values.txt of deflated %s equals the stored one" % k)
            same_array(parse_values(tc, str(big.dtype if k == "big" else ints.dtype)),
                       big if k == "big" else ints, "values of " + k)
            # reads at scattered offsets (back and forth)
            with open(os.path.join(tensor_path(m, "c.npz", k), "data"), "rb") as f:
                raw = (big if k == "big" else ints).tobytes()
                for off in [len(raw) - 100, 10, len(raw) // 2, 5000, len(raw) // 3]:
                    f.seek(off)
                    eq(f.read(64), raw[off:off + 64], "data at %d of %s" % (off, k))
        eq(error_lines(m), [], "error lines")


def test_deflated_concurrent():
    """Readers of one deflated member at once (several MB): whole values.txt
    and data from two processes each, and threads reading data at random
    offsets back and forth; the cache of kept text on and off. Every byte
    equals the stored member's. Half the size under a sanitizer, a quarter
    under valgrind."""
    n = 3 << (18 if VALGRIND else 19 if SLOW else 20)  # 12 MiB (6 MiB, 3 MiB)
    x = np.random.default_rng(9).standard_normal(n).astype(np.float32)
    raw = x.tobytes()
    for opts in ([], ["-o", "text_cache=0"]):
        with Mount([], opts=opts) as m:
            np.savez(m.s("s.npz"), x=x)
            np.savez_compressed(m.s("c.npz"), x=x)
            want = open(os.path.join(tensor_path(m, "s.npz", "x"), "values.txt"), "rb").read()
            d = tensor_path(m, "c.npz", "x")
            procs = [subprocess.Popen(["sh", "-c", "cat %s/%s | md5sum" % (d, v)],
                                      stdout=subprocess.PIPE) for v in ("values.txt", "data") * 2]
            bad = []

            def reader(seed):
                rng = random.Random(seed)
                with open(os.path.join(d, "data"), "rb") as f:
                    for _ in range(60):
                        off = rng.randrange(len(raw))
                        f.seek(off)
                        n = rng.choice((1, 4096, 1 << 20))
                        if f.read(n) != raw[off:off + n]:
                            bad.append(off)
            ts = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            eq(bad, [], "data reads at random offsets (%s)" % opts)
            sums = [p.communicate()[0].split()[0].decode() for p in procs]
            eq(sums, [hashlib.md5(want).hexdigest(), hashlib.md5(raw).hexdigest()] * 2,
               "whole values.txt and data, read at once (%s)" % opts)
            eq(error_lines(m), [], "error lines")


def test_large_fortran_deflated():
    """Fortran-order deflated members of several MB (rank 2 and 3): their
    values.txt, read by two processes at once, is byte for byte the text of
    the same arrays stored in C order; an edit through values.txt and a new
    array through data.npy give exactly the intended arrays, still in
    Fortran order, in a clean zip."""
    rng = np.random.default_rng(4)
    w = np.asfortranarray(rng.standard_normal((700, 500)))
    v = np.asfortranarray(rng.standard_normal((40, 60, 150)).astype(np.float32))
    with Mount([]) as m:
        np.savez_compressed(m.s("f.npz"), w=w, v=v)
        np.savez(m.s("s.npz"), w=np.ascontiguousarray(w), v=np.ascontiguousarray(v))
        for k in ("w", "v"):
            want = open(os.path.join(tensor_path(m, "s.npz", k), "values.txt"), "rb").read()
            d = tensor_path(m, "f.npz", k)
            procs = [subprocess.Popen(["sh", "-c", "cat %s/values.txt | md5sum" % d],
                                      stdout=subprocess.PIPE) for _ in range(2)]
            sums = [p.communicate()[0].split()[0].decode() for p in procs]
            eq(sums, [hashlib.md5(want).hexdigest()] * 2, "values.txt of " + k)
            eq(open(os.path.join(d, "data"), "rb").read(),
               (w if k == "w" else v).tobytes(order="F"), "data of " + k)
        text = read_text(tensor_path(m, "f.npz", "w"), "values.txt").split("\n")
        row = text[2].split(" ")
        row[0] = "0.125"
        text[2] = " ".join(row)
        write_ok(os.path.join(tensor_path(m, "f.npz", "w"), "values.txt"), "\n".join(text))
        w2 = w.copy(order="F")
        w2[2, 0] = 0.125
        check_npz(m, "f.npz", {"w": w2, "v": v})
        with np.load(m.s("f.npz")) as f:
            check(f["w"].flags.f_contiguous and f["v"].flags.f_contiguous, "still Fortran order")
        v2 = np.asfortranarray(rng.standard_normal(v.shape).astype(np.float32))
        np.save(os.path.join(tensor_path(m, "f.npz", "v"), "data.npy"), v2)
        check_npz(m, "f.npz", {"w": w2, "v": v2})
        eq(error_lines(m), [], "error lines")


def zip64_end(raw):
    """The archive with a zip64 end record and locator, and an end record
    whose fields say "see zip64" (as writers of huge archives do)."""
    e = raw.rindex(b"PK\x05\x06")
    count, cdsize, cdoff = struct.unpack("<HII", raw[e + 10:e + 20])
    z64 = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, count, count, cdsize, cdoff)
    loc = struct.pack("<IIQI", 0x07064b50, 0, e, 1)
    end = struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return raw[:e] + z64 + loc + end


def test_zip64_end():
    with Mount([]) as m:
        for name in ["stored.npz", "compressed.npz"]:
            open(m.s(name), "wb").write(zip64_end(open(data("numpy/" + name), "rb").read()))
            check_npz(m, name)
            want = dict(np.load(m.s(name)))
            want["scalar"] = np.array(-4, dtype=np.int32)
            write_ok(os.path.join(tensor_path(m, name, "scalar"), "values.txt"), "-4\n")
            check_npz(m, name, want)
            want["weight"] = np.zeros((3,), dtype=np.float32)
            np.save(os.path.join(tensor_path(m, name, "weight"), "data.npy"), want["weight"])
            check_npz(m, name, want)
            check(b"PK\x06\x06" in open(m.s(name), "rb").read()[-200:], "zip64 end kept in " + name)
        eq(error_lines(m), [], "error lines")


def corrupt_variants(raw):
    """(name, bytes) of broken archives."""
    eocd = raw.rindex(b"PK\x05\x06")
    yield "truncated.npz", raw[:len(raw) // 2]
    bad_off = bytearray(raw)
    bad_off[eocd + 16:eocd + 20] = (len(raw) + 5).to_bytes(4, "little")
    yield "cd_offset.npz", bytes(bad_off)
    cd = int.from_bytes(raw[eocd + 16:eocd + 20], "little")
    lying = bytearray(raw)  # first member's compressed size: far beyond the file
    lying[cd + 20:cd + 24] = (0x7FFFFFF0).to_bytes(4, "little")
    yield "lying_size.npz", bytes(lying)
    overlap = bytearray(raw)  # second member's local header offset = the first's
    c2 = raw.index(b"PK\x01\x02", cd + 4)
    overlap[c2 + 42:c2 + 46] = raw[cd + 42:cd + 46]
    yield "overlap.npz", bytes(overlap)


def test_corrupt():
    raw = open(data("numpy/stored.npz"), "rb").read()
    with Mount([]) as m:
        for name, b in corrupt_variants(raw):
            open(m.s(name), "wb").write(b)
        open(m.s("bad_header.npy"), "wb").write(
            b"\x93NUMPY\x01\x00\x20\x00{'descr': '<f4', 'shape': (2,)}  \n" + b"\0" * 8)
        for name, _ in corrupt_variants(raw):
            settle(m.m(name))
            check(os.path.isfile(m.m(name)), name + " is not a plain file")
        settle(m.m("bad_header.npy"))
        check(os.path.isfile(m.m("bad_header.npy")), "bad header shown as a directory")
        errs = error_lines(m)
        for name in [n for n, _ in corrupt_variants(raw)] + ["bad_header.npy"]:
            check(any((" %s: " % name) in ln for ln in errs), "no error line for " + name)
    # a deflated member whose CRC-32 is wrong: small archives are inflated
    # whole when indexed, so it is found there and left out with an errors
    # line, the other members shown as numpy.load reads them
    comp = bytearray(open(data("numpy/compressed.npz"), "rb").read())
    with zipfile.ZipFile(io.BytesIO(bytes(comp))) as z:
        info = z.getinfo("model.layer.0.bias.npy")
    eocd = comp.rindex(b"PK\x05\x06")
    cd = int.from_bytes(comp[eocd + 16:eocd + 20], "little")
    c = cd
    while True:
        nl, xl, cl = (int.from_bytes(comp[c + k:c + k + 2], "little") for k in (28, 30, 32))
        if comp[c + 46:c + 46 + nl] == info.filename.encode():
            break
        c += 46 + nl + xl + cl
    comp[c + 16] ^= 1
    lh = info.header_offset
    comp[lh + 14] ^= 1
    with Mount([]) as m:
        open(m.s("crc.npz"), "wb").write(bytes(comp))
        settle(m.m("crc.npz"))
        check(os.path.isdir(m.m("crc.npz")), "an archive with one bad member is shown")
        check(not os.path.exists(tensor_path(m, "crc.npz", "model.layer.0.bias")),
              "the member with a wrong CRC-32 is left out")
        check(any("crc.npz: " in ln and "model.layer.0.bias.npy" in ln and "CRC-32" in ln
                  for ln in error_lines(m)), "no CRC-32 error line: %r" % error_lines(m))
        with np.load(m.s("crc.npz")) as f:
            for k in f.keys():
                if k != "model.layer.0.bias":
                    same_array(check_tensor_dir(tensor_path(m, "crc.npz", k)), native(f[k]),
                               "crc.npz member " + k)


def npy_bytes(a):
    b = io.BytesIO()
    np.save(b, a)
    return b.getvalue()


def test_bad_members():
    """An archive whose members are not all valid arrays mounts like
    numpy.load reads it: valid arrays as tensors, members that are not valid
    .npy files (empty, a bad header) and other members, stored or deflated,
    as read-only files under files/ with their exact bytes, members whose
    bytes cannot be read (bzip2) left out; one errors line names the first
    bad member and counts the rest. An edit of a tensor keeps every other
    member byte for byte."""
    a, b = np.arange(5, dtype=np.int16), np.linspace(0, 1, 7)
    members = [("a.npy", npy_bytes(a), zipfile.ZIP_DEFLATED),
               ("empty.npy", b"", zipfile.ZIP_DEFLATED),
               ("bad.npy", b"\x93NUMPY\x01\x00\x10\x00{'descr': 'zz'}\n" + b"\0" * 4,
                zipfile.ZIP_STORED),
               ("notes/README.txt", b"deflated text\n" * 5000, zipfile.ZIP_DEFLATED),
               ("stored.txt", b"stored bytes", zipfile.ZIP_STORED),
               ("bz.npy", npy_bytes(np.ones(3)), zipfile.ZIP_BZIP2),
               ("b.npy", npy_bytes(b), zipfile.ZIP_DEFLATED),
               ("c.npy", npy_bytes(a[::-1].copy()), zipfile.ZIP_STORED)]
    with Mount([]) as m:
        with zipfile.ZipFile(m.s("bad.npz"), "w") as z:
            for name, content, method in members:
                z.writestr(zipfile.ZipInfo(name), content, compress_type=method)
        settle(m.m("bad.npz"))
        same_array(check_tensor_dir(tensor_path(m, "bad.npz", "a")), a, "member a")
        same_array(check_tensor_dir(tensor_path(m, "bad.npz", "b")), b, "member b")
        for name, content, _ in members[1:5]:
            f = m.m("bad.npz", "files", name.replace("/", "%2F"))
            eq(open(f, "rb").read(), content, "files/ " + name)
            eq(os.stat(f).st_size, len(content), "size of files/ " + name)
            eq(os.stat(f).st_mode & 0o222, 0, "mode of files/ " + name)
        eq(sorted(os.listdir(m.m("bad.npz", "files"))),
           sorted(["bad.npy", "empty.npy", "notes%2FREADME.txt", "stored.txt"]), "files/")
        check(not os.path.exists(tensor_path(m, "bad.npz", "bz")), "bzip2 member left out")
        errs = [ln for ln in error_lines(m) if " bad.npz: " in ln]
        eq(len(errs), 1, "one errors line: %r" % errs)
        check('member "empty.npy"' in errs[0] and "(and 2 more)" in errs[0],
              "the errors line: %r" % errs[0])
        # a write through files/ is refused, the source unchanged
        before = sha(m.s("bad.npz"))
        try:
            with open(m.m("bad.npz", "files", "stored.txt"), "wb") as f:
                f.write(b"x")
            raise AssertionError("files/stored.txt accepted a write")
        except OSError:
            pass
        eq(sha(m.s("bad.npz")), before, "source after a refused write")
        # edits of a deflated member (the archive rewritten) and of a stored
        # one (patched in place) keep every other member's bytes
        write_ok(os.path.join(tensor_path(m, "bad.npz", "b"), "values.txt"), "0 1 2 3 4 5 6\n")
        write_ok(os.path.join(tensor_path(m, "bad.npz", "c"), "values.txt"), "9 8 7 6 5\n")
        with zipfile.ZipFile(m.s("bad.npz")) as z:
            eq([i.filename for i in z.infolist()], [n for n, _, _ in members], "member order")
            for name, content, _ in members:
                want = {"b.npy": npy_bytes(np.arange(7.0)),
                        "c.npy": npy_bytes(np.arange(9, 4, -1, dtype=np.int16))}.get(name, content)
                eq(z.read(name), want, "member %s after the edits" % name)


def test_data_descriptors():
    """Members written by zipfile to a stream (sizes and CRC-32 in a data
    descriptor, 4 or 8 bytes each): all read; edits of values (float32 from
    random bits) and new shapes through data.npy, stored and deflated, give
    exactly the intended arrays, with the descriptors and the central
    directory up to date; a member whose descriptor does not hold its
    sizes is read-only, the source unchanged."""
    rng = np.random.default_rng(21)
    a, b = np.arange(3000, dtype=np.float32), np.linspace(0, 1, 3)
    archives = (("s.npz", zipfile.ZIP_STORED, False), ("d.npz", zipfile.ZIP_DEFLATED, False),
                ("z.npz", zipfile.ZIP_DEFLATED, True))
    with Mount([]) as m:
        for name, method, z64 in archives:
            savez_streamed(m.s(name), (("a", a), ("b", b)), method, z64)
            descriptors(m.s(name))
            check_npz(m, name)
            bits = rng.integers(0, 1 << 32, a.size, dtype=np.uint64).astype(np.uint32)
            na = bits.view(np.float32).copy()
            na[~np.isfinite(na)] = 0.5
            write_ok(os.path.join(tensor_path(m, name, "a"), "values.txt"),
                     " ".join(str(v) for v in na) + "\n")
            check_npz(m, name, {"a": na, "b": b})
            nb = rng.standard_normal((4, 5))
            np.save(os.path.join(tensor_path(m, name, "b"), "data.npy"), nb)
            check_npz(m, name, {"a": na, "b": nb})
            descriptors(m.s(name))
        # sizes in the descriptor that are not the central directory's
        raw = bytearray(open(m.s("s.npz"), "rb").read())
        with zipfile.ZipFile(m.s("s.npz")) as z:
            info = z.getinfo("b.npy")
        end = data_end(raw, info)
        raw[end + 8:end + 12] = struct.pack("<I", info.compress_size + 1)
        open(m.s("bad.npz"), "wb").write(bytes(raw))
        path = os.path.join(tensor_path(m, "bad.npz", "b"), "values.txt")
        before = sha(m.s("bad.npz"))
        try:
            with open(path, "w") as f:
                f.write("1\n")
            raise AssertionError("accepted: " + path)
        except OSError as e:
            eq(e.errno, errno.EACCES, "refusal of " + path)
        eq(sha(m.s("bad.npz")), before, "source after the refusal of " + path)
        eq(error_lines(m), [], "error lines")


if __name__ == "__main__":
    run([test_npy_read, test_npz_read, test_npy_edit, test_npy_refused, test_npz_edit_stored,
         test_npz_edit_compressed, test_large_deflated, test_deflated_concurrent,
         test_large_fortran_deflated, test_zip64_end,
         test_corrupt, test_bad_members, test_data_descriptors])
