"""An independent reader of torch.save files for the tests, which never
imports or calls what a pickle names: the zip layout (<top>/data.pkl and
<top>/data/<key>, any top folder) and the legacy stream
(_use_new_zipfile_serialization=False). Python's own Unpickler runs the
opcodes, with every global but OrderedDict and torch's rebuild functions
replaced by an inert Obj (class, args, state; items and list where the
pickle adds them, as to a dict or list subclass), as docs/layout.md "PyTorch"
says the mount shows them. Tensors are TRef: storage key, dtype, offset,
sizes, strides, and their elements (numpy, logical order) taken from the
storage's bytes; bfloat16 elements are widened exactly to float32.

As a program: `torch_decode.py FILE` prints each tensor's path, storage
key, dtype, shape and strides."""
import collections
import io
import pickle
import struct
import sys
import zipfile

import numpy as np

LEGACY_MAGIC = 0x1950a86a20f9469cfc6c

# storage type -> (dtype name, numpy dtype of the bytes, element size)
STORAGES = {
    "FloatStorage": ("float32", "<f4"), "DoubleStorage": ("float64", "<f8"),
    "HalfStorage": ("float16", "<f2"), "BFloat16Storage": ("bfloat16", "<u2"),
    "LongStorage": ("int64", "<i8"), "IntStorage": ("int32", "<i4"),
    "ShortStorage": ("int16", "<i2"), "CharStorage": ("int8", "|i1"),
    "ByteStorage": ("uint8", "|u1"), "BoolStorage": ("bool", "|b1"),
    "ComplexFloatStorage": ("complex64", "<c8"), "ComplexDoubleStorage": ("complex128", "<c16"),
}
NOSTATE = object()


class Obj:
    """An object the pickle would build by calling a global: never built."""

    def __init__(self, cls, args):
        self.cls, self.args, self.state = cls, args, NOSTATE
        self.items, self.list = {}, []  # what SETITEMS and APPENDS give it

    def __setitem__(self, k, v):
        self.items[k] = v

    def append(self, v):
        self.list.append(v)

    def extend(self, vs):
        self.list.extend(vs)

    def __repr__(self):
        return "Obj(%s, %r%s)" % (self.cls, self.args, "" if self.state is NOSTATE else ", %r" % (self.state,))


class StorageType:
    def __init__(self, name):
        self.name = name


class TRef:
    """A tensor: a view of storage key."""

    def __init__(self, key, stype, offset, size, stride, requires_grad, param=False):
        self.key, self.stype = key, stype
        self.offset, self.size, self.stride = offset, tuple(size), tuple(stride)
        self.requires_grad, self.param = requires_grad, param
        self.values = None      # numpy array in logical order, filled in by load()
        self.file_offset = None  # where storage element 0 sits in the file

    @property
    def dtype(self):
        return STORAGES[self.stype][0]

    @property
    def itemsize(self):
        return np.dtype(STORAGES[self.stype][1]).itemsize

    @property
    def numel(self):
        return int(np.prod(self.size, dtype=np.int64)) if self.size else 1

    def span(self):
        """'C' or 'F' where the elements cover one contiguous span of the
        storage in that order, else None."""
        if self.numel == 0 or len(self.size) == 0:
            return "C"
        dims = [(n, s) for n, s in zip(self.size, self.stride) if n != 1]
        if not dims:
            return "C"
        for order, seq in (("C", dims[::-1]), ("F", dims)):
            want, ok = 1, True
            for n, s in seq:
                if s != want:
                    ok = False
                    break
                want *= n
            if ok:
                return order
        return None

    def overlaps(self):
        return any(s == 0 and n > 1 for n, s in zip(self.size, self.stride))

    def __repr__(self):
        return "TRef(%s %s %s)" % (self.key, self.dtype, self.size)


def _rebuild_tensor_v2(storage, offset, size, stride, requires_grad=False, hooks=None, *rest):
    key, stype = storage
    return TRef(key, stype, offset, size, stride, requires_grad)


def _rebuild_parameter(t, requires_grad=False, hooks=None, *rest):
    t.requires_grad, t.param = requires_grad, True
    return t


def _inert(module, name):
    full = "%s.%s" % (module, name)

    class Inert:
        def __new__(cls, *args):
            return Obj(full, args)
    return Inert


