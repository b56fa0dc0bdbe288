#!/usr/bin/python3
"""An independent reader of PLearn files for the integration tests.

Written from PLearn's own rules (PStream), sharing no code with the
codec, so that a mount's edits can be checked against the source file.

    plearn_decode.py FILE.pmat            header and values as JSON
    plearn_decode.py FILE.amat            header and values as JSON
    plearn_decode.py FILE.psave PATH      exact text of the value at PATH (a binary
                                          number: its value)
    plearn_decode.py --values FILE.psave PATH
                                          the numbers of that value as JSON

PATH names options from the top-level object down, with element indices for
vectors: "weights", "learner/weights", "module/modules/0/weights". Pointers
are followed (a reference "*5" goes to the object "*5 ->" defined). Numbers
that JSON cannot hold are written as the strings "nan", "inf" and "-inf".
"""
import json
import math
import struct
import sys

import numpy as np

BLANKS = b" \t\n\r"
WORD_END = b" \t\n\r()[]{}\",;:|#="
# type code -> (struct format, size); big-endian codes are the odd ones
SCALARS = {
    0x01: ("b", 1), 0x02: ("B", 1),
    0x03: ("<h", 2), 0x04: (">h", 2), 0x05: ("<H", 2), 0x06: (">H", 2),
    0x07: ("<i", 4), 0x08: (">i", 4), 0x0B: ("<I", 4), 0x0C: (">I", 4),
    0x0E: ("<f", 4), 0x0F: (">f", 4), 0x10: ("<d", 8), 0x11: (">d", 8),
    0x16: ("<q", 8), 0x17: (">q", 8), 0x18: ("<Q", 8), 0x19: (">Q", 8),
}


class Node:
    def __init__(self, kind, start, end=None, **kw):
        self.kind, self.start, self.end = kind, start, end
        self.items = []
        self.__dict__.update(kw)


