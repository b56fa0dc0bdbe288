"""The PyTorch files of test_pytorch.py and test_hostile.py, written at test
time by torch.save itself (Debian's python3-torch): state_dicts of real
modules, a Hugging Face style checkpoint (bfloat16, float16, tied
embeddings), Adam's state, a Lightning-style checkpoint, every dtype torch
saves, views, the legacy stream format, renamed files, pickles that would
run a command or name a user's class, and broken files.

Each writer returns the object it saved; write_all(dir) writes every
sample and returns {file name: object}."""
import argparse
import collections
import io
import os
import shutil
import sys
import types
import zipfile

import torch

PWNED = "/tmp/modelfs-pwned-%d" % os.getpid()


def save(obj, path, legacy=False, top=None):
    """torch.save to path; top: the zip's top folder name (torch names it
    after the file's stem; None keeps that, "archive" saves through a
    buffer as torch does for file objects)."""
    if top == "archive":
        buf = io.BytesIO()
        torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
        with open(path, "wb") as f:
            f.write(buf.getvalue())
    elif top is not None:
        tmp = os.path.join(os.path.dirname(path), top + ".tmp-save")
        torch.save(obj, tmp, _use_new_zipfile_serialization=not legacy)
        # torch names the top folder after the stem: "<top>.tmp-save" -> "<top>"
        os.rename(tmp, path)
    else:
        torch.save(obj, path, _use_new_zipfile_serialization=not legacy)
    return obj


def modules():
    """state_dicts of real modules, one per kind: name -> state_dict."""
    torch.manual_seed(0)
    seq = torch.nn.Sequential(torch.nn.Linear(5, 4), torch.nn.ReLU(), torch.nn.Linear(4, 3))
    conv = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4))
    conv.train()
    conv(torch.randn(2, 3, 6, 6))  # running statistics and num_batches_tracked move
    lstm = torch.nn.LSTM(4, 3, num_layers=2)
    emb = torch.nn.Embedding(10, 4, padding_idx=0)
    enc = torch.nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16)
    return {"linear.pt": seq.state_dict(), "conv_bn.pth": conv.state_dict(),
            "lstm.pt": lstm.state_dict(), "embedding.pt": emb.state_dict(),
            "transformer.pt": enc.state_dict()}


class TinyLM(torch.nn.Module):
    """A decoder with its output head tied to the embedding, as Hugging
    Face causal language models are."""

    def __init__(self):
        super().__init__()
        self.model = torch.nn.Module()
        self.model.embed_tokens = torch.nn.Embedding(16, 8)
        self.model.layers = torch.nn.ModuleList()
        for _ in range(2):
            layer = torch.nn.Module()
            layer.self_attn = torch.nn.Module()
            for p in ("q_proj", "k_proj", "v_proj", "o_proj"):
                setattr(layer.self_attn, p, torch.nn.Linear(8, 8, bias=False))
            layer.input_layernorm = torch.nn.LayerNorm(8)
            self.model.layers.append(layer)
        self.model.norm = torch.nn.LayerNorm(8)
        self.lm_head = torch.nn.Linear(8, 16, bias=False)
        self.lm_head.weight = self.model.embed_tokens.weight


def hf_checkpoint():
    torch.manual_seed(1)
    lm = TinyLM().to(torch.bfloat16)
    sd = lm.state_dict()
    sd["model.norm.weight"] = sd["model.norm.weight"].to(torch.float16)
    sd["model.layers.1.input_layernorm.weight"] = sd["model.layers.1.input_layernorm.weight"].to(torch.float16)
    return sd


def adam_state():
    torch.manual_seed(2)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.Linear(2, 1))
    opt = torch.optim.Adam([{"params": net[0].parameters()},
                            {"params": net[1].parameters(), "lr": 0.01}], lr=1e-3, betas=(0.9, 0.999))
    for _ in range(3):
        opt.zero_grad()
        net(torch.randn(4, 3)).sum().backward()
        opt.step()
    return net, opt


def lightning_checkpoint():
    net, opt = adam_state()
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=10, gamma=0.1)
    sd = collections.OrderedDict(("model.encoder.%s" % k, v) for k, v in net.state_dict().items())
    return {
        "epoch": 9,
        "global_step": 100,
        "pytorch-lightning_version": "1.9.0",
        "state_dict": sd,
        "loops": {"fit_loop": {"state_dict": {}, "epoch_progress": {"total": {"ready": 10, "completed": 9}}}},
        "callbacks": {"ModelCheckpoint{'monitor': 'val_loss', 'mode': 'min', 'every_n_train_steps': 0, "
                      "'every_n_epochs': 1, 'train_time_interval': None}": {
                          "monitor": "val_loss", "best_model_score": torch.tensor(0.25),
                          "best_model_path": "/runs/ckpt/epoch=9-step=100.ckpt",
                          "current_score": torch.tensor(0.25), "dirpath": "/runs/ckpt",
                          "best_k_models": {}, "kth_best_model_path": "", "save_top_k": 1},
                      "EarlyStopping{'monitor': 'val_loss', 'mode': 'min'}": {
                          "wait_count": 0, "stopped_epoch": 0, "patience": 3,
                          "best_score": torch.tensor(0.25)}},
        "optimizer_states": [opt.state_dict()],
        "lr_schedulers": [sched.state_dict()],
        "hparams_name": "hparams",
        "hyper_parameters": {"hparams": argparse.Namespace(lr=0.001, batch_size=32, name="run-1",
                                                            layers=[3, 2], dropout=None, amp=True),
                             "lr": 0.001, "betas": (0.9, 0.999), "weight_decay": 0.0,
                             "eps": 1e-08, "schedule.warmup": 500, "schedule.decay": 0.5,
                             "monitor": "val_loss"},
    }


