"""Rollback journals planted in SOURCE are never trusted (as root, -o
allow_other, over SOURCE of mode 1777 with a home/ owned by uid 65534, as
test_security.py sets it up).

A commit's journal, .NAME.mfs-journal beside NAME, holds the old bytes of
an in-place patch; recovery writes them back. Recovery runs at mount (the
sweep of every directory), at the parse of a lookup and in `modelfs
cat/set`; the daemon and the command line run as root. A journal applies
only to the file it sits beside (the name derived from the journal's own
name), and only when it is a regular file owned by this process's user,
mode 0600, one link, of the current format, with every length and the
CRC-32 checked before the first byte is written. Anything else is left in
place, not applied, and reported (an errors line; a stderr line from the
command line); the file it sits beside is read as it is.

Each planted file, what it tests (targets are copies of a small .npy; the
"old bytes" a journal holds are PWNED!! at the first element):

Made by uid 65534 (setpriv):
- abs: beside home/abs.npy, an old-format (MFSJRNL1) journal, checksum
  right, whose embedded name is the absolute path of a root-owned file
  outside SOURCE (<tmp>/s/victim_abs) with its device, inode and size:
  the attack of issue 31. The file outside must not change.
- rel: the same naming ../../victim_rel (outside SOURCE, relative).
- inside: beside home/inside.npy, naming ../root_in.npy, a root-owned file
  of SOURCE.
- beside: src/.root_bs.npy.mfs-journal beside root_bs.npy (root's, in
  SOURCE, where the sticky directory lets uid 65534 create names), naming
  that very file.
- owner: a journal in the current format, right in every byte, beside a
  root-owned file, but owned by uid 65534: owned by another user.
- link: the journal is a symbolic link to a root-owned file outside.
- fifo: the journal is a FIFO (a read-only mount or `modelfs cat` must not
  block opening it).
- short: a current-format journal cut short, owned by uid 65534.

Made by root (this process's user: only the check named fails):
- mode: mode 0644.
- crc: one byte of the old bytes changed: the CRC-32 does not match.
- big: the journal names a file size larger than its file (span within
  it): the header says 200 bytes, the file has 152.
- span: a span that ends past the end of the file.
- old: an old-format journal naming the file it sits beside.
- hard: a second link to a valid journal (st_nlink 2).
- torn: a valid journal cut short, as a commit killed while writing it
  leaves it: its patch never began, so it is removed and the file kept.
- stale: a valid journal made for another inode (the file replaced since):
  removed, the file kept.
- valid: a journal of ours, whole and right: rolled back (the crash case;
  test_crash and test_journal make real ones)."""
import os
import shutil
import stat
import struct
import subprocess
import time

from harness import BIN, DATA, check, eq, rollback_journal, run, sha
from test_security import NOBODY, SecMount

NPY = os.path.join(DATA, "numpy", "f32.npy")  # 152 bytes, data at 128
EVIL = b"PWNED!!"
AT = 128
SUFFIX = ".mfs-journal"


def fnv64(data, seed):
    """mfs_hash64 (codecs/core/bytes.h): FNV-1a and a final mix."""
    m = (1 << 64) - 1
    h = 0xcbf29ce484222325 ^ seed
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & m
    h ^= h >> 33
    h = (h * 0xff51afd7ed558ccd) & m
    return h ^ (h >> 33)


def journal_v1(name, st, spans):
    """The old format: header, the target's name, spans, hash, end mark."""
    body = b"MFSJRNL1" + struct.pack("<QQQQQ", st.st_dev, st.st_ino, st.st_size, len(spans),
                                     len(name)) + name
    for off, data in spans:
        body += struct.pack("<QQ", off, len(data)) + data
    return body + struct.pack("<Q", fnv64(body, 0x6a726e6c)) + b"MFSJEND!"


def jname(name):
    return "." + name + SUFFIX


def beside(journal):
    """The file a journal sits beside: its name derived from the journal's."""
    return os.path.join(os.path.dirname(journal), os.path.basename(journal)[1:-len(SUFFIX)])


