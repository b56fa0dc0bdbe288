"""What every section uses: errors, logging, running and timing commands,
and sampling a daemon's memory and CPU time."""

import os
import statistics
import subprocess
import sys
import threading
from time import perf_counter

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEVNULL = subprocess.DEVNULL
MiB = 1 << 20


class BenchError(Exception):
	pass


def log(msg):
	print(f"bench: {msg}", file=sys.stderr, flush=True)


def median(xs):
	return statistics.median(xs) if xs else None


def run(argv, timeout=1800, **kw):
	"""Run a command that must succeed; its output is returned."""
	try:
		r = subprocess.run(argv, stdin=DEVNULL, capture_output=True, text=True, timeout=timeout, **kw)
	except subprocess.TimeoutExpired:
		raise BenchError(f"{' '.join(map(str, argv))}: no answer after {timeout} s")
	if r.returncode != 0:
		raise BenchError(f"{' '.join(map(str, argv))} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
	return r.stdout


def fields(out):
	"""The key=value words a baseline program prints, as a dict of str."""
	return dict(kv.split("=") for kv in out.split())


def timed(argv, timeout=600, stdin=None):
	"""Wall time of a command (output to /dev/null); BenchError if it fails
	or takes longer than timeout (then it is killed)."""
	src = open(stdin, "rb") if stdin else DEVNULL
	try:
		t0 = perf_counter()
		p = subprocess.run(argv, stdin=src, stdout=DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
		t = perf_counter() - t0
	except subprocess.TimeoutExpired:
		raise BenchError(f"timed out after {timeout} s: {' '.join(map(str, argv))}")
	finally:
		if stdin:
			src.close()
	if p.returncode != 0:
		raise BenchError(f"{' '.join(map(str, argv))} failed ({p.returncode}): "
				 f"{p.stderr.decode(errors='replace').strip()[-300:]}")
	return t


def preread(path):
	"""Bring a file into the page cache."""
	timed(["cat", path])


def proc_status(pid, key):
	"""A kB field of /proc/PID/status, in bytes."""
	with open(f"/proc/{pid}/status") as f:
		for line in f:
			if line.startswith(key + ":"):
				return int(line.split()[1]) * 1024
	return 0


def cpu_seconds(pid):
	with open(f"/proc/{pid}/stat") as f:
		fields_ = f.read().rsplit(")", 1)[1].split()
	return (int(fields_[11]) + int(fields_[12])) / os.sysconf("SC_CLK_TCK")


def loadavg():
	with open("/proc/loadavg") as f:
		return " ".join(f.read().split()[:3])


class Sampler:
	"""Peak RssAnon and CPU time of a process while a with-block runs."""

	def __init__(self, pid):
		self.pid, self.peak, self.stop = pid, 0, threading.Event()

	def _loop(self):
		while not self.stop.is_set():
			try:
				self.peak = max(self.peak, proc_status(self.pid, "RssAnon"))
			except OSError:
				return
			self.stop.wait(0.005)

	def __enter__(self):
		self.cpu0 = cpu_seconds(self.pid)
		self.peak = proc_status(self.pid, "RssAnon")
		self.thread = threading.Thread(target=self._loop, daemon=True)
		self.thread.start()
		return self

	def __exit__(self, *exc):
		self.stop.set()
		self.thread.join()
		self.cpu = cpu_seconds(self.pid) - self.cpu0
