"""cat of data and data.npy of each format's large tensor: first read (fresh mount,
source in the page cache) against passthrough_hp's read of a plain file right
before it, re-read against cat, and the daemon's RssAnon growth meanwhile."""

import os

from ..common import BenchError, MiB, Sampler, median, preread, proc_status, timed


def measure(b):
	sec = "raw"
	size = b.s["mib"] * MiB
	d, plain = b.plain()
	native = []
	for _ in range(b.runs):
		preread(plain)
		native.append(size / timed(["cat", plain]))
	native = median(native)
	b.res.add(sec, f"baseline: cat of a {b.s['mib']} MiB plain file (page cache)", native / 1e9, "GB/s")
	folio = {"native": b.folio_kib(plain)}
	# passthrough_hp reads the plain file right before each read of ours
	# (paired: the machine's speed drifts between runs); its figures
	# are the medians over all those reads.
	pt = None
	if b.pthp:
		try:
			folio["passthrough_hp"] = b.pt_read(d, plain, size)[2]
			pt = {"first": [], "again": []}
		except BenchError as e:
			b.res.fail(sec, "baseline: passthrough_hp", e)
	else:
		b.res.fail(sec, "baseline: passthrough_hp", b.pthp_error)

	for fmt, src, fname, tdir, dtype in b.models(sec):
		peak_over = 0
		base_rss = 0
		for view in ("data", "data.npy"):
			name = f"{fmt} {view}"
			first, again, ratios = [], [], []
			try:
				for _ in range(b.runs):
					pf = None
					if pt is not None:
						pf, pa, _ = b.pt_read(d, plain, size)
						pt["first"].append(pf)
						pt["again"].append(pa)
					preread(os.path.join(src, fname))
					with b.mount(src) as m:
						p = os.path.join(b.mnt, tdir, view)
						vsize = os.stat(p).st_size   # indexes the model
						rss0 = proc_status(m.pid, "RssAnon")
						with Sampler(m.pid) as smp:
							first.append(vsize / timed(["cat", p]))
						again.append(vsize / timed(["cat", p]))
						if "modelfs" not in folio:
							folio["modelfs"] = b.folio_kib(p)
						base_rss = max(base_rss, rss0)
						peak_over = max(peak_over, smp.peak - rss0)
					if pf:
						ratios.append(first[-1] / pf)
			except BenchError as e:
				b.res.fail(sec, f"{name} first read", e, ">= 1.0x passthrough_hp")
				continue
			f, a, r = median(first), median(again), median(ratios)
			b.res.add(sec, f"{name} first read", f / 1e9, "GB/s", pt and median(pt["first"][-b.runs:]) / 1e9,
				     "passthrough_hp (paired)", r, ">= 1.0x passthrough_hp", None if r is None else r >= 1.0,
				     note="ratio: median of each read over passthrough_hp's just before it")
			b.res.add(sec, f"{name} re-read", a / 1e9, "GB/s", native / 1e9, "native cat",
				     a / native, ">= 0.9x native cat", a / native >= 0.9)
		b.res.add(sec, f"{fmt} RssAnon growth streaming {b.s['mib']} MiB (data, data.npy)",
			     peak_over / MiB, "MiB", base_rss / MiB, "at index (after lookup)", None,
			     "< 64 MiB over the index", peak_over < 64 * MiB)
	if pt and pt["first"]:
		b.res.add(sec, "baseline: passthrough_hp first read (source cached), all paired reads",
			     median(pt["first"]) / 1e9, "GB/s")
		b.res.add(sec, "baseline: passthrough_hp re-read", median(pt["again"]) / 1e9, "GB/s",
			     native / 1e9, "native cat", median(pt["again"]) / native)

	if folio.get("native") and folio.get("modelfs"):
		pthp = folio.get("passthrough_hp")
		b.res.add(sec, "page-cache folios under a re-read (mean, first 256 MiB)", folio["modelfs"], "KiB",
			     folio["native"], "native (ext4)", folio["modelfs"] / folio["native"],
			     note="a re-read's kernel work is per folio"
			     + (f"; passthrough_hp's file: {pthp:.0f} KiB" if pthp else ""))
