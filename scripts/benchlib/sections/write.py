"""cp of a tensor's own values.txt back onto it: MB/s parsed, against C strtof
over the same text."""

import os
import shutil

from ..common import BenchError, fields, median, preread, run, timed
from ..inputs import FMT


def measure(b):
	sec = "write"
	mib = b.s["write_mib"]
	text = os.path.join(b.inputs, f"values-{mib}m.txt")
	label = f"values.txt write-back, float32 ({mib} MiB tensor, unchanged text)"
	try:
		src = b.model("primitiv", mib)
		with b.mount(src):
			view = os.path.join(b.mnt, FMT["primitiv"][3], "values.txt")
			if not os.path.exists(text):
				shutil.copyfile(view, text)
			size = os.path.getsize(text)
			times = []
			for _ in range(b.runs):
				preread(text)
				times.append(timed(["cp", text, view], timeout=1800))
			b.check_errors()
		rates = []
		for _ in range(b.runs):
			out = run([b.baseline, "parse32", text])
			rates.append(float(fields(out)["mb_per_s"]))
	except BenchError as e:
		b.res.fail(sec, label, e, ">= 250 MB/s")
		return
	mb = size / median(times) / 1e6
	c = median(rates)
	b.res.add(sec, label, mb, "MB/s", c, "C strtof", mb / c, ">= 250 MB/s", mb >= 250,
		     note=f"{size / 1e6:.0f} MB of text")