class Reader:
    def __init__(self, data):
        self.b = data
        self.pos = 0
        self.defs = {}      # pointer id -> node it names (the last one seen)
        self.depth = 0

    def fail(self, msg):
        raise ValueError("%s at offset %d" % (msg, self.pos))

    def skip(self, seps=False):
        b = self.b
        while self.pos < len(b):
            c = b[self.pos]
            if c in BLANKS or (seps and c in b";,"):
                self.pos += 1
            elif c == ord("#"):
                nl = b.find(b"\n", self.pos)
                self.pos = len(b) if nl < 0 else nl + 1
            else:
                break

    def peek(self):
        return self.b[self.pos] if self.pos < len(self.b) else None

    def token(self):
        s = self.pos
        while self.pos < len(self.b) and self.b[self.pos] not in WORD_END and self.b[self.pos] >= 0x20:
            self.pos += 1
        return self.b[s:self.pos]

    @staticmethod
    def number(tok):
        t = tok.lstrip(b"+-")
        if t == b"?" or t.lower() == b"nan":
            return math.nan
        if t.lower() == b"inf":
            return -math.inf if tok.startswith(b"-") else math.inf
        if not t or not (t[:1].isdigit() or t[:1] == b"."):
            return None
        try:
            return float(tok)
        except ValueError:
            return None

    def value(self):
        """One item; returns a Node with its span."""
        self.depth += 1
        if self.depth > 256:
            self.fail("nesting too deep")
        try:
            return self._value()
        finally:
            self.depth -= 1

    def _value(self):
        b, s = self.b, self.pos
        c = self.peek()
        if c is None:
            self.fail("value expected")
        if c in SCALARS:
            fmt, size = SCALARS[c]
            v = struct.unpack(fmt, b[s + 1:s + 1 + size])[0]
            self.pos += 1 + size
            return Node("num", s, self.pos, value=v)
        if c in (0x12, 0x13, 0x14, 0x15):
            return self.binary_seq(c)
        if c == ord('"'):
            i = s + 1
            while i < len(b) and b[i] != ord('"'):
                i += 2 if b[i] == ord("\\") else 1
            if i >= len(b):
                self.fail("unterminated string")
            self.pos = i + 1
            return Node("str", s, self.pos)
        if c == ord("*"):
            return self.pointer()
        if c == ord("["):
            return self.seq(s, None, None)
        if c in (ord("{"), ord("(")):
            self.pos += 1
            kind, close = ("map", "}") if c == ord("{") else ("tuple", ")")
            return self.items_until(Node(kind, s), ord(close))
        tok = self.token()
        if not tok:
            self.fail("unexpected byte %r" % bytes([c]))
        if self.number(tok) is not None:
            if tok.isdigit():
                save = self.pos
                self.skip()
                if self.peek() == ord("["):
                    return self.seq(s, int(tok), None)
                t2 = self.token()
                if t2.isdigit():
                    self.skip()
                    if self.peek() == ord("["):
                        return self.seq(s, int(tok), int(t2))
                self.pos = save
            return Node("num", s, self.pos, value=self.number(tok))
        save = self.pos
        self.skip()
        if self.peek() == ord("("):
            return self.obj(s, tok.decode("latin-1"))
        self.pos = save
        return Node("word", s, self.pos)

    def binary_seq(self, c):
        b, s = self.b, self.pos
        order = ">" if c in (0x13, 0x15) else "<"
        et = b[s + 1]
        if c in (0x12, 0x13):
            (n,), shape, hdr = struct.unpack(order + "I", b[s + 2:s + 6]), None, 6
            shape = (n,)
        else:
            L, W = struct.unpack(order + "ii", b[s + 2:s + 10])
            n, shape, hdr = L * W, (L, W), 10
        self.pos = s + hdr
        node = Node("bseq", s, shape=shape)
        if et in SCALARS:
            fmt, size = SCALARS[et]
            arr = np.frombuffer(b, dtype=np.dtype(fmt.replace("b", "i1").replace("B", "u1")),
                                count=n, offset=self.pos)
            node.numbers = arr.astype(float).reshape(shape)
            self.pos += n * size
        elif et == 0x30:
            node.numbers = np.array([b[self.pos + i] - 48 for i in range(n)], float).reshape(shape)
            self.pos += n
        else:
            for _ in range(n):
                self.skip(True)
                node.items.append(self.value())
        node.end = self.pos
        return node

    def pointer(self):
        s = self.pos
        self.pos += 1
        self.skip(True)
        c = self.peek()
        if c in SCALARS:
            pid = self.value().value
        else:
            tok = self.token()
            if not tok.isdigit():
                self.fail("pointer number expected")
            pid = int(tok)
        idend = self.pos
        if pid == 0:
            return Node("null", s, idend)
        self.skip(True)
        if self.b[self.pos:self.pos + 2] == b"->":
            self.pos += 2
            self.skip(True)
            target = self.value()
            self.defs[pid] = target
            return Node("def", s, target.end, target=target)
        self.pos = idend
        return Node("ref", s, idend, pid=pid)

    def seq(self, s, n, w):
        self.pos = self.b.index(b"[", self.pos) + 1
        node = self.items_until(Node("seq", s, dims=(n, w)), ord("]"), seps=True)
        return node

    def items_until(self, node, close, seps=True):
        while True:
            self.skip(seps)
            c = self.peek()
            if c is None:
                self.fail("unclosed %s" % node.kind)
            if c == close:
                self.pos += 1
                break
            if c == ord(":"):     # old pairs "a : b", map entries
                self.pos += 1
                continue
            node.items.append(self.value())
        node.end = self.pos
        return node

    def obj(self, s, cls):
        self.pos += 1
        if cls in ("TVec", "TMat", "Storage"):   # explicit storage: a list of values
            return self.items_until(Node(cls, s), ord(")"))
        node = Node("obj", s, cls=cls, options=[], name_end=s + len(cls))
        while True:
            self.skip(True)
            if self.peek() is None:
                self.fail("unclosed object " + cls)
            if self.peek() == ord(")"):
                self.pos += 1
                break
            eq = self.b.index(b"=", self.pos)
            name = self.b[self.pos:eq].strip().decode("latin-1")
            self.pos = eq + 1
            self.skip()
            items = []
            while True:
                self.skip()
                c = self.peek()
                if c is None or c in b";,)":
                    break
                if c == ord(":"):
                    self.pos += 1
                    continue
                if items:   # "name =" of the next option, no separator before it
                    save = self.pos
                    tok = self.token()
                    self.skip()
                    if tok and self.peek() == ord("="):
                        self.pos = save
                        break
                    self.pos = save
                items.append(self.value())
            if not items:
                val = Node("empty", self.pos, self.pos)
            elif len(items) == 1:
                val = items[0]
            else:
                val = Node("multi", items[0].start, items[-1].end)
                val.items = items
            node.options.append((name, val))
        node.end = self.pos
        return node


def unwrap(r, node):
    seen = 0
    while node.kind in ("def", "ref") and seen < 1000:
        node = node.target if node.kind == "def" else r.defs.get(node.pid, node)
        seen += 1
        if node.kind == "ref" and node.pid not in r.defs:
            break
    return node


