"""TenniS (.tsm) through a real mount: every view of every corpus file
(tests/data/tennis, also the C++ re-saved copies) checked against the
independent decoder tsm_decode.py, by-name links, malformed files passing
through with a line in .modelfs/errors, and edits with sed -i, echo, Python
open('w') and numpy.save (new shape, new dtype). After each edit the source
is decoded again and must differ from the decoded original by exactly the
intended change; bad input is refused and leaves the source byte-identical."""
import copy
import errno
import os
import re
import subprocess

import numpy as np

from harness import Mount, check, data, eq, run, settle, sha
from formats import (check_all_tensor_dirs, check_tensor_dir, decode_json,
                     error_lines, escape_name, errno_of, expect_refused, expect_unchanged_on_disk,
                     read_every_file, read_text, same_array, same_structure, shape_of,
                     unique_names, write_ok)

TOP = ["convnet_small.tsm", "dtypes_zoo.tsm", "edge_cases.tsm", "packed_params.tsm"]
CORPUS = (["tennis/" + f for f in TOP]
          + [("tennis/cpp_resaved/" + f, "cpp_resaved/" + f) for f in TOP])
MALFORMED = ["bad_dtype_99.tsm", "output_index_out_of_range.tsm", "truncated_at_1000.tsm"]


def decode(m, rel):
    return decode_json("tsm_decode.py", m.s(rel))


def line(nums):
    return " ".join(str(n) for n in nums) + "\n"


def param(dec, node, name):
    """The decoded param of node called name (the first one)."""
    for p in dec["nodes"][node]["params"]:
        if p["name"] == name:
            return p
    raise KeyError(name)


def check_field(d, f):
    """A tensor directory of the mount against one decoded field."""
    a = check_tensor_dir(d)
    eq(read_text(d, "dtype"), f["dtype_name"] + "\n", "dtype of " + d)
    eq(shape_of(d), tuple(f["dims"]), "shape of " + d)
    raw = open(os.path.join(d, "data"), "rb").read()
    vals = f["values"]
    if f["dtype_name"] == "char8":
        eq(read_text(d, "values.txt"), vals + "\n", "string " + d)
    elif isinstance(vals, str):  # no numeric meaning: the bytes only
        check(a is None, "numeric views for a %s tensor %s" % (f["dtype_name"], d))
        eq(sorted(os.listdir(d)), ["data", "dtype", "shape"], "files of " + d)
        eq(raw, bytes.fromhex(vals), "data of " + d)
    elif f["dtype_name"].startswith("complex"):
        want = np.array(vals, dtype=np.float64).reshape(list(f["dims"]) + [2])
        same_array(np.stack([a.real, a.imag], axis=-1).astype(np.float64), want, "values of " + d)
    else:
        same_array(a, np.array(vals, dtype=a.dtype).reshape(f["dims"]), "values of " + d)


