"""files written by NumPy: the first read of a .npy's data, values.txt of a
deflated .npz member against the same member stored and against ISA-L
alone inflating it, zlib and ISA-L inflating it and deflating its content
again, a one-value edit of a stored member."""

import os
import struct
import tempfile
import zipfile

from ..common import BenchError, MiB, fields, median, preread, run, timed


def measure(b):
	sec = "numpy"
	mib, vmib = b.s["mib"], b.s["values_mib"]
	arr = "np.random.default_rng(1).standard_normal(mib << 18, dtype=np.float32)\n"
	# 1. first read of a .npy's data against passthrough_hp
	try:
		npy = b.py_file(f"numpy-{mib}m/a.npy", f"np.save(open(p, 'wb'), {arr})", mib)
		b.first_read(sec, f"data first read, {mib} MiB .npy", npy, "data")
	except BenchError as e:
		b.res.fail(sec, f"data first read, {mib} MiB .npy", e, ">= 0.9x passthrough_hp")
	# 2. values.txt of a deflated member against the same member stored:
	# a C-order one (read straight through the stream) and a
	# Fortran-order one (bands of rows, each a pass over the stream)
	side = 1 << ((vmib << 18).bit_length() // 2)  # a square of about vmib MiB
	for order, shape, save in (("", "mib << 18", "a"),
				   ("Fortran-order ", f"({side}, {(vmib << 18) // side})",
				    "np.asfortranarray(a)")):
		label = f"values.txt of a {order}deflated .npz member ({vmib} MiB float32) vs stored"
		arr2 = f"np.random.default_rng(1).standard_normal({shape}, dtype=np.float32)"
		tag = "f" if order else ""
		try:
			st = b.py_file(f"numpy-{vmib}m/values-s{tag}.npz",
					  f"a = {arr2}\nnp.savez(open(p, 'wb'), a={save})", vmib)
			cz = b.py_file(f"numpy-{vmib}m/values-c{tag}.npz",
					  f"a = {arr2}\nnp.savez_compressed(open(p, 'wb'), a={save})", vmib)
			values_pair(b, sec, label, st, cz, vmib * MiB / 4)
		except BenchError as e:
			b.res.fail(sec, label, e, ">= 0.8x")
	# 3. one-value edit of a stored member (CRC-32 updated in place)
	label = f"one-value edit of a stored member of a {mib} MiB .npz (dd conv=notrunc into data)"
	try:
		big = b.py_file(f"numpy-{mib}m/big.npz", f"np.savez(open(p, 'wb'), a={arr}, b=np.arange(3))",
				   mib)
		data = os.path.join(b.mnt, "big.npz", "tensors", "a", "data")
		e = b.timed_edit(f"printf '\\{{i}}0\\077' | dd of={data} bs=2 seek={mib << 18} count=1 "
				    "conv=notrunc status=none", big)
		b.res.add(sec, label, e * 1e3, "ms", target="< 50 ms", met=e < 0.05)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 50 ms")


def member_data(cz):
	"""Where member a.npy's compressed bytes are in cz, and how many."""
	with open(cz, "rb") as f, zipfile.ZipFile(f) as z:
		info = z.getinfo("a.npy")
		f.seek(info.header_offset + 26)
		n, x = struct.unpack("<HH", f.read(4))
	return info.header_offset + 30 + n + x, info.compress_size


def inflate_alone(b, cz, lib):
	"""Median wall seconds of one library alone inflating member a.npy of
	cz on one core, with its CRC-32 (scripts/gen/baseline inflate)."""
	data, csize = member_data(cz)
	return median([float(fields(run(
		[b.baseline, "inflate", cz, str(data), str(csize), lib]))["seconds"])
		for _ in range(min(b.runs, 3))])


def values_pair(b, sec, label, st, cz, nvalues):
	"""`cat values.txt` of member a of the deflated archive cz against
	the same member stored in st, each in a fresh mount; and against ISA-L
	alone inflating the member (zlib alone beside it): one deflate stream
	is serial, the part of the deflated read no core count spreads."""
	times = {}
	for path in (st, cz):
		ts = []
		for _ in range(b.runs):
			preread(path)
			with b.mount(os.path.dirname(path)):
				ts.append(timed(["cat", os.path.join(b.mnt, os.path.basename(path),
								    "tensors", "a", "values.txt")]))
		times[path] = median(ts)
	r = times[st] / times[cz]
	zt = inflate_alone(b, cz, "zlib")
	try:
		it = inflate_alone(b, cz, "isal")
	except BenchError:  # a baseline built without ISA-L
		it = None
	alone = f"ISA-L alone {it:.2f} s, " if it else ""
	note = (f"stored {times[st]:.2f} s, deflated {times[cz]:.2f} s; {alone}zlib alone {zt:.2f} s "
		f"inflating the member (one stream, one core)")
	b.res.add(sec, label, nvalues / times[cz] / 1e6, "M values/s", nvalues / times[st] / 1e6,
		  "the member stored", r, ">= 0.8x", r >= 0.8, note=note, inflate_s=zt, isal_s=it)
	name = label.replace(" vs stored", " vs ISA-L alone inflating it")
	if it is None:
		b.res.fail(sec, name, "scripts/gen/baseline was built without ISA-L", ">= 0.9x")
		return
	b.res.add(sec, name, nvalues / times[cz] / 1e6, "M values/s", nvalues / it / 1e6,
		  "ISA-L alone, one core", it / times[cz], ">= 0.9x", it / times[cz] >= 0.9,
		  note=f"the member stored takes {times[st]:.2f} s: at most {it / times[st]:.2f}x")
	if not label.startswith("values.txt of a deflated"):
		return
	b.res.add(sec, "ISA-L inflating that member alone vs zlib (one core, with its CRC-32)",
		  nvalues * 4 / it / 1e6, "MB/s", nvalues * 4 / zt / 1e6, "zlib 1.2.13", zt / it)
	deflate_pair(b, sec, st)


def deflate_pair(b, sec, st):
	"""The member's content deflated again as a rewrite does (256 KiB in,
	64 KiB out): ISA-L's level 2, what modelfs uses for a normal member,
	against zlib's level 6, its default (thread CPU time)."""
	name = "deflating that member again: ISA-L level 2 vs zlib level 6 (one core)"
	with zipfile.ZipFile(st) as z, tempfile.NamedTemporaryFile(dir=os.path.dirname(st)) as tmp:
		tmp.write(z.read("a.npy"))
		tmp.flush()
		got = {}
		try:
			for lib, level in (("zlib", "6"), ("isal", "2")):
				rs = [fields(run([b.baseline, "deflate", tmp.name, lib, level]))
				      for _ in range(min(b.runs, 3))]
				got[lib] = (median([float(x["seconds"]) for x in rs]), float(rs[0]["ratio"]))
		except BenchError as e:
			b.res.fail(sec, name, e)
			return
	size = os.path.getsize(st)
	(zs, zr), (is_, ir) = got["zlib"], got["isal"]
	b.res.add(sec, name, size / is_ / 1e6, "MB/s", size / zs / 1e6, "zlib level 6", zs / is_,
		  note=f"compressed to {ir:.4f} of the member (zlib: {zr:.4f})")
