"""safetensors files sized by an attacker, and the bound on what all open
models hold: a header of many megabytes costs a small multiple of its size
(values the format never reads cost nothing; a shape of thousands of
dimensions is refused); -o max_index refuses the open that would take the
indexes of all open models over it, with an errors line; a sharded index of
200,000 names over 2,000 shards opens without parsing its shards; sub-byte
dtypes show the header's shape and their packed bytes."""
import errno
import json
import os
import struct
import time

from harness import Mount, check, eq, run
from test_bounds import instrumented, reset_peak, status_kb


def st_bytes(header, data=b""):
    text = json.dumps(header, separators=(",", ":")).encode()
    return struct.pack("<Q", len(text)) + text + data


def write(path, header, data=b""):
    with open(path, "wb") as f:
        f.write(st_bytes(header, data))


def one_tensor(extra=None, metadata=None):
    h = {"w": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    if extra:
        h["w"].update(extra)
    if metadata is not None:
        h["__metadata__"] = metadata
    return h


HEADER = 16 << 20  # the scaled-down attacker's header


def zeros(nbytes):
    return [0] * (nbytes // 2)


def peak_growth(m, names):
    """KiB the daemon's peak resident size grows by while names are stat'ed
    (None under a sanitizer or valgrind), and what each stat raised."""
    pid = m.proc.pid
    os.stat(m.m())
    reset_peak(pid)
    base = status_kb(pid, "VmHWM")
    errs = {}
    for n in names:
        try:
            os.stat(m.m(n, "tensors"))
            errs[n] = 0
        except OSError as e:
            errs[n] = e.errno
    return (None if instrumented(pid) else status_kb(pid, "VmHWM") - base), errs


def test_big_headers():
    """An unknown field of 16 MB of numbers inside a tensor entry is checked
    and ignored (as the reference library ignores it); a shape of millions
    of dimensions is refused: the peak grows by at most 3x the header (the
    mapped header itself is 1x). 16 MB of metadata strings, all kept and
    shown (a node of the tree each), by at most 16x."""
    m = Mount()
    write(m.s("unknown.safetensors"), one_tensor({"x": zeros(HEADER)}), b"\0" * 8)
    write(m.s("shape.safetensors"),
          {"w": {"dtype": "U8", "shape": zeros(HEADER), "data_offsets": [0, 0]}})
    meta = {"k%07d" % i: "" for i in range(HEADER // 14)}
    write(m.s("meta.safetensors"), one_tensor(metadata=meta), b"\0" * 8)
    with m:
        for name, kfactor in (("unknown.safetensors", 3), ("shape.safetensors", 3),
                              ("meta.safetensors", 16)):
            t0 = time.time()
            grown, errs = peak_growth(m, [name])
            size = os.path.getsize(m.s(name))
            print("%s: %d header bytes, peak +%s KiB, first stat %.2fs" %
                  (name, size, grown, time.time() - t0))
            if grown is not None:
                check(grown * 1024 <= kfactor * size,
                      "%s: peak grew by %d KiB for a %d-byte header" % (name, grown, size))
            if name == "shape.safetensors":
                eq(errs[name], errno.ENOTDIR, name + ": refused")
            else:
                eq(errs[name], 0, name)
        eq(m.text("unknown.safetensors/tensors/w/shape"), "2\n", "unknown field ignored")
        eq(len(os.listdir(m.m("meta.safetensors/metadata"))), len(meta), "metadata keys")
        check("shape.safetensors" in m.errors() and "dimensions" in m.errors(),
              "no errors line for the long shape")


def test_max_index():
    """Several big-header files open at once: the open that would take the
    indexes of all open models over -o max_index fails with ENOMEM and an
    errors line; the others stay."""
    m = Mount(opts=["-o", "max_index=100M"])
    meta = {"k%07d" % i: "" for i in range(1 << 17)}  # ~2 MB of header each
    names = ["m%d.safetensors" % i for i in range(12)]
    for n in names:
        write(m.s(n), one_tensor(metadata=meta), b"\0" * 8)
    with m:
        # each opened model's tensors directory is held open, so that the
        # kernel keeps its inode (a model it forgets is released and may
        # not fit again once the others hold the budget)
        errs, held = {}, []
        for n in names:
            try:
                held.append(os.open(m.m(n, "tensors"), os.O_RDONLY | os.O_DIRECTORY))
                errs[n] = 0
            except OSError as e:
                errs[n] = e.errno
        ok = [n for n in names if errs[n] == 0]
        refused = [n for n in names if errs[n] != 0]
        print("max_index=100M: %d of %d opened" % (len(ok), len(names)))
        check(ok and refused, "expected some opened and some refused: %r" % errs)
        for n in refused:
            eq(errs[n], errno.ENOTDIR, n + ": shown as a plain file")
        check("max_index" in m.errors(), "no errors line naming max_index")
        eq(m.text(ok[0], "tensors/w/shape"), "2\n", "an open model still reads")
        for fd in held:
            os.close(fd)
    # without the option the default (a quarter of the memory) opens them all
    with Mount(["safetensors/tiny"]) as m2:
        os.stat(m2.m("tiny/model-00001-of-00002.safetensors/tensors"))


def write_sharded(m, nshards, per_shard):
    wm = {}
    for s in range(nshards):
        shard = "model-%05d-of-%05d.safetensors" % (s + 1, nshards)
        h = {}
        for t in range(per_shard):
            name = "layers.%d.t%d.weight" % (s, t)
            h[name] = {"dtype": "U8", "shape": [1], "data_offsets": [t, t + 1]}
            wm[name] = shard
        write(m.s(shard), h, bytes(range(per_shard % 256)) * (per_shard // 256 + 1))
    with open(m.s("model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": nshards * per_shard}, "weight_map": wm}, f)
    return wm


def test_sharded_index():
    """200,000 names over 2,000 shards, then one name per shard: the index
    opens, its tensors/ lists and its links resolve into the shards; no
    shard is parsed before it is looked up itself."""
    for nshards, per in ((2000, 100), (20000, 1)):
        m = Mount()
        write_sharded(m, nshards, per)
        with m:
            idx = m.m("model.safetensors.index.json")
            t0 = time.time()
            os.stat(os.path.join(idx, "tensors"))
            t1 = time.time()
            layers = os.listdir(os.path.join(idx, "tensors/layers"))
            t2 = time.time()
            print("%d shards x %d names: first stat %.2fs, ls tensors/layers %.2fs" %
                  (nshards, per, t1 - t0, t2 - t1))
            eq(len(layers), nshards, "layers")
            link = os.path.join(idx, "tensors/layers/%d/t0/weight" % (nshards - 1))
            check(os.path.islink(link), "a link into the last shard")
            eq(m.read(link, "data"), b"\0", "through the link")
            check("model.safetensors.index.json" not in m.errors(), m.errors())
    # A shard is not parsed when the index opens: one whose first bytes are
    # safetensors but whose layout is refused keeps its links (dangling,
    # with its own errors line once looked up), and the index says nothing.
    m = Mount()
    write_sharded(m, 3, 2)
    write(m.s("model-00002-of-00003.safetensors"),
          {"layers.1.t0.weight": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}},
          b"\0\0")
    with m:
        idx = m.m("model.safetensors.index.json")
        link = os.path.join(idx, "tensors/layers/1/t0/weight")
        check(os.path.islink(link), "the link into a shard not parsed yet")
        check("model.safetensors.index.json" not in m.errors(), "the index parsed a shard")
        check(not os.path.exists(link), "a link into a refused shard resolves")
        check("model-00002-of-00003.safetensors" in m.errors(), "no errors line for the shard")
    # Past the first 1,024 shards, the directory's listing says which are
    # there: a missing one is noted by the index as before; a regular file
    # whose bytes are not safetensors is checked when it is looked up (its
    # links dangle, its own errors line says why).
    m = Mount()
    write_sharded(m, 1100, 1)
    missing = "model-01050-of-01100.safetensors"
    os.unlink(m.s(missing))
    with open(m.s("model-01060-of-01100.safetensors"), "wb") as f:
        f.write(b"{not safetensors")
    with m:
        idx = m.m("model.safetensors.index.json")
        layers = os.path.join(idx, "tensors/layers")
        eq(len(os.listdir(layers)), 1099, "layers without the missing shard's")
        check(not os.path.lexists(os.path.join(layers, "1049")), "a missing shard's tensor")
        errs = m.errors()
        check('shard "%s": ' % missing in errs, "no errors line for the missing shard: " + errs)
        link = os.path.join(layers, "1059/t0/weight")
        check(os.path.islink(link) and not os.path.exists(link), "a link into a refused shard")
        check("model-01060-of-01100.safetensors" in m.errors(), "no errors line for the shard")
        eq(m.read(os.path.join(layers, "1099/t0/weight"), "data"), b"\0", "the last shard")


def test_subbyte():
    """F4, F6_E2M3, F6_E3M2 and F8_E8M0 show the header's shape and their
    packed bytes (the reference's rule: the bits must end on a byte)."""
    m = Mount()
    h = {"a": {"dtype": "F4", "shape": [3, 2], "data_offsets": [0, 3]},
         "b": {"dtype": "F6_E2M3", "shape": [2, 2], "data_offsets": [3, 6]},
         "c": {"dtype": "F6_E3M2", "shape": [4], "data_offsets": [6, 9]},
         "d": {"dtype": "F8_E8M0", "shape": [2], "data_offsets": [9, 11]}}
    write(m.s("sub.safetensors"), h, bytes(range(1, 12)))
    with m:
        t = "sub.safetensors/tensors/"
        eq(m.text(t + "a/shape"), "3 2\n", "F4 shape")
        eq(m.text(t + "a/dtype"), "f4\n", "F4 dtype")
        eq(m.read(t + "a/data"), b"\x01\x02\x03", "F4 data")
        eq(m.text(t + "b/shape"), "2 2\n", "F6_E2M3 shape")
        eq(m.text(t + "c/shape"), "4\n", "F6_E3M2 shape")
        eq(m.read(t + "c/data"), b"\x07\x08\x09", "F6_E3M2 data")
        eq(m.text(t + "d/shape"), "2\n", "F8_E8M0 shape")
        idx = m.text("sub.safetensors/index").splitlines()
        eq(idx[0].split("\t")[:3], ["a", "f4", "3 2"], "index")
        eq(idx[0].split("\t")[4], "3", "index: bytes")


if __name__ == "__main__":
    run([test_subbyte, test_sharded_index, test_big_headers, test_max_index])