def check_against_decoder(m, rel):
    """Every view of the model directory of rel against tsm_decode.py."""
    dec = decode(m, rel)
    root = m.m(rel)
    eq(os.listdir(root), ["header", "inputs", "outputs", "nodes", "by-name"], "entries of " + rel)
    eq(os.listdir(os.path.join(root, "header")), ["fake", "code", "reserved"])
    eq(read_text(root, "header", "fake"), "%d\n" % dec["header"]["fake"], "header/fake")
    eq(read_text(root, "header", "code"), "0x19910929\n", "header/code")
    eq(open(os.path.join(root, "header", "reserved"), "rb").read(),
       bytes.fromhex(dec["header"]["reserved"]), "header/reserved")
    eq(read_text(root, "inputs"), line(dec["inputs"]), "inputs")
    eq(read_text(root, "outputs"), line(dec["outputs"]), "outputs")
    nodes = dec["nodes"]
    eq(os.listdir(os.path.join(root, "nodes")), [str(i) for i in range(len(nodes))], "nodes/")
    for i, node in enumerate(nodes):
        nd = os.path.join(root, "nodes", str(i))
        for key in ("op", "name"):
            if key in node:
                eq(read_text(nd, key), node[key] + "\n", "%s of node %d" % (key, i))
        eq(read_text(nd, "inputs"), line(node["inputs"]), "inputs of node %d" % i)
        names = unique_names([p["name"] for p in node["params"]])
        eq(os.listdir(os.path.join(nd, "params")), names, "params of node %d" % i)
        for p, n in zip(node["params"], names):
            pd = os.path.join(nd, "params", n)
            if len(p["fields"]) == 1:
                check_field(pd, p["fields"][0])
            else:
                eq(os.listdir(pd), [str(k) for k in range(len(p["fields"]))], "fields of " + pd)
                for k, f in enumerate(p["fields"]):
                    check_field(os.path.join(pd, str(k)), f)
    # by-name: one relative link per node name that is unique, in file order
    all_names = [n.get("name") for n in nodes]
    unique = [(i, n) for i, n in enumerate(all_names) if n is not None and all_names.count(n) == 1]
    bn = os.path.join(root, "by-name")
    eq(os.listdir(bn), [escape_name(n) for _, n in unique], "by-name of " + rel)
    for i, n in unique:
        link = os.path.join(bn, escape_name(n))
        check(os.path.islink(link), link + " is not a symbolic link")
        eq(os.readlink(link), "../nodes/%d" % i, "target of " + link)
        check(os.path.samefile(link, os.path.join(root, "nodes", str(i))), link + " does not resolve")
        eq(read_text(link, "name"), n + "\n", "name through " + link)
    return dec


# ---------------------------------------------------------------- reading

def test_read_every_view():
    with Mount(CORPUS) as m:
        nfiles = ntensors = 0
        for rel in [os.path.basename(f) if isinstance(f, str) else f[1] for f in CORPUS]:
            check(os.path.isdir(m.m(rel)), rel + " is not shown as a directory")
            check_against_decoder(m, rel)
            nfiles += read_every_file(m.m(rel))
            ntensors += check_all_tensor_dirs(m.m(rel))
        check(nfiles > 1000, "only %d files" % nfiles)
        check(ntensors > 200, "only %d tensor directories" % ntensors)
        eq(m.errors(), "", ".modelfs/errors of a mount of good files")
        # values the corpus MANIFEST lists
        z = m.m("dtypes_zoo.tsm", "by-name")
        eq(read_text(z, "v_string", "params", "value", "values.txt"), "hello, TenniS\n")
        eq(read_text(z, "v_string_utf8", "params", "value", "values.txt"), "模型-é\n")
        eq(read_text(z, "v_float32", "params", "value", "values.txt"), "1.5 -0.25 3e+38\n1e-45 0 -0\n")
        eq(read_text(z, "v_float64", "params", "value", "values.txt"), "3.141592653589793\n-1e+300\n5e-324\n")
        eq(read_text(z, "v_complex64", "params", "value", "values.txt"), "1+2j\n-3.5-0.5j\n")
        eq(read_text(z, "v_bool", "params", "value", "values.txt"), "1\n0\n1\n")
        eq(read_text(z, "s_int32", "params", "value", "shape"), "\n")
        eq(read_text(z, "s_int32", "params", "value", "values.txt"), "42\n")
        eq(read_text(z, "v_uint64", "params", "value", "values.txt"),
           "0\n18446744073709551615\n1311768467463790320\n")
        b = np.load(m.m("convnet_small.tsm", "nodes", "1", "params", "value", "data.npy"), mmap_mode="r")
        eq(b.tolist(), np.array([0.1, -0.2, 0.3, -0.4], np.float32).tolist())
        del b
        eq(read_text(m.m("convnet_small.tsm", "nodes", "1", "params", "value", "values.txt")),
           "0.1\n-0.2\n0.3\n-0.4\n", "float32 shortest decimals")
        e = m.m("edge_cases.tsm")
        eq(read_text(e, "header", "fake"), "195948557\n")
        check(read_text(e, "header", "reserved").startswith("modelfs reserved header bytes test"))
        eq(os.listdir(os.path.join(e, "nodes", "9", "params", "value")), [], "an empty pack has no fields")
        eq(read_text(e, "nodes", "7", "params", "%", "values.txt"), "empty-name-param\n")
        eq(read_text(e, "nodes", "2", "params", "value", "values.txt"), "\n", "an empty string")
        eq(read_text(e, "nodes", "1", "params", "value", "values.txt"), "", "an empty tensor")
        eq(np.load(os.path.join(e, "nodes", "1", "params", "value", "data.npy")).shape, (3, 0))
        v = m.m("cpp_resaved", "edge_cases.tsm", "by-name", "empty_pack", "params", "value")
        eq(read_text(v, "dtype"), "void\n")
        eq(sorted(os.listdir(v)), ["data", "dtype", "shape"], "a void tensor")
        # reading leaves the sources untouched
        for f in TOP:
            eq(sha(m.s(f)), sha(data("tennis/" + f)), "source of " + f)


