"""The command line without FUSE: modelfs ls, cat, tree, set and stats on
copies of tests/data files of every format. These tests need no /dev/fuse
and never skip; where /dev/fuse and fusermount3 exist, the same files are
also mounted and the CLI must agree with the mount byte for byte: `cat`
against reading the view, `ls` (and `ls -l` modes and sizes) against
os.listdir/lstat, `set` against writing through the mount (the source bytes
after the change, the refusal line against .modelfs/errors). Also: a large
tensor streamed with flat memory, the `./ls` dispatch rule, usage errors
(exit 2), `--help` of every subcommand, one error line per failure (exit 1)
that names FILE/PATH (messages are asserted only where both sides come from
the same codec text)."""
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
import time

import numpy as np

from harness import BIN, DATA, Mount, check, eq, rollback_journal
from harness import run as run_tests

HAVE_FUSE = os.path.exists("/dev/fuse") and shutil.which("fusermount3") is not None
SUBS = ["ls", "cat", "tree", "set", "stats"]
SANITIZED = None


def sanitized():
    """Whether the binary is built with a sanitizer (ASan, TSan: its memory use is
    then not the program's)."""
    global SANITIZED
    if SANITIZED is None:
        with open(BIN, "rb") as f:
            exe = f.read()
            SANITIZED = b"__asan_init" in exe or b"__tsan_init" in exe
    return SANITIZED


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class Work:
    """A private directory holding copies of test files (flat, by base name,
    or under a given name)."""

    def __init__(self, files=()):
        self.dir = tempfile.mkdtemp(prefix="mfs-cli-")
        for f in files:
            rel, dest = (f, os.path.basename(f)) if isinstance(f, str) else f
            d = os.path.join(self.dir, dest)
            os.makedirs(os.path.dirname(d), exist_ok=True)
            shutil.copyfile(os.path.join(DATA, rel), d)
            if os.path.exists(os.path.join(DATA, rel + ".meta")):
                shutil.copyfile(os.path.join(DATA, rel + ".meta"), d + ".meta")

    def p(self, *names):
        return os.path.join(self.dir, *names)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if exc[0] is None:
            shutil.rmtree(self.dir, ignore_errors=True)
        return False


def run(args, input=None, cwd=None):
    return subprocess.run([BIN] + list(args), input=input, capture_output=True, cwd=cwd,
                          timeout=600)


def ok(*args, input=None, cwd=None):
    """Stdout of a command that must succeed silently on stderr."""
    r = run(args, input=input, cwd=cwd)
    if r.returncode != 0 or r.stderr:
        raise AssertionError("modelfs %s: exit %d, stderr %r" % (" ".join(args), r.returncode,
                                                                 r.stderr.decode()))
    return r.stdout


def fails(args, code=1, prefix=None, input=None, cwd=None):
    """A command that must fail with exit code and exactly one stderr line
    (starting with prefix); returns that line."""
    r = run(args, input=input, cwd=cwd)
    err = r.stderr.decode("utf-8", "surrogateescape")
    eq(r.returncode, code, "exit status of modelfs %s (stderr %r)" % (" ".join(args), err))
    check(err.endswith("\n") and err.count("\n") == 1,
          "modelfs %s: not one line on stderr: %r" % (" ".join(args), err))
    if prefix is not None:
        check(err.startswith(prefix), "modelfs %s: %r does not start with %r"
              % (" ".join(args), err, prefix))
    eq(r.stdout if code == 2 else b"", b"", "stdout of a usage error")
    return err[:-1]


def ls_names(f, path="", cwd=None):
    out = ok("ls", "--", f, path, cwd=cwd) if path else ok("ls", f, cwd=cwd)
    return out.decode("utf-8", "surrogateescape").split("\n")[:-1]


def ls_long(f, path="", cwd=None):
    """[(mode, size, name, target or None)] from ls -l."""
    out = ok("ls", "-l", "--", f, path, cwd=cwd).decode("utf-8", "surrogateescape")
    rows = []
    for ln in out.split("\n")[:-1]:
        mode, size, rest = ln.split(None, 2)
        target = None
        if mode.startswith("l"):
            rest, target = rest.rsplit(" -> ", 1)
        rows.append((mode, int(size), rest, target))
    return rows


def cli_walk(f, path=""):
    """Every (path, mode, size, target) below path, via ls -l, depth first;
    links are not followed."""
    for mode, size, name, target in ls_long(f, path):
        p = path + "/" + name if path else name
        yield p, mode, size, target
        if mode.startswith("d"):
            yield from cli_walk(f, p)


def kv(out):
    """'key value' lines of stats."""
    d = {}
    for ln in out.decode().split("\n")[:-1]:
        k, _, v = ln.partition(" ")
        d[k] = v.strip()
    return d


def npy(f, path):
    import io
    return np.load(io.BytesIO(ok("cat", f, path + "/data.npy")))


# ---------------------------------------------------------------- help, usage, dispatch

def test_help():
    for sub in SUBS:
        for flag in ("--help", "-h"):
            out = ok(sub, flag).decode()
            check(out.startswith("usage: modelfs " + sub + " "), out)
            check("Exit status" in out and "2 a usage error" in out, "exit codes in help of " + sub)
    # --help wins over missing operands, also after them
    ok("cat", "x", "--help")
    # modelfs --help lists the commands (fs/main.c calls cli_usage)
    top = subprocess.run([BIN, "--help"], capture_output=True)
    eq(top.returncode, 0, "modelfs --help")
    if b"without FUSE" in top.stdout:
        for sub in SUBS:
            check(re.search(rb"\n    " + sub.encode() + rb" ", top.stdout), sub + " in --help")
    else:
        print("     (modelfs --help does not list the commands yet: call cli_usage there)")


