"""Model stores made of links: a Hugging Face cache (two revisions sharing
blobs, a sharded safetensors checkpoint, refs/, .no_exist/) and an Ollama
store (a GGUF blob named sha256-<hex>). A blob's own model directory is
read-only (EROFS, an errors line naming the snapshot or manifest way), and
an edit reached through a snapshot's link leaves every blob matching its
hash and the other revision unchanged."""
import errno
import glob
import hashlib
import json
import os
import shutil
import tempfile

import numpy as np

from formats import ST_DTYPES, st_read, st_write
from harness import Mount, check, data, eq, run, sha

SHARDS = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
          "model.safetensors.index.json"]
REVS = ["a" * 40, "b" * 40]
SUB = "sub/model.safetensors"   # a file in a subfolder of the repository


def put_blob(repo, body):
    h = hashlib.sha256(body).hexdigest()
    blob = os.path.join(repo, "blobs", h)
    if not os.path.exists(blob):
        with open(blob, "wb") as f:
            f.write(body)
    return h


def snap_link(repo, rev, name, h):
    """snapshots/<rev>/<name> -> ../../blobs/<h> (../../../ in a subfolder)."""
    p = os.path.join(repo, "snapshots", rev, name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    os.symlink("../" * (name.count("/") + 2) + "blobs/" + h, p)


def other_shard():
    """The second shard with other values: revision b changes one file."""
    _, tensors, _ = st_read(data("safetensors/tiny/" + SHARDS[1]))
    path = os.path.join(tempfile.mkdtemp(prefix="mfs-shard-"), "s")
    st_write(path, {k: (dt, shape, bytes(b ^ 1 for b in raw)) for k, (dt, shape, raw) in tensors.items()})
    body = open(path, "rb").read()
    shutil.rmtree(os.path.dirname(path))
    return body


def hf_cache(src):
    """models--org--tiny laid out as huggingface_hub's file_download does:
    blobs named by the file's sha256, snapshots/<rev>/<file> relative links
    to ../../blobs/<hash> (subfolders kept), refs/main holding the last
    revision, .no_exist/<rev>/<file> markers. Revision b shares every blob
    but the second shard with revision a."""
    repo = os.path.join(src, "hub", "models--org--tiny")
    for d in ["blobs", "refs", os.path.join(".no_exist", REVS[1])]:
        os.makedirs(os.path.join(repo, d))
    open(os.path.join(repo, ".no_exist", REVS[1], "tokenizer.json"), "w").close()
    bodies = {name: open(data("safetensors/tiny/" + name), "rb").read() for name in SHARDS}
    bodies["config.json"] = b'{"model_type": "tiny"}\n'
    bodies[SUB] = bodies[SHARDS[0]]
    for rev in REVS:
        if rev == REVS[1]:
            bodies[SHARDS[1]] = other_shard()
        for name, body in bodies.items():
            snap_link(repo, rev, name, put_blob(repo, body))
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
        # through a snapshot's name: the same values
        snap = m.m(rel, "snapshots", REVS[0], SHARDS[0])
        ts = first_tensor(snap)
        eq(np.load(os.path.join(ts, "data.npy")).tolist(), want.tolist(), "values via snapshot")
        eq(m.text(rel, "refs", "main"), REVS[1], "refs/main")
        blobs_match(repo)


def blob_raw(path):
    """name -> element bytes of a safetensors blob, read by an independent
    reader (the checkpoint holds bfloat16 and float8 tensors too)."""
    _, tensors, _ = st_read(path)
    return {k: raw for k, (dt, shape, raw) in tensors.items()}


def blob_array(path, key):
    dt, shape, raw = st_read(path)[1][key]
    return np.frombuffer(raw, ST_DTYPES[dt]).reshape(shape)


def snapshot_values_are_blobs(m, repo, rev):
    """Every tensor through the snapshot's index equals its blob's."""
    rel = os.path.relpath(repo, m.src)
    idx = json.load(open(os.path.join(repo, "snapshots", rev, SHARDS[2])))
    for key, shard in idx["weight_map"].items():
        blob = os.path.realpath(os.path.join(repo, "snapshots", rev, shard))
        t = m.m(rel, "snapshots", rev, SHARDS[2], "tensors", *key.split("."))
        eq(open(os.path.join(t, "data"), "rb").read(), blob_raw(blob)[key], "%s %s" % (rev[:1], key))


def test_hf_snapshots_are_models():
    m = Mount()
    repo = hf_cache(m.src)
    with m:
        rel = os.path.relpath(repo, m.src)
        for rev in REVS:
            snap = m.m(rel, "snapshots", rev)
            for name in SHARDS + [SUB]:
                p = os.path.join(snap, name)
                check(os.path.isdir(p) and not os.path.islink(p), "%s is a model directory" % name)
            check(os.path.islink(os.path.join(snap, "config.json")), "config.json stays a link")
            eq(open(os.path.join(snap, "config.json")).read(), '{"model_type": "tiny"}\n', "config.json")
            snapshot_values_are_blobs(m, repo, rev)
            sub = first_tensor(os.path.join(snap, SUB))
            check(os.path.isfile(os.path.join(sub, "values.txt")), "a subfolder's model")
        eq(sorted(os.listdir(m.m(rel, ".no_exist", REVS[1]))), ["tokenizer.json"], ".no_exist")
        eq(m.text(rel, "refs", "main"), REVS[1], "refs/main")
        r = m.sh("ls -lR hub >/dev/null && ls hub/models--org--tiny/snapshots/%s/%s/tensors/model" % (REVS[0], SHARDS[2]))
        eq(r.stdout.split(), ["embed_tokens", "layers", "norm"], "the index's tensors")


def test_hf_edit_through_snapshot():
    m = Mount()
    repo = hf_cache(m.src)
    with m:
        rel = os.path.relpath(repo, m.src)
        key = "model.embed_tokens.weight"
        t = m.m(rel, "snapshots", REVS[0], SHARDS[2], "tensors", *key.split("."))
        before_b = blob_raw(os.path.realpath(os.path.join(repo, "snapshots", REVS[1], SHARDS[0])))
        new = np.load(os.path.join(t, "data.npy"))
        new[0, 0] = 42
        with open(os.path.join(t, "values.txt"), "w") as f:
            f.write("\n".join(" ".join("%g" % x for x in row) for row in new) + "\n")
        eq(np.load(os.path.join(t, "data.npy")).tolist(), new.tolist(), "the edit reads back")
        edited = os.path.join(repo, "snapshots", REVS[0], SHARDS[0])
        check(not os.path.islink(edited), "the edited shard is a regular file in the snapshot")
        eq(blob_array(edited, key).tolist(), new.tolist(), "the new file holds the edit")
        blobs_match(repo)
        snapshot_values_are_blobs(m, repo, REVS[1])
        eq(blob_raw(os.path.realpath(os.path.join(repo, "snapshots", REVS[1], SHARDS[0]))), before_b,
           "revision b")
        # the subfolder's link to the same blob is untouched, and editable itself
        sub = m.m(rel, "snapshots", REVS[0], SUB, "tensors", *key.split("."))
        old = open(os.path.join(sub, "values.txt")).read()
        with open(os.path.join(sub, "values.txt"), "w") as f:
            f.write(old.replace("0.25", "0.5", 1))
        eq(open(os.path.join(sub, "values.txt")).read(), old.replace("0.25", "0.5", 1), "subfolder edit")
        check(not os.path.islink(os.path.join(repo, "snapshots", REVS[0], SUB)), "subfolder file")
        blobs_match(repo)
        # a second edit patches the new file in place
        ino = os.stat(edited).st_ino
        new[0, 1] = 43
        with open(os.path.join(t, "data"), "r+b") as f:
            f.write(new.tobytes())
        eq(os.stat(edited).st_ino, ino, "the second edit patches the file")
        eq(blob_array(edited, key).tolist(), new.tolist(), "second edit on disk")
        blobs_match(repo)


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


def ollama_store(root):
    """~/.ollama/models: blobs/sha256-<hex>, and a manifest naming them."""
    blobs = os.path.join(root, "blobs")
    os.makedirs(blobs)
    layers = [("model", open(data("gguf/tiny_llama.gguf"), "rb").read()),
              ("template", b"{{ .Prompt }}"), ("license", b"MIT License\n"),
              ("params", b'{"stop": ["</s>"]}')]
    config = b'{"model_format": "gguf", "model_family": "llama"}'

    def blob(body):
        h = hashlib.sha256(body).hexdigest()
        with open(os.path.join(blobs, "sha256-" + h), "wb") as f:
            f.write(body)
        return {"digest": "sha256:" + h, "size": len(body)}

    manifest = {"schemaVersion": 2, "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
                "config": dict(mediaType="application/vnd.docker.container.image.v1+json", **blob(config)),
                "layers": [dict(mediaType="application/vnd.ollama.image." + k, **blob(b)) for k, b in layers]}
    d = os.path.join(root, "manifests", "registry.ollama.ai", "library", "tiny")
    os.makedirs(d)
    with open(os.path.join(d, "latest"), "w") as f:
        json.dump(manifest, f, separators=(",", ":"))
    return manifest, dict(layers, config=config)


def test_ollama_manifest():
    m = Mount()
    manifest, bodies = ollama_store(m.s("ollama", "models"))
    with m:
        d = m.m("ollama", "models", "manifests", "registry.ollama.ai", "library", "tiny", "latest")
        check(os.path.isdir(d), "the manifest is a directory")
        eq(sorted(os.listdir(d)), ["config", "layers", "license", "model", "params", "template"], "entries")
        h = manifest["layers"][0]["digest"][7:]
        eq(os.readlink(os.path.join(d, "model")), "../../../../../blobs/sha256-" + h, "model link")
        check(os.path.isdir(os.path.join(d, "model")), "model leads to the GGUF blob's directory")
        t = first_tensor(os.path.join(d, "model"))
        eq(np.load(os.path.join(t, "data.npy")).tolist(),
           np.load(os.path.join(m.m("ollama", "models", "blobs", "sha256-" + h),
                                os.path.relpath(t, os.path.join(d, "model")), "data.npy")).tolist(),
           "values through the manifest")
        for k in ["template", "license", "params", "config"]:
            eq(open(os.path.join(d, k), "rb").read(), bodies[k], k)
        want = ["%s\t%s\t%d" % (l["mediaType"], l["digest"], l["size"]) for l in manifest["layers"]]
        eq(open(os.path.join(d, "layers")).read().splitlines(), want, "layers")
        try:
            with open(os.path.join(d, "layers"), "w") as f:
                f.write("x\n")
            raise AssertionError("a write to a manifest was allowed")
        except OSError as e:
            check(e.errno in (errno.EACCES, errno.EROFS, errno.EPERM), "manifest read-only: %r" % e)
        refuse_write(m, os.path.join(t, "values.txt"))
        src = m.s("ollama", "models", "manifests", "registry.ollama.ai", "library", "tiny", "latest")
        eq(json.load(open(src)), manifest, "the manifest unchanged")
        for b in glob.glob(m.s("ollama", "models", "blobs", "*")):
            eq(sha(b), os.path.basename(b)[7:], "blob " + b)


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
    run([test_hf_blob_read_only, test_hf_snapshots_are_models, test_hf_edit_through_snapshot,
         test_ollama_blob_read_only, test_ollama_manifest, test_plain_blobs_dir_still_writable])