def test_by_name_links():
    with Mount(["tennis/convnet_small.tsm", "tennis/edge_cases.tsm"]) as m:
        bn = m.m("convnet_small.tsm", "by-name")
        eq(os.listdir(bn), ["_const_conv1_weights", "_const_conv1_bias_bias", "conv1", "conv1_bias",
                            "input", "relu1"])
        eq(os.readlink(os.path.join(bn, "conv1")), "../nodes/2")
        eq(read_text(bn, "conv1", "op"), "conv2d\n")
        eq(read_text(bn, "conv1", "params", "format", "values.txt"), "NCHW\n")
        eq(read_text(bn, "conv1_bias", "inputs"), "2 1\n")
        r = subprocess.run(["bash", "-c", "cat by-name/relu1/op; ls by-name/input/params/"],
                           cwd=m.m("convnet_small.tsm"), capture_output=True, text=True)
        eq(r.stdout, "relu\n#dtype\n#name\n#op\n#shape\n", "shell through by-name")
        long = "op_" + "x" * 40
        eq(os.readlink(m.m("edge_cases.tsm", "by-name", long)), "../nodes/7")
        eq(read_text(m.m("edge_cases.tsm", "by-name", long, "op")), "custom_op_" + "y" * 30 + "\n")


def test_malformed_pass_through():
    files = ["tennis/convnet_small.tsm"] + [("tennis/malformed/" + f, "malformed/" + f) for f in MALFORMED]
    with Mount(files) as m:
        eq(sorted(os.listdir(m.m("malformed"))), MALFORMED)
        for f in MALFORMED:
            p = m.m("malformed", f)
            settle(p)
            check(os.path.isfile(p) and not os.path.isdir(p), f + " is not a plain file")
            eq(m.read("malformed", f), open(m.s("malformed", f), "rb").read(), "bytes of " + f)
            eq(os.stat(p).st_size, os.stat(m.s("malformed", f)).st_size, "size of " + f)
        errs = error_lines(m)
        for f in MALFORMED:
            mine = [ln for ln in errs if " malformed/%s: " % f in ln]
            eq(len(mine), 1, "error lines for " + f + ": %r" % errs)
            check(re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:?\d\d) malformed/", mine[0]),
                  "error line format: " + mine[0])
        check(any("99" in ln for ln in errs if "bad_dtype_99" in ln), "reason for bad_dtype_99: %r" % errs)
        check(any("77" in ln for ln in errs if "output_index" in ln), "reason for the bad index: %r" % errs)
        # the rest of the mount is undisturbed: read and edit the good file
        check_against_decoder(m, "convnet_small.tsm")
        before = decode(m, "convnet_small.tsm")
        m.sh("echo 7 > convnet_small.tsm/header/fake")
        after = decode(m, "convnet_small.tsm")
        before["header"]["fake"] = 7
        same_structure(after, before, "convnet_small.tsm after an edit beside malformed files")
        # a malformed file stays a writable plain file, and no error is repeated
        with open(m.m("malformed", "truncated_at_1000.tsm"), "ab") as fh:
            fh.write(b"x")
        eq(os.path.getsize(m.s("malformed", "truncated_at_1000.tsm")), 1001)
        eq(len([ln for ln in error_lines(m) if "bad_dtype_99" in ln]), 1, "bad_dtype_99 listed again")


