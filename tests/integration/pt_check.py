"""Checks of PyTorch checkpoints in a mount (test_pytorch.py): the tree
docs/layout.md "PyTorch" gives an object read by torch_decode.py (dicts by
the dotted-name rule, lists, one-value files, inert objects, tensor
directories), each tensor's views and storage key, `index`; torch.load
results compared object by object with the sharing of storages; zip records
compared record by record (bytes, CRC-32, data descriptor, 64-byte
alignment) and pickles compared opcode by opcode."""
import collections
import os
import pickletools
import struct
import zipfile

import numpy as np
import torch

import torch_decode as td
from formats import data_end, escape_name, parse_values, read_text, shape_of
from harness import check, eq

VIEWS = ("shape", "dtype", "values.txt", "data", "data.npy")
STORAGE = "user.modelfs.storage"


# ---------------------------------------------------------------- names

def component(c):
    if c == "":
        return "%"
    if c in VIEWS:
        return c + "~1"
    return escape_name(c)


class Node:
    """A directory entry of a dict: its value (or none) and children."""

    def __init__(self):
        self.value, self.has_value, self.children = None, False, collections.OrderedDict()


def dict_tree(d, top):
    """The entries of dict d: string keys split at '.', other keys by their
    repr; at the model root a key `index` is `index~1`."""
    root = Node()
    for k, v in d.items():
        comps = [component(c) for c in k.split(".")] if isinstance(k, str) else [escape_name(repr(k))]
        if top and comps[0] == "index":
            comps[0] = "index~1"
        node = root
        for c in comps:
            node = node.children.setdefault(c, Node())
        node.value, node.has_value = v, True
    return root


def deep(v):
    """A container shown as a directory: it holds a tensor, a dict or an
    object at some depth."""
    if isinstance(v, (td.TRef, dict, td.Obj)):
        return True
    if isinstance(v, (list, tuple, set)):
        return any(deep(x) for x in v)
    return False


def literal(v):
    """The one-value file of a plain value."""
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return (v + "\n").encode("utf-8", "surrogateescape")
    return (repr(v) + "\n").encode()


# ---------------------------------------------------------------- the tree

def bf16_values(text):
    """values.txt of a bfloat16 tensor: each number rounded to bfloat16 (ties
    to even) and widened back to float32."""
    f = torch.tensor([float(t) for t in text.replace(",", " ").split()], dtype=torch.float64)
    return f.to(torch.bfloat16).to(torch.float32).numpy()


def check_tensor(path, t):
    """One tensor directory against TRef t: shape, dtype, values.txt and
    data.npy in logical order, data where the tensor is a span, its storage
    key; overlapping tensors read-only."""
    check(os.path.isdir(path), "tensor %s is not a directory" % path)
    names = set(os.listdir(path))
    span = t.span()
    for v in ("shape", "dtype", "values.txt", "data.npy"):
        check(v in names, "no %s in %s" % (v, path))
    check(("data" in names) == (span is not None),
          "data %s in %s (span: %s)" % ("shown" if "data" in names else "absent", path, span))
    eq(shape_of(path), t.size, "shape of " + path)
    eq(read_text(path, "dtype"), t.dtype + "\n", "dtype of " + path)
    a = np.load(os.path.join(path, "data.npy"))
    mm = np.load(os.path.join(path, "data.npy"), mmap_mode="r")
    same(np.array(mm), a, "data.npy with mmap_mode='r' of " + path)
    del mm
    same(a, t.values, "data.npy of " + path)
    if a.ndim > 1 and span == "F":
        check(a.flags.f_contiguous, "data.npy of a column-major tensor is not fortran_order: " + path)
    text = read_text(path, "values.txt")
    if t.numel:
        check(text.endswith("\n"), "values.txt of %s without its newline" % path)
    got = bf16_values(text) if t.dtype == "bfloat16" else parse_values(text, t.dtype)
    same(got.reshape(t.size), t.values, "values.txt of " + path)
    if span is not None:
        raw = open(os.path.join(path, "data"), "rb").read()
        start = t.offset * t.itemsize
        storage = storage_bytes(t)
        eq(raw, storage[start:start + t.numel * t.itemsize], "data of " + path)
    eq(os.getxattr(path, STORAGE).decode(), t.key, STORAGE + " of " + path)
    if t.overlaps():
        for v in ("values.txt", "data.npy"):
            check(not os.stat(os.path.join(path, v)).st_mode & 0o222,
                  "%s of an overlapping view is writable: %s" % (v, path))


