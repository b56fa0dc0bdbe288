"""PyTorch checkpoints through a real mount, against torch itself (Debian's
python3-torch writes every file at test time, torch.load reads every edit
back): state_dicts of real modules, a Hugging Face style checkpoint with
bfloat16, float16 and tied embeddings, Adam's state, a Lightning-style
checkpoint (argparse.Namespace in its hyper-parameters), every dtype, views,
plain values of every kind, the legacy stream format, renamed files. The
tree is checked against torch_decode.py (which runs nothing) and that
against torch.load. Edits through values.txt, data, data.npy and one-value
files leave a file torch.load reads as exactly the intended objects, with
storages shared as before, every other zip record byte-identical, 64-byte
alignment, zipfile clean; refusals leave the source byte-identical with an
errors line. Pickles that would run a command or name a user's class are
shown inert and nothing runs; broken files pass through with an errors
line."""
import collections
import errno
import io
import os
import shutil
import tempfile
import threading
import zipfile

import numpy as np
import torch

import pt_check as pc
import torch_decode as td
import torch_write as tw
from formats import error_lines, expect_refused, npy_saver, read_every_file, read_text, walk, write_file, write_ok
from harness import SLOW, Mount, check, eq, run, settle, sha

SAMPLES = tempfile.mkdtemp(prefix="mfs-torch-")
ALL = tw.write_all(SAMPLES)
HOSTILE = tw.write_hostile(SAMPLES)
# written beside the others, checked on their own (test_protocol2_*)
PROTOCOL2 = "protocol2.pt"
ZIPS = [n for n in ALL if zipfile.is_zipfile(os.path.join(SAMPLES, n))]
LEGACY = [n for n in ALL if n not in ZIPS]


def xfail(reason):
    """A test that fails for a known codec bug (reason names it): its failure
    is reported and passes; a pass fails, so that the mark goes when the bug
    does."""
    def wrap(fn):
        def t():
            try:
                fn()
            except Exception as e:  # noqa: BLE001 - any failure is the known one
                print("XFAIL %s (%s): %s" % (fn.__name__, reason, str(e)[:300]))
                return
            raise AssertionError("%s passed: the bug it is marked with (%s) is gone; drop the mark"
                                 % (fn.__name__, reason))
        t.__name__ = fn.__name__
        return t
    return wrap


def mount(names=None, opts=()):
    m = Mount([], opts=opts)
    for n in (names or ALL):
        shutil.copyfile(os.path.join(SAMPLES, n), m.s(n))
    return m



# ---------------------------------------------------------------- reading

def test_read_every_file():
    """Every sample's tree equals what the independent reader finds, which
    equals torch.load's objects; every file reads exactly its st_size."""
    with mount() as m:
        for name in ALL:
            ref = pc.check_tree(m, name)
            pc.same_as_decoded(pc.tload(m.s(name)), ref, name)
        read_every_file(m.mnt)
        eq(error_lines(m), [], "error lines")


def test_module_state_dicts():
    with mount() as m:
        eq(sorted(os.listdir(m.m("linear.pt"))), ["0", "2", "index"], "Sequential's indices")
        eq(os.listdir(m.m("linear.pt", "0")), ["weight", "bias"], "Linear's parameters")
        eq(read_text(m.m("conv_bn.pth", "1", "num_batches_tracked"), "dtype"), "int64\n", "num_batches_tracked")
        eq(read_text(m.m("conv_bn.pth", "1", "num_batches_tracked"), "shape"), "\n", "0-d shape")
        eq(read_text(m.m("conv_bn.pth", "1", "num_batches_tracked"), "values.txt"), "1\n", "one batch")
        eq(read_text(m.m("conv_bn.pth", "0", "weight"), "shape"), "4 3 3 3\n", "Conv2d weight")
        check(os.path.isdir(m.m("lstm.pt", "weight_ih_l1")), "LSTM's second layer")
        check(os.path.isdir(m.m("transformer.pt", "self_attn", "out_proj", "weight")), "attention output")
        check(os.path.isdir(m.m("transformer.pt", "self_attn", "in_proj_weight")), "attention input")
        eq(read_text(m.m("embedding.pt", "weight"), "values.txt").split("\n")[0], "0 0 0 0",
           "padding_idx row")


def test_hugging_face_checkpoint():
    """bfloat16 and float16, the tied head sharing the embedding's storage;
    the zip's top folder is `archive` (.bin) or the stem (model.bin)."""
    with mount() as m:
        for name in ("pytorch_model.bin", "model.bin"):
            emb = m.m(name, "model", "embed_tokens", "weight")
            head = m.m(name, "lm_head", "weight")
            eq(read_text(emb, "dtype"), "bfloat16\n", "embedding dtype")
            eq(read_text(m.m(name, "model", "norm", "weight"), "dtype"), "float16\n", "float16 norm")
            eq(os.getxattr(emb, pc.STORAGE), os.getxattr(head, pc.STORAGE), "tied storage")
            eq(m.read(name, "model", "embed_tokens", "weight", "data"),
               m.read(name, "lm_head", "weight", "data"), "tied bytes")
            idx = {ln.split("\t")[0]: ln.split("\t")[3:] for ln in read_text(m.m(name), "index").splitlines()}
            eq(idx["lm_head.weight"], idx["model.embed_tokens.weight"], "tied offsets in the index")
            a = np.load(os.path.join(head, "data.npy"))
            eq(a.dtype, np.dtype(np.float32), "bfloat16 data.npy widened to float32")
            want = torch.load(m.s(name))["lm_head.weight"].float().numpy()
            pc.same(a, want, "bfloat16 head")
        with zipfile.ZipFile(m.s("pytorch_model.bin")) as z:
            eq(z.namelist()[0], "archive/data.pkl", "top folder")


