"""Viper requantization equals TFLM's int64 MultiplyByQuantizedMultiplier."""

import numpy as np

from conftest import run_mp
from tflm.kernels.gemmlowp import mbqm_ref


def mbqm_int64(x, m, shift):
    """common.cc MultiplyByQuantizedMultiplier (double rounding) with
    numpy int64, the way C computes it."""
    x = np.asarray(x, np.int64)
    m = np.asarray(m, np.int64)
    shift = np.asarray(shift, np.int64)
    ls = np.maximum(shift, 0)
    rs = np.maximum(-shift, 0)
    x = ((x << ls) + (1 << 31)) % (1 << 32) - (1 << 31)  # int32 wrap
    ab = x * m
    t = ab + np.where(ab >= 0, 1 << 30, 1 - (1 << 30))
    q = np.where(t >= 0, t >> 31, -((-t) >> 31))  # C truncating division
    mask = (np.int64(1) << rs) - 1
    thr = (mask >> 1) + (q < 0)
    return (q >> rs) + ((q & mask) > thr)


def vectors(n, seed):
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 32, n)
    x = rng.integers(-(1 << 31), 1 << 31, n) >> bits
    edges = [0, 1, -1, (1 << 31) - 1, -(1 << 31), 1 << 30, -(1 << 30)]
    x[:len(edges) * 4] = edges * 4
    m = rng.integers(1 << 30, 1 << 31, n)
    m[::7] = 0
    m[1::11] = (1 << 31) - 1
    m[2::13] = 1 << 30
    shift = np.where(rng.random(n) < 0.5, rng.integers(-31, 31, n),
                     rng.integers(-12, 3, n))
    return x, m, shift


def test_reference_matches_int64_semantics():
    x, m, s = vectors(5000, 0)
    want = mbqm_int64(x, m, s)
    got = [mbqm_ref(int(a), int(b), int(c)) for a, b, c in zip(x, m, s)]
    assert got == [int(v) for v in want]


def test_viper_scale_i32_on_unix_port(tmp_path):
    x, m, s = vectors(20000, 1)
    want = mbqm_int64(x, m, s)
    (tmp_path / "x.bin").write_bytes(np.int32(x).tobytes())
    (tmp_path / "m.bin").write_bytes(np.int32(m).tobytes())
    (tmp_path / "s.bin").write_bytes(np.int32(s).tobytes())
    code = """
from array import array
import micropython
from tflm.kernels.rescale import scale_i32
def load(name):
    a = array('i')
    with open(%r + '/' + name, 'rb') as f:
        a.extend(array('i', f.read()))
    return a
x, m, s = load('x.bin'), load('m.bin'), load('s.bin')
micropython.heap_lock()
scale_i32(x, len(x), m, s, 1)
micropython.heap_unlock()
with open(%r + '/out.bin', 'wb') as f:
    f.write(x)
# per-tensor mode: every element uses m[0], s[0]
y = load('x.bin')
scale_i32(y, len(y), m, s, 0)
with open(%r + '/out0.bin', 'wb') as f:
    f.write(y)
""" % ((str(tmp_path),) * 3)
    run_mp(code, tmp_path)
    got = np.frombuffer((tmp_path / "out.bin").read_bytes(), np.int32)
    assert np.array_equal(got, want.astype(np.int32))
    got0 = np.frombuffer((tmp_path / "out0.bin").read_bytes(), np.int32)
    assert np.array_equal(got0, mbqm_int64(x, m[0], s[0]).astype(np.int32))
