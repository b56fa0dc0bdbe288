"""first ls (and once each ls -l and ls -lR) of each large model, its source
evicted first: time, and how much of the source it brought into memory."""

import os

from ..common import BenchError, MiB, median, run, timed


def measure(b):
	sec = "firstls"
	for fmt, src, fname, tdir, _ in b.models(sec):
		path = os.path.join(src, fname)
		size = os.path.getsize(path)
		# `ls` lists names (the target: only the index is read); `ls -l`
		# and `ls -lR` also stat values.txt, whose exact size is its
		# whole text: one run is enough to show what that costs.
		for cmd, runs in ((["ls"], b.runs), (["ls", "-l"], 1), (["ls", "-lR"], 1)):
			label = f"first `{' '.join(cmd)}` of the {b.s['mib']} MiB {fmt} model"
			if runs == 1 and b.runs > 1:
				label += " (1 run)"
			times, read, io = [], [], []
			try:
				for _ in range(runs):
					run([b.gen, "evict", path])
					before = int(run([b.gen, "resident", path]))
					with b.mount(src) as m:
						times.append(timed(cmd + [os.path.join(b.mnt, fname)], timeout=300))
						with open(f"/proc/{m.pid}/io") as f:
							io.append(dict(l.split(": ") for l in f.read().split("\n") if l))
						after = int(run([b.gen, "resident", path]))
						read.append(max(0, after - before))
			except BenchError as e:
				b.res.fail(sec, label, e, "reads only the index" if len(cmd) == 1 else "")
				continue
			t, r = median(times), median(read)
			note = (f"{r / 1024:.0f} KiB of the {size / MiB:.0f} MiB source brought into memory; "
				f"daemon rchar {int(median([int(x['rchar']) for x in io])) / 1024:.0f} KiB")
			if len(cmd) == 1:
				b.res.add(sec, label, t * 1e3, "ms", note=note, target="reads only the index (< 1 MiB)",
					     met=r < MiB, bytes_read=r)
			else:
				b.res.add(sec, label, t * 1e3, "ms", note=note, bytes_read=r)
