"""Shared helpers of the per-format integration tests (test_tennis.py,
test_daphne.py, test_plearn.py, ...): reading every view of a mount and
checking tensor directories against docs/layout.md, writing through the mount
with a program that reports close() errors, running the independent
decoders, an independent safetensors writer and reader, and .npz archives
as zipfile writes them to a stream (data descriptors), with a check of
those descriptors against the central directory."""
import errno
import io
import json
import os
import stat
import struct
import subprocess
import sys
import zipfile

import numpy as np

from harness import check, eq, sha

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable or "/usr/bin/python3"

INT_DTYPES = {"int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"}
FLOAT_DTYPES = {"float16", "float32", "float64"}
COMPLEX_DTYPES = {"complex64", "complex128"}


# ---------------------------------------------------------------- walking

def walk(root):
    """Every entry below root (not root itself), depth first, in directory
    order; symbolic links are listed but not followed."""
    for name in os.listdir(root):
        p = os.path.join(root, name)
        yield p
        if os.path.isdir(p) and not os.path.islink(p):
            yield from walk(p)


def read_every_file(root):
    """Reads every regular file below root and checks that it gives exactly
    st_size bytes; returns how many files were read."""
    n = 0
    for p in walk(root):
        st = os.lstat(p)
        if not stat.S_ISREG(st.st_mode):
            continue
        with open(p, "rb") as f:
            got = f.read()
        eq(len(got), st.st_size, "bytes read vs st_size of " + p)
        n += 1
    return n


def is_tensor_dir(d):
    return (os.path.isdir(d) and not os.path.islink(d)
            and os.path.isfile(os.path.join(d, "shape"))
            and os.path.isfile(os.path.join(d, "dtype")))


def tensor_dirs(root):
    return [p for p in walk(root) if is_tensor_dir(p)]


def read_text(*p):
    with open(os.path.join(*p), "rb") as f:
        return f.read().decode("utf-8", "surrogateescape")


def shape_of(d):
    t = read_text(d, "shape")
    check(t.endswith("\n"), "shape of %s is not newline-terminated: %r" % (d, t))
    return tuple(int(x) for x in t.split())


def dtype_of(d):
    t = read_text(d, "dtype")
    check(t.endswith("\n") and t.count("\n") == 1, "dtype of %s: %r" % (d, t))
    return t.strip()


# ---------------------------------------------------------------- values.txt

def parse_values(text, dtype):
    """The numbers of a values.txt (or any text written to one) as a flat
    numpy array of dtype."""
    toks = text.replace(",", " ").split()
    if dtype in INT_DTYPES:
        return np.array([int(t) for t in toks], dtype=dtype)
    if dtype == "bool":
        for t in toks:
            check(t in ("0", "1"), "bool value %r" % t)
        return np.array([t == "1" for t in toks], dtype=bool)
    if dtype in FLOAT_DTYPES:
        return np.array([float(t) for t in toks], dtype=np.float64).astype(dtype)
    if dtype in COMPLEX_DTYPES:
        return np.array([complex(t) for t in toks], dtype=dtype)
    raise AssertionError("no numeric values for dtype " + dtype)


def check_values_layout(text, shape, where):
    """values.txt lines as docs/layout.md says: 0-D one value, 1-D one per line,
    2-D one row per line, N-D blocks of shape[-2] lines separated by one
    empty line; an empty tensor is an empty file."""
    size = int(np.prod(shape)) if shape else 1
    if size == 0:
        eq(text, "", "values.txt of an empty tensor " + where)
        return
    check(text.endswith("\n") and not text.endswith("\n\n"),
          "values.txt of %s must end with exactly one newline" % where)
    body = text[:-1]
    if len(shape) <= 1:
        lines = body.split("\n")
        eq(len(lines), size, "lines of values.txt " + where)
        for ln in lines:
            eq(len(ln.split(" ")), 1, "values per line of values.txt " + where)
        return
    blocks = body.split("\n\n")
    eq(len(blocks), int(np.prod(shape[:-2])), "blocks of values.txt " + where)
    for b in blocks:
        lines = b.split("\n")
        eq(len(lines), shape[-2], "lines per block of values.txt " + where)
        for ln in lines:
            eq(len(ln.split(" ")), shape[-1], "values per line of values.txt " + where)


