"""The mount itself: listing, exact sizes, find, numpy, pass-through files,
broken files, daemon mode, signals, read-only mounts, stable inodes, and
changes made to SOURCE from outside."""
import glob
import os
import shutil
import signal
import stat
import subprocess
import time

import numpy as np

from harness import DATA, BIN, Mount, check, eq, run, sha

PRIMITIV = sorted(os.path.relpath(p, DATA) for p in glob.glob(os.path.join(DATA, "primitiv", "*"))
                  if not p.endswith(".md"))


def walk_files(root):
    for dp, dn, fn in os.walk(root):
        for f in fn:
            yield os.path.join(dp, f)


def test_listing_and_sizes():
    with Mount(PRIMITIV) as m:
        names = sorted(os.listdir(m.mnt))
        check(".modelfs" in names, "no .modelfs")
        for f in PRIMITIV:
            b = os.path.basename(f)
            check(os.path.isdir(m.m(b)), b + " is not shown as a directory")
        # every file reads exactly its st_size bytes
        n = 0
        for p in walk_files(m.mnt):
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                continue
            with open(p, "rb") as f:
                got = f.read()
            eq(len(got), st.st_size, "size of " + p)
            n += 1
        check(n > 500, "only %d files" % n)
        r = m.sh("ls -lR . > /dev/null && find . | wc -l")
        check(int(r.stdout) > n)
        eq(m.text("tensor_2x3.tensor", "values.txt"), "0.5 1.5 2.5\n10.5 11.5 12.5\n")
        eq(m.text("tensor_2x3.tensor", "shape"), "2 3\n")
        eq(m.text("mlp_adam_2steps.optimizer", "uint_configs", "Optimizer.epoch"), "2\n")


def test_numpy_views():
    with Mount(PRIMITIV) as m:
        count = 0
        for p in walk_files(m.mnt):
            if not p.endswith("data.npy"):
                continue
            d = os.path.dirname(p)
            a = np.load(p)
            mm = np.load(p, mmap_mode="r")
            check(np.array_equal(a, mm, equal_nan=True), "mmap differs: " + p)
            shape = tuple(int(x) for x in open(os.path.join(d, "shape")).read().split())
            eq(a.shape, shape, "shape of " + p)
            vals = np.array(open(os.path.join(d, "values.txt")).read().split(), dtype=np.float32)
            check(np.array_equal(a.reshape(-1), vals, equal_nan=True), "values.txt differs from " + p)
            raw = open(os.path.join(d, "data"), "rb").read()
            order = "F" if a.flags.f_contiguous and a.ndim > 1 else "C"
            eq(a.tobytes(order=order), raw, "data vs data.npy " + p)
            count += 1
        check(count > 50, "only %d tensors" % count)
        del a, mm  # a memmap keeps the mount busy, as with any file system
        b = np.load(m.m("tensor_bin32_128x128.tensor", "data.npy"))
        eq(float(b[5, 1]), 66.5)
        eq(float(b[-1, -1]), 8191.5)
        v = np.load(m.m("tensor_vec3_batch2.tensor", "data.npy"))
        eq(v.shape, (3, 2))
        eq(v[:, 1].tolist(), [101.0, 102.0, 103.0])


def test_broken_files_pass_through():
    with Mount(PRIMITIV[:3]) as m0:
        pass
    good = "primitiv/param_adam_2x3.param"
    with Mount([good]) as m:
        blob = open(os.path.join(DATA, good), "rb").read()
        with open(m.s("truncated.param"), "wb") as f:
            f.write(blob[:40])
        with open(m.s("notes.txt"), "w") as f:
            f.write("hello\n")
        check(os.path.isfile(m.m("truncated.param")), "truncated file is not a plain file")
        eq(m.read("truncated.param"), blob[:40])
        eq(m.text("notes.txt"), "hello\n")
        errs = m.errors()
        check("truncated.param:" in errs, "no error line: " + errs)
        check(os.path.isdir(m.m("param_adam_2x3.param", "value")), "good model broken")
        eq(m.text("param_adam_2x3.param", "stats", "Adam.m1", "shape"), "2 3\n")


def test_plain_files_read_write():
    with Mount(["primitiv/param_scalar.param"]) as m:
        with open(m.m("new.txt"), "w") as f:
            f.write("abc")
        eq(open(m.s("new.txt")).read(), "abc")
        os.mkdir(m.m("sub"))
        os.rename(m.m("new.txt"), m.m("sub", "moved.txt"))
        eq(open(m.s("sub", "moved.txt")).read(), "abc")
        with open(m.m("sub", "moved.txt"), "a") as f:
            f.write("def")
        eq(open(m.s("sub", "moved.txt")).read(), "abcdef")
        os.truncate(m.m("sub", "moved.txt"), 2)
        eq(m.text("sub", "moved.txt"), "ab")
        os.symlink("moved.txt", m.m("sub", "link"))
        eq(os.readlink(m.s("sub", "link")), "moved.txt")
        os.unlink(m.m("sub", "moved.txt"))
        os.unlink(m.m("sub", "link"))
        os.rmdir(m.m("sub"))
        check(not os.path.exists(m.s("sub")))
        # a model copied in through the mount shows as a model once closed
        shutil.copyfile(os.path.join(DATA, "primitiv/param_2x3_nostats.param"), m.m("copied.param"))
        check(os.path.isdir(m.m("copied.param")), "copied model is not a directory")
        eq(m.text("copied.param", "value", "values.txt"), "0.5 1.5 2.5\n10.5 11.5 12.5\n")
        # sub-directories of SOURCE are mirrored
        os.makedirs(m.s("deep", "er"))
        shutil.copyfile(os.path.join(DATA, "primitiv/param_scalar.param"), m.s("deep", "er", "s.param"))
        eq(m.text("deep", "er", "s.param", "value", "values.txt"), "3.5\n")


