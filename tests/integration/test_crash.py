"""Crash safety of commits: the daemon is killed (SIGKILL) at random moments
while it commits edits of a ~30 MB primitiv model, both in place under the
rollback journal (a same-size change) and by full rewrite (a reshape). After
every kill the source holds exactly the old or the new content; after the
next mount no temporary or journal file is left. Trials: MFS_CRASH_TRIALS
(default 100).

Then the daemon is killed at each step of a rewrite in turn (strace injects
SIGKILL on entry to the call): in the copy of the unchanged bytes
(copy_file_range: the big tensor keeps its place in a page), at the new
file's fsync and at the rename the source is the old one; at the
directory's fsync after the rename, the new one.

Last, a write to the source from outside the mount while a rewrite copies
it (strace holds its copy_file_range for a while): the commit fails
with EAGAIN, the source keeps that write, and no temporary file is left."""
import os
import random
import shutil
import signal
import struct
import subprocess
import tempfile
import time

from harness import BIN, check, eq, run, sha, skip_unless_fuse

TRIALS = int(os.environ.get("MFS_CRASH_TRIALS", "100"))


def u32(v):
    return b"\xce" + struct.pack(">I", v)


def write_model(path, params):
    """A primitiv model as primitiv writes it: params = [(name, dims, nfloats)]."""
    with open(path, "wb") as f:
        f.write(u32(0) + u32(1) + u32(0x300) + u32(len(params)))
        for k, (name, dims) in enumerate(params):
            key = name.encode()
            f.write(bytes([0x91, 0xa0 | len(key)]) + key)
            n = 1
            for d in dims:
                n *= d
            f.write(bytes([0x90 | len(dims)]) + b"".join(u32(d) for d in dims) + u32(1))
            payload = struct.pack("<%df" % n, *[(k + (i % 1000) / 1000.0) for i in range(n)])
            f.write(b"\xc6" + struct.pack(">I", len(payload)) + payload)
            f.write(u32(0))


def make_pristine(tmp):
    path = os.path.join(tmp, "pristine.model")
    write_model(path, [("big", (1024, 7168)), ("small", (2, 3))])  # ~29.4 MB
    return path


