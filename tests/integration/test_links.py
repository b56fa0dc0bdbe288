"""Links in SOURCE: one that leads beneath SOURCE to a model file is that
model's directory at the link's place; one that leaves SOURCE (an absolute
target, ".." above it), dangles, loops or leads to a directory is the link
it is. Every case runs twice: with openat2 and with the walk used where
openat2 is missing (-o no_openat2). A link swapped while a view is open:
the open file reads what it opened, a later lookup sees the new target. A
link and the file it leads to, both shown, read one parsed model."""
import os
import threading
import time

import numpy as np

from formats import st_read, st_write
from harness import Mount, check, eq, run, sha

MODES = [(), ("-o", "no_openat2")]


def model(path, value):
    st_write(path, {"w": np.full((2, 3), value, dtype=np.float32)})


def values(m, *p):
    return np.load(m.m(*p, "tensors", "w", "data.npy")).tolist()


def plant(m, outside):
    os.makedirs(m.s("store", "blobs"))
    os.makedirs(m.s("store", "snap", "sub"))
    os.makedirs(m.s("dirs"))
    model(m.s("store", "blobs", "b1"), 1.0)
    model(m.s("store", "blobs", "b2"), 2.0)
    model(outside, 9.0)
    links = {
        "store/snap/one.safetensors": "../blobs/b1",
        "store/snap/sub/deep.safetensors": "../../blobs/b2",
        "store/snap/hop.safetensors": "one.safetensors",            # a link to a link
        "store/snap/via.safetensors": "../../dirs/up/blobs/b1",     # through a dir link
        "dirs/up": "../store",
        "store/snap/abs.safetensors": outside,                       # absolute: leaves
        "store/snap/above.safetensors": "../../../" + os.path.basename(outside),
        "store/snap/dangle.safetensors": "../blobs/none",
        "store/snap/loop1.safetensors": "loop2.safetensors",
        "store/snap/loop2.safetensors": "loop1.safetensors",
        "store/snap/dir.safetensors": "../blobs",
    }
    for name, target in links.items():
        os.symlink(target, m.s(name))


def test_links_resolved_beneath_source():
    for opts in MODES:
        m = Mount(opts=list(opts))
        outside = os.path.join(m.tmp, "outside.safetensors")
        plant(m, outside)
        with m:
            for name, v in [("one", 1.0), ("sub/deep", 2.0), ("hop", 1.0), ("via", 1.0)]:
                p = m.m("store", "snap", name + ".safetensors")
                check(os.path.isdir(p) and not os.path.islink(p), "%s %s is a model" % (opts, name))
                eq(values(m, "store", "snap", name + ".safetensors"), [[v] * 3] * 2, name)
            for name in ["abs", "above", "dangle", "loop1", "loop2", "dir"]:
                p = m.m("store", "snap", name + ".safetensors")
                check(os.path.islink(p), "%s %s is shown as the link it is" % (opts, name))
                eq(os.readlink(p), os.readlink(m.s("store", "snap", name + ".safetensors")), name)
            eq(m.sh("ls -l store/snap | grep -c '^l'").stdout.strip(), "6", "links in the listing")
            errs = m.errors()
            for name in ["abs", "above", "dangle", "loop", "dir"]:
                check(name not in errs, "no errors line for " + name)
            eq(st_read(outside)[1]["w"][2], np.full((2, 3), 9.0, np.float32).tobytes(), "outside file")


def test_edit_replaces_the_link():
    for opts in MODES:
        m = Mount(opts=list(opts))
        os.makedirs(m.s("blobs"))
        os.makedirs(m.s("snap"))
        model(m.s("blobs", "b1"), 1.0)
        os.symlink("../blobs/b1", m.s("snap", "a.safetensors"))
        os.symlink("../blobs/b1", m.s("snap", "b.safetensors"))
        before = sha(m.s("blobs", "b1"))
        with m:
            p = m.m("snap", "a.safetensors", "tensors", "w", "values.txt")
            with open(p, "w") as f:
                f.write("5 5 5\n5 5 5\n")
            eq(values(m, "snap", "a.safetensors"), [[5.0] * 3] * 2, "%s values after the edit" % (opts,))
            check(not os.path.islink(m.s("snap", "a.safetensors")), "a regular file took the link's place")
            eq(sha(m.s("blobs", "b1")), before, "the blob is byte-identical")
            check(os.path.islink(m.s("snap", "b.safetensors")), "the other link stays")
            eq(values(m, "snap", "b.safetensors"), [[1.0] * 3] * 2, "the other link's values")
            ino = os.stat(m.s("snap", "a.safetensors")).st_ino
            with open(p, "w") as f:
                f.write("6 5 5\n5 5 5\n")
            eq(values(m, "snap", "a.safetensors")[0][0], 6.0, "second edit")
            eq(os.stat(m.s("snap", "a.safetensors")).st_ino, ino, "the second edit patches the file in place")
            eq(sha(m.s("blobs", "b1")), before, "the blob is still byte-identical")


