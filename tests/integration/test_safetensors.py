"""safetensors through a real mount: files written here exactly per the public
format (struct + json, values from numpy), shown with ls, cat and numpy.load;
edits with echo, sed -i, Python and numpy.save read back bit-exact from the
source file by an independent reader (below); an unchanged write-back leaves
the file byte-identical; bad edits and bad files are refused with an errors
line and the source unchanged; a sharded checkpoint's index links resolve."""
import errno
import json
import os
import struct
import subprocess
import tempfile

import numpy as np

from harness import Mount, check, data, eq, run, settle, sha
from formats import ST_DTYPES, expect_refused, st_read, st_write

def values(path, name):
    dt, shape, raw = st_read(path)[1][name]
    return np.frombuffer(raw, dtype=ST_DTYPES[dt]).reshape(shape)


W = np.array([[0.5, -1.25, 3.0], [0.1, 1e-45, -0.0]], dtype=np.float32)
SAMPLE = {
    "model.w": W,
    "model.w.bias": np.array([1, -2, 3], dtype=np.int64),
    "model.shape": np.array([7], dtype=np.uint8),
    "flags": np.array([True, False]),
    "d": np.array([np.inf, -np.inf, 2.5], dtype=np.float64),
    "bf": ("BF16", (3,), struct.pack("<3H", 0x3F80, 0x7FC0, 0x0001)),
    "f8": ("F8_E4M3", (2,), bytes([0x38, 0x7E])),
}


def mount_sample(pad=True):
    m = Mount(["safetensors/tiny"])
    st_write(m.s("model.safetensors"), SAMPLE, {"format": "pt", "note": "x"}, pad)
    return m


def test_read():
    for pad in (True, False):
        with mount_sample(pad) as m:
            eq(sorted(os.listdir(m.m("model.safetensors"))),
               ["header.json", "index", "metadata", "tensors"], "model dir")
            eq(sorted(os.listdir(m.m("model.safetensors/tensors"))),
               ["bf", "d", "f8", "flags", "model"], "tensors")
            eq(sorted(os.listdir(m.m("model.safetensors/tensors/model"))),
               ["shape~1", "w"], "escaped view name")
            eq(sorted(os.listdir(m.m("model.safetensors/tensors/model/w"))),
               ["bias", "data", "data.npy", "dtype", "shape", "values.txt"], "prefix collision")
            eq(m.text("model.safetensors/tensors/model/w/values.txt"),
               "0.5 -1.25 3\n0.1 1e-45 -0\n", "values.txt")
            eq(m.text("model.safetensors/tensors/model/w/bias/values.txt"), "1\n-2\n3\n", "bias")
            eq(m.text("model.safetensors/tensors/bf/values.txt"), "1\nnan\n9e-41\n", "bfloat16")
            eq(m.text("model.safetensors/tensors/bf/dtype"), "bfloat16\n", "bf16 dtype")
            eq(m.text("model.safetensors/tensors/f8/values.txt"), "1\n450\n", "float8")
            eq(m.text("model.safetensors/tensors/f8/dtype"), "float8_e4m3fn\n", "f8 dtype")
            eq(m.text("model.safetensors/tensors/d/values.txt"), "inf\n-inf\n2.5\n", "f64")
            eq(m.text("model.safetensors/metadata/format"), "pt\n", "metadata")
            a = np.load(m.m("model.safetensors/tensors/model/w/data.npy"))
            eq(a.tobytes(), W.tobytes(), "data.npy")
            a = np.load(m.m("model.safetensors/tensors/model/w/data.npy"), mmap_mode="r")
            eq(a.shape, (2, 3), "mmap data.npy")
            del a  # the mapping would keep the mount busy
            eq(m.read("model.safetensors/header.json"), st_read(m.s("model.safetensors"))[2],
               "header.json")
            idx = m.text("model.safetensors/index").splitlines()
            eq(len(idx), len(SAMPLE), "index lines")
            check(any(l.startswith("model.w\tfloat32\t2 3\t") and l.endswith("\t24") for l in idx),
                  "index line of model.w: %r" % idx)


