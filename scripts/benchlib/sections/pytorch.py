"""PyTorch checkpoints written by torch.save (Debian's python3-torch): first
read of a large tensor's data, a first ls that reads only the zip directory
and the pickle, the first ls of a Lightning checkpoint of 1,000 tensors, a
one-value edit, a string edit that writes the pickle and the archive again,
against cp."""

import os

from ..common import REPO, BenchError, median, preread, run, timed

# {'epoch', 'pytorch-lightning_version', 'state_dict': {'model.w': float32
# [n, 16384] of mib MiB, 'model.b'}}: a training run's checkpoint
PT_BIG = (
	"import torch\n"
	"n = (mib << 18) // 16384\n"
	"w = torch.from_numpy(np.random.default_rng(1).standard_normal((n, 16384), dtype=np.float32))\n"
	"torch.save({'epoch': 1, 'pytorch-lightning_version': '1.9.0',\n"
	"\t'state_dict': {'model.w': w, 'model.b': torch.zeros(16)}}, p)\n")
# A Lightning checkpoint of 1,000 tensors (16 MiB): 699 weights of 64x64
# float32, Adam's three tensors for 100 of them, a callback's score
PT_LIGHTNING = (
	"import torch, argparse\n"
	"g = torch.Generator().manual_seed(1)\n"
	"sd = {f'model.layers.{i // 10}.block{i % 10}.weight': torch.randn(64, 64, generator=g)\n"
	"\tfor i in range(699)}\n"
	"state = {i: {'step': torch.tensor(10.0), 'exp_avg': torch.zeros(64, 64),\n"
	"\t'exp_avg_sq': torch.zeros(64, 64)} for i in range(100)}\n"
	"torch.save({'epoch': 3, 'global_step': 1000, 'pytorch-lightning_version': '1.9.0',\n"
	"\t'state_dict': sd, 'optimizer_states': [{'state': state, 'param_groups': [{'lr': 0.001,\n"
	"\t'betas': (0.9, 0.999), 'eps': 1e-08, 'params': list(range(699))}]}],\n"
	"\t'lr_schedulers': [{'step_size': 10, 'gamma': 0.1, 'last_epoch': 3}],\n"
	"\t'callbacks': {\"ModelCheckpoint{'monitor': 'val_loss'}\": {'best_model_score': torch.tensor(0.25)}},\n"
	"\t'hyper_parameters': {'hparams': argparse.Namespace(lr=0.001, layers=70)}}, p)\n")
TDIR = "state_dict/model/w"


def measure(b):
	sec = "pytorch"
	mib = b.s["mib"]
	try:
		# torch.save writes the inputs: python3-torch, installed for this
		# section only
		run([os.path.join(REPO, "scripts", "install-deps"), "torch"])
		big = b.py_file(f"pytorch-{mib}m/big.pt", PT_BIG, mib)
	except BenchError as e:
		b.res.fail(sec, "the checkpoint", e)
		return
	b.first_read(sec, f"data first read, {mib} MiB tensor of a .pt", big, TDIR + "/data")
	b.header_only_ls(sec, f"first `ls -R` of the {mib} MiB checkpoint (zip directory and pickle only)", big)
	lightning(b, sec)
	try:
		cp = cp_time(b, big)
	except BenchError as e:
		b.res.fail(sec, "cp of the checkpoint", e)
		return
	label = f"one-value edit of the {mib} MiB checkpoint (dd conv=notrunc into data)"
	try:
		data = os.path.join(b.mnt, "big.pt", TDIR, "data")
		e = b.timed_edit(f"printf '\\{{i}}0\\0\\0\\077' | dd of={data} bs=4 seek={(mib << 18) // 2 + 17} "
				 "count=1 conv=notrunc status=none", big)
		b.res.add(sec, label, e * 1e3, "ms", cp * 1e3, "cp of the file", cp / e, "< 50 ms", e < 0.05)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 50 ms")
	# versions of 1000, 2000, 3000 bytes: each differs in length from the
	# one before it (also from what an earlier bench left) by more than a
	# record's alignment padding (< 64 bytes) takes up, so every later
	# record moves each time
	label = (f"string edit of the {mib} MiB checkpoint (a version of 1000 bytes and more: "
		 "the pickle and the archive written again)")
	try:
		ver = os.path.join(b.mnt, "big.pt", "pytorch-lightning_version")
		ino = os.stat(big).st_ino
		e = b.timed_edit(f"printf '%*s\\n' $((1000 + 1000 * {{i}})) v | tr ' ' x > {ver}", big)
		if os.stat(big).st_ino == ino:
			raise BenchError("the checkpoint was patched in place, not written again")
		b.res.add(sec, label, e * 1e3, "ms", cp * 1e3, "cp of the file", cp / e, "no slower than cp", e <= cp)
	except BenchError as e:
		b.res.fail(sec, label, e, "no slower than cp")


def lightning(b, sec):
	"""First `ls` of the checkpoint's directory in a fresh mount (the source
	in the page cache): opening it, zip directory and pickle parsed."""
	label = "first `ls` of a Lightning checkpoint of 1,000 tensors (fresh mount)"
	try:
		ckpt = b.py_file("pytorch-lightning/last.ckpt", PT_LIGHTNING, 16)
		ts = []
		for _ in range(b.runs):
			preread(ckpt)
			with b.mount(os.path.dirname(ckpt)):
				ts.append(timed(["ls", os.path.join(b.mnt, "last.ckpt")]))
				b.check_errors()
		t = median(ts)
		b.res.add(sec, label, t * 1e3, "ms", target="< 50 ms", met=t < 0.05)
	except BenchError as e:
		b.res.fail(sec, label, e, "< 50 ms")


def cp_time(b, path):
	"""Median seconds of `cp` of path, its source in the page cache."""
	copy = os.path.join(b.inputs, "copy.bin")
	ts = []
	for _ in range(b.runs):
		preread(path)
		ts.append(timed(["cp", path, copy]))
		os.unlink(copy)
	return median(ts)
