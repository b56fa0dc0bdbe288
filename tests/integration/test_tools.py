"""The tools of the README's tour, on a real mount: `tree`, `diff -r` of two
checkpoints, numpy.load with mmap_mode, scipy.io.mmread on matrix.mtx,
pandas.read_csv on frame.csv, and an edit with Python. Every figure is
checked against an independent decode of the source file."""
import os
import subprocess

import numpy as np

from formats import decode_json
from harness import Mount, check, eq, run
from primitiv_decode import decode as primitiv_decode


def dbdf_decode(path):
    return decode_json("dbdf_decode.py", path)

INIT = "primitiv/mlp_init_nostats.model"
STEP = "primitiv/mlp_adam_2steps_saved_without_stats.model"
CSR = "daphne/generated/csr_f64_6x5.dbdf"
FRAME = "daphne/generated/frame_mixed_4x8.dbdf"
TSM = "tennis/convnet_small.tsm"
FILES = [INIT, STEP, CSR, CSR + ".meta", FRAME, FRAME + ".meta", TSM]


def sh(m, cmd):
    r = subprocess.run(["bash", "-c", cmd], cwd=m.mnt, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def test_tree():
    with Mount(FILES) as m:
        rc, out, err = sh(m, "tree --noreport -L 2 convnet_small.tsm")
        eq(rc, 0, "tree exit status: " + err)
        lines = out.splitlines()
        eq(lines[0], "convnet_small.tsm", "tree root")
        for want in ("by-name", "header", "inputs", "nodes", "outputs"):
            check(any(l.endswith("── " + want) for l in lines), "tree shows " + want)
        check(any("conv1 -> ../nodes/2" in l for l in lines), "tree shows by-name links")
        rc, out, _ = sh(m, "tree --noreport mlp_init_nostats.model")
        eq(rc, 0, "tree of a model")
        check(out.count("values.txt") == 7, "7 tensors in the tree, got %d" % out.count("values.txt"))


def test_diff_checkpoints():
    with Mount(FILES) as m:
        a, b = os.path.basename(INIT), os.path.basename(STEP)
        rc, out, _ = sh(m, "diff -rq %s %s" % (a, b))
        eq(rc, 1, "diff -rq finds differences")
        da, db = primitiv_decode(m.s(a)), primitiv_decode(m.s(b))
        changed = sorted(k for k in da["params"] if da["params"][k]["value"] != db["params"][k]["value"])
        check(changed, "the checkpoints differ")
        for k in changed:
            check("%s/params/%s/value/values.txt" % (a, k) in out, "diff names " + k)
        rc, same, _ = sh(m, "diff -r %s %s" % (a, a))
        eq((rc, same), (0, ""), "a checkpoint equals itself")
        # a text diff of one tensor shows its changed values
        k = changed[0]
        rc, out, _ = sh(m, "diff %s/params/%s/value/values.txt %s/params/%s/value/values.txt"
                        % (a, k, b, k))
        eq(rc, 1, "diff of one tensor")
        check(out.startswith(("1c1", "1,")), "a normal diff: " + out[:40])


def check_mmap(path, ref, what):
    """numpy.load(mmap_mode='r') of a view (the map is gone on return, so
    that the mount can be unmounted)."""
    arr = np.load(path, mmap_mode="r")
    check(isinstance(arr, np.memmap), "numpy.load(mmap_mode='r') maps the view")
    want = np.array(ref["values"], dtype=np.float32).reshape(ref["dims"][::-1]).T
    eq(arr.shape, want.shape, what + " shape")  # primitiv stores column-major
    check(np.array_equal(np.asarray(arr), want), what + " values through mmap")
    del arr


def test_numpy_scipy_pandas():
    with Mount(FILES) as m:
        b = os.path.basename(STEP)
        d = primitiv_decode(m.s(b))
        for k, p in d["params"].items():
            check_mmap(m.m(b, "params", k, "value", "data.npy"), p["value"], k)
        import scipy.io
        import scipy.sparse
        ref = dbdf_decode(m.s(os.path.basename(CSR)))
        mat = scipy.io.mmread(m.m(os.path.basename(CSR), "matrix.mtx"))
        check(scipy.sparse.issparse(mat), "mmread gives a sparse matrix")
        check(np.array_equal(mat.toarray(), np.array(ref["matrix"], dtype=float)),
              "scipy.io.mmread equals the decoded CSR matrix")
        import pandas
        fr = dbdf_decode(m.s(os.path.basename(FRAME)))
        df = pandas.read_csv(m.m(os.path.basename(FRAME), "frame.csv"))
        eq(df.shape, (fr["header"]["rows"], fr["header"]["cols"]), "frame shape")
        eq(list(df.columns), fr["labels"], "labels")
        for j, col in enumerate(df.columns):
            got = [float(v) for v in df[col]]
            want = [float(v) for v in fr["column_list"][j]]
            check(all(g == w or abs(g - w) <= 1e-9 * abs(w) for g, w in zip(got, want)),
                  "column %s: %r != %r" % (col, got, want))


def test_edit_with_python():
    with Mount(FILES) as m:
        b = os.path.basename(STEP)
        path = m.m(b, "params", "encoder", "b", "value", "values.txt")
        vals = [float(x) for x in open(path).read().split()]
        vals[0] = 0.25
        with open(path, "w") as f:
            f.write("\n".join(repr(v) for v in vals) + "\n")
        d = primitiv_decode(m.s(b))
        eq(d["params"]["encoder/b"]["value"]["values"][0], 0.25, "the edit is in the source")
        arr = np.load(m.m(b, "params", "encoder", "b", "value", "data.npy"))
        eq(float(arr[0]), 0.25, "data.npy shows the edit")


if __name__ == "__main__":
    run([test_tree, test_diff_checkpoints, test_numpy_scipy_pandas, test_edit_with_python])
