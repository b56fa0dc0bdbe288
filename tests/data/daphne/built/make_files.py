#!/usr/bin/python3
"""Writes the .dbdf files of this folder: layouts that no software writes any
more (the draft spec's, DAPHNE 0.1's CSR), for mounts and integration tests.
The unit tests build the same layouts in C (test_daphne_seed.c)."""
import struct


def hdr(dt, r, c):
    return struct.pack('<BBQQ', 1, dt, r, c)


def blk(rx, cx, r, c, bt):
    return struct.pack('<QQIIB', rx, cx, r, c, bt)


out = {}
# spec, 6 x 6 float64 in five blocks: dense, CSR, COO, 1-column COO, empty
body = blk(0, 0, 2, 6, 1) + bytes([10]) + struct.pack('<12d', *range(1, 13))
body += (blk(2, 0, 3, 3, 2) + bytes([10]) + struct.pack('<Q', 3)
         + struct.pack('<IId', 1, 1, 13) + struct.pack('<I', 0)
         + struct.pack('<IIdId', 2, 0, 14, 2, 15))
body += blk(2, 3, 3, 2, 3) + bytes([10]) + struct.pack('<I', 2) + struct.pack('<IIdIId', 1, 1, 16, 0, 0, 17)
body += blk(2, 5, 3, 1, 3) + bytes([10]) + struct.pack('<I', 1) + struct.pack('<Id', 2, 18)
body += blk(5, 0, 1, 6, 0)
out['spec_multi_dense.dbdf'] = hdr(1, 6, 6) + bytes([10]) + body
out['spec_multi_csr.dbdf'] = hdr(2, 6, 6) + bytes([10]) + body
# spec, a float64 matrix stored in uint8 and int16 blocks
out['spec_convert.dbdf'] = (hdr(1, 2, 2) + bytes([10]) + blk(0, 0, 1, 2, 1) + bytes([1, 7, 255])
                            + blk(1, 0, 1, 2, 1) + bytes([6]) + struct.pack('<hh', -3, 1000))
# spec frame: a (f64), bb (i32), ccc (u8) in dense, COO and CSR blocks
f = hdr(3, 4, 3) + bytes([10, 7, 1])
for label in (b'a', b'bb', b'ccc'):
    f += struct.pack('<H', len(label)) + label
f += blk(0, 0, 4, 1, 1) + bytes([10]) + struct.pack('<4d', 1.5, 2.5, 3.5, 4.5)
f += blk(0, 1, 2, 1, 1) + bytes([7]) + struct.pack('<2i', -1, -2)
f += blk(2, 1, 2, 1, 3) + bytes([7]) + struct.pack('<I', 1) + struct.pack('<Ii', 1, -4)
f += (blk(0, 2, 4, 1, 2) + bytes([1]) + struct.pack('<Q', 2) + struct.pack('<IIB', 1, 0, 9)
      + struct.pack('<I', 0) + struct.pack('<IIB', 1, 0, 8) + struct.pack('<I', 0))
out['spec_frame.dbdf'] = f
# spec, one 2 x 3 dense block of each value type 1-10
values = {1: (0, 1, 2, 200, 254, 255), 2: (0, 1, 2, 1000, 65534, 65535),
          3: (0, 1, 2, 100000, 4294967294, 4294967295), 4: (0, 1, 2, 1 << 40, 10 ** 19, 3),
          5: (-128, -1, 0, 1, 100, 127), 6: (-32768, -1, 0, 1, 1000, 32767),
          7: (-2 ** 31, -1, 0, 1, 100000, 2 ** 31 - 1), 8: (-2 ** 63, -1, 0, 1, 1 << 40, 1 << 62),
          9: (0, 1.5, -2.25, 0.1, 1e30, -0.0), 10: (0, 1.5, -2.25, 0.1, 1e300, -0.0)}
fmt = {1: 'B', 2: 'H', 3: 'I', 4: 'Q', 5: 'b', 6: 'h', 7: 'i', 8: 'q', 9: 'f', 10: 'd'}
for vt, v in values.items():
    out['spec_vt%d.dbdf' % vt] = (hdr(1, 2, 3) + bytes([vt]) + blk(0, 0, 2, 3, 1) + bytes([vt])
                                  + struct.pack('<6' + fmt[vt], *v))
# DAPHNE 0.1 CSR (int32 4 x 3): per row a u64 count, then (u64 column, value)
c = hdr(2, 4, 3) + bytes([1]) + struct.pack('<QQIIBBQ', 0, 0, 4, 3, 2, 1, 4)
c += struct.pack('<QQi', 1, 1, 7) + struct.pack('<Q', 0)
c += struct.pack('<QQiQi', 2, 0, -3, 2, 9) + struct.pack('<QQi', 1, 2, 1)
out['daphne01_csr.dbdf'] = c
# DAPHNE 0.1 COO (float64 3 x 3): nnz u64, (u32 row, u32 column, value)
out['daphne01_coo.dbdf'] = (hdr(2, 3, 3) + bytes([7]) + struct.pack('<QQIIBBQ', 0, 0, 3, 3, 3, 7, 2)
                            + struct.pack('<IIdIId', 2, 1, 0.5, 0, 2, -1))
for name, data in sorted(out.items()):
    with open(name, 'wb') as fh:
        fh.write(data)