def same_array(a, b, what):
    """Equal shape, dtype and elements (NaN equals NaN, -0 differs from 0)."""
    a, b = np.asarray(a), np.asarray(b)
    eq(a.shape, b.shape, "shape of " + what)
    eq(a.dtype, b.dtype, "dtype of " + what)
    if a.dtype.kind in "fc":
        for pa, pb in ((a.real, b.real), (a.imag, b.imag)) if a.dtype.kind == "c" else ((a, b),):
            if not np.array_equal(pa, pb, equal_nan=True):
                raise AssertionError("%s: %r != %r" % (what, a, b))
            if not np.array_equal(np.signbit(pa), np.signbit(pb)):
                raise AssertionError("signs of %s: %r != %r" % (what, a, b))
    elif not np.array_equal(a, b):
        raise AssertionError("%s: %r != %r" % (what, a, b))


def check_tensor_dir(d, data_view=True):
    """Checks one tensor directory: shape/dtype/values.txt/data/data.npy
    agree with each other (data.npy also with mmap_mode='r').

    data_view: True if `data` must exist, False if it must not, None if either.
    Returns the array (char8: its uint8 array), or None for types without
    numeric views."""
    shape, dtype = shape_of(d), dtype_of(d)
    names = set(os.listdir(d))
    if data_view is True:
        check("data" in names, "no data in " + d)
    elif data_view is False:
        check("data" not in names, "data shown in " + d)
    if "data.npy" not in names:
        # types with no numeric meaning: shape, dtype and data only
        check("values.txt" not in names, "values.txt without data.npy in " + d)
        return None
    a = np.load(os.path.join(d, "data.npy"))
    mm = np.load(os.path.join(d, "data.npy"), mmap_mode="r")
    same_array(np.array(mm), a, "data.npy with mmap_mode='r' in " + d)
    del mm
    eq(a.shape, shape, "data.npy shape vs shape file in " + d)
    text = read_text(d, "values.txt")
    if dtype == "char8":
        eq(a.dtype, np.dtype(np.uint8), "data.npy of a char8 tensor " + d)
        check(text.endswith("\n"), "char8 values.txt without its newline: " + d)
        eq(text[:-1].encode("utf-8", "surrogateescape"), a.tobytes(), "char8 values.txt vs data.npy " + d)
    else:
        eq(a.dtype.name, dtype, "data.npy dtype vs dtype file in " + d)
        check_values_layout(text, shape, d)
        same_array(parse_values(text, dtype).reshape(shape), a, "values.txt vs data.npy in " + d)
    if "data" in names:
        raw = open(os.path.join(d, "data"), "rb").read()
        order = "F" if a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous else "C"
        le = a.astype(a.dtype.newbyteorder("<"), copy=False)
        eq(raw, le.tobytes(order=order), "data vs data.npy in " + d)
    return a


def check_all_tensor_dirs(root, data_view=True):
    """check_tensor_dir on every tensor directory below root; returns how many."""
    n = 0
    for d in tensor_dirs(root):
        check_tensor_dir(d, data_view)
        n += 1
    return n


# ---------------------------------------------------------------- writing

def write_file(path, data):
    """open(path, 'w'/'wb'), write, close, as Python programs do; returns
    None when it worked, else the OSError (from open, write or close)."""
    mode = "wb" if isinstance(data, bytes) else "w"
    f = None
    try:
        f = open(path, mode)
        f.write(data)
        f.close()
        return None
    except OSError as e:
        if f is not None:
            try:
                f.close()
            except OSError:
                pass
        return e


def write_ok(path, data):
    e = write_file(path, data)
    if e is not None:
        raise AssertionError("writing %r to %s failed: %s" % (data[:200], path, e))


def error_lines(m):
    return [ln for ln in m.errors().split("\n") if ln]


def npy_saver(arr):
    """A writer for expect_refused: numpy.save of arr, returning the errno."""
    import numpy as np

    def save(path):
        try:
            np.save(path, arr)
        except OSError as e:
            return e.errno
        return 0
    return save


