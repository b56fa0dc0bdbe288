"""PLearn through a real mount: every object file in tests/data/plearn
(.psave, .plearn) walked option by option against the independent reader
plearn_decode.py (classes, option texts, tensors, vectors, pointer references
shown as relative symbolic links to the right object); .pmat and .amat
matrices with their headers; .pmat.metadata/ and the .amat with string cells
passing through untouched. Edits: a number in a .psave matrix with sed (kept
in the file's %.18g style, else the shortest round-trip decimal, every
other byte unchanged), an option
with echo, a .pmat reshaped with numpy.save (its header follows), .amat
values; bad input is refused and the source stays byte-identical."""
import errno
import json
import os

import numpy as np

import plearn_decode as pd
from harness import Mount, check, data, eq, run, sha
from formats import (check_all_tensor_dirs, check_tensor_dir, decode_json, decoder, error_lines,
                     expect_refused, npy_saver, is_tensor_dir, read_every_file, read_text, same_array,
                     shape_of, unique_names, write_file, write_ok)

LR = "LinearRegressor.final_learner.psave"
PARZEN = "ParzenWindow.final_learner.psave"


def objects_in(root):
    out = []
    for dp, dn, fn in os.walk(root):
        dn.sort()
        out += [os.path.relpath(os.path.join(dp, f), root) for f in sorted(fn)
                if f.endswith((".psave", ".plearn"))]
    return out


class Tree:
    """Walks a model directory beside plearn_decode's parse of its source."""

    def __init__(self, m, rel):
        self.m, self.rel = m, rel
        self.root = m.m(rel)
        self.data = open(m.s(rel), "rb").read()
        self.r = pd.Reader(self.data)
        self.r.skip(True)
        self.top = self.r.value()
        self.at = {}        # mount directory -> the decoder node it shows
        self.links = []     # (link path, decoder node)
        self.n = {"objects": 0, "tensors": 0, "vectors": 0, "texts": 0, "links": 0}

    def check(self):
        eq(read_text(self.root, "encoding"), "ascii\n", "encoding of " + self.rel)
        eq(os.listdir(self.root)[-1], "encoding", "encoding listed last in " + self.rel)
        self.entry(self.root, self.top, top=True)
        for link, node in self.links:
            self.check_link(link, node)
        return self.n

    def entry(self, p, node, top=False):
        cur = pd.unwrap(self.r, node)
        if os.path.islink(p):
            self.links.append((p, node))
            return
        if not os.path.isdir(p):
            # a text file: the value's exact text from the file, plus a newline
            want = self.data[node.start:node.end] + b"\n"
            eq(open(p, "rb").read(), want, "text of " + p)
            self.n["texts"] += 1
            return
        self.at[p] = cur
        names = os.listdir(p)
        if top:
            names.remove("encoding")
        if cur.kind == "obj":
            eq(read_text(p, "class"), cur.cls + "\n", "class of " + p)
            opts = unique_names([n for n, _ in cur.options])
            eq(names, ["class"] + opts, "entries of " + p)
            self.n["objects"] += 1
            for name, (_, val) in zip(opts, cur.options):
                self.entry(os.path.join(p, name), val)
        elif is_tensor_dir(p):
            a = check_tensor_dir(p, data_view=None)
            nums = np.array(pd.numbers(self.r, node), dtype=np.float64)
            eq(read_text(p, "dtype"), "float64\n", "dtype of " + p)
            if nums.size == 0:
                eq(a.size, 0, "elements of " + p)
            else:
                same_array(a, nums.reshape(a.shape), "values of " + p)
                eq(a.shape, nums.shape, "shape of " + p)
            self.n["tensors"] += 1
        else:
            check(cur.kind in ("seq", "bseq"), "%s: a directory for a %s" % (p, cur.kind))
            eq(names, [str(k) for k in range(len(cur.items))], "elements of " + p)
            self.n["vectors"] += 1
            for k, item in enumerate(cur.items):
                self.entry(os.path.join(p, str(k)), item)

    def check_link(self, link, node):
        eq(node.kind, "ref", link + " is a link but the file holds no pointer reference there")
        target = os.readlink(link)
        check(not target.startswith("/"), "absolute link " + link)
        t = os.path.normpath(os.path.join(os.path.dirname(link), target))
        check(t in self.at, "%s -> %s: not an object of this model" % (link, target))
        check(self.at[t] is pd.unwrap(self.r, node),
              "%s -> %s: not the object *%d" % (link, target, node.pid))
        check(os.path.samefile(link, t), link + " does not resolve")
        self.n["links"] += 1