def test_edit_values():
    with mount_sample() as m:
        src = m.s("model.safetensors")
        m.sh("echo '1 2 3\n4 5 6' > model.safetensors/tensors/model/w/values.txt")
        eq(values(src, "model.w").tolist(), [[1, 2, 3], [4, 5, 6]], "echo")
        m.sh("sed -i 's/^-2$/-20/' model.safetensors/tensors/model/w/bias/values.txt")
        eq(values(src, "model.w.bias").tolist(), [1, -20, 3], "sed -i")
        with open(m.m("model.safetensors/tensors/bf/values.txt"), "w") as f:
            f.write("1.00390625\n-0\n3.39e38\n")
        eq(st_read(src)[1]["bf"][2], struct.pack("<3H", 0x3F80, 0x8000, 0x7F7F), "bf16 rounding")
        m.sh("printf '\\x40' | dd of=model.safetensors/tensors/f8/data bs=1 seek=1 conv=notrunc "
             "status=none")
        eq(st_read(src)[1]["f8"][2], bytes([0x38, 0x40]), "dd")
        eq(m.text("model.safetensors/tensors/f8/values.txt"), "1\n2\n", "f8 after dd")


def test_edit_metadata():
    with mount_sample() as m:
        src = m.s("model.safetensors")
        size = os.path.getsize(src)
        m.sh("echo np > model.safetensors/metadata/format")
        meta, _, text = st_read(src)
        eq(meta, {"format": "np", "note": "x"}, "metadata in place")
        eq(os.path.getsize(src), size, "in place")
        big = "a longer value, \u00e9 and \"quotes\" " * 4
        with open(m.m("model.safetensors/metadata/note"), "w") as f:
            f.write(big + "\n")
        meta, tensors, text = st_read(src)
        eq(meta, {"format": "np", "note": big}, "metadata grown")
        eq(len(text) % 8, 0, "padded to 8")
        eq(values(src, "model.w").tobytes(), W.tobytes(), "tensors kept")
        eq(m.text("model.safetensors/metadata/note"), big + "\n", "read back")


def test_unchanged_and_refused():
    with mount_sample() as m:
        src = m.s("model.safetensors")
        before = sha(src)
        for f in ["tensors/model/w/values.txt", "tensors/bf/values.txt", "metadata/format",
                  "tensors/model/w/data.npy", "tensors/f8/data"]:
            p = m.m("model.safetensors", f)
            content = open(p, "rb").read()
            with open(p, "wb") as g:
                g.write(content)
            eq(sha(src), before, "write-back of " + f)
        for view, text, code in [("tensors/model/w/values.txt", b"1 2\n", errno.EINVAL),
                                 ("tensors/bf/values.txt", b"1e39 1 1\n", errno.ERANGE),
                                 ("tensors/f8/values.txt", b"500 1\n", errno.ERANGE),
                                 ("metadata/format", b"\xff\n", errno.EINVAL)]:
            expect_refused(m, "model.safetensors/" + view, text, src, code)
        r = m.sh("echo x > model.safetensors/header.json", check=False)
        check(r.returncode != 0, "header.json is read-only")
        eq(sha(src), before, "source unchanged")


def test_bad_files():
    m = Mount([])
    good = m.s("good.safetensors")
    st_write(good, {"a": np.zeros(4, np.float32)})
    b = bytearray(open(good, "rb").read())
    cases = {"hole.safetensors": b + b"\0\0\0\0",
             "short.safetensors": b[:-1],
             "huge.safetensors": struct.pack("<Q", 100000001) + b[8:],
             "json.safetensors": b[:8] + b"{\"a\":" + b" " * (len(b) - 13)}
    for name, content in cases.items():
        with open(m.s(name), "wb") as f:
            f.write(content)
    with m:
        settle(m.mnt)
        for name in cases:
            check(os.path.isfile(m.m(name)), name + " passes through")
            eq(m.read(name), cases[name], name + " content")
            check(name in m.errors(), name + " errors line")
        check(os.path.isdir(m.m("good.safetensors")), "good file")


