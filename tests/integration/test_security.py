"""Security of a mount shared by several users (run as root, -o allow_other,
a SOURCE directory of mode 1777): no operation follows a symbolic link in
SOURCE, and what a user creates through the mount is theirs.

Links: a link planted under a name the kernel still knows (a negative
entry; a file held open, renamed away in SOURCE) never carries a write,
chmod, chown, utimens or getxattr to its target; mkdir, mknod, symlink,
link, rename and unlink over a planted link act on the link. Each case
runs as root and as uid 65534 (setpriv --reuid=65534 --regid=65534
--clear-groups), in a SOURCE directory owned by that user.

SOURCE is <tmp>/s/src and the mount <tmp>/mnt: a relative link ../../vK
planted in SOURCE's home/ names <tmp>/s/vK when the daemon follows it in
SOURCE, and <tmp>/vK when the kernel follows the mount's link (which is
the link shown as a link: the calling user's own path walk). Only the
first must never change, whichever way the kernel took.

Caller: files, directories, links and nodes created through the mount
belong to their creator, with the creator's umask (as the kernel passes
it, whatever the daemon's own umask); set-group-ID is dropped as the
kernel drops it; the creator can chmod and remove them."""
import errno
import json
import os
import shutil
import stat
import subprocess

from harness import DATA, Mount, check, eq, run

NOBODY = 65534
SETPRIV = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]
SECRET = b"secret\n"

# Run in a child as the user: tryit(key, fn) records "ok", the result, or
# the errno name; the child prints the record as JSON.
PRELUDE = """
import errno, json, os, sys
out = {}
def tryit(k, f):
    try:
        r = f()
        out[k] = "ok" if r is None else r
    except OSError as e:
        out[k] = errno.errorcode.get(e.errno, str(e.errno))
def write(p, data):
    with open(p, "w") as f:
        f.write(data)
"""


