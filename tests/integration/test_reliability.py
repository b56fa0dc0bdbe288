"""Reliability and security on a real mount: a full disk leaves files intact
and reports ENOSPC; several processes read and write the same and different
tensors while the source is replaced from outside (readers see old or new
values, never a mix; commits serialize; nothing deadlocks); nothing outside
SOURCE is reachable through the daemon; memory caps hold; text kept from a
size pass reads the same as text rendered at each read; a large view read
again is warmed by the daemon, and only then."""
import errno
import os
import random
import shutil
import struct
import subprocess
import threading
import time

import numpy as np

from harness import BIN, DATA, Mount, check, eq, run, sha


def u32(v):
    return b"\xce" + struct.pack(">I", v)


def model_bytes(nparams, n, value):
    """A primitiv model: nparams parameters p0.. of n floats, all = value."""
    out = u32(0) + u32(1) + u32(0x300) + u32(nparams)
    for k in range(nparams):
        key = b"p%d" % k
        out += bytes([0x91, 0xa0 | len(key)]) + key
        payload = struct.pack("<%df" % n, *([float(value)] * n))
        out += bytes([0x91]) + u32(n) + u32(1)
        out += (b"\xc5" + struct.pack(">H", len(payload)) if len(payload) < 65536
                else b"\xc6" + struct.pack(">I", len(payload))) + payload
        out += u32(0)
    return out


def test_disk_full():
    if os.geteuid() != 0:
        raise AssertionError("needs root to mount a small tmpfs as SOURCE")
    m = Mount([])
    small = os.path.join(m.tmp, "small")
    os.makedirs(small)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", small], check=True)
    try:
        os.rmdir(m.src)
        os.symlink(small, m.src)  # SOURCE is the tmpfs (the link is resolved at mount)
        with open(os.path.join(small, "m.model"), "wb") as f:
            f.write(model_bytes(1, 200000, 1.0))  # 800 KB
        m.start()
        before = sha(m.s("m.model"))
        # fill the disk
        with open(os.path.join(small, "filler"), "wb") as f:
            try:
                while True:
                    f.write(b"\0" * 65536)
                    f.flush()
            except OSError as e:
                eq(e.errno, errno.ENOSPC)
        # a reshape needs a whole new file beside the old one: no room
        try:
            np.save(m.m("m.model", "params", "p0", "value", "data.npy"),
                    np.ones((1000, 200), dtype=np.float32))
            raise AssertionError("a rewrite on a full disk succeeded")
        except OSError as e:
            eq(e.errno, errno.ENOSPC, "rewrite on a full disk")
        eq(sha(m.s("m.model")), before, "file changed on a full disk")
        check("m.model/params/p0/value/data.npy" in m.errors(), "no error line")
        eq(sorted(os.listdir(small)), ["filler", "m.model"], "leftovers on a full disk")
        # with a little room, a same-size edit (journal) still works
        os.truncate(os.path.join(small, "filler"), os.path.getsize(os.path.join(small, "filler")) - 65536)
        with open(m.m("m.model", "params", "p0", "value", "data"), "r+b") as f:
            f.seek(40)
            f.write(struct.pack("<f", 7.0))
        eq(np.load(m.m("m.model", "params", "p0", "value", "data.npy"))[10], 7.0)
        m.stop()
    finally:
        m.stop()
        subprocess.run(["umount", small], check=False)
    shutil.rmtree(m.tmp, ignore_errors=True)


WORKER = r'''
import os, sys, time, random
mnt, role, seed, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
rng = random.Random(seed)
end = time.time() + seconds
n = mixes = errors = 0
while time.time() < end:
    p = rng.randrange(4)
    d = "%s/m.model/params/p%d/value" % (mnt, p)
    try:
        if role == "read":
            fd = os.open(d + "/values.txt", os.O_RDONLY)
            text = os.read(fd, 1 << 20)
            os.close(fd)
            vals = set(text.split())
            if len(vals) > 1:
                mixes += 1
                print("MIX", p, sorted(vals)[:4], flush=True)
        else:
            v = rng.randrange(1, 1000)
            with open(d + "/values.txt", "w") as f:
                f.write((" %d" % v) * 100 + "\n")
        n += 1
    except OSError as e:
        # the source replaced from outside may remove the path for a moment
        # (ENOENT, ESTALE), or change under a commit (EAGAIN: nothing written)
        if e.errno not in (2, 11, 116):
            errors += 1
            print("ERR", role, p, e, flush=True)
print("DONE", role, n, mixes, errors, flush=True)
'''