class Planted:
    """The planted files of one run, and what must become of each."""

    def __init__(self, m):
        self.m = m
        self.cases = {}   # key -> (target path, journal path, fate, expected target sha)
        os.makedirs(m.s("t"), exist_ok=True)

    def target(self, path, owner=0):
        shutil.copyfile(NPY, path)
        os.chmod(path, 0o644)
        os.chown(path, owner, owner)
        return os.stat(path)

    def add(self, key, target, journal, fate, after=None):
        self.cases[key] = (target, journal, fate, after or sha(target))

    def plant(self):
        m = self.m
        code = ""

        def as_nobody(path, data):
            nonlocal code
            code += "write_bytes(%r, bytes.fromhex(%r))\n" % (path, data.hex())

        # outside SOURCE, inside it, beside root's file: old-format attacks
        outside = {k: m.victim("victim_" + k, 0o644) for k in ("abs", "rel")}
        for key, mine, vpath, name in (
                ("abs", m.s("home", "abs.npy"), outside["abs"], outside["abs"].encode()),
                ("rel", m.s("home", "rel.npy"), outside["rel"], b"../../victim_rel"),
                ("inside", m.s("home", "inside.npy"), m.s("root_in.npy"), b"../root_in.npy"),
                ("beside", m.s("root_bs.npy"), m.s("root_bs.npy"), b"root_bs.npy")):
            st_v = self.target(vpath)
            if mine != vpath:
                self.target(mine, NOBODY)
            jp = os.path.join(os.path.dirname(mine), jname(os.path.basename(mine)))
            as_nobody(jp, journal_v1(name, st_v, [(AT, EVIL)]))
            self.add(key, vpath, jp, "left")
        # the current format, right in every byte, but uid 65534's
        p = m.s("root_own.npy")
        st = self.target(p)
        as_nobody(m.s(jname("root_own.npy")), rollback_journal(st, [(AT, EVIL)]))
        self.add("owner", p, m.s(jname("root_own.npy")), "left")
        # a cut-short one of uid 65534's
        p = m.s("home", "short.npy")
        st = self.target(p, NOBODY)
        as_nobody(m.s("home", jname("short.npy")), rollback_journal(st, [(AT, EVIL)])[:70])
        self.add("short", p, m.s("home", jname("short.npy")), "left")
        # a link and a FIFO
        victim = m.victim("victim_link", 0o644)
        self.target(victim)
        p = m.s("home", "link.npy")
        self.target(p, NOBODY)
        code += "os.symlink('../../victim_link', %r)\n" % m.s("home", jname("link.npy"))
        self.add("link", victim, m.s("home", jname("link.npy")), "left")
        self.cases["link_beside"] = (p, m.s("home", jname("link.npy")), "left", sha(p))
        p = m.s("home", "fifo.npy")
        self.target(p, NOBODY)
        code += "os.mkfifo(%r)\n" % m.s("home", jname("fifo.npy"))
        self.add("fifo", p, m.s("home", jname("fifo.npy")), "left")
        out = m.as_user(NOBODY, "def write_bytes(p, b):\n    with open(p, 'wb') as f:\n"
                                "        f.write(b)\n" + code)
        check(not out, "planting as uid 65534: %r" % out)
        self.plant_root()

    def plant_root(self):
        """Journals of this process's user, each failing one check (or none)."""
        t = lambda n: self.m.s("t", n)  # noqa: E731
        j = lambda n: self.m.s("t", jname(n))  # noqa: E731

        def put(key, data, mode=0o600, fate="left", after=None):
            with open(j(key + ".npy"), "wb") as f:
                f.write(data)
            os.chmod(j(key + ".npy"), mode)
            self.add(key, t(key + ".npy"), j(key + ".npy"), fate, after)

        sts = {k: self.target(t(k + ".npy")) for k in
               ("mode", "crc", "big", "span", "old", "hard", "torn", "stale", "valid")}
        put("mode", rollback_journal(sts["mode"], [(AT, EVIL)]), mode=0o644)
        bad = bytearray(rollback_journal(sts["crc"], [(AT, EVIL)]))
        bad[56 + 16] ^= 1
        put("crc", bytes(bad))
        put("big", rollback_journal(sts["big"], [(AT, EVIL)], size=200))
        put("span", rollback_journal(sts["span"], [(150, EVIL)]))
        put("old", journal_v1(b"old.npy", sts["old"], [(AT, EVIL)]))
        put("hard", rollback_journal(sts["hard"], [(AT, EVIL)]))
        os.link(j("hard.npy"), self.m.s("t", ".second-name"))
        put("torn", rollback_journal(sts["torn"], [(AT, EVIL)])[:-9], fate="removed")
        other = os.stat(NPY)
        put("stale", rollback_journal(other, [(AT, EVIL)]), fate="removed")
        with open(NPY, "rb") as f:
            new = f.read()
        new = new[:AT] + EVIL + new[AT + len(EVIL):]
        with open(t("after"), "wb") as f:
            f.write(new)
        put("valid", rollback_journal(sts["valid"], [(AT, EVIL)]), fate="applied", after=sha(t("after")))
        os.unlink(t("after"))

    def settled(self, errors):
        """Whether recovery has reached every case (the mount's sweep runs
        in the background)."""
        for key, (target, journal, fate, after) in self.cases.items():
            if fate == "left" and os.path.basename(journal) not in errors:
                return False
            if fate != "left" and os.path.lexists(journal):
                return False
        return True

    def verify(self, errors, where):
        for key, (target, journal, fate, after) in sorted(self.cases.items()):
            what = "%s, %s" % (where, key)
            eq(sha(target), after, what + ": the target's content")
            if fate == "left":
                check(os.path.lexists(journal), what + ": the journal was removed")
                check(os.path.basename(journal) in errors,
                      what + ": no line names the journal left alone")
            else:
                check(not os.path.lexists(journal), what + ": the journal is still there")


