"""The command line: arguments, the run of the chosen sections, the table."""

import argparse
import json
import os
import resource
import signal
import textwrap
import time
from time import perf_counter

from .common import BenchError, log, loadavg
from .context import Bench
from .results import print_table
from .sections import SECTIONS, load, summary

USAGE = """usage: scripts/bench [--quick] [--runs N] [--json FILE] [--only SECTIONS] [--keep]

Measures modelfs against baselines run beside it (medians of N runs) and
prints a table. Inputs and mounts live under --work (default
/tmp/mfs-bench); generated inputs are removed at the end unless --keep; the
passthrough_hp build (from Debian's fuse3 source package) is kept there for
the next run.

Sections (in order):
"""


def description():
	width = max(map(len, SECTIONS))
	return USAGE + "\n".join(textwrap.fill(summary(s), 78, initial_indent=f"  {s.ljust(width)}  ",
						subsequent_indent=" " * (width + 4), break_on_hyphens=False) for s in SECTIONS)


def run_sections(b, only):
	for s in SECTIONS:
		if only and s not in only:
			continue
		log(f"== {s}")
		t0 = perf_counter()
		try:
			load(s).measure(b)
		except BenchError as e:
			b.res.fail(s, f"section {s}", e)
		log(f"== {s} done in {perf_counter() - t0:.0f} s")


def parse_args():
	ap = argparse.ArgumentParser(usage=argparse.SUPPRESS, description=description(),
				     formatter_class=argparse.RawDescriptionHelpFormatter)
	ap.add_argument("--quick", action="store_true", help="small sizes and 2 runs: a smoke run")
	ap.add_argument("--runs", type=int, help="runs per measurement (default 5; --quick 2)")
	ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
	ap.add_argument("--only", metavar="SECTIONS", help="comma-separated sections to run: " + ",".join(SECTIONS))
	ap.add_argument("--keep", action="store_true", help="keep the generated inputs for the next run")
	ap.add_argument("--work", default="/tmp/mfs-bench", help="work directory (default /tmp/mfs-bench)")
	ap.add_argument("--build", default="/tmp/build-bench", help="release build directory (default /tmp/build-bench)")
	args = ap.parse_args()
	args.only = set(args.only.split(",")) if args.only else None
	if args.only and not args.only <= set(SECTIONS):
		ap.error(f"unknown section in --only: {', '.join(sorted(args.only - set(SECTIONS)))}")
	return args


def main():
	args = parse_args()

	def stop(signum, frame):
		raise KeyboardInterrupt
	signal.signal(signal.SIGTERM, stop)

	# passthrough_hp keeps a descriptor per inode it was told of
	soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
	if soft < hard:
		resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
	b = Bench(args)
	meta = dict(mode=b.mode, runs=b.runs, host=os.uname().nodename, kernel=os.uname().release,
		    cpus=os.cpu_count(), load_start=loadavg(), started=time.strftime("%Y-%m-%dT%H:%M:%S"),
		    sizes=b.s)
	try:
		b.setup()
		run_sections(b, args.only)
	except BenchError as e:
		log(f"stopped: {e}")
		b.res.fail("setup", "bench", e)
	except KeyboardInterrupt:
		log("interrupted")
	finally:
		b.cleanup()
	meta["load_end"] = loadavg()
	print_table(b.res, meta)
	if args.json:
		with open(args.json, "w") as f:
			json.dump(dict(meta=meta, rows=b.res.rows), f, indent=1)
	return 0
