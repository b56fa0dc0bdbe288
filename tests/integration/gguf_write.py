"""A GGUF writer and reader written from the public specification (ggml's
docs/gguf.md), independent of modelfs: tests and the sample generator use it
to make files and to read what modelfs wrote back.

write(path, kvs, tensors, alignment=None, version=3)
  kvs: list of (key, vtype, value); vtype is a name of VT, or ("array", t)
       for an array of t (t itself a name or ("array", ...)); a number may
       be given as its bytes.
  tensors: list of (name, ggml type id, ne (GGUF order), raw bytes).
read(path) -> dict with version, kvs (list of (key, vtype, value)), tensors
  (list of (name, type, ne, relative offset, bytes)), data (data section
  offset), alignment."""
import struct

VT = {"u8": 0, "i8": 1, "u16": 2, "i16": 3, "u32": 4, "i32": 5, "f32": 6, "bool": 7,
      "str": 8, "array": 9, "u64": 10, "i64": 11, "f64": 12}
VT_NAME = {v: k for k, v in VT.items()}
FMT = {"u8": "<B", "i8": "<b", "u16": "<H", "i16": "<h", "u32": "<I", "i32": "<i",
       "f32": "<f", "bool": "<?", "u64": "<Q", "i64": "<q", "f64": "<d"}
# ggml type id -> (name, elements per block, bytes per block)
GGML = {0: ("float32", 1, 4), 1: ("float16", 1, 2), 2: ("q4_0", 32, 18), 3: ("q4_1", 32, 20),
        6: ("q5_0", 32, 22), 7: ("q5_1", 32, 24), 8: ("q8_0", 32, 34), 9: ("q8_1", 32, 36),
        10: ("q2_k", 256, 84), 11: ("q3_k", 256, 110), 12: ("q4_k", 256, 144),
        13: ("q5_k", 256, 176), 14: ("q6_k", 256, 210), 15: ("q8_k", 256, 292),
        16: ("iq2_xxs", 256, 66), 17: ("iq2_xs", 256, 74), 18: ("iq3_xxs", 256, 98),
        19: ("iq1_s", 256, 50), 20: ("iq4_nl", 32, 18), 21: ("iq3_s", 256, 110),
        22: ("iq2_s", 256, 82), 23: ("iq4_xs", 256, 136), 24: ("int8", 1, 1),
        25: ("int16", 1, 2), 26: ("int32", 1, 4), 27: ("int64", 1, 8), 28: ("float64", 1, 8),
        29: ("iq1_m", 256, 56), 30: ("bfloat16", 1, 2), 34: ("tq1_0", 256, 54),
        35: ("tq2_0", 256, 66), 39: ("mxfp4", 32, 17), 40: ("nvfp4", 64, 36),
        41: ("q1_0", 128, 18), 42: ("q2_0", 64, 18)}


def _str(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack("<Q", len(b)) + b


def _value(vt, v):
    if isinstance(v, bytes) and vt != "str":
        return v  # a scalar's own bytes (a NaN's sign and payload exactly)
    if isinstance(vt, tuple):
        et = vt[1]
        code = VT["array"] if isinstance(et, tuple) else VT[et]
        return struct.pack("<IQ", code, len(v)) + b"".join(_value(et, x) for x in v)
    if vt == "str":
        return _str(v)
    return struct.pack(FMT[vt], v)


def _vtcode(vt):
    return VT["array"] if isinstance(vt, tuple) else VT[vt]


def nbytes(ggml_type, ne):
    _, blck, size = GGML[ggml_type]
    n = 1
    for d in ne:
        n *= d
    return n // blck * size


def write(path, kvs, tensors, alignment=None, version=3, pad_byte=b"\0"):
    align = alignment or 32
    if alignment is not None and not any(k == "general.alignment" for k, _, _ in kvs):
        kvs = [("general.alignment", "u32", alignment)] + list(kvs)
    out = bytearray(b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs)))
    for key, vt, v in kvs:
        out += _str(key) + struct.pack("<I", _vtcode(vt)) + _value(vt, v)
    rel = 0
    offsets = []
    for name, ty, ne, raw in tensors:
        assert len(raw) == nbytes(ty, ne), name
        offsets.append(rel)
        out += _str(name) + struct.pack("<I", len(ne)) + b"".join(struct.pack("<Q", d) for d in ne)
        out += struct.pack("<IQ", ty, rel)
        rel += (len(raw) + align - 1) // align * align
    while len(out) % align:
        out += pad_byte
    start = len(out)
    for (name, ty, ne, raw), off in zip(tensors, offsets):
        out += b"\0" * (start + off - len(out)) + raw
    with open(path, "wb") as f:
        f.write(out)
    return start


class _R:
    def __init__(self, b):
        self.b, self.p = b, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.b, self.p)[0]
        self.p += struct.calcsize(fmt)
        return v

    def str(self):
        n = self.take("<Q")
        s = self.b[self.p:self.p + n]
        self.p += n
        return bytes(s)

    def value(self, code):
        name = VT_NAME[code]
        if name == "str":
            return "str", self.str()
        if name == "array":
            et = self.take("<I")
            n = self.take("<Q")
            items = [self.value(et) for _ in range(n)]
            ename = items[0][0] if items else VT_NAME[et]
            if VT_NAME[et] != "array":
                ename = VT_NAME[et]
            return ("array", ename), [x[1] for x in items]
        return name, self.take(FMT[name])


def read(path):
    b = open(path, "rb").read()
    r = _R(b)
    assert r.b[:4] == b"GGUF"
    r.p = 4
    version = r.take("<I")
    nt = r.take("<Q")
    nkv = r.take("<Q")
    kvs = []
    align = 32
    for _ in range(nkv):
        key = r.str().decode()
        vt, v = r.value(r.take("<I"))
        if key == "general.alignment":
            align = v
        kvs.append((key, vt, v))
    tensors = []
    for _ in range(nt):
        name = r.str().decode()
        nd = r.take("<I")
        ne = [r.take("<Q") for _ in range(nd)]
        ty = r.take("<I")
        off = r.take("<Q")
        tensors.append((name, ty, ne, off))
    data = (r.p + align - 1) // align * align
    out = []
    for name, ty, ne, off in tensors:
        n = nbytes(ty, ne)
        out.append((name, ty, ne, off, bytes(b[data + off:data + off + n])))
    return {"version": version, "kvs": kvs, "tensors": out, "data": data, "alignment": align,
            "ti_end": r.p}