def test_optimizer_and_lightning():
    with mount() as m:
        o = m.m("optimizer.pt")
        eq(sorted(os.listdir(o)), ["index", "param_groups", "state"], "optimizer state_dict")
        eq(os.listdir(os.path.join(o, "state")), ["0", "1", "2", "3"], "state keyed by int")
        eq(sorted(os.listdir(os.path.join(o, "state", "0"))), ["exp_avg", "exp_avg_sq", "step"], "Adam state")
        eq(read_text(o, "param_groups", "0", "betas"), "(0.9, 0.999)\n", "betas literal")
        eq(read_text(o, "param_groups", "0", "eps"), "1e-08\n", "eps repr")
        eq(read_text(o, "param_groups", "1", "lr"), "0.01\n", "lr")
        eq(read_text(o, "param_groups", "1", "params"), "[2, 3]\n", "params literal")
        eq(read_text(o, "param_groups", "0", "amsgrad"), "False\n", "bool")
        eq(read_text(o, "param_groups", "0", "foreach"), "None\n", "None")
        c = m.m("epoch=9-step=100.ckpt")
        eq(read_text(c, "epoch"), "9\n", "epoch")
        eq(read_text(c, "pytorch-lightning_version"), "1.9.0\n", "version string")
        check(os.path.isdir(os.path.join(c, "state_dict", "model", "encoder", "0", "weight")), "dotted state_dict")
        hp = os.path.join(c, "hyper_parameters")
        eq(read_text(hp, "hparams", "class"), "argparse.Namespace\n", "Namespace class")
        eq(read_text(hp, "hparams", "args"), "()\n", "Namespace args")
        eq(read_text(hp, "hparams", "state", "name"), "run-1\n", "Namespace state")
        eq(read_text(hp, "hparams", "state", "layers"), "[3, 2]\n", "Namespace list")
        eq(read_text(hp, "schedule", "warmup"), "500\n", "dotted hyper-parameter")
        cb = [n for n in os.listdir(os.path.join(c, "callbacks")) if n.startswith("ModelCheckpoint")]
        eq(len(cb), 1, "ModelCheckpoint callback")
        eq(read_text(c, "callbacks", cb[0], "dirpath"), "/runs/ckpt\n", "callback state")
        eq(read_text(c, "optimizer_states", "0", "param_groups", "0", "lr"), "0.001\n", "optimizer in list")
        eq(read_text(c, "lr_schedulers", "0", "gamma"), "0.1\n", "scheduler")


def test_plain_values():
    with mount(["plain.pt"]) as m:
        p = m.m("plain.pt")
        for name, want in [("int", "-5\n"), ("big_int", "%d\n" % 2 ** 100), ("float", "0.1\n"),
                           ("tiny", "1e-08\n"), ("inf", "inf\n"), ("nan", "nan\n"), ("neg_zero", "-0.0\n"),
                           ("true", "True\n"), ("none", "None\n"),
                           ("tuple1", "(5,)\n"), ("empty_tuple", "()\n"), ("empty_list", "[]\n"),
                           ("7", "int key\n"), ("(1, 2)", "tuple key\n"), ("slash%2Fkey", "2\n")]:
            eq(read_text(p, name), want, name)
        eq(read_text(p, "str"), "h\u00e9llo \u2713\n", "UTF-8 string")
        eq(os.listdir(os.path.join(p, "empty_dict")), [], "empty dict")
        eq(os.listdir(os.path.join(p, "mixed")), ["0", "1", "2"], "list with a tensor")
        eq(read_text(p, "mixed", "2"), "(0.5, None)\n", "literal inside a list directory")
        check(os.path.isdir(os.path.join(p, "deep", "0", "b", "0")), "tensor deep in a tuple")
        check(os.path.isdir(os.path.join(p, "index~1")), "top-level key index")
        check(os.path.isdir(os.path.join(p, "a", "shape~1")), "a key component named like a view")
        eq(read_text(p, "b", "data~1"), "3\n", "a value's last component named like a view")
        eq(read_text(p, "odd", "%", "name", "%"), "1\n", "empty components")


def test_protocol2_sets():
    """Sets, which protocol 2 builds by calling builtins.set on a list:
    values, not inert objects."""
    with mount([PROTOCOL2]) as m:
        p = m.m(PROTOCOL2)
        eq(read_text(p, "set"), "{1, 2, 3}\n", "a set")
        eq(read_text(p, "sets"), "[{'a'}, {2.5}]\n", "sets in a list literal")
        eq(read_text(p, "with_tensor", "s"), "{7}\n", "a set beside a tensor")


def test_protocol2_bytes():
    """bytes, which protocol 2 builds by calling _codecs.encode (and
    builtins.bytes for b''): the bytes alone."""
    with mount([PROTOCOL2]) as m:
        eq(m.read(PROTOCOL2, "bytes"), b"\x00\x01abc\xff", "bytes alone")
        eq(m.read(PROTOCOL2, "empty_bytes"), b"", "empty bytes")
        pc.check_tree(m, PROTOCOL2)