def daemon_of(mnt):
    """The pid of the process serving mnt (its command line names it)."""
    for pid in os.listdir("/proc"):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                args = f.read().split(b"\0")
        except (OSError, ValueError):
            continue
        if pid.isdigit() and mnt.encode() in args and int(pid) != os.getpid():
            return int(pid)
    return None


def test_daemon_and_signals():
    m = Mount(["primitiv/param_scalar.param"], foreground=False)
    m.start()
    # the command returns once mounted, with status 0; the daemon stays in
    # this session (the scheduler's autogroup of its readers), in a
    # process group of its own
    eq(m.proc.wait(timeout=60), 0, "the detaching command's status")
    check(os.path.ismount(m.mnt), "not mounted when the command returned")
    pid = daemon_of(m.mnt)
    check(pid is not None, "no process serves the mount")
    eq(os.getsid(pid), os.getsid(0), "the daemon's session")
    eq(os.getpgid(pid), pid, "the daemon's process group")
    eq(m.text("param_scalar.param", "value", "values.txt"), "3.5\n")
    r = subprocess.run(["fusermount3", "-u", m.mnt])
    eq(r.returncode, 0, "fusermount3 -u")
    deadline = time.time() + 10
    while os.path.ismount(m.mnt) and time.time() < deadline:
        time.sleep(0.05)
    check(not os.path.ismount(m.mnt), "still mounted")
    deadline = time.time() + 10
    while daemon_of(m.mnt) and time.time() < deadline:
        time.sleep(0.05)
    check(daemon_of(m.mnt) is None, "the daemon outlived its unmount")
    m.proc = None
    shutil.rmtree(m.tmp, ignore_errors=True)
    for sig in (signal.SIGTERM, signal.SIGINT):
        m = Mount(["primitiv/param_scalar.param"])
        m.start()
        m.proc.send_signal(sig)
        eq(m.proc.wait(timeout=10), 0, "exit status after signal %d" % sig)
        check(not os.path.ismount(m.mnt), "still mounted after signal")
        m.proc = None
        shutil.rmtree(m.tmp, ignore_errors=True)
    out = subprocess.run([BIN, "--help"], capture_output=True, text=True)
    check("usage: modelfs" in out.stdout, "--help")
    out = subprocess.run([BIN, "--version"], capture_output=True, text=True)
    check(out.stdout.startswith("modelfs "), "--version")
    out = subprocess.run([BIN], capture_output=True, text=True)
    check(out.returncode != 0 and "usage" in out.stderr, "no arguments")


def test_read_only():
    with Mount(["primitiv/param_2x3_nostats.param"], opts=["-o", "ro"]) as m:
        before = sha(m.s("param_2x3_nostats.param"))
        r = m.sh("echo 1 2 3 4 5 6 > param_2x3_nostats.param/value/values.txt", check=False)
        check(r.returncode != 0, "write succeeded on a read-only mount")
        check("Read-only" in r.stderr, r.stderr)
        eq(sha(m.s("param_2x3_nostats.param")), before)
        check(not os.access(m.m("param_2x3_nostats.param", "value", "values.txt"), os.W_OK))


def test_stable_inodes():
    files = ["primitiv/mlp_adam_2steps.model"]
    paths = ["mlp_adam_2steps.model", "mlp_adam_2steps.model/params/encoder/w/value/values.txt",
             "mlp_adam_2steps.model/params/decoder/out/b/stats/Adam.m1"]
    inos = []
    for _ in range(2):
        with Mount(files) as m:
            inos.append([os.stat(m.m(p)).st_ino for p in paths])
            # the same number after the kernel forgot and looked up again
            subprocess.run(["sh", "-c", "echo 2 > /proc/sys/vm/drop_caches"], check=False)
            eq([os.stat(m.m(p)).st_ino for p in paths], inos[-1], "inode numbers after forget")
    eq(inos[0], inos[1], "inode numbers across mounts")
    check(len(set(inos[0])) == len(paths))


def test_outside_change():
    with Mount(["primitiv/param_2x3_nostats.param"]) as m:
        v = m.m("param_2x3_nostats.param", "value", "values.txt")
        eq(open(v).read(), "0.5 1.5 2.5\n10.5 11.5 12.5\n")
        # a training run saves a new checkpoint over the old one (in place)
        new = open(os.path.join(DATA, "primitiv/param_momentumsgd_vec3.param"), "rb").read()
        with open(m.s("param_2x3_nostats.param"), "wb") as f:
            f.write(new)
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                if open(v).read() == "0.98\n1.96\n2.94\n":
                    break
            except OSError:
                pass
            time.sleep(0.05)
        eq(open(v).read(), "0.98\n1.96\n2.94\n", "after an in-place rewrite")
        eq(m.text("param_2x3_nostats.param", "value", "shape"), "3\n")
        # and by rename over it (atomic save)
        shutil.copyfile(os.path.join(DATA, "primitiv/param_scalar.param"), m.s("tmp.bin"))
        os.rename(m.s("tmp.bin"), m.s("param_2x3_nostats.param"))
        deadline = time.time() + 5
        while time.time() < deadline and open(v).read() != "3.5\n":
            time.sleep(0.05)
        eq(open(v).read(), "3.5\n", "after rename over")


if __name__ == "__main__":
    run([test_listing_and_sizes, test_numpy_views, test_broken_files_pass_through,
         test_plain_files_read_write, test_daemon_and_signals, test_read_only,
         test_stable_inodes, test_outside_change])
