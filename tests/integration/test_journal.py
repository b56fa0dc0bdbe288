"""The rollback journal of in-place commits under concurrency and crashes.

- race: one writer commits changes of two elements of one tensor (two spans
  patched in place), sequentially, while other processes loop stat of the
  model and cat of a view (each lookup may parse the file again): every
  commit that returned success is in the source right after it, both
  elements (never one new, one old), and the source ends as the last one.
  Commits: MFS_JOURNAL_COMMITS (default 300); MFS_JOURNAL_REPEAT runs;
  MFS_JOURNAL_ONLY: comma-separated test names to run (default all).
- crash: the daemon is killed between the two writes of an in-place patch
  (strace injects SIGKILL at the third pwrite64); then neither a read-only
  mount nor `modelfs cat` serves the half-patched file: it is refused, with
  an errors line; a writable mount then rolls it back.
- recovery racing a rewrite: `modelfs set --no-inplace` rewrites the model
  (a temporary file renamed over it) in a loop while the directory is
  mounted again and again (each mount removes leftover temporary files):
  a commit's own temporary file is never taken for a leftover."""
import fcntl
import os
import shutil
import struct
import subprocess
import time

from harness import BIN, Mount, check, eq, run
from primitiv_decode import decode

COMMITS = int(os.environ.get("MFS_JOURNAL_COMMITS", "300"))
REPEAT = int(os.environ.get("MFS_JOURNAL_REPEAT", "1"))
MODEL = "mlp_adam_2steps.model"
VIEW = ("params", "encoder", "w", "value", "values.txt")
ROWS = 8  # encoder/w is 8 x 4, kept column-major


def elements(src):
    """[0,0] and [7,3] of encoder/w in the source file."""
    v = decode(src)["params"]["encoder/w"]["value"]["values"]
    return v[0], v[7 + 3 * ROWS]


def edited(text, value):
    """values.txt with [0,0] and [7,3] set to value."""
    rows = [line.split() for line in text.splitlines()]
    rows[0][0] = rows[7][3] = value
    return "\n".join(" ".join(r) for r in rows) + "\n"


READER = r"""
import os, sys, time
model, view = sys.argv[1], sys.argv[2]
while not os.path.exists(sys.argv[3]):
    try:
        os.stat(model)
        with open(view, 'rb') as f:
            f.read()
    except OSError:
        pass  # a lookup during a commit may see the entry change: not our check
"""


def race():
    with Mount(["primitiv/" + MODEL]) as m:
        text = m.text(MODEL, *VIEW)
        stop = os.path.join(m.tmp, "stop")
        readers = [subprocess.Popen(["/usr/bin/python3", "-c", READER, m.m(MODEL),
                                     m.m(MODEL, "params", "encoder", "w", "value", "data"), stop])
                   for _ in range(2)]
        lost, torn, failed = [], [], []
        try:
            for k in range(COMMITS):
                value = "%d.5" % (k + 1)
                try:
                    fd = os.open(m.m(MODEL, *VIEW), os.O_WRONLY | os.O_TRUNC)
                    try:
                        os.write(fd, edited(text, value).encode())
                    finally:
                        os.close(fd)
                except OSError as e:
                    failed.append((k, str(e)))
                    continue
                got = elements(m.s(MODEL))
                if got[0] != got[1]:
                    torn.append((k, got))
                elif got[0] != float(value):
                    lost.append((k, got))
        finally:
            open(stop, "w").close()
            for r in readers:
                r.wait(timeout=300)
        eq(failed, [], "commits that failed")
        eq(lost, [], "acknowledged commits not in the source")
        eq(torn, [], "torn sources (one element new, one old)")
        m.stop()
        eq(elements(m.s(MODEL)), (COMMITS + 0.5, COMMITS + 0.5), "the source at the end")
        check(not any(n.endswith(".mfs-journal") for n in os.listdir(m.src)), "a journal is left")
    print("%d commits with 2 readers: none lost, none torn" % COMMITS)


def test_commit_race():
    for _ in range(REPEAT):
        race()