def wait_settled(pl, errors_of, deadline_s=60):
    deadline = time.time() + deadline_s
    errors = errors_of()
    while not pl.settled(errors) and time.time() < deadline:
        time.sleep(0.1)
        errors = errors_of()
    return errors


def test_planted_at_mount():
    """Every planted journal present when the mount starts: the sweep of
    each directory (mfs_recover_dir)."""
    m = SecMount()
    pl = Planted(m)
    pl.plant()
    with m:
        errors = wait_settled(pl, m.errors)
        pl.verify(errors, "at mount")


def test_planted_at_lookup():
    """Planted under a running mount, then looked at through it by uid
    65534: the parse's recovery (fs/fsmodel.c)."""
    with SecMount() as m:
        pl = Planted(m)
        pl.plant()
        code = ""
        for key, (target, journal, fate, after) in pl.cases.items():
            rel = os.path.relpath(beside(journal), m.src)
            code += "tryit(%r, lambda: sorted(os.listdir(%r)))\n" % (key, m.m(rel))
        out = m.as_user(NOBODY, code)
        for key, got in out.items():
            check("values.txt" in got, "at lookup, %s: not shown as a model: %r" % (key, got))
        pl.verify(m.errors(), "at lookup")


def test_planted_cli():
    """`modelfs cat` (and `set`, for one) of the file beside each planted
    journal, run as root: the command line's recovery (fs/cli.c). A journal
    left alone is told on stderr; cat reads the file, set commits (by a
    rewrite: the journal's name is taken)."""
    m = SecMount()
    pl = Planted(m)
    pl.plant()
    errors = ""
    for key, (target, journal, fate, after) in sorted(pl.cases.items()):
        r = subprocess.run([BIN, "cat", beside(journal), "shape"], capture_output=True, timeout=60)
        eq((r.returncode, r.stdout), (0, b"2 3\n"), "cat, %s: %r" % (key, r.stderr))
        errors += r.stderr.decode(errors="replace")
    pl.verify(errors, "modelfs cat")
    model = m.s("home", "abs.npy")
    r = subprocess.run([BIN, "set", model, "values.txt"], input=b"1 2 3\n4 5 6\n",
                       capture_output=True, timeout=60)
    eq(r.returncode, 0, "set beside a planted journal: %r" % r.stderr)
    check(jname("abs.npy").encode() in r.stderr, "set: no line names the journal: %r" % r.stderr)
    r = subprocess.run([BIN, "cat", model, "values.txt"], capture_output=True, timeout=60)
    eq(r.stdout, b"1 2 3\n4 5 6\n", "set: the new values")
    pl.verify(errors, "modelfs set")
    shutil.rmtree(m.tmp, ignore_errors=True)


def test_fifo_read_only():
    """A FIFO planted as a journal: a read-only mount's lookup of the file
    beside it does not block opening it, and shows the file."""
    m = SecMount()
    m.opts += ["-o", "ro"]
    shutil.copyfile(NPY, m.s("home", "f.npy"))
    m.as_user(NOBODY, "os.mkfifo(%r)" % m.s("home", jname("f.npy")))
    with m:
        r = subprocess.run(["cat", m.m("home", "f.npy", "shape")], capture_output=True,
                           timeout=60)
        eq(r.stdout, b"2 3\n", "read-only mount: %r" % r.stderr)
        check(jname("f.npy") in m.errors(), "read-only mount: no errors line")
        check(stat.S_ISFIFO(os.lstat(m.s("home", jname("f.npy"))).st_mode), "the FIFO is gone")


if __name__ == "__main__":
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        print("SKIP: needs root and setpriv")
        raise SystemExit(77)
    run([test_planted_at_mount, test_planted_at_lookup, test_planted_cli, test_fifo_read_only])
