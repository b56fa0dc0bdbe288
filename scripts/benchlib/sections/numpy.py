"""files written by NumPy: the first read of a .npy's data, values.txt of a
deflated .npz member against the same member stored, a one-value edit of a
stored member."""

import os
import struct
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


def values_pair(b, sec, label, st, cz, nvalues):
	"""`cat values.txt` of member a of the deflated archive cz against
	the same member stored in st, each in a fresh mount."""
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
	# zlib alone, on one core (scripts/gen/baseline inflate, with the
	# CRC-32): the part of the deflated read no core count spreads,
	# one deflate stream being serial
	with open(cz, "rb") as f, zipfile.ZipFile(f) as z:
		info = z.getinfo("a.npy")
		f.seek(info.header_offset + 26)
		n, x = struct.unpack("<HH", f.read(4))
	data = info.header_offset + 30 + n + x
	zt = median([float(fields(run(
		[b.baseline, "inflate", cz, str(data), str(info.compress_size)]))["seconds"])
		for _ in range(min(b.runs, 3))])
	note = (f"stored {times[st]:.2f} s, deflated {times[cz]:.2f} s; zlib alone inflates the "
		f"member in {zt:.2f} s (one stream, one core): at most {times[st] / zt:.2f}x")
	b.res.add(sec, label, nvalues / times[cz] / 1e6, "M values/s", nvalues / times[st] / 1e6,
		     "the member stored", r, ">= 0.8x", r >= 0.8, note=note, inflate_s=zt)
