"""Editing with ordinary tools (issue "Editing"): each tool edits a primitiv
parameter and an optimizer setting through the mount; an independent decode
of the source (python3-msgpack) must show exactly the intended change, with
every other byte as it was. Bad input fails the command and leaves the file
byte-identical, with a line in .modelfs/errors."""
import os
import struct
import subprocess

import numpy as np

from harness import Mount, check, eq, run, sha
from primitiv_decode import decode

PARAM = "primitiv/param_adam_2x3.param"
OPT = "primitiv/mlp_adam_2steps.optimizer"
P = "param_adam_2x3.param"
O = "mlp_adam_2steps.optimizer"
VALUES = P + "/value/values.txt"
ORIG = [0.49800005555152893, 10.49799919128418, 1.5019999742507935, 11.49799919128418,
        2.5019999742507935, 12.49799919128418]  # column-major payload order


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def changed_bytes(a, b):
    """Offsets where two byte strings of equal length differ."""
    eq(len(a), len(b), "file size")
    return [i for i in range(len(a)) if a[i] != b[i]]


def check_param(m, before, values_colmajor, dims=(2, 3)):
    d = decode(m.s(P))
    eq(d["value"]["dims"], list(dims), "dims")
    eq(d["value"]["values"], [f32(v) for v in values_colmajor], "values")
    eq(sorted(d["stats"]), ["Adam.m1", "Adam.m2"], "stats kept")
    if tuple(dims) == (2, 3):
        after = open(m.s(P), "rb").read()
        payload = range(33, 33 + 24)  # the value tensor's float32 payload
        for i in changed_bytes(before, after):
            check(i in payload, "byte %d outside the edited payload changed" % i)


def check_opt(m, before, key, value, kind="float"):
    d = decode(m.s(O))
    eq(list(d["uint_configs"]), list(decode_orig_opt()["uint_configs"]), "uint key order")
    eq(list(d["float_configs"]), list(decode_orig_opt()["float_configs"]), "float key order")
    got = d["%s_configs" % kind][key]
    eq(got, f32(value) if kind == "float" else value, key)
    after = open(m.s(O), "rb").read()
    diff = changed_bytes(before, after)
    check(0 < len(diff) <= 4, "changed bytes %r" % diff)


_orig_opt = None


def decode_orig_opt():
    global _orig_opt
    if _orig_opt is None:
        from harness import data
        _orig_opt = decode(data(OPT))
    return _orig_opt


def tool_test(name, param_cmd, expect_param, opt_cmd, opt_key, opt_value, kind="float",
              dims=(2, 3)):
    """Run one tool on the parameter and on the optimizer, then check."""
    with Mount([PARAM, OPT]) as m:
        pb, ob = open(m.s(P), "rb").read(), open(m.s(O), "rb").read()
        if callable(param_cmd):
            param_cmd(m)
        else:
            m.sh(param_cmd)
        if callable(opt_cmd):
            opt_cmd(m)
        else:
            m.sh(opt_cmd)
        m.stop()
        check_param(m, pb, expect_param, dims)
        check_opt(m, ob, opt_key, opt_value, kind)
        eq(open(m.err).read().count("rror"), 0, name + ": errors in the log")
        # a fresh mount shows the change
        m.start()
        shown = np.load(m.m(P, "value", "data.npy"))
        eq(list(shown.ravel(order="F")), [f32(v) for v in expect_param], name + ": fresh mount")
        text = m.text(O, "%s_configs" % kind, opt_key).strip()
        eq(f32(float(text)) if kind == "float" else int(text),
           f32(opt_value) if kind == "float" else opt_value, name + ": fresh mount config")


NEW = [1.25, 2.5, 3.75, -4.0, 5.5, 6.0]            # row-major [[1.25 2.5 3.75] [-4 5.5 6]]
NEW_CM = [1.25, -4.0, 2.5, 5.5, 3.75, 6.0]          # column-major payload


def test_echo():
    tool_test("echo", "echo '1.25 2.5 3.75' '-4 5.5 6' > %s" % VALUES, NEW_CM,
              "echo 0.002 > %s/float_configs/Adam.alpha" % O, "Adam.alpha", 0.002)