def splice(m, rel, path, new):
    """The source of rel as it is now, with the value at path (a
    plearn_decode.py path) replaced by the bytes new."""
    before = open(m.s(rel), "rb").read()
    r = pd.Reader(before)
    r.skip(True)
    node = pd.resolve(r, r.value(), path)
    return before[:node.start] + new + before[node.end:]


def g18(x):
    return ("%.18g" % x).encode()


def psave_text(m, rel, path):
    """The exact text of a value in the source, from plearn_decode.py."""
    return decoder("plearn_decode.py", m.s(rel), path)


# ---------------------------------------------------------------- reading

def test_read_objects():
    with Mount([("plearn/psave", "psave"), ("plearn/plearn", "plearn")]) as m:
        files = objects_in(m.src)
        eq(len(files), 25, "object files")
        total = {}
        for rel in files:
            check(os.path.isdir(m.m(rel)), rel + " is not a directory")
            for k, v in Tree(m, rel).check().items():
                total[k] = total.get(k, 0) + v
        check(total["objects"] > 200 and total["tensors"] > 200 and total["links"] > 50
              and total["texts"] > 2000, "too little seen: %r" % total)
        nfiles = read_every_file(m.mnt)
        check(nfiles > 3000, "only %d files" % nfiles)
        check_all_tensor_dirs(m.mnt, data_view=None)
        eq(m.errors(), "", ".modelfs/errors of PLearn's own files")
        # values the MANIFEST lists
        lr = m.m("psave", "learners", LR)
        eq(read_text(lr, "class"), "LinearRegressor\n")
        eq(read_text(lr, "AIC"), "6.23533365254733773\n")
        eq(read_text(lr, "random_gen"), "*0\n")
        eq(read_text(lr, "save_trainingset_prefix"), '""\n')
        eq(read_text(lr, "weights", "shape"), "3 2\n")
        eq(np.load(os.path.join(lr, "weights", "data.npy"))[2, 1], 47.6879647530819142)
        eq(read_text(lr, "resid_variance", "values.txt"), "22.671118781182813\n458.1697397251787\n")
        nn = m.m("psave", "learners", "NNet.final_learner.psave")
        eq(read_text(nn, "cost_funcs"), '1 [ "NLL" ]\n')
        eq(read_text(nn, "optimizer", "class"), "GradientOptimizer\n")
        eq(read_text(nn, "random_gen", "seed"), "1827\n")
        eq(shape_of(os.path.join(nn, "paramsvalues")), (384,))
        eq(shape_of(os.path.join(nn, "optimizer", "lr_schedule")), (0, 0))
        g = m.m("psave", "learners", "GaussMix_diagonal.final_learner.psave")
        eq(shape_of(os.path.join(g, "sigma")), (0,))
        eq(shape_of(m.m("psave", "learners", "GaussMix_general_missing.final_learner.psave", "sigma")), (0,))
        eq(os.listdir(m.m("psave", "learners", "GaussMix_general.final_learner.psave", "eigenvectors")),
           ["0", "1", "2", "3", "4"])
        eq(read_text(m.m("psave", "learners", PARZEN, "alpha", "values.txt")).split("\n")[0],
           "0.00666666666666667")
        s = m.m("psave", "stats", "poly2.amat.metadata.stats.psave")
        eq(os.listdir(s), ["0", "1", "encoding"], "a top-level vector")
        eq(read_text(s, "0", "class"), "StatsCollector\n")
        eq(read_text(m.m("psave", "tests", "PLStringutilsTest.psave", "save")), "1\n")
        eq(read_text(m.m("plearn", "linreg_minimal.plearn", "weight_decay")), "1e-6\n")


