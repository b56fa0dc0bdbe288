"""Installation, and mounting the way system tools do: `meson install` into a
private DESTDIR; the installed man page rendered by man; the installed
binary; --help listing every option with its default; -d showing each FUSE
request; the options mount(8) and fstab lines pass; and, in a private mount
namespace, `mount -t fuse.modelfs` and an fstab line (a private fstab file
given with mount -T: the real /etc/fstab is never read or written).

mount(8) runs its helpers with a cleaned environment (no PATH), so
mount.fuse3's /bin/sh looks for modelfs in the shell's default path. In the
private namespace the installed bin directory is bind-mounted over
/usr/local/sbin (first in that path) and a tmpfs over /run/mount (libmount's
utab): nothing outside the namespace sees either, and nothing is installed
system-wide."""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from harness import BIN, DATA, Mount, check, eq, run, sha

# One model of each format (with DAPHNE's sidecar).
MODELS = [
    "primitiv/tensor_2x3.tensor",
    "tennis/convnet_small.tsm",
    "daphne/generated/dense_f32_3x4.dbdf",
    "daphne/generated/dense_f32_3x4.dbdf.meta",
    "plearn/pmat/linear_4x_2y.pmat",
]
MODEL_DIRS = ["tensor_2x3.tensor", "convnet_small.tsm", "dense_f32_3x4.dbdf", "linear_4x_2y.pmat"]

# Options mount(8) may hand on through mount.fuse3, and others fstab lines
# hold: none may make modelfs fail.
GENERIC = ("rw,relatime,noatime,nodev,nosuid,noexec,sync,lazytime,strictatime,nodiratime,"
           "iversion,mand,silent,dev,suid,exec,async,atime,loud,norelatime,nostrictatime,"
           "nolazytime,diratime,noiversion,nomand,dirsync")
USERSPACE = "defaults,auto,noauto,user,users,nouser,owner,group,nofail,_netdev,x-systemd.automount,comment=x"


def build_dir():
    """The build directory of the binary under test (MFS_BIN is <build>/fs/modelfs)."""
    d = os.path.dirname(os.path.dirname(os.path.abspath(BIN)))
    check(os.path.exists(os.path.join(d, "meson-private")), "no meson build directory at " + d)
    return d


_installed = {}


def installed():
    """meson install of the build directory into a private DESTDIR (once):
    {'destdir', 'bin' (the installed modelfs), 'man' (modelfs.1), 'mandir'}."""
    if _installed:
        return _installed
    dest = tempfile.mkdtemp(prefix="mfs-install-")
    meson = shutil.which("meson")
    check(meson is not None, "meson not found")
    r = subprocess.run([meson, "install", "-C", build_dir(), "--destdir", dest, "--no-rebuild",
                        "--quiet"], capture_output=True, text=True)
    eq(r.returncode, 0, "meson install: " + r.stdout + r.stderr)
    bins = glob.glob(os.path.join(dest, "**", "bin", "modelfs"), recursive=True)
    mans = glob.glob(os.path.join(dest, "**", "man1", "modelfs.1"), recursive=True)
    eq(len(bins), 1, "installed modelfs binaries")
    eq(len(mans), 1, "installed modelfs.1 pages")
    check(os.access(bins[0], os.X_OK), "installed modelfs is not executable")
    _installed.update(destdir=dest, bin=bins[0], man=mans[0],
                      mandir=os.path.dirname(os.path.dirname(mans[0])))
    return _installed


def man_env(**extra):
    env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
    env.update(extra)
    return env


def help_text(binary):
    r = subprocess.run([binary, "--help"], capture_output=True, text=True)
    eq(r.returncode, 0, "--help exit status")
    return r.stdout


def help_options(text):
    """The -o options --help lists ('log', 'timeout', 'no_fsync', ...)."""
    return sorted(set(re.findall(r"^\s+(?:-\w, )?-o ([a-z_]+)\b", text, re.M)))


# ---------------------------------------------------------------- install

def test_installed_binary():
    inst = installed()
    r = subprocess.run([inst["bin"], "--version"], capture_output=True, text=True)
    eq(r.returncode, 0, "--version exit status")
    check(re.match(r"modelfs \d+\.\d+\.\d+ \(libfuse 3\.\d+", r.stdout), "--version: " + r.stdout)
    built = subprocess.run([BIN, "--version"], capture_output=True, text=True).stdout
    eq(r.stdout, built, "installed vs built --version")
    check("usage: modelfs" in help_text(inst["bin"]), "installed --help")


