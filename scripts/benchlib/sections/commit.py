"""a one-value dd conv=notrunc into data of each large model, against cp of
the model file."""

import os
import struct

from ..common import BenchError, median, preread, timed


def measure(b):
	sec = "commit"
	for fmt, src, fname, tdir, dtype in b.models(sec):
		path = os.path.join(src, fname)
		label = f"one-value edit of the {b.s['mib']} MiB {fmt} model (dd conv=notrunc into data)"
		es = 4 if dtype == "float32" else 8
		cps, edits = [], []
		try:
			copy = os.path.join(b.inputs, "copy.bin")
			for _ in range(b.runs):
				preread(path)
				cps.append(timed(["cp", path, copy]))
				os.unlink(copy)
			preread(path)
			with b.mount(src):
				data = os.path.join(b.mnt, tdir, "data")
				nelem = os.stat(data).st_size // es
				k = nelem // 2 + 12345
				for i in range(b.runs):
					vb = os.path.join(b.work, "value.bin")
					with open(vb, "wb") as f:
						f.write(struct.pack("<f" if es == 4 else "<d", 1.5 + i))
					edits.append(timed(["dd", f"of={data}", f"bs={es}", f"seek={k}", "count=1",
							    "conv=notrunc", "status=none"], stdin=vb))
					with open(data, "rb") as f:
						f.seek(k * es)
						got = struct.unpack("<f" if es == 4 else "<d", f.read(es))[0]
					if got != 1.5 + i:
						raise BenchError(f"the edit did not show: read {got}, wrote {1.5 + i}")
				b.check_errors()
		except BenchError as e:
			b.res.fail(sec, label, e, "< 50 ms")
			continue
		e, c = median(edits), median(cps)
		b.res.add(sec, label, e * 1e3, "ms", c * 1e3, "cp of the file", c / e, "< 50 ms", e < 0.05)