def test_reference_links():
    with Mount(["plearn/psave/learners/" + f for f in
                ("HyperLearner_DBN.final_learner.psave", "BestAveragingPLearner_NNet.final_learner.psave",
                 "ModuleLearner_TwoRBMs.final_learner.psave", "AdaBoost.final_learner.psave")]) as m:
        b = m.m("BestAveragingPLearner_NNet.final_learner.psave", "best_learners")
        eq(os.readlink(os.path.join(b, "0")), "../learner_set/2")
        eq(read_text(b, "0", "class"), "NNet\n")
        check(os.path.samefile(os.path.join(b, "1"), m.m("BestAveragingPLearner_NNet.final_learner.psave",
                                                          "learner_set", "1")))
        # every link of these files: relative, to the object its pointer names
        n = 0
        for rel in os.listdir(m.src):
            n += Tree(m, rel).check()["links"]
        check(n > 30, "only %d links" % n)
        # the same object through a link and through its own path
        h = m.m("HyperLearner_DBN.final_learner.psave")
        links = [os.path.join(dp, x) for dp, dn, fn in os.walk(h) for x in dn + fn
                 if os.path.islink(os.path.join(dp, x))]
        check(links, "no links in HyperLearner_DBN")
        for ln in links:
            real = os.path.realpath(ln)
            check(real.startswith(h + os.sep), ln + " leaves the model")
            if os.path.isfile(os.path.join(real, "class")):
                eq(read_text(ln, "class"), read_text(real, "class"), "class through " + ln)
        # a shell follows them too
        r = m.sh("cat BestAveragingPLearner_NNet.final_learner.psave/best_learners/0/class")
        eq(r.stdout, "NNet\n")
        # an edit through a link changes the object it points to
        b = "BestAveragingPLearner_NNet.final_learner.psave"
        want = splice(m, b, "learner_set/2/nstages", b"77")
        m.sh("echo 77 > %s/best_learners/0/nstages" % b)
        eq(open(m.s(b), "rb").read(), want, "source after an edit through best_learners/0")
        eq(m.text(b, "learner_set", "2", "nstages"), "77\n")
        Tree(m, b).check()


def test_read_matrices():
    with Mount([("plearn/pmat", "pmat"), ("plearn/amat", "amat")]) as m:
        for f in sorted(os.listdir(m.s("pmat"))):
            if not f.endswith(".pmat"):
                continue
            rel = os.path.join("pmat", f)
            dec = decode_json("plearn_decode.py", m.s(rel))
            d = m.m(rel)
            a = check_tensor_dir(d, data_view=True)
            eq(m.read(rel, "header"), open(m.s(rel), "rb").read()[:64], "header of " + rel)
            eq(a.shape, (dec["length"], dec["width"]), "shape of " + rel)
            eq(a.dtype, np.dtype(np.float64))
            same_array(a, np.array([[float(v) for v in row] for row in dec["values"]]).reshape(a.shape),
                       "values of " + rel)
        nan = np.load(m.m("pmat", "FileVMatrix_fvm1_with_nan.pmat", "data.npy"))
        eq(int(np.isnan(nan).sum()), 3)
        eq(m.text("pmat", "FileVMatrix_fvm1_with_nan.pmat", "values.txt").split("\n")[2], "11 nan 13")
        eq(m.text("pmat", "linear_4x_2y.pmat", "values.txt").split("\n")[0],
           "-0.67651 -0.35493 -6.9319 -1.70795 -35.92331 -7.30157")
        # .pmat.metadata/ passes through as an ordinary directory
        md = m.m("pmat", "pyplot_data.pmat.metadata")
        check(os.path.isdir(md) and not os.path.exists(os.path.join(md, "class")))
        eq(sorted(os.listdir(md)), ["fieldnames", "sizes"])
        for f in ("fieldnames", "sizes"):
            eq(m.read("pmat", "pyplot_data.pmat.metadata", f),
               open(m.s("pmat", "pyplot_data.pmat.metadata", f), "rb").read())
        eq(m.text("pmat", "pyplot_data.pmat.metadata", "sizes"), "2 1 0 0 \n")
        write_ok(m.m("pmat", "pyplot_data.pmat.metadata", "sizes"), "4 1 0 0")
        eq(open(m.s("pmat", "pyplot_data.pmat.metadata", "sizes")).read(), "4 1 0 0")
        # .amat matrices; the one with string cells is a plain file
        for f in sorted(os.listdir(m.s("amat"))):
            rel = os.path.join("amat", f)
            if f == "data_with_strings.amat":
                check(os.path.isfile(m.m(rel)), rel + " is not a plain file")
                eq(m.read(rel), open(m.s(rel), "rb").read())
                continue
            dec = decode_json("plearn_decode.py", m.s(rel))
            a = check_tensor_dir(m.m(rel), data_view=None)
            eq(m.text(rel, "header"), dec["header"], "header of " + rel)
            want = np.array([[float(v) for v in row] for row in dec["values"]])
            same_array(a, want, "values of " + rel)
        eq(m.text("amat", "1d_reg.amat", "header"), "#size: 5 2\n#: x y     \n#sizes: 1 1 0\n\n")
        eq(m.text("amat", "1d_reg.amat", "values.txt"), "0 3\n0.5 4\n1 5\n2 6\n3 7.5\n")
        eq(m.text("amat", "data2d_oldstyle_header.amat", "shape"), "36 3\n")
        read_every_file(m.mnt)
        errs = m.errors()
        check("data_with_strings" not in errs, "an error line for the .amat with strings: " + errs)
        eq(errs, "", ".modelfs/errors")


