"""An independent reader of primitiv files (python3-msgpack), for checking
what modelfs wrote: prints a file's content as JSON, or use decode(path)."""
import json
import struct
import sys

import msgpack

TYPES = {0x0: "shape", 0x100: "tensor", 0x200: "parameter", 0x300: "model", 0x400: "optimizer"}


def _shape(u):
    dims = next(u)
    batch = next(u)
    return list(dims), batch


def _tensor(u, raw):
    dims, batch = _shape(u)
    data = next(u)
    if raw:
        return {"dims": dims, "batch": batch, "data": bytes(data)}
    n = len(data) // 4
    return {"dims": dims, "batch": batch, "values": list(struct.unpack("<%df" % n, data))}


def _param(u, raw):
    value = _tensor(u, raw)
    stats = {}
    for _ in range(next(u)):
        key = next(u)
        stats[key] = _tensor(u, raw)
    return {"value": value, "stats": stats}


def decode(path, raw=False):
    """raw: each tensor's stored bytes as "data" (column-major float32) in
    place of its "values" list, for large tensors and bit-exact checks."""
    with open(path, "rb") as f:
        # no bound on one object's size: a large tensor is one bin
        u = msgpack.Unpacker(f, raw=False, strict_map_key=False, max_buffer_size=2**32 - 1)
        major, minor, dtype = next(u), next(u), next(u)
        out = {"version": "%d.%d" % (major, minor), "type": TYPES[dtype]}
        if dtype == 0x0:
            out["dims"], out["batch"] = _shape(u)
        elif dtype == 0x100:
            out.update(_tensor(u, raw))
        elif dtype == 0x200:
            out.update(_param(u, raw))
        elif dtype == 0x300:
            out["params"] = {}
            for _ in range(next(u)):
                key = "/".join(next(u))
                out["params"][key] = _param(u, raw)
        else:
            out["uint_configs"] = next(u)
            out["float_configs"] = next(u)
        rest = list(u)
        if rest:
            raise ValueError("trailing objects: %r" % rest)
    return out


if __name__ == "__main__":
    print(json.dumps(decode(sys.argv[1]), indent=1))
