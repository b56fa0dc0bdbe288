"""GGUF v3 files written per the format: first read, quantized values.txt on one
core against ggml's formulas in C, a header-only first ls of a sparse 4 GiB
file, a general.name edit that rewrites the file against cp and mv."""

import os

from ..common import BenchError, fields, median, run


GGUF_WRITER = (
	"def gguf(path, name, tensors, sparse=False):\n"
	"\ts = lambda b: struct.pack('<Q', len(b)) + b\n"
	"\tout = b'GGUF' + struct.pack('<IQQ', 3, len(tensors), 1)\n"
	"\tout += s(b'general.name') + struct.pack('<I', 8) + s(name)\n"
	"\trel = 0\n"
	"\tfor tn, ty, ne, nbytes, _ in tensors:\n"
	"\t\tout += s(tn) + struct.pack('<I', len(ne)) + b''.join(struct.pack('<Q', d) for d in ne)\n"
	"\t\tout += struct.pack('<IQ', ty, rel)\n"
	"\t\trel += (nbytes + 31) // 32 * 32\n"
	"\tout += b'\\0' * (-len(out) % 32)\n"
	"\twith open(path, 'wb') as f:\n"
	"\t\tf.write(out)\n"
	"\t\tfor tn, ty, ne, nbytes, gen in tensors:\n"
	"\t\t\tif sparse:\n"
	"\t\t\t\tf.seek((nbytes + 31) // 32 * 32, 1)\n"
	"\t\t\t\tcontinue\n"
	"\t\t\tfor part in gen():\n"
	"\t\t\t\tf.write(part)\n"
	"\t\t\tf.write(b'\\0' * (-nbytes % 32))\n"
	"\t\tf.truncate(f.tell())\n"
	"rng = np.random.default_rng(3)\n"
	"def blocks(nb, bs, halves):\n"
	"\tfor k in range(0, nb, 1 << 16):\n"
	"\t\tb = rng.integers(0, 256, (min(1 << 16, nb - k), bs), dtype=np.uint8)\n"
	"\t\tfor at in halves:\n"
	"\t\t\tb[:, at:at + 2] = (rng.random(len(b)) * 0.01 + 1e-3).astype('<f2').view(np.uint8).reshape(-1, 2)\n"
	"\t\tyield b.tobytes()\n"
	"def f32(n):\n"
	"\tfor k in range(0, n, 1 << 22):\n"
	"\t\tyield rng.standard_normal(min(1 << 22, n - k), dtype=np.float32).tobytes()\n")


def measure(b):
	sec = "gguf"
	mib, vmib = b.s["mib"], b.s["values_mib"]
	try:
		big = b.py_file(f"gguf-{mib}m/m.gguf", GGUF_WRITER +
				   "n = mib << 18\n"
				   "gguf(p, b'bench', [(b'w', 0, [16384, n // 16384], n * 4, lambda: f32(n))])\n", mib)
	except BenchError as e:
		b.res.fail(sec, "the F32 model", e)
		return
	b.first_read(sec, f"data first read, {mib} MiB F32 tensor", big, "tensors/w/data")
	# quantized values.txt against a plain C loop over ggml's formulas
	nv = vmib << 18
	try:
		q = b.py_file(f"gguf-q-{vmib}m/q.gguf", GGUF_WRITER +
				 "n = mib << 18\n"
				 "gguf(p, b'q', [(b'q8', 8, [16384, n // 16384], n // 32 * 34, lambda: blocks(n // 32, 34, [0])),"
				 " (b'q4', 12, [16384, n // 16384], n // 256 * 144, lambda: blocks(n // 256, 144, [0, 2]))])\n",
				 vmib)
	except BenchError as e:
		b.res.fail(sec, "the quantized model", e)
		q = None
	for tn, ty in (("q8", "q8_0"), ("q4", "q4_k")):
		label = f"values.txt {ty} ({nv >> 20} M values), 1 core"
		if not q:
			continue
		try:
			idx = dict((l.split("\t")[0], l.split("\t")) for l in run([b.modelfs, "cat", q, "index"]).splitlines())
			off, length = int(idx[tn][3]), int(idx[tn][4])
			raw = os.path.join(b.work, f"{ty}.bin")
			with open(q, "rb") as src, open(raw, "wb") as dst:
				src.seek(off)
				dst.write(src.read(length))
			base = median([float(fields(run([b.baseline, ty, raw]))["values_per_s"])
				       for _ in range(b.runs)])
			rate = b.one_core_values(q, f"tensors/{tn}", nv)
			b.res.add(sec, label, rate / 1e6, "M values/s", base / 1e6,
				     "C: ggml's formulas, then snprintf(\"%.9g\")", rate / base, ">= 20 M values/s",
				     rate >= 20e6)
		except (BenchError, KeyError, ValueError) as e:
			b.res.fail(sec, label, e, ">= 20 M values/s")
	try:
		sparse = b.py_file("gguf-4g/s.gguf", GGUF_WRITER +
				      "gguf(p, b'sparse', [(b'blk.%d.w' % k, 0, [16384, 4096], 1 << 28, None)"
				      " for k in range(16)], sparse=True)\n", 0)
		b.header_only_ls(sec, "first `ls -R` of a 4 GiB GGUF (16 tensors of 256 MiB)", sparse)
	except BenchError as e:
		b.res.fail(sec, "first ls of a 4 GiB GGUF", e, "reads only the header (< 1 MiB)")
	label = f"general.name edit that rewrites the {mib} MiB file"
	try:
		name = os.path.join(b.mnt, os.path.basename(big), "metadata", "general.name")
		# each edit's name 64 bytes longer than the last: the key-value
		# section outgrows the padding (under 32 bytes) before the data,
		# so every edit rewrites the file (a new inode). The baseline is
		# a script's atomic replace: cp to a temporary name, then mv over
		# the original (ext4 starts writing the new file back at such a
		# rename, as for ours); durable, the copy fsynced first, as the
		# commit does; and both without fsync (-o no_fsync). A file
		# that grew was rewritten (in place, it keeps its size; its
		# inode number may come back, as ext4 reuses a freed one).
		size0 = os.stat(big).st_size
		edit = "echo $(head -c $((100 + 64 * {i})) /dev/zero | tr '\\0' n) > " + name
		durable = b.timed_edit(edit, big)
		fast = b.timed_edit(edit.replace("{i}", "({i} + 3)"), big, extra=["-o", "no_fsync"])
		if os.stat(big).st_size <= size0:
			raise BenchError("the edits did not rewrite the file")
		c, cs = b.cp_over(big, big)
		b.res.add(sec, label, durable, "s", cs, "cp, sync of the copy, mv over", cs / durable,
			     "at least as fast as cp (both durable)", durable <= cs)
		b.res.add(sec, "  the same with -o no_fsync", fast, "s", c, "cp, mv over", c / fast,
			     "at least as fast as cp", fast <= c)
	except BenchError as e:
		b.res.fail(sec, label, e, "at least as fast as cp")