def expect_refused(m, view, data, source, code=errno.EINVAL, writer=None):
    """Writes data to the view (a path relative to the mount) and checks
    that it is refused with the errno code, that .modelfs/errors gained a
    line naming the view, that the source file is byte-identical and that
    the view shows the source's content again. writer(path) may do the
    writing instead (it must raise OSError or return an errno)."""
    path = m.m(view)
    shown = repr(data[:200]) if data is not None else "(by %s)" % getattr(writer, "__name__", "writer")
    before_src = sha(source)
    before_view = open(path, "rb").read()
    before_errs = error_lines(m)
    if writer is None:
        e = write_file(path, data)
        check(e is not None, "bad input %s to %s was accepted" % (shown, view))
        got = e.errno
    else:
        got = writer(path)
    eq(errno.errorcode.get(got, got), errno.errorcode[code], "errno when writing %s to %s" % (shown, view))
    eq(sha(source), before_src, "source changed after a refused write to " + view)
    errs = error_lines(m)
    check(len(errs) > len(before_errs), "no new line in .modelfs/errors after a refused write to " + view)
    new = errs[len(before_errs):]
    check(any((" %s: " % view) in ln for ln in new), "error lines do not name %s: %r" % (view, new))
    eq(open(path, "rb").read(), before_view, "view after a refused write " + view)
    return new


def errno_of(stderr):
    """The errno a command-line tool reported (by its strerror text), or -1."""
    for code in (errno.EINVAL, errno.ERANGE, errno.EACCES, errno.EPERM, errno.EFBIG, errno.ENOSPC):
        if os.strerror(code).lower() in stderr.lower():
            return code
    return -1


def expect_unchanged_on_disk(source, fn):
    """Runs fn() and checks that the source file was not rewritten (same
    bytes, inode and mtime)."""
    st0, h0 = os.stat(source), sha(source)
    fn()
    st1 = os.stat(source)
    eq(sha(source), h0, "source bytes")
    eq((st1.st_ino, st1.st_mtime_ns), (st0.st_ino, st0.st_mtime_ns), "source inode/mtime")


def still_mounted(path):
    with open("/proc/mounts") as f:
        return any(ln.split()[1] == path for ln in f if len(ln.split()) > 1)


def abort_fuse(path):
    """Aborts the FUSE connection of the mount at path (through fusectl,
    mounted for the moment if it is not): requests stuck on a daemon that
    crashed return ENOTCONN instead of waiting forever."""
    minor = None
    with open("/proc/self/mountinfo") as f:
        for ln in f:
            parts = ln.split()
            if len(parts) > 4 and parts[4] == path:
                minor = parts[2].split(":")[1]
    if minor is None:
        return
    ctl = "/sys/fs/fuse/connections"
    mounted_here = False
    if not os.path.exists(os.path.join(ctl, minor)):
        mounted_here = subprocess.run(["mount", "-t", "fusectl", "none", ctl]).returncode == 0
    try:
        with open(os.path.join(ctl, minor, "abort"), "w") as f:
            f.write("1")
    except OSError:
        pass
    if mounted_here:
        subprocess.run(["umount", ctl], check=False)


def stop_after_crash(m, stuck=False):
    """Stops a Mount whose daemon may have died (stuck: requests to it are
    known to hang): aborts the connection when needed, then unmounts, since
    the harness's stop() skips fusermount3 when a dead mount no longer
    answers. Returns the daemon's exit status (None if it was running)."""
    status = m.proc.poll() if m.proc else None
    if stuck or status is not None:
        abort_fuse(m.mnt)
        if m.proc.poll() is None:
            m.proc.kill()
        try:
            m.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    try:
        m.stop()
    except (AssertionError, RuntimeError):
        pass
    if still_mounted(m.mnt):
        subprocess.run(["fusermount3", "-u", m.mnt], check=False)
    if m.proc is not None and m.proc.poll() is None:
        m.proc.kill()
        m.proc.wait()
    return status


# ---------------------------------------------------------------- decoders

