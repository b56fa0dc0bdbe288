"""DAPHNE (.dbdf) through a real mount: every view of every file in
tests/data/daphne/generated (written by DAPHNE) and built/ (the draft spec's
dialect and DAPHNE 0.1) checked against the independent decoder
dbdf_decode.py, MatrixMarket views parsed by hand (no scipy), frame.csv read
with the csv module and labels taken from the .meta sidecar; edits (dense
values with sed and echo, CSR values through values.txt and matrix.mtx, a
frame column, a dense reshape with numpy.save) checked by decoding the source
again, with the .meta sidecar kept in step (compact JSON, sorted keys, no
trailing newline); truncated files pass through with a line in
.modelfs/errors; bad input is refused with source and sidecar unchanged."""
import copy
import csv
import errno
import io
import json
import os
import shutil
import threading
import time

import numpy as np

from harness import Mount, check, data, eq, run, settle
from formats import (check_all_tensor_dirs, check_tensor_dir, decode_json, error_lines,
                     expect_refused, npy_saver, expect_unchanged_on_disk, read_every_file, read_text,
                     same_array, same_structure, shape_of, stop_after_crash, write_ok)

GEN = "daphne/generated"
BUILT = "daphne/built"


def decode(m, rel):
    return decode_json("dbdf_decode.py", m.s(rel))


def num(v):
    """A decoded value as a Python number ("nan", "inf", "-inf" as floats)."""
    return float(v) if isinstance(v, str) else v


def as_array(values, dtype):
    if dtype in ("str", "fixedstr16"):
        return None
    return np.array([[num(v) for v in row] for row in values] if values and isinstance(values[0], list)
                    else [num(v) for v in values], dtype=np.dtype(dtype))