def wait_values(m, want, *p):
    """The kernel drops the entry once inotify tells the daemon; poll until
    a fresh lookup shows want (the test's point is what it shows, not when)."""
    deadline = time.time() + 60
    while time.time() < deadline:
        got = values(m, *p)
        if got == want:
            return
        time.sleep(0.05)
    eq(values(m, *p), want, "values after the swap")


def test_link_swapped_while_open():
    for opts in MODES:
        m = Mount(opts=list(opts))
        os.makedirs(m.s("blobs"))
        model(m.s("blobs", "b1"), 1.0)
        model(m.s("blobs", "b2"), 2.0)
        os.symlink("blobs/b1", m.s("x.safetensors"))
        with m:
            f = open(m.m("x.safetensors", "tensors", "w", "values.txt"))
            first = f.read(4)
            os.symlink("blobs/b2", m.s(".x.new"))
            os.replace(m.s(".x.new"), m.s("x.safetensors"))
            rest = f.read()
            f.close()
            eq(first + rest, "1 1 1\n1 1 1\n", "%s the open file reads what it opened" % (opts,))
            wait_values(m, [[2.0] * 3] * 2, "x.safetensors")


def test_link_digits_and_readers():
    """Through a link: float64 values needing all 17 digits, written as
    text, read back bit-exact from the file that replaced the link; then
    readers of data and values.txt (2 MiB, past one chunk) while a writer
    commits whole new contents: every read is one of the versions written,
    and the blob never changes."""
    rng = np.random.default_rng(7)
    digits = rng.standard_normal(6) * 10.0 ** rng.integers(-300, 300, 6)
    big = [np.full((256, 1024), k, dtype=np.float64) for k in (1.0, 2.0, 3.0)]
    for opts in MODES:
        m = Mount(opts=list(opts))
        os.makedirs(m.s("blobs"))
        os.makedirs(m.s("snap"))
        st_write(m.s("blobs", "b1"), {"w": digits.reshape(2, 3) * 0, "big": big[0]})
        os.symlink("../blobs/b1", m.s("snap", "a.safetensors"))
        before = sha(m.s("blobs", "b1"))
        with m:
            t = m.m("snap", "a.safetensors", "tensors")
            with open(os.path.join(t, "w", "values.txt"), "w") as f:
                f.write("\n".join(" ".join(repr(float(v)) for v in row)
                                  for row in digits.reshape(2, 3)) + "\n")
            raw = st_read(m.s("snap", "a.safetensors"))[1]["w"][2]
            eq(raw, digits.tobytes(), "%s 17-digit values bit-exact in the new file" % (opts,))
            eq(sha(m.s("blobs", "b1")), before, "the blob after the text edit")
            versions = {b.tobytes() for b in big}
            bad, stop = [], threading.Event()

            def reader(view):
                while not stop.is_set():
                    with open(os.path.join(t, "big", view), "rb") as f:
                        got = f.read()
                    if view == "data" and got not in versions:
                        bad.append("data: %d bytes of no version" % len(got))
                    if view == "values.txt":
                        lines = got.split(b"\n")
                        if len(lines) != 257 or len(set(lines[:-1])) != 1:
                            bad.append("values.txt: %d lines, mixed" % len(lines))
            threads = [threading.Thread(target=reader, args=(v,)) for v in ("data", "data", "values.txt")]
            for th in threads:
                th.start()
            for k in (1, 2, 0, 1):
                with open(os.path.join(t, "big", "data"), "r+b") as f:
                    f.write(big[k].tobytes())
            stop.set()
            for th in threads:
                th.join()
            check(not bad, "%s readers: %r" % (opts, bad[:3]))
            eq(np.load(os.path.join(t, "big", "data.npy")).tobytes(), big[1].tobytes(), "last write")
            eq(sha(m.s("blobs", "b1")), before, "the blob after the concurrent writes")

def parses(m, name):
    """How many times name was parsed, and how many times it took the model
    parsed for another name of its file (the debug log's lines)."""
    log = open(m.log, errors="replace").read()
    return (log.count("modelfs: %s: parsed\n" % name),
            log.count("modelfs: %s: the model parsed for another name of its file\n" % name))


