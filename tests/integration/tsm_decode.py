#!/usr/bin/python3
"""Decode a TenniS module file (.tsm) independently of modelfs and print its
structure and values as JSON, for the integration tests to compare with.

Usage: tsm_decode.py FILE.tsm [--offsets]

Output: {"header": {"fake", "code", "reserved" (hex)}, "inputs", "outputs",
"nodes": [{"op", "name" (when the node has them), "params": [{"name",
"fields": [{"dtype", "dtype_name", "dims", "values"}]}], "inputs"}],
"trailing": bytes after the last node}.
Values: numbers as nested lists in row-major order (a 0-d tensor is one
number); float16 as floats; complex as [re, im] pairs; bool as true/false;
char8 as a string (UTF-8, invalid bytes as \\udcXX escapes); types without
numeric meaning (void, ptr, char16/32, unknownN, sink8qN) as a hex string of
their bytes. Non-finite floats are written as NaN / Infinity (Python's json).
With --offsets, each field also gives "offset" (its dtype byte) and
"data_offset". Standard library and numpy only.
"""
import json
import struct
import sys

import numpy as np

CODE = 0x19910929

# code: (name, bytes per element, numpy dtype or None)
TYPES = {
    0: ("void", 0, None),
    1: ("int8", 1, "<i1"),
    2: ("uint8", 1, "<u1"),
    3: ("int16", 2, "<i2"),
    4: ("uint16", 2, "<u2"),
    5: ("int32", 4, "<i4"),
    6: ("uint32", 4, "<u4"),
    7: ("int64", 8, "<i8"),
    8: ("uint64", 8, "<u8"),
    9: ("float16", 2, "<f2"),
    10: ("float32", 4, "<f4"),
    11: ("float64", 8, "<f8"),
    12: ("ptr", 8, None),
    13: ("char8", 1, None),
    14: ("char16", 2, None),
    15: ("char32", 4, None),
    16: ("unknown8", 1, None),
    17: ("unknown16", 2, None),
    18: ("unknown32", 4, None),
    19: ("unknown64", 8, None),
    20: ("unknown128", 16, None),
    21: ("bool", 1, "|u1"),
    22: ("complex32", 4, "<f2"),
    23: ("complex64", 8, "<f4"),
    24: ("complex128", 16, "<f8"),
}
for _q in range(8):
    TYPES[25 + _q] = ("sink8q%d" % _q, 1, None)


class Malformed(Exception):
    pass


class Reader:
    def __init__(self, data):
        self.data = data
        self.pos = 0

    def take(self, n, what):
        if n > len(self.data) - self.pos:
            raise Malformed("%s needs %d bytes at offset %d, %d left"
                            % (what, n, self.pos, len(self.data) - self.pos))
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def u32(self, what):
        return struct.unpack("<I", self.take(4, what))[0]

    def u8(self, what):
        return self.take(1, what)[0]


def values_of(code, dims, raw):
    name, size, np_dtype = TYPES[code]
    if name == "char8":
        return raw.decode("utf-8", "surrogateescape")
    if np_dtype is None:
        return raw.hex()
    a = np.frombuffer(raw, dtype=np_dtype)
    if name.startswith("complex"):
        a = a.astype(np.float64).reshape(-1, 2)
        return a.reshape(list(dims) + [2]).tolist()
    if name == "bool":
        a = a != 0
    elif name == "float16":
        a = a.astype(np.float64)
    return a.reshape(dims).tolist()


def read_list(r, what):
    n = r.u32(what + " count")
    if 4 * n > len(r.data) - r.pos:
        raise Malformed("%s count %d larger than the file" % (what, n))
    return [r.u32(what) for _ in range(n)]


def decode(data, offsets=False):
    r = Reader(data)
    fake = r.u32("header fake")
    code = r.u32("header code")
    if code != CODE:
        raise Malformed("code 0x%08x at offset 4 is not 0x%08x" % (code, CODE))
    reserved = r.take(120, "header reserved")
    inputs = read_list(r, "module input")
    outputs = read_list(r, "module output")
    nnodes = r.u32("node count")
    if 8 * nnodes > len(data) - r.pos:
        raise Malformed("node count %d larger than the file" % nnodes)
    nodes = []
    for i in range(nnodes):
        nparams = r.u32("node %d param count" % i)
        params = []
        for j in range(nparams):
            nl = r.u32("node %d param %d name length" % (i, j))
            name = r.take(nl, "node %d param %d name" % (i, j))
            nf = r.u32("node %d param %d field count" % (i, j))
            fields = []
            for k in range(nf):
                off = r.pos
                dt = r.u8("dtype")
                if dt not in TYPES:
                    raise Malformed("node %d param %r: unknown dtype %d at offset %d"
                                    % (i, name, dt, off))
                ndim = r.u32("dims count")
                if 4 * ndim > len(data) - r.pos:
                    raise Malformed("dims count %d larger than the file" % ndim)
                dims = [r.u32("dim") for _ in range(ndim)]
                count = 1
                for d in dims:
                    count *= d
                data_off = r.pos
                raw = r.take(count * TYPES[dt][1], "data")
                f = {"dtype": dt, "dtype_name": TYPES[dt][0], "dims": dims,
                     "values": values_of(dt, dims, raw)}
                if offsets:
                    f["offset"] = off
                    f["data_offset"] = data_off
                fields.append(f)
            params.append({"name": name.decode("utf-8", "surrogateescape"),
                           "fields": fields})
        node_inputs = read_list(r, "node %d input" % i)
        for v in node_inputs:
            if v >= nnodes:
                raise Malformed("node %d input %d out of range (%d nodes)" % (i, v, nnodes))
        node = {"params": params, "inputs": node_inputs}
        # The node's #op / #name strings (the first of each), as modelfs
        # shows them in nodes/<i>/op and nodes/<i>/name.
        for key in ("op", "name"):
            for p in params:
                if (p["name"] == "#" + key and len(p["fields"]) == 1
                        and p["fields"][0]["dtype"] == 13):
                    node[key] = p["fields"][0]["values"]
                    break
        nodes.append(node)
    for what, lst in (("module input", inputs), ("module output", outputs)):
        for v in lst:
            if v >= nnodes:
                raise Malformed("%s %d out of range (%d nodes)" % (what, v, nnodes))
    return {
        "header": {"fake": fake, "code": "0x%08x" % code, "reserved": reserved.hex()},
        "inputs": inputs,
        "outputs": outputs,
        "nodes": nodes,
        "trailing": len(data) - r.pos,
    }


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.stderr.write(__doc__)
        return 2
    with open(args[0], "rb") as f:
        data = f.read()
    try:
        out = decode(data, offsets="--offsets" in argv)
    except Malformed as e:
        sys.stderr.write("%s: malformed: %s\n" % (args[0], e))
        return 1
    json.dump(out, sys.stdout, indent=1)  # ASCII: lone surrogates survive
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
