"""Extended attributes: user.modelfs.shape, .dtype and .offset on tensor
directories and their views, for one model of each format (getfattr -d,
os.getxattr, os.listxattr, the raw size query and ERANGE), following a
commit that reshapes; none elsewhere;
SOURCE entries shown as they are pass their user.* attributes through,
read-only; nothing can be set or removed (ENOTSUP); cp -a, cp
--preserve=all and tar of model directories work."""
import ctypes
import errno
import os
import shutil
import subprocess
import tempfile

import numpy as np

from formats import is_tensor_dir, walk
from harness import Mount, check, eq, run, sha

SHAPE, DTYPE, OFFSET = "user.modelfs.shape", "user.modelfs.dtype", "user.modelfs.offset"

FILES = [
    "primitiv/tensor_2x3.tensor",
    "primitiv/mlp_adam_2steps.model",
    "tennis/convnet_small.tsm",
    "daphne/generated/dense_f32_3x4.dbdf",
    "daphne/generated/dense_f32_3x4.dbdf.meta",
    "daphne/generated/csr_f64_6x5.dbdf",
    "daphne/generated/csr_f64_6x5.dbdf.meta",
    "daphne/generated/frame_mixed_4x8.dbdf",
    "daphne/generated/frame_mixed_4x8.dbdf.meta",
    "plearn/pmat/linear_4x_2y.pmat",
    "plearn/psave/learners/LinearRegressor.final_learner.psave",
]

# (tensor directory, source file, whether its storage is one raw array)
TENSORS = [
    ("tensor_2x3.tensor", "tensor_2x3.tensor", True),
    ("mlp_adam_2steps.model/params/encoder/w/value", "mlp_adam_2steps.model", True),
    ("convnet_small.tsm/nodes/0/params/value", "convnet_small.tsm", True),
    ("dense_f32_3x4.dbdf", "dense_f32_3x4.dbdf", True),
    ("csr_f64_6x5.dbdf", "csr_f64_6x5.dbdf", False),       # sparse
    ("linear_4x_2y.pmat", "linear_4x_2y.pmat", True),
    ("LinearRegressor.final_learner.psave/weights",
     "LinearRegressor.final_learner.psave", False),       # ascii numbers
]

libc = ctypes.CDLL(None, use_errno=True)
libc.getxattr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
libc.getxattr.restype = ctypes.c_ssize_t
libc.listxattr.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
libc.listxattr.restype = ctypes.c_ssize_t


def raw_getxattr(path, name, size):
    """getxattr(2) with a buffer of size bytes: (result, errno, bytes)."""
    buf = ctypes.create_string_buffer(max(size, 1))
    r = libc.getxattr(os.fsencode(path), name.encode(), buf if size else None, size)
    return r, ctypes.get_errno() if r < 0 else 0, buf.raw[:max(r, 0)]


def raw_listxattr(path, size):
    buf = ctypes.create_string_buffer(max(size, 1))
    r = libc.listxattr(os.fsencode(path), buf if size else None, size)
    return r, ctypes.get_errno() if r < 0 else 0, buf.raw[:max(r, 0)]


def xattrs(path):
    return {n: os.getxattr(path, n, follow_symlinks=False)
            for n in os.listxattr(path, follow_symlinks=False)}


def getfattr(path, *extra):
    """getfattr -d: {name: value} as it prints them."""
    r = subprocess.run(["getfattr", "-d", "--absolute-names", *extra, path],
                       capture_output=True, text=True)
    eq((r.returncode, r.stderr), (0, ""), "getfattr -d " + path)
    out = {}
    for line in r.stdout.splitlines():
        if "=" in line and not line.startswith("#"):
            k, v = line.split("=", 1)
            out[k] = v[1:-1] if v.startswith('"') else v
    return out


def errno_of(fn, *args, **kw):
    try:
        fn(*args, **kw)
    except OSError as e:
        return e.errno
    return 0