def meta_text(obj):
    """A .meta sidecar as DAPHNE writes it."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"))


def read_mtx(path):
    """A MatrixMarket coordinate file: (field, rows, cols, [(i, j, value text)])
    with 0-based indices; checks the header and the entry count."""
    lines = read_text(path).split("\n")
    check(lines[-1] == "", path + " does not end with a newline")
    head = lines[0].split()
    eq(head[:4], ["%%MatrixMarket", "matrix", "coordinate", head[3]], "MatrixMarket header of " + path)
    eq(head[4], "general", "symmetry of " + path)
    body = [ln for ln in lines[1:-1] if not ln.startswith("%")]
    r, c, n = (int(x) for x in body[0].split())
    entries = []
    for ln in body[1:]:
        i, j, v = ln.split()
        entries.append((int(i) - 1, int(j) - 1, v))
    eq(len(entries), n, "entries of " + path)
    return head[3], r, c, entries


def check_mtx(path, dense, nnz):
    """matrix.mtx against the dense array it must describe and the number of
    stored entries; returns the entries."""
    field, r, c, entries = read_mtx(path)
    eq((r, c), dense.shape, "size line of " + path)
    eq(len(entries), nnz, "stored entries in " + path)
    eq(field, "integer" if dense.dtype.kind in "iu" else "real", "field of " + path)
    got = np.zeros(dense.shape, dtype=dense.dtype)
    seen = set()
    for i, j, v in entries:
        if (i, j) in seen:
            raise AssertionError("(%d, %d) twice in %s" % (i, j, path))
        seen.add((i, j))
        got[i, j] = int(v) if dense.dtype.kind in "iu" else float(v)
    same_array(got, dense, "matrix.mtx vs values of " + os.path.dirname(path))
    return entries


def check_block(d, blk, whole):
    """blocks/<k>/ against a decoded block; whole is the dense matrix (or
    the frame's columns side by side) it is part of."""
    eq(read_text(d, "row"), "%d\n" % blk["row"], "row of " + d)
    eq(read_text(d, "col"), "%d\n" % blk["col"], "col of " + d)
    eq(read_text(d, "type"), blk["type"] + "\n", "type of " + d)
    eq(shape_of(d), tuple(blk["shape"]), "shape of " + d)
    a = check_tensor_dir(d, data_view=(blk["type"] == "dense"))
    if blk.get("dtype"):
        eq(read_text(d, "dtype"), blk["dtype"] + "\n", "dtype of " + d)
    r, c = blk["row"], blk["col"]
    part = whole[r:r + blk["shape"][0], c:c + blk["shape"][1]]
    same_array(a.astype(part.dtype), part, "values of " + d)
    sparse = blk["type"] in ("csr", "coo")
    eq(os.path.exists(os.path.join(d, "matrix.mtx")), sparse, "matrix.mtx in " + d)
    if sparse:
        check_mtx(os.path.join(d, "matrix.mtx"), a, blk["nnz"])


def check_dbdf(m, rel):
    """Every view of the model directory of rel against dbdf_decode.py."""
    dec = decode(m, rel)
    root = m.m(rel)
    check(os.path.isdir(root), rel + " is not shown as a directory")
    h = dec["header"]
    for k in ("version", "type", "rows", "cols"):
        eq(read_text(root, "header", k), "%s\n" % h[k], "header/%s of %s" % (k, rel))
    eq(read_text(root, "dialect"), dec["dialect"] + "\n", "dialect of " + rel)
    if h["type"] == "frame":
        eq(os.listdir(os.path.join(root, "columns")), dec["labels"], "columns of " + rel)
        cols = []
        for label, dtype, values in zip(dec["labels"], dec["dtypes"], dec["column_list"]):
            d = os.path.join(root, "columns", label)
            a = check_tensor_dir(d, data_view=True)
            eq(read_text(d, "dtype"), dtype + "\n", "dtype of " + d)
            same_array(a, as_array(values, dtype), "column " + d)
            cols.append(a)
        check_frame_csv(os.path.join(root, "frame.csv"), dec)
        eq(os.path.exists(os.path.join(root, "blocks")), dec["dialect"] == "spec", "blocks/ of " + rel)
        if dec["dialect"] == "spec":
            eq(os.listdir(os.path.join(root, "blocks")), [str(k) for k in range(len(dec["blocks"]))])
            for k, blk in enumerate(dec["blocks"]):
                if blk["type"] == "empty":
                    continue
                c0 = blk["col"]
                part = cols[c0:c0 + blk["shape"][1]]
                whole = np.zeros((h["rows"], h["cols"]), dtype=part[0].dtype)
                for j, col in enumerate(part):
                    whole[:, c0 + j] = col
                check_block(os.path.join(root, "blocks", str(k)), blk, whole)
        return dec
    eq(shape_of(root), (h["rows"], h["cols"]), "shape of " + rel)
    eq(read_text(root, "dtype"), dec["dtype"] + "\n", "dtype of " + rel)
    one_dense = len(dec["blocks"]) == 1 and dec["blocks"][0]["type"] == "dense"
    if dec["dtype"] in ("str", "fixedstr16"):
        # opaque elements: shape, dtype and data only
        check("values.txt" not in os.listdir(root), "values.txt of an opaque matrix " + rel)
        eq(os.path.getsize(os.path.join(root, "data")), os.path.getsize(m.s(rel)) - 45, "data of " + rel)
        return dec
    a = check_tensor_dir(root, data_view=one_dense)
    whole = as_array(dec["matrix"], a.dtype.name).reshape(h["rows"], h["cols"])
    same_array(a, whole, "values of " + rel)
    sparse = h["type"] == "csr"
    eq(os.path.exists(os.path.join(root, "matrix.mtx")), sparse, "matrix.mtx of " + rel)
    if sparse:
        check_mtx(os.path.join(root, "matrix.mtx"), a, sum(b["nnz"] for b in dec["blocks"]))
    eq(os.listdir(os.path.join(root, "blocks")), [str(k) for k in range(len(dec["blocks"]))])
    for k, blk in enumerate(dec["blocks"]):
        check_block(os.path.join(root, "blocks", str(k)), blk, whole)
    return dec


def check_frame_csv(path, dec):
    rows = list(csv.reader(io.StringIO(read_text(path), newline="")))
    eq(rows[0], dec["labels"], "header line of " + path)
    eq(len(rows), dec["header"]["rows"] + 1, "lines of " + path)
    for j, (dtype, values) in enumerate(zip(dec["dtypes"], dec["column_list"])):
        cells = [r[j] for r in rows[1:]]
        if dtype.startswith("float"):
            same_array(np.array([float(x) for x in cells], dtype=dtype), as_array(values, dtype),
                       "column %d of %s" % (j, path))
        else:
            eq([int(x) for x in cells], values, "column %d of %s" % (j, path))


def dbdf_files(root):
    out = []
    for dp, dn, fn in os.walk(root):
        dn.sort()
        out += [os.path.relpath(os.path.join(dp, f), root) for f in sorted(fn) if f.endswith(".dbdf")]
    return out


# ---------------------------------------------------------------- reading

# The three files over 1 MB: their text views are checked, read after read,
# by test_large_text_views.
LARGE = ["crg.dbdf", "crg-csr.dbdf", "crg-f.dbdf"]


def test_read_generated():
    with Mount([(GEN, "g")]) as m:
        for f in LARGE:
            os.unlink(m.s("g", "unit-test-outputs", f))
        files = dbdf_files(m.src)
        check(len(files) >= 40, "only %d .dbdf files" % len(files))
        for rel in files:
            check_dbdf(m, rel)
        n = read_every_file(m.mnt)
        check(n > 1000, "only %d files read" % n)
        check(check_all_tensor_dirs(m.m("g"), data_view=None) > 100, "too few tensor directories")
        eq(m.errors(), "", ".modelfs/errors of a mount of DAPHNE's own files")
        # sidecars pass through unchanged
        for dp, dn, fn in os.walk(m.s("g")):
            for f in fn:
                if f.endswith(".meta"):
                    rel = os.path.relpath(os.path.join(dp, f), m.src)
                    check(os.path.isfile(m.m(rel)), rel + " is not a plain file")
                    eq(m.read(rel), open(m.s(rel), "rb").read(), rel)
        # values the MANIFEST lists
        eq(m.text("g/dense_f32_3x4.dbdf/values.txt"), "0 1.5 -2.25 3\n0.125 1024 -0 65504\n16777216 inf -inf nan\n")
        eq(m.text("g/dense_ui64_3x4.dbdf/values.txt").split()[-1], "18446744073709551615")
        eq(m.text("g/dense_f64_3x4.dbdf/values.txt").split("\n")[1], "0.1 3.141592653589793 -1e+300 5e-324")
        eq(m.text("g/csr_si32_4x3.dbdf/matrix.mtx"),
           "%%MatrixMarket matrix coordinate integer general\n4 3 4\n1 2 7\n3 1 -3\n3 3 9\n4 3 1\n")
        eq(m.text("g/csr_f32_3x3_allzero.dbdf/values.txt"), "0 0 0\n0 0 0\n0 0 0\n")
        eq(m.text("g/dense_f64_0x4.dbdf/shape"), "0 4\n")
        eq(m.text("g/dense_f64_0x4.dbdf/values.txt"), "")
        eq(np.load(m.m("g/dense_f64_0x4.dbdf/data.npy")).shape, (0, 4))
        eq(m.text("g/quirks/dense_str_1x2_raw_string_objects.dbdf/dtype"), "str\n")
        eq(m.text("g/quirks/dense_f64_3x2_colslice_view_miswritten.dbdf/values.txt"), "1 2\n3 4\n5 6\n")
        u = "g/unit-test-outputs/"
        a = np.load(m.m(u + "crk-csr.dbdf/data.npy"))
        eq(float(a[29, 36]), -926.188986068)
        eq(float(a[36, 29]), 926.188986068)
        eq(np.load(m.m(u + "cps-f.dbdf/columns/col_23/data.npy"))[23], 1.0)


def test_read_built():
    with Mount([(BUILT, "b")]) as m:
        files = dbdf_files(m.src)
        eq(len(files), 16, "built/ files")
        dialects = {}
        for rel in files:
            dialects[os.path.basename(rel)] = check_dbdf(m, rel)["dialect"]
        eq(dialects["daphne01_csr.dbdf"], "daphne-0.1")
        eq(dialects["daphne01_coo.dbdf"], "daphne-0.1")
        check(all(d == "spec" for f, d in dialects.items() if f.startswith("spec_")), repr(dialects))
        read_every_file(m.mnt)
        eq(m.read("b/make_files.py"), open(data(BUILT + "/make_files.py"), "rb").read())
        eq(m.errors(), "", ".modelfs/errors of the built files")
        eq(m.text("b/spec_multi_dense.dbdf/values.txt"),
           "1 2 3 4 5 6\n7 8 9 10 11 12\n0 13 0 17 0 0\n0 0 0 0 16 0\n14 0 15 0 0 18\n0 0 0 0 0 0\n")
        eq([m.text("b/spec_multi_dense.dbdf/blocks/%d/type" % k) for k in range(5)],
           ["dense\n", "csr\n", "coo\n", "coo\n", "empty\n"])
        eq(m.text("b/spec_convert.dbdf/blocks/0/dtype"), "uint8\n")
        eq(m.text("b/spec_convert.dbdf/blocks/1/dtype"), "int16\n")
        eq(m.text("b/spec_vt4.dbdf/values.txt"), "0 1 2\n1099511627776 10000000000000000000 3\n")
        eq(m.text("b/spec_vt9.dbdf/values.txt"), "0 1.5 -2.25\n0.1 1e+30 -0\n")
        eq(m.text("b/spec_frame.dbdf/frame.csv"), "a,bb,ccc\n1.5,-1,9\n2.5,-2,0\n3.5,0,8\n4.5,-4,0\n")


def test_frame_csv_and_labels():
    files = [GEN + "/frame_mixed_4x8.dbdf", GEN + "/frame_mixed_4x8.dbdf.meta",
             (GEN + "/frame_mixed_4x8.dbdf", "nometa.dbdf"),
             GEN + "/unit-test-outputs/aig-f.dbdf"]
    with Mount(files) as m:
        labels = ["price", "count", "flag", "ratio", "delta", "id", "t", "a_much_longer_label_17"]
        meta = json.loads(open(m.s("frame_mixed_4x8.dbdf.meta")).read())
        eq([c["label"] for c in meta["schema"]], labels)
        with open(m.m("frame_mixed_4x8.dbdf", "frame.csv"), newline="") as f:
            rows = list(csv.reader(f))
        eq(rows[0], labels)
        eq(rows[1], ["1.5", "-1", "0", "0.5", "-100", "1", "-5", "10"])
        eq(rows[4][0], "10000000000")
        eq(rows[4][7], "18446744073709551615")
        with open(m.m("frame_mixed_4x8.dbdf", "frame.csv"), newline="") as f:
            dicts = list(csv.DictReader(f))
        eq([float(d["price"]) for d in dicts], [1.5, -2.25, 0.1, 1e10])
        eq([int(d["id"]) for d in dicts], [1, 2, 3, 4000000000])
        eq(os.listdir(m.m("frame_mixed_4x8.dbdf", "columns")), labels)
        eq(m.text("frame_mixed_4x8.dbdf", "columns", "ratio", "dtype"), "float32\n")
        eq(m.text("frame_mixed_4x8.dbdf", "columns", "t", "values.txt"), "-5\n5\n-128\n127\n")
        # no sidecar: col_<i>, never DAPHNE's garbage label bytes
        eq(os.listdir(m.m("nometa.dbdf", "columns")), ["col_%d" % i for i in range(8)])
        eq(m.text("nometa.dbdf", "frame.csv").split("\n")[0], ",".join("col_%d" % i for i in range(8)))
        eq(os.listdir(m.m("aig-f.dbdf", "columns")), ["col_0", "col_1", "col_2"])
        for rel in ("frame_mixed_4x8.dbdf", "nometa.dbdf", "aig-f.dbdf"):
            check_dbdf(m, rel)


def parallel_read(path, threads=8, block=128 * 1024):
    """The whole file, read through one descriptor by several threads at
    once (pread of blocks), after dropping its pages from the page cache."""
    size = os.stat(path).st_size
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        offs = list(range(0, size, block))
        parts = {}

        def work(k):
            for o in offs[k::threads]:
                parts[o] = os.pread(fd, block, o)
        ts = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        return b"".join(parts[o] for o in offs)
    finally:
        os.close(fd)


def test_large_text_views():
    """values.txt, matrix.mtx and frame.csv of ~1 MB views, read again and
    again by several threads through one open file."""
    with Mount([GEN + "/unit-test-outputs/" + f for f in LARGE]) as m:
        big = np.load(m.m("crg.dbdf", "data.npy"), mmap_mode="r")
        eq(big.shape, (497, 507))
        eq(float(big[5, 0]), 0.25599762)
        eq(float(big[200, 4]), 0.20001954)
        del big
        views = ["crg.dbdf/values.txt", "crg.dbdf/blocks/0/values.txt", "crg-csr.dbdf/values.txt",
                 "crg-csr.dbdf/blocks/0/values.txt", "crg-csr.dbdf/matrix.mtx", "crg-f.dbdf/frame.csv",
                 "crg.dbdf/data.npy"]
        bad = []
        for v in views:
            first = m.read(v)
            if b"\0" in first and not v.endswith(".npy"):
                bad.append(v + " (NUL bytes)")
            for _ in range(5):
                if parallel_read(m.m(v)) != first:
                    bad.append(v)
                    break
        check(not bad, "BUG: large views differ from one read to the next when one open file is read by "
              "several threads at once: %s" % ", ".join(bad))
        for rel in LARGE:
            check_dbdf(m, rel)


def test_outside_rewrites_while_browsing():
    """A training run saving checkpoints (rewrites of the source from
    outside) while the mount is being listed and the kernel forgets inodes."""
    good = open(data(GEN + "/dense_f64_3x4.dbdf"), "rb").read()
    m = Mount([GEN + "/dense_f64_3x4.dbdf"]).start()
    names = ["x%d.dbdf" % i for i in range(4)]
    for n in names:
        shutil.copyfile(m.s("dense_f64_3x4.dbdf"), m.s(n))
    stop = time.time() + 5
    lost = []

    def browse():
        while time.time() < stop and not lost:
            for n in names:
                try:
                    os.listdir(m.m(n))
                except OSError as e:
                    if e.errno in (errno.ENOTCONN, errno.ECONNABORTED):
                        lost.append(e)
                        return
    # daemon threads: a crashed modelfs can leave them stuck in the kernel
    threads = [threading.Thread(target=browse, daemon=True) for _ in range(4)]
    for t in threads:
        t.start()
    rounds = 0
    while time.time() < stop and not lost:
        for n in names:
            with open(m.s(n), "wb") as f:
                f.write(good)
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")
        rounds += 1
    for t in threads:
        t.join(timeout=15)
    stuck = any(t.is_alive() for t in threads)
    if not lost and not stuck:
        check_dbdf(m, "x0.dbdf")
    status = stop_after_crash(m, stuck=stuck)
    for t in threads:
        t.join(timeout=15)
    shutil.rmtree(m.tmp, ignore_errors=True)
    check(not lost and not stuck and status is None,
          "BUG: modelfs died (exit status %s, %s) after %d rounds of outside rewrites while browsing"
          % (status, lost[0] if lost else "requests hung" if stuck else "-", rounds))


# ---------------------------------------------------------------- edits

def test_dense_edits():
    files = [GEN + "/dense_f64_3x4.dbdf", GEN + "/dense_f64_3x4.dbdf.meta",
             GEN + "/dense_si64_5x1.dbdf", GEN + "/dense_si64_5x1.dbdf.meta",
             GEN + "/dense_f64_1x1.dbdf", GEN + "/dense_f64_1x1.dbdf.meta",
             GEN + "/dense_ui8_3x4.dbdf", GEN + "/dense_ui8_3x4.dbdf.meta"]
    with Mount(files) as m:
        metas = {f: m.read(f) for f in os.listdir(m.src) if f.endswith(".meta")}
        # sed -i on one value
        before = decode(m, "dense_f64_3x4.dbdf")
        m.sh("sed -i 's/^0 1.5 /0.5 1.5 /' dense_f64_3x4.dbdf/values.txt")
        want = copy.deepcopy(before)
        want["matrix"][0][0] = 0.5
        same_structure(decode(m, "dense_f64_3x4.dbdf"), want, "dense_f64_3x4 after sed")
        m.sh("sed -i '2s/5e-324/-7.25/' dense_f64_3x4.dbdf/values.txt")
        want["matrix"][1][3] = -7.25
        same_structure(decode(m, "dense_f64_3x4.dbdf"), want, "dense_f64_3x4 after a second sed")
        eq(os.path.getsize(m.s("dense_f64_3x4.dbdf")), 141)
        # echo a whole column vector, a 1x1 matrix, integers
        before = decode(m, "dense_si64_5x1.dbdf")
        m.sh("echo -1 -2 -3 9223372036854775807 -9223372036854775808 > dense_si64_5x1.dbdf/values.txt")
        want = copy.deepcopy(before)
        want["matrix"] = [[-1], [-2], [-3], [9223372036854775807], [-9223372036854775808]]
        same_structure(decode(m, "dense_si64_5x1.dbdf"), want, "dense_si64_5x1 after echo")
        before = decode(m, "dense_f64_1x1.dbdf")
        m.sh("echo -0.001 > dense_f64_1x1.dbdf/values.txt")
        want = copy.deepcopy(before)
        want["matrix"] = [[-0.001]]
        same_structure(decode(m, "dense_f64_1x1.dbdf"), want, "dense_f64_1x1 after echo")
        before = decode(m, "dense_ui8_3x4.dbdf")
        m.sh("echo 255 254 253 252 > dense_ui8_3x4.dbdf/blocks/0/values.txt.new && "
             "sed -n 2,3p dense_ui8_3x4.dbdf/values.txt >> dense_ui8_3x4.dbdf/blocks/0/values.txt.new && "
             "mv dense_ui8_3x4.dbdf/blocks/0/values.txt.new dense_ui8_3x4.dbdf/blocks/0/values.txt")
        want = copy.deepcopy(before)
        want["matrix"][0] = [255, 254, 253, 252]
        same_structure(decode(m, "dense_ui8_3x4.dbdf"), want, "dense_ui8_3x4 after mv over blocks/0/values.txt")
        # data, in place
        m.sh("printf '\\x07' | dd of=dense_ui8_3x4.dbdf/data bs=1 seek=11 conv=notrunc status=none")
        want["matrix"][2][3] = 7
        same_structure(decode(m, "dense_ui8_3x4.dbdf"), want, "dense_ui8_3x4 after dd into data")
        for rel in ("dense_f64_3x4.dbdf", "dense_si64_5x1.dbdf", "dense_f64_1x1.dbdf", "dense_ui8_3x4.dbdf"):
            check_dbdf(m, rel)
        # value edits leave every sidecar as it was
        for f, b in metas.items():
            eq(m.read(f), b, f + " after value edits")
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_csr_edits():
    files = [GEN + "/csr_f64_6x5.dbdf", GEN + "/csr_f64_6x5.dbdf.meta",
             GEN + "/csr_si32_4x3.dbdf", GEN + "/csr_si32_4x3.dbdf.meta"]
    with Mount(files) as m:
        src = m.s("csr_f64_6x5.dbdf")
        meta = m.read("csr_f64_6x5.dbdf.meta")
        before = decode(m, "csr_f64_6x5.dbdf")
        want = copy.deepcopy(before)
        # values.txt, same pattern
        m.sh("sed -i 's/3.25/-3.125/' csr_f64_6x5.dbdf/values.txt")
        want["matrix"][2][2] = -3.125
        same_structure(decode(m, "csr_f64_6x5.dbdf"), want, "csr_f64_6x5 after sed on values.txt")
        # matrix.mtx, same pattern (sed, and a Python rewrite of the whole file)
        m.sh("sed -i 's/^5 5 6$/5 5 60.5/' csr_f64_6x5.dbdf/matrix.mtx")
        want["matrix"][4][4] = 60.5
        same_structure(decode(m, "csr_f64_6x5.dbdf"), want, "csr_f64_6x5 after sed on matrix.mtx")
        write_ok(m.m("csr_f64_6x5.dbdf", "blocks", "0", "matrix.mtx"),
                 "%%MatrixMarket matrix coordinate real general\n% entries in another order\n6 5 6\n"
                 "5 5 1\n5 4 2\n5 2 3\n3 3 4\n2 5 5\n2 1 6\n")
        want["matrix"][4][4], want["matrix"][4][3], want["matrix"][4][1] = 1.0, 2.0, 3.0
        want["matrix"][2][2], want["matrix"][1][4], want["matrix"][1][0] = 4.0, 5.0, 6.0
        same_structure(decode(m, "csr_f64_6x5.dbdf"), want, "csr_f64_6x5 after writing blocks/0/matrix.mtx")
        eq(os.path.getsize(src), 205, "size of csr_f64_6x5.dbdf")
        # a stored entry may hold 0 (the pattern stays, so does numNonZeros)
        m.sh("sed -i '2s/^6 /0 /' csr_f64_6x5.dbdf/values.txt")
        want["matrix"][1][0] = 0.0
        same_structure(decode(m, "csr_f64_6x5.dbdf"), want, "csr_f64_6x5 after storing a 0")
        eq(m.read("csr_f64_6x5.dbdf.meta"), meta, "sidecar after value edits")
        check_dbdf(m, "csr_f64_6x5.dbdf")
        # a changed pattern is refused
        vals = m.text("csr_f64_6x5.dbdf", "values.txt")
        expect_refused(m, "csr_f64_6x5.dbdf/values.txt", "1" + vals[1:], src)
        mtx = m.text("csr_f64_6x5.dbdf", "matrix.mtx")
        expect_refused(m, "csr_f64_6x5.dbdf/matrix.mtx", mtx.replace("\n5 5 ", "\n6 5 "), src)
        expect_refused(m, "csr_f64_6x5.dbdf/matrix.mtx", mtx.replace("6 5 6\n", "6 5 7\n") + "1 1 1\n", src)
        expect_refused(m, "csr_f64_6x5.dbdf/matrix.mtx", mtx.replace("\n5 5 1\n", "\n"), src)
        expect_refused(m, "csr_f64_6x5.dbdf/blocks/0/matrix.mtx", mtx.replace("\n5 5 1\n", "\n5 4 1\n"), src)
        expect_refused(m, "csr_f64_6x5.dbdf/matrix.mtx", mtx.replace("6 5 6\n", "7 5 6\n"), src)
        eq(m.read("csr_f64_6x5.dbdf.meta"), meta, "sidecar after refused edits")
        # integers
        before = decode(m, "csr_si32_4x3.dbdf")
        m.sh("sed -i 's/^1 2 7$/1 2 -2147483648/' csr_si32_4x3.dbdf/matrix.mtx")
        want = copy.deepcopy(before)
        want["matrix"][0][1] = -2147483648
        same_structure(decode(m, "csr_si32_4x3.dbdf"), want, "csr_si32_4x3 after sed on matrix.mtx")
        expect_refused(m, "csr_si32_4x3.dbdf/matrix.mtx",
                       m.text("csr_si32_4x3.dbdf", "matrix.mtx").replace("3 3 9", "3 3 9.5"),
                       m.s("csr_si32_4x3.dbdf"))
        expect_refused(m, "csr_si32_4x3.dbdf/matrix.mtx",
                       m.text("csr_si32_4x3.dbdf", "matrix.mtx").replace("3 3 9", "3 3 2147483648"),
                       m.s("csr_si32_4x3.dbdf"), errno.ERANGE)
        check_dbdf(m, "csr_si32_4x3.dbdf")


def test_frame_column_edit():
    files = [GEN + "/frame_mixed_4x8.dbdf", GEN + "/frame_mixed_4x8.dbdf.meta", BUILT + "/spec_frame.dbdf"]
    with Mount(files) as m:
        src = m.s("frame_mixed_4x8.dbdf")
        meta = m.read("frame_mixed_4x8.dbdf.meta")
        raw0 = open(src, "rb").read()
        before = decode(m, "frame_mixed_4x8.dbdf")
        m.sh("echo 11 -22 33 -44 > frame_mixed_4x8.dbdf/columns/count/values.txt")
        want = copy.deepcopy(before)
        want["columns"]["count"] = want["column_list"][1] = [11, -22, 33, -44]
        same_structure(decode(m, "frame_mixed_4x8.dbdf"), want, "frame after echo into a column")
        write_ok(m.m("frame_mixed_4x8.dbdf", "columns", "ratio", "values.txt"), "0.25\n-0.5\n1e+30\n-0\n")
        want["columns"]["ratio"] = want["column_list"][3] = [0.25, -0.5, 1e30, -0.0]
        same_structure(decode(m, "frame_mixed_4x8.dbdf"), want, "frame after writing a float32 column")
        eq(m.read("frame_mixed_4x8.dbdf.meta"), meta, "sidecar after column edits")
        # DAPHNE's garbage label bytes stay as they were
        raw1 = open(src, "rb").read()
        eq(raw1[:107], raw0[:107], "header and label bytes after column edits")
        rows = list(csv.reader(io.StringIO(m.text("frame_mixed_4x8.dbdf", "frame.csv"))))
        eq([r[1] for r in rows], ["count", "11", "-22", "33", "-44"])
        eq([r[3] for r in rows], ["ratio", "0.25", "-0.5", "1e+30", "-0"])
        check_dbdf(m, "frame_mixed_4x8.dbdf")
        expect_refused(m, "frame_mixed_4x8.dbdf/columns/flag/values.txt", "0 1 2 256\n", src, errno.ERANGE)
        expect_refused(m, "frame_mixed_4x8.dbdf/columns/flag/values.txt", "0 1 2\n", src)
        expect_refused(m, "frame_mixed_4x8.dbdf/columns/price/values.txt", "1 2 3 four\n", src)
        eq(m.read("frame_mixed_4x8.dbdf.meta"), meta, "sidecar after refused edits")
        # the spec's frame of blocks: a dense column, and a sparse one whose
        # unstored cells cannot change
        before = decode(m, "spec_frame.dbdf")
        m.sh("echo 0.5 1 2 3 > spec_frame.dbdf/columns/a/values.txt")
        want = copy.deepcopy(before)
        want["columns"]["a"] = want["column_list"][0] = [0.5, 1.0, 2.0, 3.0]
        same_structure(decode(m, "spec_frame.dbdf"), want, "spec_frame after echo into column a")
        write_ok(m.m("spec_frame.dbdf", "columns", "bb", "values.txt"), "-10 -20 0 -40\n")
        want["columns"]["bb"] = want["column_list"][1] = [-10, -20, 0, -40]
        same_structure(decode(m, "spec_frame.dbdf"), want, "spec_frame after writing column bb")
        expect_refused(m, "spec_frame.dbdf/columns/bb/values.txt", "-10 -20 -30 -40\n", m.s("spec_frame.dbdf"))
        check_dbdf(m, "spec_frame.dbdf")


def test_dense_reshape_numpy():
    files = [GEN + "/dense_f64_3x4.dbdf", GEN + "/dense_f64_3x4.dbdf.meta",
             GEN + "/dense_f64_0x4.dbdf", GEN + "/dense_f64_0x4.dbdf.meta",
             GEN + "/unit-test-outputs/aig.dbdf",
             GEN + "/csr_f64_6x5.dbdf", GEN + "/csr_f64_6x5.dbdf.meta"]
    with Mount(files) as m:
        a = np.arange(10, dtype=np.float64).reshape(2, 5) * 1.5
        np.save(m.m("dense_f64_3x4.dbdf", "data.npy"), a)
        dec = decode(m, "dense_f64_3x4.dbdf")
        eq(dec["header"], {"version": 1, "type": "dense", "rows": 2, "cols": 5})
        eq(dec["dialect"], "daphne")
        eq(dec["matrix"], a.tolist())
        eq(os.path.getsize(m.s("dense_f64_3x4.dbdf")), 45 + 10 * 8)
        eq(m.read("dense_f64_3x4.dbdf.meta"), meta_text({"numCols": 5, "numRows": 2, "valueType": "f64"}).encode(),
           "sidecar after a reshape")
        eq(m.text("dense_f64_3x4.dbdf", "shape"), "2 5\n")
        eq(m.text("dense_f64_3x4.dbdf", "header", "rows"), "2\n")
        same_array(np.load(m.m("dense_f64_3x4.dbdf", "data.npy"), mmap_mode="r"), a, "data.npy read back")
        check_dbdf(m, "dense_f64_3x4.dbdf")
        # from no rows to some, and to a column vector
        b = np.array([[1.0, 2.0], [3.0, 4.0]])
        np.save(m.m("dense_f64_0x4.dbdf", "data.npy"), b)
        eq(decode(m, "dense_f64_0x4.dbdf")["matrix"], b.tolist())
        eq(m.read("dense_f64_0x4.dbdf.meta"), meta_text({"numCols": 2, "numRows": 2, "valueType": "f64"}).encode())
        np.save(m.m("dense_f64_0x4.dbdf", "data.npy"), np.zeros((0, 3)))
        eq(decode(m, "dense_f64_0x4.dbdf")["header"]["cols"], 3)
        eq(m.read("dense_f64_0x4.dbdf.meta"), meta_text({"numCols": 3, "numRows": 0, "valueType": "f64"}).encode())
        check_dbdf(m, "dense_f64_0x4.dbdf")
        # no sidecar: none appears
        c = np.arange(6, dtype=np.int32).reshape(6, 1) - 3
        np.save(m.m("aig.dbdf", "data.npy"), c)
        eq(decode(m, "aig.dbdf")["matrix"], c.tolist())
        check(not os.path.exists(m.s("aig.dbdf.meta")), "a sidecar appeared")
        check(not os.path.exists(m.m("aig.dbdf.meta")), "a sidecar appeared in the mount")
        check_dbdf(m, "aig.dbdf")
        # a hand-written, pretty-printed sidecar is rewritten as DAPHNE writes it
        with open(m.s("dense_f64_0x4.dbdf.meta"), "w") as f:
            f.write('{\n  "numRows": 0,\n  "numCols": 3,\n  "valueType": "f64",\n  "numNonZeros": 0\n}\n')
        d = np.array([[0.0, 1.0, 2.0], [3.0, 0.0, 5.0]])
        np.save(m.m("dense_f64_0x4.dbdf", "data.npy"), d)
        eq(m.read("dense_f64_0x4.dbdf.meta"),
           meta_text({"numCols": 3, "numNonZeros": 4, "numRows": 2, "valueType": "f64"}).encode(),
           "a pretty-printed sidecar after a reshape")
        eq(m.errors(), "", ".modelfs/errors after good edits")
        # another dtype, a 1-D or 3-D array, a CSR matrix: refused
        meta = m.read("dense_f64_3x4.dbdf.meta")

        expect_refused(m, "dense_f64_3x4.dbdf/data.npy", None, m.s("dense_f64_3x4.dbdf"),
                       writer=npy_saver(np.zeros((2, 5), np.float32)))
        expect_refused(m, "dense_f64_3x4.dbdf/data.npy", None, m.s("dense_f64_3x4.dbdf"),
                       writer=npy_saver(np.zeros((2, 2, 2))))
        expect_refused(m, "csr_f64_6x5.dbdf/data.npy", None, m.s("csr_f64_6x5.dbdf"),
                       writer=npy_saver(np.zeros((5, 6))))
        eq(m.read("dense_f64_3x4.dbdf.meta"), meta, "sidecar after refused reshapes")


def test_spec_and_daphne01_edits():
    with Mount([(BUILT, "b")]) as m:
        def edit(rel, cmd, change):
            before = decode(m, rel)
            m.sh(cmd)
            want = copy.deepcopy(before)
            change(want["matrix"])
            got = decode(m, rel)
            same_structure(got, want, "%s after: %s" % (rel, cmd))
            check_dbdf(m, rel)
            eq(got["dialect"], before["dialect"], "dialect of " + rel)

        def put(i, j, v):
            def change(mat):
                mat[i][j] = v
            return change
        edit("b/spec_multi_dense.dbdf", "sed -i '3s/^0 13 /0 130 /' b/spec_multi_dense.dbdf/values.txt", put(2, 1, 130.0))
        edit("b/spec_multi_dense.dbdf", "sed -i 's/^3 1 18$/3 1 -18.5/' b/spec_multi_dense.dbdf/blocks/3/matrix.mtx",
             put(4, 5, -18.5))
        edit("b/spec_multi_dense.dbdf", "sed -i 's/^1 1 17$/1 1 0.25/' b/spec_multi_dense.dbdf/blocks/2/matrix.mtx",
             put(2, 3, 0.25))
        edit("b/spec_multi_dense.dbdf", "echo 1 2 3 4 5 6 6 5 4 3 2 1 > b/spec_multi_dense.dbdf/blocks/0/values.txt",
             lambda mat: mat.__setitem__(slice(0, 2), [[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]]))
        edit("b/spec_multi_csr.dbdf", "sed -i 's/^5 1 14$/5 1 1400/' b/spec_multi_csr.dbdf/matrix.mtx", put(4, 0, 1400.0))
        edit("b/spec_vt4.dbdf", "echo 18446744073709551615 0 1 2 3 4 > b/spec_vt4.dbdf/values.txt",
             lambda mat: mat.__setitem__(slice(0, 2), [[18446744073709551615, 0, 1], [2, 3, 4]]))
        edit("b/spec_vt6.dbdf", "sed -i 's/^-32768 /-1234 /' b/spec_vt6.dbdf/values.txt", put(0, 0, -1234))
        edit("b/spec_vt9.dbdf", "sed -i 's/1e+30/3.5/' b/spec_vt9.dbdf/values.txt", put(1, 1, 3.5))
        edit("b/spec_convert.dbdf", "echo 254 0 -32768 32767 > b/spec_convert.dbdf/values.txt",
             lambda mat: mat.__setitem__(slice(0, 2), [[254.0, 0.0], [-32768.0, 32767.0]]))
        edit("b/daphne01_csr.dbdf", "sed -i 's/^3 3 9$/3 3 -99/' b/daphne01_csr.dbdf/matrix.mtx", put(2, 2, -99))
        edit("b/daphne01_coo.dbdf", "sed -i 's/0.5/0.75/' b/daphne01_coo.dbdf/values.txt", put(2, 1, 0.75))
        # each block keeps its own type: 256 is no uint8, 2.5 no integer
        expect_refused(m, "b/spec_convert.dbdf/values.txt", "256 0\n0 0\n", m.s("b/spec_convert.dbdf"), errno.ERANGE)
        expect_refused(m, "b/spec_convert.dbdf/values.txt", "1 0\n0 32768\n", m.s("b/spec_convert.dbdf"), errno.ERANGE)
        e = expect_refused(m, "b/spec_convert.dbdf/values.txt", "2.5 0\n0 0\n", m.s("b/spec_convert.dbdf"),
                           writer=lambda p: refused_errno(p, "2.5 0\n0 0\n"))
        check(e, "no error line")
        # sparse blocks keep their pattern
        expect_refused(m, "b/spec_multi_dense.dbdf/values.txt",
                       m.text("b/spec_multi_dense.dbdf/values.txt").replace("\n0 0 0 0 0 0\n", "\n1 0 0 0 0 0\n"),
                       m.s("b/spec_multi_dense.dbdf"))
        expect_refused(m, "b/daphne01_coo.dbdf/values.txt", "1 0 -1\n0 0 0\n0 0.75 0\n", m.s("b/daphne01_coo.dbdf"))


def refused_errno(path, text):
    """Writes text, expecting a refusal; EINVAL and ERANGE both count as the
    right answer for a value no integer type can hold."""
    try:
        with open(path, "w") as f:
            f.write(text)
    except OSError as e:
        return errno.EINVAL if e.errno in (errno.EINVAL, errno.ERANGE) else e.errno
    return 0


def test_truncated_pass_through():
    good = [GEN + "/dense_f64_3x4.dbdf", GEN + "/dense_f64_3x4.dbdf.meta", GEN + "/frame_mixed_4x8.dbdf",
            GEN + "/frame_mixed_4x8.dbdf.meta"]
    with Mount(good) as m:
        cuts = {"dense_hdr.dbdf": (GEN + "/dense_f64_3x4.dbdf", 10),
                "dense_cut.dbdf": (GEN + "/dense_f64_3x4.dbdf", 100),
                "dense_one_short.dbdf": (GEN + "/dense_f64_3x4.dbdf", 140),
                "csr_cut.dbdf": (GEN + "/csr_f64_6x5.dbdf", 150),
                "frame_cut.dbdf": (GEN + "/frame_mixed_4x8.dbdf", 200),
                "spec_cut.dbdf": (BUILT + "/spec_multi_dense.dbdf", 300),
                "v01_cut.dbdf": (BUILT + "/daphne01_csr.dbdf", 120)}
        for name, (rel, n) in cuts.items():
            with open(data(rel), "rb") as f:
                blob = f.read()[:n]
            with open(m.s(name), "wb") as f:
                f.write(blob)
        # one with a longer tail, one with its sidecar beside it
        with open(m.s("dense_long.dbdf"), "wb") as f:
            f.write(open(data(GEN + "/dense_f64_3x4.dbdf"), "rb").read() + b"\0\0")
        shutil.copyfile(data(GEN + "/frame_mixed_4x8.dbdf.meta"), m.s("frame_cut.dbdf.meta"))
        bad = sorted(list(cuts) + ["dense_long.dbdf"])
        names = os.listdir(m.mnt)
        for name in bad:
            check(name in names, name + " not listed")
            p = m.m(name)
            settle(p)
            check(os.path.isfile(p), name + " is not a plain file")
            eq(m.read(name), open(m.s(name), "rb").read(), "bytes of " + name)
        eq(m.read("frame_cut.dbdf.meta"), open(m.s("frame_cut.dbdf.meta"), "rb").read())
        errs = error_lines(m)
        for name in bad:
            eq(len([ln for ln in errs if (" %s: " % name) in ln]), 1, "error lines for %s: %r" % (name, errs))
        eq(len(errs), len(bad), "error lines: %r" % errs)
        # the good files are undisturbed
        check_dbdf(m, "dense_f64_3x4.dbdf")
        check_dbdf(m, "frame_mixed_4x8.dbdf")
        m.sh("sed -i 's/^0 1.5 /2 1.5 /' dense_f64_3x4.dbdf/values.txt")
        eq(decode(m, "dense_f64_3x4.dbdf")["matrix"][0][0], 2.0)


def test_repaired_file_becomes_model():
    """A broken file stays a writable plain file; written whole again
    through the mount, it shows as a model once closed."""
    good = open(data(GEN + "/dense_f64_3x4.dbdf"), "rb").read()
    with Mount([GEN + "/dense_f64_3x4.dbdf.meta"]) as m:
        names = ["fixed%d.dbdf" % i for i in range(6)]
        for n in names:
            with open(m.s(n), "wb") as f:
                f.write(good[:140])
        late = []
        for n in names:
            check(os.path.isfile(m.m(n)), n + " is not a plain file")
            eq(m.read(n), good[:140])
            write_ok(m.m(n), good)
            if not os.path.isdir(m.m(n)):
                late.append(n)
        deadline = time.time() + 5
        while not all(os.path.isdir(m.m(n)) for n in names) and time.time() < deadline:
            time.sleep(0.02)
        for n in names:
            check(os.path.isdir(m.m(n)), "a repaired file is not shown as a model: " + n)
            eq(open(m.s(n), "rb").read(), good, "source of " + n)
        check_dbdf(m, names[0])
        check(not late, "BUG: a broken file rewritten whole through the mount is still a plain file right "
              "after close() returned (%d of %d times); it becomes a model directory a moment later"
              % (len(late), len(names)))


def test_bad_input_refused():
    files = [GEN + "/dense_si8_3x4.dbdf", GEN + "/dense_si8_3x4.dbdf.meta",
             GEN + "/dense_ui64_3x4.dbdf", GEN + "/dense_ui64_3x4.dbdf.meta",
             GEN + "/dense_f32_3x4.dbdf", GEN + "/dense_f32_3x4.dbdf.meta"]
    with Mount(files) as m:
        metas = {f: m.read(f) for f in os.listdir(m.src) if f.endswith(".meta")}
        si8, ui64, f32 = (m.s(f) for f in ("dense_si8_3x4.dbdf", "dense_ui64_3x4.dbdf", "dense_f32_3x4.dbdf"))
        expect_refused(m, "dense_si8_3x4.dbdf/values.txt", "1 2 3\n", si8)                      # too few
        expect_refused(m, "dense_si8_3x4.dbdf/values.txt", " ".join(["1"] * 13) + "\n", si8)   # too many
        expect_refused(m, "dense_si8_3x4.dbdf/values.txt", " ".join(["1"] * 11) + " one\n", si8)
        expect_refused(m, "dense_si8_3x4.dbdf/values.txt", " ".join(["1"] * 11) + " 128\n", si8, errno.ERANGE)
        expect_refused(m, "dense_si8_3x4.dbdf/values.txt", "-129 " + " ".join(["1"] * 11) + "\n", si8, errno.ERANGE)
        expect_refused(m, "dense_ui64_3x4.dbdf/values.txt", " ".join(["1"] * 11) + " 18446744073709551616\n",
                       ui64, errno.ERANGE)
        expect_refused(m, "dense_ui64_3x4.dbdf/values.txt", " ".join(["1"] * 11) + " -1\n", ui64, errno.ERANGE)
        expect_refused(m, "dense_f32_3x4.dbdf/values.txt", " ".join(["1"] * 11) + " 1e39\n", f32, errno.ERANGE)
        expect_refused(m, "dense_f32_3x4.dbdf/values.txt", " ".join(["1"] * 11) + " 1..5\n", f32)
        expect_refused(m, "dense_f32_3x4.dbdf/data", b"\0" * 47, f32)
        expect_refused(m, "dense_f32_3x4.dbdf/blocks/0/values.txt", "1 2\n", f32)
        for f, b in metas.items():
            eq(m.read(f), b, f + " after refused writes")
        # the same values in other words change nothing on disk
        text = m.text("dense_f32_3x4.dbdf", "values.txt")
        expect_unchanged_on_disk(f32, lambda: write_ok(m.m("dense_f32_3x4.dbdf", "values.txt"),
                                                       text.replace(" ", ",\t").replace("1.5", "15e-1")))
        for rel in ("dense_si8_3x4.dbdf", "dense_ui64_3x4.dbdf", "dense_f32_3x4.dbdf"):
            check_dbdf(m, rel)


if __name__ == "__main__":
    run([test_read_generated, test_read_built, test_frame_csv_and_labels, test_large_text_views,
         test_outside_rewrites_while_browsing, test_dense_edits, test_csr_edits,
         test_frame_column_edit, test_dense_reshape_numpy, test_spec_and_daphne01_edits,
         test_truncated_pass_through, test_repaired_file_becomes_model, test_bad_input_refused])
