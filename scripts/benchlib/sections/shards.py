"""ls -lR of a sharded safetensors checkpoint of sparse 5 GiB shards and its
index, against the same tree as plain files."""

import os
import shutil

from ..common import BenchError, median, timed


def plain_tree(b, src, dest):
	"""dest: the mount's tree of src as plain empty files, directories
	and dangling links (the same entries for ls -lR to stat)."""
	if os.path.isdir(dest):
		return dest
	tmp = dest + ".part"
	shutil.rmtree(tmp, ignore_errors=True)
	with b.mount(src):
		for root, dirs, files in os.walk(b.mnt):
			rel = os.path.relpath(root, b.mnt)
			os.makedirs(os.path.join(tmp, rel), exist_ok=True)
			for e in dirs + files:
				p = os.path.join(root, e)
				q = os.path.join(tmp, rel, e)
				if os.path.islink(p):
					os.symlink("/nonexistent", q)
					dirs[:] = [x for x in dirs if x != e]
				elif not os.path.isdir(p):
					open(q, "w").close()
	os.rename(tmp, dest)
	return dest


def measure(b):
	sec = "shards"
	n = b.s["shards"]
	label = f"ls -lR of {n} sparse 5 GiB safetensors shards (300 bfloat16 tensors each) and the index"
	try:
		d = b.shard_set()
		firsts, seconds = [], []
		for _ in range(b.runs):
			with b.mount(d):
				firsts.append(timed(["ls", "-lR", b.mnt]))
				seconds.append(timed(["ls", "-lR", b.mnt]))
		plain = plain_tree(b, d, os.path.join(b.inputs, f"shards-{n}-plain"))
		timed(["ls", "-lR", plain])
		base = median([timed(["ls", "-lR", plain]) for _ in range(b.runs)])
		f = median(firsts)
		b.res.add(sec, label + ", first", f, "s", base, "ls -lR of the same tree, plain files, warm",
			     base / f, "< 1 s", f < 1)
		s2 = median(seconds)
		b.res.add(sec, "  the same, second", s2, "s", base, "the plain tree, warm", base / s2)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 1 s")