def expected(d):
    """What a tensor directory's attributes must say, from its files."""
    shape = open(os.path.join(d, "shape")).read()
    dtype = open(os.path.join(d, "dtype")).read()
    check(shape.endswith("\n") and dtype.endswith("\n"), "shape/dtype newline")
    return shape[:-1].encode(), dtype[:-1].encode()


def views(d):
    return [os.path.join(d, f) for f in os.listdir(d)
            if f in ("shape", "dtype", "values.txt", "data", "data.npy", "matrix.mtx")]


def test_tensors_per_format():
    with Mount(FILES) as m:
        for rel, src, raw in TENSORS:
            d = m.m(rel)
            check(is_tensor_dir(d), rel + " is not a tensor directory")
            shape, dtype = expected(d)
            for p in [d] + views(d):
                got = xattrs(p)
                names = {SHAPE, DTYPE} | ({OFFSET} if raw else set())
                eq(set(got), names, "attribute names of " + p)
                eq(os.listxattr(p), [SHAPE, DTYPE] + ([OFFSET] if raw else []), "order of " + p)
                eq(got[SHAPE], shape, SHAPE + " of " + p)
                eq(got[DTYPE], dtype, DTYPE + " of " + p)
                if not raw:
                    eq(errno_of(os.getxattr, p, OFFSET), errno.ENODATA, "offset of " + p)
                # getfattr -d shows the same
                eq(getfattr(p), {k: v.decode() for k, v in got.items()}, "getfattr -d " + p)
            if raw:
                off = int(xattrs(d)[OFFSET])
                data = open(os.path.join(d, "data"), "rb").read()
                with open(m.s(src), "rb") as f:
                    f.seek(off)
                    stored = f.read(len(data))
                esize = np.dtype(dtype.decode()).itemsize if dtype != b"char8" else 1
                swapped = np.frombuffer(stored, dtype=np.dtype("u%d" % esize)).byteswap().tobytes() \
                    if esize in (2, 4, 8) and len(stored) % esize == 0 else stored
                check(len(data) > 0 and data in (stored, swapped),
                      "%s: source bytes at %d are not its data" % (rel, off))
        eq(xattrs(m.m("linear_4x_2y.pmat"))[OFFSET], b"64", "pmat data follows the 64-byte header")
    # a scalar's shape is empty
    with Mount(["primitiv/param_scalar.param"]) as s:
        eq(xattrs(s.m("param_scalar.param", "value"))[SHAPE], b"", "scalar shape")
        r, e, _ = raw_getxattr(s.m("param_scalar.param", "value", "data"), SHAPE, 0)
        eq((r, e), (0, 0), "size of an empty value")
        eq(getfattr(s.m("param_scalar.param", "value"))[SHAPE], "", "getfattr of an empty value")


def test_follows_changes():
    """After a commit that reshapes a tensor, its attributes say so at once."""
    with Mount(["plearn/pmat/linear_4x_2y.pmat"]) as m:
        d = m.m("linear_4x_2y.pmat")
        eq(xattrs(d)[SHAPE], b"200 6", "before")
        a = np.load(os.path.join(d, "data.npy"))
        np.save(os.path.join(d, "data.npy"), a.reshape(300, 4))
        eq(open(os.path.join(d, "shape")).read(), "300 4\n", "shape file after reshaping")
        for p in (d, os.path.join(d, "values.txt"), os.path.join(d, "data.npy")):
            eq(xattrs(p), {SHAPE: b"300 4", DTYPE: b"float64", OFFSET: b"64"}, "after: " + p)