def test_usage_errors():
    with Work(["primitiv/tensor_2x3.tensor"]) as w:
        f = w.p("tensor_2x3.tensor")
        before = sha(f)
        for args in (["ls"], ["cat"], ["cat", f], ["cat", f, "a", "b"], ["ls", "-Z", f],
                     ["ls", "--long", f], ["tree", "-L", "x", f], ["tree", f, "-L"],
                     ["tree", "-L", "-1", f], ["set", "--no-inplace=1", f, "values.txt"],
                     ["set", f], ["set", f, "values.txt", "1", "2"], ["stats", f],
                     ["stats", f, "a", "b"]):
            fails(args, 2, "modelfs %s: " % args[0])
        eq(sha(f), before, "source after usage errors")


def test_dispatch():
    """A first word that exactly names a subcommand selects it; ./ls and
    /x/ls are a SOURCE to mount."""
    with Work([("primitiv/tensor_2x3.tensor", "ls/t.tensor")]) as w:
        # 'ls' the subcommand, with a directory called ls beside
        eq(ls_names("ls/t.tensor", cwd=w.dir)[:2], ["version", "type"], "ls of ls/t.tensor")
        # './ls' is not a subcommand: the mount's command line (no MOUNTPOINT: usage, 2)
        r = run(["./ls"], cwd=w.dir)
        eq(r.returncode, 2, "modelfs ./ls")
        check(not r.stderr.startswith(b"modelfs ls"), r.stderr)
        check(b"MOUNTPOINT" in r.stderr, r.stderr)
        r = run([w.p("ls")])
        eq(r.returncode, 2, "modelfs /x/ls")
        check(b"MOUNTPOINT" in r.stderr, r.stderr)
        if not HAVE_FUSE:
            print("     (no /dev/fuse: ./ls not mounted)")
            return
        os.mkdir(w.p("mnt"))
        p = subprocess.Popen([BIN, "-f", "./ls", "mnt"], cwd=w.dir,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            deadline = time.time() + 20
            while not os.path.ismount(w.p("mnt")):
                if p.poll() is not None:
                    raise AssertionError("modelfs ./ls mnt exited: %r" % p.stderr.read())
                check(time.time() < deadline, "./ls was not mounted")
                time.sleep(0.02)
            eq([n for n in os.listdir(w.p("mnt")) if n != ".modelfs"], ["t.tensor"],
               "mount of ./ls")
            eq(os.listdir(w.p("mnt", "t.tensor")), ls_names(w.p("ls", "t.tensor")),
               "mounted ./ls/t.tensor vs modelfs ls")
        finally:
            subprocess.run(["fusermount3", "-u", w.p("mnt")], check=False)
            eq(p.wait(timeout=30), 0, "exit of the ./ls mount")


# ---------------------------------------------------------------- per format, no FUSE

def test_ls():
    with Work(["primitiv/tensor_2x3.tensor", "tennis/convnet_small.tsm",
               "daphne/generated/csr_f64_6x5.dbdf", "plearn/pmat/linear_4x_2y.pmat",
               "plearn/psave/learners/LinearRegressor.final_learner.psave"]) as w:
        t = w.p("tensor_2x3.tensor")
        names = ls_names(t)
        for v in ("version", "type", "shape", "dtype", "values.txt", "data", "data.npy"):
            check(v in names, "%s in ls of the primitiv tensor: %r" % (v, names))
        eq(ls_names(t + "/"), names, "FILE/ names the file too")
        eq(ls_names(t, "."), names, "PATH .")
        eq(ls_names(t, "values.txt"), ["values.txt"], "ls of a file")

        s = w.p("convnet_small.tsm")
        eq(ls_names(s), ["header", "inputs", "outputs", "nodes", "by-name"], "TenniS root")
        eq(ok("ls", "-F", s).decode().split(), ["header/", "inputs", "outputs", "nodes/",
                                                "by-name/"], "ls -F")
        links = ok("ls", "-F", s, "by-name").decode().split()
        check(links and all(n.endswith("@") for n in links), "links in -F: %r" % links)
        # a path through a link is followed, as the kernel does in the mount
        eq(ls_names(s, "by-name/conv1"), ls_names(s, "nodes/2"), "ls through by-name/conv1")
        eq(ls_names(s, "nodes/2/params/../params"), ls_names(s, "nodes/2/params"), "..")
        long = ls_long(s, "by-name")
        check(all(m == "lrwxrwxrwx" and tg.startswith("../nodes/") and sz == len(tg)
                  for m, sz, _, tg in long), "ls -l of links: %r" % long)

        d = w.p("csr_f64_6x5.dbdf")
        names = ls_names(d)
        for v in ("header", "dialect", "blocks", "shape", "dtype", "values.txt", "matrix.mtx"):
            check(v in names, "%s in ls of the CSR matrix: %r" % (v, names))
        check("data" not in names, "a CSR matrix has no data view")

        p = w.p("linear_4x_2y.pmat")
        check("header" in ls_names(p) and "data.npy" in ls_names(p), "pmat")
        ps = w.p("LinearRegressor.final_learner.psave")
        eq(ls_names(ps)[0], "class", "PLearn object: class first")

        # ls -l sizes are what cat gives; modes follow the source file's
        os.chmod(t, 0o640)
        for m, size, name, _ in ls_long(t):
            if m.startswith("-"):
                eq(len(ok("cat", t, name)), size, "ls -l size of " + name)
                eq(m[7:], "---", "others get nothing from a 0640 source: " + m)
        eq({n: m for m, _, n, _ in ls_long(t)}["shape"], "-r--r-----", "read-only view")
        eq({n: m for m, _, n, _ in ls_long(t)}["values.txt"], "-rw-r-----", "writable view")

        # errors: FILE/PATH prefix, exit 1, one line
        fails(["ls", t, "nope"], 1, "modelfs: %s/nope: " % t)
        fails(["ls", t, "values.txt/x"], 1, "modelfs: %s/values.txt/x: " % t)
        fails(["ls", s, "../x"], 1, "modelfs: %s/../x: " % s)
        fails(["ls", w.p("missing.model")], 1, "modelfs: %s: " % w.p("missing.model"))
        fails(["ls", w.dir], 1, "modelfs: %s: " % w.dir)
        with open(w.p("notes.txt"), "w") as f:
            f.write("not a model\n")
        fails(["ls", w.p("notes.txt")], 1, "modelfs: %s: " % w.p("notes.txt"))
        # a model file that does not parse: FILE: <parse message>
        with open(s, "rb") as f:
            head = f.read(1000)
        with open(w.p("cut.tsm"), "wb") as f:
            f.write(head)
        fails(["ls", w.p("cut.tsm")], 1, "modelfs: %s: " % w.p("cut.tsm"))
        # a symbolic link to a model is followed
        os.symlink("convnet_small.tsm", w.p("latest.tsm"))
        eq(ls_names(w.p("latest.tsm")), ls_names(s), "ls through a symbolic link")


def check_views(f):
    """cat of every file of a model against ls -l sizes; data.npy against
    values.txt and data for each tensor directory. Returns the file count."""
    import io
    walk = list(cli_walk(f))
    cat = {}  # each file's content, catted once (each cat is a process)
    for p, mode, size, target in walk:
        if mode.startswith("-"):
            cat[p] = ok("cat", f, p)
            eq(len(cat[p]), size, "cat vs ls -l size of " + p)
    for p, mode, size, target in walk:
        if mode.startswith("d") and p.split("/")[-1] not in ("",):
            names = {q.rsplit("/", 1)[-1] for q in cat if q.rsplit("/", 1)[0] == p}
            if "data.npy" in names and "values.txt" in names:
                a = np.load(io.BytesIO(cat[p + "/data.npy"]))
                shape = tuple(int(x) for x in cat[p + "/shape"].split())
                eq(a.shape, shape, "data.npy shape of " + p)
                char8 = cat[p + "/dtype"] == b"char8\n"  # values.txt: the string
                if a.dtype.kind in "fiub" and a.ndim <= 2 and not char8:
                    txt = cat[p + "/values.txt"].decode()
                    toks = np.array(txt.split())
                    got = (toks.astype(np.float64).astype(a.dtype) if a.dtype.kind == "f"
                           else toks.astype(np.int64).astype(bool) if a.dtype.kind == "b"
                           else toks.astype(a.dtype))
                    want = a.ravel()
                    check(np.array_equal(got, want, equal_nan=True), "values.txt vs data.npy of " + p)
                if "data" in names:
                    # data is in storage order: Fortran order where data.npy says so
                    eq(cat[p + "/data"], a.tobytes(order="F" if np.isfortran(a) else "C"),
                       "data vs data.npy of " + p)
    return len(cat)


def test_cat():
    files = ["primitiv/mlp_adam_2steps.model", "primitiv/mlp_adam_2steps.optimizer",
             "tennis/convnet_small.tsm", "tennis/dtypes_zoo.tsm",
             "daphne/generated/csr_f64_6x5.dbdf", "daphne/generated/frame_mixed_4x8.dbdf",
             "daphne/built/spec_multi_csr.dbdf", "plearn/pmat/linear_4x_2y.pmat",
             "plearn/amat/linear_4x_2y.amat",
             "plearn/psave/learners/LinearRegressor.final_learner.psave"]
    # Under a sanitizer each cat is ~0.1 s: the 444 files of dtypes_zoo.tsm
    # are left to the plain build (test_tennis reads them all in a mount).
    files = [f for f in files if not (sanitized() and f.endswith("dtypes_zoo.tsm"))]
    with Work(files) as w:
        for f in files:
            check(check_views(w.p(os.path.basename(f))) > 0, "no files in " + f)
        # a few exact contents
        s = w.p("convnet_small.tsm")
        eq(ok("cat", s, "nodes/2/op"), b"conv2d\n", "op")
        eq(ok("cat", s, "by-name/conv1/op"), b"conv2d\n", "cat through a link")
        eq(ok("cat", s, "header/code"), b"0x19910929\n", "header/code")
        d = w.p("csr_f64_6x5.dbdf")
        mtx = ok("cat", d, "matrix.mtx").decode().split("\n")
        eq(mtx[0].split()[:3], ["%%MatrixMarket", "matrix", "coordinate"], "matrix.mtx")
        eq(mtx[1], "6 5 6", "size line")
        fr = ok("cat", w.p("frame_mixed_4x8.dbdf"), "frame.csv").decode().split("\n")
        eq(fr[0].split(",")[0], "price", "frame.csv header")
        eq(len(fr), 6, "frame.csv lines")
        fails(["cat", s, "nodes"], 1, "modelfs: %s/nodes: " % s)
        fails(["cat", s, ""], 1, "modelfs: %s: " % s)
        fails(["cat", s, "nodes/99/op"], 1, "modelfs: %s/nodes/99/op: " % s)


TENSOR_LINE = re.compile(r"^( *)(\S.*/)( +)(\[[0-9,]*\])( +)(\S+)")


def test_tree():
    with Work(["primitiv/mlp_adam_2steps.model", "tennis/convnet_small.tsm",
               "daphne/generated/csr_f64_6x5.dbdf", "daphne/generated/frame_mixed_4x8.dbdf",
               "plearn/psave/learners/NNet.final_learner.psave"]) as w:
        f = w.p("mlp_adam_2steps.model")
        out = ok("tree", f).decode().split("\n")[:-1]
        eq(out[0], f + "/", "first line names FILE")
        shape_col, dtype_col = set(), set()
        tensors = 0
        for ln in out:
            mt = TENSOR_LINE.match(ln)
            if mt:
                tensors += 1
                shape_col.add(ln.index("["))
                dtype_col.add(mt.start(6))
        eq(tensors, 21, "tensor lines of the model (7 params x value, m1, m2)")
        eq(len(shape_col), 1, "shape column aligned")
        eq(len(dtype_col), 1, "dtype column aligned")
        check(any(re.match(r"^        value/ +\[8,4\] +float32$", ln) for ln in out),
              "params/encoder/w/value line")
        check(all("values.txt" not in ln for ln in out), "views hidden without -a")
        check(any(ln.strip() == "values.txt" for ln in ok("tree", "-a", f).decode().split("\n")),
              "-a shows views")
        short = ok("tree", "-L", "1", f).decode().split("\n")[:-1]
        check(all(not ln.startswith("    ") for ln in short), "-L 1: %r" % short)
        check(any(ln.strip() == "params/" for ln in short), "-L 1 shows params/")
        sub = ok("tree", f, "params/encoder").decode().split("\n")
        eq(sub[0], "params/encoder/", "tree of PATH")

        s = w.p("convnet_small.tsm")
        out = ok("tree", s).decode()
        check(re.search(r"\n      op +conv2d\n", out), "text values shown")
        check(re.search(r"\n    conv1 -> \.\./nodes/2\n", out), "links shown")
        check(re.search(r"\n    reserved +\(120 bytes\)\n", out), "raw field size")
        d = w.p("csr_f64_6x5.dbdf")
        first = ok("tree", d).decode().split("\n")[0]
        check(re.match(r"^.*/ +\[6,5\] +float64 +sparse, 6 stored$", first), first)
        fr = ok("tree", w.p("frame_mixed_4x8.dbdf")).decode()
        check(re.search(r"\n    price/ +\[4\] +float64\n", fr), "frame column")
        check(re.match(r"^.*/ +\[4,8\] +frame\n", fr), "frame line")
        ok("tree", w.p("NNet.final_learner.psave"))
        eq(ok("tree", s, "nodes/2/op"), b"nodes/2/op  conv2d\n", "tree of a file")
        fails(["tree", s, "nope"], 1, "modelfs: %s/nope: " % s)


def stats_check(f, path, a):
    """stats of a tensor against NumPy on its data.npy."""
    got = kv(ok("stats", f, path))
    eq(got["dtype"], str(a.dtype) if a.dtype != np.bool_ else "bool", "dtype of " + path)
    eq(int(got["count"]), a.size, "count of " + path)
    # complex: |z| in double (hypot of the parts)
    x = np.abs(a.astype(np.complex128)) if a.dtype.kind == "c" else a.astype(np.float64)
    if a.dtype.kind == "c":
        eq(got.get("of"), "|z|", "complex stats are of |z|")
        nan = np.isnan(a.real) | np.isnan(a.imag)
    else:
        nan = np.isnan(x)
    eq(int(got["nan"]), int(nan.sum()), "nan of " + path)
    eq(int(got["inf"]), int(np.isinf(x).sum()), "inf of " + path)
    v = x[~nan]
    if v.size == 0:
        check(all(got[k] == "nan" for k in ("min", "max", "mean", "std")), "empty: " + repr(got))
        return got
    if a.dtype.kind in "iub":
        eq(int(got["min"]), int(a.min()), "exact min of " + path)
        eq(int(got["max"]), int(a.max()), "exact max of " + path)
    else:
        # in the dtype's own shortest form: it reads back to the same value
        t = np.float64 if a.dtype.kind == "c" else a.dtype.type
        eq(t(got["min"]), t(np.min(x[~nan])), "min of " + path)
        eq(t(got["max"]), t(np.max(x[~nan])), "max of " + path)
    with np.errstate(all="ignore"):
        mean, std = float(np.mean(v)), float(np.std(v))
    for k, want in (("mean", mean), ("std", std)):
        g = float(got[k])
        check((np.isnan(g) and np.isnan(want)) or g == want or abs(g - want) <= 1e-12 * max(1, abs(want)),
              "%s of %s: %r vs %r" % (k, path, g, want))
    return got


def test_stats():
    with Work(["primitiv/mlp_adam_2steps.model", "primitiv/tensor_special_values.tensor",
               "tennis/dtypes_zoo.tsm", "daphne/generated/csr_f64_6x5.dbdf",
               "daphne/generated/frame_mixed_4x8.dbdf", "daphne/built/spec_multi_csr.dbdf",
               "plearn/pmat/FileVMatrix_fvm1_with_nan.pmat",
               "plearn/psave/learners/NNet.final_learner.psave"]) as w:
        f = w.p("mlp_adam_2steps.model")
        p = "params/encoder/w/value"
        got = stats_check(f, p, npy(f, p))
        eq(got["shape"], "8 4", "shape line")
        # a view names its tensor too
        eq(ok("stats", f, p + "/values.txt"), ok("stats", f, p), "stats of a view")
        stats_check(w.p("tensor_special_values.tensor"), "",
                    npy(w.p("tensor_special_values.tensor"), ""))
        z = w.p("dtypes_zoo.tsm")
        for n in (0, 1, 2, 3, 6, 7, 8, 9, 10, 13, 14, 15, 18, 19, 20, 21, 22):
            p = "nodes/%d/params/value" % n
            stats_check(z, p, npy(z, p))
        fails(["stats", z, "nodes/4/params/value"], 1, "modelfs: %s/nodes/4/params/value: " % z)
        fails(["stats", z, "nodes/4/op"], 1, "modelfs: %s/nodes/4/op: " % z)
        fails(["stats", z, "nodes"], 1, "modelfs: %s/nodes: " % z)
        # CSR: over the dense form
        for name in ("csr_f64_6x5.dbdf", "spec_multi_csr.dbdf"):
            d = w.p(name)
            got = stats_check(d, "", npy(d, ""))
            check("stored" in got, "sparse: stored line")
            for blk in ls_names(d, "blocks"):
                stats_check(d, "blocks/" + blk, npy(d, "blocks/" + blk))
        pm = w.p("FileVMatrix_fvm1_with_nan.pmat")
        eq(stats_check(pm, "", npy(pm, ""))["nan"], "3", "pmat NaNs")
        nn = w.p("NNet.final_learner.psave")
        stats_check(nn, "paramsvalues", npy(nn, "paramsvalues"))
        stats_check(nn, "optimizer/lr_schedule", npy(nn, "optimizer/lr_schedule"))
        # a frame: one row per column
        fr = w.p("frame_mixed_4x8.dbdf")
        rows = [ln.split() for ln in ok("stats", fr, "").decode().split("\n")[:-1]]
        eq(rows[0], ["column", "dtype", "count", "nan", "inf", "min", "max", "mean", "std"],
           "frame stats header")
        labels = ls_names(fr, "columns")
        eq([r[0] for r in rows[1:]], labels, "a row per column")
        for r in rows[1:]:
            got = stats_check(fr, "columns/" + r[0], npy(fr, "columns/" + r[0]))
            eq(r[1:], [got[k] for k in ("dtype", "count", "nan", "inf", "min", "max", "mean",
                                        "std")], "frame row of " + r[0])
        eq(ok("stats", fr, "frame.csv"), ok("stats", fr, ""), "stats of frame.csv")


# ---------------------------------------------------------------- set, no FUSE

def test_set():
    with Work(["primitiv/tensor_2x3.tensor", "primitiv/mlp_adam_2steps.optimizer",
               "tennis/convnet_small.tsm", "daphne/generated/csr_f64_6x5.dbdf",
               "daphne/generated/dense_f32_3x4.dbdf",
               "plearn/psave/learners/LinearRegressor.final_learner.psave"]) as w:
        t = w.p("tensor_2x3.tensor")
        ino = os.stat(t).st_ino
        ok("set", t, "values.txt", input=b"1 2 3\n4 5 6\n")
        eq(ok("cat", t, "values.txt"), b"1 2 3\n4 5 6\n", "values after set")
        eq(os.stat(t).st_ino, ino, "same-size change: patched in place")
        ok("set", "--no-inplace", t, "values.txt", input=b"1 2 3 4 5 7")
        check(os.stat(t).st_ino != ino, "--no-inplace rewrites the file")
        eq(ok("cat", t, "values.txt"), b"1 2 3\n4 5 7\n", "values after --no-inplace")
        # content that parses to the same values changes nothing
        before, mtime = sha(t), os.stat(t).st_mtime_ns
        ok("set", t, "values.txt", input=b"1.0, 2, 3 4 5 7.000")
        eq((sha(t), os.stat(t).st_mtime_ns), (before, mtime), "unchanged content")
        # stdin from a regular file, and from a pipe
        with open(w.p("v.txt"), "w") as f:
            f.write("9 8 7 6 5 4\n")
        with open(w.p("v.txt"), "rb") as f:
            r = subprocess.run([BIN, "set", t, "values.txt"], stdin=f, capture_output=True)
        eq((r.returncode, r.stderr), (0, b""), "set from a file")
        eq(ok("cat", t, "values.txt"), b"9 8 7\n6 5 4\n", "values from a file")
        r = subprocess.run("printf '0 0 0 0 0 1' | %s set %s values.txt" % (BIN, t), shell=True,
                           capture_output=True)
        eq((r.returncode, r.stderr), (0, b""), "set from a pipe")
        # refusals: exit 1, one line naming FILE/PATH, source byte-identical
        before = sha(t)
        for path, content in (("values.txt", b"1 2 3 4 5 1e39\n"),   # ERANGE
                              ("values.txt", b"1 2 3\n"),            # too few
                              ("values.txt", b"1 2 3 4 5 6 7\n"),    # too many
                              ("values.txt", b"1 2 x 4 5 6\n"),      # not a number
                              ("shape", b"3 2\n"),                   # read-only view
                              ("data", b"\0" * 5)):                  # wrong size
            fails(["set", t, path], 1, "modelfs: %s/%s: " % (t, path), input=content)
            eq(sha(t), before, "source after a refused set of " + path)
        fails(["set", t, "nope"], 1, "modelfs: %s/nope: " % t, input=b"1")
        fails(["set", t, "."], 1, "modelfs: %s: " % t, input=b"1")
        eq(sha(t), before, "source after refusals")
        check(not [n for n in os.listdir(w.dir) if n.startswith(".")], "no leftovers: %r"
              % os.listdir(w.dir))

        # VALUE form, an optimizer setting
        o = w.p("mlp_adam_2steps.optimizer")
        ok("set", o, "float_configs/Adam.alpha", "0.002")
        eq(ok("cat", o, "float_configs/Adam.alpha"), b"0.002\n", "optimizer setting")
        fails(["set", o, "uint_configs/Adam.epoch", "-1"], 1,
              "modelfs: %s/uint_configs/Adam.epoch: " % o)

        # TenniS: a tensor through a by-name link, a string that changes length
        s = w.p("convnet_small.tsm")
        ok("set", s, "by-name/conv1/params/stride/values.txt", input=b"1 1 2 2\n")
        eq(ok("cat", s, "nodes/2/params/stride/values.txt"), b"1\n1\n2\n2\n", "stride")
        ok("set", s, "nodes/2/params/format/values.txt", input=b"NHWC-long\n")
        eq(ok("cat", s, "nodes/2/params/format/values.txt"), b"NHWC-long\n", "char8")
        eq(ok("cat", s, "nodes/2/op"), b"conv2d\n", "rest of the file intact")

        # DAPHNE: CSR values through matrix.mtx; the .meta stays valid JSON
        d = w.p("csr_f64_6x5.dbdf")
        mtx = ok("cat", d, "matrix.mtx").decode().replace("\n2 1 1.5\n", "\n2 1 -7.25\n")
        ok("set", d, "matrix.mtx", input=mtx.encode())
        eq(ok("cat", d, "matrix.mtx").decode(), mtx, "matrix.mtx after set")
        json.load(open(d + ".meta"))
        before = sha(d)
        fails(["set", d, "matrix.mtx"], 1, "modelfs: %s/matrix.mtx: " % d,
              input=mtx.replace("\n2 1 -7.25\n", "\n1 1 -7.25\n").encode())
        eq(sha(d), before, "a changed sparsity pattern is refused")
        # a dense matrix reshaped through data.npy: header and .meta follow
        dd = w.p("dense_f32_3x4.dbdf")
        import io
        buf = io.BytesIO()
        np.save(buf, np.arange(6, dtype=np.float32).reshape(2, 3))
        ok("set", dd, "data.npy", input=buf.getvalue())
        eq(ok("cat", dd, "shape"), b"2 3\n", "reshaped")
        eq(ok("cat", dd, "header/rows"), b"2\n", "header follows")
        meta = json.load(open(dd + ".meta"))
        eq((meta.get("numRows"), meta.get("numCols")), (2, 3), "meta follows")

        # PLearn: an option's text
        ps = w.p("LinearRegressor.final_learner.psave")
        ok("set", ps, "weight_decay", "0.5")
        eq(ok("cat", ps, "weight_decay"), b"0.5\n", "PLearn option")
        ok("set", ps, "weights/values.txt", input=b"1 2\n3 4\n5 6\n")
        eq(ok("cat", ps, "weights/values.txt"), b"1 2\n3 4\n5 6\n", "PLearn matrix")

        # through a symbolic link: the file it names changes, the link stays
        os.symlink("tensor_2x3.tensor", w.p("latest.tensor"))
        ok("set", w.p("latest.tensor"), "values.txt", input=b"6 5 4 3 2 1")
        check(os.path.islink(w.p("latest.tensor")), "the link is still a link")
        eq(ok("cat", t, "values.txt"), b"6 5 4\n3 2 1\n", "target changed")

        # a read-only source (root may write anyway)
        if os.geteuid() != 0:
            os.chmod(t, 0o444)
            before = sha(t)
            fails(["set", t, "values.txt"], 1, "modelfs: %s/values.txt: " % t, input=b"1 1 1 1 1 1")
            eq(sha(t), before, "read-only source")


def journal(path, spans):
    """The rollback journal an in-place commit of path leaves when it is cut
    short, as this process's user with mode 0600: spans = [(offset, old
    bytes)]."""
    jp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".mfs-journal")
    fd = os.open(jp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(rollback_journal(os.stat(path), spans))


def test_recovery():
    """A journal left by an interrupted in-place commit is rolled back before
    the CLI reads (or writes), as the mount does before it parses."""
    with Work(["primitiv/tensor_2x3.tensor"]) as w:
        t = w.p("tensor_2x3.tensor")
        orig = open(t, "rb").read()
        data = ok("cat", t, "data")
        off = orig.index(data)
        # half patched: the first element already new, the journal holds the old bytes
        with open(t, "r+b") as f:
            f.seek(off)
            f.write(np.float32(99).tobytes())
        journal(t, [(off, data[:4])])
        eq(ok("cat", t, "values.txt"), b"0.5 1.5 2.5\n10.5 11.5 12.5\n", "rolled back before cat")
        eq(open(t, "rb").read(), orig, "source rolled back")
        eq(sorted(os.listdir(w.dir)), ["tensor_2x3.tensor"], "journal removed")
        with open(t, "r+b") as f:
            f.seek(off)
            f.write(np.float32(99).tobytes())
        journal(t, [(off, data[:4])])
        ok("set", t, "values.txt", input=b"0.5 1.5 2.5 10.5 11.5 12.5")
        eq(open(t, "rb").read(), orig, "rolled back before set (which then changes nothing)")
        eq(sorted(os.listdir(w.dir)), ["tensor_2x3.tensor"], "journal removed by set")


# ---------------------------------------------------------------- large tensors

def peak_anon(args, stdout=subprocess.DEVNULL):
    """Run modelfs; returns (exit status, peak RssAnon in KiB, stdout sha)."""
    p = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    h = hashlib.sha256()
    peak = 0
    import threading

    def sample():
        nonlocal peak
        while p.poll() is None:
            try:
                with open("/proc/%d/status" % p.pid) as f:
                    for ln in f:
                        if ln.startswith("RssAnon:"):
                            peak = max(peak, int(ln.split()[1]))
            except OSError:
                pass
            time.sleep(0.002)
    th = threading.Thread(target=sample)
    th.start()
    n = 0
    while True:
        b = p.stdout.read(1 << 20)
        if not b:
            break
        n += len(b)
        h.update(b)
    err = p.stderr.read()
    rc = p.wait()
    th.join()
    eq(err, b"", "stderr of modelfs %s" % " ".join(args))
    return rc, peak, h.hexdigest(), n


def test_big():
    """A 48 MiB float32 tensor (made by reshaping a test file through
    data.npy with `modelfs set`, stdin a regular file): cat streams every
    view with flat memory, stats agrees with NumPy. Under a sanitizer,
    where memory is not checked, 12 MiB."""
    rows, cols = (192 if sanitized() else 768), 16384
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((rows, cols)) * 3 + 1e3).astype(np.float32)
    a[5, 7] = np.nan
    with Work([("primitiv/tensor_2x3.tensor", "big.tensor")]) as w:
        f = w.p("big.tensor")
        np.save(w.p("big.npy"), a)
        with open(w.p("big.npy"), "rb") as src:
            r = subprocess.run([BIN, "set", f, "data.npy"], stdin=src, capture_output=True)
        eq((r.returncode, r.stderr), (0, b""), "set of a 48 MiB data.npy")
        eq(ok("cat", f, "shape"), b"%d %d\n" % (rows, cols), "new shape")
        npy_bytes = ok("cat", f, "data.npy")
        import io
        got = np.load(io.BytesIO(npy_bytes))
        check(np.array_equal(got, a, equal_nan=True), "data.npy of the big tensor")
        raw = a.tobytes(order="F" if np.isfortran(got) else "C")  # storage order
        rc, peak, h, n = peak_anon(["cat", f, "data"])
        eq((rc, n, h), (0, len(raw), hashlib.sha256(raw).hexdigest()), "data of the big tensor")
        if not sanitized():
            check(peak < 16 << 10, "cat data held %d KiB" % peak)
        rc, peak, h, n = peak_anon(["cat", f, "data.npy"])
        eq((rc, h), (0, hashlib.sha256(npy_bytes).hexdigest()), "data.npy of the big tensor")
        rc, peak, h, n = peak_anon(["cat", f, "values.txt"])
        eq(rc, 0, "cat values.txt")
        size = ls_long(f)
        eq(n, {name: sz for _, sz, name, _ in size}["values.txt"], "values.txt bytes vs ls -l")
        if not sanitized():
            # the text is ~3x the data; a renderer holding it would show here
            check(peak < 48 << 10, "cat values.txt held %d KiB for %d bytes of text" % (peak, n))
        # a line of values.txt parses back to the row
        txt = subprocess.run("%s cat %s values.txt | sed -n 6p" % (BIN, f), shell=True,
                             capture_output=True).stdout.decode().split()
        check(np.array_equal(np.array(txt, dtype=np.float32), a[5], equal_nan=True), "row 5")
        stats_check(f, "", a)
        if HAVE_FUSE:
            with Mount() as m:
                shutil.copyfile(f, m.s("big.tensor"))
                for v in ("data", "data.npy", "values.txt"):
                    rc, _, h, _ = peak_anon(["cat", f, v])
                    eq(h, sha(m.m("big.tensor", v)), "mount vs cat of big " + v)


