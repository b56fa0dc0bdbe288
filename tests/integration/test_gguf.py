"""GGUF through a real mount: the tree of files written per the public
specification (tests/data/gguf and files written here), metadata and tensors
against the spec-based reader gguf_write.py, dequantized values against
numpy formulas and gguf_dequant.py (every type: test_gguf_dequant.py), and
edits with echo, sed -i, dd and numpy, checked by reading the source back
(tensor bytes identical, data section aligned) and by an independent
reader, the npm package @huggingface/gguf (tests/integration/gguf_reader,
installed with npm ci from its lock file into the build directory; that
part is skipped only when node is missing)."""
import errno
import hashlib
import json
import os
import shutil
import struct
import subprocess

import numpy as np

import gguf_dequant as gd
import gguf_write as gw
from harness import Mount, check, eq, run, settle, sha

SAMPLES = ["gguf/tiny_llama.gguf", "gguf/v2_align64.gguf"]
READER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gguf_reader")


def reader_dir():
    """node_modules of gguf_reader, installed once per lock file in the
    build directory; None when node or npm is missing."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        print("note: node/npm missing: @huggingface/gguf checks skipped")
        return None
    lock = open(os.path.join(READER, "package-lock.json"), "rb").read()
    build = os.path.dirname(os.path.dirname(os.path.abspath(os.environ.get(
        "MFS_BIN", "build/fs/modelfs"))))
    d = os.path.join(build, "gguf_reader-" + hashlib.sha256(lock).hexdigest()[:12])
    if not os.path.isdir(os.path.join(d, "node_modules", "@huggingface", "gguf")):
        tmp = d + ".tmp%d" % os.getpid()
        os.makedirs(tmp)
        for f in ("package.json", "package-lock.json", "read.mjs"):
            shutil.copy(os.path.join(READER, f), tmp)
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=tmp, check=True,
                       capture_output=True)
        try:
            os.rename(tmp, d)
        except OSError:
            shutil.rmtree(tmp)  # another run installed it meanwhile
    shutil.copy(os.path.join(READER, "read.mjs"), d)
    return d


NODE = None


def js_value(vt, v):
    """A value of gguf_write.read as @huggingface/gguf gives it in JSON."""
    if isinstance(vt, tuple):
        return [js_value(vt[1], x) for x in v]
    if vt == "str":
        return v.decode()
    if vt in ("u64", "i64"):
        return str(v)
    return v


def independent_check(path):
    """@huggingface/gguf agrees with gguf_write.read on metadata and tensor
    infos of path."""
    if NODE is None:
        return
    out = subprocess.run(["node", os.path.join(NODE, "read.mjs"), path], cwd=NODE,
                         check=True, capture_output=True, text=True).stdout
    js = json.loads(out)
    ref = gw.read(path)
    eq(js["metadata"]["version"], ref["version"], "version")
    for key, vt, v in ref["kvs"]:
        got = js["metadata"][key]
        want = js_value(vt, v)
        if isinstance(want, float):
            check(got == want or (got != got and want != want), "%s: %r != %r" % (key, got, want))
        else:
            eq(got, want, key)
    eq(len(js["tensors"]), len(ref["tensors"]), "tensor count")
    for t, (name, ty, ne, off, _) in zip(js["tensors"], ref["tensors"]):
        eq((t["name"], t["shape"], t["dtype"], t["offset"]),
           (name, [str(d) for d in ne], ty, str(off)), "tensor " + name)
    eq(int(js["data"]), ref["data"], "data offset")


def every_type_file(path, align):
    """Metadata of every value type and a tensor of every ggml type."""
    rng = np.random.default_rng(align)
    kvs = [("general.name", "str", "every \"type\"\nfile"),
           ("u8", "u8", 7), ("i8", "i8", -7), ("u16", "u16", 700), ("i16", "i16", -700),
           ("u32", "u32", 70000), ("i32", "i32", -70000), ("f32", "f32", 1.5),
           ("b", "bool", False), ("u64", "u64", 2**40), ("i64", "i64", -2**40),
           ("f64", "f64", 2.5), ("arr.u8", ("array", "u8"), [1, 2, 3]),
           ("arr.str", ("array", "str"), ["x", "y\nz"]),
           ("arr.arr", ("array", ("array", "str")), [["a"], ["b", "c"]])]
    tensors = []
    for ty, (name, blck, size) in sorted(gw.GGML.items()):
        raw = bytearray(rng.integers(0, 256, 2 * size, dtype=np.uint8).tobytes())
        for i in range(1, len(raw), 2):
            raw[i] &= 0x3B  # halves stay small and finite
        tensors.append(("t." + name, ty, [blck, 2], bytes(raw)))
    gw.write(path, kvs, tensors, alignment=align)


def tree_and_metadata():
    with Mount(SAMPLES) as m:
        d = m.m("tiny_llama.gguf")
        check(os.path.isdir(d), "tiny_llama.gguf is a directory")
        eq(sorted(os.listdir(d)), ["alignment", "index", "metadata", "tensors", "version"])
        eq(m.text("tiny_llama.gguf", "version"), "3\n")
        eq(m.text("v2_align64.gguf", "version"), "2\n")
        eq(m.text("v2_align64.gguf", "alignment"), "64\n")
        ref = gw.read(m.s("tiny_llama.gguf"))
        eq(os.listdir(os.path.join(d, "metadata")), [k for k, _, _ in ref["kvs"]], "file order")
        eq(m.text("tiny_llama.gguf", "metadata", "general.name"), "Tiny \"quoted\"\nmodel\n")
        eq(m.text("tiny_llama.gguf", "metadata", "test.bool"), "true\n")
        eq(m.text("tiny_llama.gguf", "metadata", "test.u64"), "18446744073709551615\n")
        toks = m.text("tiny_llama.gguf", "metadata", "tokenizer.ggml.tokens").splitlines()
        eq([json.loads(t) for t in toks], ["<s>", "</s>", "\n", "\"q\"", "a\\b", "é"])
        sc = np.loadtxt(m.m("tiny_llama.gguf", "metadata", "tokenizer.ggml.scores", "values.txt"))
        eq(list(sc), [0.0, -1.0, -2.0, -3.0, -4.0, -5.0])
        eq(m.text("tiny_llama.gguf", "metadata", "test.nested", "1", "values.txt"), "3\n")
        index = m.text("tiny_llama.gguf", "index").splitlines()
        for line, (name, ty, ne, off, raw) in zip(index, ref["tensors"]):
            f = line.split("\t")
            eq(f, [name, gw.GGML[ty][0], " ".join(str(x) for x in reversed(ne)),
                   str(ref["data"] + off), str(len(raw))], "index line")
            t = os.path.join(d, "tensors", *name.split("."))
            eq(open(os.path.join(t, "shape")).read(), " ".join(map(str, reversed(ne))) + "\n")
            eq(open(os.path.join(t, "data"), "rb").read(), raw, "data of " + name)
        m.sh("ls -R tiny_llama.gguf v2_align64.gguf > /dev/null")


def dequantized_values():
    with Mount(SAMPLES) as m:
        ref = {t[0]: t for t in gw.read(m.s("tiny_llama.gguf"))["tensors"]}
        raw = ref["blk.0.attn_q.weight"][4]
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 34)
        d = b[:, :2].copy().view("<f2").astype(np.float32)
        q8 = (b[:, 2:].view(np.int8).astype(np.float32) * d).reshape(2, 64)
        a = np.load(m.m("tiny_llama.gguf", "tensors", "blk", "0", "attn_q", "weight", "data.npy"))
        eq(a.dtype, np.float32)
        check(np.array_equal(a, q8), "q8_0 values")
        txt = np.loadtxt(m.m("tiny_llama.gguf", "tensors", "blk", "0", "attn_q", "weight",
                             "values.txt"), dtype=np.float32)
        check(np.array_equal(txt, q8), "q8_0 values.txt")
        raw = ref["blk.0.ffn_gate.weight"][4]
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 18)
        d = b[:, :2].copy().view("<f2").astype(np.float32)
        qs = b[:, 2:]
        q = np.concatenate([(qs & 15).astype(np.float32) - 8, (qs >> 4).astype(np.float32) - 8], 1)
        a = np.load(m.m("tiny_llama.gguf", "tensors", "blk", "0", "ffn_gate", "weight", "data.npy"),
                    mmap_mode="r")
        check(np.array_equal(a, (q * d).reshape(2, 32)), "q4_0 values")
        del a  # its mapping would keep the mount busy
        for v in ("values.txt", "data.npy"):
            p = m.m("tiny_llama.gguf", "tensors", "blk", "0", "ffn_gate", "weight", v)
            check(not os.access(p, os.W_OK) or os.stat(p).st_mode & 0o222 == 0, v + " read-only")
        eq(m.text("tiny_llama.gguf", "tensors", "output", "weight", "dtype"), "iq2_xxs\n")
        a = np.load(m.m("tiny_llama.gguf", "tensors", "output", "weight", "data.npy"))
        check(np.array_equal(a.view(np.uint32), gd.dequantize(
            "iq2_xxs", ref["output.weight"][4]).view(np.uint32)), "iq2_xxs values")


def every_type_and_alignment():
    with Mount([]) as m:
        for align in (32, 64):
            every_type_file(m.s("all%d.gguf" % align), align)
        for align in (32, 64):
            name = "all%d.gguf" % align
            settle(m.m(name))
            ref = gw.read(m.s(name))
            eq(ref["data"] % align, 0)
            for tname, ty, ne, off, raw in ref["tensors"]:
                t = m.m(name, "tensors", *tname.split("."))
                tyname, blck, _ = gw.GGML[ty]
                eq(open(os.path.join(t, "dtype")).read(), tyname + "\n")
                eq(open(os.path.join(t, "data"), "rb").read(), raw)
                values = os.path.exists(os.path.join(t, "values.txt"))
                eq(values, blck == 1 or tyname in gd.TYPES, tname + " has values.txt")
                if blck > 1 and values:
                    a = np.load(os.path.join(t, "data.npy"))
                    check(np.array_equal(a.view(np.uint32).ravel(),
                                         gd.dequantize(tyname, raw).view(np.uint32)), tname)
            eq(m.text(name, "metadata", "arr.arr", "1"), "\"b\"\n\"c\"\n")
            eq(m.text(name, "metadata", "b"), "false\n")
            independent_check(m.s(name))
        eq(m.errors(), "")


def edits():
    with Mount(SAMPLES) as m:
        src = m.s("tiny_llama.gguf")
        before = gw.read(src)
        size0 = os.path.getsize(src)
        # unchanged write-back: byte-identical
        h = sha(src)
        m.sh("cat tiny_llama.gguf/metadata/general.name > /tmp/gguf-name.$$ && "
             "cat /tmp/gguf-name.$$ > tiny_llama.gguf/metadata/general.name; rm -f /tmp/gguf-name.$$")
        eq(sha(src), h, "unchanged write-back")
        # a scalar in place
        m.sh("echo 4096 > tiny_llama.gguf/metadata/llama.context_length")
        eq(os.path.getsize(src), size0)
        eq(dict((k, v) for k, _, v in gw.read(src)["kvs"])["llama.context_length"], 4096)
        # a string of another length: the file is rewritten, tensors kept
        m.sh("echo 'My Model' > tiny_llama.gguf/metadata/general.name")
        eq(m.text("tiny_llama.gguf", "metadata", "general.name"), "My Model\n")
        after = gw.read(src)
        eq(dict((k, v) for k, _, v in after["kvs"])["general.name"], b"My Model")
        eq(after["data"] % after["alignment"], 0)
        eq([t[4] for t in after["tensors"]], [t[4] for t in before["tensors"]], "tensor bytes")
        independent_check(src)
        m.sh("echo 'A much longer model name that moves the whole data section along' "
             "> tiny_llama.gguf/metadata/general.name")
        after = gw.read(src)
        eq([t[4] for t in after["tensors"]], [t[4] for t in before["tensors"]], "tensor bytes")
        independent_check(src)
        # tokens with sed -i
        m.sh("sed -i 's/<s>/<bos>/' tiny_llama.gguf/metadata/tokenizer.ggml.tokens")
        toks = dict((k, v) for k, _, v in gw.read(src)["kvs"])["tokenizer.ggml.tokens"]
        eq(toks[0], b"<bos>")
        independent_check(src)
        # a numeric array with numpy (new length)
        np.save(m.m("tiny_llama.gguf", "metadata", "tokenizer.ggml.scores", "data.npy"),
                np.arange(7, dtype=np.float32))
        sc = dict((k, v) for k, _, v in gw.read(src)["kvs"])["tokenizer.ggml.scores"]
        eq(sc, [float(i) for i in range(7)])
        independent_check(src)
        # quantized blocks with dd, same size
        ref = gw.read(src)
        q = [t for t in ref["tensors"] if t[0] == "blk.0.attn_q.weight"][0]
        m.sh("printf '\\x00\\x3c' | dd of=tiny_llama.gguf/tensors/blk/0/attn_q/weight/data "
             "bs=1 seek=34 conv=notrunc status=none")
        q2 = [t for t in gw.read(src)["tensors"] if t[0] == "blk.0.attn_q.weight"][0]
        eq(q2[4][:34] + q2[4][36:], q[4][:34] + q[4][36:])
        eq(q2[4][34:36], b"\x00\x3c")
        a = np.load(m.m("tiny_llama.gguf", "tensors", "blk", "0", "attn_q", "weight", "data.npy"))
        eq(list(a[0, 32:34]), [float(x) for x in np.frombuffer(q[4][36:38], np.int8)], "d = 1")
        # an f32 tensor with values.txt
        p = m.m("tiny_llama.gguf", "tensors", "token_embd", "weight", "values.txt")
        v = np.loadtxt(p, dtype=np.float32)
        v[0, 0] = 0.5
        np.savetxt(p, v, fmt="%.9g")
        emb = [t for t in gw.read(src)["tensors"] if t[0] == "token_embd.weight"][0]
        eq(struct.unpack_from("<f", emb[4])[0], 0.5)
        independent_check(src)
        # refused: read-only views, wrong sizes, bad values
        # (a refusal at close is not seen by the shell's echo: the source and
        # the errors file tell)
        h = sha(src)
        r = m.sh("echo 1 > tiny_llama.gguf/tensors/blk/0/attn_q/weight/values.txt", check=False)
        check(r.returncode != 0, "quantized values.txt is read-only")
        for path, text in (("metadata/test.u8", "300"), ("metadata/test.bool", "maybe"),
                           ("tensors/blk/0/attn_q/weight/data", "short"),
                           ("metadata/tokenizer.ggml.tokens", "not json")):
            m.sh("echo '%s' > tiny_llama.gguf/%s" % (text, path), check=False)
            check("tiny_llama.gguf/" + path + ":" in m.errors(), path + " refused: " + m.errors())
        eq(sha(src), h, "refused edits leave the source unchanged")
        m.sh("echo 64 > v2_align64.gguf/metadata/general.alignment", check=False)
        eq(gw.read(m.s("v2_align64.gguf"))["alignment"], 64)


def malformed():
    with Mount(SAMPLES) as m:
        b = open(m.s("tiny_llama.gguf"), "rb").read()
        open(m.s("cut.gguf"), "wb").write(b[:700])
        be = bytearray(b)
        be[4:8] = struct.pack(">I", 3)
        open(m.s("bigendian.gguf"), "wb").write(bytes(be))
        for f in ("cut.gguf", "bigendian.gguf"):
            settle(m.m(f))
            check(os.path.isfile(m.m(f)), f + " passes through")
            eq(open(m.m(f), "rb").read(), open(m.s(f), "rb").read())
        errs = m.errors()
        check("cut.gguf" in errs and "bigendian.gguf: big-endian" in errs, errs)


def rewrite_progress():
    """A rewrite of a file of at least -o progress bytes logs its progress
    (every quarter of it, then the end), and moves 6 MiB of tensor data
    bit-exact."""
    rng = np.random.default_rng(3)
    raw = rng.integers(0, 256, 6 << 20, dtype=np.uint8).tobytes()
    with Mount([], opts=["-o", "progress=4M"]) as m:
        gw.write(m.s("big.gguf"), [("general.name", "str", "big")],
                 [("t.weight", 0, [1024, 1536], raw)])
        m.sh("echo 'a name long enough to move the data section' > big.gguf/metadata/general.name")
        g = gw.read(m.s("big.gguf"))
        eq(g["kvs"][0][2], b"a name long enough to move the data section", "the new name")
        check(g["tensors"][0][4] == raw, "the tensor's bytes moved bit-exact")
        lines = [l for l in open(m.log).read().splitlines() if "rewriting" in l]
        check(len(lines) >= 2 and "big.gguf" in lines[0] and lines[-1].endswith("(100%)"),
              "progress lines in the log: %r" % lines)
        independent_check(m.s("big.gguf"))


def byte_tokens():
    """Tokens that are not UTF-8 (byte-level vocabularies store raw bytes):
    shown as JSON string lines with those bytes as they are; an unchanged
    write-back is byte-identical, and sed -i on one token keeps the others'
    bytes."""
    toks = [b"<s>", b"\xff", b"a\x80b", b"\xe2\x82", "\u00e9".encode(), b"q\"\n"]
    with Mount([]) as m:
        gw.write(m.s("bytes.gguf"), [("general.name", "str", "bytes"),
                                    ("tokenizer.ggml.tokens", ("array", "str"), toks)], [])
        h = sha(m.s("bytes.gguf"))
        p = m.m("bytes.gguf", "metadata", "tokenizer.ggml.tokens")
        text = open(p, "rb").read()
        eq(text.split(b"\n")[1:4], [b'"\xff"', b'"a\x80b"', b'"\xe2\x82"'], "raw bytes shown")
        with open(p, "wb") as f:
            f.write(text)
        eq(sha(m.s("bytes.gguf")), h, "unchanged write-back")
        m.sh("sed -i 's/<s>/<bos>/' bytes.gguf/metadata/tokenizer.ggml.tokens")
        got = dict((k, v) for k, _, v in gw.read(m.s("bytes.gguf"))["kvs"])
        eq(got["tokenizer.ggml.tokens"], [b"<bos>"] + toks[1:], "tokens after sed -i")


def nested_arrays():
    """Arrays inside an array of arrays are writable like top-level ones:
    numbers through values.txt and data.npy (another length too), strings
    as JSON lines; the other elements and keys keep their bytes, and the
    independent reader agrees."""
    kvs = [("general.name", "str", "nested"),
           ("n.num", ("array", ("array", "i32")), [[1, 2, 3], [4, 5]]),
           ("n.str", ("array", ("array", "str")), [["a"], ["b", "c"]]),
           ("n.deep", ("array", ("array", ("array", "f32"))), [[[0.5], [1.5, 2.5]]]),
           ("after", "u32", 9)]
    raw = np.arange(64, dtype=np.float32).tobytes()
    with Mount([]) as m:
        gw.write(m.s("n.gguf"), kvs, [("w", 0, [64], raw)])
        md = ("n.gguf", "metadata")
        m.sh("echo '7 8 9' > n.gguf/metadata/n.num/0/values.txt")
        np.save(m.m(*md, "n.num", "1", "data.npy"), np.array([-1, -2, -3, -4], dtype=np.int32))
        m.sh("printf '\"x\\\\ny\"\\n\"z\"\\n' > n.gguf/metadata/n.str/1")
        m.sh("echo 3.25 > n.gguf/metadata/n.deep/0/0/values.txt")
        g = gw.read(m.s("n.gguf"))
        got = dict((k, v) for k, _, v in g["kvs"])
        eq(got["n.num"], [[7, 8, 9], [-1, -2, -3, -4]], "n.num")
        eq(got["n.str"], [[b"a"], [b"x\ny", b"z"]], "n.str")
        eq(got["n.deep"], [[[3.25], [1.5, 2.5]]], "n.deep")
        eq(got["after"], 9, "the next key")
        eq(got["general.name"], b"nested", "general.name")
        eq(g["tensors"][0][4], raw, "the tensor's bytes")
        eq(g["data"] % g["alignment"], 0, "the data section aligned")
        eq(m.text(*md, "n.num", "1", "values.txt"), "-1\n-2\n-3\n-4\n", "the view after")
        independent_check(m.s("n.gguf"))


def empty_string_arrays():
    """An empty array of strings is an empty file (one JSON literal per
    line: no lines), and an unchanged write-back of it changes nothing;
    writing an empty file (or a lone newline) to a non-empty one empties
    it, and writing lines to an empty one fills it, as gguf_write.read and
    the independent reader see; nested ones too."""
    kvs = [("general.name", "str", "empty"),
           ("e.none", ("array", "str"), []),
           ("e.full", ("array", "str"), ["a", "b\nc"]),
           ("e.also", ("array", "str"), ["x"]),
           ("e.nested", ("array", ("array", "str")), [[], ["y"]]),
           ("after", "u32", 9)]
    raw = np.arange(8, dtype=np.float32).tobytes()
    with Mount([]) as m:
        gw.write(m.s("e.gguf"), kvs, [("w", 0, [8], raw)])
        src = m.s("e.gguf")
        independent_check(src)
        md = ("e.gguf", "metadata")
        eq(m.read(*md, "e.none"), b"", "an empty array's file")
        eq(os.stat(m.m(*md, "e.none")).st_size, 0, "its size")
        eq(m.read(*md, "e.nested", "0"), b"", "an empty nested array's file")
        eq(m.read(*md, "e.full"), b'"a"\n"b\\nc"\n', "a full one")
        h = sha(src)
        for view in ("e.none", "e.nested/0"):
            m.sh("cat e.gguf/metadata/%s > /tmp/gguf-e.$$ && cat /tmp/gguf-e.$$ > e.gguf/metadata/%s; "
                 "rm -f /tmp/gguf-e.$$" % (view, view))
            m.sh("echo > e.gguf/metadata/%s" % view)
        eq(sha(src), h, "unchanged write-backs of empty arrays")
        # emptied by a lone newline (a text file's value is written with or
        # without its newline; a truncation alone, no write, is kept for
        # the next writer and commits nothing: LAYOUT "Editing")
        m.sh("echo > e.gguf/metadata/e.full")
        with open(m.m(*md, "e.also"), "w") as f:
            f.write("\n")
        # filled
        m.sh("printf '\"p\"\\n\"q\"\\n' > e.gguf/metadata/e.none")
        m.sh("echo '\"z\"' > e.gguf/metadata/e.nested/0")
        g = gw.read(src)
        got = dict((k, (vt, v)) for k, vt, v in g["kvs"])
        eq(got["e.full"], (("array", "str"), []), "e.full emptied")
        eq(got["e.also"], (("array", "str"), []), "e.also emptied")
        eq(got["e.none"], (("array", "str"), [b"p", b"q"]), "e.none filled")
        eq(got["e.nested"][1], [[b"z"], [b"y"]], "e.nested/0 filled")
        eq(got["after"][1], 9, "the next key")
        eq(g["tensors"][0][4], raw, "the tensor's bytes")
        eq(m.read(*md, "e.full"), b"", "the emptied view")
        eq(m.read(*md, "e.none"), b'"p"\n"q"\n', "the filled view")
        independent_check(src)
        # and back again
        m.sh("echo > e.gguf/metadata/e.none")
        eq(dict((k, v) for k, _, v in gw.read(src)["kvs"])["e.none"], [], "e.none emptied again")
        independent_check(src)


if __name__ == "__main__":
    NODE = reader_dir()
    run([tree_and_metadata, dequantized_values, every_type_and_alignment, edits, malformed,
         rewrite_progress, byte_tokens, nested_arrays, empty_string_arrays])
