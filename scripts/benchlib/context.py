"""The bench's state: its arguments, sizes, paths, the results, the build
and passthrough_hp; the shared measurements (measure.py) and inputs
(inputs.py) are its methods, which every section calls on it."""

import os
import shutil

from .common import REPO, MiB, BenchError, log, run
from .inputs import SIZES, Inputs
from .measure import Measures
from .mount import Fuse, stop_all, unmount
from .results import Results


class Bench(Inputs, Measures):
	def __init__(self, args):
		self.args = args
		self.mode = "quick" if args.quick else "full"
		self.s = dict(SIZES[self.mode])
		self.runs = args.runs or self.s["runs"]
		self.work = os.path.realpath(args.work)
		self.inputs = os.path.join(self.work, "in")
		self.mnt = os.path.join(self.work, "mnt")
		self.logs = os.path.join(self.work, "logs")
		self.build = os.path.realpath(args.build)
		self.modelfs = os.path.join(self.build, "fs", "modelfs")
		self.gen = os.path.join(self.build, "scripts", "gen", "modelfs-gen")
		self.baseline = os.path.join(self.build, "scripts", "gen", "baseline")
		self.res = Results()
		self.pthp = None
		self.pthp_error = None

	def setup(self):
		for d in (self.work, self.inputs, self.logs):
			os.makedirs(d, exist_ok=True)
		if not os.path.exists("/dev/fuse"):
			raise BenchError("/dev/fuse is missing")
		if not os.path.exists(os.path.join(self.build, "build.ninja")):
			log(f"configuring a release build in {self.build}")
			# -O3 makes gcc 12 see maybe-uninitialized values that -O2 does
			# not: keep them warnings so a release build goes through.
			run(["meson", "setup", self.build, "-Dbuildtype=release",
			     "-Dc_args=-Wno-error=maybe-uninitialized"], cwd=REPO)
		log("building")
		run(["ninja", "-C", self.build])
		need = 4 * self.s["mib"] * MiB * 2 + 4 * self.s["values_mib"] * MiB
		free = shutil.disk_usage(self.work).free
		if free < need:
			raise BenchError(f"{self.work}: {free >> 20} MiB free, the inputs need about {need >> 20} MiB")
		try:
			self.pthp = self.build_pthp()
		except BenchError as e:
			self.pthp_error = str(e)
			log(f"passthrough_hp unavailable: {e}")

	def build_pthp(self):
		"""libfuse's example/passthrough_hp.cc from Debian's fuse3 source
		package, built against the installed libfuse3; cached."""
		d = os.path.join(self.work, "pthp")
		binary = os.path.join(d, "passthrough_hp")
		if os.access(binary, os.X_OK):
			return binary
		os.makedirs(os.path.join(d, "apt", "lists", "partial"), exist_ok=True)
		with open(os.path.join(d, "apt", "sources.list"), "w") as f:
			f.write("deb-src http://deb.debian.org/debian bookworm main\n")
		apt = ["apt-get", "-q", "-o", f"Dir::Etc::SourceList={d}/apt/sources.list",
		       "-o", "Dir::Etc::SourceParts=/dev/null", "-o", f"Dir::State::Lists={d}/apt/lists"]
		log("fetching Debian's fuse3 source package for passthrough_hp")
		run(apt + ["update"], timeout=600)
		run(apt + ["source", "fuse3"], cwd=d, timeout=600)
		srcs = [e for e in os.listdir(d) if e.startswith("fuse3-") and os.path.isdir(os.path.join(d, e))]
		if not srcs:
			raise BenchError("apt-get source fuse3 left no fuse3-* directory")
		ex = os.path.join(d, sorted(srcs)[-1], "example")
		flags = run(["pkg-config", "--cflags", "--libs", "fuse3"]).split()
		# The defines libfuse's own meson sets on Linux.
		run(["g++", "-O2", "-std=c++17", "-DHAVE_UTIMENSAT", "-DHAVE_POSIX_FALLOCATE",
		     "-DHAVE_SETXATTR", "-I", ex, "-o", binary, os.path.join(ex, "passthrough_hp.cc")]
		    + flags + ["-lpthread"], timeout=900)
		return binary

	def mount(self, src, pin=None, extra=()):
		argv = [self.modelfs, "-f", *extra, src, self.mnt]
		if pin is not None:
			argv = ["taskset", "-c", str(pin)] + argv
		return Fuse(argv, self.mnt, os.path.join(self.logs, "modelfs.log"))

	def errors_file(self):
		p = os.path.join(self.mnt, ".modelfs", "errors")
		try:
			with open(p) as f:
				return f.read()
		except OSError:
			return ""

	def check_errors(self):
		"""BenchError if the mount's .modelfs/errors is not empty."""
		errs = self.errors_file()
		if errs:
			raise BenchError(f".modelfs/errors: {errs.strip()[-200:]}")

	def cleanup(self):
		stop_all()
		unmount(self.mnt)
		if not self.args.keep:
			shutil.rmtree(self.inputs, ignore_errors=True)
			for f in ("value.bin",):
				try:
					os.unlink(os.path.join(self.work, f))
				except OSError:
					pass
