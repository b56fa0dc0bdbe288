"""Concurrent readers and writers of one view: processes loop reading the
whole view while others loop rewriting it (open O_TRUNC, write all, close),
alternating two full contents. Every run must finish (a hang is caught by a
watchdog, which dumps the daemon's threads and fails), every read must be
one committed content whole, and the source must end as a committed
content. Raw views (data, data.npy) are read through the kernel's page
cache, one per inode, also by mmap: the daemon lets one generation's files
use it at a time (fs/ops_file.c), so these reads are checked as strictly.
An mmap of a file opened while another generation's files still use the
cache fails with ENODEV (that open reads past the cache): counted, never
torn. Variants: values.txt, data, data.npy (read and mmap), -o
text_cache=0, a tensor of several MB of text (chunked, read-ahead and
kept-text paths), several MB of data, 8 processes; and the three views of a
tensor in each other source format (safetensors, .npz stored and deflated,
GGUF), the source checked by its own independent reader; and .npz members
followed by data descriptors.

MFS_STRESS_SECONDS: how long each variant runs (default 5).
MFS_STRESS_FORMAT_SECONDS: the same for the other formats' variants
(default 2, at most MFS_STRESS_SECONDS).
MFS_STRESS_REPEAT: rounds of readers and writers in each variant's mount,
each checked (default 1).
MFS_STRESS_ONLY: comma-separated test names to run (default all).
MFS_STRESS_SHAPE: the tensor of the 250x400 variants, e.g. 100x700 (more
than 16 chunks of 4096 numbers keeps reading ahead on)."""
import os
import signal
import struct
import subprocess
import time
import zipfile

import numpy as np

from formats import descriptors, savez_streamed, st_read, st_write
from harness import VALGRIND, Mount, check, eq, run
import gguf_write as gw
from primitiv_decode import decode

SECONDS = float(os.environ.get("MFS_STRESS_SECONDS", "5"))
# The large variants' tensor: 600x1000 (146 chunks of 4096 numbers, ~5 MB
# of text); 200x1000 under valgrind (49 chunks: still read ahead and kept).
LARGE = (200, 1000) if VALGRIND else (600, 1000)
REPEAT = int(os.environ.get("MFS_STRESS_REPEAT", "1"))
# A hang is declared after this long past the run's end (a busy 2-core
# machine under a sanitizer is slow, a deadlock is forever).
SHAPE = tuple(int(d) for d in os.environ.get("MFS_STRESS_SHAPE", "250x400").split("x"))
GRACE = float(os.environ.get("MFS_STRESS_GRACE", "240"))
# The other source formats' variants run shorter (12 of them).
FORMAT_SECONDS = float(os.environ.get("MFS_STRESS_FORMAT_SECONDS", str(min(SECONDS, 2))))


def u32(v):
    return b"\xce" + struct.pack(">I", v)


def model_bytes(values):
    """A primitiv model with one float32 parameter w of values' shape."""
    key = b"w"
    out = u32(0) + u32(1) + u32(0x300) + u32(1)
    out += bytes([0x91, 0xa0 | len(key)]) + key
    out += bytes([0x90 | values.ndim]) + b"".join(u32(d) for d in values.shape) + u32(1)
    payload = values.astype("<f4").tobytes(order="F")  # primitiv is column-major
    out += b"\xc6" + struct.pack(">I", len(payload)) + payload + u32(0)
    return out


WORKER = r"""
import errno, mmap, os, sys, time
path, role, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
contents = [open(p, 'rb').read() for p in sys.argv[4:]]
end = time.time() + seconds
ops = bad = nodev = 0
k = 0
while time.time() < end:
    if role in ('read', 'mmap'):
        with open(path, 'rb') as f:
            if role == 'read':
                got = f.read()
            else:
                try:
                    with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
                        got = bytes(mm)
                except OSError as e:
                    if e.errno != errno.ENODEV:
                        raise
                    nodev += 1
                    got = contents[0]
        if got not in contents:
            bad += 1
            pre = [next((i for i in range(min(len(got), len(c))) if got[i] != c[i]), -1)
                   for c in contents]
            sys.stdout.write('BAD read of %d bytes (committed: %s; first differences at %s)\n'
                             % (len(got), [len(c) for c in contents], pre))
    else:
        body = contents[k % 2]
        k += 1
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        mv = memoryview(body)
        while mv:
            mv = mv[os.write(fd, mv):]
        os.close(fd)
        sys.stdout.write('WROTE %d\n' % ((k - 1) % 2))
    ops += 1
print('DONE %s %d %d %d' % (role, ops, bad, nodev))
"""