def test_man_page():
    inst = installed()
    # man -l on the installed file, with groff's warnings on: none
    r = subprocess.run(["man", "--warnings", "-l", inst["man"]], capture_output=True, text=True,
                       env=man_env())
    eq(r.returncode, 0, "man -l: " + r.stderr)
    eq(r.stderr, "", "man --warnings output")
    page = r.stdout
    for head in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SUBCOMMANDS", "EDITING",
                 "EXTENDED ATTRIBUTES", "MOUNTING FROM FSTAB", "FILES", "ENVIRONMENT",
                 "EXIT STATUS", "SEE ALSO"):
        check(re.search(r"^" + head + r"$", page, re.M), "man page section " + head)
    for s in ("modelfs ls [-l] [-F] FILE [PATH]", "modelfs cat FILE PATH",
              "modelfs tree [-a] [-L DEPTH] FILE [PATH]",
              "modelfs set [--no-inplace] FILE PATH < value", "modelfs stats FILE PATH",
              "mount -t fuse.modelfs SOURCE MOUNTPOINT", "fuse.modelfs", "user.modelfs.shape",
              "user.modelfs.dtype", "user.modelfs.offset", ".modelfs/errors",
              "mount.fuse3(8)", "fusermount3(1)"):
        check(s in page, "man page lacks " + repr(s))
    # every -o option of --help is in the man page, with a default
    opts = help_options(help_text(inst["bin"]))
    check(len(opts) >= 15, "options found in --help: %r" % opts)
    for o in opts:
        check(re.search(r"-o " + o + r"\b", page), "man page lacks -o " + o)
    if shutil.which("groff"):
        r = subprocess.run(["groff", "-man", "-ww", "-z", inst["man"]], capture_output=True, text=True)
        eq((r.returncode, r.stderr), (0, ""), "groff -man -ww -z")
    # found by name through MANPATH, as `man modelfs` finds it once installed
    r = subprocess.run(["man", "-w", "modelfs"], capture_output=True, text=True,
                       env=man_env(MANPATH=inst["mandir"]))
    eq(r.stdout.strip(), inst["man"], "man -w modelfs")
    r = subprocess.run(["man", "modelfs"], capture_output=True, text=True,
                       env=man_env(MANPATH=inst["mandir"]))
    eq(r.returncode, 0, "man modelfs: " + r.stderr)
    check("MODELFS(1)" in r.stdout and "fstab" in r.stdout, "man modelfs output")


# ---------------------------------------------------------------- --help, -d

def test_help_lists_every_option_with_default():
    text = help_text(BIN)
    opts = help_options(text)
    for o in ("ro", "rw", "allow_other", "log", "timeout", "max_buffer", "max_scratch",
              "no_inplace", "no_fsync", "debug", "max_threads", "max_idle_threads", "clone_fd",
              "allow_root", "auto_unmount", "fsname", "subtype"):
        check(o in opts, "--help lacks -o " + o)
    for flag in ("-h, --help", "-V, --version", "-f ", "-d, -o debug", "-s "):
        check(flag in text, "--help lacks " + flag)
    # each option's entry (its line and continuation lines) gives a default
    body = text.split("options (default in brackets):\n")[1].split("\nmount(8) options:")[0]
    entries = re.split(r"\n(?=    -)", "\n".join(l for l in body.splitlines()
                                              if l.startswith("    ")))
    check(len(entries) >= 20, "--help entries: %d" % len(entries))
    for e in entries:
        if e.strip().startswith(("-h", "-V", "-o OPTION")):
            continue
        check(re.search(r"\[[^]]+\]", e), "no default in --help entry: " + e.strip())
    for o in ("defaults", "noauto", "nofail", "_netdev", "relatime", "x-"):
        check(o in text, "--help does not say what happens to " + o)