def test_every_dtype():
    with mount(["dtypes.pt", "legacy_dtypes.pth"]) as m:
        for name in ("dtypes.pt", "legacy_dtypes.pth"):
            for key, t in tw.every_dtype().items():
                d = m.m(name, "index~1" if key == "index" else key)
                want = {torch.bool: "bool", torch.bfloat16: "bfloat16"}.get(t.dtype, str(t.dtype)[6:])
                eq(read_text(d, "dtype"), want + "\n", "dtype of " + key)
            p = m.m(name)
            eq(read_text(p, "float32", "values.txt").split("\n")[:2], ["0.1", "1e-45"], "float32 shortest")
            eq(read_text(p, "bfloat16", "values.txt").split("\n")[0], "0.1", "bfloat16 shortest")
            eq(read_text(p, "bool", "values.txt"), "1\n0\n1\n", "bool")
            eq(read_text(p, "int64", "values.txt"), "-9223372036854775808\n0\n9223372036854775807\n", "int64")
            eq(read_text(p, "complex64", "values.txt"), "1+2j\n-0.5-0.25j\n", "complex64")
            eq(read_text(p, "empty", "values.txt"), "", "empty tensor")
            eq(read_text(p, "empty", "shape"), "0 3\n", "empty shape")
            eq(read_text(p, "scalar", "values.txt"), "3.5\n", "0-d tensor")


def test_views():
    """Views share base's storage; spans have data (column-major ones with
    fortran_order), the others not; expand's stride 0 is read-only."""
    with mount(["views.pt", "legacy.pt"]) as m:
        for name in ("views.pt", "legacy.pt"):
            p = m.m(name)
            key = os.getxattr(os.path.join(p, "base"), pc.STORAGE)
            for v in ("transposed", "row", "rows", "column", "every_other", "flat"):
                eq(os.getxattr(os.path.join(p, v), pc.STORAGE), key, "storage of " + v)
            eq(read_text(p, "row", "values.txt"), "12\n13\n14\n15\n16\n17\n", "row at offset 12")
            eq(read_text(p, "column", "values.txt"), "2\n8\n14\n20\n", "strided column")
            check("data" not in os.listdir(os.path.join(p, "column")), "no data for a strided view")
            check("data" not in os.listdir(os.path.join(p, "cube_mix")), "no data for a mixed order")
            eq(m.read(name, "row", "data"), np.arange(12, 18, dtype="<f4").tobytes(), "row data")
            t = np.load(os.path.join(p, "transposed", "data.npy"))
            check(t.flags.f_contiguous and not t.flags.c_contiguous, "transposed data.npy in Fortran order")
            eq(m.read(name, "transposed", "data"), m.read(name, "base", "data"), "transposed's data is base's")
            for v in ("values.txt", "data.npy"):
                e = write_file(os.path.join(p, "expanded", v), b"0 1 2\n" * 4)
                check(e is not None, "a write to an overlapping view was accepted: " + v)


# ---------------------------------------------------------------- edits

def values_text(a):
    a = np.asarray(a)
    if a.ndim == 0:
        return repr(a.item()) + "\n"
    rows = a.reshape(-1, a.shape[-1]) if a.ndim > 1 else a.reshape(-1, 1)
    fmt = (lambda v: repr(float(v))) if a.dtype.kind == "f" else str
    return "".join(" ".join(fmt(v) for v in r) + "\n" for r in rows)


class Edit:
    """An edit's before and after: torch.load's object before, the zip's
    records (or the legacy file's bytes) before; check() after the write
    compares torch.load's object with the expected one (mutate applied to
    the before object), storages shared as before, the file's structure."""

    def __init__(self, m, name):
        self.m, self.name, self.src = m, name, m.s(name)
        self.obj = pc.tload(self.src)
        self.share = pc.sharing(self.obj)
        self.zip = zipfile.is_zipfile(self.src)
        self.raw = open(self.src, "rb").read()
        self.recs = pc.records(self.src) if self.zip else None
        self.st = os.stat(self.src)

    def check(self, mutate, changed=(), pickle_op=None, in_place=None, tree=True):
        """changed: storage keys (or "pickle") whose records may change;
        pickle_op: the pickle changed in one opcode only (a value the
        pickle does not memoize); in_place: the file
        was patched (same inode, size); tree: the mount's tree checked
        again."""
        mutate(self.obj)
        after = pc.tload(self.src)
        pc.same_torch(after, self.obj, self.name)
        eq(pc.sharing(after), self.share, "storages shared in " + self.name)
        if self.zip:
            with zipfile.ZipFile(self.src) as z:
                top = td.zip_top(z)
            names = {top + ("data.pkl" if c == "pickle" else "data/" + c) for c in changed}
            new = pc.check_archive(self.src, self.recs, names)
            if pickle_op:
                pc.check_one_op(self.recs[top + "data.pkl"][0], new[top + "data.pkl"][0], pickle_op)
            elif "pickle" not in changed:
                eq(new[top + "data.pkl"][0], self.recs[top + "data.pkl"][0], "pickle of " + self.name)
        if in_place:
            st = os.stat(self.src)
            eq((st.st_ino, st.st_size), (self.st.st_ino, self.st.st_size), "patched in place: " + self.name)
        if tree:
            pc.check_tree(self.m, self.name)
        return after


def key_of(m, name, *p):
    """The storage key of tensor p of name (read with torch_decode)."""
    return pc.resolve(td.load(m.s(name)), p).key