def test_shell_redirect():
    def param(m):
        with open(os.path.join(m.tmp, "new.txt"), "w") as f:
            f.write("1.25 2.5 3.75\n-4 5.5 6\n")
        m.sh("cat %s/new.txt > %s" % (m.tmp, VALUES))
    tool_test("redirect", param, NEW_CM,
              "cat < /dev/null > /dev/null; v=7; { echo $v; } > %s/uint_configs/Optimizer.epoch" % O,
              "Optimizer.epoch", 7, kind="uint")


def test_printf():
    tool_test("printf", "printf '%%s %%s %%s\\n' 1.25 2.5 3.75 -4 5.5 6 > %s" % VALUES, NEW_CM,
              "printf '0.95\\n' > %s/float_configs/Adam.beta1" % O, "Adam.beta1", 0.95)


def test_sed_inplace():
    expect = list(ORIG)
    expect[0] = 100.5  # [0,0]
    tool_test("sed -i", "sed -i 's/^0.49800006 /100.5 /' %s" % VALUES, expect,
              "sed -i 's/0.001/0.003/' %s/float_configs/Adam.alpha" % O, "Adam.alpha", 0.003)


def test_vim_ex():
    expect = list(ORIG)
    expect[5] = 42.0  # [1,2], last in column-major order
    tool_test("vim -Es", "vim -Es -c '2s/12.497999$/42/' -c wq %s < /dev/null" % VALUES, expect,
              "vim -Es -c 's/0.999/0.5/' -c wq %s/float_configs/Adam.beta2 < /dev/null" % O,
              "Adam.beta2", 0.5)


def test_vim_defaults():
    """vim with its default settings: swap file, write backup, then write."""
    expect = list(ORIG)
    expect[1] = -1.0  # [1,0]
    def vim(cmd, path):
        def go(m):
            r = subprocess.run(["script", "-qec", "vim -N -u DEFAULTS -i NONE -c %s -c wq %s"
                                % (cmd, path), "/dev/null"], cwd=m.mnt, capture_output=True,
                               timeout=60)
            eq(r.returncode, 0, "vim exit status")
            check(not any(n.endswith(".swp") for n in os.listdir(m.m(os.path.dirname(path)))),
                  "swap file left behind")
        return go
    tool_test("vim", vim("'2s/^10.497999 /-1 /'", VALUES), expect,
              vim("'s/.*/12/'", O + "/uint_configs/Optimizer.epoch"), "Optimizer.epoch", 12,
              kind="uint")


def test_cp():
    def param(m):
        with open(os.path.join(m.tmp, "v"), "w") as f:
            f.write("1.25 2.5 3.75\n-4 5.5 6\n")
        m.sh("cp %s/v %s" % (m.tmp, VALUES))
    def opt(m):
        with open(os.path.join(m.tmp, "c"), "w") as f:
            f.write("1e-7")
        m.sh("cp %s/c %s/float_configs/Adam.eps" % (m.tmp, O))
    tool_test("cp", param, NEW_CM, opt, "Adam.eps", 1e-7)


def test_python_open():
    def param(m):
        with open(m.m(VALUES), "w") as f:
            f.write("1.25 2.5 3.75\n")
            f.write("-4 5.5 6\n")
    def opt(m):
        with open(m.m(O, "float_configs", "Optimizer.lr_scale"), "w") as f:
            f.write("0.25\n")
    tool_test("python", param, NEW_CM, opt, "Optimizer.lr_scale", 0.25)


def test_numpy_save():
    def same_shape(m):
        a = np.load(m.m(P, "value", "data.npy"))
        a[1, 1] = 9.0
        np.save(m.m(P, "value", "data.npy"), a)
    expect = list(ORIG)
    expect[3] = 9.0
    tool_test("numpy.save", same_shape, expect,
              "echo 3 > %s/uint_configs/Optimizer.epoch" % O, "Optimizer.epoch", 3, kind="uint")

    def reshape(m):
        np.save(m.m(P, "value", "data.npy"), np.arange(12, dtype=np.float32).reshape(3, 4))
        eq(m.text(P, "value", "shape"), "3 4\n")
    tool_test("numpy.save reshape", reshape,
              list(np.arange(12, dtype=np.float32).reshape(3, 4).ravel(order="F")),
              "echo 4 > %s/uint_configs/Optimizer.epoch" % O, "Optimizer.epoch", 4, kind="uint",
              dims=(3, 4))