def test_reshape():
    with mount_sample() as m:
        src = m.s("model.safetensors")
        new = np.arange(12, dtype=np.float32).reshape(4, 3)
        np.save(m.m("model.safetensors/tensors/model/w/data.npy"), new)
        eq(values(src, "model.w").tobytes(), new.tobytes(), "reshaped")
        eq(values(src, "model.w").shape, (4, 3), "new shape")
        eq(values(src, "model.w.bias").tolist(), [1, -2, 3], "later tensor kept")
        eq(m.text("model.safetensors/tensors/model/w/shape"), "4 3\n", "shape view")


def test_sharded():
    with mount_sample() as m:
        d = m.m("tiny/model.safetensors.index.json")
        check(os.path.isdir(d), "index is a model directory")
        eq(m.text("tiny/model.safetensors.index.json/metadata/total_size"), "78\n", "metadata")
        link = os.path.join(d, "tensors/model/embed_tokens/weight")
        check(os.path.islink(link), "tensor is a link")
        eq(os.readlink(link),
           "../../../../model-00001-of-00002.safetensors/tensors/model/embed_tokens/weight",
           "link target")
        eq(open(os.path.join(link, "values.txt")).read(),
           "0 0.25 0.5\n0.75 1 1.25\n1.5 1.75 2\n2.25 2.5 2.75\n", "through the link")
        n = 0
        for root, dirs, files in os.walk(os.path.join(d, "tensors"), followlinks=False):
            for e in dirs + files:
                p = os.path.join(root, e)
                if os.path.islink(p):
                    check(os.path.isdir(os.path.realpath(p)), "link resolves: " + p)
                    n += 1
        eq(n, 5, "links")
        # q_proj.weight.scale, in weight's shard, is reached through weight's
        # link: nothing named weight~1 beside it
        q = os.path.join(d, "tensors/model/layers/0/self_attn/q_proj")
        eq(sorted(os.listdir(q)), ["weight"], "q_proj")
        eq(m.text("tiny/model.safetensors.index.json/tensors/model/layers/0/self_attn/q_proj/weight/scale/"
                  "values.txt"), "0.5\n", "through the link")
    # A missing shard, then one that does not parse: its tensors are left
    # out with an errors line naming it, the others resolve.
    for broken in (None, b"{not safetensors"):
        m = Mount(["safetensors/tiny"])
        shard = m.s("tiny/model-00002-of-00002.safetensors")
        os.unlink(shard)
        if broken is not None:
            open(shard, "wb").write(broken)
        with m:
            d = m.m("tiny/model.safetensors.index.json/tensors")
            check(not os.path.lexists(os.path.join(d, "lm_head/weight")),
                  "tensor of a broken shard shown (%r)" % broken)
            check(os.path.isdir(os.path.join(d, "model/embed_tokens/weight")), "present shard")
            errs = [ln for ln in m.errors().splitlines() if "model.safetensors.index.json: " in ln]
            eq(len(errs), 1, "one errors line for the index: %r" % errs)
            check('shard "model-00002-of-00002.safetensors": ' in errs[0] and
                  "its tensors are not shown" in errs[0], "the errors line: %r" % errs[0])


