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


def mounted(mnt):
    """Whether mnt is a mount point, read from /proc/self/mountinfo: never
    stats into the mount (a stat would be a request to its daemon, and
    hangs on one that stopped answering)."""
    mnt = os.path.realpath(mnt)
    with open("/proc/self/mountinfo") as f:
        return any(line.split()[4] == mnt for line in f)


def unmount(mnt, proc=None):
    """Unmount mnt, retrying while it is busy (a reader just closing); lazily
    once proc (the daemon's Popen, if known) has exited or after 10 s."""
    for _ in range(40):
        if not mounted(mnt):
            return
        if subprocess.run(["fusermount3", "-u", mnt], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            return
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.25)
    subprocess.run(["fusermount3", "-u", "-z", mnt], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


class Daemon:
    """A FUSE daemon (argv) mounted on mnt: start() runs it (stdout and
    stderr to the file out) and returns once mnt is mounted; stop() unmounts
    it and returns the daemon's exit status. foreground=False: argv forks
    its daemon and exits once mounted (its status is the launcher's)."""

    def __init__(self, argv, mnt, out, foreground=True, timeout=20):
        self.argv, self.mnt, self.out = list(argv), os.path.realpath(mnt), out
        self.foreground, self.timeout = foreground, timeout
        self.proc = None

    @property
    def pid(self):
        return self.proc.pid

    def start(self):
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                     stderr=self.out)
        deadline = time.monotonic() + self.timeout
        while not mounted(self.mnt):
            if self.foreground and self.proc.poll() is not None:
                raise RuntimeError("%s exited (%d) before mounting: %s"
                                   % (os.path.basename(self.argv[0]), self.proc.returncode,
                                      self._output()))
            if time.monotonic() > deadline:
                self.proc.kill()
                self.proc.wait()
                raise RuntimeError("%s did not mount %s in %d s"
                                   % (os.path.basename(self.argv[0]), self.mnt, self.timeout))
            time.sleep(0.002)
        return self

    def _output(self):
        name = getattr(self.out, "name", None)
        if not isinstance(name, str):
            return ""
        with open(name, errors="replace") as f:
            return f.read()[-2000:]

    def stop(self, timeout=30):
        """Unmount, then wait for the daemon (killed after timeout s:
        RuntimeError)."""
        unmount(self.mnt, self.proc)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("%s did not exit after unmount" % os.path.basename(self.argv[0]))


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
        self.proc = None      # the daemon's Popen while it runs
        self.daemon = None

    def start(self):
        args = VALGRIND + [BIN]
        if self.foreground:
            args.append("-f")
        args += [self.src, self.mnt, "-o", "log=" + self.log] + self.opts
        with open(self.err, "w") as errf:
            self.daemon = Daemon(args, self.mnt, errf, foreground=self.foreground,
                                 timeout=120 if VALGRIND else 20).start()
        self.proc = self.daemon.proc
        return self

    def __enter__(self):
        return self.start()

    def stop(self):
        if self.proc is None:
            return
        rc = self.daemon.stop(timeout=120 if VALGRIND else 30)
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