def test_concurrency():
    procs, seconds = 6, 8.0
    with Mount([]) as m:
        with open(m.s("m.model"), "wb") as f:
            f.write(model_bytes(4, 100, 0.0))
        with open(os.path.join(m.tmp, "other.model"), "wb") as f:
            f.write(model_bytes(4, 100, 5.0))
        os.listdir(m.m("m.model", "params"))
        workers = [subprocess.Popen(["/usr/bin/python3", "-c", WORKER, m.mnt,
                                     "read" if k % 2 else "write", str(k), str(seconds)],
                                    stdout=subprocess.PIPE, text=True) for k in range(procs)]
        # meanwhile a training run replaces the file now and then
        replaced = 0
        t_end = time.time() + seconds
        while time.time() < t_end:
            time.sleep(0.7)
            shutil.copyfile(os.path.join(m.tmp, "other.model"), m.s("new.tmp"))
            os.rename(m.s("new.tmp"), m.s("m.model"))
            replaced += 1
        outs = []
        for w in workers:
            out, _ = w.communicate(timeout=120)  # a deadlock fails here
            outs.append(out)
        done = [l.split() for o in outs for l in o.splitlines() if l.startswith("DONE")]
        eq(len(done), procs, "workers finished")
        ops = sum(int(d[2]) for d in done)
        mixes = sum(int(d[3]) for d in done)
        errs = sum(int(d[4]) for d in done)
        eq(mixes, 0, "a reader saw a mix of values:\n" + "".join(outs))
        eq(errs, 0, "unexpected errors:\n" + "".join(outs))
        check(m.proc.poll() is None, "the daemon died")
        # the file is whole: it parses and every tensor holds one value
        for p in range(4):
            vals = set(m.text("m.model", "params", "p%d" % p, "value", "values.txt").split())
            eq(len(vals), 1, "p%d after the run" % p)
        print("concurrency: %d processes, %d reads and writes, %d outside replacements, "
              "no mix, no deadlock" % (procs, ops, replaced))


def test_nothing_outside_source():
    outside = os.path.join(DATA, "primitiv", "param_2x3_nostats.param")
    with Mount([]) as m:
        os.symlink(outside, m.s("link.param"))           # a model outside SOURCE
        os.symlink(os.path.dirname(outside), m.s("linkdir"))
        os.symlink("../../etc", m.s("up"))
        check(os.path.islink(m.m("link.param")), "a link to a model was followed")
        eq(os.readlink(m.m("link.param")), outside)
        check(os.path.islink(m.m("linkdir")) and os.path.islink(m.m("up")), "links followed")
        eq(m.errors(), "", "a link was parsed")
        # mount options: other users are out unless asked for
        opts = [l.split()[3] for l in open("/proc/mounts") if l.split()[1] == m.mnt][0]
        check("allow_other" not in opts, opts)
        check("default_permissions" in opts, opts)
    with Mount([], opts=["-o", "allow_other"]) as m:
        opts = [l.split()[3] for l in open("/proc/mounts") if l.split()[1] == m.mnt][0]
        check("allow_other" in opts and "default_permissions" in opts, opts)


def test_memory_caps():
    with Mount(["primitiv/tensor_bin32_128x128.tensor"], opts=["-o", "max_buffer=64k"]) as m:
        before = sha(m.s("tensor_bin32_128x128.tensor"))
        try:
            with open(m.m("tensor_bin32_128x128.tensor", "values.txt"), "w") as f:
                f.write("1 " * 100000)
            raise AssertionError("write beyond max_buffer succeeded")
        except OSError as e:
            eq(e.errno, errno.EFBIG)
        eq(sha(m.s("tensor_bin32_128x128.tensor")), before)
        check("max_buffer" in m.errors(), m.errors())
        # a patch of a few bytes holds only those bytes
        with open(m.m("tensor_bin32_128x128.tensor", "data"), "r+b") as f:
            f.seek(4000)
            f.write(struct.pack("<f", 3.25))
        eq(float(np.load(m.m("tensor_bin32_128x128.tensor", "data.npy")).ravel(order="F")[1000]), 3.25)


