"""The table of results: one row per figure, printed and written as JSON."""

from .common import log


class Results:
	def __init__(self):
		self.rows = []

	def add(self, section, name, value, unit="", baseline=None, baseline_name="", ratio=None,
		target="", met=None, note="", **extra):
		row = dict(section=section, name=name, value=value, unit=unit, baseline=baseline,
			   baseline_name=baseline_name, ratio=ratio, target=target, met=met, note=note)
		row.update(extra)
		self.rows.append(row)
		log(f"{name}: {fmt_value(value, unit)}" + (f" ({note})" if note else ""))

	def fail(self, section, name, err, target=""):
		self.add(section, name, None, target=target, met=False if target else None,
			 note=str(err))


def fmt_value(v, unit):
	if v is None:
		return "-"
	if isinstance(v, str):
		return v
	if abs(v) >= 100:
		s = f"{v:.0f}"
	elif abs(v) >= 10:
		s = f"{v:.1f}"
	else:
		s = f"{v:.3g}"
	return f"{s} {unit}".strip()


def print_table(res, meta):
	cols = ["measurement", "modelfs", "baseline", "ratio", "target", "met"]
	lines = []
	for r in res.rows:
		base = ""
		if r["baseline"] is not None:
			base = f"{fmt_value(r['baseline'], r.get('baseline_unit', r['unit']))} {r['baseline_name']}".strip()
		elif r["baseline_name"]:
			base = r["baseline_name"]
		met = {True: "yes", False: "NO", None: ""}[r["met"]]
		value = fmt_value(r["value"], r["unit"]) if r["value"] is not None else "FAILED"
		ratio = f"{r['ratio']:.2f}x" if r["ratio"] is not None else ""
		lines.append(([r["name"], value, base, ratio, r["target"], met], r["note"]))
	widths = [max(len(c), *(len(l[0][i]) for l in lines)) if lines else len(c) for i, c in enumerate(cols)]
	print()
	print(f"modelfs benchmark ({meta['mode']}, {meta['runs']} runs, medians) on {meta['host']}: "
	      f"{meta['cpus']} cores, load {meta['load_start']} at start, {meta['load_end']} at end")
	print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
	print("  ".join("-" * w for w in widths))
	for l, note in lines:
		print("  ".join(x.ljust(w) for x, w in zip(l, widths)).rstrip())
		if note:
			print(f"    {note}")
	met = [r for r in res.rows if r["met"] is not None]
	print(f"\ntargets met: {sum(r['met'] for r in met)} of {len(met)}")