def storage_bytes(t):
    """The bytes of t's whole storage as the file holds them."""
    return t.storage_raw


def same(a, b, what):
    """Equal shape, dtype and bits (NaN equals NaN, -0 differs from 0)."""
    a, b = np.asarray(a), np.asarray(b)
    eq(a.shape, b.shape, "shape of " + what)
    eq(a.dtype, b.dtype, "dtype of " + what)
    ab = np.ascontiguousarray(a).view(np.uint8) if a.size else a
    bb = np.ascontiguousarray(b).view(np.uint8) if b.size else b
    if a.dtype.kind in "fc":
        # NaNs with any payload are equal; everything else bit for bit
        nan = np.isnan(a) & np.isnan(b)
        if not (np.array_equal(np.where(nan, 0, a), np.where(nan, 0, b))
                and np.array_equal(np.signbit(np.where(nan, 0, a).real), np.signbit(np.where(nan, 0, b).real))):
            raise AssertionError("%s: %r != %r" % (what, a, b))
    elif not np.array_equal(ab, bb):
        raise AssertionError("%s: %r != %r" % (what, a, b))


def check_value(path, v, extra=()):
    """The entry path shows v; extra: names the model root adds."""
    if isinstance(v, td.TRef):
        check_tensor(path, v)
    elif isinstance(v, dict):
        check_dict(path, v, top=False)
    elif isinstance(v, td.Obj):
        want = (["class", "args"] + ([] if v.state is td.NOSTATE else ["state"])
                + (["items"] if v.items else []) + (["list"] if v.list else []))
        eq(sorted(os.listdir(path)), sorted(want + list(extra)), "entries of the object " + path)
        eq(read_text(path, "class"), v.cls + "\n", "class of " + path)
        check_value(os.path.join(path, "args"), v.args)
        if v.state is not td.NOSTATE:
            check_value(os.path.join(path, "state"), v.state)
        if v.items:
            check_value(os.path.join(path, "items"), v.items)
        if v.list:
            check_value(os.path.join(path, "list"), v.list)
    elif isinstance(v, (list, tuple, set)) and deep(v):
        check(os.path.isdir(path), "%s is not a directory" % path)
        eq(os.listdir(path), [str(i) for i in range(len(v))] + list(extra), "entries of " + path)
        for i, x in enumerate(v):
            check_value(os.path.join(path, str(i)), x)
    else:
        check(os.path.isfile(path), "%s is not a file" % path)
        eq(open(path, "rb").read(), literal(v), "value of " + path)


def check_dict(path, d, top):
    check(os.path.isdir(path), "%s is not a directory" % path)
    check_node(path, dict_tree(d, top), ["index"] if top else [])


def check_node(path, node, extra):
    """The entries of a dict's directory (a tensor's views aside; extra:
    names the model root adds) and each of their values."""
    got = os.listdir(path)
    if node.has_value:
        got = [n for n in got if n not in VIEWS]
    for x in extra:
        check(x in got, "no %s in %s" % (x, path))
    eq([n for n in got if n not in extra], list(node.children), "entries of " + path)
    for name, child in node.children.items():
        p = os.path.join(path, name)
        if child.has_value:
            check_value(p, child.value)
        if child.children:
            check_node(p, child, [])


def resolve(obj, comps):
    """The value a path of the model directory (components) shows."""
    v, top, i = obj, True, 0
    while i < len(comps):
        if isinstance(v, dict):
            n = dict_tree(v, top).children[comps[i]]
            i += 1
            while not n.has_value or (i < len(comps) and comps[i] in n.children):
                n = n.children[comps[i]]
                i += 1
            v = n.value
        elif isinstance(v, (list, tuple)):
            v, i = v[int(comps[i])], i + 1
        else:
            v, i = (v.args if comps[i] == "args" else v.state), i + 1
        top = False
    return v