def test_sample_generator():
    """tests/data/safetensors/tiny is what `modelfs-gen safetensors-sample`
    writes, byte for byte, and holds what it says: read back by the
    independent reader (values from numpy, bfloat16 rounded here)."""
    gen = os.environ.get("MFS_GEN", "build/scripts/gen/modelfs-gen")
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([gen, "safetensors-sample", out], check=True, stdout=subprocess.DEVNULL)
        names = sorted(os.listdir(out))
        eq(names, sorted(os.listdir(data("safetensors/tiny"))), "files")
        for n in names:
            eq(sha(os.path.join(out, n)), sha(data("safetensors/tiny/" + n)), "bytes of " + n)
        meta, t1, _ = st_read(os.path.join(out, "model-00001-of-00002.safetensors"))
        _, t2, _ = st_read(os.path.join(out, "model-00002-of-00002.safetensors"))
        eq(meta, {"format": "pt"}, "metadata")
        emb = t1["model.embed_tokens.weight"]
        eq((emb[0], emb[1]), ("F32", (4, 3)), "embed_tokens")
        check(np.array_equal(np.frombuffer(emb[2], "<f4"), np.arange(12, dtype=np.float32) / 4),
              "embed_tokens values")
        q = np.array([1, -0.5, 0.1, 3e38], dtype=np.float32).view(np.uint32).astype(np.uint64)
        bf = ((q + 0x7FFF + ((q >> 16) & 1)) >> 16).astype("<u2").tobytes()
        eq(t1["model.layers.0.self_attn.q_proj.weight"], ("BF16", (2, 2), bf), "bfloat16")
        eq(t1["model.layers.0.self_attn.q_proj.weight.scale"], ("F32", (), struct.pack("<f", 0.5)),
           "scale")
        eq(t2["model.layers.0.mlp.up_proj.weight"],
           ("F16", (2, 3), np.linspace(-1, 1, 6).astype("<f2").tobytes()), "float16")
        eq(t2["model.norm.weight"], ("F8_E4M3", (3,), bytes([0x38, 0x7E, 0x01])), "float8")
        eq(t2["lm_head.weight"], ("I8", (3,), np.array([-128, 0, 127], np.int8).tobytes()), "int8")
        index = json.load(open(os.path.join(out, "model.safetensors.index.json")))
        eq(index["metadata"], {"total_size": 78}, "index metadata")
        eq(index["weight_map"], {**{k: "model-00001-of-00002.safetensors" for k in t1},
                                 **{k: "model-00002-of-00002.safetensors" for k in t2}}, "weight_map")


def sparse_write(path, specs, dense):
    """A safetensors file of zero tensors (name, dtype, shape, element
    size), its buffer a hole (truncate) unless dense (zeros written)."""
    header, off = {}, 0
    for name, dt, shape, es in specs:
        n = int(np.prod(shape, dtype=np.int64)) * es
        header[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + n]}
        off += n
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        if dense:
            for k in range(0, off, 1 << 20):
                f.write(bytes(min(1 << 20, off - k)))
        f.truncate(8 + len(text) + off)


def test_sparse_sizes():
    """Tensors stored in a hole of a sparse file (a preallocated or
    sparse-copied checkpoint): their text views' sizes come without reading
    them, and equal the sizes and contents of the same file written dense."""
    specs = [("a", "BF16", [300, 1000], 2), ("b", "F32", [3, 200, 300], 4),
             ("c", "I8", [70000], 1), ("d", "F64", [2, 3, 40, 500], 8),
             ("e", "F8_E4M3", [1000, 700], 1), ("f", "F16", [50000, 3], 2),
             ("g", "BOOL", [400, 300], 1)]
    with Mount([]) as m:
        sparse_write(m.s("sparse.safetensors"), specs, False)
        sparse_write(m.s("dense.safetensors"), specs, True)
        for name, dt, shape, es in specs:
            views = sorted(os.listdir(m.m("dense.safetensors", "tensors", name)))
            eq(sorted(os.listdir(m.m("sparse.safetensors", "tensors", name))), views, name)
            for v in views:
                a = m.m("sparse.safetensors", "tensors", name, v)
                b = m.m("dense.safetensors", "tensors", name, v)
                eq(os.stat(a).st_size, os.stat(b).st_size, "size of %s/%s" % (name, v))
                eq(sha(a), sha(b), "content of %s/%s" % (name, v))
        # 128 Mi bfloat16 zeros in a hole: "0" and a separator each, an
        # empty line between the blocks of 4096 x 8 (sized without a pass)
        sparse_write(m.s("big.safetensors"), [("w", "BF16", [4, 4096, 8192], 2)], False)
        eq(os.stat(m.m("big.safetensors", "tensors", "w", "values.txt")).st_size,
           2 * 4 * 4096 * 8192 + 3, "size of the large tensor's values.txt")


