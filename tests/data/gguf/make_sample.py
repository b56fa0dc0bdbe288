#!/usr/bin/python3
"""Writes tests/data/gguf/*.gguf from the public GGUF specification (through
tests/integration/gguf_write.py): a small llama-like model with metadata of
every value type, a token array, and tensors of several ggml types with
deterministic contents. Run from anywhere; rewrites the files in place."""
import os
import random
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integration"))
import gguf_write as gw  # noqa: E402


def f32(vals):
    return b"".join(struct.pack("<f", v) for v in vals)


def blocks(rng, ty, n):
    """n blocks of ggml type ty with valid finite half scales."""
    _, blck, size = gw.GGML[ty]
    out = bytearray(rng.randbytes(size * n))
    half_at = {2: [0], 3: [0, 2], 6: [0], 7: [0, 2], 8: [0], 10: [80, 82], 11: [108],
               12: [0, 2], 13: [0, 2], 14: [208]}.get(ty, [])
    for b in range(n):
        for h in half_at:
            # a small positive normal half: exponent 8..14, random mantissa
            v = (rng.randrange(8, 15) << 10) | rng.randrange(1024)
            struct.pack_into("<H", out, b * size + h, v)
    return bytes(out)


def main():
    rng = random.Random(20)
    kvs = [
        ("general.architecture", "str", "llama"),
        ("general.name", "str", "Tiny \"quoted\"\nmodel"),
        ("llama.context_length", "u32", 2048),
        ("llama.block_count", "u32", 1),
        ("llama.rope.freq_base", "f32", 10000.0),
        ("test.u8", "u8", 200), ("test.i8", "i8", -5), ("test.u16", "u16", 65535),
        ("test.i16", "i16", -32768), ("test.i32", "i32", -7), ("test.u64", "u64", 2**64 - 1),
        ("test.i64", "i64", -2**63), ("test.f64", "f64", 0.1), ("test.bool", "bool", True),
        ("test.floats", ("array", "f32"), [0.5, -1.25, 3.0]),
        ("test.nested", ("array", ("array", "i32")), [[1, 2], [3]]),
        ("tokenizer.ggml.model", "str", "llama"),
        ("tokenizer.ggml.tokens", ("array", "str"), ["<s>", "</s>", "\n", "\"q\"", "a\\b", "é"]),
        ("tokenizer.ggml.scores", ("array", "f32"), [0.0, -1.0, -2.0, -3.0, -4.0, -5.0]),
    ]
    tensors = [
        ("token_embd.weight", 0, [8, 6], f32([rng.uniform(-1, 1) for _ in range(48)])),
        ("blk.0.attn_norm.weight", 1, [8], rng.randbytes(16)),
        ("blk.0.attn_q.weight", 8, [64, 2], blocks(rng, 8, 4)),
        ("blk.0.ffn_up.weight", 12, [256, 2], blocks(rng, 12, 2)),
        ("blk.0.ffn_down.weight", 14, [256, 1], blocks(rng, 14, 1)),
        ("blk.0.ffn_gate.weight", 2, [32, 2], blocks(rng, 2, 2)),
        ("output.weight", 16, [256], blocks(rng, 16, 1)),
    ]
    gw.write(os.path.join(HERE, "tiny_llama.gguf"), kvs, tensors)

    # Version 2, alignment 64, the other dequantized types and the plain ones.
    kvs2 = [("general.architecture", "str", "test"), ("general.name", "str", "v2"),
            ("general.file_type", "u32", 7)]
    tensors2 = [(f"t.{gw.GGML[ty][0]}", ty, [gw.GGML[ty][1], 2], blocks(rng, ty, 2))
                for ty in (3, 6, 7, 10, 11, 13)]
    tensors2 += [("plain.bf16", 30, [4, 2], rng.randbytes(16)),
                 ("plain.f64", 28, [3], f32([1.5, -2.0, 0.25, 8.0, 0.1, 3.0])),
                 ("plain.i8", 24, [5], rng.randbytes(5)), ("plain.i16", 25, [2], rng.randbytes(4)),
                 ("plain.i32", 26, [2], rng.randbytes(8)), ("plain.i64", 27, [1], rng.randbytes(8))]
    gw.write(os.path.join(HERE, "v2_align64.gguf"), kvs2, tensors2, alignment=64, version=2)


if __name__ == "__main__":
    main()
