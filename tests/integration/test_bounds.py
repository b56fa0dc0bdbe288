"""Every buffer of the daemon is bounded before it grows: a write or a
truncation that would make a view (or an editor's scratch file) larger than
-o max_buffer (max_scratch) fails at once with EFBIG, whatever the view kind,
and a hole left by a seek costs no memory; a data.npy write holds the array
about once (the written buffer), not once per stage of the commit, in
either order (C or Fortran) whatever the tensor's storage order. An edit of
a .npz member holds a few windows besides what was written and what the
view parsed, whatever the member's size (deflated: compressed again as the
commit writes it), and an edit that would hold more than -o max_buffer is
refused with EFBIG, the source unchanged."""
import errno
import os
import struct
import subprocess
import time
import zipfile

import numpy as np

from harness import SLOW, VALGRIND, Mount, check, eq, run, sha
from primitiv_decode import decode

FAR = 100000000          # 100 MB: beyond -o max_buffer=1M
HUGE = 1 << 40           # beyond any size


def instrumented(pid):
    """A daemon under a sanitizer or valgrind: its memory says nothing."""
    if VALGRIND:
        return True
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    return "libasan" in maps or "libtsan" in maps or "libubsan" in maps


def status_kb(pid, key):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise AssertionError("no %s in /proc/%d/status" % (key, pid))


def reset_peak(pid):
    """VmHWM starts over from the current resident size (proc(5), clear_refs)."""
    with open("/proc/%d/clear_refs" % pid, "w") as f:
        f.write("5")


def dd_at(path, seek):
    return subprocess.run(["dd", "if=/dev/zero", "of=" + path, "bs=1", "count=1",
                           "seek=%d" % seek, "conv=notrunc"], capture_output=True, text=True)


def expect_efbig(m, rel, seek):
    before = sha(m.s(rel.split("/")[0]))
    r = dd_at(m.m(rel), seek)
    check(r.returncode != 0, "%s: dd at %d succeeded" % (rel, seek))
    check(os.strerror(errno.EFBIG) in r.stderr,
          "%s: dd at %d: expected EFBIG, got %r" % (rel, seek, r.stderr))
    eq(sha(m.s(rel.split("/")[0])), before, rel + ": source unchanged")


VIEWS = ["tensor_2x3.tensor/values.txt", "tensor_2x3.tensor/data",
         "tensor_2x3.tensor/data.npy", "adam_custom.optimizer/uint_configs/Optimizer.epoch",
         "daphne01_coo.dbdf/matrix.mtx", "AdaBoost.final_learner.psave/tester/expdir"]
FILES = ["primitiv/tensor_2x3.tensor", "primitiv/adam_custom.optimizer",
         "daphne/built/daphne01_coo.dbdf", "plearn/psave/learners/AdaBoost.final_learner.psave"]


def test_write_beyond_max_buffer():
    with Mount(FILES, opts=["-o", "max_buffer=1M"]) as m:
        for v in VIEWS:
            os.stat(m.m(v))
        pid = m.proc.pid
        reset_peak(pid)
        base = status_kb(pid, "VmHWM")
        for v in VIEWS:
            expect_efbig(m, v, FAR)
            expect_efbig(m, v, HUGE)
            check("max_buffer" in m.errors(), v + ": no line in .modelfs/errors")
        if not instrumented(pid):
            grown = status_kb(pid, "VmHWM") - base
            check(grown < 32 * 1024, "peak memory grew by %d KiB" % grown)
        # within the bound, a view still reads and writes as before
        vals = m.text("tensor_2x3.tensor", "values.txt")
        with open(m.m("tensor_2x3.tensor", "values.txt"), "w") as f:
            f.write(vals)
        eq(m.text("tensor_2x3.tensor", "values.txt"), vals, "values.txt rewritten")


def test_default_bound():
    # -o max_buffer defaults to 1G: 2 GB into a small view is refused at once
    with Mount(FILES[:1]) as m:
        expect_efbig(m, VIEWS[0], 2000000000)
        expect_efbig(m, VIEWS[2], 2000000000)


