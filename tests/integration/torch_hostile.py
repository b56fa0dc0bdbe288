"""Hostile PyTorch files for test_hostile.py: pickles written opcode by
opcode inside a torch.save zip (or the legacy stream) with counts,
lengths, memo indices, stack use, nesting and tensor geometry beyond what
they may be, a list whose repr would be 10^9 values through shared memo
references, and every way a pickle can name a callable (GLOBAL, INST, OBJ,
STACK_GLOBAL, NEWOBJ, EXT) to run a command; and the torch-written samples
(torch_write.py) that the mutations start from."""
import io
import os
import struct
import zipfile

from harness import SLOW

# the wide files' sizes: every entry is walked, and under valgrind each
# path costs ~9 ms
WIDE = 5000 if SLOW else 20000
VIEWS = 500 if SLOW else 2000

PWNED = "/tmp/modelfs-hostile-pwned-%d" % os.getpid()
MAGIC_LEGACY = b"\x80\x02\x8a\x0a" + (0x1950a86a20f9469cfc6c).to_bytes(10, "little") + b"."


def uni(s):
    s = s.encode() if isinstance(s, str) else s
    return b"X" + struct.pack("<I", len(s)) + s


def num(n):
    if 0 <= n < 256:
        return b"K" + bytes([n])
    if -2 ** 31 <= n < 2 ** 31:
        return b"J" + struct.pack("<i", n)
    b = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
    return b"\x8a" + bytes([len(b)]) + b


def tup(items):
    return b"(" + b"".join(items) + b"t"


def tensor(key="0", offset=0, size=(4,), stride=(1,), numel=4, stype=b"FloatStorage", pid=None):
    """The opcodes torch.save writes for one tensor (a _rebuild_tensor_v2
    call on a persistent id)."""
    pid = pid if pid is not None else tup([uni("storage"), b"ctorch\n" + stype + b"\n", uni(key),
                                           uni("cpu"), num(numel)])
    return (b"ctorch._utils\n_rebuild_tensor_v2\n" + b"(" + pid + b"Q" + num(offset)
            + tup(num(n) for n in size) + tup(num(s) for s in stride) + b"\x89"
            + b"ccollections\nOrderedDict\n)R" + b"tR")


def state(*items):
    """A pickled dict of (name, opcodes) pairs, protocol 2."""
    return b"\x80\x02}(" + b"".join(uni(k) + v for k, v in items) + b"u."


def pt_zip(pkl, storages=None, top="archive"):
    storages = {"0": b"\0" * 16} if storages is None else storages
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr(top + "/data.pkl", pkl)
        for k, v in storages.items():
            z.writestr(top + "/data/" + k, v)
        z.writestr(top + "/version", "3\n")
    return buf.getvalue()


def legacy(obj_pkl, keys_pkl, tail):
    sysinfo = b"\x80\x02}q\x00(X\x10\x00\x00\x00protocol_versionM\xe9\x03u."
    return MAGIC_LEGACY + b"\x80\x02M\xe9\x03." + sysinfo + obj_pkl + keys_pkl + tail


def run_command():
    """Every opcode path to a call: each would create PWNED if run."""
    cmd = uni("touch " + PWNED)
    yield "pt_global_reduce.pt", pt_zip(b"\x80\x02cposix\nsystem\n(" + cmd + b"tR.")
    yield "pt_os_system.pt", pt_zip(b"\x80\x02cos\nsystem\n(" + cmd + b"tR.")
    yield "pt_inst.pt", pt_zip(b"(S'touch " + PWNED.encode() + b"'\nios\nsystem\n.")
    yield "pt_obj.pt", pt_zip(b"\x80\x02(cos\nsystem\n" + cmd + b"o.")
    yield "pt_stack_global.pt", pt_zip(b"\x80\x04" + uni("os") + uni("system") + b"\x93" + cmd + b"\x85R.")
    yield "pt_newobj.pt", pt_zip(b"\x80\x02cos\nsystem\n" + tup([cmd]) + b"\x81.")
    # BUILD with a callable's state, a __setstate__ that would run
    yield "pt_build.pt", pt_zip(b"\x80\x02cbuiltins\neval\n)R" + uni("__import__('os').system('touch "
                                                                        + PWNED + "')") + b"b.")
    yield "pt_ext.pt", pt_zip(b"\x80\x02\x82\x01" + tup([cmd]) + b"R.")
    yield "pt_in_tensor.pt", pt_zip(state(("w", tensor(pid=b"cos\nsystem\n(" + cmd + b"tR"))))
    yield "pt_legacy_call.pt", legacy(b"\x80\x02cos\nsystem\n(" + cmd + b"tR.", b"\x80\x02].", b"")