class SecMount(Mount):
    """A mount with allow_other over <tmp>/s/src (mode 1777), a home/ in it
    owned by uid 65534, and every path component open to that user. The
    daemon runs with umask 022 (what the caller's umask must override)."""

    def __init__(self):
        super().__init__(opts=["-o", "allow_other"])
        up = os.path.dirname(self.tmp)
        while up != "/":
            check(os.stat(up).st_mode & 0o001, "uid 65534 cannot reach %s: set TMPDIR" % up)
            up = os.path.dirname(up)
        os.chmod(self.tmp, 0o755)
        os.chmod(self.mnt, 0o755)
        os.rmdir(self.src)
        self.top = os.path.join(self.tmp, "s")
        os.mkdir(self.top)
        os.chmod(self.top, 0o755)
        self.src = os.path.join(self.top, "src")
        os.mkdir(self.src)
        os.chmod(self.src, 0o1777)
        os.mkdir(self.s("home"))
        os.chown(self.s("home"), NOBODY, NOBODY)

    def start(self):
        old = os.umask(0o022)
        try:
            return super().start()
        finally:
            os.umask(old)

    def victim(self, name, mode=0o600):
        """A root-owned file beside SOURCE (<tmp>/s/name) with an attribute."""
        p = os.path.join(self.top, name)
        with open(p, "wb") as f:
            f.write(SECRET)
        os.chmod(p, mode)
        os.setxattr(p, "user.secret", b"s3cret")
        return p

    def as_user(self, uid, code):
        argv = ["/usr/bin/python3", "-c", PRELUDE + code + "\nprint(json.dumps(out))\n"]
        r = subprocess.run((SETPRIV if uid else []) + argv, capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            raise AssertionError("child failed: %s" % r.stderr)
        return json.loads(r.stdout)


def unchanged(path, st0, what):
    st = os.lstat(path)
    eq(stat.S_IMODE(st.st_mode), stat.S_IMODE(st0.st_mode), what + ": mode of " + path)
    eq((st.st_uid, st.st_gid), (st0.st_uid, st0.st_gid), what + ": owner of " + path)
    eq(st.st_mtime_ns, st0.st_mtime_ns, what + ": mtime of " + path)
    with open(path, "rb") as f:
        eq(f.read(), SECRET, what + ": content of " + path)


def users():
    return [(0, "root"), (NOBODY, "uid 65534")]


# ---- no link in SOURCE is ever followed ----------------------------------


def test_create_over_link_under_negative_entry():
    """stat (ENOENT, a negative entry), a link planted in SOURCE, then a
    write through the mount: the target is not written, a missing target
    is not created. Five names each, as root and as uid 65534."""
    with SecMount() as m:
        for uid, who in users():
            vs = {}
            code = ""
            for k in range(5):
                name = "n%d_%d" % (uid, k)
                vs[name] = m.victim("v" + name)
                code += """
tryit("stat_{n}", lambda: os.stat({mp!r}) and None)
os.symlink("../../v{n}", {sp!r})
tryit("write_{n}", lambda: write({mp!r}, "pwned"))
tryit("stat2_{n}", lambda: os.stat({mq!r}) and None)
os.symlink("../../missing{n}", {sq!r})
tryit("write2_{n}", lambda: write({mq!r}, "pwned"))
""".format(n=name, mp=m.m("home", name), sp=m.s("home", name),
                    mq=m.m("home", "q" + name), sq=m.s("home", "q" + name))
            st0 = {n: os.stat(p) for n, p in vs.items()}
            out = m.as_user(uid, code)
            for n, p in vs.items():
                eq(out["stat_" + n], "ENOENT", who + ": negative entry")
                unchanged(p, st0[n], who + ": write over a planted link")
                check(not os.path.exists(os.path.join(m.top, "missingq" + n)),
                      who + ": a dangling link's target was created")
                check(os.path.islink(m.s("home", n)), who + ": the link was replaced")


def test_setattr_through_open_file_after_swap():
    """A file of the user's, open through the mount, renamed away in SOURCE
    and a link to a root-only file put under its name: fchmod, fchown,
    futimens and fgetxattr of the open file never reach the root file."""
    with SecMount() as m:
        for uid, who in users():
            v = m.victim("secret%d" % uid)
            st0 = os.stat(v)
            mine = m.s("home", "mine%d.txt" % uid)
            out = m.as_user(uid, """
write({mine!r}, "mine\\n")
fd = os.open({mnt!r}, os.O_RDONLY)
os.stat({mnt!r})
os.rename({mine!r}, {mine!r} + ".away")
os.symlink({v!r}, {mine!r})
tryit("chmod", lambda: os.fchmod(fd, 0o666))
tryit("chown", lambda: os.fchown(fd, {nobody}, {nobody}))
tryit("utime", lambda: os.utime(fd, (1, 1)))
tryit("getxattr", lambda: os.getxattr(fd, "user.secret").decode())
""".format(mine=mine, mnt=m.m("home", "mine%d.txt" % uid), v=v, nobody=NOBODY))
            unchanged(v, st0, who + ": " + repr(out))
            check(out["getxattr"] != "s3cret", who + ": the link's target's attribute was read")
            check(os.path.islink(mine), who + ": the link was replaced")


def test_names_over_planted_links():
    """mkdir, mkfifo, symlink and link onto a link planted under a negative
    entry: EEXIST, nothing made at its target; rename over it replaces the
    link; unlink removes the link; getxattr without following reads no
    target attribute."""
    with SecMount() as m:
        for uid, who in users():
            v = m.victim("target%d" % uid)
            st0 = os.stat(v)
            h = "h%d_" % uid
            names = ["d", "p", "l", "k", "r", "u", "x"]
            code = "write(%r, 'own\\n')\nwrite(%r, 'own2\\n')\n" % (
                m.s("home", h + "own"), m.s("home", h + "own2"))
            for n in names:
                # a negative entry, then the link: to the victim for r, u, x;
                # to a missing name for what would create
                tgt = "../../target%d" % uid if n in "rux" else "../../missing%s%d" % (n, uid)
                if n != "u":  # a negative entry would answer unlink itself
                    code += "tryit('neg_%s', lambda: os.stat(%r) and None)\n" % (n, m.m("home", h + n))
                code += "os.symlink(%r, %r)\n" % (tgt, m.s("home", h + n))
            mm = lambda n: m.m("home", h + n)  # noqa: E731
            code += """
tryit("mkdir", lambda: os.mkdir({d!r}))
tryit("mkfifo", lambda: os.mkfifo({p!r}))
tryit("symlink", lambda: os.symlink("x", {l!r}))
tryit("link", lambda: os.link({own!r}, {k!r}))
tryit("rename", lambda: os.rename({own2!r}, {r!r}))
tryit("unlink", lambda: os.unlink({u!r}))
tryit("getxattr", lambda: os.getxattr({x!r}, "user.secret", follow_symlinks=False).decode())
""".format(d=mm("d"), p=mm("p"), l=mm("l"), k=mm("k"), own=mm("own"), own2=mm("own2"),
                r=mm("r"), u=mm("u"), x=mm("x"))
            out = m.as_user(uid, code)
            for op in ("mkdir", "mkfifo", "symlink", "link"):
                eq(out[op], "EEXIST", who + ": " + op + " over a link")
            eq(out["rename"], "ok", who + ": rename over a link")
            eq(out["unlink"], "ok", who + ": unlink of a link")
            check(out["getxattr"] != "s3cret", who + ": getxattr followed the link")
            for n in "dplk":
                check(not os.path.lexists(os.path.join(m.top, "missing%s%d" % (n, uid))),
                      who + ": something was made at a link's target")
            check(stat.S_ISREG(os.lstat(m.s("home", h + "r")).st_mode), who + ": rename")
            check(not os.path.lexists(m.s("home", h + "u")), who + ": unlink")
            unchanged(v, st0, who)


def test_attributes_of_entries_still_change():
    """chmod, chown, utimens and truncate by name of a file, a directory
    and a link (the link itself) through the mount, as root and as their
    owner uid 65534: applied to the SOURCE entry."""
    with SecMount() as m:
        for uid, who in users():
            h = "a%d_" % uid
            os.mkdir(m.s("home", h + "d"))
            with open(m.s("home", h + "f"), "w") as f:
                f.write("0123456789")
            os.symlink(h + "f", m.s("home", h + "l"))
            for n in "dfl":
                os.lchown(m.s("home", h + n), uid, uid)
            mm = lambda n: m.m("home", h + n)  # noqa: E731
            out = m.as_user(uid, """
tryit("truncate", lambda: os.truncate({f!r}, 4))
tryit("chmod_f", lambda: os.chmod({f!r}, 0o640))
tryit("chmod_d", lambda: os.chmod({d!r}, 0o750))
tryit("chown_l", lambda: os.chown({l!r}, -1, {uid}, follow_symlinks=False))
tryit("utime_f", lambda: os.utime({f!r}, (1000, 2000)))
tryit("utime_d", lambda: os.utime({d!r}, (1000, 3000)))
tryit("utime_l", lambda: os.utime({l!r}, (1000, 4000), follow_symlinks=False))
""".format(f=mm("f"), d=mm("d"), l=mm("l"), uid=uid))
            for k, v in out.items():
                eq(v, "ok", who + ": " + k)
            eq(mode_of(m.s("home", h + "f")), 0o640, who + ": chmod of a file")
            eq(mode_of(m.s("home", h + "d")), 0o750, who + ": chmod of a directory")
            eq(os.lstat(m.s("home", h + "f")).st_mtime, 2000, who + ": utimens of a file")
            eq(os.lstat(m.s("home", h + "d")).st_mtime, 3000, who + ": utimens of a directory")
            eq(os.lstat(m.s("home", h + "l")).st_mtime, 4000, who + ": utimens of a link")
            eq(os.path.getsize(m.s("home", h + "f")), 4, who + ": truncate")
            out = m.as_user(uid, "tryit('chown', lambda: os.chown(%r, 0, 0))" % mm("f"))
            eq(out["chown"], "ok" if uid == 0 else "EPERM", who + ": chown to root")


# ---- the caller owns what they create -----------------------------------


def mode_of(p):
    return stat.S_IMODE(os.lstat(p).st_mode)


def owner_of(p):
    st = os.lstat(p)
    return (st.st_uid, st.st_gid)


def test_caller_owns_what_they_create():
    """As uid 65534 with umask 027 (and 002): a file, a directory, a link
    and a fifo are owned by 65534:65534 with the caller's umask applied
    (the daemon's own is 022); the caller can chmod, link, rename and
    remove them in the sticky SOURCE; a view it renames away (an editor's
    backup) is its file. As root: owned by root."""
    with SecMount() as m:
        out = m.as_user(NOBODY, """
os.umask(0o027)
tryit("create", lambda: os.close(os.open({f!r}, os.O_CREAT | os.O_WRONLY, 0o666)))
tryit("mkdir", lambda: os.mkdir({d!r}, 0o777))
tryit("symlink", lambda: os.symlink("f", {l!r}))
tryit("mkfifo", lambda: os.mkfifo({p!r}, 0o666))
os.umask(0o002)
tryit("create2", lambda: os.close(os.open({g!r}, os.O_CREAT | os.O_WRONLY, 0o666)))
tryit("mkdir2", lambda: os.mkdir({e!r}, 0o777))
tryit("chmod", lambda: os.chmod({f!r}, 0o604))
tryit("link", lambda: os.link({g!r}, {g!r} + "2"))
tryit("rename", lambda: os.rename({g!r} + "2", {g!r} + "3"))
tryit("unlink", lambda: os.unlink({g!r} + "3"))
""".format(f=m.m("f"), d=m.m("d"), l=m.m("l"), p=m.m("p"), g=m.m("g"), e=m.m("e")))
        for k, v in out.items():
            eq(v, "ok", "uid 65534: " + k)
        for n in ("f", "d", "l", "p", "g", "e"):
            eq(owner_of(m.s(n)), (NOBODY, NOBODY), "owner of " + n)
            eq(owner_of(m.m(n)), (NOBODY, NOBODY), "owner of " + n + " in the mount")
        eq(mode_of(m.s("f")), 0o604, "chmod")
        eq(mode_of(m.s("d")), 0o750, "mkdir, umask 027")
        eq(mode_of(m.s("p")), 0o640, "mkfifo, umask 027")
        eq(mode_of(m.s("g")), 0o664, "create, umask 002")
        eq(mode_of(m.s("e")), 0o775, "mkdir, umask 002")
        out = m.as_user(NOBODY, """
tryit("rm", lambda: os.unlink({g!r}))
tryit("rmdir", lambda: os.rmdir({e!r}))
""".format(g=m.m("g"), e=m.m("e")))
        eq(out, {"rm": "ok", "rmdir": "ok"}, "uid 65534 removes its own")
        check(not os.path.lexists(m.s("g")) and not os.path.lexists(m.s("e")), "removed")
        # a view renamed away (an editor's backup) is a new file of the caller's
        shutil.copyfile(os.path.join(DATA, "primitiv", "tensor_2x3.tensor"), m.s("home", "t.tensor"))
        os.chown(m.s("home", "t.tensor"), NOBODY, NOBODY)
        view = m.m("home", "t.tensor", "values.txt")
        out = m.as_user(NOBODY, """
tryit("backup", lambda: os.rename({v!r}, {v!r} + "~"))
tryit("owner", lambda: [os.stat({v!r} + "~").st_uid, os.stat({v!r} + "~").st_gid])
tryit("rm", lambda: os.unlink({v!r} + "~"))
""".format(v=view))
        eq(out, {"backup": "ok", "owner": [NOBODY, NOBODY], "rm": "ok"}, "uid 65534's backup")
        out = m.as_user(0, """
os.umask(0o027)
tryit("create", lambda: os.close(os.open({r!r}, os.O_CREAT | os.O_WRONLY, 0o666)))
""".format(r=m.m("rootf")))
        eq(out["create"], "ok", "root creates")
        eq(owner_of(m.s("rootf")), (0, 0), "root's file")
        eq(mode_of(m.s("rootf")), 0o640, "root's umask 027")


def test_setgid_dropped_as_the_kernel_does():
    """In a set-group-ID directory of group root, uid 65534 (not in that
    group) creates a file asking for set-group-ID: the file has the
    directory's group, 65534 as owner, and no set-group-ID bit; a
    directory inherits set-group-ID; chmod g+s of the file by its owner
    succeeds without the bit."""
    with SecMount() as m:
        os.mkdir(m.s("sg"))
        os.chmod(m.s("sg"), 0o2777)
        out = m.as_user(NOBODY, """
os.umask(0o022)
tryit("create", lambda: os.close(os.open({f!r}, os.O_CREAT | os.O_WRONLY, 0o2755)))
tryit("mkdir", lambda: os.mkdir({d!r}, 0o777))
tryit("chmod", lambda: os.chmod({f!r}, 0o2755))
""".format(f=m.m("sg", "f"), d=m.m("sg", "d")))
        for k, v in out.items():
            eq(v, "ok", "uid 65534: " + k)
        eq(owner_of(m.s("sg", "f")), (NOBODY, 0), "file in a set-group-ID directory")
        eq(mode_of(m.s("sg", "f")), 0o755, "set-group-ID dropped")
        eq(owner_of(m.s("sg", "d")), (NOBODY, 0), "directory in a set-group-ID directory")
        eq(mode_of(m.s("sg", "d")), 0o2755, "set-group-ID inherited")


if __name__ == "__main__":
    if shutil.which("setpriv") is None or os.geteuid() != 0:
        print("SKIP: needs root and setpriv")
        raise SystemExit(77)
    run([test_create_over_link_under_negative_entry, test_setattr_through_open_file_after_swap,
         test_names_over_planted_links, test_attributes_of_entries_still_change,
         test_caller_owns_what_they_create,
         test_setgid_dropped_as_the_kernel_does])