def test_truncate_beyond_max_buffer():
    with Mount(FILES, opts=["-o", "max_buffer=1M"]) as m:
        for v in VIEWS:
            before = sha(m.s(v.split("/")[0]))
            r = subprocess.run(["truncate", "-s", str(FAR), m.m(v)], capture_output=True,
                               text=True)
            # data has a fixed size: a truncation to another size than 0
            # or its own is refused as such (EINVAL) before any bound
            code = errno.EINVAL if v.endswith("/data") else errno.EFBIG
            check(r.returncode != 0 and os.strerror(code) in r.stderr,
                  "%s: truncate to %d: %r" % (v, FAR, r.stderr))
            eq(sha(m.s(v.split("/")[0])), before, v + ": source unchanged")
            eq(m.read(v) != b"", True, v + " still reads")


def test_scratch_beyond_max_scratch():
    with Mount(FILES, opts=["-o", "max_scratch=1M"]) as m:
        swap = m.m("tensor_2x3.tensor", ".values.txt.swp")
        open(swap, "wb").close()
        for seek in (FAR, HUGE):
            # a write beyond max_scratch: ENOSPC, as for the total
            r = dd_at(swap, seek)
            check(r.returncode != 0 and os.strerror(errno.ENOSPC) in r.stderr,
                  "scratch at %d: %r" % (seek, r.stderr))
        r = subprocess.run(["truncate", "-s", str(HUGE), swap], capture_output=True, text=True)
        check(r.returncode != 0 and os.strerror(errno.EFBIG) in r.stderr,
              "scratch truncate: %r" % r.stderr)
        eq(os.path.getsize(swap), 0, "scratch size")
        os.unlink(swap)


def u32(v):
    return b"\xce" + struct.pack(">I", v)


def write_model(path, rows, cols):
    """A primitiv model with one float32 parameter of rows x cols."""
    vals = (np.arange(rows * cols, dtype=np.uint32) % 1000).astype("<f4")
    with open(path, "wb") as f:
        f.write(u32(0) + u32(1) + u32(0x300) + u32(1))
        f.write(bytes([0x91, 0xa3]) + b"big")
        f.write(bytes([0x92]) + u32(cols) + u32(rows) + u32(1))
        payload = vals.tobytes()
        f.write(b"\xc6" + struct.pack(">I", len(payload)) + payload)
        f.write(u32(0))


def npy_peak(m, arr):
    """Growth of the daemon's peak memory while numpy.save writes arr to the
    data.npy of big.model's parameter, in bytes; checks that data.npy reads
    back arr, bit for bit."""
    d = m.m("big.model", "params", "big", "value")
    pid = m.proc.pid
    reset_peak(pid)
    base = status_kb(pid, "VmHWM")
    np.save(os.path.join(d, "data.npy"), arr)
    grown = (status_kb(pid, "VmHWM") - base) * 1024
    back = np.load(os.path.join(d, "data.npy"))
    check(back.shape == arr.shape and back.view("<u4").tobytes() == arr.view("<u4").tobytes(),
          "data.npy did not take the new values")
    return grown


def stored(m):
    """big.model's parameter as python3-msgpack reads it from the source:
    (dims, stored bytes), primitiv storing column-major."""
    p = decode(m.s("big.model"), raw=True)["params"]["big"]["value"]
    return p["dims"], p["data"]