# ---------------------------------------------------------------- against a mount

COMPARE = ["primitiv/mlp_adam_2steps.model", "primitiv/mlp_adam_2steps.optimizer",
           "primitiv/tensor_special_values.tensor", "tennis/convnet_small.tsm",
           "tennis/dtypes_zoo.tsm", "daphne/generated/csr_f64_6x5.dbdf",
           "daphne/generated/frame_mixed_4x8.dbdf", "daphne/generated/dense_si64_3x4.dbdf",
           "daphne/built/spec_multi_csr.dbdf", "plearn/pmat/linear_4x_2y.pmat",
           "plearn/amat/linear_4x_2y.amat",
           "plearn/psave/learners/LinearRegressor.final_learner.psave",
           "plearn/psave/learners/NNet.final_learner.psave"]


def with_meta(files):
    out = []
    for f in files:
        out.append(f)
        if os.path.exists(os.path.join(DATA, f + ".meta")):
            out.append(f + ".meta")
    return out


def test_mount_agrees():
    if not HAVE_FUSE:
        print("     (no /dev/fuse: comparison with a mount skipped)")
        return
    # Under a sanitizer each cat is ~0.1 s: the 444 files of dtypes_zoo.tsm
    # (which test_cat walks there too) are left to the plain build.
    compare = [f for f in COMPARE if not (sanitized() and f.endswith("dtypes_zoo.tsm"))]
    with Mount(with_meta(compare)) as m:
        nfiles = 0
        for rel in compare:
            name = os.path.basename(rel)
            f = m.s(name)
            for path, mode, size, target in [("", "d", 0, None)] + list(cli_walk(f)):
                mp = m.m(name, path) if path else m.m(name)
                st = os.lstat(mp)
                if path:
                    eq(mode, stat.filemode(st.st_mode), "ls -l mode of %s/%s" % (name, path))
                    eq(size, st.st_size, "ls -l size of %s/%s" % (name, path))
                if mode.startswith("d"):
                    eq(ls_names(f, path), os.listdir(mp), "ls of %s/%s" % (name, path))
                elif mode.startswith("l"):
                    eq(target, os.readlink(mp), "link %s/%s" % (name, path))
                else:
                    eq(ok("cat", f, path), m.read(name, path), "cat of %s/%s" % (name, path))
                    nfiles += 1
        check(nfiles > 200, "files compared: %d" % nfiles)
        # paths through links, both ways
        eq(ok("cat", m.s("convnet_small.tsm"), "by-name/conv1/params/stride/values.txt"),
           m.read("convnet_small.tsm", "by-name", "conv1", "params", "stride", "values.txt"),
           "through a link")


