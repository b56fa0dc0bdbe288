"""Integration-test harness: real mounts of modelfs over a private copy of
test data. Run by meson (suite 'integration') with /usr/bin/python3; exits 77
(skip) only when /dev/fuse or fusermount3 is missing."""
import hashlib
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import zlib

BIN = os.environ.get("MFS_BIN", "build/fs/modelfs")
# MFS_VALGRIND=1: run the daemon under valgrind's memcheck; any error or
# leak fails the test when the mount stops.
VALGRIND = ["valgrind", "-q", "--error-exitcode=99", "--leak-check=full",
            "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
            "--track-fds=no"] if os.environ.get("MFS_VALGRIND") == "1" else []
# The daemon runs slowly (valgrind, or a sanitizer's build: scripts/test sets
# their options): tests that only repeat a path size themselves down.
SLOW = bool(VALGRIND or os.environ.get("ASAN_OPTIONS") or os.environ.get("TSAN_OPTIONS"))
DATA = os.environ.get("MFS_TEST_DATA", os.path.join(os.path.dirname(__file__), "..", "data"))


def skip_unless_fuse():
    if not os.path.exists("/dev/fuse") or shutil.which("fusermount3") is None:
        print("SKIP: /dev/fuse or fusermount3 missing")
        sys.exit(77)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def data(rel):
    return os.path.join(DATA, rel)


class Mount:
    """A mount of a fresh SOURCE directory holding copies of test files.

    files: list of paths relative to tests/data (copied flat into SOURCE, or
    to a name given as (rel, dest))."""

    def __init__(self, files=(), opts=(), foreground=True):
        skip_unless_fuse()
        self.tmp = tempfile.mkdtemp(prefix="mfs-it-")
        self.src = os.path.join(self.tmp, "src")
        self.mnt = os.path.join(self.tmp, "mnt")
        self.log = os.path.join(self.tmp, "modelfs.log")
        self.err = os.path.join(self.tmp, "stderr")
        os.makedirs(self.src)
        os.makedirs(self.mnt)
        for f in files:
            rel, dest = (f, os.path.basename(f)) if isinstance(f, str) else f
            d = os.path.join(self.src, dest)
            os.makedirs(os.path.dirname(d), exist_ok=True)
            if os.path.isdir(data(rel)):
                shutil.copytree(data(rel), d)
            else:
                shutil.copyfile(data(rel), d)
        self.opts = list(opts)
        self.foreground = foreground
        self.proc = None

    def start(self):
        args = VALGRIND + [BIN]
        if self.foreground:
            args.append("-f")
        args += [self.src, self.mnt, "-o", "log=" + self.log] + self.opts
        errf = open(self.err, "w")
        self.proc = subprocess.Popen(args, stdout=errf, stderr=errf)
        deadline = time.time() + (120 if VALGRIND else 20)
        while not os.path.ismount(self.mnt):
            if self.foreground and self.proc.poll() is not None:
                raise RuntimeError("modelfs exited: " + open(self.err).read())
            if time.time() > deadline:
                raise RuntimeError("mount did not appear")
            time.sleep(0.02)
        return self

    def __enter__(self):
        return self.start()

    def stop(self):
        if self.proc is None:
            return
        if os.path.ismount(self.mnt):
            subprocess.run(["fusermount3", "-u", self.mnt], check=False)
        elif self.proc.poll() is not None:
            # a dead daemon's mount is not a mount point to ismount
            subprocess.run(["fusermount3", "-u", "-z", self.mnt], check=False,
                           stderr=subprocess.DEVNULL)
        try:
            rc = self.proc.wait(timeout=120 if VALGRIND else 30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise RuntimeError("modelfs did not exit after unmount")
        self.proc = None
        err = open(self.err).read()
        if "Sanitizer" in err or "runtime error" in err or (VALGRIND and rc == 99):
            raise AssertionError("sanitizer report:\n" + err)
        if self.foreground and rc != 0:
            raise AssertionError("modelfs exited with %d:\n%s" % (rc, err))

    def __exit__(self, *exc):
        try:
            self.stop()
        finally:
            if exc[0] is None:
                shutil.rmtree(self.tmp, ignore_errors=True)
        return False

    # paths
    def m(self, *p):
        return os.path.join(self.mnt, *p)

    def s(self, *p):
        return os.path.join(self.src, *p)

    def read(self, *p):
        with open(self.m(*p), "rb") as f:
            return f.read()

    def text(self, *p):
        return self.read(*p).decode()

    def errors(self):
        # names in it are bytes from files: not necessarily UTF-8
        return self.read(".modelfs", "errors").decode("utf-8", "surrogateescape")

    def sh(self, cmd, check=True):
        """Run a shell command in the mount; returns CompletedProcess."""
        r = subprocess.run(["bash", "-c", cmd], cwd=self.mnt, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise AssertionError("command failed (%d): %s\n%s%s" % (r.returncode, cmd, r.stdout, r.stderr))
        return r


def rollback_journal(st, spans, size=None):
    """The rollback journal an in-place commit of a file of stat st leaves
    when it is cut short (codecs/core/journal.c, format MFSJRNL2): a 56-byte
    header (magic, device, inode, file size, spans, journal length, the
    header's CRC-32), (offset, length, old bytes) per span, the CRC-32 of
    all before it and an end mark. spans = [(offset, old bytes)]; size: the
    file size to record instead of st's."""
    total = 56 + sum(16 + len(d) for _, d in spans) + 16
    head = b"MFSJRNL2" + struct.pack("<QQQQQ", st.st_dev, st.st_ino,
                                     st.st_size if size is None else size, len(spans), total)
    body = head + struct.pack("<II", zlib.crc32(head), 0)
    for off, data in spans:
        body += struct.pack("<QQ", off, len(data)) + data
    return body + struct.pack("<Q", zlib.crc32(body)) + b"MFSJEND2"


def settle(path):
    """Read into path as a tool walking the tree would. A listing, stat or
    lookup indexes a file whose first bytes look like a model: one that does
    not parse is a plain file from then on (with its line in
    .modelfs/errors)."""
    if os.path.isdir(path):
        os.listdir(path)


def check(cond, msg="check failed"):
    if not cond:
        raise AssertionError(msg)


def eq(a, b, what=""):
    if a != b:
        raise AssertionError("%s: %r != %r" % (what, a, b))


def run(tests, fuse=True):
    """Run test functions in order; print what passed. fuse=False: the
    tests need no mount (they must not skip without /dev/fuse)."""
    if fuse:
        skip_unless_fuse()
    failed = 0
    for t in tests:
        t0 = time.time()
        try:
            t()
            print("ok   %-40s %.2fs" % (t.__name__, time.time() - t0))
        except Exception as e:  # noqa: BLE001 - report every failure
            failed += 1
            import traceback
            traceback.print_exc()
            print("FAIL %s: %s" % (t.__name__, e))
    sys.exit(1 if failed else 0)