def load(src):
    """torch_decode's object of src, each TRef with its storage's bytes."""
    obj = td.load(src)
    raw = open(src, "rb").read()
    sizes = {}
    if raw[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(src) as z:
            top = td.zip_top(z)
            sizes = {i.filename[len(top) + 5:]: i.file_size for i in z.infolist()
                     if i.filename.startswith(top + "data/")}
    for _, t in td.tensors(obj):
        n = sizes[t.key] if sizes else struct.unpack("<q", raw[t.file_offset - 8:t.file_offset])[0] * t.itemsize
        t.storage_raw = raw[t.file_offset:t.file_offset + n]
    return obj


def check_tree(m, name):
    """The model directory of name against torch_decode's reading; returns
    that object."""
    obj = load(m.s(name))
    root = m.m(name)
    if isinstance(obj, dict):
        check_dict(root, obj, top=True)
    else:
        check(os.path.isdir(root), root + " is not a directory")
        check(os.path.isfile(os.path.join(root, "index")), "no index in " + root)
        check_value(root, obj, ["index"])
    check_index(m, name, obj)
    return obj


def esc_index(s):
    return s.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n")


def check_index(m, name, obj):
    lines = read_text(m.m(name), "index").split("\n")
    eq(lines[-1], "", "index of %s ends with a newline" % name)
    lines = lines[:-1]
    want = list(td.tensors(obj))
    eq(len(lines), len(want), "lines of the index of " + name)
    for ln, (path, t) in zip(lines, want):
        f = ln.split("\t")
        eq(len(f), 5, "fields of index line %r" % ln)
        eq(f[0], esc_index(".".join(str(p) for p in path)), "index name")
        eq(f[1:3], [t.dtype, " ".join(map(str, t.size))], "dtype and shape of %s in the index" % f[0])
        if t.span() is not None:
            eq(f[3:], [str(t.file_offset + t.offset * t.itemsize), str(t.numel * t.itemsize)],
               "offset and length of %s in the index" % f[0])


# ---------------------------------------------------------------- torch.load

def tload(path):
    return torch.load(path)


def walk_torch(obj, path=()):
    if isinstance(obj, torch.Tensor):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from walk_torch(v, path + (k,))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from walk_torch(v, path + (i,))


def sharing(obj):
    """Which tensors share a storage: sorted groups of paths."""
    groups = collections.defaultdict(list)
    for p, t in walk_torch(obj):
        groups[t.storage().data_ptr()].append(p)
    return sorted(sorted(map(repr, g)) for g in groups.values())


def bits(t):
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    return t.numpy().tobytes()


def same_torch(a, b, what):
    """torch.load results a and b hold the same objects: types, keys in
    order, tensors with the same dtype, sizes, strides, offset and bits."""
    eq(type(a), type(b), "type of " + what)
    if isinstance(a, torch.Tensor):
        eq((a.dtype, tuple(a.shape), a.stride(), a.storage_offset(), a.requires_grad),
           (b.dtype, tuple(b.shape), b.stride(), b.storage_offset(), b.requires_grad), "tensor " + what)
        eq(bits(a), bits(b), "elements of " + what)
    elif isinstance(a, dict):
        eq(list(a.keys()), list(b.keys()), "keys of " + what)
        for k in a:
            same_torch(a[k], b[k], "%s[%r]" % (what, k))
    elif isinstance(a, (list, tuple)):
        eq(len(a), len(b), "length of " + what)
        for i, (x, y) in enumerate(zip(a, b)):
            same_torch(x, y, "%s[%d]" % (what, i))
    elif isinstance(a, float):
        check(a == b or (a != a and b != b), "%s: %r != %r" % (what, a, b))
        eq(repr(a), repr(b), what)
    elif hasattr(a, "__dict__") and not isinstance(a, type):
        same_torch(vars(a), vars(b), what + ".__dict__")
    else:
        eq(a, b, what)


def same_as_decoded(obj, ref, what="object"):
    """torch.load's object against torch_decode's reading of the same file."""
    if isinstance(ref, td.TRef):
        check(isinstance(obj, torch.Tensor), what + " is not a tensor")
        eq((tuple(obj.shape), obj.stride(), obj.storage_offset()), (ref.size, ref.stride, ref.offset), what)
        v = obj.detach()
        v = v.float() if v.dtype == torch.bfloat16 else v
        same(v.numpy(), ref.values, what)
    elif isinstance(ref, dict):
        eq(list(obj.keys()), list(ref.keys()), "keys of " + what)
        for k in ref:
            same_as_decoded(obj[k], ref[k], "%s[%r]" % (what, k))
    elif isinstance(ref, (list, tuple)):
        eq(len(obj), len(ref), "length of " + what)
        for i, (x, y) in enumerate(zip(obj, ref)):
            same_as_decoded(x, y, "%s[%d]" % (what, i))
    elif isinstance(ref, td.Obj):
        eq("%s.%s" % (type(obj).__module__, type(obj).__name__), ref.cls, "class of " + what)
        same_as_decoded(vars(obj), ref.state, what + ".__dict__")
    else:
        eq(repr(obj), repr(ref), what)


# ---------------------------------------------------------------- the file

def records(path):
    """The zip's records in order: name -> (data bytes, CRC-32, data offset)."""
    raw = open(path, "rb").read()
    out = collections.OrderedDict()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            at = td.data_offset(raw, info)
            out[info.filename] = (raw[at:at + info.compress_size], info.CRC, at)
    return out


def check_archive(path, before, changed):
    """After an edit: zipfile finds the archive clean, every record starts at
    a multiple of 64, data descriptors agree with the central directory, the
    same records in the same order, and every record not in changed holds
    the same bytes."""
    with zipfile.ZipFile(path) as z:
        eq(z.testzip(), None, "testzip of " + path)
        for info in z.infolist():
            eq(info.compress_type, zipfile.ZIP_STORED, "compression of " + info.filename)
    check_crcs(path)
    after = records(path)
    eq(list(after), list(before), "records of " + path)
    for name, (data, crc, at) in after.items():
        eq(at % 64, 0, "alignment of %s's data (offset %d)" % (name, at))
        if name not in changed:
            eq(data, before[name][0], "bytes of the record %s, which the edit did not change" % name)
            eq(crc, before[name][1], "CRC-32 of " + name)
    return after


def check_crcs(path):
    """Each record's CRC-32 and sizes agree in its local header (where the
    record has no data descriptor: torch writes one after every non-empty
    record, its local header's CRC then 0), its data descriptor and the
    central directory."""
    raw = open(path, "rb").read()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            h = info.header_offset
            crc, csize, size = struct.unpack("<III", raw[h + 14:h + 26])
            if info.flag_bits & 8:
                check(crc in (0, info.CRC), "local CRC-32 of " + info.filename)
                end = data_end(raw, info)
                got = struct.unpack("<IIII", raw[end:end + 16])
                eq(got, (0x08074b50, info.CRC, info.compress_size, info.file_size),
                   "the data descriptor of " + info.filename)
            else:
                eq((crc, csize, size), (info.CRC, info.compress_size, info.file_size),
                   "local header of " + info.filename)


def pickle_diff(old, new):
    """The ranges of old and new pickles that differ: (prefix, old end,
    new end) after the common prefix and suffix."""
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    return p, len(old) - s, len(new) - s


def check_one_op(old, new, what):
    """Only one opcode of the old pickle changed: the bytes that differ lie
    within one opcode of old, and the new pickle parses."""
    p, oe, ne = pickle_diff(old, new)
    check(oe > p or ne > p, "the pickle did not change for " + what)
    ops = [pos for _, _, pos in pickletools.genops(old)] + [len(old)]
    start = max(q for q in ops if q <= p)
    nxt = ops[ops.index(start) + 1]
    check(oe <= nxt, "the edit of %s changed pickle bytes %d..%d, beyond the opcode at %d..%d"
          % (what, p, oe, start, nxt))
    list(pickletools.genops(new))
