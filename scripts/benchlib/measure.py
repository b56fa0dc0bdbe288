"""Measurements more than one section makes (first reads against
passthrough_hp, header-only listings, one-core values.txt, timed edits, C
formatting rates, FUSE requests counted in a -d log); methods of the
Bench."""

import os
import time

from .common import MiB, BenchError, fields, median, preread, run, timed
from .mount import Fuse


class Measures:
	def folio_kib(self, path):
		"""Mean KiB of the folios caching path, or None (not root)."""
		try:
			return float(run([self.gen, "folios", path])) or None
		except (BenchError, ValueError):
			return None

	def pt_read(self, d, plain, size):
		"""passthrough_hp's first read and re-read of the plain file (its
		source in the page cache), in bytes/s, and the mean KiB of the
		folios caching it then (None if unknown)."""
		preread(plain)
		with Fuse([self.pthp, "--foreground", d, self.mnt], self.mnt,
			  os.path.join(self.logs, "passthrough_hp.log")):
			p = os.path.join(self.mnt, "plain.bin")
			first, again = size / timed(["cat", p]), size / timed(["cat", p])
			return first, again, self.folio_kib(p)

	def first_read(self, sec, label, path, view):
		"""First `cat` of a view of path's model (source in the page cache),
		against passthrough_hp's first read of a plain file of the same size
		right before each: the median ratio of those pairs."""
		d, plain = self.plain()
		ours, ratios = [], []
		try:
			for _ in range(self.runs):
				pf = self.pt_read(d, plain, os.path.getsize(plain))[0] if self.pthp else None
				preread(path)
				with self.mount(os.path.dirname(path)):
					v = os.path.join(self.mnt, os.path.basename(path), view)
					ours.append(os.stat(v).st_size / timed(["cat", v]))
				if pf:
					ratios.append(ours[-1] / pf)
			r = median(ratios) if ratios else None
			self.res.add(sec, label, median(ours) / 1e9, "GB/s", None, "passthrough_hp (paired)", r,
				     ">= 0.9x passthrough_hp", None if r is None else r >= 0.9)
		except BenchError as e:
			self.res.fail(sec, label, e, ">= 0.9x passthrough_hp")

	def header_only_ls(self, sec, label, path):
		"""First `ls` of a model (its source evicted first): how much of the
		source it brought into memory (mincore), against < 1 MiB."""
		try:
			times, read = [], []
			for _ in range(self.runs):
				run([self.gen, "evict", path])
				before = int(run([self.gen, "resident", path]))
				with self.mount(os.path.dirname(path)):
					times.append(timed(["ls", "-R", os.path.join(self.mnt, os.path.basename(path))]))
					read.append(max(0, int(run([self.gen, "resident", path])) - before))
			r = median(read)
			self.res.add(sec, label, median(times) * 1e3, "ms", target="reads only the header (< 1 MiB)",
				     met=r < MiB, note=f"{r / 1024:.0f} KiB of the {os.path.getsize(path) / MiB:.0f} MiB source read",
				     bytes_read=r)
		except BenchError as e:
			self.res.fail(sec, label, e, "reads only the header (< 1 MiB)")

	def one_core_values(self, path, tdir, nvalues):
		"""Median values/s of a first `cat values.txt` (fresh mount each run),
		the daemon on core 0 and cat on core 1."""
		rates = []
		for _ in range(self.runs):
			preread(path)
			with self.mount(os.path.dirname(path), pin=0):
				v = os.path.join(self.mnt, os.path.basename(path), tdir, "values.txt")
				rates.append(nvalues / timed(["taskset", "-c", "1", "cat", v], timeout=1800))
		return median(rates)

	def timed_edit(self, argv, path, stdin=None, extra=()):
		"""Median seconds of an edit through the mount (argv run in it), the
		source in the page cache before each (as for the baselines)."""
		ts = []
		with self.mount(os.path.dirname(path), extra=extra):
			for i in range(self.runs):
				preread(path)
				run(["sync"])  # no writeback of earlier runs meanwhile
				ts.append(timed(["sh", "-c", argv.format(i=i)], stdin=stdin))
			self.check_errors()
		return median(ts)

	def cp_over(self, src, dest):
		"""Median seconds of a script's atomic replace of dest by a copy of
		src (cp to a temporary name beside dest, then mv over dest), src in
		the page cache before each: (without, with) a sync of the copy."""
		tmp = dest + ".copy"
		cps, syncs = [], []
		for _ in range(self.runs):
			for cmd, out in ((f"cp {src} {tmp} && mv {tmp} {dest}", cps),
					 (f"cp {src} {tmp} && sync {tmp} && mv {tmp} {dest}", syncs)):
				preread(src)
				run(["sync"])
				out.append(timed(["sh", "-c", cmd]))
		return median(cps), median(syncs)

	def c_format_rate(self, fmt, dtype):
		sample = self.sample(fmt, self.s["fmt_bytes"])
		rates = []
		for _ in range(self.runs):
			out = run([self.baseline, "fmt32" if dtype == "float32" else "fmt64", sample])
			rates.append(float(fields(out)["values_per_s"]))
		return median(rates)

	def requests(self, src, cmds):
		"""FUSE requests per opcode of each command (argv naming paths in
		the mount) run in turn in one mount of src with -d: counted in its
		log, so independent of the machine's load."""
		log = os.path.join(self.logs, "requests.log")
		open(log, "w").close()
		counts = []
		with Fuse([self.modelfs, "-d", src, self.mnt], self.mnt, log):
			for cmd in cmds:
				start = os.path.getsize(log)
				run(cmd, timeout=1800)
				time.sleep(0.3)  # the last replies' lines
				with open(log, "rb") as f:
					f.seek(start)
					text = f.read().decode(errors="replace")
				c = {}
				for line in text.splitlines():
					k = line.find("opcode: ")
					if k >= 0:
						op = line[k + 8:].split(" ", 1)[0]
						c[op] = c.get(op, 0) + 1
				counts.append(c)
		return counts

	@staticmethod
	def per(counts, n):
		"""Requests per item (all opcodes), and the main opcodes' share."""
		total = sum(counts.values())
		top = sorted(counts.items(), key=lambda kv: -kv[1])[:3]
		return total / n, ", ".join(f"{op} {v / n:.2f}" for op, v in top if v)
