"""Views of fixed size and of removed sources: truncating `data` to a size
other than 0 and its own fails with EINVAL and an errors line (truncate to 0
then a full write still works); a source removed while a view of it is open
is unmapped and closed by the daemon once its last reader closes."""
import errno
import os
import struct
import time

from harness import Mount, check, eq, run, sha

T = "tensor_2x3.tensor"


def expect_einval(fn, what):
    try:
        fn()
    except OSError as e:
        eq(e.errno, errno.EINVAL, what)
        return
    raise AssertionError(what + ": no error")


def test_truncate_fixed_size():
    with Mount(["primitiv/" + T]) as m:
        p = m.m(T, "data")
        old = open(p, "rb").read()
        size = len(old)
        before = sha(m.s(T))
        expect_einval(lambda: os.truncate(p, 3), "truncate -s 3 data")
        with open(p, "r+b") as f:
            expect_einval(lambda: os.ftruncate(f.fileno(), size + 5), "ftruncate of an open data")
        eq(sha(m.s(T)), before, "source after refused truncates")
        check("truncate to 3 bytes refused" in m.errors(), "errors line: " + m.errors())
        os.truncate(p, size)  # its own size: nothing to refuse
        new = bytes(reversed(old))
        with open(p, "wb") as f:  # truncate to 0, then the whole view
            f.write(new)
        eq(open(p, "rb").read(), new, "data after truncate to 0 and a write")
        check(sha(m.s(T)) != before, "source changed by the full write")


def pmat(path, k):
    L, W = 400, 100  # 320 KB: mapped, not read into memory
    with open(path, "wb") as f:
        f.write(("MATRIX %d %d DOUBLE LITTLE_ENDIAN" % (L, W)).encode().ljust(63) + b"\n")
        f.write(struct.pack("<%dd" % (L * W), *[float(i + k) for i in range(L * W)]))


def held(pid, name):
    """Mappings and descriptors of the daemon on a removed file called name."""
    maps = [l for l in open("/proc/%d/maps" % pid) if name in l and "(deleted)" in l]
    fds = []
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if name in t and "(deleted)" in t:
            fds.append(t)
    return maps + fds


def test_removed_source_released():
    with Mount([]) as m:
        pins = []
        try:
            for k in range(5):
                round_removed(m, k, pins)
        finally:
            for fd in pins:
                os.close(fd)


def round_removed(m, k, pins):
    pid = m.proc.pid
    pmat(m.s("big.pmat"), k)
    # a shell whose working directory is the model directory: the kernel
    # keeps its inode, which must not keep the removed file
    pins.append(os.open(m.m("big.pmat"), os.O_PATH | os.O_DIRECTORY))
    with open(m.m("big.pmat", "data"), "rb") as f:
        eq(struct.unpack_from("<d", f.read(8))[0], float(k), "first element, round %d" % k)
        f.read()
        os.unlink(m.s("big.pmat"))
    # FUSE sends the release after close returns: wait for it (generously:
    # the machine may be loaded), never for a set time.
    deadline = time.time() + 120
    while held(pid, "big.pmat") and time.time() < deadline:
        time.sleep(0.1)
    eq(held(pid, "big.pmat"), [], "daemon's hold on the removed file, round %d" % k)


if __name__ == "__main__":
    run([test_truncate_fixed_size, test_removed_source_released])