def test_debug_shows_requests():
    for flag in (["-d"], ["-o", "debug"]):
        with Mount(["primitiv/tensor_2x3.tensor"], opts=flag) as m:
            eq(m.text("tensor_2x3.tensor", "shape"), "2 3\n")
            os.listxattr(m.m("tensor_2x3.tensor"))
            time.sleep(0.2)
            log = open(m.log).read()
            for op in ("INIT", "LOOKUP", "OPEN", "READ", "LISTXATTR"):
                check(re.search(r"unique: \d+, opcode: " + op + r" \(\d+\)", log),
                      "%s: no %s request in the log" % (flag, op))
            check(re.search(r"unique: \d+, success, outsize: \d+", log), "no replies in the log")
    # without a log file, in the foreground, the requests go to stderr
    tmp = tempfile.mkdtemp(prefix="mfs-it-")
    try:
        src, mnt = os.path.join(tmp, "src"), os.path.join(tmp, "mnt")
        os.makedirs(src)
        os.makedirs(mnt)
        shutil.copyfile(os.path.join(DATA, "primitiv/tensor_2x3.tensor"), os.path.join(src, "t.tensor"))
        errf = open(os.path.join(tmp, "stderr"), "w")
        p = subprocess.Popen([BIN, "-d", src, mnt], stdout=errf, stderr=errf)
        deadline = time.time() + 20
        while not os.path.ismount(mnt):
            check(p.poll() is None and time.time() < deadline, "modelfs -d did not mount")
            time.sleep(0.02)
        os.listdir(os.path.join(mnt, "t.tensor"))
        subprocess.run(["fusermount3", "-u", mnt], check=True)
        eq(p.wait(timeout=30), 0, "modelfs -d exit status")
        err = open(os.path.join(tmp, "stderr")).read()
        check("opcode: LOOKUP" in err, "-d without log=: no requests on stderr")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # and without -d, none
    with Mount(["primitiv/tensor_2x3.tensor"]) as m:
        m.text("tensor_2x3.tensor", "shape")
        check("opcode:" not in open(m.log).read(), "requests logged without -d")


def test_generic_mount_options_direct():
    """modelfs run by hand (or by a helper that does not filter) with every
    option mount(8) or an fstab line may hold."""
    with Mount(MODELS, opts=["-o", GENERIC + "," + USERSPACE]) as m:
        for d in MODEL_DIRS:
            check(os.path.isdir(m.m(d)), d + " not shown")
        eq(m.text("tensor_2x3.tensor", "shape"), "2 3\n")
        opts = [l.split()[3] for l in open("/proc/mounts") if l.split()[1] == m.mnt][0].split(",")
        check("rw" in opts, "rw: " + ",".join(opts))
        # the source shown is SOURCE's full path, the type fuse.modelfs
        ent = [l.split() for l in open("/proc/mounts") if l.split()[1] == m.mnt][0]
        eq((ent[0], ent[2]), (m.src, "fuse.modelfs"), "mount table entry")
    with Mount(MODELS, opts=["-o", "ro,nosuid,nodev,noexec,noatime"]) as m:
        opts = [l.split()[3] for l in open("/proc/mounts") if l.split()[1] == m.mnt][0].split(",")
        for o in ("ro", "nosuid", "nodev", "noexec", "noatime"):
            check(o in opts, "%s not in the mount's options %r" % (o, opts))
        r = m.sh("echo 1 > tensor_2x3.tensor/values.txt", check=False)
        check(r.returncode != 0, "write on a ro mount")
    # ro then rw: the last wins, as in mount(8)
    with Mount(["primitiv/tensor_2x3.tensor"], opts=["-o", "ro,rw"]) as m:
        m.sh("printf '1 2 3\\n4 5 6\\n' > tensor_2x3.tensor/values.txt")
        eq(m.text("tensor_2x3.tensor", "values.txt"), "1 2 3\n4 5 6\n")
    # an option nobody knows is still refused, on stderr
    tmp = tempfile.mkdtemp(prefix="mfs-it-")
    try:
        r = subprocess.run([BIN, tmp, tmp, "-o", "no_such_option"], capture_output=True, text=True,
                           timeout=30)
        check(r.returncode != 0 and "no_such_option" in r.stderr, "unknown option: %r" % (r,))
        check(not os.path.ismount(tmp), "mounted anyway")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------- mount(8), fstab

def in_namespace(fn_name):
    """Run this file's function fn_name in a private mount namespace set up
    for mount(8) (see the module's docstring); its output is shown."""
    inst = installed()
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                        os.path.abspath(__file__), "--in-namespace", fn_name, inst["bin"]],
                       capture_output=True, text=True, timeout=600)
    sys.stdout.write(r.stdout)
    sys.stdout.write(r.stderr)
    eq(r.returncode, 0, fn_name + " in a private mount namespace")


