"""Hostile files in a real mount: thousands of corpus files mutated (bit
flips, overwritten bytes, truncations, huge counts), deep nesting, cycles of
PLearn pointers, a 10k-node graph, names with '/', '..', NUL and 300+ bytes.
Every path is walked and read with a time limit; the daemon must stay alive
and answer, and every file is either shown as a model (and reads cleanly) or
passed through byte-identical (with a line in .modelfs/errors when it still
looked like a model). Files: MFS_HOSTILE_FILES (default 3000).

Under valgrind (MFS_VALGRIND=1) every request costs the daemon about 2 ms
however small it is: memcheck checks each byte of libfuse's 1 MiB + 4 KiB
receive buffer on every read of /dev/fuse (about 9 ms per walked path, 60
times a plain run). So the set is sized for it, with every kind of input
kept: 700 mutated files by default (each corpus file with each of the four
mutations), a 1k-node graph and 1000 wide parameters instead of 10k and
5000, and a longer time limit for the walk. Under a sanitizer (scripts/test
sets MFS_HOSTILE_FILES there) the graph has 2k nodes and the wide model
1000 parameters: at 10k and 5000 they make most of the walk's paths."""
import glob
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import gguf_write as gw
import torch_hostile as th
from harness import DATA, SLOW, Mount, check, eq, run

VALGRIND = os.environ.get("MFS_VALGRIND") == "1"
COUNT = int(os.environ.get("MFS_HOSTILE_FILES", "700" if VALGRIND else "3000"))
# the crafted giants: nodes of the graph, parameters of the wide model
# (most of the walk's paths: smaller under a sanitizer or valgrind)
GRAPH = 1000 if VALGRIND else 2000 if SLOW else 10000
WIDE = 1000 if SLOW else 5000
WALK_TIMEOUT = 1500


def u32(v):
    return b"\xce" + struct.pack(">I", v)


def mp_str(s):
    if len(s) < 32:
        return bytes([0xa0 | len(s)]) + s
    if len(s) < 256:
        return b"\xd9" + bytes([len(s)]) + s
    return b"\xda" + struct.pack(">H", len(s)) + s


def primitiv_model(keys):
    """A model whose parameters have the given key paths (lists of bytes)."""
    out = u32(0) + u32(1) + u32(0x300) + u32(len(keys))
    for k in keys:
        out += (bytes([0x90 | len(k)]) if len(k) < 16 else b"\xdc" + struct.pack(">H", len(k)))
        out += b"".join(mp_str(c) for c in k)
        out += bytes([0x91]) + u32(2) + u32(1) + b"\xc4\x08" + struct.pack("<2f", 1.5, -2.5) + u32(0)
    return out


def tsm(nodes, names=None):
    """A .tsm of n <const> nodes named by names, each feeding the next."""
    def string(s):
        return bytes([13]) + struct.pack("<I", 1) + struct.pack("<I", len(s)) + s

    def param(name, field):
        return struct.pack("<I", len(name)) + name + struct.pack("<I", 1) + field
    out = b"\0" * 4 + struct.pack("<I", 0x19910929) + b"\0" * 120
    out += struct.pack("<II", 0, 1) + struct.pack("<I", nodes - 1)
    out += struct.pack("<I", nodes)
    for i in range(nodes):
        nm = names[i] if names else b"n%d" % i
        out += struct.pack("<I", 2) + param(b"#op", string(b"<const>")) + param(b"#name", string(nm))
        ins = [i - 1] if i else []
        out += struct.pack("<I", len(ins)) + b"".join(struct.pack("<I", x) for x in ins)
    return out


