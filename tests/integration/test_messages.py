"""Messages people can act on: every refused write and every unreadable file
gives exactly one line in .modelfs/errors and in the log, naming the model
file and the path inside it, and saying what was expected and what was
found, with the numbers (wrong count, unparsable number, out-of-range value,
wrong .npy dtype, data resized, bad PLearn option text, a MatrixMarket
pattern that is not the matrix's, truncated and corrupt files), for each
format. A refusal is one line whether write(), close() or fsync() reports
it."""
import errno
import io
import os
import re

import numpy as np

from harness import Mount, check, data, eq, run, settle

PV = "tensor_2x3.tensor"                       # primitiv float32 2 x 3
PVP = "param_adam_2x3.param"                   # primitiv parameter
OPT = "mlp_adam_2steps.optimizer"              # primitiv optimizer settings
TSM = "convnet_small.tsm"                      # TenniS
TW = TSM + "/nodes/0/params/value"             # float32 4 x 3 x 3 x 3
TI = TSM + "/nodes/2/params/padding"           # int32 4 x 2
DD = "dense_f32_3x4.dbdf"                      # DAPHNE dense float32 3 x 4
DU = "dense_ui8_3x4.dbdf"                      # DAPHNE dense uint8 3 x 4
DC = "csr_f64_6x5.dbdf"                        # DAPHNE CSR float64 6 x 5, 6 entries
LR = "LinearRegressor.final_learner.psave"     # PLearn object (ascii)
PM = "linear_4x_2y.pmat"                       # PLearn float64 200 x 6

FILES = [
    "primitiv/" + PV, "primitiv/" + PVP, "primitiv/" + OPT,
    "tennis/" + TSM,
    "daphne/generated/" + DD, "daphne/generated/" + DD + ".meta",
    "daphne/generated/" + DU, "daphne/generated/" + DU + ".meta",
    "daphne/generated/" + DC, "daphne/generated/" + DC + ".meta",
    "plearn/psave/learners/" + LR, "plearn/pmat/" + PM,
]

LINE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ (.+?): (.*)$")


