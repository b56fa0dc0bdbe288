"""ls -lR and find over a model of many tensors against a real directory of the
same entries (and passthrough_hp serving it); how listing time scales; FUSE
requests per directory."""

import os
import resource
import shutil

from ..common import BenchError, median, run, timed
from ..mount import Fuse


def replica(b, n):
	"""A real directory with the same entries as the mounted model of n
	tensors (layout of modelfs-gen primitiv-100k; sizes as shown)."""
	d = os.path.join(b.inputs, f"real-{n}")
	if os.path.isdir(d):
		return d
	tmp = d + ".part"
	shutil.rmtree(tmp, ignore_errors=True)
	root = os.path.join(tmp, "m.model")
	os.makedirs(os.path.join(root, "params"))
	for name, size in (("version", 4), ("type", 6)):
		os.truncate(touch(os.path.join(root, name)), size)
	shape_len = (3, 4, 4, 6)
	for i in range(n):
		p = os.path.join(root, "params", f"layer{i // 100:04d}", f"w{i % 100:02d}")
		os.makedirs(os.path.join(p, "value"))
		os.mkdir(os.path.join(p, "stats"))
		for name, size in (("data", 64), ("data.npy", 192), ("dtype", 8), ("shape", shape_len[i % 4]),
				   ("values.txt", 200)):
			os.truncate(touch(os.path.join(p, "value", name)), size)
	os.rename(tmp, d)
	return d


def touch(path):
	os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o644))
	return path


def many_model(b, n):
	d = os.path.join(b.inputs, f"many-{n}")
	b.genfile(["primitiv-100k", os.path.join(d, "m.model"), str(n)], os.path.join(d, "m.model"))
	return d


def listing(b, n, cmd, timeout):
	"""Median seconds of cmd over the mounted model (fresh mount each run)
	and in the same mount again; stops at the first timeout."""
	src = many_model(b, n)
	fresh, warm, count = [], [], None
	for _ in range(b.runs):
		with b.mount(src):
			p = os.path.join(b.mnt, "m.model")
			fresh.append(timed(cmd + [p], timeout=timeout))
			warm.append(timed(cmd + [p], timeout=timeout))
			if count is None and cmd[0] == "find":
				count = len(run(["find", p], timeout=timeout).splitlines())
	return median(fresh), median(warm), count


def listing_vs_pthp(b, n):
	"""`find` over the n-tensor model, fresh mount, against libfuse's
	passthrough_hp serving a real directory of the same entries (fresh
	mount too): what any FUSE file system pays per directory here. It
	keeps a descriptor per inode, so only a tree within the limit."""
	sec = "many"
	label = f"`find` over the {n}-tensor model, fresh mount, vs passthrough_hp on the same tree"
	if not b.pthp:
		b.res.fail(sec, label, b.pthp_error)
		return
	real = replica(b, n)
	count = len(run(["find", real]).splitlines())
	if resource.getrlimit(resource.RLIMIT_NOFILE)[0] < count + 256:
		b.res.fail(sec, label, f"passthrough_hp needs {count + 256} descriptors, the limit is "
			      f"{resource.getrlimit(resource.RLIMIT_NOFILE)[0]}")
		return
	try:
		pt, ours, native = [], [], []
		for _ in range(b.runs):
			with Fuse([b.pthp, "--foreground", real, b.mnt], b.mnt,
				  os.path.join(b.logs, "passthrough_hp.log")):
				pt.append(timed(["find", os.path.join(b.mnt, "m.model")]))
			with b.mount(many_model(b, n)):
				ours.append(timed(["find", os.path.join(b.mnt, "m.model")]))
			native.append(timed(["find", os.path.join(real, "m.model")]))
	except BenchError as e:
		b.res.fail(sec, label, e)
		return
	o, t, r = median(ours), median(pt), median(native)
	b.res.add(sec, label, o, "s", t, "passthrough_hp", t / o, note=f"{count} entries; "
		     f"the real directory itself {r:.3f} s ({r / o:.2f}x)")


def measure(b):
	sec = "many"
	n, timeout = b.s["many"], b.s["many_timeout"]
	# How listing time grows with the model (linear: x4).
	small, large = b.s["scale"]
	try:
		ta = listing(b, small, ["ls", "-lR"], 600)[0]
		tb = listing(b, large, ["ls", "-lR"], 600)[0]
		b.res.add(sec, f"`ls -lR` time, {large} vs {small} tensors (linear = 4)", tb / ta, "x",
			     note=f"{ta:.2f} s and {tb:.2f} s", target="about 4 (< 6)", met=tb / ta < 6)
	except BenchError as e:
		b.res.fail(sec, f"`ls -lR` scaling {small} to {large} tensors", e, "about 4 (< 6)")
	# Requests per directory (load-independent), on the larger scale model.
	try:
		p = os.path.join(b.mnt, "m.model")
		src = many_model(b, large)
		fresh, again = b.requests(src, [["find", p], ["find", p]])
		(lslr,) = b.requests(src, [["ls", "-lR", p]])
		with b.mount(src):
			ndirs = len(run(["find", p, "-type", "d"]).splitlines())
			nent = len(run(["find", p]).splitlines())
		for what, c, n_ in (("`find`, fresh mount", fresh, ndirs), ("`find` again", again, ndirs),
				    ("`ls -lR`, fresh mount", lslr, ndirs)):
			per, parts = b.per(c, n_)
			b.res.add(sec, f"FUSE requests per directory, {what} ({large} tensors, {ndirs} directories, "
				     f"{nent} entries)", per, "", note=parts)
	except BenchError as e:
		b.res.fail(sec, "FUSE requests per directory", e)
	listing_vs_pthp(b, large)
	real = os.path.join(replica(b, n), "m.model")
	real_n = len(run(["find", real]).splitlines())
	for cmd in (["ls", "-lR"], ["find"]):
		label = f"`{' '.join(cmd)}` over the {n}-tensor model ({real_n} entries)"
		rt = []
		for _ in range(b.runs):
			rt.append(timed(cmd + [real]))
		r = median(rt)
		try:
			fresh, warm, count = listing(b, n, cmd, timeout)
		except BenchError as e:
			b.res.fail(sec, f"{label}, fresh mount", e, ">= 1.0x the real directory")
			b.res.add(sec, "  the same on the real directory", r, "s")
			continue
		note = "" if count in (None, real_n) else f"{count} entries in the mount"
		b.res.add(sec, f"{label}, fresh mount", fresh, "s", r, "real dir (cached)", r / fresh,
			     ">= 1.0x the real directory", r / fresh >= 1.0, note=note)
		b.res.add(sec, f"{label}, again in the same mount", warm, "s", r, "real dir (cached)", r / warm,
			     ">= 1.0x the real directory", r / warm >= 1.0)