def decoder(name, *args):
    """Runs tests/integration/<name> on args; returns its stdout (text)."""
    r = subprocess.run([PY, os.path.join(HERE, name)] + [str(a) for a in args],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise AssertionError("%s %s failed (%d): %s" % (name, " ".join(map(str, args)),
                                                        r.returncode, r.stderr))
    return r.stdout


def decode_json(name, *args):
    return json.loads(decoder(name, *args))


def canon(obj):
    """A comparable text of a decoded structure (NaN equals NaN)."""
    return json.dumps(obj, sort_keys=True, indent=1)


def same_structure(got, want, what):
    if canon(got) != canon(want):
        import difflib
        diff = "\n".join(difflib.unified_diff(canon(want).split("\n"), canon(got).split("\n"),
                                              "expected", "decoded", lineterm="", n=2))
        raise AssertionError("%s differs from what was expected:\n%s" % (what, diff[:6000]))


# ---------------------------------------------------------------- names

def escape_name(raw):
    """A name as docs/layout.md 'Names' shows it (without the 255-byte cut)."""
    if raw == "":
        return "%"
    if raw == ".":
        return "%2E"
    if raw == "..":
        return "%2E%2E"
    return raw.replace("%", "%25").replace("/", "%2F").replace("\0", "%00")


def unique_names(raws):
    """Escaped names with ~1, ~2, ... for later duplicates, in order."""
    out, seen = [], set()
    for r in raws:
        n = escape_name(r)
        if n in seen:
            k = 1
            while "%s~%d" % (n, k) in seen:
                k += 1
            n = "%s~%d" % (n, k)
        seen.add(n)
        out.append(n)
    return out


# ---------------------------------------------------------------- safetensors

ST_DTYPES = {"F32": "<f4", "F64": "<f8", "F16": "<f2", "I64": "<i8", "I32": "<i4",
             "U8": "|u1", "I8": "|i1", "BOOL": "|b1", "U16": "<u2", "I16": "<i2"}


def st_write(path, tensors, metadata=None, pad=True):
    """tensors: name -> numpy array, or (dtype string, shape, raw bytes)."""
    header, buf = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        v = tensors[name]
        if isinstance(v, tuple):
            dt, shape, raw = v
        else:
            dt = [k for k, d in ST_DTYPES.items() if np.dtype(d) == v.dtype][0]
            shape, raw = v.shape, v.tobytes()
        header[name] = {"dtype": dt, "shape": list(shape),
                        "data_offsets": [len(buf), len(buf) + len(raw)]}
        buf += raw
    text = json.dumps(header, separators=(",", ":"), sort_keys=True).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + buf)


def st_read(path):
    """An independent reader with the reference library's checks: returns
    (metadata, {name: (dtype, shape, raw bytes)}, header bytes)."""
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    check(n <= 100000000 and 8 + n <= len(b), "header length")
    text = b[8:8 + n]
    check(text[:1] == b"{", "header starts with {")
    hdr = json.loads(text.decode("utf-8"))
    meta = hdr.pop("__metadata__", None)
    buf = b[8 + n:]
    at, out = 0, {}
    for name, e in sorted(hdr.items(), key=lambda kv: tuple(kv[1]["data_offsets"])):
        s, t = e["data_offsets"]
        eq(s, at, "offsets of " + name)
        size = int(np.prod(e["shape"], dtype=np.int64)) * {"BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1}.get(
            e["dtype"], np.dtype(ST_DTYPES.get(e["dtype"], "|u1")).itemsize)
        eq(t - s, size, "length of " + name)
        out[name] = (e["dtype"], tuple(e["shape"]), buf[s:t])
        at = t
    eq(at, len(buf), "buffer covered")
    return meta, out, text


class Unseekable(io.RawIOBase):
    """A file zipfile cannot seek back in: it writes each member's CRC-32
    and sizes in a data descriptor after the data (flag bit 3)."""

    def __init__(self, f):
        self.f = f

    def writable(self):
        return True

    def seekable(self):
        return False

    def write(self, b):
        return self.f.write(b)


def savez_streamed(path, arrays, method, zip64=False):
    """An .npz of arrays ((key, array) pairs) as zipfile writes it to a
    stream: each member followed by a data descriptor (8-byte sizes with
    zip64)."""
    with open(path, "wb") as f, zipfile.ZipFile(Unseekable(f), "w", method) as z:
        for key, arr in arrays:
            with z.open(key + ".npy", "w", force_zip64=zip64) as w:
                np.save(w, arr)


def data_end(raw, info):
    """Where member info's data ends in the archive's bytes raw."""
    h = info.header_offset
    n, x = struct.unpack("<HH", raw[h + 26:h + 30])
    return h + 30 + n + x + info.compress_size


def descriptors(path):
    """Each member's data descriptor, checked against the central directory:
    signature, CRC-32 and both sizes (8 bytes each for a zip64 member)."""
    raw = open(path, "rb").read()
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            eq(info.flag_bits & 8, 8, "%s: flag bit 3 of %s" % (path, info.filename))
            h = info.header_offset
            n = struct.unpack("<H", raw[h + 26:h + 28])[0]
            end = data_end(raw, info)
            wide = info.file_size >= 0xFFFFFFFF or b"\x01\x00" == raw[h + 30 + n:h + 32 + n]
            fmt = "<IIQQ" if wide else "<IIII"
            got = struct.unpack(fmt, raw[end:end + struct.calcsize(fmt)])
            eq(got, (0x08074b50, info.CRC, info.compress_size, info.file_size),
               "%s: the data descriptor of %s" % (path, info.filename))
