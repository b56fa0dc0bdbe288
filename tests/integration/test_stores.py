"""Model stores made of links: a Hugging Face cache (two revisions sharing
blobs, a sharded safetensors checkpoint, refs/, .no_exist/) and an Ollama
store (a GGUF blob named sha256-<hex>). A blob's own model directory is
read-only (EROFS, an errors line naming the snapshot or manifest way), and
an edit reached through a snapshot's link leaves every blob matching its
hash and the other revision unchanged."""
import errno
import glob
import hashlib
import os

import numpy as np

from harness import Mount, check, data, eq, run, sha

SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
          "model.safetensors.index.json"]
REVS = ["a" * 40, "b" * 40]


def hf_cache(src):
    """models--org--tiny laid out as huggingface_hub's file_download does:
    blobs named by the file's sha256, snapshots/<rev>/<file> relative links
    to ../../blobs/<hash>, refs/main holding the last revision."""
    repo = os.path.join(src, "hub", "models--org--tiny")
    os.makedirs(os.path.join(repo, "blobs"))
    os.makedirs(os.path.join(repo, "refs"))
    os.makedirs(os.path.join(repo, ".no_exist", REVS[1]))
    open(os.path.join(repo, ".no_exist", REVS[1], "tokenizer.json"), "w").close()
    for rev in REVS:
        os.makedirs(os.path.join(repo, "snapshots", rev))
        for name in SHARDS:
            body = open(data("safetensors/tiny/" + name), "rb").read()
            h = hashlib.sha256(body).hexdigest()
            blob = os.path.join(repo, "blobs", h)
            if not os.path.exists(blob):
                with open(blob, "wb") as f:
                    f.write(body)
            os.symlink("../../blobs/" + h, os.path.join(repo, "snapshots", rev, name))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(REVS[1])
    return repo


def blobs_match(repo):
    for b in glob.glob(os.path.join(repo, "blobs", "*")):
        eq(sha(b), os.path.basename(b), "blob %s" % b)


def first_tensor(root):
    for dirpath, dirs, files in os.walk(root):
        if "data.npy" in files:
            return dirpath
    raise AssertionError("no tensor under " + root)


def refuse_write(m, path):
    try:
        with open(path, "r+b") as f:
            f.write(f.read())
    except OSError as e:
        eq(e.errno, errno.EROFS, "errno of a write to " + path)
        check("edit it through a snapshot or manifest name" in m.errors(), "errors line")
        return
    raise AssertionError("a write to %s was allowed" % path)


def test_hf_blob_read_only():
    m = Mount()
    repo = hf_cache(m.src)
    with m:
        rel = os.path.relpath(repo, m.src)
        shard = hashlib.sha256(open(data("safetensors/tiny/" + SHARDS[0]), "rb").read()).hexdigest()
        t = first_tensor(m.m(rel, "blobs", shard))
        want = np.load(os.path.join(t, "data.npy"))
        refuse_write(m, os.path.join(t, "values.txt"))
        # through a snapshot's name: the same values, the same refusal
        snap = m.m(rel, "snapshots", REVS[0], SHARDS[0])
        ts = first_tensor(snap)
        eq(np.load(os.path.join(ts, "data.npy")).tolist(), want.tolist(), "values via snapshot")
        refuse_write(m, os.path.join(ts, "values.txt"))
        eq(m.text(rel, "refs", "main"), REVS[1], "refs/main")
        blobs_match(repo)
        for rev in REVS:
            eq(len(os.listdir(os.path.join(repo, "snapshots", rev))), len(SHARDS), "snapshot " + rev)


def test_ollama_blob_read_only():
    m = Mount()
    gguf = data("gguf/tiny_llama.gguf")
    body = open(gguf, "rb").read()
    h = hashlib.sha256(body).hexdigest()
    blobs = os.path.join(m.src, "ollama", "models", "blobs")
    os.makedirs(blobs)
    with open(os.path.join(blobs, "sha256-" + h), "wb") as f:
        f.write(body)
    with m:
        d = m.m("ollama", "models", "blobs", "sha256-" + h)
        check(os.path.isdir(d), "the GGUF blob is a model directory")
        t = first_tensor(d)
        refuse_write(m, os.path.join(t, "values.txt"))
        eq(sha(os.path.join(blobs, "sha256-" + h)), h, "ollama blob hash")


def test_plain_blobs_dir_still_writable():
    """A folder named blobs outside a store is no store: edits work."""
    m = Mount([("primitiv/tensor_2x3.tensor", "blobs/tensor_2x3.tensor")])
    with m:
        p = m.m("blobs", "tensor_2x3.tensor", "values.txt")
        old = open(p).read()
        with open(p, "w") as f:
            f.write(old)
        eq(open(p).read(), old, "rewrite of the same values")


if __name__ == "__main__":
    run([test_hf_blob_read_only, test_ollama_blob_read_only, test_plain_blobs_dir_still_writable])