# ---------------------------------------------------------------- edits

def test_sed_float32():
    with Mount(["tennis/dtypes_zoo.tsm", "tennis/convnet_small.tsm"]) as m:
        before = decode(m, "dtypes_zoo.tsm")
        m.sh("sed -i 's/^1.5 /2.75 /' dtypes_zoo.tsm/by-name/v_float32/params/value/values.txt")
        want = copy.deepcopy(before)
        want["nodes"][22]["params"][2]["fields"][0]["values"][0][0] = 2.75
        same_structure(decode(m, "dtypes_zoo.tsm"), want, "dtypes_zoo.tsm after sed on v_float32")
        eq(m.text("dtypes_zoo.tsm", "nodes", "22", "params", "value", "values.txt"),
           "2.75 -0.25 3e+38\n1e-45 0 -0\n")
        eq(os.path.getsize(m.s("dtypes_zoo.tsm")), 3124, "size after an in-place edit")
        # a 4-D tensor: the first value of the first block
        before = decode(m, "convnet_small.tsm")
        m.sh("sed -i '1s/^-0.5 /0.125 /' convnet_small.tsm/nodes/0/params/value/values.txt")
        want = copy.deepcopy(before)
        want["nodes"][0]["params"][2]["fields"][0]["values"][0][0][0][0] = 0.125
        same_structure(decode(m, "convnet_small.tsm"), want, "convnet_small.tsm after sed on a 4-D tensor")
        check_against_decoder(m, "convnet_small.tsm")
        check_against_decoder(m, "dtypes_zoo.tsm")
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_echo_strings():
    with Mount(["tennis/convnet_small.tsm", "tennis/edge_cases.tsm"]) as m:
        src = "convnet_small.tsm"
        before = decode(m, src)
        size0 = os.path.getsize(m.s(src))
        # longer
        m.sh("echo NHWC_longer > convnet_small.tsm/nodes/2/params/format/values.txt")
        want = copy.deepcopy(before)
        f = param(want, 2, "format")["fields"][0]
        f["values"], f["dims"] = "NHWC_longer", [11]
        same_structure(decode(m, src), want, "after echo of a longer string")
        eq(os.path.getsize(m.s(src)), size0 + 7, "source size after a longer string")
        eq(m.text(src, "nodes", "2", "params", "format", "shape"), "11\n")
        # shorter
        m.sh("echo NC > convnet_small.tsm/nodes/3/params/format/values.txt")
        f = param(want, 3, "format")["fields"][0]
        f["values"], f["dims"] = "NC", [2]
        same_structure(decode(m, src), want, "after echo of a shorter string")
        eq(os.path.getsize(m.s(src)), size0 + 5, "source size after a shorter string")
        # a node's name: the #name string, and by-name follows
        m.sh("echo relu_renamed > convnet_small.tsm/nodes/5/name")
        f = param(want, 5, "#name")["fields"][0]
        f["values"], f["dims"] = "relu_renamed", [12]
        want["nodes"][5]["name"] = "relu_renamed"
        same_structure(decode(m, src), want, "after echo into nodes/5/name")
        check("relu1" not in os.listdir(m.m(src, "by-name")), "by-name/relu1 still listed")
        eq(os.readlink(m.m(src, "by-name", "relu_renamed")), "../nodes/5")
        check_against_decoder(m, src)
        # an empty string grows, a 1000-byte one becomes empty
        src = "edge_cases.tsm"
        before = decode(m, src)
        m.sh("echo abc > edge_cases.tsm/nodes/2/params/value/values.txt")
        m.sh("echo > edge_cases.tsm/nodes/7/params/long_string/values.txt")
        want = copy.deepcopy(before)
        f = param(want, 2, "value")["fields"][0]
        f["values"], f["dims"] = "abc", [3]
        f = param(want, 7, "long_string")["fields"][0]
        f["values"], f["dims"] = "", [0]
        same_structure(decode(m, src), want, "edge_cases.tsm after string edits")
        # the param with an empty name is shown as %
        m.sh("echo renamed-param-value > edge_cases.tsm/nodes/7/params/%/values.txt")
        f = param(want, 7, "")["fields"][0]
        f["values"], f["dims"] = "renamed-param-value", [19]
        same_structure(decode(m, src), want, "edge_cases.tsm after echo into params/%")
        eq(m.text(src, "nodes", "7", "params", "long_string", "values.txt"), "\n")
        check_against_decoder(m, src)
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_header_fake():
    with Mount(["tennis/convnet_small.tsm", "tennis/edge_cases.tsm"]) as m:
        for src, value in (("convnet_small.tsm", 12345), ("edge_cases.tsm", 0)):
            before = decode(m, src)
            m.sh("echo %d > %s/header/fake" % (value, src))
            want = copy.deepcopy(before)
            want["header"]["fake"] = value
            same_structure(decode(m, src), want, src + " after echo into header/fake")
            eq(m.text(src, "header", "fake"), "%d\n" % value)
        # without the newline, and the largest u32
        write_ok(m.m("convnet_small.tsm", "header", "fake"), "4294967295")
        eq(decode(m, "convnet_small.tsm")["header"]["fake"], 4294967295)
        expect_refused(m, "convnet_small.tsm/header/fake", "4294967296\n", m.s("convnet_small.tsm"),
                       errno.ERANGE)
        expect_refused(m, "convnet_small.tsm/header/fake", "twelve\n", m.s("convnet_small.tsm"))
        # header/code is read-only
        h = sha(m.s("convnet_small.tsm"))
        r = m.sh("echo 0x1 > convnet_small.tsm/header/code", check=False)
        check(r.returncode != 0, "writing header/code succeeded")
        eq(sha(m.s("convnet_small.tsm")), h, "source after writing header/code")


