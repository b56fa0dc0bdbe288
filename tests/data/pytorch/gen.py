#!/usr/bin/python3
"""Writes the PyTorch samples of tests/data/pytorch with torch.save (Debian's
python3-torch 1.13): run from any directory, they land beside this script.
MANIFEST.md says what each holds. Values are made from arange, never random,
so that tests can name them."""
import argparse
import collections
import os
import pickle
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def ar(*shape, dtype=torch.float32):
    n = 1
    for d in shape:
        n *= d
    return torch.arange(n, dtype=torch.float64).reshape(shape).to(dtype)


def state_dict():
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    with torch.no_grad():
        m[0].weight.copy_(ar(2, 3) / 8)
        m[0].bias.copy_(torch.tensor([0.5, -0.25]))
    torch.save(m.state_dict(), path("state_dict.pt"))


def hf_tied():
    emb = (ar(4, 3) / 4).to(torch.bfloat16)
    sd = collections.OrderedDict()
    sd["model.embed_tokens.weight"] = emb
    sd["model.layers.0.self_attn.q_proj.weight"] = (ar(3, 3) / 2).to(torch.float16)
    sd["model.norm.weight"] = torch.ones(3, dtype=torch.float16)
    sd["lm_head.weight"] = emb  # tied: the same tensor
    torch.save(sd, path("hf_tied.bin"))


def optim():
    w = torch.nn.Parameter(ar(2) + 1)
    opt = torch.optim.Adam([w], lr=0.001, betas=(0.9, 0.999), eps=1e-08)
    w.grad = torch.tensor([0.5, -1.0])
    opt.step()
    torch.save(opt.state_dict(), path("optim.pt"))


def lightning():
    w = torch.nn.Parameter(ar(2, 2))
    ns = argparse.Namespace(lr=0.01, layers=2, name="tiny")
    ckpt = {
        "epoch": 3,
        "global_step": 120,
        "pytorch-lightning_version": "1.9.0",
        "state_dict": collections.OrderedDict([("model.w", w.data), ("model.step", torch.tensor(7))]),
        "optimizer_states": [{"state": {}, "param_groups": [{"lr": 0.01, "betas": (0.9, 0.999), "params": [0]}]}],
        "lr_schedulers": [],
        "callbacks": {"ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min'}": {"best_model_score": None, "dirpath": "/ckpt"}},
        "hyper_parameters": ns,
    }
    torch.save(ckpt, path("lightning.ckpt"))


def dtypes():
    d = collections.OrderedDict()
    for name in ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16",
                 "int8", "uint8", "bool", "complex64", "complex128"]:
        dt = getattr(torch, name)
        if name == "bool":
            d[name] = torch.tensor([True, False, True])
        elif name.startswith("complex"):
            d[name] = torch.tensor([1 + 2j, -0.5j, 3], dtype=dt)
        else:
            d[name] = torch.tensor([1, -2, 3], dtype=dt) if not name.startswith("uint") else torch.tensor([1, 2, 255], dtype=dt)
    torch.save(d, path("dtypes.pt"))


def views():
    base = ar(3, 4)
    d = collections.OrderedDict()
    d["base"] = base
    d["t"] = base.t()               # column-major span
    d["row1"] = base[1]             # storage offset 4
    d["col2"] = base[:, 2]          # stride 4
    d["every2"] = base[:, ::2]      # strides (4, 2)
    d["expand"] = ar(1, 3).expand(2, 3)  # stride 0: overlapping
    d["scalar"] = torch.tensor(2.5)
    d["empty"] = torch.zeros(0, 3)
    torch.save(d, path("views.pt"))


def legacy():
    base = ar(2, 3)
    d = {"w": base, "wt": base.t(), "b": torch.tensor([1, 2], dtype=torch.int64), "lr": 0.5}
    torch.save(d, path("legacy.pt"), _use_new_zipfile_serialization=False)


def renamed():
    tmp = path("weights.pth")
    torch.save({"x": ar(2)}, tmp)  # its top folder is "weights"
    os.replace(tmp, path("renamed.pt"))


class Evil:
    def __reduce__(self):
        return (os.system, ("touch /tmp/modelfs-pwned",))


class Point:
    def __init__(self):
        self.x = 1
        self.y = [2.5, "z"]


def hostile():
    torch.save({"payload": Evil(), "ok": 1}, path("system.pt"))
    torch.save({"p": Point(), "w": ar(2)}, path("user_class.pt"))


def root_tensor():
    torch.save(ar(2, 2), path("tensor.pt"))


def scalars():
    d = {"int": 42, "neg": -7, "big": 2 ** 70, "float": 0.1, "tiny": 1e-08, "inf": float("inf"),
         "true": True, "none": None, "str": "héllo", "bytes": b"\x00ab", "list": [0, 1, 2],
         "tuple": (1,), "empty": (), "nested": [[1, 2], (3.5, "a")], "set": {3},
         7: "int key", (1, 2): "tuple key", "index": "a key named index", "a.b": 1, "a.c": 2}
    torch.save(d, path("scalars.pt"))


PICKLED = {"a": [1, -2, 2.5, "x\n\u00e9\u4e2d", None, True, (3,), 2 ** 70, -(2 ** 64)],
           "b": b"\x01", "s": frozenset([1])}


def pickles():
    """The same object in every pickle protocol (plain pickle, no torch)."""
    for p in range(6):
        with open(path("pickle%d.pkl" % p), "wb") as f:
            pickle.dump(PICKLED, f, protocol=p)


def shared():
    """A string shared through the memo (one object in two places), and
    protocol 4 (frames) with the same objects."""
    same = "min"
    tag = "tag"
    d = {"mode": same, "other": same, same: 1.5, "w": ar(3), "first": [tag, 1], "again": tag}
    torch.save(d, path("shared.pt"))
    torch.save(d, path("proto4.pt"), pickle_protocol=4)


def main():
    for f in (state_dict, hf_tied, optim, lightning, dtypes, views, legacy, renamed, hostile,
              root_tensor, scalars, pickles, shared):
        f()


if __name__ == "__main__":
    sys.exit(main())