# ---------------------------------------------------------------- edits

def replaced(before, old, new):
    """before with the one occurrence of old replaced by new."""
    eq(before.count(old), 1, "occurrences of %r" % old)
    return before.replace(old, new)


def test_psave_sed_number():
    with Mount(["plearn/psave/learners/" + LR, "plearn/psave/learners/" + PARZEN]) as m:
        # %.18g: 0.3 is written as 0.299999999999999989
        before = open(m.s(LR), "rb").read()
        m.sh("sed -i '1s/^5.673646409480401 /0.3 /' %s/weights/values.txt" % LR)
        eq(open(m.s(LR), "rb").read(), replaced(before, b"5.67364640948040133 \t", g18(0.3) + b" \t"),
           "source after sed on weights")
        eq(json.loads(decoder("plearn_decode.py", "--values", m.s(LR), "weights"))[0], [0.3, 9.88961990926600976])
        eq(m.text(LR, "weights", "values.txt").split("\n")[0], "0.3 9.88961990926601")
        # a vector element, negative and with an exponent
        before = open(m.s(LR), "rb").read()
        m.sh("sed -i '2s/.*/-1.5e-300/' %s/resid_variance/values.txt" % LR)
        eq(open(m.s(LR), "rb").read(), replaced(before, b" 458.169739725178715 ]", b" " + g18(-1.5e-300) + b" ]"),
           "source after sed on resid_variance")
        eq(json.loads(decoder("plearn_decode.py", "--values", m.s(LR), "resid_variance")),
           [22.6711187811828125, -1.5e-300])
        # a file showing 15 digits (%.15g): the shortest round-trip decimal,
        # never fewer digits than the value needs; 0.3 stays 0.3
        before = open(m.s(PARZEN), "rb").read()
        m.sh("sed -i '1s/^0.6628 /0.3 /' %s/center/values.txt" % PARZEN)
        eq(open(m.s(PARZEN), "rb").read(), replaced(before, b"\n0.6628 \t1.0628", b"\n0.3 \t1.0628"),
           "source after sed on ParzenWindow's center")
        before = open(m.s(PARZEN), "rb").read()
        m.sh("sed -i '1s/.*/0.1234567890123456789/' %s/alpha/values.txt" % PARZEN)
        eq(open(m.s(PARZEN), "rb").read(),
           replaced(before, b"[ 0.00666666666666667 ", b"[ " + repr(0.1234567890123456789).encode() + b" "),
           "source after sed on ParzenWindow's alpha")
        eq(json.loads(decoder("plearn_decode.py", "--values", m.s(PARZEN), "alpha"))[0], 0.1234567890123456789)
        Tree(m, LR).check()
        Tree(m, PARZEN).check()
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_psave_echo_option():
    with Mount(["plearn/psave/learners/" + LR, "plearn/psave/learners/NNet.final_learner.psave",
                "plearn/plearn/LinearRegressor_with_comments.plearn"]) as m:
        before = open(m.s(LR), "rb").read()
        m.sh("echo 7 > %s/n_examples" % LR)
        want = replaced(before, b"n_examples = 150 ;", b"n_examples = 7 ;")
        eq(open(m.s(LR), "rb").read(), want, "source after echo 7 > n_examples")
        eq(psave_text(m, LR, "n_examples"), "7\n")
        eq(m.text(LR, "n_examples"), "7\n")
        # without the newline, a string, a negative number
        write_ok(m.m(LR, "save_trainingset_prefix"), '"/tmp/a \\"quoted\\" prefix"')
        want = replaced(want, b'save_trainingset_prefix = "" ;',
                        b'save_trainingset_prefix = "/tmp/a \\"quoted\\" prefix" ;')
        eq(open(m.s(LR), "rb").read(), want, "source after writing a string option")
        m.sh("echo -3 > %s/verbosity" % LR)
        want = replaced(want, b"verbosity = 1 ;", b"verbosity = -3 ;")
        eq(open(m.s(LR), "rb").read(), want, "source after echo -3 > verbosity")
        # the last option (no separator after it)
        m.sh("echo 42 > %s/use_a_separate_random_generator_for_testing" % LR)
        want = replaced(want, b"testing = 1827  )", b"testing = 42  )")
        eq(open(m.s(LR), "rb").read(), want, "source after editing the last option")
        # a nested object's option, a vector option
        nn = "NNet.final_learner.psave"
        want = splice(m, nn, "random_gen/seed", b"99")
        m.sh("echo 99 > %s/random_gen/seed" % nn)
        eq(open(m.s(nn), "rb").read(), want, "source after echo 99 > random_gen/seed")
        eq(psave_text(m, nn, "random_gen/seed"), "99\n")
        want = splice(m, nn, "cost_funcs", b'2 [ "NLL" "class_error" ]')
        m.sh("echo '2 [ \"NLL\" \"class_error\" ]' > %s/cost_funcs" % nn)
        eq(open(m.s(nn), "rb").read(), want, "source after echo into cost_funcs")
        eq(psave_text(m, nn, "cost_funcs"), '2 [ "NLL" "class_error" ]\n')
        # a hand-written .plearn with comments keeps them
        p = "LinearRegressor_with_comments.plearn"
        want = splice(m, p, "include_bias", b"0")
        m.sh("echo 0 > %s/include_bias" % p)
        eq(open(m.s(p), "rb").read(), want, "source after echo 0 > include_bias")
        check(b"#" in want, "the comments of " + p)
        for rel in (LR, nn, p):
            Tree(m, rel).check()
        # class and encoding are read-only
        h = sha(m.s(LR))
        check(write_file(m.m(LR, "class"), "NNet\n") is not None, "writing class succeeded")
        check(write_file(m.m(LR, "encoding"), "binary\n") is not None, "writing encoding succeeded")
        eq(sha(m.s(LR)), h)
        eq(m.errors(), "", ".modelfs/errors after good edits")


