"""Small checks of hostile input: .modelfs/errors is UTF-8 whatever bytes a
user wrote; a malformed .meta sidecar of a DAPHNE file (too deep, not UTF-8,
a numRows that is not the file's) gets a line in .modelfs/errors and the
labels fall back as before; a .npy header with a key twice is refused."""
import errno
import os
import struct
import time

from harness import Mount, check, eq, run

GEN = "daphne/generated/"


def write_errno(path, data):
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as e:
        return e.errno
    return 0


def test_errors_are_utf8():
    with Mount(["primitiv/tensor_2x3.tensor"]) as m:
        v = m.m("tensor_2x3.tensor", "values.txt")
        eq(write_errno(v, b"1 2 3 \xff\xfe\xe9t\xc3\xa9 5 6\n"), errno.EINVAL, "bad value")
        raw = m.read(".modelfs", "errors")
        text = raw.decode("utf-8")  # raises on bytes that are not UTF-8
        check("\\xff\\xfe\\xe9t\u00e9" in text, "escaped bytes not in %r" % text)


def meta_lines(m, name):
    return [l for l in m.errors().splitlines() if name + ".meta" in l]


def test_meta_malformed():
    files = [GEN + "dense_f64_3x4.dbdf", GEN + "dense_f64_3x4.dbdf.meta",
             GEN + "frame_mixed_4x8.dbdf", GEN + "frame_mixed_4x8.dbdf.meta"]
    for f in ("deep", "utf8", "rows", "good"):
        files += [(GEN + "dense_f64_3x4.dbdf", "%s.dbdf" % f),
                  (GEN + "frame_mixed_4x8.dbdf", "frame_%s.dbdf" % f)]
    with Mount(files) as m:
        good = open(m.s("frame_mixed_4x8.dbdf.meta"), "rb").read()
        dense = open(m.s("dense_f64_3x4.dbdf.meta"), "rb").read()
        deep = b'{"a":' + b"[" * 200000 + b"]" * 200000 + b"}"
        with open(m.s("deep.dbdf.meta"), "wb") as f:
            f.write(deep)
        with open(m.s("frame_deep.dbdf.meta"), "wb") as f:
            f.write(good[:-1] + b',"x":' + b"[" * 200000 + b"]" * 200000 + b"}")
        with open(m.s("utf8.dbdf.meta"), "wb") as f:
            f.write(dense[:-1] + b',"note":"\xff\xfe"}')
        with open(m.s("frame_utf8.dbdf.meta"), "wb") as f:
            f.write(good.replace(b'"price"', b'"pr\xc3ice"'))
        with open(m.s("rows.dbdf.meta"), "wb") as f:
            f.write(dense.replace(b'"numRows":3', b'"numRows":7'))
        with open(m.s("frame_rows.dbdf.meta"), "wb") as f:
            f.write(good.replace(b'"numRows":4', b'"numRows":40'))
        with open(m.s("good.dbdf.meta"), "wb") as f:
            f.write(dense)
        with open(m.s("frame_good.dbdf.meta"), "wb") as f:
            f.write(good)
        for name in ("deep", "utf8", "rows", "good"):
            os.listdir(m.m(name + ".dbdf"))
            os.listdir(m.m("frame_%s.dbdf" % name, "columns"))
        eq(meta_lines(m, "good.dbdf"), [], "good .meta")
        eq(meta_lines(m, "frame_good.dbdf"), [], "good frame .meta")
        for name, want in (("deep", "nested too deeply"), ("utf8", "invalid UTF-8"),
                           ("rows", "numRows is \"7\", expected 3")):
            for n in (name, "frame_" + name):
                got = meta_lines(m, n + ".dbdf")
                check(len(got) >= 1 and (want in got[0] or n == "frame_rows"),
                      "%s: %r" % (n, m.errors()))
        check("numRows is \"40\", expected 4" in meta_lines(m, "frame_rows.dbdf")[0],
              m.errors())
        # the labels: from the schema when it reads, else col_<i> as before
        cols = sorted(os.listdir(m.m("frame_good.dbdf", "columns")))
        check("price" in cols, "good labels: %r" % cols)
        eq(sorted(os.listdir(m.m("frame_rows.dbdf", "columns"))), cols, "labels, numRows off")
        for n in ("frame_deep", "frame_utf8"):
            eq(sorted(os.listdir(m.m(n + ".dbdf", "columns"))),
               sorted("col_%d" % i for i in range(8)), n + " labels")
        # the matrix itself reads as before
        eq(m.text("rows.dbdf", "values.txt"), m.text("good.dbdf", "values.txt"), "values")


