"""Every buffer of the daemon is bounded before it grows: a write or a
truncation that would make a view (or an editor's scratch file) larger than
-o max_buffer (max_scratch) fails at once with EFBIG, whatever the view kind,
and a hole left by a seek costs no memory; a data.npy write holds the array
about once (the written buffer), not once per stage of the commit, in
either order (C or Fortran) whatever the tensor's storage order."""
import errno
import os
import struct
import subprocess

import numpy as np

from harness import BIN, VALGRIND, Mount, check, eq, run, sha
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
    rows, cols = 25600, 1024           # 100 MiB of float32
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


if __name__ == "__main__":
    run([test_write_beyond_max_buffer, test_default_bound, test_truncate_beyond_max_buffer,
         test_scratch_beyond_max_scratch, test_npy_write_peak, test_npy_c_order_rewrite])