def test_pmat_numpy_save_new_shape():
    with Mount(["plearn/pmat/LinearRegressor.test1_outputs.pmat", "plearn/pmat/pyplot_data.pmat",
                ("plearn/pmat/pyplot_data.pmat.metadata", "pyplot_data.pmat.metadata")]) as m:
        rel = "LinearRegressor.test1_outputs.pmat"
        a = np.arange(12, dtype=np.float64).reshape(3, 4) / 4 - 1
        np.save(m.m(rel, "data.npy"), a)
        dec = decode_json("plearn_decode.py", m.s(rel))
        head = "MATRIX 3 4 DOUBLE LITTLE_ENDIAN"
        eq(dec["header"], head + " " * (63 - len(head)) + "\n", "header after the reshape")
        eq(dec["values"], a.tolist())
        eq(os.path.getsize(m.s(rel)), 64 + 12 * 8)
        eq(m.text(rel, "shape"), "3 4\n")
        eq(m.read(rel, "header"), open(m.s(rel), "rb").read()[:64])
        same_array(np.load(m.m(rel, "data.npy"), mmap_mode="r"), a, "data.npy read back")
        check_tensor_dir(m.m(rel), data_view=True)
        # larger, then a single row
        b = np.linspace(0, 1, 300).reshape(100, 3)
        np.save(m.m(rel, "data.npy"), b)
        eq(decode_json("plearn_decode.py", m.s(rel))["values"], b.tolist())
        np.save(m.m(rel, "data.npy"), b[:1])
        eq(decode_json("plearn_decode.py", m.s(rel))["header"].split()[:3], ["MATRIX", "1", "3"])
        # values in place; the .metadata folder is left alone
        md = {f: m.read("pyplot_data.pmat.metadata", f) for f in ("fieldnames", "sizes")}
        m.sh("sed -i '1s/.*/-1 -2 -3/' pyplot_data.pmat/values.txt")
        dec = decode_json("plearn_decode.py", m.s("pyplot_data.pmat"))
        eq(dec["values"][0], [-1.0, -2.0, -3.0])
        eq(dec["length"], 194)
        for f, b in md.items():
            eq(m.read("pyplot_data.pmat.metadata", f), b, "metadata " + f)
        eq(m.errors(), "", ".modelfs/errors after good edits")
        # another dtype or three dimensions: refused

        expect_refused(m, rel + "/data.npy", None, m.s(rel), writer=npy_saver(np.zeros((2, 2), np.float32)))
        expect_refused(m, rel + "/data.npy", None, m.s(rel), writer=npy_saver(np.zeros((2, 2, 2))))