def ns_setup(installed_bin):
    """Inside the namespace: the installed modelfs where mount.fuse3's shell
    finds it, and libmount's utab on a private tmpfs."""
    path_dir = "/usr/local/sbin" if os.path.isdir("/usr/local/sbin") else "/usr/local/bin"
    subprocess.run(["mount", "--bind", os.path.dirname(installed_bin), path_dir], check=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs",
                    "/run/mount" if os.path.isdir("/run/mount") else "/run"], check=True)
    r = subprocess.run(["env", "-i", "/bin/sh", "-c", "command -v modelfs"], capture_output=True,
                       text=True)
    eq(r.stdout.strip(), os.path.join(path_dir, "modelfs"), "modelfs in the default path")


def daemons(src):
    """Pids of modelfs processes serving src (this test's own mounts)."""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            argv = open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")
        except OSError:
            continue
        if argv and os.path.basename(argv[0]) == b"modelfs" and os.fsencode(src) in argv:
            pids.append(int(d))
    return pids


def mount_entry(mnt):
    ents = [l.split() for l in open("/proc/mounts") if l.split()[1] == mnt]
    return ents


def umount_and_wait(mnt, src):
    r = subprocess.run(["umount", mnt], capture_output=True, text=True)
    eq(r.returncode, 0, "umount " + mnt + ": " + r.stderr)
    check(not mount_entry(mnt), "still mounted after umount")
    deadline = time.time() + 30
    while daemons(src) and time.time() < deadline:
        time.sleep(0.05)
    eq(daemons(src), [], "modelfs still running after umount")


def cleanup(tmp, src, mnts):
    for mnt in mnts:
        while mount_entry(mnt):
            if subprocess.run(["umount", "-l", mnt]).returncode != 0:
                break
    deadline = time.time() + 10
    while daemons(src) and time.time() < deadline:
        time.sleep(0.05)
    for pid in daemons(src):
        os.kill(pid, signal.SIGKILL)
    shutil.rmtree(tmp, ignore_errors=True)


def make_source(tmp):
    src = os.path.join(tmp, "models")
    os.makedirs(src)
    for f in MODELS:
        shutil.copyfile(os.path.join(DATA, f), os.path.join(src, os.path.basename(f)))
    return src


def check_models(mnt):
    names = os.listdir(mnt)
    for d in MODEL_DIRS:
        check(d in names and os.path.isdir(os.path.join(mnt, d)), d + " not shown: %r" % names)
    eq(open(os.path.join(mnt, "tensor_2x3.tensor", "shape")).read(), "2 3\n", "shape")
    eq(open(os.path.join(mnt, "convnet_small.tsm", "nodes", "2", "op")).read(), "conv2d\n", "op")
    eq(open(os.path.join(mnt, "dense_f32_3x4.dbdf", "header", "rows")).read(), "3\n", "rows")
    eq(open(os.path.join(mnt, "linear_4x_2y.pmat", "shape")).read(), "200 6\n", "pmat shape")


