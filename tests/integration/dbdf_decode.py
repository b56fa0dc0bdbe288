#!/usr/bin/python3
"""Independent reader of DAPHNE .dbdf files for the integration tests.

Prints one JSON object: the dialect ("daphne", "daphne-0.1", "spec"), the
header, and the matrix densely (row-major lists) with its blocks, or a
frame's labels and columns. Layouts as DAPHNE and its specification write them:
the dialect is the one whose layout accounts for the file's exact size.
Non-finite floats are printed as the strings "nan", "inf", "-inf", float32
values as their shortest decimal (as values.txt shows them); opaque values
(str, fixedstr16) as hex strings. Frame labels: the .meta schema's, else
the spec's own labels, else col_<i> (never DAPHNE's garbage label bytes).

usage: dbdf_decode.py FILE [--meta META]   (META defaults to FILE.meta)
exit status 1 (message on stderr) when the file fits no dialect.
"""
import json
import math
import os
import struct
import sys

import numpy as np

# value type code -> (numpy dtype, name shown as dtype)
DAPHNE_VT = {0: ('<i1', 'int8'), 1: ('<i4', 'int32'), 2: ('<i8', 'int64'),
             3: ('<u1', 'uint8'), 4: ('<u4', 'uint32'), 5: ('<u8', 'uint64'),
             6: ('<f4', 'float32'), 7: ('<f8', 'float64'),
             8: ('V32', 'str'), 9: ('V16', 'fixedstr16')}
SPEC_VT = {1: ('<u1', 'uint8'), 2: ('<u2', 'uint16'), 3: ('<u4', 'uint32'),
           4: ('<u8', 'uint64'), 5: ('<i1', 'int8'), 6: ('<i2', 'int16'),
           7: ('<i4', 'int32'), 8: ('<i8', 'int64'), 9: ('<f4', 'float32'),
           10: ('<f8', 'float64')}
DT_NAMES = {1: 'dense', 2: 'csr', 3: 'frame'}
BT_NAMES = {0: 'empty', 1: 'dense', 2: 'csr', 3: 'coo'}


class NoFit(Exception):
    pass


class Reader:
    def __init__(self, data, pos=0):
        self.b = data
        self.pos = pos

    def take(self, n, what):
        if n < 0 or self.pos + n > len(self.b):
            raise NoFit('%s: needs %d bytes at %d, %d left'
                        % (what, n, self.pos, len(self.b) - self.pos))
        s = self.b[self.pos:self.pos + n]
        self.pos += n
        return s

    def u(self, fmt, what):
        return struct.unpack('<' + fmt, self.take(struct.calcsize(fmt), what))[0]

    def array(self, dtype, count, what):
        dt = np.dtype(dtype)
        return np.frombuffer(self.take(dt.itemsize * count, what), dtype=dt, count=count)


def block_daphne(data, rows, cols, dt, v01):
    """The one block of a DAPHNE (or DAPHNE 0.1) dense or CSR matrix."""
    r = Reader(data, 18)
    vt = r.u('B', 'value type')
    if vt not in DAPHNE_VT:
        raise NoFit('value type %d' % vt)
    rx, cx, br, bc, bt, bvt = struct.unpack('<QQIIBB', r.take(26, 'block header'))
    if (rx, cx) != (0, 0) or (br, bc) != (rows, cols) or bvt != vt:
        raise NoFit('block header')
    npt = DAPHNE_VT[vt][0]
    size = np.dtype(npt).itemsize
    blk = {'row': 0, 'col': 0, 'rows': br, 'cols': bc, 'vt': npt, 'dtype': DAPHNE_VT[vt][1]}
    if dt == 1 and bt == 1 and not v01:
        if len(data) != 45 + br * bc * size:
            raise NoFit('size')
        blk.update(type='dense', dense=r.array(npt, br * bc, 'values').reshape(br, bc))
        return blk
    if dt != 2 or vt >= 8:
        raise NoFit('type')
    nnz = r.u('Q', 'nnz')
    entries = []
    if bt == 2 and not v01:
        if len(data) != 53 + 8 * (rows + 1) + nnz * (8 + size):
            raise NoFit('size')
        offs = r.array('<u8', rows + 1, 'row offsets')
        cidx = r.array('<u8', nnz, 'column indices')
        vals = r.array(npt, nnz, 'values')
        if offs[0] != 0 or offs[-1] != nnz or np.any(np.diff(offs.astype(np.int64)) < 0):
            raise ValueError('CSR row offsets out of order')
        for i in range(rows):
            for k in range(int(offs[i]), int(offs[i + 1])):
                entries.append((i, int(cidx[k]), vals[k]))
    elif bt == 2 and v01:
        if len(data) != 53 + 8 * rows + nnz * (8 + size):
            raise NoFit('size')
        for i in range(rows):
            n = r.u('Q', 'row count')
            for _ in range(n):
                c = r.u('Q', 'column')
                entries.append((i, c, r.array(npt, 1, 'value')[0]))
        if r.pos != len(data):
            raise ValueError('DAPHNE 0.1 row counts do not add up')
    elif bt == 3 and v01:
        ix = 4 if bc == 1 else 8
        if len(data) != 53 + nnz * (ix + size):
            raise NoFit('size')
        for _ in range(nnz):
            i = r.u('I', 'row')
            c = r.u('I', 'column') if bc != 1 else 0
            entries.append((i, c, r.array(npt, 1, 'value')[0]))
    else:
        raise NoFit('block type')
    blk.update(type='csr' if bt == 2 else 'coo', entries=entries)
    return blk