def test_python_int_tensor():
    with Mount(["tennis/convnet_small.tsm", "tennis/dtypes_zoo.tsm"]) as m:
        src = "convnet_small.tsm"
        before = decode(m, src)
        conv = m.m(src, "nodes", "2", "params")
        write_ok(os.path.join(conv, "padding", "values.txt"), "0 0\n0 0\n2 3\n4 5\n")
        want = copy.deepcopy(before)
        param(want, 2, "padding")["fields"][0]["values"] = [[0, 0], [0, 0], [2, 3], [4, 5]]
        same_structure(decode(m, src), want, "after writing padding with Python")
        eq(read_text(conv, "padding", "values.txt"), "0 0\n0 0\n2 3\n4 5\n")
        # commas, tabs and no final newline are accepted
        write_ok(os.path.join(conv, "dilation", "values.txt"), "2,\t2, 2,2")
        param(want, 2, "dilation")["fields"][0]["values"] = [2, 2, 2, 2]
        same_structure(decode(m, src), want, "after writing dilation with commas")
        # a 0-d int64
        write_ok(os.path.join(conv, "padding_value", "values.txt"), "-9223372036854775808\n")
        param(want, 2, "padding_value")["fields"][0]["values"] = -9223372036854775808
        same_structure(decode(m, src), want, "after writing a 0-d int64")
        # the same values in other words change nothing on disk
        bias = m.m(src, "nodes", "1", "params", "value", "values.txt")
        expect_unchanged_on_disk(m.s(src), lambda: write_ok(bias, "0.10 -2e-1\t0.3,-0.4000"))
        expect_unchanged_on_disk(m.s(src), lambda: write_ok(os.path.join(conv, "padding", "values.txt"),
                                                             "0 0 0 0 2 3 4 5"))
        # the largest and smallest values of every integer type
        z = "dtypes_zoo.tsm"
        before = decode(m, z)
        want = copy.deepcopy(before)
        for node, text, vals in ((13, "127 -128 1 0 -1", [127, -128, 1, 0, -1]),
                                 (8, "255 0 128 1", [255, 0, 128, 1]),
                                 (19, "65535 0 1", [65535, 0, 1]),
                                 (21, "4294967295 0 1", [4294967295, 0, 1]),
                                 (1, "18446744073709551615 0 1", [18446744073709551615, 0, 1]),
                                 (6, "0 1 0", [False, True, False])):
            write_ok(m.m(z, "nodes", str(node), "params", "value", "values.txt"), text + "\n")
            want["nodes"][node]["params"][2]["fields"][0]["values"] = vals
        same_structure(decode(m, z), want, "dtypes_zoo.tsm after integer edits")
        check_against_decoder(m, src)
        check_against_decoder(m, z)
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_numpy_save_new_shape():
    with Mount(["tennis/convnet_small.tsm", "tennis/packed_params.tsm"]) as m:
        src = "convnet_small.tsm"
        before = decode(m, src)
        size0 = os.path.getsize(m.s(src))
        w = (np.arange(54, dtype=np.float32) / 8).reshape(2, 3, 3, 3)
        npy = m.m(src, "nodes", "0", "params", "value", "data.npy")
        np.save(npy, w)
        want = copy.deepcopy(before)
        f = param(want, 0, "value")["fields"][0]
        f["dims"], f["values"] = [2, 3, 3, 3], w.astype(np.float64).tolist()
        same_structure(decode(m, src), want, "after numpy.save with a new shape")
        eq(os.path.getsize(m.s(src)), size0 - 54 * 4, "source size after the reshape")
        eq(m.text(src, "nodes", "0", "params", "value", "shape"), "2 3 3 3\n")
        same_array(np.load(npy, mmap_mode="r"), w, "data.npy read back")
        # a larger 2-D one, through a file numpy.save wrote elsewhere and cp
        w2 = np.linspace(-1, 1, 200, dtype=np.float32).reshape(10, 20)
        tmp = os.path.join(m.tmp, "w2.npy")
        np.save(tmp, w2)
        m.sh("cp %s convnet_small.tsm/nodes/0/params/value/data.npy" % tmp)
        f["dims"], f["values"] = [10, 20], w2.astype(np.float64).tolist()
        same_structure(decode(m, src), want, "after cp of a .npy with a new shape")
        check_against_decoder(m, src)
        # one field of a packed param: the fields after it move, and stay
        src = "packed_params.tsm"
        before = decode(m, src)
        a = np.array([[1.25, 2.5], [3.75, 5.0], [6.25, 7.5]], dtype=np.float32)
        np.save(m.m(src, "nodes", "1", "params", "cell_anchors", "1", "data.npy"), a)
        want = copy.deepcopy(before)
        f = param(want, 1, "cell_anchors")["fields"][1]
        f["dims"], f["values"] = [3, 2], a.astype(np.float64).tolist()
        same_structure(decode(m, src), want, "packed_params.tsm after numpy.save into a packed field")
        check_against_decoder(m, src)
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_numpy_save_new_dtype():
    with Mount(["tennis/convnet_small.tsm"]) as m:
        src = "convnet_small.tsm"
        before = decode(m, src)
        b = np.array([1.5, -2.5, 1e-300, 4.5, 5.5], dtype=np.float64)
        np.save(m.m(src, "nodes", "1", "params", "value", "data.npy"), b)
        want = copy.deepcopy(before)
        f = param(want, 1, "value")["fields"][0]
        f["dtype"], f["dtype_name"], f["dims"], f["values"] = 11, "float64", [5], b.tolist()
        same_structure(decode(m, src), want, "after numpy.save of float64 onto a float32 tensor")
        eq(m.text(src, "nodes", "1", "params", "value", "dtype"), "float64\n")
        eq(m.text(src, "nodes", "1", "params", "value", "values.txt"), "1.5\n-2.5\n1e-300\n4.5\n5.5\n")
        # int32 becomes int16, same shape
        s = np.array([3, -2, 1, 0], dtype=np.int16)
        np.save(m.m(src, "nodes", "2", "params", "stride", "data.npy"), s)
        f = param(want, 2, "stride")["fields"][0]
        f["dtype"], f["dtype_name"], f["values"] = 3, "int16", s.tolist()
        same_structure(decode(m, src), want, "after numpy.save of int16 onto an int32 tensor")
        check_against_decoder(m, src)
        eq(m.errors(), "", ".modelfs/errors after good edits")
        # a string does not become a number
        path = m.m(src, "nodes", "2", "params", "format", "data.npy")

        def save_floats(p):
            try:
                np.save(p, np.zeros(4, np.float32))
            except OSError as e:
                return e.errno
            return 0
        expect_refused(m, "convnet_small.tsm/nodes/2/params/format/data.npy", None, m.s(src),
                       writer=save_floats)
        check(os.path.exists(path))