def test_dd_notrunc():
    def param(m):
        with open(os.path.join(m.tmp, "four"), "wb") as f:
            f.write(struct.pack("<f", -2.5))
        # element 2 in storage order (column-major) is [0,1]
        m.sh("dd if=%s/four of=%s/value/data bs=4 seek=2 conv=notrunc status=none" % (m.tmp, P))
    expect = list(ORIG)
    expect[2] = -2.5
    def opt(m):
        with open(os.path.join(m.tmp, "e"), "w") as f:
            f.write("77\n")
        m.sh("dd if=%s/e of=%s/uint_configs/Optimizer.epoch status=none" % (m.tmp, O))
    tool_test("dd", param, expect, opt, "Optimizer.epoch", 77, kind="uint")


def test_truncate_then_write():
    tool_test("truncate", "truncate -s 0 %s && echo 1.25 2.5 3.75 -4 5.5 6 >> %s" % (VALUES, VALUES),
              NEW_CM,
              "truncate -s 0 %s/float_configs/Adam.alpha && printf 0.125 >> %s/float_configs/Adam.alpha"
              % (O, O), "Adam.alpha", 0.125)


def test_truncate_then_append_before_release():
    """The kernel sends RELEASE after close returns, and only once no
    process holds the file: the truncation must count for the next writer
    as soon as the truncating file is closed (flushed)."""
    def param(m):
        fd = os.open(m.m(VALUES), os.O_WRONLY)
        os.ftruncate(fd, 0)
        keep = os.dup(fd)  # closing fd flushes; keep holds off the release
        os.close(fd)
        m.sh("echo 1.25 2.5 3.75 -4 5.5 6 >> %s" % VALUES)
        os.close(keep)
    def opt(m):
        m.sh("echo 0.125 > %s/float_configs/Adam.alpha" % O)
        # an unchanged rewrite after a truncation leaves nothing behind
        m.sh("echo 0.125 > %s/float_configs/Adam.alpha" % O)
        m.sh("printf '' >> %s/float_configs/Adam.alpha" % O)
        eq(m.text(O, "float_configs", "Adam.alpha"), "0.125\n", "after an empty append")
    tool_test("truncate+dup", param, NEW_CM, opt, "Adam.alpha", 0.125)


def test_truncate_then_write_after_drop_caches():
    """The kernel may forget the inode between the truncation and the
    write (memory pressure; here drop_caches): the truncation still counts."""
    if os.geteuid() != 0:
        print("  (not root: drop_caches skipped)")
        return
    def drop():
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("2")
    def param(m):
        m.sh("truncate -s 0 %s" % VALUES)
        drop()
        m.sh("echo 1.25 2.5 3.75 -4 5.5 6 >> %s" % VALUES)
    def opt(m):
        m.sh("truncate -s 0 %s/float_configs/Adam.alpha" % O)
        drop()
        m.sh("printf 0.125 >> %s/float_configs/Adam.alpha" % O)
    tool_test("truncate+drop_caches", param, NEW_CM, opt, "Adam.alpha", 0.125)


def test_same_values_change_nothing():
    with Mount([PARAM, OPT]) as m:
        pt = os.stat(m.s(P)).st_mtime_ns
        before = sha(m.s(P))
        text = m.text(VALUES)
        m.sh("echo '%s' > %s" % (text.replace("\n", " "), VALUES))
        m.sh("cp %s %s/x && cp %s/x %s" % (VALUES, m.tmp, m.tmp, VALUES))
        eq(sha(m.s(P)), before, "same values rewrote the file")
        eq(os.stat(m.s(P)).st_mtime_ns, pt, "mtime changed")


def py_write(path, data, mode="w"):
    """Write and close; returns the errno of the failure, or 0."""
    try:
        with open(path, mode) as f:
            f.write(data)
        return 0
    except OSError as e:
        return e.errno