def spec_blocks(r, default_vt):
    """Spec blocks from r.pos to the end of the file."""
    blocks = []
    while r.pos < len(r.b):
        rx, cx, br, bc, bt = struct.unpack('<QQIIB', r.take(25, 'block header'))
        blk = {'row': rx, 'col': cx, 'rows': br, 'cols': bc, 'type': BT_NAMES.get(bt)}
        if bt == 0:
            blk.update(vt=default_vt, entries=[])
            blocks.append(blk)
            continue
        if bt not in BT_NAMES:
            raise NoFit('block type %d' % bt)
        vt = r.u('B', 'value type')
        if vt not in SPEC_VT:
            raise NoFit('value type %d' % vt)
        npt, name = SPEC_VT[vt]
        blk.update(vt=npt, dtype=name)
        if bt == 1:
            blk['dense'] = r.array(npt, br * bc, 'values').reshape(br, bc)
        elif bt == 2:
            nnz = r.u('Q', 'nnz')
            entries = []
            for i in range(br):
                for _ in range(r.u('I', 'row count')):
                    c = r.u('I', 'column')
                    entries.append((i, c, r.array(npt, 1, 'value')[0]))
            if len(entries) != nnz:
                raise NoFit('CSR row counts')
            blk['entries'] = entries
        else:
            nnz = r.u('I', 'nnz')
            entries = []
            for _ in range(nnz):
                i = r.u('I', 'row')
                c = r.u('I', 'column') if bc != 1 else 0
                entries.append((i, c, r.array(npt, 1, 'value')[0]))
            blk['entries'] = entries
        blocks.append(blk)
    return blocks


def place(blocks, rows, cols, npt):
    """The dense matrix the blocks make."""
    out = np.zeros((rows, cols), dtype=npt)
    seen = np.zeros((rows, cols), dtype=bool)
    for blk in blocks:
        rx, cx, br, bc = blk['row'], blk['col'], blk['rows'], blk['cols']
        if rx + br > rows or cx + bc > cols:
            raise ValueError('block outside the object')
        if np.any(seen[rx:rx + br, cx:cx + bc]):
            raise ValueError('overlapping blocks')
        seen[rx:rx + br, cx:cx + bc] = True
        if 'dense' in blk:
            out[rx:rx + br, cx:cx + bc] = blk['dense']
        for (i, c, v) in blk.get('entries', []):
            if i >= br or c >= bc:
                raise ValueError('sparse index out of range')
            out[rx + i, cx + c] = v
    return out


def jvalue(v):
    if isinstance(v, np.void) or isinstance(v, (bytes, bytearray)):
        return bytes(v).hex()
    if isinstance(v, (np.floating, float)):
        # float32 as its shortest decimal (as values.txt shows it)
        f = float(str(v)) if isinstance(v, np.float32) else float(v)
        if math.isnan(f):
            return 'nan'
        if math.isinf(f):
            return 'inf' if f > 0 else '-inf'
        return f
    return int(v)


def jmatrix(a):
    return [[jvalue(v) for v in row] for row in a]


def meta_labels(path, ncols):
    try:
        with open(path, 'rb') as f:
            meta = json.loads(f.read().decode('utf-8'))
        schema = meta.get('schema')
        if isinstance(schema, list) and len(schema) == ncols:
            return [c.get('label') if isinstance(c, dict) and isinstance(c.get('label'), str)
                    else None for c in schema]
    except (OSError, ValueError, AttributeError):
        pass
    return None


