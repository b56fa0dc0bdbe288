"""mounting a directory of many small models and its first ls -l, against an
empty directory and the real directory; FUSE requests per file."""

import os
import signal
import time

from ..common import BenchError, median, run, timed
from ..mount import unmount


def mount_daemon(b, src):
	"""Time `modelfs SRC MNT` (it daemonizes once mounted); returns the
	time and the daemon's pid."""
	os.makedirs(b.mnt, exist_ok=True)
	unmount(b.mnt)
	t = timed([b.modelfs, src, b.mnt], timeout=120)
	want = [b.modelfs, src, b.mnt]
	for pid in os.listdir("/proc"):
		try:
			with open(f"/proc/{pid}/cmdline", "rb") as f:
				if f.read().split(b"\0")[:-1] == [a.encode() for a in want]:
					return t, int(pid)
		except OSError:
			continue
	return t, None


def unmount_daemon(b, pid):
	unmount(b.mnt)
	for _ in range(100):
		if pid is None or not os.path.exists(f"/proc/{pid}"):
			return
		time.sleep(0.05)
	os.kill(pid, signal.SIGTERM)


def measure(b):
	sec = "files"
	n = b.s["files"]
	src = os.path.join(b.inputs, f"files-{n}")
	if not os.path.isdir(src):
		run([b.gen, "copies", src + ".part", str(n)])
		os.rename(src + ".part", src)
	empty = os.path.join(b.inputs, "empty")
	os.makedirs(empty, exist_ok=True)
	mt, et, lt, rt = [], [], [], []
	try:
		for _ in range(b.runs):
			t, pid = mount_daemon(b, empty)
			unmount_daemon(b, pid)
			et.append(t)
			t, pid = mount_daemon(b, src)
			mt.append(t)
			try:
				lt.append(timed(["ls", "-l", b.mnt], timeout=300))
			finally:
				unmount_daemon(b, pid)
			rt.append(timed(["ls", "-l", src]))
	except BenchError as e:
		b.res.fail(sec, f"mount of {n} model files", e, "< 50 ms")
		return
	m, e = median(mt), median(et)
	b.res.add(sec, f"mount of {n} model files (until modelfs returns)", m * 1e3, "ms", e * 1e3,
		     "an empty directory", None, "< 50 ms", m < 0.05)
	l, r = median(lt), median(rt)
	b.res.add(sec, f"first `ls -l` of the {n} files", l * 1e3, "ms", r * 1e3, "the real directory",
		     r / l, "", None)
	try:
		(c,) = b.requests(src, [["ls", "-l", b.mnt]])
		per, parts = b.per(c, n)
		b.res.add(sec, "  FUSE requests of that `ls -l`, per file", per, "", note=parts)
	except BenchError as e:
		b.res.fail(sec, "FUSE requests of `ls -l`", e)