def test_edit_values_txt():
    with mount() as m:
        new = np.arange(20, dtype=np.float32).reshape(4, 5) / 8 - 1
        e = Edit(m, "linear.pt")
        write_ok(m.m("linear.pt", "0", "weight", "values.txt"), values_text(new))
        e.check(lambda o: o["0.weight"].copy_(torch.from_numpy(new)), [key_of(m, "linear.pt", "0", "weight")],
                in_place=True)
        # int64 with the extremes, through values.txt
        e = Edit(m, "dtypes.pt")
        write_ok(m.m("dtypes.pt", "int64", "values.txt"), "9223372036854775807 -1 -9223372036854775808\n")
        e.check(lambda o: o["int64"].copy_(torch.tensor([2 ** 63 - 1, -1, -2 ** 63])),
                [key_of(m, "dtypes.pt", "int64")], in_place=True)
        # a renamed file (no extension, its zip's top folder "weights")
        e = Edit(m, "checkpoint")
        write_ok(m.m("checkpoint", "2", "bias", "values.txt"), "0.125\n-0.5\n8\n")
        e.check(lambda o: o["2.bias"].copy_(torch.tensor([0.125, -0.5, 8.0])),
                [key_of(m, "checkpoint", "2", "bias")], in_place=True)
        # the text it shows, written back, changes nothing
        st = os.stat(m.s("dtypes.pt"))
        for k in ("float32", "float16", "bfloat16", "complex128", "bool"):
            write_ok(m.m("dtypes.pt", k, "values.txt"), read_text(m.m("dtypes.pt", k), "values.txt"))
        eq(os.stat(m.s("dtypes.pt")).st_mtime_ns, st.st_mtime_ns, "same values rewritten")


def test_edit_tied_and_bfloat16():
    """An edit of the tied head is seen through the embedding: one storage."""
    with mount(["pytorch_model.bin"]) as m:
        e = Edit(m, "pytorch_model.bin")
        new = (np.arange(128, dtype=np.float32).reshape(16, 8) - 64) / 4
        write_ok(m.m("pytorch_model.bin", "lm_head", "weight", "values.txt"), values_text(new))
        e.check(lambda o: o["lm_head.weight"].copy_(torch.from_numpy(new)),
                [key_of(m, "pytorch_model.bin", "lm_head", "weight")], in_place=True)
        eq(m.read("pytorch_model.bin", "model", "embed_tokens", "weight", "data"),
           m.read("pytorch_model.bin", "lm_head", "weight", "data"), "tied bytes after the edit")
        # two bytes of a float16 tensor through data, dd conv=notrunc
        e = Edit(m, "pytorch_model.bin")
        m.sh("printf '\\x00\\x3c' | dd of=pytorch_model.bin/model/norm/weight/data bs=1 seek=2 conv=notrunc status=none")

        def half(o):
            o["model.norm.weight"][1] = 1.0
        e.check(half, [key_of(m, "pytorch_model.bin", "model", "norm", "weight")], in_place=True)
        # bfloat16 rounds to nearest even; beyond its range is refused
        e = Edit(m, "pytorch_model.bin")
        vals = ["1.00390625", "1.01171875"] + ["0"] * 6
        write_ok(m.m("pytorch_model.bin", "model", "layers", "0", "input_layernorm", "weight", "values.txt"),
                 "\n".join(vals) + "\n")

        def rounded(o):
            o["model.layers.0.input_layernorm.weight"].copy_(
                torch.tensor([float(v) for v in vals], dtype=torch.float64).to(torch.bfloat16))
        e.check(rounded, [key_of(m, "pytorch_model.bin", "model", "layers", "0", "input_layernorm", "weight")])
        eq(read_text(m.m("pytorch_model.bin", "model", "layers", "0", "input_layernorm", "weight"),
                     "values.txt").split("\n")[:2], ["1", "1.016"], "ties to even (1.016: bfloat16 1.015625 shortest)")


def test_edit_through_views():
    """Each element written through a view lands where the view says."""
    with mount(["views.pt", "legacy.pt"]) as m:
        for name in ("views.pt", "legacy.pt"):
            key = key_of(m, name, "base")
            e = Edit(m, name)
            new = np.arange(100, 124, dtype=np.float32).reshape(6, 4)
            write_ok(m.m(name, "transposed", "values.txt"), values_text(new))
            e.check(lambda o: o["transposed"].copy_(torch.from_numpy(new)), [key], in_place=True)
            e = Edit(m, name)
            write_ok(m.m(name, "column", "values.txt"), "-1\n-2\n-3\n-4\n")
            e.check(lambda o: o["column"].copy_(torch.tensor([-1., -2, -3, -4])), [key], in_place=True)
            e = Edit(m, name)
            write_ok(m.m(name, "every_other", "values.txt"), "7 7 7\n" * 4)
            e.check(lambda o: o["every_other"].fill_(7), [key], in_place=True)
            e = Edit(m, name)
            new3 = -np.arange(60, dtype=np.float64).reshape(4, 3, 5)
            np.save(m.m(name, "cube_mix", "data.npy"), new3)
            e.check(lambda o: o["cube_mix"].copy_(torch.from_numpy(new3)), [key_of(m, name, "cube_mix")],
                    in_place=True)
            e = Edit(m, name)
            with open(m.m(name, "cube_f", "data"), "r+b") as f:
                f.write(np.float64(0.5).tobytes())

            def first(o):
                o["cube_f"][0, 0, 0] = 0.5
            e.check(first, [key_of(m, name, "cube_f")], in_place=True)
            before = sha(m.s(name))
            for v in ("values.txt", "data.npy"):
                check(write_file(m.m(name, "expanded", v), b"1 1 1\n" * 4) is not None, "overlapping view written")
            eq(sha(m.s(name)), before, "source after a refused write to an overlapping view")