def crafted():
    """Hand-made hostile files: (name, bytes)."""
    bad_names = [[b"a/b"], [b".."], [b"."], [b""], [b"nul\0byte"], [b"x" * 300], [b"%2F"],
                 [b"dup"], [b"dup"], [b"\xff\xfe bad utf8"], [b"a", b"..", b"b"]]
    yield "names.model", primitiv_model(bad_names)
    yield "deep.model", primitiv_model([[b"m%d" % i for i in range(1000)] + [b"leaf"]])
    yield "wide.model", primitiv_model([[b"p%d" % i] for i in range(WIDE)])
    yield "graph%dk.tsm" % (GRAPH // 1000), tsm(GRAPH)
    yield "names.tsm", tsm(6, [b"a/b", b"..", b"", b"nul\0", b"y" * 300, b"a/b"])
    yield "cycle.psave", b"*1 ->A(\nx = *1  ;\ny = *2 ->B(\nz = *1  ;\nw = *2   )\n )\n"
    yield "nested.psave", b"A(\nx = " * 400 + b"1 " + b")\n" * 400
    yield "vecnest.psave", b"A(\nx = " + b"1 [ " * 5000 + b"] " * 5000 + b")\n"
    yield "unterminated.psave", b'A(\nx = "never closed\n'
    yield "huge_count.param", u32(0) + u32(1) + u32(0x200) + bytes([0x92]) + u32(0xffffffff) * 2 + u32(1) + b"\xc6\xff\xff\xff\xff"
    yield "msgpack_bomb.param", u32(0) + u32(1) + u32(0x200) + b"\xdd\x93\x01\x02\x03"
    yield "huge_dims.tsm", b"\0" * 4 + struct.pack("<I", 0x19910929) + b"\0" * 120 + struct.pack("<IIII", 0, 0, 1, 1) + struct.pack("<I", 1) + struct.pack("<I", 3) + b"#op" + struct.pack("<I", 1) + bytes([13]) + struct.pack("<I", 0xffffffff)
    hdr = b"MATRIX 4611686018427387904 4611686018427387904 DOUBLE LITTLE_ENDIAN"
    yield "huge.pmat", hdr.ljust(63) + b"\n" + b"\0" * 64
    yield "csr_huge.dbdf", bytes([1, 2]) + struct.pack("<QQ", 2 ** 62, 2 ** 62) + bytes([7]) + b"\0" * 16 + struct.pack("<IIBB", 0, 0, 2, 7) + struct.pack("<Q", 2 ** 60)
    yield "empty.tsm", b""
    yield "empty.dbdf", b""
    yield "empty.psave", b""
    yield from crafted_gguf()
    yield from th.crafted()


def crafted_gguf():
    """GGUF files: counts beyond the file, arrays nested past the limit,
    hostile tensor names (valid file), a big-endian header."""
    head = b"GGUF" + struct.pack("<IQQ", 3, 0, 2 ** 62)
    yield "huge_kv.gguf", head + b"\0" * 64
    arr = b"".join(struct.pack("<IQ", 9, 1) for _ in range(100)) + struct.pack("<IQ", 0, 0)
    yield "deep.gguf", (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k"
                        + struct.pack("<I", 9) + arr)
    yield "huge_array.gguf", (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 1) + b"k"
                              + struct.pack("<IIQ", 9, 8, 2 ** 60) + b"\0" * 32)
    path = os.path.join(tempfile.mkdtemp(prefix="mfs-gguf-"), "names.gguf")
    names = ["a/b", "..", "", "a..b", ".lead", "trail.", "x.shape", "y" * 300, "a/b", "nul\0"]
    gw.write(path, [("general.name", "str", b"\xff")],
             [(n, 0, [1], struct.pack("<f", i)) for i, n in enumerate(names)])
    yield "names.gguf", open(path, "rb").read()
    shutil.rmtree(os.path.dirname(path))
    yield "bigendian.gguf", b"GGUF" + struct.pack(">IQQ", 3, 0, 0)


def mutations(rng, extra):
    """Mutated copies of every corpus file and of the files in extra: (name,
    bytes)."""
    files = [p for p in glob.glob(os.path.join(DATA, "**", "*"), recursive=True)
             if os.path.isfile(p) and not p.endswith((".md", ".py", ".txt", ".mtx"))
             and os.path.getsize(p) < 200000]
    files.sort()
    files += extra
    for n in range(COUNT):
        src = files[n % len(files)]
        data = bytearray(open(src, "rb").read())
        kind = n % 4
        if kind == 0 and data:
            data = data[:rng.randrange(len(data))]
        elif kind == 1:
            for _ in range(rng.randint(1, 8)):
                if data:
                    data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif kind == 2:
            for _ in range(rng.randint(1, 4)):
                if len(data) > 4:
                    p = rng.randrange(len(data) - 4)
                    data[p:p + 4] = rng.choice([b"\xff\xff\xff\xff", b"\xff\xff\xff\x7f",
                                                b"\x00\x00\x00\x80", rng.randbytes(4)])
        else:
            for _ in range(rng.randint(1, 3)):
                if data:
                    p = rng.randrange(len(data))
                    data[p:p] = rng.randbytes(rng.randint(1, 16))
        base = os.path.basename(src)
        # a PLearn object file is bid on by its start: only an intact one
        # surely is a model candidate
        if base.endswith((".psave", ".plearn")) and bytes(data[:64]) != open(src, "rb").read(64):
            base += ".garbled"
        yield "m%05d_%s" % (n, base), bytes(data)
        side = src + ".meta"
        if os.path.exists(side) and n % 3 == 0:
            meta = bytearray(open(side, "rb").read())
            if meta:
                meta[rng.randrange(len(meta))] = rng.randrange(256)
            yield "m%05d_%s.meta" % (n, base), bytes(meta)


