#!/usr/bin/python3
"""Writes tiny/: a small sharded safetensors checkpoint, written per the
public format (8-byte little-endian header length, the header as compact
JSON with sorted keys padded with spaces to a multiple of 8, as the
reference writer emits it, then the buffer), and its index.

usage: tests/data/safetensors/make.py   (deterministic; rewrites tiny/)"""

import json
import os
import struct

import numpy as np


def bf16(values):
    """float32 values rounded to bfloat16 (ties to even), as uint16 bits."""
    b = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
    return b.astype(np.uint16)


def write(path, tensors, metadata=None):
    """tensors: name -> (dtype string, shape, raw little-endian bytes)."""
    header, buf = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        dt, shape, raw = tensors[name]
        header[name] = {"dtype": dt, "shape": list(shape),
                        "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buf)
    return len(buf)


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tiny")
    os.makedirs(out, exist_ok=True)
    emb = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    q = np.array([[1, -0.5], [0.1, 3e38]], dtype=np.float32)
    shard1 = {
        "model.embed_tokens.weight": ("F32", (4, 3), emb.tobytes()),
        "model.layers.0.self_attn.q_proj.weight": ("BF16", (2, 2), bf16(q).tobytes()),
        "model.layers.0.self_attn.q_proj.weight.scale": ("F32", (), np.float32(0.5).tobytes()),
    }
    shard2 = {
        "model.layers.0.mlp.up_proj.weight": ("F16", (2, 3),
                                              np.linspace(-1, 1, 6).astype("<f2").tobytes()),
        "model.norm.weight": ("F8_E4M3", (3,), bytes([0x38, 0x7E, 0x01])),
        "lm_head.weight": ("I8", (3,), np.array([-128, 0, 127], np.int8).tobytes()),
    }
    names = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    size = write(os.path.join(out, names[0]), shard1, {"format": "pt"})
    size += write(os.path.join(out, names[1]), shard2, {"format": "pt"})
    weight_map = {n: names[0] for n in shard1}
    weight_map.update({n: names[1] for n in shard2})
    index = {"metadata": {"total_size": size}, "weight_map": dict(sorted(weight_map.items()))}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2) + "\n")


if __name__ == "__main__":
    main()
