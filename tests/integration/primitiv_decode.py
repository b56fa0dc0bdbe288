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


def _tensor(u):
    dims, batch = _shape(u)
    data = next(u)
    n = len(data) // 4
    return {"dims": dims, "batch": batch, "values": list(struct.unpack("<%df" % n, data))}


def _param(u):
    value = _tensor(u)
    stats = {}
    for _ in range(next(u)):
        key = next(u)
        stats[key] = _tensor(u)
    return {"value": value, "stats": stats}


def decode(path):
    with open(path, "rb") as f:
        u = msgpack.Unpacker(f, raw=False, strict_map_key=False)
        major, minor, dtype = next(u), next(u), next(u)
        out = {"version": "%d.%d" % (major, minor), "type": TYPES[dtype]}
        if dtype == 0x0:
            out["dims"], out["batch"] = _shape(u)
        elif dtype == 0x100:
            out.update(_tensor(u))
        elif dtype == 0x200:
            out.update(_param(u))
        elif dtype == 0x300:
            out["params"] = {}
            for _ in range(next(u)):
                key = "/".join(next(u))
                out["params"][key] = _param(u)
        else:
            out["uint_configs"] = next(u)
            out["float_configs"] = next(u)
        rest = list(u)
        if rest:
            raise ValueError("trailing objects: %r" % rest)
    return out


if __name__ == "__main__":
    print(json.dumps(decode(sys.argv[1]), indent=1))