def test_everything_else_has_none():
    with Mount(FILES) as m:
        n_tensor = n_other = 0
        for p in walk(m.mnt):
            d = os.path.dirname(p)
            in_tensor = is_tensor_dir(p) or (
                is_tensor_dir(d) and os.path.basename(p) in
                ("shape", "dtype", "values.txt", "data", "data.npy", "matrix.mtx"))
            names = os.listxattr(p, follow_symlinks=False)
            if in_tensor:
                check(SHAPE in names and DTYPE in names, "no attributes on " + p)
                n_tensor += 1
            else:
                # model entries that are not tensors; pass-through .meta files
                eq(names, [], "attributes of " + p)
                eq(errno_of(os.getxattr, p, SHAPE, follow_symlinks=False), errno.ENODATA, p)
                n_other += 1
        check(n_tensor > 100 and n_other > 50, "walked %d/%d" % (n_tensor, n_other))
        for p in (m.mnt, m.m(".modelfs"), m.m(".modelfs", "errors")):
            eq(os.listxattr(p), [], "attributes of " + p)
        # getfattr over the whole mount, recursively, without an error
        r = subprocess.run(["getfattr", "-R", "-h", "-d", "--absolute-names", m.mnt],
                           capture_output=True, text=True)
        eq((r.returncode, r.stderr), (0, ""), "getfattr -R -d")
        check(r.stdout.count(SHAPE + "=") == n_tensor, "getfattr -R counts")
        # names outside user.* (the kernel asks for security.capability)
        t = m.m("tensor_2x3.tensor", "data")
        for name in ("security.capability", "trusted.x", "system.posix_acl_access", "user.other"):
            check(errno_of(os.getxattr, t, name) in (errno.ENODATA, errno.EOPNOTSUPP), name)


def test_size_query_and_erange():
    with Mount(FILES) as m:
        p = m.m("tensor_2x3.tensor", "values.txt")
        eq(raw_getxattr(p, SHAPE, 0)[:2], (3, 0), "size query")
        eq(raw_getxattr(p, SHAPE, 2)[:2], (-1, errno.ERANGE), "too small a buffer")
        eq(raw_getxattr(p, SHAPE, 3), (3, 0, b"2 3"), "exact buffer")
        eq(raw_getxattr(p, SHAPE, 100), (3, 0, b"2 3"), "large buffer")
        names = b"\0".join(n.encode() for n in (SHAPE, DTYPE, OFFSET)) + b"\0"
        eq(raw_listxattr(p, 0)[:2], (len(names), 0), "list size query")
        eq(raw_listxattr(p, len(names) - 1)[:2], (-1, errno.ERANGE), "list too small")
        eq(raw_listxattr(p, len(names)), (len(names), 0, names), "list exact")
        q = m.m("tensor_2x3.tensor", "batch")
        eq(raw_listxattr(q, 0)[:2], (0, 0), "empty list size")
        eq(raw_getxattr(q, SHAPE, 0)[:2], (-1, errno.ENODATA), "no attribute")


def test_source_entries_pass_through_read_only():
    with Mount(FILES) as m:
        meta = m.s("dense_f32_3x4.dbdf.meta")
        os.setxattr(meta, "user.note", b"from the source")
        os.setxattr(m.src, "user.dir", b"top")
        os.makedirs(m.s("sub"))
        os.setxattr(m.s("sub"), "user.sub", b"")
        trusted = errno_of(os.setxattr, meta, "trusted.hidden", b"x") == 0  # root only
        eq(xattrs(m.m("dense_f32_3x4.dbdf.meta")), {"user.note": b"from the source"}, ".meta")
        eq(xattrs(m.mnt), {"user.dir": b"top"}, "the root")
        eq(xattrs(m.m("sub")), {"user.sub": b""}, "a source directory")
        eq(getfattr(m.m("dense_f32_3x4.dbdf.meta")), {"user.note": "from the source"}, "getfattr")
        if trusted:
            eq(errno_of(os.getxattr, m.m("dense_f32_3x4.dbdf.meta"), "trusted.hidden"),
               errno.ENODATA, "trusted.* passed through")
        p = m.m("dense_f32_3x4.dbdf.meta")
        eq(raw_getxattr(p, "user.note", 0)[:2], (15, 0), "pass-through size query")
        eq(raw_getxattr(p, "user.note", 4)[:2], (-1, errno.ERANGE), "pass-through ERANGE")
        # a model's own file (shown as a directory) has the model's attributes only
        os.setxattr(m.s("tensor_2x3.tensor"), "user.src", b"1")
        check("user.src" not in os.listxattr(m.m("tensor_2x3.tensor")), "model dir shows source's")
        # nothing can be set or removed, anywhere
        before = {f: sha(m.s(f)) for f in os.listdir(m.src) if os.path.isfile(m.s(f))}
        for q in (m.m("tensor_2x3.tensor"), m.m("tensor_2x3.tensor", "data"),
                  m.m("tensor_2x3.tensor", "version"), p, m.mnt):
            eq(errno_of(os.setxattr, q, "user.x", b"1"), errno.EOPNOTSUPP, "setxattr " + q)
            eq(errno_of(os.setxattr, q, SHAPE, b"9 9"), errno.EOPNOTSUPP, "setxattr shape " + q)
            eq(errno_of(os.removexattr, q, SHAPE), errno.EOPNOTSUPP, "removexattr " + q)
        eq(errno_of(os.removexattr, p, "user.note"), errno.EOPNOTSUPP, "removexattr pass-through")
        eq(os.getxattr(meta, "user.note"), b"from the source", "the source's attribute")
        after = {f: sha(m.s(f)) for f in os.listdir(m.src) if os.path.isfile(m.s(f))}
        eq(after, before, "source files")


