"""Rewrites and first reads where users wait: a first read by a detached
daemon and one with the source evicted, each against passthrough_hp; a
one-value edit through a Hugging Face snapshot link of a safetensors shard
against cp and sync of the shard."""

import os
import subprocess

from ..common import BenchError, median, preread, run, timed
from ..mount import Fuse, harness, unmount
from .gguf import GGUF_WRITER
from .safetensors import ST_F32

REV = "0123456789abcdef0123456789abcdef01234567"
BLOB = "b" * 64


def gguf_model(b):
	mib = b.s["mib"]
	return b.py_file(f"gguf-{mib}m/m.gguf", GGUF_WRITER +
			 "n = mib << 18\n"
			 "gguf(p, b'bench', [(b'w', 0, [16384, n // 16384], n * 4, lambda: f32(n))])\n", mib)


def pt_cold(b, d, plain):
	"""passthrough_hp's first read of the plain file, evicted first (B/s)."""
	run([b.gen, "evict", plain])
	with Fuse([b.pthp, "--foreground", d, b.mnt], b.mnt, os.path.join(b.logs, "passthrough_hp.log")):
		return os.path.getsize(plain) / timed(["cat", os.path.join(b.mnt, "plain.bin")])


def detached_read(b, path, view):
	"""A first cat of view by a daemon started without -f (B/s)."""
	log = open(os.path.join(b.logs, "modelfs.log"), "ab")
	d = harness.Daemon([b.modelfs, os.path.dirname(path), b.mnt], b.mnt, log, foreground=False,
			   timeout=30)
	try:
		d.start()
		v = os.path.join(b.mnt, os.path.basename(path), view)
		return os.stat(v).st_size / timed(["cat", v])
	except RuntimeError as e:
		raise BenchError(str(e))
	finally:
		unmount(b.mnt)
		log.close()


def paired_reads(b, sec, label, ours_read, pt_read):
	"""ours_read() and pt_read() (B/s) in pairs, passthrough_hp first: the
	median of each pair's ratio."""
	ours, ratios = [], []
	try:
		for _ in range(b.runs):
			pf = pt_read()
			ours.append(ours_read())
			ratios.append(ours[-1] / pf)
		r = median(ratios)
		b.res.add(sec, label, median(ours) / 1e9, "GB/s", None, "passthrough_hp (paired)", r,
			  ">= 0.9x passthrough_hp", r >= 0.9)
	except BenchError as e:
		b.res.fail(sec, label, e, ">= 0.9x passthrough_hp")


def first_reads(b, sec):
	if not b.pthp:
		b.res.fail(sec, "first reads against passthrough_hp", b.pthp_error)
		return
	big = gguf_model(b)
	d, plain = b.plain()
	view = "tensors/w/data"

	def pt_warm():
		return b.pt_read(d, plain, os.path.getsize(plain))[0]

	def ours_detached():
		preread(big)
		return detached_read(b, big, view)

	def ours_cold():
		with b.mount(os.path.dirname(big)):
			v = os.path.join(b.mnt, os.path.basename(big), view)
			os.stat(v)
			run(["sync"])
			run([b.gen, "evict", big])
			return os.path.getsize(big) / timed(["cat", v])

	mib = b.s["mib"]
	paired_reads(b, sec, f"GGUF data first read by a detached daemon (no -f), {mib} MiB",
		     ours_detached, pt_warm)
	paired_reads(b, sec, f"GGUF data first read, source evicted, {mib} MiB", ours_cold,
		     lambda: pt_cold(b, d, plain))


def hub(b):
	"""A Hugging Face cache of one safetensors shard: its blob and a
	snapshot's link to it. Returns (cache dir, snapshot dir, blob path)."""
	mib = b.s["mib"]
	top = os.path.join(b.inputs, f"hub-{mib}m")
	repo = os.path.join(top, "models--org--big")
	blob = os.path.join(repo, "blobs", BLOB)
	if not os.path.exists(blob):
		os.makedirs(os.path.join(repo, "refs"), exist_ok=True)
		os.makedirs(os.path.dirname(blob), exist_ok=True)
		os.rename(b.py_file(f"hub-{mib}m/shard", ST_F32, mib), blob)
		with open(os.path.join(repo, "refs", "main"), "w") as f:
			f.write(REV)
	snap = os.path.join(repo, "snapshots", REV)
	os.makedirs(snap, exist_ok=True)
	return top, snap, blob


def relink(snap):
	"""The snapshot's entry a link to the blob again (an edit made it a file)."""
	p = os.path.join(snap, "model.safetensors")
	if os.path.lexists(p):
		os.unlink(p)
	os.symlink(os.path.join("..", "..", "blobs", BLOB), p)


def link_edit(b, sec):
	mib = b.s["mib"]
	label = f"one-value edit through a snapshot link of a {mib} MiB safetensors shard (durable)"
	try:
		top, snap, blob = hub(b)
		one = os.path.join(b.work, "one-f32")
		with open(one, "wb") as f:
			f.write(b"\x00\x00\x80\x3f")
		ours, cps = [], []
		rel = os.path.join("models--org--big", "snapshots", REV, "model.safetensors", "tensors", "w",
				   "data")
		for i in range(b.runs):
			relink(snap)
			with b.mount(top):
				v = os.path.join(b.mnt, rel)
				os.stat(v)
				preread(blob)
				run(["sync"])
				ours.append(timed(["dd", f"of={v}", "bs=4", f"seek={1000 + i}", "conv=notrunc",
						   "status=none"], stdin=one))
				b.check_errors()
			if os.path.islink(os.path.join(snap, "model.safetensors")):
				raise BenchError("the edit left the snapshot's link in place")
			relink(snap)
			dest = os.path.join(top, "copy.safetensors")
			preread(blob)
			run(["sync"])
			cps.append(timed(["sh", "-c", f"cp {blob} {dest} && sync {dest}"]))
			os.unlink(dest)
		o, c = median(ours), median(cps)
		b.res.add(sec, label, o, "s", c, "cp of the blob, sync of the copy", c / o,
			  "at least as fast as cp (both durable)", o <= c)
	except (BenchError, OSError, subprocess.SubprocessError) as e:
		b.res.fail(sec, label, e, "at least as fast as cp (both durable)")


def measure(b):
	sec = "rewrite"
	try:
		first_reads(b, sec)
	except BenchError as e:
		b.res.fail(sec, "first reads", e, ">= 0.9x passthrough_hp")
	link_edit(b, sec)