def mini_table(dt):
    """Every code of a small float type and its value (float64), decoded
    here from the bit fields (independently of modelfs)."""
    if dt == "BF16":
        codes = np.arange(1 << 16, dtype=np.uint32)
        return codes, (codes << 16).view(np.float32).astype(np.float64)
    ebits, mbits = (4, 3) if dt == "F8_E4M3" else (5, 2)
    bias = (1 << (ebits - 1)) - 1
    codes = np.arange(256, dtype=np.uint32)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    e = (codes >> mbits) & ((1 << ebits) - 1)
    f = (codes & ((1 << mbits) - 1)).astype(np.float64)
    v = np.where(e == 0, f * 2.0 ** (1 - bias - mbits),
                 (1 + f / (1 << mbits)) * 2.0 ** (e.astype(np.float64) - bias))
    top = e == (1 << ebits) - 1
    if dt == "F8_E4M3":
        v = np.where(top & (f == 7), np.nan, v)  # S.1111.111 only; no inf
    else:
        v = np.where(top, np.where(f == 0, np.inf, np.nan), v)
    return codes, np.copysign(v, sign)


def nearest_even(x, codes, vals):
    """Each value of x as the code nearest to it, ties to the even code;
    "nan" for NaN; None where it is beyond the largest finite value (or an
    infinity the type lacks)."""
    sbit = 0x8000 if len(codes) > 256 else 0x80
    fin = np.isfinite(vals) & ~np.signbit(vals)
    order = np.argsort(vals[fin])
    pv, pc = vals[fin][order], codes[fin][order]
    out = []
    for v in np.asarray(x, dtype=np.float64):
        if np.isnan(v):
            out.append("nan")
            continue
        if np.isinf(v):
            k = np.nonzero(vals == v)[0]
            out.append(int(codes[k[0]]) if len(k) else None)
            continue
        a = abs(v)
        i = int(np.searchsorted(pv, a))  # pv[i - 1] < a <= pv[i]
        if i == len(pv):
            c = pc[-1] if a < pv[-1] + (pv[-1] - pv[-2]) / 2 else None
        elif pv[i] == a or i == 0:
            c = pc[i]
        else:
            dl, dh = a - pv[i - 1], pv[i] - a
            c = pc[i] if dh < dl or (dh == dl and pc[i] % 2 == 0) else pc[i - 1]
        out.append(None if c is None else int(c) | (sbit if np.signbit(v) else 0))
    return out


