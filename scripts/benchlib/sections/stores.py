"""Model stores made of links: ls -lR of every snapshot of a Hugging Face
cache against the same tree as plain files, an edit through a snapshot's
link to a 1 GiB blob against cp, and the first stat of a sharded index of
200,000 one-tensor shards against json.load of it."""

import os
import shutil

from ..common import BenchError, log, median, preread, run, timed
from .safetensors import ST_F32
from .shards import plain_tree

# n repositories (mib: n) laid out as huggingface_hub does, under p.
HF_CACHE = r'''
import hashlib
root, nrepo = p, mib
h = 1024
shapes = [("self_attn.q_proj", [h, h]), ("self_attn.k_proj", [h, h]), ("self_attn.v_proj", [h, h]),
          ("self_attn.o_proj", [h, h]), ("mlp.gate_proj", [4 * h, h]), ("mlp.up_proj", [4 * h, h]),
          ("mlp.down_proj", [h, 4 * h]), ("input_layernorm", [h]), ("post_attention_layernorm", [h])]
def shard(tensors):
    header, off = {"__metadata__": {"format": "pt"}}, 0
    for name, shape in tensors:
        n = 2
        for d in shape:
            n *= d
        header[name] = {"dtype": "BF16", "shape": shape, "data_offsets": [off, off + n]}
        off += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, off
for r in range(nrepo):
    repo = os.path.join(root, "hub", "models--org--model%02d" % r)
    rev = hashlib.sha1(b"rev%d" % r).hexdigest()
    for d in ("blobs", "refs", "snapshots/" + rev):
        os.makedirs(os.path.join(repo, d))
    names = [("model.embed_tokens.weight", [8192, h])]
    names += [("model.layers.%d.%s.weight" % (l, t), s) for l in range(8) for t, s in shapes]
    names.append(("model.norm.weight", [h]))
    half, files, wm = len(names) // 2, {}, {}
    for k, part in enumerate((names[:half], names[half:])):
        fn = "model-%05d-of-00002.safetensors" % (k + 1)
        files[fn] = shard(part)
        wm.update((n, fn) for n, _ in part)
    total = sum(size for _, size in files.values())
    files["model.safetensors.index.json"] = (json.dumps({"metadata": {"total_size": total},
                                                         "weight_map": wm}).encode(), 0)
    files["config.json"] = (b'{"model_type": "llama", "hidden_size": 1024}\n', 0)
    for fn, (head, size) in files.items():
        blob = hashlib.sha256(head + b"%d" % size).hexdigest()
        with open(os.path.join(repo, "blobs", blob), "wb") as f:
            f.write(head)
            f.truncate(len(head) + size)
        os.symlink("../../blobs/" + blob, os.path.join(repo, "snapshots", rev, fn))
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write(rev)
'''

# mib one-tensor shards and their index, in the new directory p.
BIG_INDEX = r'''
os.makedirs(p)
wm = {}
for s in range(mib):
    shard = "model-%06d-of-%06d.safetensors" % (s + 1, mib)
    name = "layers.%d.t0.weight" % s
    wm[name] = shard
    h = json.dumps({name: {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}).encode()
    h += b" " * (-len(h) % 8)
    with open(os.path.join(p, shard), "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"\0")
with open(os.path.join(p, "model.safetensors.index.json"), "w") as f:
    json.dump({"metadata": {"total_size": mib}, "weight_map": wm}, f)
'''


def py_tree(b, rel, code, n):
	"""inputs/<rel>, a directory written once by /usr/bin/python3 running
	code (with json, os, struct, the path as p and n as mib)."""
	d = os.path.join(b.inputs, rel)
	if not os.path.isdir(d):
		log(f"generating {d}")
		shutil.rmtree(d + ".part", ignore_errors=True)
		run(["/usr/bin/python3", "-c", "import json, os, struct, sys\n"
		     f"p, mib = sys.argv[1], int(sys.argv[2])\n{code}", d + ".part", str(n)], timeout=3600)
		os.rename(d + ".part", d)
	return d


