"""Writes the NumPy sample files of tests/data/numpy with NumPy itself
(numpy.save, numpy.lib.format.write_array, numpy.savez,
numpy.savez_compressed), so that the tests read files the real writer made.
Run from this directory: /usr/bin/python3 make_samples.py"""
import io
import zipfile

import numpy as np

rng = np.random.default_rng(21)


def write_version(name, arr, version):
    with open(name, "wb") as f:
        np.lib.format.write_array(f, arr, version=version, allow_pickle=False)


def main():
    f32 = np.array([[0.1, -2.5, 3.0], [1e-8, np.inf, -0.0]], dtype=np.float32)
    np.save("f32.npy", f32)
    write_version("v1.npy", np.arange(6, dtype=np.int16).reshape(2, 3), (1, 0))
    write_version("v2.npy", np.arange(5, dtype=np.float64) / 3, (2, 0))
    write_version("v3.npy", np.array([1 + 2j, -0.5j], dtype=np.complex64), (3, 0))
    np.save("big_endian.npy", np.array([[1.5, -2.25], [1e300, 7.0]], dtype=">f8"))
    np.save("big_i32.npy", np.array([1, -2, 70000], dtype=">i4"))
    np.save("big_c16.npy", np.array([1 + 2j, 3 - 4j], dtype=">c16"))
    np.save("fortran.npy", np.asfortranarray(np.arange(12, dtype=np.int32).reshape(3, 4)))
    np.save("fortran3.npy", np.asfortranarray(np.arange(24, dtype=np.uint8).reshape(2, 3, 4)))
    np.save("scalar.npy", np.float64(3.25))
    np.save("empty.npy", np.zeros((0, 3), dtype=np.float32))
    np.save("bool.npy", np.array([True, False, True]))
    np.save("f16.npy", np.array([0.5, -1, 65504], dtype=np.float16))
    np.save("u64.npy", np.array([0, 2**64 - 1], dtype=np.uint64))
    np.save("strings.npy", np.array(["ab", "cde"]))
    np.save("structured.npy", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f8")]))
    np.save("object.npy", np.array([1, "x"], dtype=object), allow_pickle=True)

    arrays = {
        "weight": rng.standard_normal((4, 5)).astype(np.float32),
        "model.layer.0.bias": np.arange(5, dtype=np.float64),
        "enc/block.1/w": np.arange(6, dtype=np.int64).reshape(2, 3),
        "scalar": np.array(7, dtype=np.int32),
        "empty": np.zeros((0,), dtype=np.float32),
        "be": np.array([1.0, -2.0], dtype=">f4"),
        "fort": np.asfortranarray(np.arange(6, dtype=np.float64).reshape(2, 3)),
    }
    np.savez("stored.npz", **arrays)
    np.savez_compressed("compressed.npz", **arrays)
    # An archive with a member that is not a .npy, and one that is a string array.
    with zipfile.ZipFile("mixed.npz", "w") as z:
        buf = io.BytesIO()
        np.save(buf, np.arange(4, dtype=np.uint16))
        z.writestr("a.npy", buf.getvalue())
        z.writestr("README.txt", "not an array\n")
        buf = io.BytesIO()
        np.save(buf, np.array(["s"]))
        z.writestr("names.npy", buf.getvalue())


if __name__ == "__main__":
    main()