def resolve(r, top, path):
    node = top
    for comp in [c for c in path.split("/") if c]:
        cur = unwrap(r, node)
        if cur.kind == "obj":
            found = [v for n, v in cur.options if n == comp]
            if not found and comp == "class":
                found = [Node("word", cur.start, cur.name_end)]
            if not found:
                raise KeyError("no option %r in %s" % (comp, cur.cls))
            node = found[0]
        elif cur.kind in ("seq", "bseq") and comp.isdigit():
            node = cur.items[int(comp)]
        else:
            raise KeyError("cannot go into %r of a %s" % (comp, cur.kind))
    return node


def numbers(r, node):
    node = unwrap(r, node)
    if hasattr(node, "numbers"):
        return node.numbers.tolist()
    if node.kind == "Storage":
        return numbers(r, node.items[0])
    if node.kind in ("TVec", "TMat"):
        sizes = [int(it.value) for it in node.items[:-1]]
        store = unwrap(r, node.items[-1])
        flat = [] if store.kind == "null" else numbers(r, store)
        if node.kind == "TVec":
            n, off = sizes
            return flat[off:off + n]
        L, W, mod, off = sizes
        return [flat[off + i * mod:off + i * mod + W] for i in range(L)]
    if node.kind != "seq":
        raise ValueError("not a sequence of numbers")
    vals = [it.value for it in node.items if it.kind == "num"]
    if len(vals) != len(node.items):
        raise ValueError("not a sequence of numbers")
    n, w = node.dims
    if w is not None:
        return [vals[i * w:(i + 1) * w] for i in range(n)]
    return vals


def jsonable(x):
    if isinstance(x, list):
        return [jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def read_pmat(data):
    head = data[:64]
    if len(head) < 64 or head[63:64] != b"\n":
        raise ValueError("not a .pmat header")
    kind, L, W, typ, order = head.split()[:5]
    L, W = int(L), int(W)
    dt = np.dtype(("<" if order == b"LITTLE_ENDIAN" else ">") + ("f8" if typ == b"DOUBLE" else "f4"))
    vals = np.frombuffer(data, dtype=dt, count=L * W, offset=64).astype(float).reshape(L, W)
    return {"header": head.decode("latin-1"), "length": L, "width": W,
            "type": typ.decode(), "byte_order": order.decode(), "values": jsonable(vals.tolist())}


def read_amat(data):
    lines = data.split(b"\n")
    i = 0
    while i < len(lines) and (not lines[i].strip() or lines[i].lstrip().startswith(b"#")):
        i += 1
    rows = [l.split(b"#")[0].split() for l in lines[i:]]
    rows = [[Reader.number(t) for t in r] for r in rows if r]
    size = [l for l in lines[:i] if l.startswith(b"#size:")]
    if not size and len(rows) > 1 and len(rows[0]) == 2 and len(rows[1]) != 2:
        i += 1  # old style: the first line is "length width"
        rows = rows[1:]
    header = b"\n".join(lines[:i]) + (b"\n" if i else b"")
    flat = [v for r in rows for v in r]
    if size:
        L, W = map(int, size[0].split(b":", 1)[1].split())
        rows = [flat[k * W:(k + 1) * W] for k in range(L)]
    return {"header": header.decode("latin-1"), "values": jsonable(rows)}


def main(argv):
    want_values = "--values" in argv
    args = [a for a in argv if a != "--values"]
    if not args:
        sys.stderr.write(__doc__)
        return 2
    data = open(args[0], "rb").read()
    if data.startswith(b"MATRIX ") or args[0].endswith(".pmat"):
        print(json.dumps(read_pmat(data)))
        return 0
    if args[0].endswith(".amat"):
        print(json.dumps(read_amat(data)))
        return 0
    r = Reader(data)
    r.skip(True)
    top = r.value()
    node = resolve(r, top, args[1] if len(args) > 1 else "")
    if want_values:
        print(json.dumps(jsonable(numbers(r, node))))
    elif node.kind == "num" and data[node.start] in SCALARS:
        v = node.value   # a binary number: its value, as the mount shows it
        print(repr(v) if isinstance(v, float) else v)
    else:
        sys.stdout.buffer.write(data[node.start:node.end] + b"\n")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (ValueError, KeyError, IndexError, OSError, struct.error) as e:
        sys.stderr.write("plearn_decode: %s\n" % e)
        sys.exit(1)