def test_bad_input_refused():
    with Mount(["tennis/convnet_small.tsm", "tennis/dtypes_zoo.tsm"]) as m:
        src = m.s("convnet_small.tsm")
        before = decode(m, "convnet_small.tsm")
        bias = "convnet_small.tsm/nodes/1/params/value/"
        expect_refused(m, bias + "values.txt", "0.1 0.2 0.3\n", src)               # too few
        expect_refused(m, bias + "values.txt", "0.1 0.2 0.3 0.4 0.5\n", src)       # too many
        expect_refused(m, bias + "values.txt", "0.1 zero 0.3 0.4\n", src)          # unparsable
        expect_refused(m, bias + "values.txt", "0.1 0.2 0.3 0x\n", src)
        expect_refused(m, bias + "values.txt", "1e39 0.2 0.3 0.4\n", src, errno.ERANGE)
        expect_refused(m, bias + "values.txt", "0.1 -1e39 0.3 0.4\n", src, errno.ERANGE)
        expect_refused(m, bias + "data", b"\0\0\0", src)                            # data: same size
        expect_refused(m, "convnet_small.tsm/nodes/2/params/padding/values.txt",
                       "0 0 0 0 1 1 1 1.5\n", src)                                  # not an integer
        expect_refused(m, "convnet_small.tsm/nodes/2/params/padding/values.txt",
                       "0 0 0 0 1 1 1 2147483648\n", src, errno.ERANGE)
        expect_refused(m, "dtypes_zoo.tsm/nodes/8/params/value/values.txt", "0 1 2 256\n",
                       m.s("dtypes_zoo.tsm"), errno.ERANGE)
        expect_refused(m, "dtypes_zoo.tsm/nodes/6/params/value/values.txt", "0 1 2\n",
                       m.s("dtypes_zoo.tsm"), errno.ERANGE)                  # bool is 0 or 1
        expect_refused(m, bias + "data.npy", b"not a npy file", src)

        # cp and dd report the failing close; bash's redirection does not
        def cp(text):
            def writer(path):
                bad = os.path.join(m.tmp, "bad.txt")
                with open(bad, "w") as f:
                    f.write(text)
                r = subprocess.run(["cp", bad, path], capture_output=True, text=True)
                check(r.returncode != 0, "cp of bad input succeeded")
                return errno_of(r.stderr)
            return writer
        expect_refused(m, bias + "values.txt", None, src, writer=cp("1 2 3\n"))
        expect_refused(m, bias + "values.txt", None, src, errno.ERANGE, writer=cp("1 2 3 1e39\n"))

        def dd(path):
            r = subprocess.run(["bash", "-c", "printf 'a b c d\\n' | dd of='%s' status=none" % path],
                               capture_output=True, text=True)
            check(r.returncode != 0, "dd of bad input succeeded")
            return errno_of(r.stderr)
        expect_refused(m, bias + "values.txt", None, src, writer=dd)
        same_structure(decode(m, "convnet_small.tsm"), before, "source after refused writes")
        # a good write still works afterwards
        write_ok(m.m(bias + "values.txt"), "1 2 3 4\n")
        param(before, 1, "value")["fields"][0]["values"] = [1.0, 2.0, 3.0, 4.0]
        same_structure(decode(m, "convnet_small.tsm"), before, "after a good write following bad ones")


if __name__ == "__main__":
    run([test_read_every_view, test_by_name_links, test_malformed_pass_through, test_sed_float32,
         test_echo_strings, test_header_fake, test_python_int_tensor, test_numpy_save_new_shape,
         test_numpy_save_new_dtype, test_bad_input_refused])