def plain_values():
    """Every kind of plain value a pickle holds, and containers of them."""
    return collections.OrderedDict([
        ("int", -5), ("big_int", 2 ** 100), ("zero", 0), ("float", 0.1), ("tiny", 1e-08),
        ("inf", float("inf")), ("nan", float("nan")), ("neg_zero", -0.0), ("true", True),
        ("none", None), ("str", "h\u00e9llo \u2713"), ("multiline", "a\nb"), ("empty_str", ""),
        ("tuple1", (5,)), ("empty_tuple", ()),
        ("empty_list", []), ("empty_dict", {}), ("nested", [[1, 2], [3], "x'y"]),
        ("mixed", [torch.tensor([1, 2]), 2, (0.5, None)]), ("deep", ({"a": 1, "b": [torch.ones(2)]},)),
        ("index", torch.tensor([0, 1, 2])), (7, "int key"), ((1, 2), "tuple key"),
        ("a.shape", torch.zeros(1)), ("b.data", 3), ("odd..name.", 1), ("slash/key", 2),
    ])


def protocol2_values():
    """Values protocol 2 builds by calling a builtin: sets (builtins.set of
    a list), bytes (_codecs.encode of a str), empty bytes (builtins.bytes)."""
    return collections.OrderedDict([
        ("bytes", b"\x00\x01abc\xff"), ("empty_bytes", b""), ("set", {1, 2, 3}),
        ("sets", [{"a"}, {2.5}]), ("with_tensor", {"t": torch.ones(1), "s": {7}})])


def every_dtype():
    big = 2 ** 63 - 1
    return collections.OrderedDict([
        ("bool", torch.tensor([True, False, True])),
        ("uint8", torch.tensor([0, 1, 255], dtype=torch.uint8)),
        ("int8", torch.tensor([-128, 0, 127], dtype=torch.int8)),
        ("int16", torch.tensor([-32768, 1, 32767], dtype=torch.int16)),
        ("int32", torch.tensor([[-2 ** 31, 0], [1, 2 ** 31 - 1]], dtype=torch.int32)),
        ("int64", torch.tensor([-big - 1, 0, big], dtype=torch.int64)),
        ("float16", torch.tensor([0.1, -0.0, 65504.0, 6e-08, float("inf"), float("nan")], dtype=torch.float16)),
        ("bfloat16", torch.tensor([0.1, -0.0, 3.3895e38, 1e-38, -float("inf"), 1.0], dtype=torch.bfloat16)),
        ("float32", torch.tensor([0.1, 1e-45, 3.4028235e38, -0.0, float("nan"), 16777217.0], dtype=torch.float32)),
        ("float64", torch.tensor([0.1, 5e-324, 1.7976931348623157e308, -2.5, 1 / 3], dtype=torch.float64)),
        ("complex64", torch.tensor([1 + 2j, -0.5 - 0.25j], dtype=torch.complex64)),
        ("complex128", torch.tensor([[0.1 + 0.2j], [1e300 - 1e-300j]], dtype=torch.complex128)),
        ("scalar", torch.tensor(3.5)),
        ("empty", torch.zeros(0, 3)),
        ("cube", torch.arange(24, dtype=torch.int16).reshape(2, 3, 4)),
    ])


def views():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    cube = torch.arange(60, dtype=torch.float64).reshape(3, 4, 5)
    ramp = torch.arange(3, dtype=torch.int32)
    return collections.OrderedDict([
        ("base", base),
        ("transposed", base.t()),             # column-major span of base's storage
        ("row", base[2]),                     # storage offset 12, contiguous
        ("rows", base[1:3]),                  # storage offset 6, contiguous
        ("column", base[:, 2]),               # strided: no data
        ("every_other", base[:, ::2]),        # non-contiguous
        ("flat", base.view(24)),
        ("cube_f", cube.permute(2, 1, 0)),    # column-major 3-D
        ("cube_mix", cube.permute(1, 0, 2)),  # neither order
        ("expanded", ramp.expand(4, 3)),      # stride 0: overlapping, read-only
    ])


class Payload:
    """Unpickling it would run a command."""

    def __reduce__(self):
        return (os.system, ("touch " + PWNED,))