def test_one_model_for_link_and_target():
    """A link and the file it leads to, both shown: the second name reads
    the model parsed for the first (one parse, one cache); a commit through
    the file's own name is read through the link at once (the file is
    rewritten beside, never patched under the link's readers); a commit
    through the link replaces the link and leaves the file as it was."""
    for opts in MODES:
        m = Mount(opts=list(opts) + ["-o", "debug"])
        os.makedirs(m.s("ckpt"))
        model(m.s("ckpt", "step100.safetensors"), 1.0)
        os.symlink("ckpt/step100.safetensors", m.s("latest.safetensors"))
        with m:
            eq(values(m, "ckpt", "step100.safetensors"), [[1.0] * 3] * 2, "%s the file" % (opts,))
            eq(values(m, "latest.safetensors"), [[1.0] * 3] * 2, "the link")
            eq(parses(m, "latest.safetensors"), (0, 1), "the link's model is the file's")
            ino = os.stat(m.s("ckpt", "step100.safetensors")).st_ino
            with open(m.m("ckpt", "step100.safetensors", "tensors", "w", "values.txt"), "w") as f:
                f.write("7 7 7\n7 7 7\n")
            eq(values(m, "latest.safetensors"), [[7.0] * 3] * 2, "the file's commit through the link")
            check(os.stat(m.s("ckpt", "step100.safetensors")).st_ino != ino,
                  "a file shown under two names is rewritten, not patched in place")
            check(os.path.islink(m.s("latest.safetensors")), "the link stays a link")
            eq(parses(m, "latest.safetensors")[0], 0, "the link never parsed the file itself")
            before = sha(m.s("ckpt", "step100.safetensors"))
            with open(m.m("latest.safetensors", "tensors", "w", "values.txt"), "w") as f:
                f.write("8 8 8\n8 8 8\n")
            eq(values(m, "latest.safetensors"), [[8.0] * 3] * 2, "the link's commit")
            check(not os.path.islink(m.s("latest.safetensors")), "a regular file took the link's place")
            eq(sha(m.s("ckpt", "step100.safetensors")), before, "the file is byte-identical")
            eq(values(m, "ckpt", "step100.safetensors"), [[7.0] * 3] * 2, "the file's own name")
            # no longer one file: each name its own model, patched in place
            ino = os.stat(m.s("ckpt", "step100.safetensors")).st_ino
            with open(m.m("ckpt", "step100.safetensors", "tensors", "w", "data"), "r+b") as f:
                f.write(np.full((2, 3), 9.0, np.float32).tobytes())
            eq(os.stat(m.s("ckpt", "step100.safetensors")).st_ino, ino, "patched in place")
            eq(values(m, "latest.safetensors"), [[8.0] * 3] * 2, "the former link")


def test_shared_model_readers():
    """Readers through a link and through the file it leads to (one shared
    model) while a writer commits through the file's own name: every read
    is one whole version, and after the last commit both names show it."""
    big = [np.full((256, 1024), k, dtype=np.float64) for k in (1.0, 2.0, 3.0)]
    versions = {b.tobytes() for b in big}
    m = Mount()
    os.makedirs(m.s("ckpt"))
    st_write(m.s("ckpt", "c.safetensors"), {"big": big[0]})
    os.symlink("ckpt/c.safetensors", m.s("latest.safetensors"))
    with m:
        views = [m.m(name, "tensors", "big") for name in ("latest.safetensors", "ckpt/c.safetensors")]
        bad, stop = [], threading.Event()

        def reader(t, view):
            while not stop.is_set():
                with open(os.path.join(t, view), "rb") as f:
                    got = f.read()
                if view == "data" and got not in versions:
                    bad.append("%s data: %d bytes of no version" % (t, len(got)))
                if view == "values.txt":
                    lines = got.split(b"\n")
                    if len(lines) != 257 or len(set(lines[:-1])) != 1:
                        bad.append("%s values.txt: %d lines, mixed" % (t, len(lines)))
        threads = [threading.Thread(target=reader, args=(t, v))
                   for t in views for v in ("data", "values.txt")]
        for th in threads:
            th.start()
        for k in (1, 2, 0, 1, 2):
            with open(os.path.join(views[1], "data"), "r+b") as f:
                f.write(big[k].tobytes())
        stop.set()
        for th in threads:
            th.join()
        check(not bad, "readers: %r" % bad[:3])
        for t in views:
            eq(np.load(os.path.join(t, "data.npy")).tobytes(), big[2].tobytes(), "last write via " + t)
        check(os.path.islink(m.s("latest.safetensors")), "the link stays a link")


if __name__ == "__main__":
    run([test_links_resolved_beneath_source, test_edit_replaces_the_link, test_link_swapped_while_open,
         test_link_digits_and_readers, test_one_model_for_link_and_target,
         test_shared_model_readers])