def npy(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def write_view(path, content, how):
    """Write content to path the way `how` says and return the errno the
    refusal came with, and at which step: 'write' (write() itself fails),
    'close' (write, then close fails), 'fsync' (write, then fsync fails)."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    step = None
    code = 0
    try:
        try:
            os.write(fd, content)
        except OSError as e:
            step, code = "write", e.errno
        if step is None and how == "fsync":
            try:
                os.fsync(fd)
            except OSError as e:
                step, code = "fsync", e.errno
    finally:
        try:
            os.close(fd)
        except OSError as e:
            if step is None:
                step, code = "close", e.errno
            else:
                eq(e.errno, code, "close after a refused %s" % step)
    return step, code


def log_lines(m):
    with open(m.log, "rb") as f:
        return f.read().decode("utf-8", "surrogateescape").splitlines()


def one_new_line(m, before, before_log, where):
    """The single line .modelfs/errors gained since before (and the log
    likewise): (path, message)."""
    errs = m.errors().splitlines()
    new = errs[len(before):]
    eq(len(new), 1, "lines added to .modelfs/errors for %s: %r" % (where, new))
    mt = LINE.match(new[0])
    check(mt is not None, "not '<time> <path>: <message>': %r" % new[0])
    path, msg = mt.group(1), mt.group(2)
    logged = [ln for ln in log_lines(m)[len(before_log):] if (path + ": ") in ln]
    eq(len(logged), 1, "log lines for %s: %r" % (where, logged))
    check(logged[0].endswith(path + ": " + msg), "the log says otherwise: %r" % logged[0])
    check(msg and not msg.endswith(".") and (msg[0].islower() or msg[0] in "\"[(."),
          "not in the style of codecs/README.md: %r" % msg)
    return path, msg


def refused(m, view, content, code, words, how="close", step=None):
    """Write content to view (relative to the mount); it must be refused with
    code, at step (default: how), with exactly one line naming the view whose
    message contains every word, and not the model file's name again."""
    before, before_log = m.errors().splitlines(), log_lines(m)
    if isinstance(content, str):
        content = content.encode()
    got_step, got = write_view(m.m(view), content, how)
    eq(errno.errorcode.get(got, got), errno.errorcode[code], "errno writing to " + view)
    eq(got_step, step or how, "the step that failed for " + view)
    path, msg = one_new_line(m, before, before_log, view)
    eq(path, view, "the path of the line")
    for w in words:
        check(w in msg, "%s: %r does not say %r" % (view, msg, w))
    model = view.split("/")[0]
    check(model not in msg, "%s: the message repeats the path: %r" % (view, msg))
    return msg


def test_primitiv():
    with Mount(FILES[:3]) as m:
        v = PV + "/values.txt"
        refused(m, v, "1 2 3\n4 5\n", errno.EINVAL,
                ["expected 6 values for shape 2 3", "got 5"])
        refused(m, v, "1 2 3\n4 5 6\n7\n", errno.EINVAL,
                ["expected 6 values for shape 2 3", "value 7", "line 3"], how="write")
        refused(m, v, "1 2 3\n4 abc 6\n", errno.EINVAL,
                ['"abc" is not a number', "value 5", "[1, 1]", "line 2"], how="write")
        refused(m, v, "1 2 3\n4 5 1e39\n", errno.ERANGE,
                ['"1e39"', "out of range for float32", "3.4028235e+38", "value 6", "line 2"],
                how="write")
        # the same refusals found by close() and by fsync(): one line each
        refused(m, v, "1 2 3\n4 abc", errno.EINVAL, ['"abc" is not a number', "line 2"])
        refused(m, v, "1 2", errno.EINVAL, ["expected 6 values", "got 2"], how="fsync")
        # sed -i writes a scratch file and renames it over the view: one line too
        before, before_log = m.errors().splitlines(), log_lines(m)
        r = m.sh("sed -i 's/^/x/' %s" % v, check=False)
        check(r.returncode != 0, "sed -i of bad values succeeded")
        path, msg = one_new_line(m, before, before_log, "sed -i")
        eq(path, v)
        first = m.text(v).split()[0]
        eq(msg, '"x%s" is not a number (value 1 at [0, 0], line 1)' % first, "sed -i")
        refused(m, PV + "/data.npy", npy(np.zeros((2, 3))), errno.EINVAL,
                ["dtype <f8 (float64)", "expected <f4 (float32)"])
        refused(m, PV + "/data.npy", npy(np.zeros((2, 3), np.float32))[:-5], errno.EINVAL,
                ["truncated", "24 bytes of data", "shape 2 3", "at byte 128", "the file has 147"])
        refused(m, PV + "/data", b"\0" * 28, errno.EINVAL,
                ["must stay 24 bytes", "6 float32 values", "got 28"])
        refused(m, PVP + "/value/values.txt", "1 2 3 4 5 6 7\n", errno.EINVAL,
                ["expected 6 values for shape 2 3", "got at least 7"], how="write")
        refused(m, OPT + "/float_configs/Adam.alpha", "fast\n", errno.EINVAL,
                ['"fast" is not a number'], how="write")
        refused(m, OPT + "/uint_configs/Optimizer.epoch", "-1\n", errno.ERANGE,
                ['"-1" is out of range', "0 to 4294967295"], how="write")


def test_tennis():
    with Mount(FILES[3:4]) as m:
        v = TW + "/values.txt"
        text = m.text(v).split()
        refused(m, v, " ".join(text[:107]) + "\n", errno.EINVAL,
                ["expected 108 values for shape 4 3 3 3", "got 107"])
        bad = text[:40] + ["0x1p3"] + text[41:]
        refused(m, v, " ".join(bad) + "\n", errno.EINVAL,
                ['"0x1p3" is not a number', "value 41", "[1, 1, 1, 1]", "line 1"], how="write")
        refused(m, TI + "/values.txt", "1 1\n1 1\n3000000000 1\n1 1\n", errno.ERANGE,
                ['"3000000000" is out of range for int32', "-2147483648 to 2147483647",
                 "value 5", "[2, 0]", "line 3"], how="write")
        refused(m, TW + "/data.npy", npy(np.array(["abc"])), errno.EINVAL,
                ['.npy dtype "<U3" is not supported', "little-endian number"])
        refused(m, TW + "/data", b"\0" * 400, errno.EINVAL,
                ["must stay 432 bytes", "108 float32 values", "got 400"])
        refused(m, TSM + "/header/fake", "twelve\n", errno.EINVAL,
                ['"twelve" is not a number', "0 to 4294967295"], how="write")


def test_daphne():
    with Mount(FILES[4:10]) as m:
        refused(m, DD + "/values.txt", "1 2 3 4\n5 6 7 8\n9 10 11\n", errno.EINVAL,
                ["expected 12 values for shape 3 4", "got 11"])
        refused(m, DU + "/values.txt", "1 2 3 4\n5 6 300 8\n", errno.ERANGE,
                ['"300" is out of range for uint8', "0 to 255", "value 7", "[1, 2]", "line 2"],
                how="write")
        refused(m, DD + "/data.npy", npy(np.zeros((3, 4))), errno.EINVAL,
                ["dtype <f8 (float64)", "expected <f4 (float32)"])
        refused(m, DD + "/data", b"\0" * 44, errno.EINVAL,
                ["must stay 48 bytes", "12 float32 values", "got 44"])
        mtx = m.text(DC + "/matrix.mtx").splitlines()
        eq(mtx[1], "6 5 6", "size line")
        # an entry that is not in the pattern
        other = mtx[:-1] + ["1 1 6"]
        refused(m, DC + "/matrix.mtx", "\n".join(other) + "\n", errno.EINVAL,
                ["line 8", "(1, 1) is not one of the 6 stored entries", "sparsity pattern"])
        # an entry short
        refused(m, DC + "/matrix.mtx", "\n".join(mtx[:-1]) + "\n", errno.EINVAL,
                ["expected 6 entries, got 5", "first missing is (5, 5)"])
        # another size line
        refused(m, DC + "/matrix.mtx", "\n".join([mtx[0], "6 5 7"] + mtx[2:]) + "\n",
                errno.EINVAL, ["line 2", "says 6 x 5 with 7 entries", "expected 6 x 5 with 6"])
        # dense with a value where the pattern has no entry
        a = np.load(m.m(DC, "data.npy"))
        a[0, 0] = 2.5
        refused(m, DC + "/data.npy", npy(a), errno.EINVAL,
                ["[0, 0] is 2.5, expected 0", "stores no entry there"])
        refused(m, DC + "/data.npy", npy(np.zeros((3, 5))), errno.EINVAL,
                ["shape 3 5", "expected 6 5", "sparsity pattern"])


def test_plearn():
    with Mount(FILES[10:]) as m:
        refused(m, LR + "/AIC", "abc\n", errno.EINVAL,
                ['expected a number (it was "6.23533365254733773")', 'found "abc"'], how="write")
        refused(m, LR + "/save_trainingset_prefix", '"never closed\n', errno.EINVAL,
                ["string at offset 0 is never closed", "expected '\"'", "found the end"],
                how="write")
        refused(m, LR + "/save_trainingset_prefix", "1 ; stage = 5\n", errno.EINVAL,
                ["unexpected ';' at offset 2"], how="write")
        refused(m, LR + "/weights/values.txt", "1 2\n3 x\n5 6\n", errno.EINVAL,
                ['"x" is not a number', "value 4", "[1, 1]", "line 2"], how="write")
        refused(m, LR + "/weights/values.txt", "1 2\n3 4\n5 1e999\n", errno.ERANGE,
                ['"1e999" is out of range for float64', "value 6", "line 3"], how="write")
        refused(m, LR + "/weights/data.npy", npy(np.zeros((3, 2), np.float32)), errno.EINVAL,
                ["dtype <f4 (float32)", "expected <f8 (float64)"])
        refused(m, PM + "/values.txt", "1 2 3\n", errno.EINVAL,
                ["expected 1200 values for shape 200 6", "got 3"])
        refused(m, PM + "/data", b"\0" * 8, errno.EINVAL,
                ["must stay 9600 bytes", "1200 float64 values", "got 8"])
        refused(m, PM + "/data.npy", npy(np.zeros((4, 3), np.float32)), errno.EINVAL,
                ["dtype <f4 (float32)", "expected <f8 (float64)"])


def test_max_buffer():
    """Writing past -o max_buffer refuses the whole change: one line."""
    with Mount(["primitiv/tensor_bin32_128x128.tensor"], opts=["-o", "max_buffer=64k"]) as m:
        view = "tensor_bin32_128x128.tensor/values.txt"
        before, before_log = m.errors().splitlines(), log_lines(m)
        fd = os.open(m.m(view), os.O_WRONLY | os.O_TRUNC)
        code = None
        for k in range(100):
            try:
                os.write(fd, b"1.00000 " * 512)
            except OSError as e:
                code = e.errno
                break
        if code != errno.EFBIG:
            os.close(fd)
        eq(code, errno.EFBIG, "errno past max_buffer")
        try:
            os.write(fd, b"1 ")
            raise AssertionError("a write after the refusal succeeded")
        except OSError as e:
            eq(e.errno, errno.EFBIG)
        try:
            os.close(fd)
            raise AssertionError("close after the refusal succeeded")
        except OSError as e:
            eq(e.errno, errno.EFBIG)
        path, msg = one_new_line(m, before, before_log, view)
        eq(path, view)
        check("expected at most 65536 bytes" in msg and "max_buffer" in msg
              and "got a write up to byte 69632" in msg, msg)


def test_unreadable_files():
    """Files that look like models and do not parse: one line each, naming
    the file and saying where and what was expected and found."""
    def cut(rel, n):
        with open(data(rel), "rb") as f:
            return f.read()[:n]

    bad = {
        "cut.model": (cut("primitiv/mlp_adam_2steps.model", 300),
                      ["parameter 2 of 7", "'w'", "tensor data at byte 228", "declares 256 bytes",
                       "69 left"]),
        "out77.tsm": (cut("tennis/malformed/output_index_out_of_range.tsm", 1 << 20),
                      ["module output 0 at offset 140", "node index 77 is beyond the 6 nodes"]),
        "cut.tsm": (cut("tennis/malformed/truncated_at_1000.tsm", 1 << 20),
                    ["node 2 param 5", "name needs 13 bytes at offset 997", "3 left"]),
        "cut.dbdf": (cut("daphne/generated/dense_f32_3x4.dbdf", 60),
                     ["the file has 60 bytes", "a 3 x 4 float32 matrix needs 93 bytes"]),
        "cut.pmat": (cut("plearn/pmat/linear_4x_2y.pmat", 100),
                     ["truncated", "200 x 6 float64 values", "9600 bytes of data at byte 64",
                      "the file has 100"]),
        "cut.psave": (cut("plearn/psave/learners/" + LR, 300),
                      ["object LinearRegressor at offset 5 is never closed", "expected ')'",
                       "found the end at offset 300"]),
    }
    m = Mount([])
    for name, (blob, _) in bad.items():
        with open(m.s(name), "wb") as f:
            f.write(blob)
    with m:
        before, before_log = m.errors().splitlines(), log_lines(m)
        for _ in range(3):  # looked at again and again: still one line each
            names = os.listdir(m.mnt)
            for name in bad:
                check(name in names, name)
                settle(m.m(name))
                check(os.path.isfile(m.m(name)), name + " is not a plain file")
                os.stat(m.m(name))
        errs = m.errors().splitlines()[len(before):]
        eq(len(errs), len(bad), "lines: %r" % errs)
        logged = log_lines(m)[len(before_log):]
        for name, (_, words) in bad.items():
            mine = [ln for ln in errs if (" %s: " % name) in ln]
            eq(len(mine), 1, "lines for %s: %r" % (name, errs))
            msg = mine[0].split(" %s: " % name, 1)[1]
            for w in words:
                check(w in msg, "%s: %r does not say %r" % (name, msg, w))
            eq(len([ln for ln in logged if ln.endswith(" %s: %s" % (name, msg))]), 1,
               "log lines for " + name)


if __name__ == "__main__":
    run([test_primitiv, test_tennis, test_daphne, test_plearn, test_max_buffer,
         test_unreadable_files])