def ns_mount_t(installed_bin):
    ns_setup(installed_bin)
    tmp = tempfile.mkdtemp(prefix="mfs-it-")
    src = make_source(tmp)
    mnt = os.path.join(tmp, "mnt")
    os.makedirs(mnt)
    log = os.path.join(tmp, "modelfs.log")
    try:
        before = {f: sha(os.path.join(src, f)) for f in os.listdir(src)}
        # (a) mount -t fuse.modelfs SRC MNT -o ro,log=FILE: returns once mounted
        t0 = time.time()
        r = subprocess.run(["mount", "-t", "fuse.modelfs", src, mnt, "-o", "ro,log=" + log],
                           capture_output=True, text=True, timeout=60)
        eq(r.returncode, 0, "mount -t fuse.modelfs: " + r.stdout + r.stderr)
        print("mount -t fuse.modelfs returned after %.2fs" % (time.time() - t0))
        ent = mount_entry(mnt)
        eq(len(ent), 1, "mount table entries")
        eq((ent[0][0], ent[0][2]), (src, "fuse.modelfs"), "source and type")
        check("ro" in ent[0][3].split(","), "not read-only: " + ent[0][3])
        check_models(mnt)
        pids = daemons(src)
        eq(len(pids), 1, "modelfs daemons")
        try:
            with open(os.path.join(mnt, "tensor_2x3.tensor", "values.txt"), "w") as f:
                f.write("1 2 3\n4 5 6\n")
            raise AssertionError("write on a ro mount succeeded")
        except OSError:
            pass
        check("mounted " + src in open(log).read(), "log: " + open(log).read())
        umount_and_wait(mnt, src)

        # generic options through mount(8) and mount.fuse3, read-write
        r = subprocess.run(["mount", "-t", "fuse.modelfs", src, mnt, "-o",
                            GENERIC + ",nofail,_netdev,user,log=" + log],
                           capture_output=True, text=True, timeout=60)
        eq(r.returncode, 0, "mount -t with generic options: " + r.stdout + r.stderr)
        check_models(mnt)
        with open(os.path.join(mnt, "tensor_2x3.tensor", "values.txt"), "w") as f:
            f.write("0.5 1.5 2.5\n10.5 11.5 12.5\n")  # the same values: no change on disk
        umount_and_wait(mnt, src)
        after = {f: sha(os.path.join(src, f)) for f in os.listdir(src)}
        eq(after, before, "source files")

        # a failure is reported by mount, with modelfs's reason
        r = subprocess.run(["mount", "-t", "fuse.modelfs", os.path.join(tmp, "missing"), mnt],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode != 0 and "missing" in r.stderr, "mount of a missing SOURCE: %r" % (r,))
        check(not mount_entry(mnt), "mounted a missing SOURCE")
    finally:
        cleanup(tmp, src, [mnt])


def ns_fstab(installed_bin):
    ns_setup(installed_bin)
    tmp = tempfile.mkdtemp(prefix="mfs-it-")
    src = make_source(tmp)
    mnt, mnt2 = os.path.join(tmp, "mnt"), os.path.join(tmp, "mnt2")
    os.makedirs(mnt)
    os.makedirs(mnt2)
    log = os.path.join(tmp, "modelfs.log")
    fstab = os.path.join(tmp, "fstab")
    with open(fstab, "w") as f:
        f.write("# a private fstab (mount -T): the real /etc/fstab is not touched\n")
        f.write("%s %s fuse.modelfs ro,noauto,log=%s 0 0\n" % (src, mnt, log))
        f.write("%s %s fuse.modelfs defaults,nofail,_netdev,x-systemd.automount,log=%s 0 0\n"
                % (src, mnt2, log))
    try:
        # (b) the noauto line, by its mount point
        r = subprocess.run(["mount", "-T", fstab, mnt], capture_output=True, text=True, timeout=60)
        eq(r.returncode, 0, "mount -T fstab MNT: " + r.stdout + r.stderr)
        ent = mount_entry(mnt)
        eq([(e[0], e[2]) for e in ent], [(src, "fuse.modelfs")], "mount table")
        check("ro" in ent[0][3].split(","), "not read-only: " + ent[0][3])
        check_models(mnt)
        umount_and_wait(mnt, src)
        # mount -a: the line without noauto, once however often it runs
        for _ in range(2):
            r = subprocess.run(["mount", "-a", "-T", fstab], capture_output=True, text=True,
                               timeout=60)
            eq(r.returncode, 0, "mount -a -T fstab: " + r.stdout + r.stderr)
        eq(len(mount_entry(mnt2)), 1, "mounts on the auto line's mount point")
        eq(mount_entry(mnt), [], "noauto line mounted by mount -a")
        check("rw" in mount_entry(mnt2)[0][3].split(","), "defaults is not rw")
        check_models(mnt2)
        umount_and_wait(mnt2, src)
    finally:
        cleanup(tmp, src, [mnt, mnt2])


def test_mount_t_fuse_modelfs():
    in_namespace("ns_mount_t")


def test_fstab():
    in_namespace("ns_fstab")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--in-namespace":
        try:
            globals()[sys.argv[2]](sys.argv[3])
        except Exception:  # noqa: BLE001 - reported to the outer test
            import traceback
            traceback.print_exc()
            sys.exit(1)
        sys.exit(0)
    try:
        run([test_installed_binary, test_man_page, test_help_lists_every_option_with_default,
             test_debug_shows_requests, test_generic_mount_options_direct,
             test_mount_t_fuse_modelfs, test_fstab])
    finally:
        if _installed:
            shutil.rmtree(_installed["destdir"], ignore_errors=True)