def test_data_npy_same_shape():
    """data.npy of the same shape through a view and a whole tensor; another
    shape where other tensors share the storage (tied, a view's base, a
    view), or another dtype, is refused."""
    with mount(["linear.pt", "pytorch_model.bin", "views.pt"]) as m:
        e = Edit(m, "linear.pt")
        new = np.linspace(-1, 1, 4).astype(np.float32)
        np.save(m.m("linear.pt", "0", "bias", "data.npy"), new)
        e.check(lambda o: o["0.bias"].copy_(torch.from_numpy(new)), [key_of(m, "linear.pt", "0", "bias")],
                in_place=True)
        for name, p, shape in (("pytorch_model.bin", ("lm_head", "weight"), (8, 16)),
                               ("views.pt", ("base",), (6, 4)), ("views.pt", ("rows",), (12,))):
            expect_refused(m, os.path.join(name, *p, "data.npy"), None, m.s(name), errno.EINVAL,
                           writer=npy_saver(np.zeros(shape, np.float32)))
        expect_refused(m, "linear.pt/0/weight/data.npy", None, m.s("linear.pt"), errno.EINVAL,
                       writer=npy_saver(np.zeros((4, 5), np.float64)))


def test_data_npy_new_shape():
    """data.npy changes the shape of a tensor that alone covers its storage:
    the storage record rewritten, the pickle's sizes and numel follow."""
    with mount(["linear.pt", "conv_bn.pth"]) as m:
        for name, p, new in (("linear.pt", ("0", "bias"), np.linspace(-1, 1, 6).astype(np.float32)),
                             ("conv_bn.pth", ("0", "weight"), np.ones((2, 3, 3, 3), np.float32))):
            e = Edit(m, name)
            key = key_of(m, name, *p)
            np.save(m.m(name, *p, "data.npy"), new)
            after = e.check(setter(".".join(p), torch.from_numpy(new.copy())), [key, "pickle"])
            eq(tuple(after[".".join(p)].shape), new.shape, "the new shape")
            eq(read_text(m.m(name, *p), "shape"), " ".join(map(str, new.shape)) + "\n", "shape in the mount")


CKPT = "epoch=9-step=100.ckpt"


def edit_cases(m, name, cases, one_op=True):
    """Each (view, text, mutate) written and checked: the pickle record
    changed (in one opcode, when one_op), every other record as it was."""
    for view, text, mutate in cases:
        e = Edit(m, name)
        write_ok(m.m(name, view), text)
        e.check(mutate, ["pickle"], pickle_op=view if one_op else None)


def setter(*path):
    """mutate(obj) setting obj[path[0]]...[path[-2]] to path[-1]."""
    def mutate(o):
        for k in path[:-2]:
            o = o[k]
        o[path[-2]] = path[-1]
    return mutate


def test_edit_scalars_in_place():
    """Values whose opcode keeps its length: patched into the pickle, only
    that opcode changed, every other record byte-identical and aligned."""
    with mount([CKPT]) as m:
        edit_cases(m, CKPT, [
            ("epoch", "10\n", setter("epoch", 10)),
            ("hyper_parameters/lr", "0.0005\n", setter("hyper_parameters", "lr", 0.0005)),
            ("hyper_parameters/eps", "1e-300\n", setter("hyper_parameters", "eps", 1e-300)),
            ("optimizer_states/0/param_groups/0/amsgrad", "True\n",
             setter("optimizer_states", 0, "param_groups", 0, "amsgrad", True))])


def test_edit_pickle_rewrite():
    """Values of another length: the pickle record written again (only that
    value's opcode changed), the archive rewritten with every later
    record's bytes and 64-byte alignment kept; a string the pickle uses at
    two places through its memo changes at the edited one only."""
    with mount([CKPT, "plain.pt"]) as m:
        long = "2.1.0rc1+a much longer version string"
        edit_cases(m, CKPT, [
            ("global_step", "123456789012", setter("global_step", 123456789012)),
            ("pytorch-lightning_version", long + "\n", setter("pytorch-lightning_version", long))])
        # 500 bytes more: beyond any record's alignment padding, every later
        # record moves (the archive written again, atomically: a new inode)
        ino, at = os.stat(m.s(CKPT)).st_ino, pc.records(m.s(CKPT))
        edit_cases(m, CKPT, [("pytorch-lightning_version", "v" * 500, setter("pytorch-lightning_version", "v" * 500))])
        check(os.stat(m.s(CKPT)).st_ino != ino, "the archive was not written again")
        moved = [n for n, r in pc.records(m.s(CKPT)).items() if r[2] != at[n][2]]
        check(len(moved) == len(at) - 1, "records that moved: %r" % moved)
        edit_cases(m, "plain.pt", [("big_int", "-%d\n" % 2 ** 90, setter("big_int", -2 ** 90)),
                                   ("str", "\n", setter("str", ""))])
        edit_cases(m, CKPT, [("hparams_name", "\n", setter("hparams_name", ""))], one_op=False)
        check("hparams" in os.listdir(m.m(CKPT, "hyper_parameters")), "the key that shares the string")
        cb = [n for n in os.listdir(m.m(CKPT, "callbacks")) if n.startswith("ModelCheckpoint")][0]
        edit_cases(m, CKPT, [("callbacks/%s/monitor" % cb, "train_loss\n",
                              setter("callbacks", cb, "monitor", "train_loss"))], one_op=False)
        eq(read_text(m.m(CKPT, "hyper_parameters", "monitor")), "val_loss\n", "the other use of the string")