def test_bad_input_refused():
    import errno
    with Mount([PARAM, OPT]) as m:
        sums = (sha(m.s(P)), sha(m.s(O)))
        cases = [
            (VALUES, "1 2 3 4 5\n", errno.EINVAL),                # wrong count
            (VALUES, "1 2 3 4 5 6 7\n", errno.EINVAL),            # too many
            (VALUES, "1 2 3 x 5 6\n", errno.EINVAL),              # unparsable
            (VALUES, "1 2 3 1e39 5 6\n", errno.ERANGE),           # out of float32's range
            (O + "/float_configs/Adam.alpha", "1e39\n", errno.ERANGE),
            (O + "/uint_configs/Optimizer.epoch", "-1\n", errno.ERANGE),
            (O + "/uint_configs/Optimizer.epoch", "4294967296\n", errno.ERANGE),
            (O + "/uint_configs/Optimizer.epoch", "1.5\n", errno.EINVAL),
        ]
        lines = m.errors().count("\n")
        for path, text, want in cases:
            got = py_write(m.m(path), text)
            eq(got, want, "writing %r to %s" % (text, path))
            # the view shows the source's content again
            check(text.strip() not in m.text(path), "refused content still shown")
            lines += 1
            eq(m.errors().count("\n"), lines, "error lines after " + text)
        # shells: the write itself fails for values that are already wrong
        r = m.sh("echo 1 2 x 4 5 6 > %s" % VALUES, check=False)
        check(r.returncode != 0 and "Invalid argument" in r.stderr, r.stderr)
        r = m.sh("echo 1e39 > %s/float_configs/Adam.alpha" % O, check=False)
        check(r.returncode != 0 and "out of range" in r.stderr, r.stderr)
        # another dtype through data.npy; data resized
        try:
            np.save(m.m(P, "value", "data.npy"), np.zeros((2, 3), dtype=np.float64))
            raise AssertionError("float64 .npy accepted")
        except OSError as e:
            eq(e.errno, errno.EINVAL)
        eq(py_write(m.m(P, "value", "data"), b"\0" * 20, "wb"), errno.EINVAL, "data resized")
        eq(py_write(m.m(P, "value", "data"), b"\0" * 28, "wb"), errno.EINVAL, "data grown")
        # read-only files
        eq(py_write(m.m(P, "value", "shape"), "3 2\n"), errno.EACCES, "shape")
        eq(py_write(m.m(P, "version"), "0.2\n"), errno.EACCES, "version")
        eq((sha(m.s(P)), sha(m.s(O))), sums, "source changed")
        eq(m.text(VALUES), "0.49800006 1.502 2.5019999\n10.497999 11.497999 12.497999\n")
        err = m.errors()
        check("expected 6 values for shape 2 3, got 5" in err, err)
        check("out of range" in err, err)


def test_editor_scratch_files():
    """Swap, backup and temporary files live in the mount only; renaming one
    over a view writes the view."""
    with Mount([PARAM]) as m:
        d = m.m(P, "value")
        with open(os.path.join(d, ".values.txt.swp"), "wb") as f:
            f.write(b"x" * 5000)
        with open(os.path.join(d, "tmp123"), "w") as f:
            f.write("1.25 2.5 3.75\n-4 5.5 6\n")
        check(".values.txt.swp" in os.listdir(d), "scratch not listed")
        eq(os.path.getsize(os.path.join(d, ".values.txt.swp")), 5000)
        os.rename(os.path.join(d, "tmp123"), os.path.join(d, "values.txt"))
        check("tmp123" not in os.listdir(d))
        eq(m.text(VALUES), "1.25 2.5 3.75\n-4 5.5 6\n")
        os.unlink(os.path.join(d, ".values.txt.swp"))
        eq(sorted(os.listdir(d)), ["data", "data.npy", "dtype", "shape", "values.txt"])
        eq(sorted(os.listdir(m.src)), [P], "scratch files reached SOURCE")
        # renaming a view away leaves the view and makes a copy
        os.rename(os.path.join(d, "values.txt"), os.path.join(d, "values.txt~"))
        eq(m.text(P, "value", "values.txt~"), "1.25 2.5 3.75\n-4 5.5 6\n")
        eq(m.text(VALUES), "1.25 2.5 3.75\n-4 5.5 6\n")
        # views cannot be removed
        try:
            os.unlink(m.m(VALUES))
            raise AssertionError("unlink of a view succeeded")
        except PermissionError:
            pass
    with Mount([PARAM], opts=["-o", "max_scratch=64k"]) as m:
        try:
            with open(m.m(P, "value", "big"), "wb") as f:
                f.write(b"y" * 100000)
            raise AssertionError("scratch cap not enforced")
        except OSError as e:
            eq(e.errno, 28, "ENOSPC")


if __name__ == "__main__":
    run([test_echo, test_shell_redirect, test_printf, test_sed_inplace, test_vim_ex,
         test_vim_defaults, test_cp, test_python_open, test_numpy_save, test_dd_notrunc,
         test_truncate_then_write, test_truncate_then_append_before_release,
         test_truncate_then_write_after_drop_caches,
         test_same_values_change_nothing, test_bad_input_refused,
         test_editor_scratch_files])
