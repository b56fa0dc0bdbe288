"""The benchmark's inputs, written once per run under --work by the
project's own writers (scripts/gen/modelfs-gen) or by /usr/bin/python3 per
the formats' public descriptions; methods of the Bench."""

import json
import os
import shutil
import struct

from .common import MiB, BenchError, log, run


# The formats scripts/gen/modelfs-gen writes large models of, one 1 GiB model
# each (raw, firstls, commit): (name, generator command, file, tensor
# directory in the mount, dtype); safetensors, GGUF and NumPy files are
# written per their formats by their own sections. pmat is float64: PLearn's .pmat keeps its element type
# and every real .pmat is DOUBLE.
FORMATS = [
	("primitiv", "primitiv", "w.param", "w.param/value", "float32"),
	("tennis", "tennis", "g.tsm", "g.tsm/nodes/0/params/value", "float32"),
	("daphne", "daphne", "m.dbdf", "m.dbdf", "float32"),
	("pmat", "pmat", "m.pmat", "m.pmat", "float64"),
]
FMT = {f[0]: f for f in FORMATS}

SIZES = {
	# mib: the large models; values_mib: the values.txt models; write_mib: the
	# model written back; many: tensors in the big primitiv model; shards: the
	# sparse safetensors shards of 5 GiB (300 tensors each); scale: two
	# model sizes (x4) whose listing times show how listing scales; files: the
	# directory of small models; fmt_bytes, savetxt_values: baseline samples;
	# repos: the Hugging Face cache's repositories; index_shards: the shards
	# (one tensor each) of the large sharded index.
	"full": dict(mib=1024, values_mib=256, write_mib=64, many=100000, many_timeout=90,
		     scale=(500, 2000), files=10000, fmt_bytes=64 * MiB, savetxt_values=1 << 21, runs=5,
		     shards=30, repos=50, index_shards=200000),
	"quick": dict(mib=64, values_mib=16, write_mib=8, many=2000, many_timeout=60,
		      scale=(250, 1000), files=1000, fmt_bytes=8 * MiB, savetxt_values=1 << 18, runs=2,
		      shards=6, repos=10, index_shards=20000),
}

# The sharded safetensors checkpoint: shards of 300 bfloat16 [2184, 4096]
# tensors, 5 GiB each.
SHARD_TENSORS = 300
SHARD_TENSOR_BYTES = 17891328


class Inputs:
	def genfile(self, argv, path):
		"""Run the generator once; the result is kept until cleanup."""
		if os.path.exists(path):
			return path
		os.makedirs(os.path.dirname(path), exist_ok=True)
		log(f"generating {path}")
		tmp = os.path.join(os.path.dirname(path), "part-" + os.path.basename(path))
		run([self.gen] + [a if a != path else tmp for a in argv], timeout=1800)
		if os.path.exists(tmp + ".meta"):
			os.rename(tmp + ".meta", path + ".meta")
		os.rename(tmp, path)
		return path

	def model(self, fmt, mib):
		"""Source directory holding one model of fmt with a tensor of mib MiB."""
		name, gencmd, fname = FMT[fmt][:3]
		d = os.path.join(self.inputs, f"{fmt}-{mib}m")
		path = os.path.join(d, fname)
		self.genfile([gencmd, path, str(mib)], path)
		return d

	def models(self, sec):
		"""Each format's large model (FORMATS) as (format, source directory,
		file, tensor directory, dtype); one that could not be generated is
		a failed row of section sec instead."""
		for fmt, _, fname, tdir, dtype in FORMATS:
			try:
				src = self.model(fmt, self.s["mib"])
			except BenchError as e:
				self.res.fail(sec, f"{fmt} model", e)
				continue
			yield fmt, src, fname, tdir, dtype

	def plain(self):
		"""A plain file of the large tensor's size (its own bytes), alone in
		a directory that passthrough_hp serves."""
		d = os.path.join(self.inputs, f"plain-{self.s['mib']}m")
		path = os.path.join(d, "plain.bin")
		if not os.path.exists(path):
			os.makedirs(d, exist_ok=True)
			with self.mount(self.model("primitiv", self.s["mib"])):
				shutil.copyfile(os.path.join(self.mnt, FMT["primitiv"][3], "data"), path + ".part")
			os.rename(path + ".part", path)
		return d, path

	def py_file(self, rel, code, mib):
		"""inputs/<rel>, written once by /usr/bin/python3 running code (with
		np, struct, json, the path as p and mib)."""
		path = os.path.join(self.inputs, rel)
		if not os.path.exists(path):
			os.makedirs(os.path.dirname(path), exist_ok=True)
			log(f"generating {path}")
			tmp = path + ".part"
			run(["/usr/bin/python3", "-c", "import numpy as np, struct, json, sys\n"
			     f"p, mib = sys.argv[1], int(sys.argv[2])\n{code}", tmp, str(mib)], timeout=1800)
			os.rename(tmp, path)
		return path

	def sample(self, fmt, nbytes):
		"""The first nbytes of the values model's raw data, as a plain file."""
		path = os.path.join(self.inputs, f"sample-{fmt}-{nbytes}.bin")
		if not os.path.exists(path):
			with self.mount(self.model(fmt, self.s["values_mib"])):
				with open(os.path.join(self.mnt, FMT[fmt][3], "data"), "rb") as f, open(path, "wb") as o:
					o.write(f.read(nbytes))
		return path

	def shard_set(self):
		"""inputs/shards: N shards of 300 bfloat16 tensors each, their
		headers written per the format and their buffers holes (truncate),
		plus model.safetensors.index.json."""
		n = self.s["shards"]
		d = os.path.join(self.inputs, f"shards-{n}")
		if os.path.isdir(d):
			return d
		log(f"generating {d}")
		tmp = d + ".part"
		shutil.rmtree(tmp, ignore_errors=True)
		os.makedirs(tmp)
		per, wm = SHARD_TENSOR_BYTES, {}
		for k in range(n):
			shard = f"model-{k + 1:05d}-of-{n:05d}.safetensors"
			header, off = {"__metadata__": {"format": "pt"}}, 0
			for t in range(SHARD_TENSORS):
				name = f"model.layers.{k}.mlp.t{t}.weight"
				header[name] = {"dtype": "BF16", "shape": [per // 2 // 4096, 4096],
						"data_offsets": [off, off + per]}
				off += per
				wm[name] = shard
			text = json.dumps(header, separators=(",", ":")).encode()
			text += b" " * (-len(text) % 8)
			with open(os.path.join(tmp, shard), "wb") as f:
				f.write(struct.pack("<Q", len(text)) + text)
				f.truncate(8 + len(text) + off)
		with open(os.path.join(tmp, "model.safetensors.index.json"), "w") as f:
			json.dump({"metadata": {"total_size": n * SHARD_TENSORS * per}, "weight_map": wm}, f)
		os.rename(tmp, d)
		return d