def user_class():
    """A user's class, importable only where the user's code is."""
    pkg, mod = types.ModuleType("mylab"), types.ModuleType("mylab.config")
    pkg.config = mod
    sys.modules.setdefault("mylab", pkg)
    sys.modules["mylab.config"] = mod

    class TrainConfig:
        def __init__(self):
            self.lr, self.steps, self.tags = 0.5, 1000, ["a", "b"]
            self.mask = torch.tensor([1, 0, 1], dtype=torch.uint8)
    TrainConfig.__module__ = "mylab.config"
    TrainConfig.__qualname__ = "TrainConfig"
    mod.TrainConfig = TrainConfig
    return TrainConfig()


def write_all(d):
    """Writes every sample into d; returns {file name: saved object}."""
    out = {}
    for name, sd in modules().items():
        out[name] = save(sd, os.path.join(d, name))
    hf = hf_checkpoint()
    out["pytorch_model.bin"] = save(hf, os.path.join(d, "pytorch_model.bin"), top="archive")
    _, opt = adam_state()
    out["optimizer.pt"] = save(opt.state_dict(), os.path.join(d, "optimizer.pt"))
    out["epoch=9-step=100.ckpt"] = save(lightning_checkpoint(), os.path.join(d, "epoch=9-step=100.ckpt"))
    out["dtypes.pt"] = save(every_dtype(), os.path.join(d, "dtypes.pt"))
    out["views.pt"] = save(views(), os.path.join(d, "views.pt"))
    out["plain.pt"] = save(plain_values(), os.path.join(d, "plain.pt"))
    save(protocol2_values(), os.path.join(d, "protocol2.pt"))
    out["legacy.pt"] = save(collections.OrderedDict(list(views().items()) + list(modules()["linear.pt"].items())),
                            os.path.join(d, "legacy.pt"), legacy=True)
    out["legacy_dtypes.pth"] = save(every_dtype(), os.path.join(d, "legacy_dtypes.pth"), legacy=True)
    # renamed files: no extension, another top folder than the stem
    out["checkpoint"] = save(modules()["linear.pt"], os.path.join(d, "checkpoint"), top="weights")
    out["model.bin"] = save(hf, os.path.join(d, "model.bin"))
    return out


def user_containers():
    """A user's dict and list subclasses (as EasyDict, Lightning's
    AttributeDict): their items come by SETITEMS and APPENDS."""
    mod = sys.modules["mylab.config"]

    class Bag(dict):
        pass

    class Steps(list):
        pass
    for c in (Bag, Steps):
        c.__module__, c.__qualname__ = "mylab.config", c.__name__
        setattr(mod, c.__name__, c)
    bag = Bag(lr=0.1, w=torch.ones(2))
    bag.note = "set by BUILD"
    return bag, Steps([1, torch.zeros(1)])


def write_hostile(d):
    """The pickles that must never run: {file name: saved object}."""
    out = {}
    out["evil.pt"] = save(Payload(), os.path.join(d, "evil.pt"))
    sd = modules()["linear.pt"]
    out["evil_nested.pt"] = save({"state_dict": sd, "payload": Payload()}, os.path.join(d, "evil_nested.pt"))
    out["evil_legacy.pt"] = save({"payload": Payload()}, os.path.join(d, "evil_legacy.pt"), legacy=True)
    cfg = user_class()
    bag, steps = user_containers()
    out["user_class.pt"] = save({"config": cfg, "step": 3, "bag": bag, "steps": steps},
                                os.path.join(d, "user_class.pt"))
    return out


def rezip(src, dst, drop=(), replace=None):
    """src's records rewritten by zipfile (stored) into dst, without the
    records named in drop and with replace's {name: bytes}."""
    replace = replace or {}
    with zipfile.ZipFile(src) as zi, zipfile.ZipFile(dst, "w", zipfile.ZIP_STORED) as zo:
        for info in zi.infolist():
            if info.filename in drop:
                continue
            zo.writestr(info.filename, replace.get(info.filename, zi.read(info.filename)))


def write_broken(d):
    """Files that look like checkpoints and do not parse: {name: bytes}."""
    tmp = os.path.join(d, ".broken-src")
    os.makedirs(tmp)
    good = os.path.join(tmp, "good.pt")
    save(modules()["linear.pt"], good)
    legacy = os.path.join(tmp, "legacy.pt")
    save(modules()["linear.pt"], legacy, legacy=True)
    raw, lraw = open(good, "rb").read(), open(legacy, "rb").read()
    out = {"truncated.pt": raw[:len(raw) // 2], "truncated_legacy.pt": lraw[:len(lraw) - 7]}
    with zipfile.ZipFile(good) as z:
        top = [n for n in z.namelist() if n.endswith("data.pkl")][0][:-len("data.pkl")]
        rezip(good, os.path.join(tmp, "missing.pt"), drop={top + "data/0"})
        rezip(good, os.path.join(tmp, "short.pt"), replace={top + "data/0": z.read(top + "data/0")[:-4]})
    for n in ("missing.pt", "short.pt"):
        out[n] = open(os.path.join(tmp, n), "rb").read()
    shutil.rmtree(tmp)
    for name, b in out.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(b)
    return out