def npy_with_header(d):
    h = d.encode()
    pad = 64 - (10 + len(h) + 1) % 64
    h += b" " * (pad % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h


def test_npy_duplicate_key():
    with Mount(["primitiv/tensor_2x3.tensor"]) as m:
        npy = m.m("tensor_2x3.tensor", "data.npy")
        before = m.read("tensor_2x3.tensor", "data.npy")
        body = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
        # NumPy takes the last value: (3, 2), which this tensor cannot take
        dup = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), "
                              "'shape': (3, 2), }")
        eq(write_errno(npy, dup + body), errno.EINVAL, "duplicate key")
        check("'shape' twice" in m.errors(), m.errors())
        eq(m.read("tensor_2x3.tensor", "data.npy"), before, "unchanged")
        dup = npy_with_header("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
                              "'shape': (2, 3), }")
        eq(write_errno(npy, dup + body), errno.EINVAL, "duplicate descr")
        ok = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }")
        eq(write_errno(npy, ok + body), 0, "one of each key")
        # data at an odd offset (a header not padded): read in place, unaligned
        odd = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3) }\n"
        odd = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(odd)) + odd
        check((len(odd)) % 4 != 0, "odd header length")
        body = struct.pack("<6f", 6, 5, 4, 3, 2, 1)
        eq(write_errno(npy, odd + body), 0, "unpadded header")
        import numpy as np
        back = np.load(npy)
        eq(back.tolist(), [[6, 5, 4], [3, 2, 1]], "values after unpadded header")
        fodd = odd.replace(b"False", b"True ")
        body = struct.pack("<6f", 1, 4, 2, 5, 3, 7)  # column-major: no reordered copy
        eq(write_errno(npy, fodd + body), 0, "unpadded header, Fortran order")
        eq(np.load(npy).tolist(), [[1, 2, 3], [4, 5, 7]], "values in Fortran order")


def test_npy_strict_header():
    """A written data.npy's header is read by the same strict parser as the
    NumPy codec's files: whatever NumPy writes is taken (versions 1.0, 2.0
    and 3.0), anything else refused with its reason, the source unchanged."""
    import numpy as np
    import numpy.lib.format as fmt
    import io
    with Mount(["primitiv/tensor_2x3.tensor"]) as m:
        npy = m.m("tensor_2x3.tensor", "data.npy")
        before = m.read("tensor_2x3.tensor", "data.npy")
        body = struct.pack("<6f", 1, 2, 3, 4, 5, 6)
        bad = [("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }",
                'dtype ">f4" is not supported'),
               ("{'descr': '<U3', 'fortran_order': False, 'shape': (2, 3), }",
                'dtype "<U3" is not supported'),
               ("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }",
                "dtype \"[('a', '<f4')]\" is not supported"),
               ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1, }",
                "unexpected key"),
               ("{'descr': '<f4', 'fortran_order': False, 'shape': (6), }", "not a tuple"),
               ("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", "True or False"),
               ("{'descr': '<f4', 'shape': (2, 3), }", "lacks 'fortran_order'"),
               ("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", "a size in 'shape'")]
        for k, (header, why) in enumerate(bad):
            eq(write_errno(npy, npy_with_header(header) + body), errno.EINVAL, header)
            # the line may land just after close returns: wait for it
            for _ in range(250):
                if len(m.errors().splitlines()) > k:
                    break
                time.sleep(0.02)
            check(why in m.errors().splitlines()[k], "%s: %s" % (why, m.errors()[-300:]))
            eq(m.read("tensor_2x3.tensor", "data.npy"), before, "unchanged after " + header)
        a = np.arange(6, dtype="<f4").reshape(2, 3) * 1.5
        for version in ((1, 0), (2, 0), (3, 0)):
            f = io.BytesIO()
            fmt.write_array(f, a, version=version)
            eq(write_errno(npy, f.getvalue()), 0, "version %d.%d" % version)
            eq(np.load(npy).tolist(), a.tolist(), "values after version %d.%d" % version)
            a = a + 1


if __name__ == "__main__":
    run([test_errors_are_utf8, test_meta_malformed, test_npy_duplicate_key, test_npy_strict_header])