def listing(b, sec):
	"""A cache of n repositories, each an 8-layer checkpoint of 74 bfloat16
	tensors in two sparse shards (real headers, the buffers holes), its
	index and config.json. A blob is named by the sha256 of its header and
	size: the true hash of its holes would need reading every zero."""
	n = b.s["repos"]
	label = f"ls -lR of every snapshot of a Hugging Face cache of {n} repositories (sparse shards)"
	try:
		d = py_tree(b, f"hf-{n}", HF_CACHE, n)
		cmd = "cd {} && ls -lR hub/*/snapshots/*"
		firsts, seconds = [], []
		for _ in range(b.runs):
			with b.mount(d):
				firsts.append(timed(["sh", "-c", cmd.format(b.mnt)]))
				seconds.append(timed(["sh", "-c", cmd.format(b.mnt)]))
		plain = plain_tree(b, d, os.path.join(b.inputs, f"hf-{n}-plain"))
		timed(["sh", "-c", cmd.format(plain)])
		base = median([timed(["sh", "-c", cmd.format(plain)]) for _ in range(b.runs)])
		f, s2 = median(firsts), median(seconds)
		b.res.add(sec, label + ", fresh mount", f, "s", base,
			  "ls -lR of the same tree, plain files, warm", base / f, "< 2 s", f < 2)
		b.res.add(sec, "  the same, again", s2, "s", base, "the plain tree, warm", base / s2)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 2 s")


def edit(b, sec):
	"""A one-value dd through a snapshot's link to a dense blob of one F32
	tensor: the commit writes a new file over the link (fresh mount each
	run, the link put back between runs)."""
	mib = b.s["mib"]
	label = f"one-value edit through a snapshot's link to a {mib} MiB blob (new file over the link)"
	try:
		d = os.path.join(b.inputs, "hf-edit")
		blob = b.py_file(f"hf-edit/hub/models--org--big/blobs/{'0' * 64}", ST_F32, mib)
		link = os.path.join(d, "hub", "models--org--big", "snapshots", "1" * 40, "model.safetensors")
		os.makedirs(os.path.dirname(link), exist_ok=True)
		data = os.path.relpath(link, d) + "/tensors/w/data"
		cmd = "printf '\\000\\000\\200\\077' | dd of={}/" + data + " bs=4 count=1 conv=notrunc status=none"
		ours = {(): [], ("-o", "no_fsync"): []}
		for extra, out in ours.items():
			for _ in range(b.runs):
				if os.path.lexists(link):
					os.unlink(link)
				os.symlink(os.path.relpath(blob, os.path.dirname(link)), link)
				preread(blob)
				run(["sync"])
				with b.mount(d, extra=extra):
					out.append(timed(["sh", "-c", cmd.format(b.mnt)]))
					b.check_errors()
				if os.path.islink(link):
					raise BenchError("the edit left the link in place")
		c, cs = b.cp_over(blob, link)
		durable, fast = median(ours[()]), median(ours[("-o", "no_fsync")])
		b.res.add(sec, label, durable, "s", cs, "cp of the blob, sync of the copy, mv over the link",
			  cs / durable, "no slower than cp", durable <= cs)
		b.res.add(sec, "  the same with -o no_fsync", fast, "s", c, "cp of the blob, mv over",
			  c / fast, "no slower than cp", fast <= c)
	except BenchError as e:
		b.res.fail(sec, label, e, "no slower than cp")


def index(b, sec):
	"""The first stat of tensors/ of a sharded index of n one-tensor shards
	(a fresh mount each run) against python3's json.load of the index."""
	n = b.s["index_shards"]
	label = f"first stat of a sharded index of {n:,} one-tensor shards (tensors/), fresh mount"
	try:
		d = py_tree(b, f"index-{n}", BIG_INDEX, n)
		idx = os.path.join(d, "model.safetensors.index.json")
		preread(idx)
		timed(["ls", "-U", d])
		ours = []
		for _ in range(b.runs):
			with b.mount(d):
				ours.append(timed(["stat", os.path.join(b.mnt, os.path.basename(idx), "tensors")]))
		load = median([timed(["/usr/bin/python3", "-c", "import json, sys; json.load(open(sys.argv[1]))",
				      idx]) for _ in range(b.runs)])
		ls = median([timed(["ls", "-U", d]) for _ in range(b.runs)])
		t = median(ours)
		b.res.add(sec, label, t, "s", load, "python3 json.load of the index", load / t, "< 0.5 s",
			  t < 0.5, note=f"ls -U of the shards' directory: {ls:.2f} s")
	except BenchError as e:
		b.res.fail(sec, label, e, "< 0.5 s")


def measure(b):
	listing(b, "stores")
	edit(b, "stores")
	index(b, "stores")