SETS = [  # (file, path, content) accepted by both
    ("primitiv/tensor_2x3.tensor", "values.txt", b"1 2 3\n4 5 6\n"),
    ("primitiv/tensor_2x3.tensor", "data", np.arange(6, dtype=np.float32).tobytes()),
    ("primitiv/mlp_adam_2steps.optimizer", "float_configs/Adam.alpha", b"0.002\n"),
    ("primitiv/mlp_adam_2steps.model", "params/encoder/w/value/values.txt",
     b" ".join(b"%d" % i for i in range(32)) + b"\n"),
    ("tennis/convnet_small.tsm", "nodes/2/params/format/values.txt", b"NHWC-long\n"),
    ("tennis/convnet_small.tsm", "nodes/2/params/stride/values.txt", b"1 1 2 2\n"),
    ("daphne/generated/dense_f32_3x4.dbdf", "values.txt", b"1 2 3 4\n5 6 7 8\n9 10 11 12.5\n"),
    ("daphne/generated/frame_mixed_4x8.dbdf", "columns/price/values.txt", b"1\n2\n3\n4\n"),
    ("plearn/psave/learners/LinearRegressor.final_learner.psave", "weight_decay", b"0.5\n"),
    ("plearn/pmat/linear_4x_2y.pmat", "values.txt", None),  # filled below: one value changed
]
REFUSED = [  # (file, path, content) refused by both
    ("primitiv/tensor_2x3.tensor", "values.txt", b"1 2 3 4 5 1e39"),
    ("primitiv/tensor_2x3.tensor", "values.txt", b"1 2 3"),
    ("tennis/convnet_small.tsm", "nodes/2/params/stride/values.txt", b"1 1 2"),
    ("daphne/generated/dense_si64_3x4.dbdf", "values.txt", b"1 2 3 4 5 6 7 8 9 10 11 1e30"),
    ("plearn/psave/learners/LinearRegressor.final_learner.psave", "weights/values.txt", b"1 2"),
]