def test_edit_literals():
    """Lists and tuples of plain values written as Python literals (same
    type, any length); another type or unparsable text is refused."""
    with mount(["plain.pt"]) as m:
        edit_cases(m, "plain.pt", [("nested", "[[1, 2, 3], [], 'z']\n", setter("nested", [[1, 2, 3], [], "z"])),
                                   ("empty_tuple", "(1.5,)\n", setter("empty_tuple", (1.5,))),
                                   ("tuple1", "(6,)", setter("tuple1", (6,)))], one_op=False)
        for text in ("(0.9, \n", "[0.9, 0.99]\n", "(0.9, os)\n", "(0.9, (lambda: 1))\n"):
            expect_refused(m, "plain.pt/tuple1", text, m.s("plain.pt"), errno.EINVAL)


def test_edit_shared_literal():
    """A tuple the pickle takes from its memo (the betas of every param
    group): the edited place changes alone, the one that took it (a GET) as
    well as the one that built it."""
    for first in (1, 0):
        with mount(["optimizer.pt"]) as m:
            other = 1 - first
            edit_cases(m, "optimizer.pt", [("param_groups/%d/betas" % first, "(0.8, 0.99)\n",
                                            setter("param_groups", first, "betas", (0.8, 0.99)))], one_op=False)
            eq(read_text(m.m("optimizer.pt", "param_groups", str(other), "betas")), "(0.9, 0.999)\n",
               "the other place of the shared tuple")
            edit_cases(m, "optimizer.pt", [("param_groups/%d/betas" % other, "(0.5, 0.25, 1)\n",
                                            setter("param_groups", other, "betas", (0.5, 0.25, 1)))],
                       one_op=False)
            eq(read_text(m.m("optimizer.pt", "param_groups", str(first), "betas")), "(0.8, 0.99)\n",
               "the place edited first")


def test_objects_read_only():
    """Every file of an inert object (class, args, state and below) is
    read-only: a write is refused and the source stays byte-identical."""
    names = ["evil.pt", "user_class.pt"]
    with mount(names + [CKPT]) as m:
        roots = [m.m("evil.pt"), m.m("user_class.pt", "config"), m.m(CKPT, "hyper_parameters", "hparams")]
        for root in roots:
            src = m.s(os.path.relpath(root, m.mnt).split(os.sep)[0])
            for p in [root] + list(walk(root)):
                if not os.path.isfile(p) or os.path.basename(p) == "index":
                    continue
                before = sha(src)
                check(not os.stat(p).st_mode & 0o222, "%s is writable" % p)
                check(write_file(p, "1\n") is not None, "a write to %s was accepted" % p)
                eq(sha(src), before, "source after a write to " + p)


def test_edit_bytes():
    with mount([PROTOCOL2]) as m:
        edit_cases(m, PROTOCOL2, [("bytes", b"new\x00bytes", setter("bytes", b"new\x00bytes"))], one_op=False)


def test_refused():
    """Bad input: EINVAL (ERANGE out of range), the source byte-identical,
    an errors line naming the view; read-only parts refuse to open."""
    c = "epoch=9-step=100.ckpt"
    with mount([c, "dtypes.pt", "legacy.pt", "pytorch_model.bin"]) as m:
        for view, text, code in [
                (c + "/epoch", "nine\n", errno.EINVAL), (c + "/epoch", "9.5\n", errno.EINVAL),
                (c + "/hyper_parameters/lr", "fast\n", errno.EINVAL),
                (c + "/optimizer_states/0/param_groups/0/amsgrad", "maybe\n", errno.EINVAL),
                ("dtypes.pt/int8/values.txt", "1 2\n", errno.EINVAL),
                ("dtypes.pt/int8/values.txt", "1 2 300\n", errno.ERANGE),
                ("dtypes.pt/uint8/values.txt", "-1 2 3\n", errno.ERANGE),
                ("dtypes.pt/float16/values.txt", "1 2 3 4 5 70000\n", errno.ERANGE),
                ("dtypes.pt/bool/values.txt", "1 0 2\n", errno.ERANGE),
                ("dtypes.pt/float32/values.txt", "1 2 x 4 5 6\n", errno.EINVAL),
                ("pytorch_model.bin/model/norm/weight/values.txt", "1e39 " * 8 + "\n", errno.ERANGE),
                ("pytorch_model.bin/model/embed_tokens/weight/values.txt", "1e39 " * 128 + "\n", errno.ERANGE),
                ("legacy.pt/0/weight/values.txt", "1 2 3\n", errno.EINVAL)]:
            expect_refused(m, view, text, m.s(view.split("/")[0]), code)
        before = sha(m.s(c))
        # an object's parts, the index, None (which has no other value)
        for p in ("hyper_parameters/hparams/class", "hyper_parameters/hparams/args",
                  "hyper_parameters/hparams/state/lr", "index", "optimizer_states/0/param_groups/0/foreach"):
            check(write_file(m.m(c, p), "x\n") is not None, "a read-only file was written: " + p)
        eq(sha(m.s(c)), before, "source after writes to read-only files")


def test_legacy_in_place():
    with mount(["legacy.pt", "legacy_dtypes.pth"]) as m:
        e = Edit(m, "legacy.pt")
        write_ok(m.m("legacy.pt", "2", "bias", "values.txt"), "0.5\n-0.25\n1e-30\n")
        e.check(lambda o: o["2.bias"].copy_(torch.tensor([0.5, -0.25, 1e-30])), in_place=True)
        e = Edit(m, "legacy_dtypes.pth")
        write_ok(m.m("legacy_dtypes.pth", "complex128", "values.txt"), "1+1j\n-2-0j\n")
        e.check(lambda o: o["complex128"].copy_(torch.tensor([[1 + 1j], [complex(-2, -0.0)]])), in_place=True)
        raw0, raw1 = e.raw, open(m.s("legacy_dtypes.pth"), "rb").read()
        diff = [i for i in range(len(raw0)) if raw0[i] != raw1[i]]
        t = [t for p, t in td.tensors(td.load(m.s("legacy_dtypes.pth"))) if p == ("complex128",)][0]
        check(all(t.file_offset <= i < t.file_offset + 32 for i in diff), "bytes changed outside the storage")