def decode_matrix(data, dt, rows, cols):
    reasons = []
    for dialect, v01 in (('daphne', False), ('daphne-0.1', True)):
        try:
            if v01 and dt != 2:
                raise NoFit('only CSR differs')
            blk = block_daphne(data, rows, cols, dt, v01)
            return dialect, DAPHNE_VT[data[18]], [blk]
        except NoFit as e:
            reasons.append('%s: %s' % (dialect, e))
    try:
        vt = data[18]
        if vt not in SPEC_VT:
            raise NoFit('value type %d' % vt)
        return 'spec', SPEC_VT[vt], spec_blocks(Reader(data, 19), SPEC_VT[vt][0])
    except (NoFit, IndexError) as e:
        reasons.append('spec: %s' % e)
    raise NoFit('; '.join(reasons))


def decode_frame(data, rows, cols, meta):
    r = Reader(data, 18)
    vts = list(r.take(cols, 'schema'))
    labels = []
    for _ in range(cols):
        labels.append(r.take(r.u('H', 'label length'), 'label'))
    start = r.pos
    reasons = []
    if all(v in DAPHNE_VT and v < 8 for v in vts):
        types = [DAPHNE_VT[v] for v in vts]
        rec = np.dtype([('c%d' % j, t[0]) for j, t in enumerate(types)])
        if len(data) == start + 16 + rows * rec.itemsize:
            recs = np.frombuffer(data, dtype=rec, count=rows, offset=start + 16)
            columns = [recs['c%d' % j] for j in range(cols)]
            names = meta or [None] * cols
            names = [n if n is not None else 'col_%d' % j for j, n in enumerate(names)]
            return 'daphne', names, types, columns, None
        reasons.append('daphne: size')
    else:
        reasons.append('daphne: value types')
    if all(v in SPEC_VT for v in vts):
        types = [SPEC_VT[v] for v in vts]
        blocks = spec_blocks(Reader(data, start), None)
        for blk in blocks:
            if blk['type'] != 'empty':
                for j in range(blk['col'], blk['col'] + blk['cols']):
                    if j < cols and types[j][0] != blk['vt']:
                        raise ValueError('block value type differs from its columns')
        seen = np.zeros((rows, cols), dtype=bool)
        columns = [np.zeros(rows, dtype=t[0]) for t in types]
        for b in blocks:
            rx, cx, br, bc = b['row'], b['col'], b['rows'], b['cols']
            if rx + br > rows or cx + bc > cols:
                raise ValueError('block outside the frame')
            if np.any(seen[rx:rx + br, cx:cx + bc]):
                raise ValueError('overlapping blocks')
            seen[rx:rx + br, cx:cx + bc] = True
            for c in range(bc):
                if 'dense' in b:
                    columns[cx + c][rx:rx + br] = b['dense'][:, c]
            for (i, c, v) in b.get('entries', []):
                if i >= br or c >= bc:
                    raise ValueError('sparse index out of range')
                columns[cx + c][rx + i] = v
        names = meta or [None] * cols
        names = [n if n is not None else labels[j].decode('utf-8', 'replace')
                 for j, n in enumerate(names)]
        return 'spec', names, types, columns, blocks
    reasons.append('spec: value types')
    raise NoFit('; '.join(reasons))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = argv[1]
    meta = argv[argv.index('--meta') + 1] if '--meta' in argv else path + '.meta'
    with open(path, 'rb') as f:
        data = f.read()
    try:
        if len(data) < 18:
            raise NoFit('header needs 18 bytes')
        version, dt, rows, cols = struct.unpack_from('<BBQQ', data, 0)
        if version != 1 or dt not in DT_NAMES:
            raise NoFit('version %d, data type %d' % (version, dt))
        out = {'header': {'version': version, 'type': DT_NAMES[dt], 'rows': rows, 'cols': cols}}
        if dt == 3:
            labels = meta_labels(meta, cols) if os.path.exists(meta) else None
            dialect, names, types, columns, blocks = decode_frame(data, rows, cols, labels)
            out['dialect'] = dialect
            out['labels'] = names
            out['dtypes'] = [t[1] for t in types]
            out['columns'] = {n: [jvalue(v) for v in col] for n, col in zip(names, columns)}
            out['column_list'] = [[jvalue(v) for v in col] for col in columns]
        else:
            dialect, (npt, name), blocks = decode_matrix(data, dt, rows, cols)
            out['dialect'] = dialect
            out['dtype'] = name
            out['matrix'] = jmatrix(place(blocks, rows, cols, npt))
        if dt != 3 or blocks is not None:
            out['blocks'] = [{'row': b['row'], 'col': b['col'], 'type': b['type'],
                              'shape': [b['rows'], b['cols']],
                              'dtype': b.get('dtype'),
                              'nnz': len(b['entries']) if 'entries' in b
                              else b['rows'] * b['cols']} for b in blocks]
    except (NoFit, ValueError) as e:
        print('%s: not a readable .dbdf file: %s' % (path, e), file=sys.stderr)
        return 1
    print(json.dumps(out))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
