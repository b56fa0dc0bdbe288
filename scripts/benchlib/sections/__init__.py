"""The benchmark's sections, in the order they run. Each is the module
benchlib.sections.<name>, whose measure(b) measures and adds its rows to
b.res (b: the Bench, benchlib/context.py); its docstring's first line is
its description in --help. Adding a section is its module and its name in
SECTIONS."""

import importlib

SECTIONS = ["raw", "firstls", "commit", "values", "write", "files", "many", "numpy", "shards",
	    "safetensors", "gguf", "pytorch", "rewrite", "stores"]


def load(name):
	return importlib.import_module(f"{__name__}.{name}")


def summary(name):
	"""The first sentence of a section's docstring, on one line."""
	doc = " ".join((load(name).__doc__ or "").split())
	return doc.split(". ")[0].rstrip(".")