def dump_threads(m):
    """The daemon's threads, for a hang's report."""
    try:
        r = subprocess.run(["gdb", "-batch", "-p", str(m.proc.pid), "-ex", "thread apply all bt"],
                           capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return "(no thread dump: %s)" % e
    return r.stdout[-60000:] + r.stderr[-2000:]


class Primitiv:
    """A primitiv model with one float32 parameter w (column-major)."""
    file, order = "m.model", "F"

    def write(self, path, a):
        with open(path, "wb") as f:
            f.write(model_bytes(a))

    def tensor(self):
        return ("m.model", "params", "w", "value")

    def values(self, path, shape):
        got = decode(path)["params"]["w"]["value"]["values"]
        return np.array(got, dtype=np.float32).reshape(shape, order="F")


class Safetensors:
    """One F32 tensor w, header as the reference writer pads it."""
    file, order = "m.safetensors", "C"

    def write(self, path, a):
        st_write(path, {"w": a.astype("<f4")}, {"format": "pt"})

    def tensor(self):
        return ("m.safetensors", "tensors", "w")

    def values(self, path, shape):
        dt, got, raw = st_read(path)[1]["w"]
        check(dt == "F32" and got == tuple(shape), "the header: %s %s" % (dt, got))
        return np.frombuffer(raw, dtype="<f4").reshape(shape)


class Npz:
    """An archive of members w and b, written by NumPy (stored or deflated;
    w in C or Fortran order), or by zipfile to a stream (data descriptors
    after the members' data)."""

    def __init__(self, compressed, fortran=False, streamed=False):
        self.compressed = compressed
        self.streamed = streamed
        self.order = "F" if fortran else "C"
        self.file = "m%s%s%s.npz" % ("-z" if compressed else "", "-f" if fortran else "",
                                     "-dd" if streamed else "")

    def write(self, path, a):
        w = a.astype("<f4")
        w = np.asfortranarray(w) if self.order == "F" else w
        if self.streamed:
            savez_streamed(path, (("w", w), ("b", np.arange(5))),
                           zipfile.ZIP_DEFLATED if self.compressed else zipfile.ZIP_STORED)
            return
        save = np.savez_compressed if self.compressed else np.savez
        with open(path, "wb") as f:
            save(f, w=w, b=np.arange(5))

    def tensor(self):
        return (self.file, "tensors", "w")

    def values(self, path, shape):
        check(zipfile.ZipFile(path).testzip() is None, "the archive's CRCs")
        if self.streamed:
            descriptors(path)
        with np.load(path) as z:
            eq(z["b"].tolist(), list(range(5)), "the other member")
            return z["w"]


class Gguf:
    """A GGUF v3 file with one F32 tensor w (dims reversed) and a name."""
    file, order = "m.gguf", "C"

    def write(self, path, a):
        gw.write(path, [("general.name", "str", "stress")],
                 [("w", 0, list(reversed(a.shape)), a.astype("<f4").tobytes())])

    def tensor(self):
        return ("m.gguf", "tensors", "w")

    def values(self, path, shape):
        g = gw.read(path)
        eq(g["kvs"][0][2], b"stress", "general.name")
        name, ty, ne, off, raw = g["tensors"][0]
        eq(list(reversed(ne)), list(shape), "the tensor's dims")
        return np.frombuffer(raw, dtype="<f4").reshape(shape)


def stress(view, shape, readers, writers, opts=(), mappers=0, fmt=None, seconds=SECONDS):
    fmt = fmt or Primitiv()
    rng = np.random.default_rng(len(view) + shape[0])
    a = rng.standard_normal(shape).astype(np.float32)
    b = (a * 2 + 1).astype(np.float32)
    with Mount([], opts=list(opts)) as m:
        fmt.write(m.s(fmt.file), a)
        view_path = m.m(*fmt.tensor(), view)
        # The two contents as the view renders them (what readers must see).
        texts = []
        for vals in (b, a):
            if view == "values.txt":
                body = ("\n".join(" ".join(repr(float(x)) for x in row) for row in vals) + "\n").encode()
            elif view == "data":
                body = vals.astype("<f4").tobytes(order=fmt.order)
            else:
                body = None
            if body is None:
                path = os.path.join(m.tmp, "in.npy")
                np.save(path, vals.astype("<f4"))
                body = open(path, "rb").read()
            with open(view_path, "wb") as f:
                f.write(body)
            texts.append(m.read(*fmt.tensor(), view))
        files = []
        for k, t in enumerate(reversed(texts)):  # [a's, b's]
            p = os.path.join(m.tmp, "content%d" % k)
            with open(p, "wb") as f:
                f.write(t)
            files.append(p)
        total = [0, 0, 0, 0]  # reads, not whole, commits, mmaps refused
        for _ in range(REPEAT):
            r = one_round(m, fmt, view, view_path, files, texts, (a, b), readers, writers, mappers,
                          seconds)
            total = [x + y for x, y in zip(total, r)]
    print("%s %s %s %s: %d rounds, %d reads (%d not whole, %d mmaps refused), %d commits"
          % (fmt.file, view, shape, " ".join(opts), REPEAT, total[0], total[1], total[3], total[2]))


def one_round(m, fmt, view, view_path, files, texts, ab, readers, writers, mappers, seconds):
    """Readers (mappers of them by mmap) and writers for SECONDS, then the
    checks: (reads, reads not whole, commits, mmaps refused)."""
    a, b = ab
    roles = ["mmap"] * mappers + ["read"] * (readers - mappers) + ["write"] * writers
    workers = [subprocess.Popen(["/usr/bin/python3", "-c", WORKER, view_path, role,
                                 str(seconds)] + files,
                                stdout=subprocess.PIPE, text=True)
               for role in roles]
    deadline = time.time() + seconds + GRACE
    while time.time() < deadline and any(w.poll() is None for w in workers):
        time.sleep(0.2)
    if any(w.poll() is None for w in workers):
        stacks = dump_threads(m)
        m.proc.send_signal(signal.SIGKILL)  # aborts the blocked requests
        m.proc.wait()
        m.proc = None  # (dead: nothing for the mount's stop to check)
        subprocess.run(["fusermount3", "-u", "-z", m.mnt], stderr=subprocess.DEVNULL)
        for w in workers:
            w.kill()
        raise AssertionError("hang: workers still running %.0f s after the end;"
                             " daemon threads:\n%s" % (GRACE, stacks))
    outs = [w.communicate()[0] for w in workers]
    done = [l.split() for o in outs for l in o.splitlines() if l.startswith("DONE")]
    eq(len(done), readers + writers, "workers finished:\n" + "".join(outs))
    torn = sum(int(d[3]) for d in done)
    eq(torn, 0, "torn or foreign reads:\n" + "".join(outs)[-4000:])
    check(m.proc.poll() is None, "the daemon died")
    final = m.read(*fmt.tensor(), view)
    check(final in texts, "the view after the run is not a committed content")
    want = a if final == texts[1] else b if final == texts[0] else None
    # The source is a committed content, the one the view served last.
    got = fmt.values(m.s(fmt.file), a.shape)
    whole = [np.array_equal(got, v) for v in (a, b)]
    check(any(whole), "the source is neither committed content (%d, %d elements differ)"
          % tuple(int((got != v).sum()) for v in (a, b)))
    check(want is None or whole[0] == (want is a), "the source is not the last commit")
    return (sum(int(d[2]) for d in done if d[1] != "write"), torn,
            sum(int(d[2]) for d in done if d[1] == "write"),
            sum(int(d[4]) for d in done))


def test_rename_under_reader():
    """A file renamed over a view (sed -i, editors) commits with another
    file of the view open: the source is rewritten beside, and the open
    file reads its whole old content (an in-place patch would change it
    under the reader)."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((300, 300)).astype(np.float32)
    with Mount([]) as m:
        with open(m.s("m.model"), "wb") as f:
            f.write(model_bytes(a))
        view = m.m("m.model", "params", "w", "value", "values.txt")
        old = m.read("m.model", "params", "w", "value", "values.txt")
        new = ("\n".join(" ".join(repr(float(x)) for x in row) for row in a * 2) + "\n").encode()
        with open(view, "rb", buffering=0) as r:
            head = r.read(1000)
            tmp = m.m("m.model", "params", "w", "value", ".sedXYZ")
            with open(tmp, "wb") as f:
                f.write(new)
            os.rename(tmp, view)
            rest = r.read()
        eq(head + rest, old, "the open file's content")
        eq(m.read("m.model", "params", "w", "value", "values.txt"),
           m.read("m.model", "params", "w", "value", "values.txt"), "re-read")
        got = np.array(decode(m.s("m.model"))["params"]["w"]["value"]["values"], dtype=np.float32)
        check(np.array_equal(got, (a * 2).ravel(order="F")), "the source holds the new values")


def test_values_txt():
    stress("values.txt", SHAPE, 4, 2)


def test_data():
    stress("data", SHAPE, 4, 2)


def test_data_npy():
    stress("data.npy", SHAPE, 4, 2, mappers=2)


def test_large_data():
    # 4 MB: the kernel reads ahead in windows, several requests per read
    stress("data", (1000, 1000), 3, 2, mappers=1)


def test_no_text_cache():
    stress("values.txt", SHAPE, 4, 2, ["-o", "text_cache=0"])


def test_large_text():
    # ~9 MB of text: read ahead in windows, and kept from the size pass
    stress("values.txt", (1000, 1000), 3, 2)


def test_eight_processes():
    stress("values.txt", SHAPE, 5, 3)


def each_view(fmt):
    """values.txt, data and data.npy (two readers of it by mmap) of fmt's
    tensor: the commit paths differ by format (in place, header rewrite,
    archive re-compressed), the views and their checks do not."""
    for view, mappers in (("values.txt", 0), ("data", 0), ("data.npy", 2)):
        stress(view, SHAPE, 4, 2, mappers=mappers, fmt=fmt, seconds=FORMAT_SECONDS)


def test_safetensors():
    each_view(Safetensors())


def test_npz_stored():
    each_view(Npz(False))


def test_npz_deflated():
    each_view(Npz(True))


def test_gguf():
    each_view(Gguf())


def test_formats_uncached_and_large():
    """values.txt of each other format's tensor with the text cache off
    (every read renders), then of a LARGE tensor (600x1000, ~5 MB of text,
    200x1000 under valgrind; read ahead in windows; the deflated archive re-compressed at each commit);
    and of a Fortran-order deflated member that size (read by bands, each a
    pass over the stream, while writers replace it)."""
    for fmt in (Safetensors(), Npz(True), Gguf()):
        stress("values.txt", SHAPE, 4, 2, ["-o", "text_cache=0"], fmt=fmt,
               seconds=FORMAT_SECONDS)
        stress("values.txt", LARGE, 3, 2, fmt=fmt, seconds=FORMAT_SECONDS)
    stress("values.txt", LARGE, 3, 2, fmt=Npz(True, fortran=True), seconds=FORMAT_SECONDS)


def test_npz_descriptors():
    """values.txt and data of members followed by data descriptors (written
    to a stream), stored and deflated: each commit updates the member and
    its descriptor (a stored member's values in place, a deflated one
    written again)."""
    for fmt in (Npz(False, streamed=True), Npz(True, streamed=True)):
        for view in ("values.txt", "data"):
            stress(view, SHAPE, 4, 2, fmt=fmt, seconds=FORMAT_SECONDS)


if __name__ == "__main__":
    tests = [test_rename_under_reader, test_values_txt, test_data, test_data_npy, test_large_data,
             test_no_text_cache, test_large_text, test_eight_processes, test_safetensors,
             test_npz_stored, test_npz_deflated, test_gguf, test_formats_uncached_and_large,
             test_npz_descriptors]
    only = os.environ.get("MFS_STRESS_ONLY")
    if only:
        tests = [t for t in tests if t.__name__ in only.split(",")]
    run(tests)