def bad_pickles():
    """Malformed opcodes and resources claimed beyond the file."""
    p2 = b"\x80\x02"
    yield "pk_deep_lists.pt", pt_zip(p2 + b"]" * 5000 + b"a" * 4999 + b".")
    yield "pk_deep_marks.pt", pt_zip(p2 + b"(" * 200000 + b"N" + b"t" * 200000 + b".")
    yield "pk_deep_dicts.pt", pt_zip(p2 + (b"}" + uni("k")) * 3000 + b"N" + b"s" * 3000 + b".")
    yield "pk_memo_put_huge.pt", pt_zip(p2 + b"K\x01r\xff\xff\xff\xff.")
    yield "pk_memo_get_missing.pt", pt_zip(p2 + b"h\x05.")
    yield "pk_memo_long_get.pt", pt_zip(p2 + b"K\x01q\x00j\xff\xff\xff\x7f.")
    yield "pk_unicode_len.pt", pt_zip(p2 + b"X\xff\xff\xff\x7fabc.")
    yield "pk_bytes8_len.pt", pt_zip(b"\x80\x04\x8e" + struct.pack("<Q", 2 ** 62) + b"ab.")
    yield "pk_long4_len.pt", pt_zip(p2 + b"\x8b\xff\xff\xff\x7f" + b"\0" * 8 + b".")
    yield "pk_long4_big.pt", pt_zip(p2 + b"\x8b" + struct.pack("<I", 1 << 20) + b"\x7f" * (1 << 20) + b".")
    yield "pk_frame_len.pt", pt_zip(b"\x80\x04\x95" + struct.pack("<Q", 2 ** 62) + b"N.")
    for name, body in [("tuple", b"t"), ("reduce", b"R"), ("setitem", b"s"), ("append", b"a"),
                       ("build", b"b"), ("pop_mark", b"1"), ("setitems", b"Nu"), ("dup", b"2"),
                       ("pop", b"0"), ("binpersid", b"Q"), ("tuple3", b"N\x87")]:
        yield "pk_underflow_%s.pt" % name, pt_zip(p2 + body + b".")
    yield "pk_unknown_op.pt", pt_zip(p2 + b"\xff.")
    yield "pk_no_stop.pt", pt_zip(p2 + b"]K\x01a")
    yield "pk_empty.pt", pt_zip(b"")
    yield "pk_trailing.pt", pt_zip(p2 + b"N." + b"\xff" * 64)
    yield "pk_next_buffer.pt", pt_zip(b"\x80\x05\x97.")
    yield "pk_bytearray8.pt", pt_zip(b"\x80\x05\x96" + struct.pack("<Q", 2 ** 40) + b".")
    yield "pk_proto9.pt", pt_zip(b"\x80\x09N.")
    yield "pk_float_text.pt", pt_zip(b"F1e99999999\n.")
    yield "pk_int_text.pt", pt_zip(b"I" + b"9" * 100000 + b"\n.")
    yield "pk_persid_int.pt", pt_zip(p2 + b"K\x01Q.")
    yield "pk_persid_short.pt", pt_zip(p2 + tup([uni("storage")]) + b"Q.")
    # 10 references to a list of 10, nested 9 times: a repr of 10^9 values
    laugh = p2 + b"]q\x00(" + b"K\x01" * 10 + b"e"
    for i in range(1, 10):
        laugh += b"](" + (b"h" + bytes([i - 1])) * 10 + b"eq" + bytes([i])
    yield "pk_laughs.pt", pt_zip(laugh + b".")
    wide = b"".join(uni("k%d" % i) + num(i) for i in range(WIDE))
    yield "pk_wide_dict.pt", pt_zip(p2 + b"}(" + wide + b"u.")
    yield "pk_long_list.pt", pt_zip(p2 + b"](" + b"K\x07" * 300000 + b"e.")