def crashed_source(m):
    """Commit a change of [0,0] and [7,3] under a daemon killed at its third
    pwrite64 (journal, first span, second span): the source is half patched,
    its journal beside it. Returns the elements before."""
    before = elements(m.s(MODEL))
    mnt_args = [BIN, "-f", m.src, m.mnt, "-o", "log=" + m.log]
    p = subprocess.Popen(["strace", "-f", "-qq", "-o", "/dev/null",
                          "-e", "inject=pwrite64:signal=SIGKILL:when=3"] + mnt_args,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not os.path.ismount(m.mnt):
        check(p.poll() is None and time.time() < deadline, "mount under strace failed")
        time.sleep(0.05)
    text = open(m.m(MODEL, *VIEW)).read()
    try:
        with open(m.m(MODEL, *VIEW), "w") as f:
            f.write(edited(text, "99.5"))
    except OSError:
        pass  # the daemon died under the commit
    p.wait(timeout=60)
    subprocess.run(["fusermount3", "-u", "-z", m.mnt], stderr=subprocess.DEVNULL)
    return before


def test_crash_read_only():
    m = Mount(["primitiv/" + MODEL])
    before = crashed_source(m)
    journals = [n for n in os.listdir(m.src) if n.endswith(".mfs-journal")]
    eq(len(journals), 1, "journals after the kill")
    got = elements(m.s(MODEL))
    check(got[0] != got[1], "the kill did not leave the source half patched: %r" % (got,))
    # a read-only mount refuses the file
    ro = Mount([], opts=["-o", "ro"])
    ro.src = m.src
    with ro:
        check(not os.path.isdir(ro.m(MODEL)) or not os.path.exists(ro.m(MODEL, *VIEW)),
              "a read-only mount serves a half-patched file")
        check("journal" in ro.errors(), "no errors line: %r" % ro.errors())
    eq(elements(m.s(MODEL)), got, "the read-only mount changed the source")
    # modelfs cat refuses it too when it may not roll it back (read-only
    # directory: not as root, who writes anyway)
    if os.geteuid() != 0:
        os.chmod(m.src, 0o555)
        try:
            r = subprocess.run([BIN, "cat", m.s(MODEL), "/".join(VIEW)], capture_output=True)
        finally:
            os.chmod(m.src, 0o755)
        check(r.returncode != 0 and b"journal" in r.stderr,
              "modelfs cat served a half-patched file: %r" % (r.stderr,))
    # a writable mount rolls it back
    with m:
        m.text(MODEL, *VIEW)
        m.stop()
        eq(elements(m.s(MODEL)), before, "after recovery")
        check(not any(n.endswith(".mfs-journal") for n in os.listdir(m.src)), "a journal is left")


F_OFD_SETLK = 37  # Linux


def test_crash_cli():
    """`modelfs cat` that finds the journal held (a commit under way) leaves
    it alone and refuses to read; with the journal abandoned and write
    access it rolls the file back first."""
    m = Mount(["primitiv/" + MODEL])
    before = crashed_source(m)
    got = elements(m.s(MODEL))
    jn = [n for n in os.listdir(m.src) if n.endswith(".mfs-journal")]
    eq(len(jn), 1, "journals after the kill")
    jfd = os.open(os.path.join(m.src, jn[0]), os.O_RDWR)
    fcntl.fcntl(jfd, F_OFD_SETLK, struct.pack("hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0))
    try:
        r = subprocess.run([BIN, "cat", m.s(MODEL), "/".join(VIEW)], capture_output=True)
    finally:
        os.close(jfd)
    check(r.returncode != 0 and b"commit" in r.stderr,
          "modelfs cat read a file under a held journal: %r" % (r.stderr,))
    eq(elements(m.s(MODEL)), got, "modelfs cat touched a held journal's file")
    r = subprocess.run([BIN, "cat", m.s(MODEL), "/".join(VIEW)], capture_output=True)
    eq(r.returncode, 0, "modelfs cat: %r" % (r.stderr,))
    eq(elements(m.s(MODEL)), before, "after modelfs cat")
    shutil.rmtree(m.tmp, ignore_errors=True)


SETTER = r"""
import subprocess, sys
bin_, src, view, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
for i in range(n):
    r = subprocess.run([bin_, "set", "--no-inplace", src, view, sys.argv[5 + i % 2]],
                       capture_output=True)
    if r.returncode:
        sys.exit("commit %d: %s" % (i, r.stderr.decode()))
"""


def test_recovery_spares_commits():
    m = Mount(["primitiv/" + MODEL])
    src = m.s(MODEL)
    text = subprocess.run([BIN, "cat", src, "/".join(VIEW)], capture_output=True,
                          check=True).stdout.decode()
    values = [edited(text, "0.5"), edited(text, "1.5")]
    # each commit is a run of the command line: fewer under the tools that
    # slow it down 10-50x
    slow = any(os.environ.get(v) for v in ("MFS_VALGRIND", "ASAN_OPTIONS", "TSAN_OPTIONS"))
    n = 20 if slow else 150
    writer = subprocess.Popen(["/usr/bin/python3", "-c", SETTER, BIN, src, "/".join(VIEW),
                               str(n)] + values, stderr=subprocess.PIPE)
    mounts = 0
    while writer.poll() is None:
        m.start()
        m.stop()
        mounts += 1
    err = writer.communicate()[1].decode()
    eq(writer.returncode, 0, "a rewrite failed (%d mounts meanwhile): %s" % (mounts, err[-2000:]))
    eq(elements(src), (1.5, 1.5) if n % 2 == 0 else (0.5, 0.5), "the last commit")
    leftovers = [f for f in os.listdir(m.src) if f.startswith(".")]
    eq(leftovers, [], "files left beside the model")
    shutil.rmtree(m.tmp, ignore_errors=True)

if __name__ == "__main__":
    tests = [test_commit_race, test_crash_read_only, test_crash_cli, test_recovery_spares_commits]
    only = os.environ.get("MFS_JOURNAL_ONLY")
    if only:
        tests = [t for t in tests if t.__name__ in only.split(",")]
    run(tests)