def floats_model(vals):
    """A primitiv model of one parameter "w" holding vals (float32)."""
    payload = vals.astype("<f4").tobytes()
    return (u32(0) + u32(1) + u32(0x300) + u32(1) + bytes([0x91, 0xa1]) + b"w" +
            bytes([0x91]) + u32(len(vals)) + u32(1) + b"\xc6" + struct.pack(">I", len(payload)) +
            payload + u32(0))


def test_text_cache():
    rng = np.random.default_rng(7)
    vals = (rng.standard_normal(300000) * 0.05).astype(np.float32)
    vals[::1000] = 0
    texts = []
    for opts in (["-o", "text_cache=0"], [], ["-o", "text_cache=1M"]):
        with Mount(opts=opts) as m:
            with open(m.s("w.model"), "wb") as f:
                f.write(floats_model(vals))
            p = m.m("w.model", "params", "w", "value", "values.txt")
            size = os.stat(p).st_size  # the size pass (keeps the text unless told not to)
            with open(p, "rb") as f:
                # reads at any offset, then front to back, then again
                pieces = []
                for off in random.Random(3).sample(range(size), 50):
                    f.seek(off)
                    pieces.append((off, f.read(10000)))
                f.seek(0)
                text = f.read()
            eq(len(text), size, "bytes read vs st_size (%s)" % opts)
            for off, piece in pieces:
                eq(piece, text[off:off + 10000], "read at %d (%s)" % (off, opts))
            with open(p, "rb") as f:
                eq(f.read(), text, "second read (%s)" % opts)
            got = np.array(text.split(), dtype=np.float32)
            check(np.array_equal(got, vals), "values of the text (%s)" % opts)
            texts.append(text)
    eq(texts[1], texts[0], "text kept vs rendered at each read")
    eq(texts[2], texts[0], "text with a budget too small to keep it")
    bad = subprocess.run([BIN, "-o", "text_cache=lots", "/tmp", "/tmp"],
                         capture_output=True, text=True)
    eq(bad.returncode, 2, bad.stderr)


def test_second_read_warm():
    """A raw view larger than 64 MiB, read to its end and opened again, is
    spliced through once more by a child of the daemon (fs/warm.h, logged
    with -o debug); the second read gives the same bytes; a view read once,
    or a mount with one thread (-s), is left alone."""
    vals = np.arange((80 << 20) // 4, dtype=np.float32)
    for opts, warms in ((["-o", "debug"], True), (["-s", "-o", "debug"], False)):
        with Mount(opts=opts) as m:
            with open(m.s("w.model"), "wb") as f:
                f.write(floats_model(vals))
            p = m.m("w.model", "params", "w", "value", "data")

            def warmed(what="warming"):
                with open(m.log) as f:
                    return what in f.read()
            with open(p, "rb") as f:
                first = f.read()
            check(first == vals.tobytes(), "first read of data (%s)" % opts)
            time.sleep(0.3)
            check(not warmed(), "a view read once is not warmed (%s)" % opts)
            with open(p, "rb") as f:
                check(f.read() == first, "second read of data (%s)" % opts)
                deadline = time.time() + 10
                while warms and not warmed() and time.time() < deadline:
                    time.sleep(0.05)
            eq(warmed(), warms, "warmed for the second read (%s)" % opts)
            # the pass keeps the view open: an unmount waits for its end
            deadline = time.time() + 30
            while warms and not warmed("ended") and time.time() < deadline:
                time.sleep(0.05)


if __name__ == "__main__":
    run([test_disk_full, test_concurrency, test_nothing_outside_source, test_memory_caps,
         test_text_cache, test_second_read_warm])