def test_npy_write_peak():
    # 100 MiB of float32; 25 MiB under valgrind, where no peak is asserted
    rows, cols = (6400 if VALGRIND else 25600), 1024
    size = rows * cols * 4
    with Mount() as m:
        write_model(m.s("big.model"), rows, cols)
        shape = tuple(int(x) for x in m.text("big.model", "params", "big", "value",
                                              "shape").split())
        eq(shape, (cols, rows), "shape")
        # in the tensor's storage order (primitiv: column-major): the array
        # is compared and committed in place from the written buffer
        same = npy_peak(m, np.asfortranarray(np.full(shape, 0.5, dtype="<f4")))
        # the other order (C, as numpy.save writes by default), every
        # element new and distinct (NaNs with payloads, -0, subnormals
        # included): diffed and committed in storage order a block at a
        # time, without a reordered copy of the array
        bits = (np.arange(rows * cols, dtype=np.uint64) * 2654435761 % (1 << 32))
        arr = bits.astype(np.uint32).view("<f4").reshape(shape)
        other = npy_peak(m, arr)
        dims, data = stored(m)
        eq(dims, [cols, rows], "stored dims")
        check(data == arr.tobytes(order="F"), "the source does not hold the array column-major")
        print("data.npy write of %d MiB: daemon peak grew by %d MiB (storage order), "
              "%d MiB (the other order)" % (size >> 20, same >> 20, other >> 20))
        if not instrumented(m.proc.pid):
            # about once the array (the written buffer): not twice
            check(same < size * 3 // 2,
                  "peak grew by %d MiB for %d MiB written" % (same >> 20, size >> 20))
            check(other < size * 3 // 2,
                  "peak grew by %d MiB for %d MiB written in the other order"
                  % (other >> 20, size >> 20))


def test_npy_c_order_rewrite():
    # the same through a full rewrite (temporary file + rename): the
    # gathered values are written a chunk at a time there too
    rows, cols = 700, 300
    with Mount(opts=["-o", "no_inplace"]) as m:
        write_model(m.s("big.model"), rows, cols)
        bits = (np.arange(rows * cols, dtype=np.uint64) * 40503 % (1 << 32))
        arr = bits.astype(np.uint32).view("<f4").reshape(cols, rows)
        # every third row keeps its old values: runs of changed elements
        old = np.load(m.m("big.model", "params", "big", "value", "data.npy"))
        arr[::3] = old[::3]
        npy_peak(m, arr)
        dims, data = stored(m)
        eq(dims, [cols, rows], "stored dims")
        check(data == arr.tobytes(order="F"), "the source does not hold the array column-major")


MiB = 1 << 20
# The daemon's peak may grow by this much over what an edit wrote and what
# its view parsed: a few windows of the re-deflate, the commit's buffers.
SLACK = 64 * MiB
# The zeros member: 256 MiB of float32 (64 MiB under a sanitizer, 16 MiB
# under valgrind, where no peak is asserted).
ZROWS, ZCOLS = (2048, 2048) if VALGRIND else (4096, 4096) if SLOW else (8192, 8192)