def test_many_and_large():
    """A checkpoint of thousands of tensors and a large one: every file
    reads its st_size, values equal torch.load's, and an edit near the end
    of the large tensor lands there with every other record unchanged."""
    n, rows = (500, 256) if SLOW else (2000, 2048)
    g = torch.Generator().manual_seed(5)
    sd = collections.OrderedDict(("layers.%d.block.%d.w" % (i // 10, i % 10), torch.randn(3, 4, generator=g))
                                 for i in range(n))
    sd["big.w"] = torch.randn(rows, 4096, generator=g)  # 32 MiB (4 under a sanitizer)
    m = Mount([])
    tw.save(sd, m.s("many.pt"))
    with m:
        eq(read_every_file(m.m("many.pt")) >= 4 * n, True, "files read")
        ref = pc.check_tree(m, "many.pt")
        pc.same_as_decoded(pc.tload(m.s("many.pt")), ref, "many.pt")
        e = Edit(m, "many.pt")
        k = rows * 4096 - 3
        m.sh("printf '\\000\\000\\300\\177' | dd of=many.pt/big/w/data bs=4 seek=%d conv=notrunc status=none" % k)

        def nan_at(o):
            o["big.w"].view(-1)[k] = float("nan")
        e.check(nan_at, [key_of(m, "many.pt", "big", "w")], in_place=True, tree=False)
        eq(read_text(m.m("many.pt", "big", "w"), "values.txt").split()[-3], "nan", "the edit in the mount")


# ---------------------------------------------------------------- hostile

def test_nothing_runs():
    """A pickle that would run os.system, one naming a user's class: shown
    as inert objects; nothing is imported or called."""
    if os.path.exists(tw.PWNED):
        os.unlink(tw.PWNED)
    names = list(HOSTILE)
    with mount(names) as m:
        read_every_file(m.mnt)
        for n in names:
            pc.check_tree(m, n)
        eq(read_text(m.m("evil.pt"), "class"), "posix.system\n", "the call's global")
        eq(read_text(m.m("evil.pt"), "args"), "('touch %s',)\n" % tw.PWNED, "the call's arguments")
        eq(read_text(m.m("evil_nested.pt", "payload"), "class"), "posix.system\n", "nested call")
        check(os.path.isdir(m.m("evil_nested.pt", "state_dict", "0", "weight")), "the rest shown as usual")
        eq(read_text(m.m("evil_legacy.pt", "payload"), "class"), "posix.system\n", "legacy call")
        u = m.m("user_class.pt", "config")
        eq(read_text(u, "class"), "mylab.config.TrainConfig\n", "user's class")
        eq(read_text(u, "state", "tags"), "['a', 'b']\n", "user's object state")
        eq(read_text(os.path.join(u, "state", "mask"), "values.txt"), "1\n0\n1\n", "tensor in an object")
        check(not os.path.exists(tw.PWNED), "the pickle's command ran")
        eq(error_lines(m), [], "error lines")
    check(not os.path.exists(tw.PWNED), "the pickle's command ran")


def test_broken_pass_through():
    """Truncated files, a missing record, a storage shorter than its
    tensors: plain files, byte-identical, each with an errors line."""
    m = Mount([])
    broken = tw.write_broken(m.src)
    with m:
        for n in broken:
            settle(m.m(n))
        for n, b in broken.items():
            check(os.path.isfile(m.m(n)), n + " shown as a model")
            eq(m.read(n), b, n + " passed through changed")
        errs = "\n".join(error_lines(m))
        for n in broken:
            check((" %s: " % n) in errs, "no errors line for %s:\n%s" % (n, errs))


def test_zip_layout_of_samples():
    """The samples are what torch 1.13 writes: records 64-byte aligned,
    data descriptors, the top folder as named."""
    for n in ZIPS:
        recs = pc.records(os.path.join(SAMPLES, n))
        pc.check_archive(os.path.join(SAMPLES, n), recs, ())
    tops = {n: td.zip_top(zipfile.ZipFile(os.path.join(SAMPLES, n))) for n in ZIPS}
    eq(tops["checkpoint"], "weights/", "a file renamed after saving")
    eq(tops["pytorch_model.bin"], "archive/", "saved through a buffer")


def random_finite(rng, dtype, shape):
    """Values of dtype from random bits (every exponent, both signs), the
    non-finite ones replaced by 0."""
    n = int(np.prod(shape))
    size = np.dtype(dtype).itemsize
    bits = rng.integers(0, 2 ** (8 * size), n, dtype=np.uint64, endpoint=False)
    a = bits.astype("<u%d" % size).view(dtype)
    a[~np.isfinite(a)] = 0
    return a.reshape(shape)


def test_digits_bit_exact():
    """float32 and float64 values from random bits written through
    values.txt with every digit (%.9g, %.17g): a float32 tensor of 600x1000
    (147 chunks of 4096 values: read ahead, its text kept) and a float64
    view with a storage offset (rows 5 on of a larger storage, which another
    tensor also shows); torch.load reads them back bit-exact, data and the
    float64 values.txt read them back as the same bits, the rows before the
    view unchanged; with the text cache on and off."""
    rng = np.random.default_rng(11)
    rows = 150 if SLOW else 600
    for opts in ([], ["-o", "text_cache=0"]):
        base = torch.from_numpy(random_finite(rng, np.float64, (rows // 4 + 5, 400)))
        with mount([], opts=opts) as m:
            torch.save({"f32": torch.zeros(rows, 1000), "base": base, "f64": base[5:]}, m.s("d.pt"))
            new32 = random_finite(rng, np.float32, (rows, 1000))
            new64 = random_finite(rng, np.float64, (rows // 4, 400))
            write_ok(m.m("d.pt", "f32", "values.txt"),
                     "".join(" ".join("%.9g" % v for v in r) + "\n" for r in new32.tolist()))
            write_ok(m.m("d.pt", "f64", "values.txt"),
                     "".join(" ".join("%.17g" % v for v in r) + "\n" for r in new64.tolist()))
            o = torch.load(m.s("d.pt"))
            eq(o["f32"].numpy().tobytes(), new32.tobytes(), "%s float32 bit-exact" % (opts,))
            eq(o["f64"].numpy().tobytes(), new64.tobytes(), "%s float64 bit-exact" % (opts,))
            eq(o["base"][:5].numpy().tobytes(), base[:5].numpy().tobytes(), "the rows before the view")
            check(o["base"].storage().data_ptr() == o["f64"].storage().data_ptr(), "storage still shared")
            with open(m.m("d.pt", "f32", "data"), "rb") as f:
                eq(f.read(), new32.tobytes(), "%s data of float32" % (opts,))
            back = np.array(read_text(m.m("d.pt", "f64"), "values.txt").split(), dtype=np.float64)
            eq(back.tobytes(), new64.tobytes(), "%s values.txt of float64" % (opts,))


def test_readers_and_writers():
    """Readers of one tensor's data, values.txt and data.npy at once while
    two writers commit whole new contents, one through data and one through
    values.txt (a 400x1000 float32 tensor: 98 chunks, read ahead and kept):
    every read is one whole version; at the end torch.load reads the
    version data shows, and the other tensor is unchanged."""
    rows = 200 if SLOW else 400  # 49 or 98 chunks: past the 32 at which text is kept
    versions = [np.full((rows, 1000), k, dtype=np.float32) for k in (1.0, 2.5, -3.0, 4.25)]
    raws = {v.tobytes() for v in versions}
    other = torch.arange(12, dtype=torch.float64)
    with mount([]) as m:
        torch.save({"w": torch.from_numpy(versions[0].copy()), "other": other}, m.s("c.pt"))
        d = m.m("c.pt", "w")
        bad, stop = [], threading.Event()

        def reader(view):
            while not stop.is_set():
                with open(os.path.join(d, view), "rb") as f:
                    got = f.read()
                if view == "data" and got not in raws:
                    bad.append("data: %d bytes of no version" % len(got))
                elif view == "values.txt":
                    lines = got.split(b"\n")
                    if len(lines) != rows + 1 or len(set(lines[:-1])) != 1:
                        bad.append("values.txt: %d lines, mixed" % len(lines))
                elif view == "data.npy":
                    a = np.load(io.BytesIO(got))
                    if a.tobytes() not in raws:
                        bad.append("data.npy: no version")

        def writer(view, order):
            for k in order:
                if view == "data":
                    with open(os.path.join(d, "data"), "r+b") as f:
                        f.write(versions[k].tobytes())
                else:
                    write_ok(os.path.join(d, "values.txt"), values_text(versions[k]))

        readers = [threading.Thread(target=reader, args=(v,))
                   for v in ("data", "data", "values.txt", "data.npy")]
        writers = [threading.Thread(target=writer, args=("data", (1, 2, 3, 0, 2) * 3)),
                   threading.Thread(target=writer, args=("values.txt", (3, 1, 0, 2) * 3))]
        for t in readers + writers:
            t.start()
        for t in writers:
            t.join()
        stop.set()
        for t in readers:
            t.join()
        check(not bad, "readers: %r" % bad[:3])
        with open(os.path.join(d, "data"), "rb") as f:
            last = f.read()
        check(last in raws, "the last version is one written")
        o = torch.load(m.s("c.pt"))
        eq(o["w"].numpy().tobytes(), last, "torch.load reads what data shows")
        eq(o["other"].tolist(), other.tolist(), "the other tensor")
        with zipfile.ZipFile(m.s("c.pt")) as z:
            eq(z.testzip(), None, "zipfile clean")
        eq(m.errors(), "", ".modelfs/errors")


if __name__ == "__main__":
    try:
        run([test_zip_layout_of_samples, test_read_every_file, test_module_state_dicts,
             test_hugging_face_checkpoint, test_optimizer_and_lightning, test_plain_values,
             test_protocol2_sets, test_protocol2_bytes, test_every_dtype,
             test_views, test_edit_values_txt, test_edit_tied_and_bfloat16, test_edit_through_views,
             test_data_npy_same_shape, test_data_npy_new_shape, test_edit_scalars_in_place, test_edit_pickle_rewrite,
             test_edit_literals, test_edit_shared_literal,
             test_objects_read_only, test_edit_bytes, test_refused, test_legacy_in_place, test_many_and_large,
             test_nothing_runs, test_broken_pass_through, test_digits_bit_exact,
             test_readers_and_writers])
    finally:
        shutil.rmtree(SAMPLES, ignore_errors=True)