def bad_tensors():
    """Geometry beyond the storage, records missing or short, counts huge."""
    yield "pt_size_overflow.pt", pt_zip(state(("w", tensor(size=(2 ** 62, 2 ** 62), stride=(1, 1)))))
    yield "pt_size_negative.pt", pt_zip(state(("w", tensor(size=(-4,)))))
    yield "pt_stride_negative.pt", pt_zip(state(("w", tensor(size=(4,), stride=(-1,)))))
    yield "pt_stride_huge.pt", pt_zip(state(("w", tensor(size=(2,), stride=(2 ** 61,)))))
    yield "pt_offset_huge.pt", pt_zip(state(("w", tensor(offset=2 ** 62))))
    yield "pt_offset_negative.pt", pt_zip(state(("w", tensor(offset=-1))))
    yield "pt_beyond.pt", pt_zip(state(("w", tensor(size=(100,)))))
    yield "pt_numel_huge.pt", pt_zip(state(("w", tensor(numel=2 ** 62))))
    yield "pt_missing_record.pt", pt_zip(state(("w", tensor(key="7"))))
    yield "pt_key_path.pt", pt_zip(state(("w", tensor(key="../../etc/passwd"))))
    yield "pt_dims_many.pt", pt_zip(state(("w", tensor(size=(1,) * 5000, stride=(1,) * 5000))))
    yield "pt_size_mismatch.pt", pt_zip(state(("w", tensor(size=(2, 2), stride=(1,)))))
    yield "pt_unknown_storage.pt", pt_zip(state(("w", tensor(stype=b"QInt8Storage"))))
    yield "pt_size_str.pt", pt_zip(state(("w", tensor(size=(), stride=()).replace(b"(t(t", b"(t" + uni("x")))))
    many = b"".join(uni("t%d" % i) + tensor(key="0", offset=i % 4, size=(1,)) for i in range(VIEWS))
    yield "pt_many_views.pt", pt_zip(b"\x80\x02}(" + many + b"u.")
    names = [b"a/b", b"..", b".", b"", b"nul\0", b"x" * 300, b"%2F", b"shape", b"a", b"a.b", b"\xff\xfe"]
    yield "pt_names.pt", pt_zip(b"\x80\x02}(" + b"".join(uni(n) + tensor() for n in names) + b"u.")
    yield "pt_top_two.pt", pt_zip(state(("w", tensor())), top="a/b")
    # the legacy stream's persistent ids add the view metadata
    good = state(("w", tensor(pid=tup([uni("storage"), b"ctorch\nFloatStorage\n", uni("0"), uni("cpu"),
                                       num(4), b"N"]))))
    yield "pt_legacy_numel.pt", legacy(good, b"\x80\x02]" + uni("0") + b"a.",
                                       struct.pack("<q", 2 ** 62) + b"\0" * 16)
    yield "pt_legacy_short.pt", legacy(good, b"\x80\x02]" + uni("0") + b"a.", struct.pack("<q", 4) + b"\0" * 8)
    yield "pt_legacy_keys.pt", legacy(good, b"\x80\x02](" + uni("0") * 100000 + b"e.", b"")


def crafted():
    yield from run_command()
    yield from bad_pickles()
    yield from bad_tensors()


def surely_bid(data):
    """A torch.save zip whose first record is <top>/data.pkl, or the legacy
    stream's magic: shown, or listed in .modelfs/errors."""
    if data.startswith(MAGIC_LEGACY):
        return True
    if data[:4] != b"PK\x03\x04" or len(data) < 30:
        return False
    n = struct.unpack("<H", data[26:28])[0]
    name = data[30:30 + n]
    return name.endswith(b"/data.pkl") and name.count(b"/") == 1


def samples(d):
    """torch.save files for the mutations: paths."""
    import torch_write as tw
    os.makedirs(d, exist_ok=True)
    objs = {"modules.pt": tw.modules()["linear.pt"], "hf.bin": tw.hf_checkpoint(),
            "views.pt": tw.views(), "plain.pt": tw.plain_values()}
    for n, o in objs.items():
        tw.save(o, os.path.join(d, n))
    tw.save(tw.modules()["conv_bn.pth"], os.path.join(d, "legacy.pt"), legacy=True)
    return sorted(os.path.join(d, n) for n in os.listdir(d))