def test_amat_values():
    files = ["plearn/amat/1d_reg.amat", "plearn/amat/linear_4x_2y.written_by_plearn.amat",
             "plearn/amat/linear_4x_2y.amat", "plearn/amat/data2d_oldstyle_header.amat"]
    with Mount(files) as m:
        problems = []
        # (file, row, new row text, new row values)
        for rel, row, new, vals in (("1d_reg.amat", 1, "0.25 -4", [0.25, -4.0]),
                                    ("linear_4x_2y.written_by_plearn.amat", 0, None, None),
                                    ("linear_4x_2y.amat", 199, None, None),
                                    ("data2d_oldstyle_header.amat", 2, "1.5 -2.5 1", [1.5, -2.5, 1.0])):
            before = decode_json("plearn_decode.py", m.s(rel))
            raw0 = open(m.s(rel), "rb").read()
            lines = m.text(rel, "values.txt").split("\n")
            if new is None:     # the first value of the row becomes 0.3
                toks = lines[row].split(" ")
                new = " ".join(["0.3"] + toks[1:])
                vals = [0.3] + [float(t) for t in toks[1:]]
            lines[row] = new
            e = write_file(m.m(rel, "values.txt"), "\n".join(lines))
            if e is not None:
                eq(open(m.s(rel), "rb").read(), raw0, "source after a refused edit of " + rel)
                errs = error_lines(m)
                problems.append("%s: %s (%s)" % (rel, e, errs[-1] if errs else "no error line"))
                continue
            after = decode_json("plearn_decode.py", m.s(rel))
            want = before["values"]
            want[row] = vals
            eq(after, dict(before, values=want), "decoded %s after editing row %d" % (rel, row))
            eq(m.text(rel, "values.txt"), "\n".join(lines), "values.txt of " + rel)
            # only the edited row's bytes change
            old_lines, new_lines = raw0.split(b"\n"), open(m.s(rel), "rb").read().split(b"\n")
            eq(len(new_lines), len(old_lines), "lines of " + rel)
            diff = [k for k, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b]
            eq(len(diff), 1, "changed lines of " + rel)
        check(not problems, "BUG: .amat values cannot be edited: " + "; ".join(problems))


def test_bad_input_refused():
    with Mount(["plearn/psave/learners/" + LR, "plearn/pmat/FileVMatrix_fvm1_with_nan.pmat",
                "plearn/amat/1d_reg.amat"]) as m:
        src = m.s(LR)
        expect_refused(m, LR + "/save_trainingset_prefix", '"never closed\n', src)
        expect_refused(m, LR + "/n_examples", "12 ; x = 3\n", src)
        expect_refused(m, LR + "/n_examples", "(\n", src)
        expect_refused(m, LR + "/weights/values.txt", "1 2\n3 four\n5 6\n", src)
        expect_refused(m, LR + "/weights/values.txt", "1 2\n3 4\n5\n", src)
        expect_refused(m, LR + "/weights/values.txt", "1 2\n3 4\n5 6\n7 8\n", src)
        expect_refused(m, LR + "/weights/values.txt", "1 2\n3 4\n5 1e400\n", src, errno.ERANGE)
        expect_refused(m, LR + "/resid_variance/values.txt", "1 x\n", src)
        expect_refused(m, LR + "/weights/data", b"\0" * 47, src)
        pm = "FileVMatrix_fvm1_with_nan.pmat"
        expect_refused(m, pm + "/values.txt", m.text(pm, "values.txt").replace("11 nan 13", "11 nan thirteen"),
                       m.s(pm))
        expect_refused(m, pm + "/values.txt", "1 2 3\n", m.s(pm))
        expect_refused(m, "1d_reg.amat/values.txt", "0 3\n0.5 4\n1 5\n2 6\n3\n", m.s("1d_reg.amat"))
        expect_refused(m, "1d_reg.amat/values.txt", "0 3\n0.5 4\n1 5\n2 6\n3 x\n", m.s("1d_reg.amat"))
        eq(open(src, "rb").read(), open(data("plearn/psave/learners/" + LR), "rb").read(), "source after it all")
        Tree(m, LR).check()


if __name__ == "__main__":
    run([test_read_objects, test_reference_links, test_read_matrices, test_psave_sed_number,
         test_psave_echo_option, test_pmat_numpy_save_new_shape, test_amat_values, test_bad_input_refused])
