"""first cat of values.txt of float32 and float64 tensors, the daemon on one
core and free, against C snprintf and numpy.savetxt."""

import os

from ..common import BenchError, MiB, Sampler, median, preread, proc_status, run, timed
from ..inputs import FMT


def savetxt_rate(b, fmt, dtype):
	sample = b.sample(fmt, b.s["fmt_bytes"])
	n = b.s["savetxt_values"]
	code = ("import numpy as np, sys, time\n"
		f"a = np.fromfile({sample!r}, dtype='<{'f4' if dtype == 'float32' else 'f8'}', count={n})"
		".reshape(-1, 16384)\n"
		"with open('/dev/null', 'w') as f:\n"
		"\tt = time.perf_counter()\n"
		f"\tnp.savetxt(f, a, fmt='{'%.9g' if dtype == 'float32' else '%.17g'}')\n"
		"\tprint(time.perf_counter() - t)\n")
	times = [float(run(["/usr/bin/python3", "-c", code])) for _ in range(min(b.runs, 3))]
	return n / median(times)


def render(b, fmt, pin):
	"""Median values/s, text MB/s, cores busy and RssAnon growth of a
	first `cat values.txt` (fresh mount each run; its size is measured
	first, as cat's fstat asks for it), and values/s of a second `cat`
	(size known: rendering alone)."""
	src = b.model(fmt, b.s["values_mib"])
	tdir = FMT[fmt][3]
	rates, mbs, cores, again, peak = [], [], [], [], 0
	for _ in range(b.runs):
		preread(os.path.join(src, FMT[fmt][2]))
		with b.mount(src, pin=0 if pin else None) as m:
			p = os.path.join(b.mnt, tdir, "values.txt")
			nelem = os.stat(os.path.join(b.mnt, tdir, "data")).st_size // (4 if FMT[fmt][4] == "float32" else 8)
			reader = ["taskset", "-c", "1"] if pin else []
			rss0 = proc_status(m.pid, "RssAnon")
			with Sampler(m.pid) as smp:
				t = timed(reader + ["cat", p], timeout=1800)
			size = os.stat(p).st_size
			if size == 0:
				size = int(run(["wc", "-c", p]).split()[0])
			rates.append(nelem / t)
			mbs.append(size / t / 1e6)
			cores.append(smp.cpu / t)
			peak = max(peak, smp.peak - rss0)
			again.append(nelem / timed(reader + ["cat", p], timeout=1800))
	return median(rates), median(mbs), median(cores), peak, median(again)


def measure(b):
	sec = "values"
	mib = b.s["values_mib"]
	base = {}
	for fmt, dtype in (("primitiv", "float32"), ("pmat", "float64")):
		try:
			base[dtype] = (b.c_format_rate(fmt, dtype), savetxt_rate(b, fmt, dtype))
			b.res.add(sec, f"baseline: C snprintf(\"{'%.9g' if dtype == 'float32' else '%.17g'}\") {dtype}, 1 core",
				     base[dtype][0] / 1e6, "M values/s")
			b.res.add(sec, f"baseline: numpy.savetxt {dtype} (same format)", base[dtype][1] / 1e6, "M values/s")
		except BenchError as e:
			b.res.fail(sec, f"baseline formatting {dtype}", e)
	for fmt, order in (("primitiv", "column-major"), ("daphne", "row-major"), ("pmat", "row-major")):
		dtype = FMT[fmt][4]
		one = None
		for pin in ((True, False) if dtype == "float32" else (False,)):
			label = f"values.txt {dtype} {fmt} ({order}, {mib} MiB), {'1 core' if pin else '2 cores'}"
			try:
				rate, mb, cores, peak, again = render(b, fmt, pin)
			except BenchError as e:
				b.res.fail(sec, label, e, ">= 25 M values/s" if pin else "")
				continue
			note = f"{mb:.0f} MB/s of text, {cores:.2f} cores busy, RssAnon +{peak / MiB:.0f} MiB"
			c, npy = base.get(dtype, (None, None))
			if pin:
				one = rate
				b.res.add(sec, label, rate / 1e6, "M values/s", c and c / 1e6, "C snprintf",
					     c and rate / c, ">= 25 M values/s", rate >= 25e6, note=note, mb_per_s=mb)
				b.res.add(sec, f"  {fmt} 1 core, second `cat` (size known: rendering only)",
					     again / 1e6, "M values/s", c and c / 1e6, "C snprintf", c and again / c,
					     ">= 25 M values/s", again >= 25e6)
			else:
				target = "both cores busy (>= 1.5)" if dtype == "float32" else ""
				b.res.add(sec, label, rate / 1e6, "M values/s", c and c / 1e6, "C snprintf",
					     c and rate / c, target, (cores >= 1.5) if target else None, note=note,
					     mb_per_s=mb, cores=cores)
				if one:
					b.res.add(sec, f"  {fmt}: 2 cores vs 1 core", rate / 1e6, "M values/s", one / 1e6,
						     "on 1 core", rate / one)
			if npy:
				b.res.add(sec, f"  {fmt} {'1 core' if pin else '2 cores'} vs numpy.savetxt", rate / 1e6,
					     "M values/s", npy / 1e6, "numpy.savetxt", rate / npy)