class Daemon:
    def __init__(self, src, mnt, log, wrap=()):
        self.mnt = mnt
        self.p = subprocess.Popen(list(wrap) + [BIN, "-f", src, mnt, "-o", "log=" + log],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 60
        while not os.path.ismount(mnt):
            check(self.p.poll() is None and time.time() < deadline, "mount failed")
            time.sleep(0.01)

    def kill(self):
        self.p.send_signal(signal.SIGKILL)
        self.p.wait()
        subprocess.run(["fusermount3", "-u", "-z", self.mnt], stderr=subprocess.DEVNULL)

    def stop(self):
        subprocess.run(["fusermount3", "-u", self.mnt], check=True)
        self.p.wait(timeout=30)


EDITS = {
    # same size: in place, under the rollback journal
    "inplace": "import sys\nf=open(sys.argv[1]+'/m.model/params/big/value/data','r+b')\n"
               "f.seek(4*12345); f.write(b'\\x00\\x00\\x80\\x7f'); f.close()\n",
    # a new shape: the whole file is rewritten beside it and renamed over
    "rewrite": "import sys, numpy as np\n"
               "np.save(sys.argv[1]+'/m.model/params/small/value/data.npy',"
               " np.arange(12, dtype=np.float32).reshape(3, 4))\n",
}


def edit_proc(kind, mnt):
    return subprocess.Popen(["/usr/bin/python3", "-c", EDITS[kind], mnt],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def workdir():
    """A temporary directory with SOURCE and mount point, a log, the pristine
    model: (tmp, src, mnt, log, pristine)."""
    skip_unless_fuse()
    tmp = tempfile.mkdtemp(prefix="mfs-crash-")
    src, mnt, log = (os.path.join(tmp, x) for x in ("src", "mnt", "log"))
    os.makedirs(src)
    os.makedirs(mnt)
    return tmp, src, mnt, log, make_pristine(tmp)


def test_kill9_during_commits():
    tmp, src, mnt, log, pristine = workdir()
    old = sha(pristine)
    model = os.path.join(src, "m.model")
    # the content each edit produces, and how long its commit takes
    new, took = {}, {}
    for kind in EDITS:
        shutil.copyfile(pristine, model)
        d = Daemon(src, mnt, log)
        t0 = time.time()
        eq(edit_proc(kind, mnt).wait(), 0, kind + " edit")
        took[kind] = time.time() - t0
        d.stop()
        new[kind] = sha(model)
        check(new[kind] != old, kind + " changed nothing")
    rng = random.Random(20261121)
    outcomes = {"old": 0, "new": 0}
    for trial in range(TRIALS):
        kind = "inplace" if trial % 2 == 0 else "rewrite"
        shutil.copyfile(pristine, model)
        d = Daemon(src, mnt, log)
        e = edit_proc(kind, mnt)
        time.sleep(rng.uniform(0, took[kind] * 1.2))
        d.kill()
        e.kill()
        e.wait()
        got = sha(model)
        check(got in (old, new[kind]),
              "trial %d (%s): the file is neither old nor new" % (trial, kind))
        # the next mount rolls back a journal and removes leftovers
        d = Daemon(src, mnt, log)
        after = sha(model)
        check(after in (old, new[kind]), "trial %d: after remount neither old nor new" % trial)
        deadline = time.time() + 5
        while sorted(os.listdir(src)) != ["m.model"] and time.time() < deadline:
            time.sleep(0.02)
        eq(sorted(os.listdir(src)), ["m.model"], "trial %d: files left in SOURCE" % trial)
        d.stop()
        outcomes["new" if after == new[kind] else "old"] += 1
    print("kill -9 trials: %d (%d in place, %d rewrites); ended old %d, new %d; commit times "
          "%.0f ms in place, %.0f ms rewrite" % (TRIALS, (TRIALS + 1) // 2, TRIALS // 2,
                                                 outcomes["old"], outcomes["new"],
                                                 took["inplace"] * 1000, took["rewrite"] * 1000))
    shutil.rmtree(tmp, ignore_errors=True)


# (strace -e inject=..., whether the kill leaves the new content)
STEPS = [("copy_file_range:when=1", False), ("fsync:when=1", False), ("renameat:when=1", False),
         ("fsync:when=2", True)]


def test_kill_at_each_step_of_a_rewrite():
    tmp, src, mnt, log, pristine = workdir()
    model = os.path.join(src, "m.model")
    shutil.copyfile(pristine, model)
    d = Daemon(src, mnt, log)
    eq(edit_proc("rewrite", mnt).wait(), 0, "rewrite edit")
    d.stop()
    old, new = sha(pristine), sha(model)
    for inject, ends_new in STEPS:
        shutil.copyfile(pristine, model)
        d = Daemon(src, mnt, log, ["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                                   "inject=%s:signal=SIGKILL" % inject])
        e = edit_proc("rewrite", mnt)
        eq(d.p.wait(timeout=120), -signal.SIGKILL, "the daemon's end under " + inject)
        subprocess.run(["fusermount3", "-u", "-z", mnt], stderr=subprocess.DEVNULL)
        e.wait(timeout=60)
        left = [n for n in os.listdir(src) if ".mfs-tmp." in n]
        eq(len(left), 0 if ends_new else 1, "temporary files after a kill at " + inject)
        eq(sha(model), new if ends_new else old, "the source after a kill at " + inject)
        d = Daemon(src, mnt, log)
        deadline = time.time() + 5
        while sorted(os.listdir(src)) != ["m.model"] and time.time() < deadline:
            time.sleep(0.02)
        eq(sorted(os.listdir(src)), ["m.model"], "files left in SOURCE after a kill at " + inject)
        shape = open(os.path.join(mnt, "m.model", "params", "small", "value", "shape")).read()
        eq(shape.split(), ["3", "4"] if ends_new else ["2", "3"], "served after a kill at " + inject)
        d.stop()
        eq(sha(model), new if ends_new else old, "the source after the next mount, " + inject)
    print("killed at %d steps of a rewrite: old before the rename, new after" % len(STEPS))
    shutil.rmtree(tmp, ignore_errors=True)


def test_outside_write_during_a_rewrite():
    tmp, src, mnt, log, pristine = workdir()
    model = os.path.join(src, "m.model")
    shutil.copyfile(pristine, model)
    d = Daemon(src, mnt, log, ["strace", "-f", "-qq", "-o", "/dev/null", "-e",
                               "inject=copy_file_range:delay_enter=3000000:when=1"])
    e = edit_proc("rewrite", mnt)
    time.sleep(1.5)  # the commit is held in its copy
    fd = os.open(model, os.O_WRONLY)
    os.pwrite(fd, b"\x00\x00\x80\x3f", 4096)
    os.close(fd)
    outside = sha(model)
    check(e.wait(timeout=60) != 0, "the edit succeeded over an outside write")
    eq(sha(model), outside, "the source after the failed commit")
    eq(sorted(os.listdir(src)), ["m.model"], "files left in SOURCE")
    check("changed outside the mount" in open(os.path.join(mnt, ".modelfs", "errors")).read(),
          "no errors line")
    d.stop()
    print("an outside write during a rewrite's copy: EAGAIN, the write kept")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    run([test_kill9_during_commits, test_kill_at_each_step_of_a_rewrite,
         test_outside_write_during_a_rewrite])