def test_small_floats_npy():
    """bfloat16 and float8 tensors: data.npy holds every value widened
    exactly to float32 (checked against the bit fields decoded here), an
    unchanged write-back leaves the file byte-identical (NaN payloads too),
    float32 written through data.npy (C or Fortran order) rounds to the
    nearest value, ties to even, and a finite value beyond the range is
    refused (ERANGE) with the source unchanged."""
    np.seterr(invalid="ignore")  # casts of signalling NaNs
    rng = np.random.default_rng(11)
    for dt, es in (("BF16", 2), ("F8_E4M3", 1), ("F8_E5M2", 1)):
        codes, vals = mini_table(dt)
        shape = (256, len(codes) // 256)
        raw = codes.astype("<u2" if es == 2 else "u1").tobytes()
        with Mount([]) as m:
            st_write(m.s("s.safetensors"), {"t": (dt, shape, raw)})
            d = m.m("s.safetensors", "tensors", "t")
            a = np.load(os.path.join(d, "data.npy"))
            eq((a.dtype, a.shape), (np.dtype("<f4"), shape), dt + " data.npy dtype and shape")
            got = a.ravel().astype(np.float64)
            num = ~np.isnan(vals)
            check(np.array_equal(got[num], vals[num]), dt + " widened values")
            check(np.array_equal(np.signbit(got), np.signbit(vals)), dt + " signs (of NaN too)")
            check(np.isnan(got[~num]).all(), dt + " NaNs")
            if dt == "BF16":
                eq(a.view("<u4").ravel().tolist(), (codes << 16).tolist(), "bf16 bits")
            # values.txt: the shortest decimal that reads back to the same code
            txt = np.array(open(os.path.join(d, "values.txt")).read().split(), dtype=np.float64)
            back = np.array(nearest_even(txt[num], codes, vals), dtype=np.int64)
            bad = np.nonzero(back != codes[num])[0]
            check(len(bad) == 0, "%s values.txt: %d values read back to another code, first %r"
                  % (dt, len(bad), [(txt[num][k], int(codes[num][k]), int(back[k]))
                                    for k in bad[:3]]))
            before = sha(m.s("s.safetensors"))
            data = open(os.path.join(d, "data.npy"), "rb").read()
            with open(os.path.join(d, "data.npy"), "wb") as f:
                f.write(data)
            eq(sha(m.s("s.safetensors")), before, dt + " unchanged write-back")
            # new values: random magnitudes, exact ties, subnormals, signed zeros
            fin = vals[np.isfinite(vals)]
            top = np.abs(fin).max()
            x = (rng.standard_normal(len(codes)) * 10.0 ** rng.integers(-8, 5, len(codes))
                 ).astype(np.float32)
            x = np.clip(x, -top * 0.999, top * 0.999)
            pos = np.sort(fin[fin > 0])
            mids = ((pos[:-1] + pos[1:]) / 2).astype(np.float32)
            n = min(len(mids), len(x) // 4)
            x[:n] = mids[rng.choice(len(mids), n, replace=False)]
            x[n:n + 4] = [0.0, -0.0, pos[0] / 2, -pos[0] * 0.75]
            if dt != "F8_E4M3":
                x[n + 4:n + 6] = [np.inf, -np.inf]
            x[n + 6] = np.nan
            want = nearest_even(x, codes, vals)
            arr = x.reshape(shape)
            for order in ("C", "F"):
                np.save(os.path.join(d, "data.npy"), np.asarray(arr, order=order))
                gotc = np.frombuffer(st_read(m.s("s.safetensors"))[1]["t"][2],
                                     "<u2" if es == 2 else "u1").astype(np.int64)
                for k, w in enumerate(want):
                    if w == "nan":
                        check(np.isnan(vals[gotc[k]]), "%s NaN written" % dt)
                    elif gotc[k] != w:
                        raise AssertionError("%s: %r written as code %#x, want %#x (%s order)"
                                             % (dt, float(x[k]), gotc[k], w, order))
            before = sha(m.s("s.safetensors"))
            big = arr.copy()
            big[3, -1] = min(top * 1.5, 3.4e38)  # finite in float32
            try:
                np.save(os.path.join(d, "data.npy"), big)
                raise AssertionError(dt + ": a value beyond the range was accepted")
            except OSError as e:
                eq(e.errno, errno.ERANGE, dt + " refusal errno")
            eq(sha(m.s("s.safetensors")), before, dt + " source after the refusal")
            check("beyond" in m.errors().splitlines()[-1], dt + " errors line")


def test_many_dims():
    """A tensor of 32 dimensions has a data.npy byte-identical to
    numpy.save's; one of 500 (safetensors allows any) has none (NumPy 1.x
    takes at most 32), and its other views read."""
    with Mount([]) as m:
        a = np.arange(2, dtype=np.float32).reshape((2,) + (1,) * 31)
        st_write(m.s("d32.safetensors"), {"w": a})
        st_write(m.s("d500.safetensors"), {"w": ("F32", [1] * 500, struct.pack("<f", 1.5))})
        import io
        want = io.BytesIO()
        np.save(want, a)
        eq(m.read("d32.safetensors/tensors/w/data.npy"), want.getvalue(), "32-d data.npy")
        d = m.m("d500.safetensors", "tensors", "w")
        eq(sorted(os.listdir(d)), ["data", "dtype", "shape", "values.txt"], "500-d views")
        eq(open(os.path.join(d, "values.txt")).read().split(), ["1.5"], "500-d values.txt")
        eq(m.read("d500.safetensors/tensors/w/data"), struct.pack("<f", 1.5), "500-d data")


if __name__ == "__main__":
    run([test_read, test_edit_values, test_edit_metadata, test_unchanged_and_refused, test_bad_files,
         test_reshape, test_sharded, test_sample_generator, test_sparse_sizes, test_small_floats_npy, test_many_dims])