def dd_bytes(path, seek, data):
    """data written at byte seek of path, in place (dd conv=notrunc)."""
    r = subprocess.run(["dd", "of=" + path, "bs=%d" % len(data), "count=1",
                        "seek=%d" % (seek // len(data)), "conv=notrunc"], input=data,
                       capture_output=True)
    check(seek % len(data) == 0, "seek %d is not a multiple of %d" % (seek, len(data)))
    return r


def edit_peak(m, what, fn):
    """Growth of the daemon's peak memory while fn() runs, in bytes."""
    pid = m.proc.pid
    reset_peak(pid)
    base = status_kb(pid, "VmHWM")
    t0 = time.time()
    fn()
    grown = (status_kb(pid, "VmHWM") - base) * 1024
    print("%s: daemon peak grew by %.1f MiB (%.1f s)" % (what, grown / MiB, time.time() - t0))
    return grown


def within(m, what, grown, bound):
    if not instrumented(m.proc.pid):
        check(grown < bound, "%s: peak grew by %.1f MiB, the bound is %.1f MiB"
              % (what, grown / MiB, bound / MiB))


def member_nonzero(path, key):
    """(shape, {flat index: value}) of the nonzero elements of member key,
    as numpy.load reads it; the archive passes zipfile.testzip()."""
    with zipfile.ZipFile(path) as z:
        eq(z.testzip(), None, "testzip of " + path)
    with np.load(path) as f:
        a = f[key]
    flat = a.reshape(-1)
    idx = np.flatnonzero(flat)
    return a.shape, {int(i): float(flat[i]) for i in idx}


def method_of(path, key):
    with zipfile.ZipFile(path) as z:
        return z.getinfo(key + ".npy").compress_type


def save_zeros(path, shape, changes=()):
    """numpy.save of float32 zeros of shape, with changes ((flat index,
    value) pairs), to path (a data.npy in the mount): the bytes written."""
    a = np.zeros(shape, dtype="<f4")
    for i, v in changes:
        a.reshape(-1)[i] = v
    np.save(path, a)
    return a.nbytes + 128


def test_npz_deflated_edit_peak():
    """A 4-byte dd into data of a deflated member of ZROWS x ZCOLS zeros
    (an archive of about 1/1000 of it), a one-byte dd into its values.txt,
    and data.npy written with the same shape and with a new one: each
    commit compresses the member again through a few windows, so the
    daemon's peak grows by at most SLACK over what the edit wrote and what
    its view parsed; numpy.load reads exactly the intended array after each,
    the member stays deflated and the one after it is byte-identical."""
    n = ZROWS * ZCOLS
    with Mount(opts=["-o", "text_cache=0"]) as m:
        src = m.s("z.npz")
        np.savez_compressed(src, w=np.zeros((ZROWS, ZCOLS), dtype="<f4"),
                            b=np.arange(10, dtype=np.int64))
        print("archive of %d MiB of zeros: %d KiB" % (n * 4 >> 20, os.path.getsize(src) >> 10))
        d = m.m("z.npz", "tensors", "w")
        want = {}

        def after(what):
            shape, nz = member_nonzero(src, "w")
            eq(nz, want, what + ": the nonzero elements")
            eq(method_of(src, "w"), zipfile.ZIP_DEFLATED, what + ": still deflated")
            with np.load(src) as f:
                eq(f["b"].tolist(), list(range(10)), what + ": member b")
            return shape

        at = 12345
        grown = edit_peak(m, "4-byte dd into data",
                          lambda: eq(dd_bytes(os.path.join(d, "data"), at * 4,
                                              struct.pack("<f", 1.0)).returncode, 0, "dd data"))
        want[at] = 1.0
        eq(after("dd into data"), (ZROWS, ZCOLS), "shape")
        within(m, "4-byte dd into data", grown, SLACK)

        # values.txt: one line per row, "0 " per value (the row of element
        # at holds a "1", as long)
        text = os.path.getsize(os.path.join(d, "values.txt"))
        eq(text, n * 2, "values.txt size")
        row, col = 100, 5
        grown = edit_peak(m, "1-byte dd into values.txt",
                          lambda: eq(dd_bytes(os.path.join(d, "values.txt"),
                                              row * ZCOLS * 2 + col * 2, b"2").returncode, 0,
                                     "dd values.txt"))
        want[row * ZCOLS + col] = 2.0
        after("dd into values.txt")
        within(m, "1-byte dd into values.txt", grown, SLACK + text + n * 4)

        want[200 * ZCOLS + 7] = 3.0
        written = []
        grown = edit_peak(m, "data.npy, same shape", lambda: written.append(
            save_zeros(os.path.join(d, "data.npy"), (ZROWS, ZCOLS), want.items())))
        after("data.npy")
        within(m, "data.npy, same shape", grown, SLACK + written[-1])

        grown = edit_peak(m, "data.npy, new shape", lambda: written.append(
            save_zeros(os.path.join(d, "data.npy"), (ZROWS // 2, ZCOLS * 2),
                       want.items())))
        eq(after("data.npy, new shape"), (ZROWS // 2, ZCOLS * 2), "new shape")
        within(m, "data.npy, new shape", grown, SLACK + written[-1])
        eq(m.errors(), "", ".modelfs/errors")


def test_npz_stored_rewrite_peak():
    """A stored member given a new shape through data.npy is written again
    from what was written, not from copies of it: the peak grows by the
    written .npy and SLACK at most."""
    rows, cols = (1024, 4096) if SLOW else (4096, 8192)
    with Mount() as m:
        src = m.s("s.npz")
        np.savez(src, a=np.arange(5, dtype=np.int16), w=np.zeros((rows, cols), dtype="<f4"),
                 b=np.arange(10, dtype=np.int64))
        d = m.m("s.npz", "tensors", "w")
        changes = {7: 1.5, rows * cols - 1: -2.0}
        written = []
        grown = edit_peak(m, "stored member, data.npy of a new shape", lambda: written.append(
            save_zeros(os.path.join(d, "data.npy"), (cols, rows), changes.items())))
        shape, nz = member_nonzero(src, "w")
        eq((shape, nz), ((cols, rows), changes), "the new array")
        eq(method_of(src, "w"), zipfile.ZIP_STORED, "still stored")
        with np.load(src) as f:
            eq((f["a"].tolist(), f["b"].tolist()), (list(range(5)), list(range(10))),
               "the other members")
        within(m, "stored member, data.npy of a new shape", grown, SLACK + written[-1])


def test_npz_many_members_peak():
    """Edits of many deflated members one after the other hold no more
    than one: the peak grows by SLACK at most over all of them."""
    count, size = (20, 1 << 18) if SLOW else (60, 1 << 20)
    arrays = {"m%02d" % k: np.full(size // 4, k, dtype="<f4") for k in range(count)}
    with Mount() as m:
        src = m.s("many.npz")
        np.savez_compressed(src, **arrays)
        for k in arrays:
            os.stat(m.m("many.npz", "tensors", k, "data"))

        def edit_all():
            for k, a in arrays.items():
                a[3] = -1
                eq(dd_bytes(m.m("many.npz", "tensors", k, "data"), 12,
                            struct.pack("<f", -1.0)).returncode, 0, "dd into " + k)
        grown = edit_peak(m, "%d deflated members edited" % count, edit_all)
        with zipfile.ZipFile(src) as z:
            eq(z.testzip(), None, "testzip")
        with np.load(src) as f:
            for k, a in arrays.items():
                check(np.array_equal(f[k], a), "member " + k)
        within(m, "%d deflated members edited" % count, grown, SLACK)


def test_edit_beyond_max_buffer():
    """With -o max_buffer=1M: a deflated member of 4 MiB takes a 4-byte dd
    into data (compressed again within the bound, twice when its
    compressed form does not fit: random values), and a one-byte dd into
    its values.txt, whose parsed values need 4 MiB, is refused with EFBIG
    and an errors line naming the bound, the source byte-identical."""
    rng = np.random.default_rng(7)
    noise = rng.standard_normal(1 << 20).astype("<f4")
    with Mount(opts=["-o", "max_buffer=1M", "-o", "text_cache=0"]) as m:
        src = m.s("c.npz")
        np.savez_compressed(src, z=np.zeros(1 << 20, dtype="<f4"), r=noise)
        check(os.path.getsize(src) > 3 * MiB, "the random member compresses to about 4 MiB")
        for k, a in (("z", np.zeros(1 << 20, dtype="<f4")), ("r", noise)):
            a = a.copy()
            a[1000] = 7.5
            r = dd_bytes(m.m("c.npz", "tensors", k, "data"), 4000, struct.pack("<f", 7.5))
            eq(r.returncode, 0, "dd into %s: %r" % (k, r.stderr))
            with np.load(src) as f:
                check(np.array_equal(f[k], a), "member %s after the dd" % k)
        with zipfile.ZipFile(src) as z:
            eq(z.testzip(), None, "testzip")
        before = sha(src)
        r = dd_bytes(m.m("c.npz", "tensors", "z", "values.txt"), 0, b"3")
        check(r.returncode != 0 and os.strerror(errno.EFBIG).encode() in r.stderr,
              "values.txt dd: expected EFBIG, got %r" % r.stderr)
        eq(sha(src), before, "source unchanged")
        lines = [ln for ln in m.errors().split("\n") if ln]
        eq(len(lines), 1, "one errors line")
        check("max_buffer" in lines[0] and "values.txt" in lines[0], "errors line: " + lines[0])


if __name__ == "__main__":
    run([test_write_beyond_max_buffer, test_default_bound, test_truncate_beyond_max_buffer,
         test_scratch_beyond_max_scratch, test_npy_write_peak, test_npy_c_order_rewrite,
         test_npz_deflated_edit_peak, test_npz_stored_rewrite_peak, test_npz_many_members_peak,
         test_edit_beyond_max_buffer])