def surely_bid(name, data):
    """Files a codec certainly bids on (magic intact): such a file must be
    shown, or listed in .modelfs/errors. Others may pass silently."""
    if data[:15] in [u32(0) + u32(1) + u32(t) for t in (0, 0x100, 0x200, 0x300, 0x400)]:
        return True
    if len(data) >= 8 and data[4:8] == struct.pack("<I", 0x19910929):
        return True
    if name.endswith((".psave", ".plearn")) and data.lstrip()[:1].isalpha() and b"(" in data[:40]:
        return True
    # safetensors: a header length that fits, then a JSON object's start
    if (len(data) >= 10 and data[8:10] in (b'{"', b"{}")
            and 2 <= struct.unpack("<Q", data[:8])[0] <= len(data) - 8) \
            or data[:4] == b"GGUF":
        return True
    if th.surely_bid(data):
        return True
    return data.startswith(b"MATRIX ") and name.endswith(".pmat")


WALKER = r'''
import errno, os, stat, sys
root = sys.argv[1]
n = toolong = 0
# one buffer for every read: meson's MALLOC_PERTURB_ makes each new 1 MiB
# buffer a memset, which made the walk CPU-bound in the walker itself
buf = bytearray(1 << 20)
def onerror(e):
    global toolong
    if e.errno != errno.ENAMETOOLONG:
        raise e
    toolong += 1
for dp, dn, fn in os.walk(root, onerror=onerror):
    for name in fn + dn:
        p = os.path.join(dp, name)
        try:
            st = os.lstat(p)
        except OSError as e:
            onerror(e)
            continue
        n += 1
        if stat.S_ISREG(st.st_mode):
            with open(p, "rb", buffering=0) as f:
                got = 0
                while True:
                    k = f.readinto(buf)
                    if not k:
                        break
                    got += k
                    if got > 64 << 20:
                        break
            if got < 64 << 20 and got != st.st_size:
                print("SIZE", p, got, st.st_size)
        elif stat.S_ISLNK(st.st_mode):
            os.readlink(p)
print("WALKED", n, "(%d paths longer than PATH_MAX)" % toolong)
'''


def test_hostile_files():
    rng = random.Random(8)
    torch_samples = th.samples(tempfile.mkdtemp(prefix="mfs-torch-"))
    with Mount([]) as m:
        made = {}
        for name, data in list(crafted()) + list(mutations(rng, torch_samples)):
            with open(m.s(name), "wb") as f:
                f.write(data)
            made[name] = data
        t0 = time.time()
        r = subprocess.run([sys.executable, "-c", WALKER, m.mnt], capture_output=True, text=True,
                           timeout=WALK_TIMEOUT)
        took = time.time() - t0
        eq(r.returncode, 0, "walker failed:\n" + r.stderr[-3000:])
        check("SIZE" not in r.stdout, "sizes differ:\n" + r.stdout[:3000])
        check(m.proc.poll() is None, "the daemon died")
        # .modelfs/errors keeps the newest 1000 lines; the log keeps all
        errors = open(m.log, "rb").read().decode("utf-8", "surrogateescape")
        check(len(m.errors().splitlines()) <= 1000, ".modelfs/errors is not bounded")
        shown = passed = silent = 0
        for name, data in made.items():
            p = m.m(name)
            if os.path.isdir(p):
                shown += 1
            else:
                with open(p, "rb") as f:
                    eq(f.read(), data, name + " passed through changed")
                passed += 1
                if surely_bid(name, data) and not name.endswith(".meta"):
                    check((" " + name + ":") in errors or name.endswith(".amat"),
                          "no error line for " + name)
                else:
                    silent += 1
        # the crafted names were escaped, never made into path components
        names = os.listdir(m.m("names.model", "params"))
        for n in names:
            check("/" not in n and n not in (".", ".."), "bad name " + repr(n))
        check(os.path.isdir(m.m("graph%dk.tsm" % (GRAPH // 1000), "nodes", str(GRAPH - 1))),
              "%d-node graph" % GRAPH)
        check(os.path.islink(m.m("cycle.psave", "x")), "pointer cycle as a link")
        check(os.path.isdir(m.m("names.gguf", "tensors", "a%2Fb")), "gguf names escaped")
        # pickles are read, never run; valid ones are shown
        check(not os.path.exists(th.PWNED), "a pickle ran a command")
        eq(open(m.m("pt_os_system.pt", "class")).read(), "os.system\n", "a call shown inert")
        check(os.path.isdir(m.m("pt_names.pt", "a%2Fb")), "pickle keys escaped")
        check(os.path.isdir(m.m("pk_wide_dict.pt")), "a dict of %d keys" % th.WIDE)
        print("hostile files: %d (%d shown as models, %d passed through, %d of them not models); "
              "walk %s in %.1f s" % (len(made), shown, passed, silent, r.stdout.strip(), took))
        check(m.proc.poll() is None, "the daemon died")
    shutil.rmtree(os.path.dirname(torch_samples[0]), ignore_errors=True)


if __name__ == "__main__":
    run([test_hostile_files])
