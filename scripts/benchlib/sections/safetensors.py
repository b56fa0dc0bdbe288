"""safetensors files written per the format: first read, a header-only first
ls, bfloat16 values.txt on one core, a one-value edit of a 5 GiB shard, a
metadata edit within the header's padding."""

import os

from ..common import BenchError, MiB


ST_F32 = (
	"n = (mib << 18) // 16384\n"
	"h = json.dumps({'__metadata__': {'format': 'pt'}, 'w': {'dtype': 'F32', 'shape': [n, 16384],"
	" 'data_offsets': [0, n * 16384 * 4]}}, separators=(',', ':')).encode()\n"
	"h += b' ' * (-len(h) % 8)\n"
	"with open(p, 'wb') as f:\n"
	"\tf.write(struct.pack('<Q', len(h)) + h)\n"
	"\trng = np.random.default_rng(1)\n"
	"\tfor k in range(n // 256):\n"
	"\t\trng.standard_normal((256, 16384), dtype=np.float32).tofile(f)\n")
ST_BF16 = (
	"n = (mib << 19) // 16384\n"
	"h = json.dumps({'w': {'dtype': 'BF16', 'shape': [n, 16384], 'data_offsets': [0, n * 16384 * 2]}},"
	" separators=(',', ':')).encode()\n"
	"h += b' ' * (-len(h) % 8)\n"
	"with open(p, 'wb') as f:\n"
	"\tf.write(struct.pack('<Q', len(h)) + h)\n"
	"\trng = np.random.default_rng(2)\n"
	"\tfor k in range(n // 256):\n"
	"\t\ta = rng.standard_normal((256, 16384), dtype=np.float32)\n"
	"\t\t(a.view(np.uint32) >> 16).astype('<u2').tofile(f)\n")


def measure(b):
	sec = "safetensors"
	mib, vmib = b.s["mib"], b.s["values_mib"]
	try:
		f32 = b.py_file(f"st-{mib}m/m.safetensors", ST_F32, mib)
	except BenchError as e:
		b.res.fail(sec, "the F32 model", e)
		return
	b.first_read(sec, f"data first read, {mib} MiB F32 tensor", f32, "tensors/w/data")
	b.header_only_ls(sec, f"first `ls -R` of the {mib} MiB file", f32)
	label = f"values.txt bfloat16 ({vmib} MiB), 1 core"
	try:
		bf = b.py_file(f"st-bf16-{vmib}m/b.safetensors", ST_BF16, vmib)
		rate = b.one_core_values(bf, "tensors/w", vmib * MiB // 2)
		c = b.c_format_rate("primitiv", "float32")
		b.res.add(sec, label, rate / 1e6, "M values/s", c / 1e6, "C snprintf(\"%.9g\") float32",
			     rate / c, ">= 25 M values/s", rate >= 25e6)
	except BenchError as e:
		b.res.fail(sec, label, e, ">= 25 M values/s")
	label = "one-value edit of a 5 GiB shard (dd conv=notrunc into a tensor's data)"
	try:
		shard = os.path.join(b.shard_set(), f"model-00001-of-{b.s['shards']:05d}.safetensors")
		data = os.path.join(b.mnt, os.path.basename(shard), "tensors", "model", "layers", "0",
				    "mlp", "t150", "weight", "data")
		e = b.timed_edit(f"printf '\\{{i}}0\\077' | dd of={data} bs=2 seek=1000 count=1 "
				    "conv=notrunc status=none", shard)
		b.res.add(sec, label, e * 1e3, "ms", target="< 50 ms", met=e < 0.05)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 50 ms")
	label = f"metadata edit within the header's padding, {mib} MiB file (echo > metadata/format)"
	try:
		size = os.path.getsize(f32)
		meta = os.path.join(b.mnt, os.path.basename(f32), "metadata", "format")
		e = b.timed_edit(f"echo p{{i}} > {meta}", f32)
		if os.path.getsize(f32) != size:
			raise BenchError("the file was rewritten")
		b.res.add(sec, label, e * 1e3, "ms", target="< 50 ms", met=e < 0.05)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 50 ms")

# GGUF v3: general.name, then tensors (name, ggml type, GGUF-order dims);
# data either written (np arrays from a generator) or a hole.