def test_copy_and_tar():
    with Mount(FILES) as m:
        out = tempfile.mkdtemp(prefix="mfs-xattr-")
        try:
            for cmd in (["cp", "-a"], ["cp", "-r", "--preserve=all"]):
                dest = os.path.join(out, cmd[-1].lstrip("-"))
                os.makedirs(dest)
                r = subprocess.run(cmd + [m.m("tensor_2x3.tensor"), m.m("csr_f64_6x5.dbdf"),
                                          m.m("dense_f32_3x4.dbdf.meta"), dest],
                                   capture_output=True, text=True)
                eq((r.returncode, r.stderr), (0, ""), " ".join(cmd))
                c = os.path.join(dest, "tensor_2x3.tensor")
                eq(open(os.path.join(c, "values.txt")).read(),
                   m.text("tensor_2x3.tensor", "values.txt"), "copied values.txt")
                # the attributes came along (SOURCE's file system takes user.*)
                eq(os.getxattr(os.path.join(c, "values.txt"), SHAPE), b"2 3", "copied attribute")
                eq(os.getxattr(c, DTYPE), b"float32", "copied directory attribute")
            # copying into the mount: the attributes cannot be set there, and
            # cp -a says nothing about it
            f = os.path.join(out, "notes.txt")
            with open(f, "w") as w:
                w.write("hello\n")
            os.setxattr(f, "user.note", b"x")
            r = subprocess.run(["cp", "-a", f, m.m("notes.txt")], capture_output=True, text=True)
            eq((r.returncode, r.stderr), (0, ""), "cp -a into the mount")
            eq(open(m.s("notes.txt")).read(), "hello\n", "copied into SOURCE")
            # tar of a model directory, with and without --xattrs
            for extra in ([], ["--xattrs"]):
                tarf = os.path.join(out, "t.tar")
                r = subprocess.run(["tar", "-cf", tarf, *extra, "-C", m.mnt, "tensor_2x3.tensor",
                                    "convnet_small.tsm"], capture_output=True, text=True)
                eq((r.returncode, r.stderr), (0, ""), "tar -c " + " ".join(extra))
                x = os.path.join(out, "x" + "".join(extra))
                os.makedirs(x)
                r = subprocess.run(["tar", "-xf", tarf, *extra, "-C", x], capture_output=True,
                                   text=True)
                eq((r.returncode, r.stderr), (0, ""), "tar -x")
                r = subprocess.run(["diff", "-r", m.m("tensor_2x3.tensor"),
                                    os.path.join(x, "tensor_2x3.tensor")], capture_output=True)
                eq(r.returncode, 0, "tar round trip differs")
                if extra:
                    eq(os.getxattr(os.path.join(x, "tensor_2x3.tensor", "data"), SHAPE), b"2 3",
                       "tar --xattrs kept the attribute")
        finally:
            shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    run([test_tensors_per_format, test_follows_changes, test_everything_else_has_none, test_size_query_and_erange,
         test_source_entries_pass_through_read_only, test_copy_and_tar])
