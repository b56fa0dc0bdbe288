"""FUSE daemons mounted while a with-block runs: the integration tests'
harness (tests/integration/harness.py) starts, waits for and unmounts them;
here its errors become BenchError and every daemon still running is
stopped on any exit of the bench."""

import os
import sys

from .common import REPO, BenchError

sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
import harness  # noqa: E402

mounted = harness.mounted
unmount = harness.unmount

LIVE = []  # FUSE daemons started here, stopped on any exit


class Fuse:
	"""A FUSE daemon run in the foreground (we know its pid), mounted on mnt
	while the with-block runs; unmounted and waited for afterwards. Its
	output goes to logfile."""

	def __init__(self, argv, mnt, logfile):
		self.argv, self.mnt, self.logfile = argv, os.path.realpath(mnt), logfile

	def __enter__(self):
		os.makedirs(self.mnt, exist_ok=True)
		unmount(self.mnt)
		self.log = open(self.logfile, "ab")
		self.daemon = harness.Daemon(self.argv, self.mnt, self.log, timeout=30)
		try:
			self.daemon.start()
		except RuntimeError as e:
			self.log.close()
			raise BenchError(f"{e}; see {self.logfile}")
		self.pid = self.daemon.pid
		LIVE.append(self)
		return self

	def close(self):
		try:
			self.daemon.stop(timeout=15)
		except RuntimeError:
			pass  # killed: the next mount starts afresh
		finally:
			self.log.close()
			if self in LIVE:
				LIVE.remove(self)

	def __exit__(self, *exc):
		self.close()


def stop_all():
	for f in list(LIVE):
		f.close()