class _Reader(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if (module, name) == ("torch._utils", "_rebuild_parameter"):
            return _rebuild_parameter
        # protocol 2 builds sets and bytes by calling these: plain data
        if (module, name) in (("builtins", "set"), ("__builtin__", "set")):
            return set
        if (module, name) in (("builtins", "bytes"), ("__builtin__", "bytes")):
            return bytes  # b'' is bytes()
        if (module, name) == ("_codecs", "encode"):
            return lambda text, enc="utf-8": text.encode(enc)
        if module == "torch" and name in STORAGES:
            return StorageType(name)
        return _inert(module, name)

    def persistent_load(self, pid):
        if pid[0] != "storage":
            raise pickle.UnpicklingError("persistent id %r" % (pid,))
        return (pid[2], pid[1].name)


def _setstate(obj, state):
    obj.state = state


# BUILD on an Obj records the state instead of setting attributes
Obj.__setstate__ = _setstate


def tensors(obj, path=()):
    """(path, TRef) of every tensor in pickle order (depth first); paths are
    tuples of keys and indices (an Obj's parts are 'args' and 'state')."""
    if isinstance(obj, TRef):
        yield path, obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from tensors(v, path + (k,))
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from tensors(v, path + (i,))
    elif isinstance(obj, Obj):
        yield from tensors(obj.args, path + ("args",))
        if obj.state is not NOSTATE:
            yield from tensors(obj.state, path + ("state",))
        yield from tensors(obj.items, path + ("items",))
        yield from tensors(obj.list, path + ("list",))


def _fill(obj, storages):
    """Sets each TRef's values and file_offset from storages: key -> (bytes,
    file offset of the bytes)."""
    for _, t in tensors(obj):
        raw, at = storages[t.key]
        flat = np.frombuffer(raw, dtype=STORAGES[t.stype][1])
        if t.stype == "BFloat16Storage":
            flat = (flat.astype(np.uint32) << 16).view(np.float32)
        item = flat.dtype.itemsize
        t.file_offset = at
        if t.numel == 0:
            t.values = np.zeros(t.size, dtype=flat.dtype)
            continue
        last = t.offset + sum((n - 1) * s for n, s in zip(t.size, t.stride))
        if last >= len(flat) or t.offset < 0:
            raise ValueError("tensor beyond its storage %s" % t.key)
        v = np.lib.stride_tricks.as_strided(flat[t.offset:], shape=t.size,
                                            strides=[s * item for s in t.stride], writeable=False)
        t.values = np.array(v)


def zip_top(z):
    names = z.namelist()
    pkl = [n for n in names if n.endswith("/data.pkl") and n.count("/") == 1]
    if len(pkl) != 1:
        raise ValueError("no <top>/data.pkl")
    return pkl[0][:-len("data.pkl")]


def data_offset(raw, info):
    h = info.header_offset
    n, x = struct.unpack("<HH", raw[h + 26:h + 30])
    return h + 30 + n + x


def load(path):
    """The object of a torch.save file, tensors filled in."""
    raw = open(path, "rb").read()
    if raw[:4] == b"PK\x03\x04":
        with zipfile.ZipFile(path) as z:
            top = zip_top(z)
            obj = _Reader(io.BytesIO(z.read(top + "data.pkl"))).load()
            storages = {}
            for _, t in tensors(obj):
                if t.key not in storages:
                    info = z.getinfo(top + "data/" + t.key)
                    at = data_offset(raw, info)
                    storages[t.key] = (raw[at:at + info.file_size], at)
    else:
        f = io.BytesIO(raw)
        if pickle.load(f) != LEGACY_MAGIC:
            raise ValueError("not a torch.save file")
        pickle.load(f)  # protocol version
        pickle.load(f)  # system info
        obj = _Reader(f).load()
        keys = pickle.load(f)
        sizes = {t.key: t.itemsize for _, t in tensors(obj)}
        storages = {}
        for k in keys:
            numel = struct.unpack("<q", f.read(8))[0]
            at = f.tell()
            storages[k] = (f.read(numel * sizes[k]), at)
    _fill(obj, storages)
    return obj


def main():
    for path, t in tensors(load(sys.argv[1])):
        print(".".join(map(str, path)), t.key, t.dtype, t.size, t.stride)


if __name__ == "__main__":
    main()