def test_set_agrees_with_mount():
    if not HAVE_FUSE:
        print("     (no /dev/fuse: comparison with a mount skipped)")
        return
    for rel, path, content in SETS:
        name = os.path.basename(rel)
        with Mount(with_meta([rel])) as m, Work(with_meta([rel])) as w:
            if content is None:
                txt = m.read(name, path).decode().split("\n")
                first = txt[0].split()
                first[0] = "0.125"
                txt[0] = " ".join(first)
                content = "\n".join(txt).encode()
            with open(m.m(name, path), "wb") as f:
                f.write(content)
            ok("set", name, path, input=content, cwd=w.dir)
            eq(open(w.p(name), "rb").read(), open(m.s(name), "rb").read(),
               "source after set vs mount write: %s/%s" % (name, path))
            check(open(w.p(name), "rb").read() != open(os.path.join(DATA, rel), "rb").read(),
                  "the write changed %s" % name)
            if os.path.exists(m.s(name + ".meta")):
                eq(open(w.p(name + ".meta"), "rb").read(), open(m.s(name + ".meta"), "rb").read(),
                   ".meta after set vs mount write: " + name)
    for rel, path, content in REFUSED:
        name = os.path.basename(rel)
        with Mount(with_meta([rel])) as m, Work(with_meta([rel])) as w:
            orig = sha(os.path.join(DATA, rel))
            try:
                with open(m.m(name, path), "wb") as f:
                    f.write(content)
                raise AssertionError("the mount accepted %r into %s" % (content, path))
            except OSError:
                pass
            line = fails(["set", name, path], 1, "modelfs: %s/%s: " % (name, path), input=content,
                         cwd=w.dir)
            eq((sha(w.p(name)), sha(m.s(name))), (orig, orig), "sources after refusals")
            mount_line = m.errors().strip().split("\n")[-1].split(" ", 1)[1]
            eq(line, "modelfs: " + mount_line, "CLI line vs .modelfs/errors")


TESTS = [test_help, test_usage_errors, test_dispatch, test_ls, test_cat, test_tree, test_stats,
         test_set, test_recovery, test_big, test_mount_agrees, test_set_agrees_with_mount]


if __name__ == "__main__":
    run_tests(TESTS, fuse=False)
